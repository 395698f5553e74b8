"""The (ticks, engine clock) reference pair is read as one instant.

Every edge's stamp on the engine clock is its tick moved by the pair's offset. A thread preempted
between reading the tick and reading the clock would take a pair that is off by as long as it
waited, and every press after it would be stamped that much late against the cues: an on-time
slap after "PIG!" read as slower, a photo finish against a seat pressed elsewhere misjudged.
"""

from __future__ import annotations

from typing import Any

import pytest

from referee.capture.gpio import ButtonBox
from referee.config import default_config
from referee.events import Press
from tests.harness import SimClock
from tests.pinfactories import LGPIOFactory as SimLGPIOFactory
from tests.pinfactories import pi_clock

BLUE = 4  # Blue's slap (BCM) in the default wiring


class LGPIOFactory(SimLGPIOFactory):  # (the box knows a factory by its class name)
    """lgpio-like pins whose first `preempted` tick reads are each followed by the thread
    losing the CPU for `lost_us` before it runs again (on a busy Pi: milliseconds)."""

    def __init__(self, clock: SimClock, preempted: int, lost_us: int) -> None:
        super().__init__(clock)
        self.preempted, self.lost_us = preempted, lost_us

    def ticks(self) -> Any:
        ticks = super().ticks()
        if self.preempted > 0:
            self.preempted -= 1
            self.clock.advance_to(self.clock.now() + self.lost_us)
        return ticks


@pytest.mark.parametrize("preempted", [0, 1, 3])
def test_a_press_is_stamped_at_its_edge_even_when_the_box_was_preempted_at_start(
        preempted: int) -> None:
    clock = pi_clock()
    factory = LGPIOFactory(clock, preempted=preempted, lost_us=5_000)
    got: list[object] = []
    box = ButtonBox(default_config(["Blue", "Red"]), got.append, factory=factory,
                    clock=clock.now, confirmer=False)
    try:
        edge = clock.now() + 250_000
        factory.press(BLUE, edge)
        factory.run_until(edge + 200_000, box.poll)
        presses = [e for e in got if isinstance(e, Press)]
        assert [(p.seat, p.t_us) for p in presses] == [("Blue", edge)]  # to the microsecond
    finally:
        box.close()
