"""A live table on a simulated clock: the real Table, engine, button box (gpiozero MockFactory
pins driven with chosen edge ticks), SQLite file and speech (espeak-ng clips played by the
recording sink), with time moved by the test instead of the wall clock.

The engine runs on its own thread as in `referee play`; the test sets the simulated time, plays
the recording sink up to it, and has the engine step (a command: it runs on the engine thread),
waiting for any speech still being rendered, so the same script always gives the same table.

`SimTable(..., cache=None, out=stream)` is the same table with the voice-less print announcer on
the simulated clock (phrases printed to `out`): for the rhythm's tests, which are about when the
table calls, waits and pauses, not about how it sounds.
"""

from __future__ import annotations

import io
import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpiozero.pins.mock import MockFactory

from referee.cli.table import Table
from referee.config import default_config
from referee.engine.loop import Engine
from referee.events import JudgeKey
from referee.store.database import connect, export_lines
from referee.voice.announce import PrintAnnouncer
from referee.voice.audio import RecordingSink
from referee.voice.speech import SpeechAnnouncer, startup_texts
from referee.voice.tts import Renderer, SpeechOptions
from tests.support import typed

START_US = 5_000_000


class SimClock:
    def __init__(self, t_us: int = START_US) -> None:
        self.t = t_us

    def __call__(self) -> int:
        return self.t


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
