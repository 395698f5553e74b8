"""Who was last, who was first: the race arithmetic every game shares.

A race is a set of first presses (seat → edge time). Seats that never pressed before the window
closed are later than everyone who did, and tie with each other. A margin under `tie_us` is too
close to call: nobody is named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    """`seat` is who the race names (None: nobody — too close to call); `margin_us` how clearly."""

    seat: str | None
    margin_us: int | None
    too_close: bool = False


def last(
    presses: Mapping[str, int], seats: Iterable[str], close_us: int, tie_us: int
) -> Outcome:
    """The last of `seats` to press (a seat that never pressed is later than all who did)."""
    seats = tuple(seats)
    missing = [s for s in seats if s not in presses]
    times = sorted((presses[s], s) for s in seats if s in presses)
    if len(missing) >= 2:
        return Outcome(None, 0, too_close=True)
    if len(missing) == 1:
        latest = times[-1][0] if times else None
        margin = None if latest is None else max(close_us - latest, 0)
        return Outcome(missing[0], margin)
    if not times:
        return Outcome(None, None)
    if len(times) == 1:
        return Outcome(times[0][1], None)
    margin = times[-1][0] - times[-2][0]
    if margin < tie_us:
        return Outcome(None, margin, too_close=True)
    return Outcome(times[-1][1], margin)


def first(times: Iterable[tuple[int, str]], tie_us: int) -> Outcome:
    """The first of the (time, seat) presses; uncontested when only one seat pressed."""
    ordered = sorted(times)
    if not ordered:
        return Outcome(None, None)
    if len(ordered) == 1:
        return Outcome(ordered[0][1], None)
    margin = ordered[1][0] - ordered[0][0]
    if margin < tie_us:
        return Outcome(None, margin, too_close=True)
    return Outcome(ordered[0][1], margin)


def first_n(times: Iterable[tuple[int, str]], n: int, tie_us: int) -> tuple[list[str], int | None]:
    """The first `n` distinct pressers; a photo finish at the n-th place leaves that place empty.

    Returns the seats named and the margin at the boundary (None when fewer than n+1 pressed).
    """
    ordered = sorted(times)
    named = [seat for _, seat in ordered[:n]]
    if len(ordered) <= n:
        return named, None
    margin = ordered[n][0] - ordered[n - 1][0]
    if margin < tie_us:
        # the n-th and (n+1)-th cannot be told apart: the boundary place goes to neither
        cut = ordered[n - 1][0]
        named = [seat for t, seat in ordered[:n] if cut - t >= tie_us]
    return named, margin
