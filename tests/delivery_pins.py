"""A gpiozero pin factory that hands edges over the way lgpio does, for tests without a Pi.

What it models (lg's lgPthAlerts.c and the lgpio Python module, read with the search tool):
* every edge carries its true timestamp (the kernel's), taken when the level changed;
* one alert thread wakes every 0.5 ms (its ppoll timeout) and hands over, in one batch, the edges
  that are old enough (lg emits an edge once it is at least 0.5 ms old); with the notification
  pipe and the GIL on the Python side, an edge reaches the callback 0.5 to 2 ms after its
  timestamp (the issue's figure: wider than the library's own 0.5-1 ms, on purpose);
* within one line edges keep their order; across lines a batch comes in no particular order (lg
  calls each line's alert function in the order of its line list, not by time; the notification
  pipe is sorted, but the test takes the harder case).
Lateness and batch order come from a seeded random generator, so a failing game can be replayed.

The factory runs on a clock it is given (µs), so a test moves time itself: `poll(now_us)` is one
turn of the alert thread. It is named like gpiozero's real class, as tests/pinfactories.py's
doubles are, because the referee knows a factory's timing by its class name. (tests/pinfactories.py
models lgpio's own 0.5-1 ms, in time order; this one is the harsher model issue 12 asks for.)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPin
from gpiozero.pins.pi import PiPin

POLL_US = 500  # lg's alert thread: ppoll timeout 0.5 ms


@dataclass(order=True)
class _Edge:
    due_us: int
    seq: int
    ticks: float = field(compare=False)
    state: bool = field(compare=False)
    pin: LatePin = field(compare=False)


class LatePin(MockPin):
    """A mock input whose edges are stamped on the factory's clock and delivered by the factory."""

    _factory: LGPIOFactory

    def _change_state(self, value: Any) -> bool:
        if self._state == value:
            return False
        self._state = value
        self._last_change = self._factory.ticks()
        return True

    def _call_when_changed(self) -> None:  # type: ignore[override]
        self._factory.queue_edge(self, self._last_change, bool(self._state))


class LGPIOFactory(MockFactory):  # type: ignore[misc]
    """MockFactory whose edges arrive late, in batches, out of order across pins (see above)."""

    def __init__(self, clock: Callable[[], int], *, seed: int = 0,
                 late_us: tuple[int, int] = (500, 2000)) -> None:
        self.clock = clock
        self.rng = random.Random(seed)
        self.late_us = late_us
        self.pending: list[_Edge] = []
        self.delivered: list[tuple[int, int]] = []  # (edge µs, delivered µs): the lateness seen
        self._seq = 0
        self._last_due: dict[int, int] = {}
        super().__init__(pin_class=LatePin)

    def ticks(self) -> float:
        return self.clock() / 1_000_000

    @staticmethod
    def ticks_diff(later: float, earlier: float) -> float:
        return later - earlier

    def queue_edge(self, pin: LatePin, ticks: float, state: bool) -> None:
        t_us = round(ticks * 1_000_000)
        due = t_us + self.rng.randint(*self.late_us)
        due = max(due, self._last_due.get(id(pin), 0))  # one line's edges keep their order
        self._last_due[id(pin)] = due
        self._seq += 1
        self.pending.append(_Edge(due, self._seq, ticks, state, pin))

    def next_poll_us(self) -> int | None:
        """When the alert thread next has something to hand over (on its 0.5 ms grid)."""
        if not self.pending:
            return None
        due = min(e.due_us for e in self.pending)
        return -(-due // POLL_US) * POLL_US

    def poll(self, now_us: int) -> int:
        """One turn of the alert thread: hand over every edge due by now, in one batch."""
        ready = [e for e in self.pending if e.due_us <= now_us]
        if not ready:
            return 0
        self.pending = [e for e in self.pending if e.due_us > now_us]
        lines: dict[int, list[_Edge]] = {}
        for edge in sorted(ready):
            lines.setdefault(id(edge.pin), []).append(edge)
        batch = list(lines.values())
        self.rng.shuffle(batch)  # lines in no particular order
        for line in batch:
            for edge in line:
                self.delivered.append((round(edge.ticks * 1_000_000), now_us))
                if edge.pin._when_changed is not None:
                    PiPin._call_when_changed(edge.pin, edge.ticks, edge.state)
        return len(ready)
