"""An engine on a simulated clock: a whole game plays in milliseconds, and nothing races the wall.

`Sim` is the real `Engine` (its real rules, a real SQLite log, the print announcer) fed by a real
`ButtonBox` on gpiozero's MockFactory with `TickPin`s, so every press goes through the capture
code with an edge time the test picks. The engine thread is not started: the test moves time and
`Sim` does what the thread does (`Engine.open`, then `Engine.run_items` at each wake-up: at
`Engine.next_wake`, or every `step_ms` as the loop wakes at least every half second).

Times are milliseconds after the box's reference instant (`Sim.ms`), like tests/test_capture_gpio.py.
The `sim` fixture (tests/conftest.py) makes them and closes them.
"""

from __future__ import annotations

import io
import logging
import queue
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpiozero.pins.mock import MockFactory

from referee.capture.gpio import ButtonBox
from referee.config import default_config
from referee.engine.commands import Request, parse
from referee.engine.loop import Engine, open_game
from referee.events import GameStart
from referee.store.database import Store, connect, events, export_lines
from referee.store.tablelog import replay
from referee.voice.announce import PrintAnnouncer
from tests.conftest import TickPin
from tests.support import typed

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
