"""The one clock: integer microseconds since an arbitrary epoch, monotonic, shared by every event."""

from __future__ import annotations

import time


def now_us() -> int:
    """Microseconds on the engine's monotonic clock (CLOCK_MONOTONIC, like lgpio's edge stamps)."""
    return time.monotonic_ns() // 1000
