"""The suite's one simulated table and one simulated clock (issue 22).

- `SimClock`: integer microseconds that move only when a test says so. Called, it gives µs (the
  engine's, the box's and the recording sink's clock); `SimClock.in_seconds(...)` gives float
  seconds instead (the scoreboard's PIN guard and rate limits). Every test's clock is one of these.
- `TickPin` and the `mock_factory` fixture: gpiozero's real MockFactory with pins whose edges carry
  the ticks the test picks (`mocked_pins()` for a module-scoped factory).
- `Sim` (fixture `sim`): the real engine with its rules, a real SQLite log and the print announcer,
  fed by a real ButtonBox on TickPins, stepped from the test's thread (no engine thread): times
  are milliseconds after the box's reference instant.
- `SimTable` (fixture `sim_table`): the real `Table` (engine thread, button box, SQLite file) on a
  `SimClock`, with real espeak-ng speech played by the recording sink (or the print announcer):
  times are the clock's µs.
- `settle(engine, clock)`: have a threaded engine act at the simulated time until it has nothing
  more to do now, the one "step until nothing is left" loop.
- `typed`, `register_game`, `end_window`, `close_table`: options as the command line types them, a
  game registered for one test, a live table's race window ended without waiting for it.

Fixtures (registered by tests/conftest.py): `mock_factory`, `sim`, `sim_table`.
"""

from __future__ import annotations

import io
import itertools
import logging
import os
import queue
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPin

from referee.capture.gpio import ButtonBox
from referee.cli.table import Table
from referee.config import default_config
from referee.engine.commands import Request, parse
from referee.engine.loop import Engine, open_game
from referee.events import GameStart, JudgeKey
from referee.store.database import Store, connect, events, export_lines
from referee.store.tablelog import replay
from referee.voice.announce import PrintAnnouncer
from referee.voice.audio import RecordingSink
from referee.voice.speech import SpeechAnnouncer, startup_texts
from referee.voice.tts import Renderer, SpeechOptions

START_US = 5_000_000


# -- the clock --------------------------------------------------------------------------------------

# The two tiers (README, "Development"): `make test` sets REFEREE_TESTS=quick and leaves out the
# tests marked `slow` (tests/conftest.py SLOW); `make test-all` and CI run everything. A property
# draws a tenth of its examples in the quick tier (at least 3) and all of them in the whole suite.
QUICK = os.environ.get("REFEREE_TESTS") == "quick"


def examples(n: int, least: int = 3) -> int:
    """How many examples a Hypothesis property of `n` examples draws in this tier (`least`: what
    the property needs to reach every case it asserts it reached)."""
    return max(least, n // 10) if QUICK else n



class SimClock:
    """Integer microseconds that only move when told to: every simulated clock of the suite.

    `clock()` (or `clock.now()`) is the time in µs, or in float seconds for a clock made with
    `SimClock.in_seconds` (the scoreboard's clocks); `clock.t` is always µs. Time never goes back
    through `to`; tests that set `t` directly may.
    """

    def __init__(self, t_us: int = START_US, *, seconds: bool = False) -> None:
        self.t = t_us
        self._seconds = seconds

    @classmethod
    def in_seconds(cls, start_s: float = 1000.0) -> SimClock:
        """A clock that reads in float seconds (`time.monotonic`'s unit), from `start_s`."""
        return cls(round(start_s * 1_000_000), seconds=True)

    def __call__(self) -> Any:
        return self.t / 1_000_000 if self._seconds else self.t

    def now(self) -> int:
        return self.t

    def to(self, t_us: int) -> None:
        self.t = max(self.t, t_us)

    advance_to = to

    def advance(self, *, us: int = 0, ms: float = 0, s: float = 0) -> None:
        self.t += us + round(ms * 1000) + round(s * 1_000_000)


# -- the pins ---------------------------------------------------------------------------------------

_sequence = itertools.count()


class TickPin(MockPin):
    """A MockPin whose edges carry chosen ticks, and which remembers every level change.

    ``drive(state, ticks)`` moves an input's level as the button would, and the callback gets
    ``ticks`` as the edge time, so tests never depend on wall time. ``closed = True`` models a
    button held shut: the input stays low even against the pull-up. ``history`` lists every level
    change as (sequence, level); the sequence is shared by all pins, so histories merge in order.
    """

    def __init__(self, factory: Any, info: Any) -> None:
        self.history: list[tuple[int, bool]] = []
        self.closed = False
        super().__init__(factory, info)

    def _change_state(self, value: Any) -> bool:
        if self.closed and self._function == "input":
            value = False
        changed: bool = super()._change_state(value)
        if changed:
            self.history.append((next(_sequence), bool(value)))
        return changed

    def drive(self, state: bool, ticks: float) -> None:
        assert self._function == "input"
        if self._change_state(state):
            self._last_change = ticks
            if self._when_changed is not None and self._edges in (
                "both",
                "rising" if state else "falling",
            ):
                self._call_when_changed()


@contextmanager
def mocked_pins() -> Iterator[MockFactory]:
    """gpiozero's MockFactory with TickPins as `Device.pin_factory`, restored afterwards."""
    previous = Device.pin_factory
    factory = MockFactory(pin_class=TickPin)
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.close()
        factory.reset()
        Device.pin_factory = previous


@pytest.fixture
def mock_factory() -> Iterator[MockFactory]:
    with mocked_pins() as factory:
        yield factory


# -- the engine on the test's thread ----------------------------------------------------------------

engine_log = logging.getLogger("referee.engine.loop")


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


SIM_OPTIONS = {"deck": "72", "tempo_ms": "100", "window_ms": "1000", "doubles": "off"}
BLUE, RED, GREEN = 4, 17, 27  # the default slap pins of seats 1-3


class Sim:
    """An engine on a simulated clock, fed by a ButtonBox on TickPins; the test moves time."""

    def __init__(self, db: Path, factory: MockFactory, seats: list[str], options: dict[str, str],
                 *, game: str = "spank-the-pig", auto: bool = False, practice: bool = False,
                 announcer: Any = None, doubles: bool = False, **box_kw: Any) -> None:
        self.factory = factory
        self.t_ms = 0.0
        self.engine: Engine | None = None
        self.early: list[object] = []
        config = default_config(seats, doubles=doubles)
        self.box = ButtonBox(config, self._sink, factory=factory, **box_kw)
        self.store = Store(db)
        self.voice = announcer or PrintAnnouncer(io.StringIO(), lead_ms=100, clock=self.clock,
                                                 quiet=True)
        self.engine = open_game(self.store, GameStart(game, tuple(seats), typed(game, options)),
                                self.voice, clock=self.clock, leds=self.box, auto=auto,
                                practice=practice, ready=False)  # from the first round on:
        # the Ready step has its own tests (tests/test_rhythm.py, tests/test_evening_game_night.py)
        self.published: deque[tuple[str, dict[str, Any]]] = deque(maxlen=200)
        self.engine.subscribe(lambda kind, data: self.published.append((kind, data)))
        for item in self.early:
            self.engine.submit(item)
        if auto:
            self.engine.open()

    def _sink(self, item: object) -> None:
        if self.engine is None:
            self.early.append(item)
        else:
            self.engine.submit(item)

    def clock(self) -> int:
        return self.box.ref_us + round(self.t_ms * 1000)

    def tick(self, ms: float) -> float:
        return float(self.box.ref_ticks + ms / 1000)

    def us(self, ms: float) -> int:
        return self.box.ref_us + round(ms * 1000)

    def ms(self, us: int) -> float:
        return (us - self.box.ref_us) / 1000

    def pin(self, bcm: int) -> TickPin:
        pin = self.factory.pin(bcm)
        assert isinstance(pin, TickPin)
        return pin

    def edges(self, bcm: int, edges: list[tuple[float, bool]]) -> None:
        """Drive a pin through (ms, level) edges; level False = pressed (low)."""
        pin = self.pin(bcm)
        for ms, level in edges:
            pin.drive(level, self.tick(ms))

    def press(self, seat: str, at_ms: float, *, button: str = "slap", hold_ms: float = 40) -> None:
        """A clean press of a seat's button (or the judge's "yes"/"no"/"undo") at `at_ms`."""
        pin = self.box._mock_pin(seat, button)
        assert isinstance(pin, TickPin)
        pin.drive(False, self.tick(at_ms))
        pin.drive(True, self.tick(at_ms + hold_ms))

    def pump(self, to_ms: float | None = None) -> None:
        """One wake-up of the engine at `to_ms` (time never goes back)."""
        engine = self.engine
        assert engine is not None
        if to_ms is not None:
            self.t_ms = max(self.t_ms, to_ms)
        self._run_items()

    def _run_items(self) -> None:
        """Everything queued, then a step, as the engine thread does when it wakes."""
        engine = self.engine
        assert engine is not None
        try:
            item = engine.queue.get_nowait()
        except queue.Empty:
            item = None
        errors = _Errors()
        engine_log.addHandler(errors)
        try:
            engine.run_items(item)  # logs a bug and goes on, as the table must; a test must not
        finally:
            engine_log.removeHandler(errors)
        assert not errors.records, logging.Formatter().format(errors.records[0])

    def run_to(self, to_ms: float, step_ms: float = 100.0) -> None:
        """Let simulated time pass, waking the engine when it asks to be woken (a window closing,
        a cue, the next round) and at least every `step_ms`, as its loop would."""
        engine = self.engine
        assert engine is not None
        while self.t_ms < to_ms:
            target = min(to_ms, self.t_ms + step_ms)
            wake = engine.next_wake()
            if wake is not None and self.t_ms < self.ms(wake) < target:
                target = self.ms(wake)
            self.pump(target)

    def run_until(self, done: Callable[[], bool], limit_ms: float, step_ms: float = 100.0) -> None:
        """Wake the engine as its loop would until `done()`; fails after `limit_ms` of sim time."""
        end = self.t_ms + limit_ms
        while not done():
            assert self.t_ms < end, f"not done after {limit_ms} ms of simulated time"
            self.run_to(min(end, self.t_ms + step_ms), step_ms)

    def command(self, name: str, **args: Any) -> Any:
        """A control command, as the scoreboard and the CLI send it, answered at the next wake-up."""
        engine = self.engine
        assert engine is not None
        reply: queue.SimpleQueue[Any] = queue.SimpleQueue()
        engine.submit(Request(parse(name, args), reply))
        self._run_items()
        result = reply.get_nowait()
        if isinstance(result, Exception):
            raise result
        return result

    def start_round(self) -> float:
        """Start the next round now; returns its cue (the go-word) in ms."""
        engine = self.engine
        assert engine is not None
        call = engine.rules.next_call()
        assert call is not None, engine.snapshot()
        engine.start_round(call)
        assert engine.cue_us is not None
        return self.ms(engine.cue_us)

    def outputs(self, number: int | None = None) -> list[dict[str, Any]]:
        engine = self.engine
        assert engine is not None
        rules = engine.rules
        found = rules.outputs() if number is None else rules.round_outputs(number)
        return [o.to_json() for o in found]

    def logged_presses(self) -> list[tuple[int, str]]:
        assert self.engine is not None
        return [(e.t_us, e.seat) for e in events(self.store.conn, self.engine.game_id)
                if e.__class__.__name__ == "Press"]

    def exported(self) -> list[str]:
        conn = connect(self.store.path, readonly=True)
        try:
            return list(export_lines(conn))
        finally:
            conn.close()

    def check_log_replays_to_live(self) -> dict[str, Any]:
        """The exported log re-rules to what the table announced; returns the final standings."""
        engine = self.engine
        assert engine is not None
        live = self.outputs() + [engine.rules.standings().to_json()]
        assert replay(self.exported()).lines() == live
        return live[-1]

    def close(self) -> None:
        self.box.close()
        self.store.close()


@pytest.fixture
def sim(tmp_path: Any, mock_factory: MockFactory) -> Iterator[Any]:
    """`sim(seats=None, options=None, **kw)` makes a `Sim` (an engine on a simulated
    clock on this test's MockFactory); each is closed at the end of the test."""
    made: list[Sim] = []

    def make(seats: list[str] | None = None, options: dict[str, str] | None = None,
             **kw: Any) -> Sim:
        s = Sim(tmp_path / f"sim{len(made)}.db", mock_factory, seats or ["Blue", "Red", "Green"],
                options or SIM_OPTIONS, **kw)
        made.append(s)
        return s

    try:
        yield make
    finally:
        for s in made:
            s.close()


# -- the live table ---------------------------------------------------------------------------------


class SimTable:
    """One table on a simulated clock; `at(t)` moves time on, `press(seat, t)` presses."""

    def __init__(self, db: Path, factory: MockFactory, seats: list[str], cache: Path | None, *,
                 count_in_ms: int = 300, doubles: bool = False, out: io.StringIO | None = None,
                 keys_out: io.StringIO | None = None) -> None:
        self.clock = SimClock()
        self.factory = factory
        self.sink = RecordingSink(clock=self.clock)
        self.sink.start(thread=False)
        self.voice: SpeechAnnouncer | PrintAnnouncer
        if cache is None:
            self.voice = PrintAnnouncer(out if out is not None else io.StringIO(), lead_ms=10,
                                        clock=self.clock)
        else:
            self.voice = SpeechAnnouncer(Renderer(SpeechOptions(cache_dir=cache)), self.sink,
                                         out=io.StringIO())
            self.voice.warm([*startup_texts(), *extra_texts()], wait=True)
            self.voice.warm_table(seats, wait=True)
        self.table = Table(default_config(seats, doubles=doubles), db=db, announcer=self.voice,
                           mock=True, clock=self.clock, count_in_ms=count_in_ms,
                           out=keys_out if keys_out is not None else io.StringIO())
        self.latch_up: list[int] = []  # when the LED chain latched new bits (the LEDs change)
        self._watched: Any = None
        self._watch_latch()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.table.subscribe(lambda kind, data: self.events.append((kind, data)))

    def _watch_latch(self) -> None:
        """Record the LED chain's latch edges (again after the setup page reopens the box)."""
        box = self.table.box
        if box is self._watched:
            return
        self._watched = box
        latch = box._chain["latch"].pin
        change = latch._change_state

        def record(value: Any) -> bool:
            changed: bool = change(value)
            if changed and value:
                self.latch_up.append(self.clock.t)
            return changed

        latch._change_state = record

    @property
    def engine(self) -> Engine:
        assert self.table.engine is not None
        return self.table.engine

    def start(self, game: str, options: dict[str, Any], *, practice: bool = False) -> Engine:
        engine = self.table.start(game, typed(game, options), practice=practice, resume=False)
        self.settle()
        return engine

    # -- time -------------------------------------------------------------------------------

    def settle(self) -> None:
        """Let the engine act at the current time until it has nothing more to do now."""
        self._watch_latch()
        speech = isinstance(self.voice, SpeechAnnouncer)
        for _ in range(4):
            if speech:
                self.voice.idle(30.0)  # type: ignore[union-attr]
                self.sink.play_until(self.clock.t)
            before = self._seen()
            self.engine.command("step", timeout=30.0)
            if self._seen() == before:
                break  # a step that changed nothing: the next would change nothing either
        if speech:
            self.voice.idle(30.0)  # type: ignore[union-attr]

    def _seen(self) -> tuple[int, ...]:
        """What a step can change that the next step depends on: what the engine published,
        what the voice was asked (jobs, cues, phrases) and has scheduled or played, the LEDs."""
        if isinstance(self.voice, SpeechAnnouncer):
            last = self.voice.cues[-1].go_frame if self.voice.cues else 0
            voice = (self.voice._seq, last, self.sink.mixer.busy_until(),
                     len(self.sink.records))
        else:
            voice = (len(self.voice.said), self.voice.quiet_at() or 0)
        return (len(self.events), len(self.latch_up), *voice)

    def at(self, t_us: int) -> None:
        """Run the table up to `t_us`, stopping at every instant it would wake up at."""
        guard = 0
        wake = self.engine.command("wake")
        while True:
            if wake is None or wake > t_us:
                break
            self.clock.t = max(self.clock.t, wake)
            self.settle()
            guard += 1
            after = self.engine.command("wake")
            if after == wake:  # nothing came of it: move on a little
                self.clock.t += 1000
                after = self.engine.command("wake")
            wake = after
            assert guard < 20_000, "the table never settles"
        self.clock.t = max(self.clock.t, t_us)
        self.settle()

    def wait(self, ms: int) -> None:
        self.at(self.clock.t + ms * 1000)

    def until(self, pred: Any, limit_ms: int = 60_000, step_ms: int = 50) -> None:
        """Run until `pred(snapshot)` holds (checked at every wake-up and every `step_ms`)."""
        end = self.clock.t + limit_ms * 1000
        while not pred(self.engine.command("snapshot")):
            assert self.clock.t < end, (f"never got there: {self.engine.command('snapshot')['phase']}"
                                        f"; said {self.said()}")
            wake = self.engine.command("wake")
            nxt = self.clock.t + step_ms * 1000
            self.at(min(nxt, wake) if wake is not None and wake > self.clock.t else nxt)

    # -- the box ----------------------------------------------------------------------------

    def _ticks(self, t_us: int) -> float:
        box = self.table.box
        return float(box.ref_ticks + (t_us - box.ref_us) / 1e6)

    def press(self, seat: str, at_us: int | None = None, *, button: str = "slap",
              hold_ms: int = 40) -> None:
        t = self.clock.t if at_us is None else at_us
        self.at(t)
        pin = self.table.box._inputs[seat, button].pin
        pin.drive(False, self._ticks(t))
        if hold_ms >= 2000:  # hold it: the engine sees the hold at 2 s
            self.at(t + hold_ms * 1000)
        pin.drive(True, self._ticks(t + hold_ms * 1000))
        self.settle()

    def key(self, key: str) -> None:
        self.table.submit(JudgeKey(self.clock.t, key))
        self.settle()

    # -- what came out ----------------------------------------------------------------------

    def said(self) -> list[str]:
        """Every phrase and cadence the recording sink was given, in order."""
        return [r.label for r in self.sink.records]

    def log(self) -> list[str]:
        conn = connect(self.table.store.path, readonly=True)
        try:
            games = [r[0] for r in conn.execute("SELECT id FROM games ORDER BY id")]
            return [line for g in games for line in export_lines(conn, g)]
        finally:
            conn.close()

    def close(self) -> None:
        """As `Table.close`, with the simulated time run on until a race in play has closed (the
        table gives it seconds of wall time otherwise: time that never passes here)."""
        engine = self.table.engine
        if engine is not None and engine._thread is not None and engine._thread.is_alive():
            engine.auto = False  # no new round, as `finish` does
            try:
                self.until(lambda s: s["phase"] not in ("cadence", "race"), limit_ms=600_000)
            except (AssertionError, queue.Empty):
                pass  # the test has failed already; `Table.close` still cleans up
        self.table.close()


def extra_texts() -> Iterator[str]:
    from referee.voice.phrases import text

    for key in ("ready", "count_in", "paused", "quiet_table", "nothing_to_undo", "practice",
                "practice_over"):
        yield text(key, {})


@pytest.fixture
def sim_table(tmp_path: Path, mock_factory: MockFactory) -> Iterator[Any]:
    """`sim_table(seats, cache=None, **kw)` makes a `SimTable` on this test's MockFactory (`cache`:
    a speech cache for real speech, None for the print announcer); each is closed at the end."""
    made: list[SimTable] = []

    def make(seats: list[str], cache: Path | None = None, **kw: Any) -> SimTable:
        t = SimTable(tmp_path / f"table{len(made)}.db", mock_factory, seats, cache, **kw)
        made.append(t)
        return t

    try:
        yield make
    finally:
        for t in made:
            t.close()


# -- a threaded engine on the simulated clock -------------------------------------------------------


def settle(engine: Engine, clock: Callable[[], int], limit: int = 20) -> dict[str, Any]:
    """Have a threaded engine act at the simulated time until it has nothing more to do now; its
    state afterwards. One step makes at most one decision (a race's cue, then its close): the
    engine thread takes the next by itself only once its queue is empty, so a command sent at
    once could find the race still open."""
    for _ in range(limit):
        engine.command("step")
        wake = engine.command("wake")
        if wake is None or wake > clock():
            break
    return dict(engine.command("snapshot"))


# -- helpers -----------------------------------------------------------------------------------------


def end_window(engine: Engine, window_ms: int) -> None:
    """Move a live engine's clock past a race window, so a split round is decided now instead of
    racing the wall clock (tests give races long windows, so a loaded machine cannot close one
    before the test's presses land).

    The engine's time is the wall clock plus `offset_us` (what keeps a resumed game after its
    logged times); presses keep their edge times on it. The offset changes only between two
    commands, while the engine thread waits for the next item; the second command wakes it to
    find the window over."""
    engine.command("snapshot")  # every press sent so far is handled
    engine.offset_us += window_ms * 1000
    engine.command("snapshot")


def close_table(table: Table, window_ms: int) -> None:
    """Close a test's table without waiting out a long race window: `Table.close` gives an open
    race up to 5 s to be ruled (a clean stop), so a race the test left open is ended first."""
    engine = table.engine
    if engine is not None:
        engine.auto = False  # no new round from now on (as Table.close does first)
        # (the engine thread answers in order: a round it started before this is in the answer)
        if engine.command("snapshot")["phase"] in ("cadence", "race"):
            end_window(engine, window_ms)
    table.close()


def typed(game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Options written as `--option key=value` text ("72"), as the command line converts them:
    the harness's tables are set up in text; a log, the API and the rules take typed values
    (PRODUCT.md, "Table log")."""
    from referee.rules.declare import options_from_text
    from referee.rules.registry import rules_for

    return options_from_text(rules_for(game).known_options(), options, game)


def register_game(monkeypatch: Any, cls: type,
                  phrases: Mapping[str, list[str]] | None = None) -> None:
    """Register a game defined in the tests for this test only (as a package's entry point
    would for good), with its `phrases` added to the phrase table: the registry's direct
    registrations and the phrase table are restored afterwards."""
    from referee.rules import registry
    from referee.voice.phrases import ENGLISH

    monkeypatch.setattr(registry, "_direct", dict(registry._direct))
    registry.register(cls)
    for key, beats in (phrases or {}).items():
        monkeypatch.setitem(ENGLISH, key, beats)


def every_game() -> dict[str, type[Any]]:
    """What every cross-game test runs over: the registered games (the package's entry points and
    any registered directly) and the games made up in tests/made_up_game.py, by name. A new game
    joins by being registered."""
    from referee.rules.registry import games
    from tests.made_up_game import FirstAfterTheBeep, SnapGrab

    return dict(sorted({**games(), FirstAfterTheBeep.NAME: FirstAfterTheBeep,
                        SnapGrab.NAME: SnapGrab}.items()))


def made_up(game: str) -> bool:
    """A game defined in tests/ (it must be registered for the test that plays it)."""
    from referee.rules.registry import games

    return game not in games()
