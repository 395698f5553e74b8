"""The odds of a quiet run: how many rounds in a row without a press a table playing honestly
can go through, so a game can set its quiet-table threshold (PRODUCT.md, "The table's rhythm":
a playing table reaches it less than once in `MISS` games).

A game says how likely a round is to be quiet (nobody has a reason to press) and how many rounds
a game has; `quiet_threshold` finds the smallest run length a game reaches with less than `MISS`
chance. Rounds are taken as independent with that chance, which a game's module may refine with
its own chain (Pig's Tail: a card after a take cannot match), and which a test over simulated
decks checks for every game (tests/test_games_quiet_odds.py).
"""

from __future__ import annotations

from functools import cache
from math import comb

MISS = 0.01  # a playing table pauses itself in fewer than one game in a hundred
FEWEST = 3  # a threshold below this would pause on a table that merely missed a round or two


def run_chance(quiet: float, rounds: int, k: int) -> float:
    """The chance that `rounds` independent rounds, each quiet with chance `quiet`, hold a run of
    at least `k` quiet rounds in a row.

    In linear time: a first run of k ends at round n when rounds n-k+1..n are quiet, round n-k is
    not, and the first n-k-1 rounds hold no run. (The step-by-step chain over run lengths took
    rounds × k steps per k tried: 10 s of CPU to start a game with the largest deck.)"""
    if k <= 0:
        return 1.0
    if rounds < k:
        return 0.0
    first_at = (1 - quiet) * quiet ** k
    none = [1.0] * k + [1.0 - quiet ** k]  # none[n]: no run of k in the first n rounds
    for n in range(k + 1, rounds + 1):
        none.append(none[n - 1] - first_at * none[n - k - 1])
    return 1.0 - none[rounds]


@cache  # a game's schedule is read at every engine step; the answer never changes
def quiet_threshold(quiet: float, rounds: int, miss: float = MISS) -> int:
    """The smallest run of quiet rounds that a game of `rounds` rounds, each quiet with chance
    `quiet`, reaches with a chance under `miss` (at least `FEWEST`)."""
    k = FEWEST
    while k <= rounds and run_chance(quiet, rounds, k) >= miss:
        k += 1
    return k


def none_of(kind: int, total: int, drawn: int) -> float:
    """The chance that `drawn` cards from a deck of `total` holding `kind` cards of one kind hold
    none of them (hypergeometric)."""
    if drawn > total - kind:
        return 0.0
    return comb(total - kind, drawn) / comb(total, drawn)
