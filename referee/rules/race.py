"""Who was last, who was first: the race arithmetic every game shares.

A race is a set of first presses, one per seat (seat → edge time): margins are always between
different seats, each by its first counting press (`firsts` collapses a seat's later presses).
Seats that never pressed before the window closed are later than everyone who did: one such seat
is the last, with no margin (margins are only ever between seats that pressed); two or more are
the race's stragglers, and the game says what they take (never "too close to call"). A margin
under `tie_us` is too close to call: nobody is named. Identical edge times (a margin of 0 µs) are
too close to call whatever `tie_us` is, so the smallest clear margin is `clear_us(tie_us)` =
max(tie_us, 1).

Clear membership (PRODUCT.md): seat s is among the first p when at most p − 1 other seats pressed
before it or less than `tie_us` after it; it is out when at least p other seats pressed at least
`tie_us` before it; otherwise it is too close to call and nothing happens to it. The last presser
is the same rule from the other end (p = seats − 1).
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
    stragglers: tuple[str, ...] = ()  # two or more seats that never pressed (`last`)


@dataclass(frozen=True)
class Group:
    """The first `p` of a race: who is clearly in (with the margin that makes it clear, None when
    fewer than p others pressed at all), and who is too close to call."""

    named: tuple[tuple[str, int | None], ...]  # in press order
    unclear: tuple[str, ...]
    margin_us: int | None  # the gap at the p-th place (under the threshold when any is unclear)


def clear_us(tie_us: int) -> int:
    """The smallest margin that is not too close to call."""
    return max(tie_us, 1)


def firsts(presses: Iterable[tuple[int, str]]) -> dict[str, int]:
    """Each seat's first press among (time, seat) presses."""
    out: dict[str, int] = {}
    for t, seat in presses:
        if seat not in out or t < out[seat]:
            out[seat] = t
    return out


def _ordered(presses: Mapping[str, int]) -> list[tuple[int, str]]:
    """By time; at one instant in the mapping's own order (the rules give seat order), so that
    no result ever depends on how the seats are named."""
    return [(t, s) for s, t in sorted(presses.items(), key=lambda kv: kv[1])]


def last(presses: Mapping[str, int], seats: Iterable[str], tie_us: int) -> Outcome:
    """The last of `seats` to press. A seat that never pressed is later than all who did: the
    last, with no margin to tell; two or more that never pressed are `stragglers` (nobody named:
    the game decides what each takes)."""
    seats = tuple(seats)
    missing = [s for s in seats if s not in presses]
    times = _ordered({s: presses[s] for s in seats if s in presses})
    if len(missing) >= 2:
        return Outcome(None, None, stragglers=tuple(missing))
    if len(missing) == 1:
        return Outcome(missing[0], None)
    if not times:
        return Outcome(None, None)
    if len(times) == 1:
        return Outcome(times[0][1], None)
    margin = times[-1][0] - times[-2][0]
    if margin < clear_us(tie_us):
        return Outcome(None, margin, too_close=True)
    return Outcome(times[-1][1], margin)


def first(presses: Mapping[str, int] | Iterable[tuple[int, str]], tie_us: int) -> Outcome:
    """The first presser; uncontested (margin None) when only one seat pressed. Given (time,
    seat) presses rather than each seat's first, each seat counts by its first."""
    ordered = _ordered(presses if isinstance(presses, Mapping) else firsts(presses))
    if not ordered:
        return Outcome(None, None)
    if len(ordered) == 1:
        return Outcome(ordered[0][1], None)
    margin = ordered[1][0] - ordered[0][0]
    if margin < clear_us(tie_us):
        return Outcome(None, margin, too_close=True)
    return Outcome(ordered[0][1], margin)


def group(presses: Mapping[str, int], p: int, tie_us: int) -> Group:
    """The first `p` distinct pressers by clear membership (see the module docstring)."""
    clear = clear_us(tie_us)
    ordered = _ordered(presses)
    named: list[tuple[str, int | None]] = []
    unclear: list[str] = []
    for t, seat in ordered:
        others = [u for u, s in ordered if s != seat]
        ahead = sum(1 for u in others if u < t + clear)  # before it or less than tie_us after
        if ahead <= p - 1:
            # clear by the gap to the p-th other seat: the first one that could have pushed it out
            named.append((seat, others[p - 1] - t if len(others) >= p else None))
        elif sum(1 for u in others if t - u >= clear) < p:
            unclear.append(seat)
    boundary = ordered[p][0] - ordered[p - 1][0] if len(ordered) > p else None
    return Group(tuple(named), tuple(unclear), boundary)
