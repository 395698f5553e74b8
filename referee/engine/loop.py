"""The one stateful loop: one thread, one queue.

GPIO callbacks, the keyboard, HTTP handlers and timers only `submit()` items; the engine thread takes
them in order, appends each event to the log *before* acting on it, feeds the pure rules, and hands
what changed to the voice, the LEDs and the scoreboard listeners. It sleeps until the next thing
that can happen (a race window closing, the next round's cadence) — no polling.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.clock import now_us
from referee.engine.ports import Leds
from referee.events import (
    Awaiting,
    ButtonReleased,
    ButtonStuck,
    Cue,
    Event,
    Facts,
    GameStart,
    JudgeKey,
    Penalty,
    Press,
    Ruling,
    Undo,
)
from referee.rules.base import Rules, RulesError
from referee.store.database import Store
from referee.store.tablelog import new_rules
from referee.voice.announce import Announcer
from referee.voice.phrases import number_words, ruling_phrase, standings_text
from referee.voice.phrases import text as phrase_text

log = logging.getLogger(__name__)

PRACTICE_ROUNDS = 3  # a practice game: a few rounds, ruled and said, kept out of history
UNIT_WORDS = {"whammies": ("whammy", "whammies"), "lives": ("letter", "letters"),
              "cards": ("card", "cards")}
PIG_VARIANTS = {"pig": ("nose", "touch your nose"), "spoons": ("spoon", "grab a spoon"),
                "tongue": ("tongue", "stick out your tongue")}


def vocabulary(rules: Rules, scores: dict[str, int]) -> dict[str, Any]:
    """The game's own words for the scoreboard: whammy / letter / card; nose / spoon / tongue."""
    one, many = UNIT_WORDS.get(rules.UNIT, (rules.UNIT, rules.UNIT))
    words: dict[str, Any] = {"unit": [one, many]}
    variant = rules.options.get("variant")
    if isinstance(variant, str) and variant in PIG_VARIANTS:
        words["thing"], words["act"] = PIG_VARIANTS[variant]
        words["letters"] = {seat: "-".join("PIG"[:min(n, 3)]) for seat, n in scores.items()}
    return words


@dataclass(frozen=True)
class Command:
    """A control action: pause, resume, end, new_game, standings, stop."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    reply: queue.SimpleQueue[Any] | None = None


class Engine:
    def __init__(
        self,
        rules: Rules,
        store: Store,
        game_id: int,
        announcer: Announcer,
        *,
        clock: Callable[[], int] = now_us,
        leds: Leds | None = None,
        auto: bool = True,
        offset_us: int = 0,
        practice: bool = False,
    ) -> None:
        self.rules = rules
        self.store = store
        self.game_id = game_id
        self.announcer = announcer
        self.clock = clock
        self.leds = leds
        self.auto = auto  # start rounds on its own
        self.offset_us = offset_us  # keeps a resumed game's clock after the logged times
        self.practice = practice
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []
        self.paused = False
        self.ended = False
        self.next_round_us: int | None = None
        self.cue_us: int | None = None  # the coming cue's time, until it has passed
        self.last_cue_us: int | None = None
        self.announced: dict[int, list[Ruling | Awaiting]] = {}
        self.stuck: set[tuple[str, str]] = set()
        self.last_said = ""
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._stuck_check_us = 0
        self.prefaced: set[int] = set()  # rounds whose "before" announcements were said
        self.judged = False  # the latest changes came from the judge (a correction)
        self.next_pass_us: int | None = None
        self.ruled_at: dict[int, int] = {}  # round → engine time its ruling was published
        self.shown_phase = ""  # the phase of the latest state sent to the pages

    # -- any thread ---------------------------------------------------------------------------

    def submit(self, item: Any) -> None:
        self.queue.put_nowait(item)

    def command(self, name: str, timeout: float = 5.0, **args: Any) -> Any:
        """Run a command on the engine thread and wait for its answer (from HTTP/CLI threads)."""
        reply: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.submit(Command(name, args, reply))
        result = reply.get(timeout=timeout)
        if isinstance(result, Exception):
            raise result
        return result

    def subscribe(self, listener: Callable[[str, dict[str, Any]], None]) -> None:
        self.listeners.append(listener)

    def start(self) -> None:
        # CPython hands the GIL over every 5 ms by default: a thread busy elsewhere (the web
        # server, a render) could hold a waiting ruling that long. Half a millisecond keeps the
        # deciding press → ruling tail short at a negligible cost.
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.0005))
        warm = getattr(self.announcer, "warm_table", None)
        if warm is not None:
            warm(list(self.rules.seats))  # render every phrase of this table ahead of time
        self._thread = threading.Thread(target=self._run, name="referee-engine", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.submit(Command("stop"))
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- the engine thread --------------------------------------------------------------------

    def now(self) -> int:
        return self.clock() + self.offset_us

    def _run(self) -> None:
        self._publish("state", self.snapshot())
        if self.auto and self.rules.round_count() == 0:
            self.next_round_us = self.now() + 300_000
        self.step()
        while not self._stop.is_set():
            wake = self._next_wake()
            timeout = None if wake is None else max(0.0, (wake - self.now()) / 1e6)
            try:
                item = self.queue.get(timeout=min(timeout, 0.5) if timeout is not None else 0.5)
            except queue.Empty:
                item = None
            try:
                while item is not None:
                    self._handle(item)
                    try:
                        item = self.queue.get_nowait()
                    except queue.Empty:
                        item = None
                self.step()
            except Exception:  # a bug must not stop the table; it is logged with its traceback
                log.exception("engine error")

    def _next_wake(self) -> int | None:
        """The next instant something can happen without an input (a past one: at once)."""
        times = [self.rules.status().closes_at_us, self.cue_us, self.next_pass_us]
        if (self.next_round_us is not None and self.auto and not self.paused and not self.ended
                and self.rules.next_call() is not None):
            times.append(self.next_round_us)
        return min((t for t in times if t is not None), default=None)

    def _handle(self, item: Any) -> None:
        if isinstance(item, Press):
            if (item.seat, item.button) in self.stuck:
                return
            self.feed(Press(item.t_us + self.offset_us, item.seat, item.button))
        elif isinstance(item, Facts | Penalty | Undo):
            self.feed(item)
        elif isinstance(item, JudgeKey):
            self._judge_key(item.key)
        elif isinstance(item, Command):
            try:
                result = self._command(item)
            except Exception as exc:  # answered to the caller, who shows it as one line
                result = exc
            if item.reply is not None:
                item.reply.put(result)
        elif isinstance(item, ButtonStuck):
            self.stuck.add((item.seat, item.button))
            self.say("stuck", {"seat": item.seat, "button": item.button})
            self._publish("stuck", {"seat": item.seat, "button": item.button})
        elif isinstance(item, ButtonReleased):
            self.stuck.discard((item.seat, item.button))
            self._publish("state", self.snapshot())

    def feed(self, event: Event) -> None:
        """Log, then act: the log always holds every event the rules have seen."""
        if self.ended:
            return
        try:
            self._check(event)
        except RulesError as exc:
            raise ValueError(str(exc)) from None
        self.store.append(self.game_id, event)
        self.judged = isinstance(event, Facts | Penalty | Undo)
        self.rules.feed(event)
        if isinstance(event, Facts | Penalty | Undo):
            self._publish("judge", {"event": event.__class__.__name__.lower()})

    def _check(self, event: Event) -> None:
        """Reject what the rules would reject, before it reaches the log."""
        if isinstance(event, Facts):
            self.rules.check_round(event.round)
            self.rules.check_facts(event)
        elif isinstance(event, Penalty):
            self.rules.check_round(event.round)
            self.rules.check_seat(event.seat)
            if event.count < 1:
                raise RulesError("count must be 1 or more")
        elif isinstance(event, Undo) and not self.rules.judge_log:
            raise RulesError("there is no judge action to undo")
        elif isinstance(event, Press):
            self.rules.check_seat(event.seat)

    def step(self) -> None:
        """Advance time, announce what changed, and start the next round when it is due."""
        now = self.now()
        if now >= self._stuck_check_us and self.leds is not None:
            self._stuck_check_us = now + 1_000_000
            check = getattr(self.leds, "check_stuck", None)
            if check is not None:
                check(self.clock())  # the box reports a long hold back through the queue
        self.rules.advance(now)
        changed = self.rules.take_changed()
        for number in changed:
            self._announce(number)
        if changed or self.phase() != self.shown_phase:
            # a race can close with nothing to rule (a flip nobody claimed): the pages must
            # still stop showing it as open
            self._publish("state", self.snapshot())
        status = self.rules.status()
        if (self.practice and not self.ended and status.round >= PRACTICE_ROUNDS
                and not status.race_open and status.awaiting is None):
            self.ended = True
            self.say("practice_over", {})
            self.store.mark(self.game_id, "ended", True)
            self._publish("state", self.snapshot())
            return
        if not status.race_open and status.awaiting is None and not status.over:
            self._preface(self.rules.round_count() + 1)
        if status.over and not self.ended and not self.announced.get(-1):
            self.announced[-1] = []
            st = self.rules.standings()
            self.say("champion", {"seats": " and ".join(st.winners),
                                  "verb": "is" if len(st.winners) == 1 else "are"})
            self.store.mark(self.game_id, "over", st.to_json())
            self._publish("over", st.to_json())
        if (self.cue_us is not None and now >= self.cue_us):
            self.cue_us = None
            self._publish("state", self.snapshot())  # phase: cadence → race
        self._pass_beat(now, status.over)
        call = self.rules.next_call()
        if call is None or self.paused or self.ended or not self.auto:
            return
        if self.next_round_us is None:
            turn_ms = self.rules.options.get("turn_ms")
            if turn_ms and self.last_cue_us is not None:  # Pig's Tail: a flip every turn_ms
                tempo_ms = int(self.rules.options.get("tempo_ms", 500))
                self.next_round_us = max(
                    now, self.last_cue_us + (int(turn_ms) - tempo_ms - 100) * 1000)
            else:
                self.next_round_us = now + self.rules.options.get("pause_ms", 4000) * 1000
            return
        if now >= self.next_round_us:
            self.next_round_us = None
            self.start_round(call)

    def _pass_beat(self, now: int, over: bool) -> None:
        """Pig's optional "Pass!" every pass_beat_ms (not a cue; never logged)."""
        beat = int(self.rules.options.get("pass_beat_ms", 0) or 0)
        if not beat or over or self.paused or self.ended:
            self.next_pass_us = None
            return
        if self.next_pass_us is None:
            self.next_pass_us = now + beat * 1000
        elif now >= self.next_pass_us:
            self.next_pass_us = now + beat * 1000
            self.announcer.say("pass", {})

    def _preface(self, number: int) -> None:
        if number not in self.prefaced:
            self.prefaced.add(number)
            if self.practice and number == 1:
                self.say("practice", {})
            for key, params in self.rules.announcements(number):
                self.say(key, params)

    def start_round(self, call: tuple[str, str | None]) -> None:
        self._preface(self.rules.round_count() + 1)
        kind, seat = call
        key = "spank" if kind == "cadence" else kind
        tempo = int(self.rules.options.get("tempo_ms", 500))
        t_cue = self.announcer.cadence(key, {"seat": seat} if seat else {}, tempo)
        self.feed(Cue(t_cue + self.offset_us, seat))
        self.cue_us = self.last_cue_us = t_cue + self.offset_us
        self._publish("state", self.snapshot())

    def _announce(self, number: int) -> None:
        outputs = self.rules.round_outputs(number)
        before = self.announced.get(number)
        if outputs == before:
            return
        self.announced[number] = outputs
        if before is None:  # the race closed: a restart must not take it for a cut round
            # (written before anyone hears of it; no fsync on this path: a killed process keeps
            # it, a pulled plug may lose it, and then the round is voided, never half-ruled)
            self.store.mark(self.game_id, "ruled", {"round": number, "t_us": self.now()},
                            durable=False)
        self.ruled_at[number] = self.now()
        rulings = [o for o in outputs if isinstance(o, Ruling)]
        awaiting = [o for o in outputs if isinstance(o, Awaiting)]
        for r in rulings:
            if r.seat is not None and r.delta > 0 and self.leds is not None:
                self.leds.blink(r.seat)
        correction = (before is not None and self.judged
                      and not any(isinstance(o, Awaiting) for o in before))
        if correction:
            text = "; ".join(
                f"{r.seat or 'nobody'} {r.delta:+d}" for r in rulings) or "no penalties"
            self.say("correction", {"round": number, "text": text}, interrupt=True)
        else:
            new = [r for r in rulings if before is None or r not in before]
            for r in new:
                key, params = ruling_phrase(r.seat, r.reason, r.delta, r.margin_us,
                                            self.rules.UNIT)
                self.say(key, params)
            self._take_cards(new)
            if before is None and not rulings and not awaiting and self.rules.UNIT == "whammies":
                self.say("nobody", {})  # Spank the Pig!: a clean round is said
        for a in awaiting:
            question = " ".join(phrase_text(f"judge_{need}") for need in a.need)
            self.say("awaiting", {"question": question})
        self._publish("ruling", {"round": number, "rulings": [o.to_json() for o in outputs],
                                 "correction": correction})

    def _take_cards(self, rulings: list[Ruling]) -> None:
        """A seat with several whammies in one round is told how many face-up cards to take."""
        if self.rules.UNIT != "whammies":
            return
        totals: dict[str, list[int]] = {}
        for r in rulings:
            if r.seat is not None and r.delta > 0:
                totals.setdefault(r.seat, []).append(r.delta)
        for seat, deltas in totals.items():
            if len(deltas) > 1:
                self.say("take_cards", {"seat": seat, "cards": number_words(sum(deltas))})

    def say(self, key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
        self.last_said = phrase_text(key, params)
        self.announcer.say(key, params, interrupt=interrupt)

    def _judge_key(self, key: str) -> None:
        if key == "undo":
            if self.rules.judge_log:
                self.feed(Undo())
            return
        awaiting = self.rules.status().awaiting
        if awaiting is None:
            return
        yes = key == "yes"
        values: dict[str, Any] = {}
        for need in awaiting.need:
            values[need] = {"pigs": 1 if yes else 0, "doubles": ["double"] if yes else [],
                            "match": yes, "claim": yes}[need]
        self.feed(Facts(awaiting.round, values))

    def _command(self, cmd: Command) -> Any:
        name = cmd.name
        if name == "stop":
            self._stop.set()
        elif name == "pause":
            self.paused = True
            self.say("paused", {})
        elif name == "resume":
            self.paused = False
            self.next_round_us = None
            self.say("resumed", {})
        elif name == "end":
            self.ended = True
            self.store.mark(self.game_id, "ended", True)
        elif name == "next_round":
            call = self.rules.next_call()
            if call is None:
                raise ValueError("a round cannot start now (race open, judge asked or game over)")
            self.next_round_us = None
            self.start_round(call)
        elif name == "standings":
            st = self.rules.standings()
            self.say("standings", {"text": standings_text(
                [(r.seat, r.score) for r in st.seats], self.rules.UNIT)})
            return st.to_json()
        elif name == "feed":
            self.feed(cmd.args["event"])
        elif name == "snapshot":
            return self.snapshot()
        else:
            raise ValueError(f"unknown command {name!r}")
        self._publish("state", self.snapshot())
        return self.snapshot()

    # -- what the scoreboard shows -------------------------------------------------------------

    def phase(self) -> str:
        status = self.rules.status()
        if status.over or self.ended:
            return "over"
        if self.paused:
            return "paused"
        if status.awaiting is not None:
            return "awaiting"
        if status.race_open and getattr(self.rules, "SILENT_RACE", False):
            return "ruled" if self._shown_round() else "setup"  # a claim is never revealed
        if status.race_open:
            return "cadence" if self.cue_us is not None and self.now() < self.cue_us else "race"
        return "ruled" if status.round else "setup"

    def _shown_round(self) -> int:
        """The round the scoreboard shows: for a silent race, the latest ruled one."""
        status = self.rules.status()
        if status.race_open and getattr(self.rules, "SILENT_RACE", False):
            return max((n for n in self.announced if n > 0), default=0)
        return status.round

    def snapshot(self) -> dict[str, Any]:
        rules = self.rules
        status = rules.status()
        st = rules.standings()
        latest = self._shown_round()
        outputs = rules.round_outputs(latest) if latest else []
        return {
            "game": rules.NAME,
            "title": rules.TITLE,
            "game_id": self.game_id,
            "practice": self.practice,
            "phase": self.phase(),
            "round": latest,
            "rounds": getattr(rules, "regular_rounds", None),
            "unit": rules.UNIT,
            "seats": [r.to_json() for r in st.seats],
            "seat_order": list(rules.seats),
            "rulings": [o.to_json() for o in outputs if isinstance(o, Ruling)],
            "reactions_us": rules.reactions(latest) if latest else {},
            "awaiting": status.awaiting.to_json() if status.awaiting else None,
            "final": st.final,
            "winners": list(st.winners),
            "options": dict(rules.options),
            "said": self.last_said,
            "stuck": sorted(f"{s} {b}" for s, b in self.stuck),
            "words": vocabulary(rules, {r.seat: r.score for r in st.seats}),
            "earlier": [  # the rounds before, so a page opened mid-game shows them too
                {"round": n, "rulings": [o.to_json() for o in rules.round_outputs(n)
                                         if isinstance(o, Ruling)]}
                for n in range(max(1, latest - 5), latest)],
        }

    def _publish(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "state":
            self.shown_phase = data["phase"]
        for listener in list(self.listeners):
            try:
                listener(kind, data)
            except Exception:
                log.exception("listener failed")


def open_game(
    store: Store, start: GameStart, announcer: Announcer, *, practice: bool = False, **kw: Any
) -> Engine:
    rules = new_rules(start)
    full = GameStart(start.game, start.seats, {k: v for k, v in rules.options.items()})
    game_id = store.new_game(full, practice=practice)
    return Engine(rules, store, game_id, announcer, practice=practice, **kw)


def resume_game(store: Store, game_id: int, announcer: Announcer, **kw: Any) -> Engine:
    """Rebuild a game from its log; a round cut in half by the stop is voided, never half-ruled."""
    from referee.store.database import events, game_row, game_start, marks

    conn = store.conn
    row = game_row(conn, game_id)
    if row is None:
        raise ValueError(f"no game {game_id} in the database")
    rules = new_rules(game_start(row))
    last_t = 0
    for ev in events(conn, game_id):
        if isinstance(ev, Cue | Press):
            last_t = max(last_t, ev.t_us)
            rules.advance(ev.t_us)
        rules.feed(ev)
    ruled = [m["t_us"] for m in marks(conn, game_id, "ruled") if isinstance(m, dict)]
    rules.advance(max([last_t, *ruled]))  # races that had closed before the stop stay closed
    clock = kw.get("clock", now_us)
    offset = max(0, last_t + 1_000_000 - clock())
    engine = Engine(rules, store, game_id, announcer, offset_us=offset,
                    practice=bool(row["practice"]), **kw)
    status = rules.status()
    if status.race_open and rules.round_count():
        engine.feed(Facts(rules.round_count(), {"void": True}))
    rules.advance(engine.now())
    for number in range(1, rules.round_count() + 1):
        engine.announced[number] = rules.round_outputs(number)
    rules.take_changed()
    return engine
