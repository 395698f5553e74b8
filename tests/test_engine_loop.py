"""The engine's own loop as a table meets it, on the simulated clock (issue 17, loop.py).

The thread's loop (`Engine._run`) run on a queue whose waits move a simulated clock on, so each
wake-up's instant is exact; the thread's start (what the voice warms, the GIL hand-over), a
request from another thread and the stop; the Ready step at the box (each seat's press lights
its LED and shows it ready, the last one counts in, after the end the presses start the next
game); the end's words in each game's own unit; a ruling on a seat that never pressed, in the
words of its race; the pages' and the log's view of the end. Each test checks what is said, what
the pages or the LEDs show, or what is logged, beside a sibling where the rule changes it.
"""

from __future__ import annotations

import io
import queue
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from referee.capture.gpio import HOLD_US
from referee.cli.table import unfinished_game
from referee.engine import loop
from referee.engine.commands import Pause, Request
from referee.engine.loop import Engine, open_game, resume_game
from referee.events import ButtonReleased, ButtonStuck, Cue, End, GameStart, Penalty, Press, Undo
from referee.store.database import StorageFull, Store, events
from referee.voice.announce import PrintAnnouncer
from referee.voice.phrases import text
from tests.harness import Sim, SimClock, register_game, typed
from tests.test_engine_commands import ask, fill, racing
from tests.test_engine_keypad import key, play_round, said
from tests.test_engine_timing import TURN_MS, turning

SEATS = ["Blue", "Red", "Green"]
OPTIONS = {"deck": "72", "tempo_ms": "100", "window_ms": "1000", "doubles": "off",
           "pause_ms": "100"}


def said_text(voice: PrintAnnouncer) -> list[str]:
    """Every phrase said, as the table hears it."""
    return [voice.text(k, p) for k, p, _ in voice.said]


# -- the thread's loop, each wait a move of the simulated clock -------------------------------


class Spinning(BaseException):
    """The loop took items without ever waiting: a busy loop (a BaseException, so the loop's own
    `except Exception` cannot swallow it)."""


class TimedQueue:
    """The engine's queue where a wait moves the simulated clock on by the time waited (or to
    the instant a scripted item arrives, if that comes first), as the real thread's wait would."""

    def __init__(self, clock: SimClock, script: list[tuple[int, Callable[[], None]]]) -> None:
        self.clock = clock
        self.items: deque[Any] = deque()
        self.script = sorted(script, key=lambda s: s[0])
        self.waits: list[float | None] = []
        self.takes = 0
        self.still = 0  # waits in a row that let no time pass

    def put_nowait(self, item: Any) -> None:
        self.items.append(item)

    put = put_nowait

    def get_nowait(self) -> Any:
        self.takes += 1
        if self.takes > 10_000:
            raise Spinning
        if self.items:
            return self.items.popleft()
        raise queue.Empty

    def get(self, timeout: float | None = None) -> Any:
        self.takes = 0
        self.waits.append(timeout)
        if self.items:
            return self.items.popleft()
        assert timeout is not None, "a wait that never ends: the table would freeze"
        until = self.clock.t + round(timeout * 1e6)
        self.still = self.still + 1 if until == self.clock.t else 0
        if self.still > 1000 or len(self.waits) > 20_000:  # a wake-up every µs is spinning too
            raise Spinning
        if self.script and self.script[0][0] <= until:
            at, act = self.script.pop(0)
            self.clock.t = max(self.clock.t, at)
            act()  # another thread submits (or stops) now
            if self.items:
                return self.items.popleft()
        self.clock.t = until
        raise queue.Empty


@dataclass
class Table:
    engine: Engine
    voice: PrintAnnouncer
    clock: SimClock
    store: Store
    lights: Lights | None
    shown: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def press(self, seat: str, button: str = "slap") -> None:
        self.engine.run_items(Press(self.clock.t, seat, button))

    def states(self) -> list[dict[str, Any]]:
        return [d for k, d in self.shown if k == "state"]


class Lights:
    """The box's LEDs as a player sees them (the engine's `Leds` port): which seats are lit."""

    def __init__(self, seats: list[str]) -> None:
        self.lit = dict.fromkeys(seats, False)
        self.cues = 0

    def led(self, seat: str, on: bool) -> None:
        self.lit[seat] = on

    def all_leds(self, on: bool) -> None:
        for seat in self.lit:
            self.lit[seat] = on

    def blink(self, seat: str, times: int = 3, on_ms: int = 150) -> None:
        pass

    def cue_light(self, on_ms: int = 200) -> None:
        self.cues += 1

    def check_stuck(self, now_us: int) -> None:
        pass

    def next_hold_us(self) -> int | None:
        return None


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Callable[..., Table]]:
    """`table(game, options, ready=True, leds=True)`: an engine of its own on a simulated clock,
    from its Ready step (or, `ready=False`, from the first round), opened; presses are fed as
    the box delivers them."""
    stores: list[Store] = []

    def make(game: str = "spank-the-pig", options: dict[str, str] | None = None, *,
             ready: bool = True, leds: bool = True, practice: bool = False,
             announcer: PrintAnnouncer | None = None) -> Table:
        clock = SimClock(1_000_000)
        store = Store(tmp_path / f"t{len(stores)}.db")
        stores.append(store)
        voice = announcer or PrintAnnouncer(io.StringIO(), lead_ms=10, clock=clock, quiet=True)
        lights = Lights(SEATS) if leds else None
        engine = open_game(store, GameStart(game, tuple(SEATS), typed(game, options or OPTIONS)), voice,
                           clock=clock, leds=lights, auto=True, ready=ready, count_in_ms=300,
                           practice=practice)
        t = Table(engine, voice, clock, store, lights)
        engine.subscribe(lambda kind, data: t.shown.append((kind, data)))
        return t

    try:
        yield make
    finally:
        for store in stores:
            store.close()


def run_loop(t: Table, script: list[tuple[int, Callable[[], None]]]) -> TimedQueue:
    """The thread's loop, on this thread, until a scripted `stop`."""
    q = TimedQueue(t.clock, script)
    t.engine.queue = q  # type: ignore[assignment]
    t.engine._run()
    return q


def test_the_loop_sleeps_until_each_cue_and_shows_it_at_its_instant(
        table: Callable[..., Table]) -> None:
    """Between rounds the thread sleeps exactly until the next thing due: the go-word's instant
    (the cue light and the pages switch to the race then, not at the next look), and stop ends
    it at once, with no wait after it. A loop that never waits (a spinning thread) fails."""
    t = table(ready=False)
    start = t.clock.t
    q = run_loop(t, [(start + 6_000_000, t.engine.stop)])
    logged = [e.t_us for e in events(t.store.conn, t.engine.game_id) if isinstance(e, Cue)]
    shown = [d["t_us"] for k, d in t.shown if k == "cue"]
    assert len(logged) >= 3 and shown == logged  # each cue shown at its own instant, none late
    assert t.lights is not None and t.lights.cues == len(logged)
    assert all(w is not None and w >= 0 for w in q.waits)
    assert t.clock.t == start + 6_000_000


# -- the thread: start, a request from another thread, stop -----------------------------------


class Warming(PrintAnnouncer):
    def __init__(self, clock: SimClock) -> None:
        super().__init__(io.StringIO(), lead_ms=10, clock=clock, quiet=True)
        self.warmed: list[tuple[list[str], list[tuple[str, dict[str, Any]]], list[str]]] = []
        self.first: list[tuple[str, dict[str, Any]]] = []

    def warm_table(self, seats: Any, said: Any = (), *, reasons: Any = (),
                   first: Any = ()) -> None:
        self.warmed.append((list(seats), list(said), list(reasons)))
        self.first = list(first)


def test_start_warms_every_phrase_the_game_will_say_first_and_each_question_it_can_ask(
        table: Callable[..., Table]) -> None:
    """A Spank table says its deal before round 1 and asks the judge about pigs and doubles in
    its own words: all of it is ready before the first is needed (a phrase not warmed is
    rendered while the table waits)."""
    clock = SimClock(1_000_000)
    voice = Warming(clock)
    t = table(announcer=voice)
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # CPython's own default, whatever an earlier test left
    try:
        t.engine.start()
        assert sys.getswitchinterval() <= 0.0005  # a waiting ruling gets the GIL within 0.5 ms
        assert t.engine.command("snapshot", timeout=5)["phase"] == "ready"
    finally:
        t.engine.stop()
        sys.setswitchinterval(before)
    assert t.engine._thread is not None and not t.engine._thread.is_alive()  # stop joined it
    [(seats, phrases, reasons)] = voice.warmed
    assert seats == SEATS
    first = t.engine.rules.announcements(1)
    assert first and all(p in phrases for p in first)
    assert voice.first == first  # the deal: ready before the first call, with the calls' words
    asks = [(k, p) for k, p in phrases if k == "awaiting"]
    assert asks and [p["need"] for _, p in asks] == [
        [f.name for f in combo] for combo in t.engine.rules.questions()]
    assert all(text("awaiting", p).endswith("?") and p["asks"] for _, p in asks)
    assert reasons == list(t.engine.rules.reason_texts()) and reasons


def test_a_request_from_another_thread_carries_its_arguments_and_is_answered(
        sim: Callable[..., Sim]) -> None:
    """The panel gives a penalty while the engine thread runs: the thread logs it, the referee
    says it, and the panel's answer already shows it."""
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])  # Green, last: one whammy
    engine.start()
    try:
        shown = engine.command("feed", event=Penalty(1, "Red", 1, "slapped the hippo"))
    finally:
        engine.stop()
    assert {r["seat"]: r["score"] for r in shown["seats"]} == {"Blue": 0, "Red": 1, "Green": 1}
    assert [e for e in events(s.store.conn, engine.game_id) if isinstance(e, Penalty)]
    assert s.voice.said[-1][1]["seat"] == "Red"


def test_a_request_to_an_engine_that_never_answers_gives_up_after_five_seconds(
        table: Callable[..., Table], monkeypatch: pytest.MonkeyPatch) -> None:
    """The panel's request waits at most 5 s (the API then answers 503, try again), or the
    time it asks for; never for ever. The wait is simulated: the reply queue says how long."""
    t = table()
    waited: list[float | None] = []

    class Silent:
        def put(self, item: Any) -> None:
            raise AssertionError("nobody answers")

        def get(self, timeout: float | None = None) -> Any:
            waited.append(timeout)
            raise queue.Empty

    monkeypatch.setattr(loop.queue, "SimpleQueue", Silent)
    with pytest.raises(queue.Empty):
        t.engine.command("pause")
    with pytest.raises(queue.Empty):
        t.engine.command("snapshot", timeout=0.25)
    assert waited == [5.0, 0.25]


# -- the Ready step at the box ----------------------------------------------------------------


def test_the_ready_step_lights_each_seat_that_presses_and_the_last_one_counts_in(
        table: Callable[..., Table]) -> None:
    t = table()
    assert t.lights is not None
    t.lights.all_leds(True)  # whatever the box showed before: the Ready step starts dark
    t.engine.open()
    assert not any(t.lights.lit.values())
    page = t.states()[-1]
    assert page["phase"] == "ready" and page["ready"] == []
    assert page["said"] == text("ready", {})  # the page shows what the table was just told
    t.press("Blue")
    assert t.lights.lit == {"Blue": True, "Red": False, "Green": False}
    assert t.states()[-1]["ready"] == ["Blue"]  # the page shows it at once
    t.press("Blue")  # a second press changes nothing
    t.press("Red")
    assert t.states()[-1]["ready"] == ["Blue", "Red"] and t.states()[-1]["phase"] == "ready"
    assert [k for k, _, _ in t.voice.said][-1] == "ready"  # nothing said yet
    t.press("Green")  # the last one: count in
    assert [k for k, _, _ in t.voice.said][-1] == "count_in"
    assert not any(t.lights.lit.values())  # the LEDs go dark for the count-in
    assert t.states()[-1]["phase"] == "count-in"
    assert list(events(t.store.conn, t.engine.game_id)) == []  # ready presses are not play
    assert t.engine.presses_not_played == 4


def test_after_the_end_every_seat_pressing_starts_the_next_game_with_the_same_table(
        table: Callable[..., Table]) -> None:
    """Pig with one life: Green never follows Blue's claim and is out, Blue and Red are
    co-champions. The next game's deal follows the end; each seat presses ready once: its
    count-in, same seats and options; the finished one is not offered for resuming."""
    options = {"window_ms": "1000", "lives": "1"}
    t = table("pig", options, ready=False)
    t.engine.open()
    first = t.engine.game_id
    t.clock.t += 100_000
    t.press("Blue")
    t.clock.t += 60_000
    t.press("Red")
    for _ in range(40):
        if any(k == "over" for k, _ in t.shown):
            break
        t.clock.t += 100_000
        t.engine.run_items(None)
    over = [d for k, d in t.shown if k == "over"]
    assert over and over[0]["winners"] == ["Blue", "Red"]  # the pages get the final standings
    assert said_text(t.voice)[-3:] == [
        "Green: last to touch the nose. One life lost.",
        "Game over. Blue, zero lives lost. Red, zero lives lost. Green, one life lost.",
        "Blue and Red are co-champions!"]
    assert unfinished_game(t.store, "pig", tuple(SEATS)) is None  # over: never resumed
    # the judge may still correct the finished game: the pages follow (nothing more is said)
    t.engine.run_items(Penalty(1, "Red", 1, "slapped the hippo"))
    shown = t.engine.snapshot()
    assert shown["phase"] == "over" and shown["winners"] == ["Blue"], shown["winners"]
    # once the end was said and the claim's window closed: the next game's deal, one Ready step
    for _ in range(20):
        t.clock.t += 100_000
        t.engine.run_items(None)
    assert [k for k, _, _ in t.voice.said][-3:] == ["deal_sets", "variant_rule", "ready"]
    for seat in ("Blue", "Red"):
        t.press(seat)
    shown = t.engine.snapshot()
    assert t.engine.game_id == first and shown["phase"] == "over"
    assert shown["ready"] == ["Blue", "Red"] and shown["winners"] == ["Blue"]  # the end stays
    t.press("Green")  # the last one: the next game's count-in, nothing said before it
    shown = t.engine.snapshot()
    assert t.engine.game_id != first and shown["phase"] == "count-in"
    assert shown["seat_order"] == SEATS and shown["options"]["lives"] == 1
    assert shown["options"]["window_ms"] == 1000
    assert [k for k, _, _ in t.voice.said][-2:] == ["ready", "count_in"]


def test_a_single_champion_is_named_as_the_champion(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])  # Green: 1
    play_round(s, ["Green", "Red", "Blue"])  # Blue: 1
    s.command("end")  # Red alone has none
    assert said_text(s.voice)[-2:] == [
        "Game over. Red, zero whammies. Blue, one whammy. Green, one whammy.",
        "Red is the champion!"]
    engine = s.engine
    assert engine is not None
    # the end is written with a full sync: a pulled plug keeps it
    assert s.store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2


def test_a_correction_after_the_end_keeps_the_game_shown_over_with_the_new_standings(
        sim: Callable[..., Sim]) -> None:
    """A game over by its own rules stays over on the pages until a person starts the next one,
    even when the judge then corrects a round so that the rules alone would play on (a tie to
    settle): the standings shown follow, nothing more is said. On the tests' manual table (no
    rounds started on their own, as while `finish` closes a table) the end shown must not rest on
    the rhythm's own phase alone."""
    s = sim(["Blue", "Red"], {**OPTIONS, "deck": "2"})  # one regular round
    engine = s.engine
    assert engine is not None and not engine.auto
    play_round(s, ["Blue", "Red"])  # Red is last: Blue leads alone, the game is over
    assert engine.rules.status().over and s.command("snapshot")["phase"] == "over"
    assert said_text(s.voice)[-1] == "Blue is the champion!"
    shown = s.command("feed", event=Penalty(1, "Blue", 1, "slapped the hippo"))
    assert not engine.rules.status().over  # by the rules alone: tied, sudden death to play
    assert {r["seat"]: r["score"] for r in shown["seats"]} == {"Blue": 1, "Red": 1}
    s.run_to(s.t_ms + 5_000)
    assert s.command("snapshot")["phase"] == "over"
    # the penalty is said, and nothing after it: no sudden-death call, no second end
    assert said_text(s.voice)[-2:] == ["Blue is the champion!",
                                       "Blue: slapped the hippo. One whammy."]


def test_game_over_in_a_unit_the_voice_has_no_words_for_uses_the_games_own(
        sim: Callable[..., Sim], monkeypatch: pytest.MonkeyPatch) -> None:
    beep = made_up_game(monkeypatch)
    s = sim(SEATS, {"window_ms": "1000", "rounds": "1"}, game=beep)
    cue = s.start_round()
    s.press("Red", cue + 100)
    s.run_to(cue + 3000)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: "game_over" in [k for k, _, _ in s.voice.said], limit_ms=3000)
    assert said_text(s.voice)[-3:] == [
        "Red: first after the beep. One point.",
        "Game over. Red, one point. Blue, zero points. Green, zero points.",
        "Red is the champion!"]


def made_up_game(monkeypatch: pytest.MonkeyPatch) -> str:
    from tests.made_up_game import FirstAfterTheBeep

    register_game(monkeypatch, FirstAfterTheBeep)  # its phrases come with it
    return FirstAfterTheBeep.NAME


def test_a_question_the_voice_has_no_words_for_is_asked_in_the_games_own(
        sim: Callable[..., Sim], monkeypatch: pytest.MonkeyPatch) -> None:
    beep = made_up_game(monkeypatch)
    s = sim(SEATS, {"window_ms": "1000"}, game=beep)
    cue = s.start_round()
    s.run_to(cue + 3000)  # nobody pressed: was the beep heard?
    assert said_text(s.voice)[-1] == "Judge: Did everyone hear the beep?"
    engine = s.engine
    assert engine is not None
    assert engine.snapshot()["question"] == "Did everyone hear the beep?"
    assert engine.snapshot()["awaiting"]["need"] == ["heard"]  # what the panel asks for


# -- the call as the pages show it -------------------------------------------------------------


def test_the_pages_show_the_call_in_its_words(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    shown = engine.snapshot()
    assert (shown["call"], shown["cue_word"], shown["turn"]) == ("Spank… the… PIG!", "PIG!", None)
    s.run_to(cue + 1)
    assert engine.snapshot()["call"] == "Spank… the… PIG!"  # still shown in the race


def test_the_pages_show_a_call_that_names_a_seat_and_whose_turn_it_is(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {"window_ms": "1000", "tempo_ms": "100"}, game="pigs-tail")
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    shown = engine.snapshot()
    assert (shown["call"], shown["cue_word"], shown["turn"]) == ("Blue, flip!", "flip!", "Blue")
    s.run_to(cue + 1)
    assert engine.rules.status().race_open and engine.snapshot()["turn"] == "Blue"


def test_the_games_words_for_a_round_come_after_the_previous_ruling_before_its_call(
        sim: Callable[..., Sim]) -> None:
    """A table of 12 cards (4 rounds for 3 seats): the deal before round 1's call; "last round"
    once round 3 is ruled (its question answered), before the 4th call; never during a race or
    while the judge is asked."""
    s = sim(SEATS, {**OPTIONS, "deck": "12"})
    play_round(s, ["Blue", "Red", "Green"])
    play_round(s, ["Blue", "Red", "Green"])
    judged(s, ["Blue", "Red"])  # round 3 asks the judge
    play_round(s, ["Blue", "Red", "Green"])
    keys = [k for k, _, _ in s.voice.said
            if k in ("spank", "deal", "last_round", "ruling", "ruling_never", "awaiting")]
    assert keys == ["deal", "spank", "ruling", "spank", "ruling", "spank", "awaiting",
                    "ruling_never", "last_round", "spank", "ruling"]


# -- rulings on a seat that never pressed ------------------------------------------------------


def judged(s: Sim, order: list[str], answer: str = "yes", *, button: str = "slap") -> list[str]:
    """A round slapped in `order` (seats at the same µs where a list holds a tuple), the judge's
    answer to its question; what was said for it."""
    engine = s.engine
    assert engine is not None
    before = len(s.voice.said)
    cue = s.start_round()
    for i, seats in enumerate(order):
        for seat in seats.split("+"):
            s.press(seat, cue + 100 + 10 * i, button=button)
    number = engine.rules.round_count()
    s.run_until(lambda: number in engine.announced, limit_ms=3000, step_ms=10)
    if engine.rules.status().awaiting is not None:
        key(s, answer)
    return [s.voice.text(k, p) for k, p, _ in list(s.voice.said)[before:]]


def test_a_seat_that_never_slapped_is_said_to_have_never_slapped(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    said = judged(s, ["Blue", "Red"])  # Green never slaps; the judge: a pig
    assert said[-1] == "Green never slapped: last to spank the pig. One whammy.", said
    assert engine.snapshot()["said"] == said[-1]  # the page shows the words last said, whole
    assert engine.snapshot()["rulings_said"][0]["what"] == "never slapped: last to spank the pig"
    event = [d for k, d in s.published if k == "ruling"][-1]  # what the pages are pushed
    assert event["rulings_said"][0]["said"] == said[-1]
    said = judged(s, ["Blue", "Green", "Red"])  # Red slapped last: by how much it was late
    assert said[-1] == "Red: last to spank the pig by 10 milliseconds. One whammy.", said
    assert engine.snapshot()["reactions_us"] == {"Blue": 100_000, "Green": 110_000, "Red": 120_000}


def test_two_seats_that_never_slapped_each_take_the_whammy_said_once_and_two_that_tied_are_not_never(
        sim: Callable[..., Sim]) -> None:
    """Issue 23: never pressing is never a way out; the table hears one sentence for both."""
    s = sim(SEATS, OPTIONS)
    said = judged(s, ["Blue"])  # Red and Green never slap; the judge: a pig
    assert said[-1] == "Red and Green never slapped. One whammy each.", said
    said = judged(s, ["Blue", "Red+Green"])  # Red and Green slap at the same µs
    assert "never" not in said[-1], said


def test_a_seat_that_never_declared_the_double_is_said_so(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {**OPTIONS, "doubles": "buttons"}, doubles=True)
    cue = s.start_round()
    s.press("Blue", cue + 100, button="double")
    s.press("Red", cue + 150, button="double")
    s.press("Green", cue + 200)  # Green slaps (no pig), but never declares the double
    s.run_to(cue + 3000, step_ms=10)
    key(s, "yes")  # the judge: a double
    assert "Green never declared the double: last to declare the double. One whammy." in (
        said_text(s.voice)), said_text(s.voice)


# -- a resumed game: its clock runs after the logged times ------------------------------------


def resumed(s: Sim, *, ahead: bool = True, **kw: Any) -> Engine:
    """The Sim's game rebuilt from its log (its clock now runs `offset_us` ahead of the box's),
    fed by the same box from now on."""
    engine = s.engine
    assert engine is not None
    again = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, leds=s.box, **kw)
    assert (again.offset_us > 0) is ahead
    again.subscribe(lambda kind, data: s.published.append((kind, data)))
    s.engine = again
    return again


def test_a_resumed_game_shows_its_cue_at_the_logged_instant_and_logs_presses_after_it(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])
    engine = resumed(s, auto=False)
    call = engine.rules.next_call()
    assert call is not None
    engine.start_round(call)
    cues = [e.t_us for e in events(s.store.conn, engine.game_id) if isinstance(e, Cue)]
    assert engine.snapshot()["phase"] == "cadence"
    s.pump(s.ms(cues[-1] - engine.offset_us) - 0.001)
    assert engine.snapshot()["phase"] == "cadence"  # 1 µs before the go-word: not yet
    s.pump(s.ms(cues[-1] - engine.offset_us))
    assert [d["t_us"] for k, d in s.published if k == "cue"][-1] == cues[-1]
    assert engine.snapshot()["phase"] == "race"
    s.press("Red", s.t_ms + 100)
    s.pump()
    presses = [e.t_us for e in events(s.store.conn, engine.game_id) if isinstance(e, Press)]
    assert presses[-1] == cues[-1] + 100_000  # on the resumed clock, after the cue


def test_a_resumed_table_wakes_exactly_when_a_slap_button_has_been_held_two_seconds(
        sim: Callable[..., Sim]) -> None:
    """The box times a hold on its own clock; the resumed engine's runs ahead of it: it must
    wake at the hold's instant on its own clock (not sooner, over and over, nor later)."""
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])
    engine = resumed(s, auto=False)
    s.pump(s.t_ms + 10)
    start = s.t_ms
    s.edges(4, [(start, False)])  # Blue's slap, held down between rounds
    s.pump()
    assert engine.next_wake() == s.us(start) + engine.offset_us + HOLD_US
    s.pump(start + HOLD_US / 1000 - 0.001)
    s.pump()  # anything the box reported then is taken now
    assert not engine.paused
    s.pump(start + HOLD_US / 1000)
    s.pump()  # the hold comes back through the queue
    assert engine.paused and said(s)[-1] == "paused"


# -- the thread's timing: the count-in, the pause between rounds, the pass beat ----------------


def first_cue_after_start(t: Table) -> int:
    """Every seat presses at the Ready step (t0); the loop runs; the first cue's time - t0."""
    t0 = t.clock.t + 1000

    def everyone_ready() -> None:
        for seat in SEATS:
            t.engine.submit(Press(t0, seat, "slap"))

    run_loop(t, [(t0, everyone_ready), (t0 + 3_000_000, t.engine.stop)])
    cues = [e.t_us for e in events(t.store.conn, t.engine.game_id) if isinstance(e, Cue)]
    return cues[0] - t0


def test_the_count_in_lasts_exactly_its_time(table: Callable[..., Table]) -> None:
    short = first_cue_after_start(table())
    longer = table()
    longer.engine.count_in_us = 600_000  # as a table started with count_in_ms=600
    longer.engine._begin(longer.engine.rules, longer.engine.game_id, practice=False, ready=True)
    assert first_cue_after_start(longer) - short == 300_000


def cue_gaps(t: Table) -> list[int]:
    run_loop(t, [(t.clock.t + 8_000_000, t.engine.stop)])
    cues = [e.t_us for e in events(t.store.conn, t.engine.game_id) if isinstance(e, Cue)]
    return [b - a for a, b in zip(cues, cues[1:], strict=False)]


def test_rounds_follow_each_other_at_exactly_the_pause_the_game_asks(
        table: Callable[..., Table]) -> None:
    """Nobody slaps: each round closes at its window's end, "clean round" is said, and the next
    call comes pause_ms later, every round the same (not at the loop's next look)."""
    gaps = cue_gaps(table(ready=False))
    slower = cue_gaps(table(options={**OPTIONS, "pause_ms": "350"}, ready=False))
    assert len(gaps) >= 3 and len(set(gaps)) == 1
    assert len(slower) >= 3 and len(set(slower)) == 1
    assert slower[0] - gaps[0] == 250_000


def test_the_pass_beat_sounds_every_beat_while_play_runs_and_never_while_paused(
        table: Callable[..., Table]) -> None:
    """Pig with a pass beat of 1 s: "Pass!" exactly every second from the start of play; the
    judge pauses at 3.5 s: no beat more until play resumes."""
    t = table("pig", {"window_ms": "1000", "lives": "3", "pass_beat_ms": "1000"}, ready=False)
    t.engine.open()
    start = t.clock.t
    said_at = len(t.voice.said)

    def pause() -> None:
        t.engine.submit(Request(Pause()))

    run_loop(t, [(start + 3_500_000, pause), (start + 6_000_000, t.engine.stop)])
    beats = [when for k, _, when in list(t.voice.said)[said_at:] if k == "pass"]
    assert beats == [start + 1_000_000, start + 2_000_000, start + 3_000_000]
    assert t.engine.snapshot()["phase"] == "paused"


def test_a_table_opened_without_saying_otherwise_starts_at_its_ready_step(
        tmp_path: Path) -> None:
    """As the table opens a new game (`Table.start` gives no `ready`): every seat first presses
    ready. Nothing is called and no go-word or call is shown before that."""
    clock = SimClock(1_000_000)
    store = Store(tmp_path / "t.db")
    try:
        voice = PrintAnnouncer(io.StringIO(), lead_ms=10, clock=clock, quiet=True)
        start = GameStart("spank-the-pig", tuple(SEATS), typed("spank-the-pig", OPTIONS))
        engine = open_game(store, start, voice, clock=clock, count_in_ms=300)
        engine.open()
        clock.t += 10_000_000
        engine.run_items(None)
        shown = engine.snapshot()
        assert shown["phase"] == "ready" and (shown["call"], shown["cue_word"]) == ("", "")
        assert [k for k, _, _ in voice.said] == ["deal", "ready"]
    finally:
        store.close()


def test_a_resumed_game_shows_nothing_said_yet(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])
    engine = resumed(s, auto=False)
    assert engine.snapshot()["said"] == ""


def test_an_engine_that_never_started_stops_quietly(table: Callable[..., Table]) -> None:
    t = table()
    t.engine.stop()  # a table closed before its game's thread began
    assert t.engine._stop.is_set()


# -- the box's signals: a stuck button, its release, a double, a judge's event ----------------


def test_a_stuck_button_is_said_shown_and_ignored_until_it_is_released(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    engine.run_items(ButtonStuck("Blue", "slap", None))
    assert ("stuck", {"seat": "Blue", "button": "slap"}) in [(k, p) for k, p, _ in s.voice.said]
    assert ("stuck", {"seat": "Blue", "button": "slap"}) in s.published
    assert engine.snapshot()["stuck"] == ["Blue slap"]
    cue = s.start_round()
    engine.run_items(Press(s.us(cue + 100), "Blue", "slap"))  # ignored: the button is stuck
    engine.run_items(Press(s.us(cue + 110), "Red", "slap"))  # another seat counts
    assert s.logged_presses() == [(s.us(cue + 110), "Red")]
    engine.run_items(ButtonReleased("Blue", "slap", s.us(cue + 200)))
    states = [d for k, d in s.published if k == "state"]
    assert states[-1]["stuck"] == []  # the pages stop showing it at once
    engine.run_items(Press(s.us(cue + 300), "Blue", "slap"))  # it counts again
    assert s.logged_presses()[-1] == (s.us(cue + 300), "Blue")


def test_a_double_declared_is_logged_as_a_double_not_a_slap(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {**OPTIONS, "doubles": "buttons"}, doubles=True)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.press("Blue", cue + 100, button="double")
    s.pump()
    [press] = [e for e in events(s.store.conn, engine.game_id) if isinstance(e, Press)]
    assert (press.seat, press.button) == ("Blue", "double")


def test_a_judges_event_from_the_queue_is_logged_and_ruled(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    engine.run_items(Penalty(1, "Red", 1, "slapped the hippo"))  # as the keyboard submits it
    assert {r.seat: r.score for r in engine.rules.standings().seats}["Red"] == 1
    assert said_text(s.voice)[-1].startswith("Red")


def test_an_event_the_rules_refuse_is_refused_in_their_words_and_never_logged(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    count = len(list(events(s.store.conn, engine.game_id)))
    with pytest.raises(ValueError) as refused:
        s.command("feed", event=Penalty(1, "Purple", 1, "slapped the hippo"))
    assert str(refused.value) == "seat 'Purple' is not at this table (Blue, Red, Green)"
    assert len(list(events(s.store.conn, engine.game_id))) == count
    s.command("feed", event=Penalty(1, "Red", 1, "slapped the hippo"))  # the sibling: taken
    assert len(list(events(s.store.conn, engine.game_id))) == count + 1


def test_while_the_disk_is_full_every_event_is_refused_with_the_same_line(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    fill(s)
    with pytest.raises(StorageFull) as first:  # (the engine logs the line: not with `s.command`)
        ask(engine, "feed", event=Penalty(1, "Red", 1, "x" * 5000))
    with pytest.raises(StorageFull) as again:
        ask(engine, "feed", event=Penalty(1, "Red", 1, "slapped the hippo"))
    assert str(again.value) == str(first.value) == engine.snapshot()["storage_full"] != ""


def test_a_mark_that_finds_the_disk_full_still_says_the_ruling_then_pauses(
        sim: Callable[..., Sim], monkeypatch: pytest.MonkeyPatch) -> None:
    """The round's "ruled" mark is the write that finds the disk full (the presses were
    logged): the storage line is said, and the ruling already made is said all the same; the
    pages show the line, the table pauses."""
    import sqlite3

    from referee.store.database import storage_error

    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    error = storage_error(s.store.path, sqlite3.OperationalError("database or disk is full"))

    def full(*args: Any, **kw: Any) -> None:
        raise error

    cue = s.start_round()
    for i, seat in enumerate(SEATS):
        s.press(seat, cue + 100 + 10 * i)
    s.pump()
    monkeypatch.setattr(s.store, "mark", full)
    while 1 not in engine.announced:  # (the engine logs the line: not with `s.run_until`)
        assert s.t_ms < cue + 3000
        s.t_ms += 10
        engine.run_items(None)
    assert said(s)[-2:] == ["storage_full", "ruling"]
    assert engine.snapshot()["storage_full"] == str(error) and engine.paused


def test_a_ruled_mark_is_written_without_a_full_sync_and_the_end_with_one(
        sim: Callable[..., Sim]) -> None:
    """The "ruled" mark is on the button path: no fsync (a pulled plug voids the round);
    the end is written with a full sync."""
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])  # the last write: the round's ruled mark
    assert s.store.conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    s.command("end")
    assert s.store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2


# -- corrections, what cuts in, what blinks ----------------------------------------------------


class Voice(PrintAnnouncer):
    """The print announcer, keeping which phrases were asked to cut in over the one playing."""

    def __init__(self, clock: Callable[[], int]) -> None:
        super().__init__(io.StringIO(), lead_ms=100, clock=clock, quiet=True)
        self.cut_in: list[str] = []

    def say(self, key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
        super().say(key, params, interrupt=interrupt)
        if interrupt:
            self.cut_in.append(key)


@pytest.mark.parametrize(("game", "options", "line"), [
    ("spank-the-pig", OPTIONS, "Correction, round 1: Red, one off the whammy pile."),
    ("beep", {"window_ms": "1000"}, "Correction, round 1: Red, one point lost."),
])
def test_a_penalty_taken_back_is_said_as_a_correction_in_the_games_words_and_cuts_in(
        sim: Callable[..., Sim], monkeypatch: pytest.MonkeyPatch, game: str,
        options: dict[str, str], line: str) -> None:
    game = made_up_game(monkeypatch) if game == "beep" else game
    s = sim(SEATS, options, game=game)
    voice = Voice(s.clock)
    engine = s.engine
    assert engine is not None
    engine.announcer = s.voice = voice
    play_round(s, ["Blue", "Green", "Red"])
    s.command("feed", event=Penalty(1, "Red", 1, "slapped the hippo"))
    s.command("feed", event=Undo())
    assert said_text(voice)[-1] == line
    assert voice.cut_in == ["correction"]  # only the correction cuts in; rulings wait their turn
    # the pages mark the judge's changes as corrections, the round's first ruling not
    assert [d["correction"] for k, d in s.published if k == "ruling"] == [False, True, True]


def test_the_seat_that_takes_blinks_and_a_ruling_that_gives_nothing_blinks_nobody(
        table: Callable[..., Table]) -> None:
    blinks: list[str] = []
    t = table(ready=False)
    assert t.lights is not None
    t.lights.blink = lambda seat, times=3, on_ms=150: blinks.append(seat)  # type: ignore[method-assign]
    call = t.engine.rules.next_call()
    assert call is not None
    t.engine.start_round(call)
    cue = t.engine.cue_us
    assert cue is not None
    t.clock.t = cue + 100_000
    t.press("Blue")
    t.clock.t += 10_000
    t.press("Red")
    t.clock.t += 10_000
    t.press("Green")
    t.clock.t += 2_000_000
    t.engine.run_items(None)
    assert blinks == ["Green"]  # last to spank the pig: one whammy
    assert t.engine.ruled_at[1] == t.clock.t  # when it was ruled, for the latency report


def test_a_question_the_game_never_declared_is_asked_by_its_name(
        sim: Callable[..., Sim], monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.made_up_game import FirstAfterTheBeep

    beep = made_up_game(monkeypatch)
    monkeypatch.setattr(FirstAfterTheBeep, "FACTS", ())
    s = sim(SEATS, {"window_ms": "1000"}, game=beep)
    cue = s.start_round()
    s.run_to(cue + 3000)  # nobody pressed: "heard", a fact it never declared
    assert said_text(s.voice)[-1] == "Judge: Heard?"
    assert s.voice.said[-1][1]["need"] == ["heard"]  # the speech finds the question's clip by it
    engine = s.engine
    assert engine is not None
    assert engine.snapshot()["question"] == "Heard?"


# -- what the pages show, moment by moment -----------------------------------------------------

KNOWN_PHASES = {"ready", "count-in", "paused", "over", "awaiting", "setup", "ruled", "cadence",
                "race"}


def test_a_silent_race_never_shows_a_claim_only_the_last_ruled_round(
        sim: Callable[..., Sim]) -> None:
    """Pig: a claim opens a race nobody may see. Before any ruling the pages show the set-up;
    once round 1 is ruled, a new claim leaves round 1 on show."""
    s = sim(SEATS, {"window_ms": "1000", "lives": "3"}, game="pig")
    engine = s.engine
    assert engine is not None
    assert engine.snapshot()["phase"] == "setup"
    s.press("Blue", 100)
    s.pump()
    assert engine.rules.status().race_open
    assert (engine.snapshot()["phase"], engine.snapshot()["round"]) == ("setup", 0)
    assert engine.snapshot()["turn"] is None  # no call names a seat in this game
    s.press("Red", 160)
    s.run_to(1500)  # Green never followed: round 1 ruled
    assert engine.snapshot()["round"] == 1
    s.press("Red", 2000)  # a new claim, silent
    s.pump()
    assert engine.rules.status().race_open
    assert (engine.snapshot()["phase"], engine.snapshot()["round"]) == ("ruled", 1)


def test_a_flip_nobody_tapped_stops_showing_as_a_race_and_the_next_seats_turn_is_shown(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {"window_ms": "1000", "tempo_ms": "100"}, game="pigs-tail")
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.run_to(cue + 500)
    assert [d for k, d in s.published if k == "state"][-1]["phase"] == "race"
    s.run_to(cue + 1500)  # the window closed on nothing to rule
    assert not engine.rules.status().race_open
    page = [d for k, d in s.published if k == "state"][-1]
    assert page["phase"] != "race" and page["turn"] == "Red"  # Red flips next


def test_at_the_cue_instant_the_pages_show_the_race(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.t_ms = cue - 0.001
    assert s.command("snapshot")["phase"] == "cadence"  # a page asking 1 µs before the go-word
    s.t_ms = cue
    assert s.command("snapshot")["phase"] == "race"  # asked at the go-word's instant
    assert [d for k, d in s.published if k == "state"][-1]["phase"] == "race"  # and pushed


def test_a_pause_in_the_race_shows_the_race_then_paused_and_nothing_unknown(
        sim: Callable[..., Sim]) -> None:
    s, _ = racing(sim)
    seen = len(s.published)
    s.command("pause")
    s.run_to(s.t_ms + 2000, step_ms=10)
    phases = [d["phase"] for k, d in list(s.published)[seen:] if k == "state"]
    assert phases[-1] == "paused" and set(phases) <= KNOWN_PHASES, phases


def test_an_older_question_reopened_does_not_cover_the_race_in_play(
        sim: Callable[..., Sim]) -> None:
    """Round 1 asked and answered; round 2 under way; the judge takes the answer back: round 1
    asks again, but the pages keep showing round 2's race (its question waits)."""
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None

    def racing(number: int) -> bool:
        return engine.rules.round_count() == number and engine.cue_us is None

    s.run_until(lambda: racing(1), limit_ms=5000, step_ms=10)
    s.press("Blue", s.t_ms + 50)
    s.press("Red", s.t_ms + 60)
    s.run_until(lambda: engine.rules.status().awaiting is not None, limit_ms=3000, step_ms=10)
    key(s, "yes")
    s.run_until(lambda: racing(2), limit_ms=10_000, step_ms=10)
    s.command("feed", event=Undo())
    assert engine.rules.status().awaiting is not None
    assert engine.snapshot()["phase"] == "race"


def test_the_last_round_asking_the_judge_shows_the_question_not_the_end(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {**OPTIONS, "deck": "6"}, auto=True)  # two rounds
    engine = s.engine
    assert engine is not None
    for number in (1, 2):
        def racing(n: int = number) -> bool:
            return engine.rules.round_count() == n and engine.cue_us is None

        def ruled(n: int = number) -> bool:
            return n in engine.announced

        s.run_until(racing, limit_ms=10_000, step_ms=10)
        at = s.t_ms
        s.press("Blue", at + 50)
        if number == 1:  # everyone: ruled; round 2, the last: Blue alone, the judge is asked
            s.press("Red", at + 60)
            s.press("Green", at + 70)
        s.run_until(ruled, limit_ms=5000, step_ms=10)
    assert engine.rules.status().awaiting is not None
    assert engine.snapshot()["phase"] == "awaiting"
    assert "game_over" not in said(s)


def test_a_listener_that_fails_and_an_engine_error_are_logged_and_the_table_goes_on(
        table: Callable[..., Table], caplog: pytest.LogCaptureFixture) -> None:
    t = table(ready=False)

    def broken(kind: str, data: dict[str, Any]) -> None:
        raise RuntimeError("page gone")

    t.engine.subscribe(broken)
    t.engine.open()
    t.engine.run_items(Press(t.clock.t, "Purple", "slap"))  # a seat not at the table: a bug
    messages = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert "listener failed" in messages and "engine error" in messages
    assert all(r.exc_info for r in caplog.records if r.levelname == "ERROR")
    t.clock.t += 3_000_000
    t.engine.run_items(None)
    assert t.engine.rules.round_count() >= 1  # the table went on


# -- practice, the beat word, the turn pace ------------------------------------------------


@pytest.mark.parametrize("deck", ["9", "12", "72"])
def test_a_practice_plays_its_own_short_deck_to_its_last_round_whatever_the_deck_chosen(
        table: Callable[..., Table], deck: str) -> None:
    """The practice deals 3 cards a seat (the deck chosen is the real game's): its third round
    is its last, and it says so."""
    last_round = True
    t = table(options={**OPTIONS, "deck": deck}, ready=False, practice=True)
    assert t.engine.rules.options["deck"] == 9 and t.engine.next_start.options["deck"] == int(deck)
    start = t.clock.t
    run_loop(t, [(start + 8_000_000, t.engine.stop)])
    keys = [k for k, _, _ in t.voice.said]
    assert keys.count("practice") == 1 and keys.index("practice") < keys.index("spank")
    assert "practice_over" in keys
    assert ("last_round" in keys[:keys.index("practice_over")]) is last_round
    if last_round:  # said as round 2 is ruled, before the pause, not at round 3's call
        said = list(t.voice.said)
        at = keys.index("last_round")
        assert said[at][2] == said[at - 1][2] and said[at - 1][0] == "nobody"


def test_a_practice_over_by_its_rules_crowns_nobody(table: Callable[..., Table]) -> None:
    t = table("pig", {"window_ms": "1000", "lives": "1"}, ready=False, practice=True)
    t.engine.open()
    practice = t.engine.game_id
    t.clock.t += 100_000
    t.press("Blue")
    t.clock.t += 60_000
    t.press("Red")
    for _ in range(40):
        t.clock.t += 100_000
        t.engine.run_items(None)
    keys = [k for k, _, _ in t.voice.said]
    assert "practice_over" in keys and "champion" not in keys and "co_champions" not in keys
    assert t.engine.snapshot()["phase"] == "ready" and not t.engine.practice
    logged = list(events(t.store.conn, practice))  # "the practice always ends with an end line"
    assert isinstance(logged[-1], End) and logged[-1].t_us >= logged[-2].t_us


def test_a_game_without_calls_opens_play_with_its_beat_word_after_the_count_in(
        table: Callable[..., Table]) -> None:
    t = table("pig", {"window_ms": "1000", "lives": "3"})
    t.engine.open()
    for seat in SEATS:
        t.press(seat)
    assert t.states()[-1]["phase"] == "count-in"
    t.clock.t += 300_000
    t.engine.run_items(None)
    assert [k for k, p, _ in t.voice.said][-1] == "pass"
    assert t.states()[-1]["phase"] == "setup"  # the pages leave the count-in at once


def test_a_turn_game_keeps_its_turn_pace_only_while_nothing_is_said_between_turns(
        sim: Callable[..., Sim]) -> None:
    """Pig's Tail, two seats: both tap round 1's flip (a match): its ruling is said, so round 2
    is called once the voice is free and the pause is over, not at the turn pace."""
    s, engine, first = turning(sim)
    s.press("Blue", s.ms(first) + 20)
    s.press("Red", s.ms(first) + 30)
    s.run_until(lambda: engine.rules.round_count() == 2, limit_ms=2000, step_ms=5)
    assert "ruling" in said(s)
    assert engine.cue_us is not None and engine.cue_us < first + TURN_MS * 1000


# -- one turn of the loop: everything queued, the clock read before it ------------------------


def test_presses_queued_before_a_late_wake_up_are_all_in_the_ruling(
        sim: Callable[..., Sim]) -> None:
    """Three slaps wait in the queue when the engine wakes after the window's end (a busy
    thread): it takes them all before it lets the race close."""
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.run_to(cue + 1)
    for i, seat in enumerate(SEATS):
        s.press(seat, cue + 100 + 10 * i)
    s.pump(cue + 2000)  # one wake-up, long after the close
    assert said_text(s.voice)[-1] == "Green: last to spank the pig by 10 milliseconds. One whammy."


class InFlight:
    """A queue into which one press arrives just as the engine has taken everything queued (the
    clock has moved on past the race's close by then)."""

    def __init__(self, arrive: Callable[[], Any]) -> None:
        self.items: deque[Any] = deque()
        self.arrive: Callable[[], Any] | None = arrive

    def put_nowait(self, item: Any) -> None:
        self.items.append(item)

    def get_nowait(self) -> Any:
        if self.items:
            return self.items.popleft()
        if self.arrive is not None:
            self.items.append(self.arrive())
            self.arrive = None
        raise queue.Empty


def test_a_press_that_arrives_while_the_engine_takes_its_queue_is_in_the_ruling(
        sim: Callable[..., Sim]) -> None:
    """The clock is read before the queue is taken: a press stamped before the close that
    reaches the queue in that instant is in the race, whatever the time when it arrived."""
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.run_to(cue + 1)
    s.press("Blue", cue + 100)
    s.press("Red", cue + 110)
    s.pump()
    closes = engine.rules.status().closes_at_us
    assert closes is not None

    def green() -> Press:
        s.t_ms = s.ms(closes) + 5  # the wall moved on while the engine took its queue
        return Press(closes - 1000, "Green", "slap")  # stamped 1 ms before the close

    engine.queue = InFlight(green)  # type: ignore[assignment]
    s.t_ms = s.ms(closes) - 0.5
    said_before = len(s.voice.said)
    engine.run_items(None)
    engine.run_items(None)  # the next wake-up takes Green's press, then the race closes
    # ruled once, with Green in it: no question first, no correction after
    assert said_text(s.voice)[said_before:] == [
        "Green: last to spank the pig by 889 milliseconds. One whammy."]


class Rendering(PrintAnnouncer):
    """A voice still rendering its first phrases: when it will be quiet is not known at first."""

    def __init__(self, clock: Callable[[], int], unknown: int) -> None:
        super().__init__(io.StringIO(), lead_ms=100, clock=clock, quiet=True)
        self.unknown = unknown

    def quiet_at(self) -> int | None:
        if self.unknown > 0:
            self.unknown -= 1
            return None
        return super().quiet_at()


def test_a_voice_still_rendering_holds_the_first_call_until_it_knows_when_it_is_quiet(
        table: Callable[..., Table], caplog: pytest.LogCaptureFixture) -> None:
    voice = Rendering(lambda: 0, unknown=5)
    t = table(ready=False, announcer=voice)
    voice.clock = t.clock
    t.engine.open()
    run_loop(t, [(t.clock.t + 3_000_000, t.engine.stop)])
    assert voice.unknown == 0 and t.engine.rules.round_count() >= 1  # asked again, then called
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_round_first_ruled_in_the_turn_a_judge_corrects_another_is_not_a_correction(
        sim: Callable[..., Sim]) -> None:
    """The judge's penalty on round 1 and the close of round 2 (nobody slapped: a clean round)
    come in one wake-up: round 2 is announced as itself, "clean round" and all."""
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    cue = s.start_round()
    s.run_to(cue + 1)
    engine.submit(Penalty(1, "Red", 1, "slapped the hippo"))
    s.pump(cue + 2000)  # the penalty, then round 2's close, in one turn
    round2 = [d for k, d in s.published if k == "ruling" and d["round"] == 2]
    assert [d["correction"] for d in round2] == [False]
    assert said_text(s.voice)[-1] == "Clean round."


def test_a_resumed_table_keeps_the_pause_between_rounds(table: Callable[..., Table]) -> None:
    """Its clock runs ahead of the voice's: the voice's quiet time is moved onto it, so rounds
    follow each other exactly as at a fresh table (not at once, the voice taken as long quiet)."""
    fresh = cue_gaps(table(ready=False))
    t = table(ready=False)
    run_loop(t, [(t.clock.t + 2_000_000, t.engine.stop)])
    t.clock.t += 1_000  # restarted at once: the resumed clock runs ahead of the wall
    again = resume_game(t.store, t.engine.game_id, t.voice, clock=t.clock, leds=t.lights,
                        ready=False, count_in_ms=300)
    assert again.offset_us > 0
    t.engine = again
    t.engine.open()
    first = len([e for e in events(t.store.conn, again.game_id) if isinstance(e, Cue)])
    run_loop(t, [(t.clock.t + 8_000_000, again.stop)])
    cues = [e.t_us for e in events(t.store.conn, again.game_id) if isinstance(e, Cue)][first:]
    gaps = [b - a for a, b in zip(cues, cues[1:], strict=False)]
    assert len(gaps) >= 3 and set(gaps) == {fresh[0]}


# -- the state the pages get: the API's own schema -------------------------------------------


def test_every_state_the_pages_get_is_the_state_the_api_documents(
        sim: Callable[..., Sim]) -> None:
    """Each field the engine sends under its documented name (the pages read them by name; an
    unknown or missing field fails the API's schema), through rounds, a question, the end."""
    import msgspec

    from referee.config import default_config
    from referee.scoreboard.app import make_decorate
    from referee.scoreboard.bodies import State

    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    judged(s, ["Blue", "Red"])
    cue = s.start_round()
    s.run_to(cue + 500)
    s.command("end")
    decorate = make_decorate(SimpleNamespace(config=default_config(SEATS), mock=True))
    states = [d for k, d in s.published if k == "state"] + [engine.snapshot()]
    assert len(states) > 10
    for state in states:
        msgspec.convert(decorate(state), State)
    last = engine.snapshot()
    assert (last["game"], last["title"], last["rounds"], last["unit"]) == (
        "spank-the-pig", "Spank the Pig!", 24, "whammies")
    assert last["earlier"][0]["round"] == 1 and last["earlier"][0]["rulings"]
    assert last["earlier"][0]["rulings_said"][0]["said"] == (
        "Green: last to spank the pig by 10 milliseconds. One whammy.")


def test_a_page_opened_mid_game_shows_the_five_rounds_before_the_latest(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    for _ in range(7):
        play_round(s, ["Blue", "Red", "Green"])
    shown = engine.snapshot()
    assert shown["round"] == 7 and [e["round"] for e in shown["earlier"]] == [2, 3, 4, 5, 6]


def test_the_last_rounds_ruling_is_shown_before_the_end(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {**OPTIONS, "deck": "6"}, auto=True)  # two rounds; Blue never last: champion
    engine = s.engine
    assert engine is not None
    for number, order in ((1, SEATS), (2, ["Blue", "Green", "Red"])):
        def racing(n: int = number) -> bool:
            return engine.rules.round_count() == n and engine.cue_us is None

        s.run_until(racing, limit_ms=10_000, step_ms=10)
        for i, seat in enumerate(order):
            s.press(seat, s.t_ms + 50 + 10 * i)
    s.run_until(lambda: any(k == "over" for k, _ in s.published), limit_ms=5000, step_ms=10)
    last = [d for k, d in s.published if k == "state" and d["round"] == 2 and d["rulings"]]
    assert last[0]["phase"] == "ruled" and last[-1]["phase"] == "over"


def test_a_seats_press_while_paused_counts_in(table: Callable[..., Table]) -> None:
    t = table(ready=False)
    t.engine.open()
    ask(t.engine, "pause")
    assert t.engine.snapshot()["phase"] == "paused"
    t.clock.t += 1_000_000
    t.press("Red")  # a seat's button takes the pause back: a count-in
    assert [k for k, _, _ in t.voice.said][-1] == "count_in"
    assert t.states()[-1]["phase"] == "count-in"
    assert list(events(t.store.conn, t.engine.game_id)) == []  # not a game press


def test_a_judge_key_that_changes_a_ruled_round_updates_the_pages(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])
    s.command("feed", event=Penalty(1, "Red", 1, "slapped the hippo"))
    key(s, "undo")  # the keypad takes the penalty back
    page = [d for k, d in s.published if k == "state"][-1]
    assert {r["seat"]: r["score"] for r in page["seats"]} == {"Blue": 0, "Red": 0, "Green": 1}


def test_a_seat_named_in_a_ruling_that_gives_it_nothing_does_not_blink(
        sim: Callable[..., Sim]) -> None:
    """Pig's Tail's first flip has no card below to match: "Blue: ... Zero cards." No LED."""
    from referee.events import Facts

    s = sim(SEATS, {"window_ms": "1000", "tempo_ms": "100"}, game="pigs-tail")
    engine = s.engine
    assert engine is not None
    blinks: list[str] = []
    s.box.blink = lambda seat, times=3, on_ms=150: blinks.append(seat)  # type: ignore[method-assign]
    cue = s.start_round()
    s.press("Red", cue + 100)
    s.run_to(cue + 3000)
    engine.run_items(Facts(1, {"match": True}))
    assert said_text(s.voice)[-1] == "Blue: no card below to match. Zero cards."
    assert blinks == []


def test_a_resumed_turn_game_calls_its_next_turn(sim: Callable[..., Sim]) -> None:
    """Pig's Tail rebuilt after one flip says nothing before its next call (the deal was said
    long ago): it calls the next turn, it does not stall."""
    s = sim(SEATS, {"window_ms": "1000", "tempo_ms": "100"}, game="pigs-tail")
    cue = s.start_round()
    s.run_to(cue + 1500)
    engine = resumed(s, ahead=False, auto=True, ready=False)
    s.run_until(lambda: engine.rules.round_count() == 2, limit_ms=10_000, step_ms=10)
    assert engine.snapshot()["turn"] == "Red"


def test_in_sudden_death_the_pages_show_only_the_tied_leaders_racing(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {**OPTIONS, "deck": "6"})  # two rounds; Green last in both
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    play_round(s, ["Red", "Blue", "Green"])
    assert engine.snapshot()["racing"] == SEATS  # round 2: everyone raced
    cue = s.start_round()  # sudden death: Blue and Red, tied at none
    s.run_to(cue + 1)
    assert engine.snapshot()["racing"] == ["Blue", "Red"]


# -- the score's direction: a game where the most wins ----------------------------------------


def test_the_judges_end_crowns_the_most_points_in_a_game_where_the_most_wins(
        sim: Callable[..., Sim], monkeypatch: pytest.MonkeyPatch) -> None:
    """Ended early from the panel, a "more wins" game crowns its leader, not the seats with
    nothing (the end once crowned the fewest whatever the game)."""
    beep = made_up_game(monkeypatch)
    s = sim(SEATS, {"window_ms": "1000", "rounds": "5"}, game=beep)
    cue = s.start_round()
    s.press("Red", cue + 100)
    s.run_to(cue + 3000)
    final = s.command("end")
    assert final["final"] and final["winners"] == ["Red"]
    s.run_until(lambda: "champion" in [k for k, _, _ in s.voice.said], limit_ms=3000)
    assert said_text(s.voice)[-1] == "Red is the champion!"


def test_a_seat_that_gains_in_a_game_where_the_most_wins_does_not_blink(
        sim: Callable[..., Sim], monkeypatch: pytest.MonkeyPatch) -> None:
    """The LED blinks for a loss: in a "more wins" game a point gained is good news, a point
    taken off (pressed before the beep) is the loss."""
    beep = made_up_game(monkeypatch)
    s = sim(SEATS, {"window_ms": "1000", "rounds": "5", "early_ms": "300"}, game=beep)
    blinks: list[str] = []
    s.box.blink = lambda seat, times=3, on_ms=150: blinks.append(seat)  # type: ignore[method-assign]
    cue = s.start_round()
    s.press("Red", cue + 100)
    s.run_to(cue + 3000)
    assert blinks == []
    assert said_text(s.voice)[-1] == "Red: first after the beep. One point."


def test_a_game_ended_during_a_race_does_not_keep_waking_the_engine(
        sim: Callable[..., Sim]) -> None:
    """The judge's End while a race is open: the race is never closed (nothing more is fed), so
    its close time must not wake the engine thread (before: it woke at once, forever)."""
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.run_to(cue + 50)
    assert engine.rules.status().race_open
    s.command("end")
    s.run_to(cue + 5000)
    wake = engine.next_wake()
    assert wake is None or wake > engine.now()


def test_a_correction_given_during_a_call_is_said_once_the_race_is_over(
        sim: Callable[..., Sim]) -> None:
    """The judge corrects round 1 while round 2's cadence is being called: the correction is
    said between rounds, after round 2's race, never right after "PIG!" (before: at once)."""
    from referee.events import Facts

    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])  # Green last: one whammy
    cue = s.start_round()
    s.run_to(cue - 50)  # "Spank… the…": the go-word still to come
    engine.run_items(Facts(1, {"pigs": 2}))
    s.run_to(cue + 150)  # the race is on
    assert "correction" not in said(s)
    assert {r["seat"]: r["score"] for r in engine.snapshot()["seats"]}["Green"] == 2  # shown
    for i, seat in enumerate(["Red", "Blue", "Green"]):
        s.press(seat, cue + 200 + 30 * i)
    s.run_to(cue + 3000)
    keys = said(s)
    assert keys[-3:] == ["correction", "ruling", "ruling"]  # round 1's change, then round 2's
    at = {k: t for k, _, t in s.voice.said}
    assert at["correction"] >= cue + 200_000 + 60_000  # not before round 2 was decided
