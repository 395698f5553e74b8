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
    at least `k` quiet rounds in a row."""
    if k <= 0:
        return 1.0
    # at[j]: the chance of no run of k so far, ending with exactly j quiet rounds in a row
    at = [1.0] + [0.0] * (k - 1)
    reached = 0.0
    for _ in range(rounds):
        alive = sum(at)
        nxt = [alive * (1 - quiet)] + [at[j - 1] * quiet for j in range(1, k)]
        reached += at[k - 1] * quiet
        at = nxt
    return reached


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
