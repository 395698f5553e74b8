"""The quiet-table threshold of every game against simulated decks: a table playing honestly
(pressing exactly when its cards give it a reason) reaches it in fewer than 1 game in 100
(before: Spank the Pig! paused after 6 quiet rounds and Pig's Tail after 3 flips, which a
playing table reached every few games)."""

from __future__ import annotations

import random

import pytest

from referee.rules import odds
from referee.rules.pigstail import PigsTail, quiet_chance
from referee.rules.spank import SpankThePig
from tests.harness import examples

GAMES = examples(3000, least=300)  # simulated games per table (seeded: the same every run)
SEATS = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus"]


def longest_quiet(quiet: list[bool]) -> int:
    best = run = 0
    for q in quiet:
        run = run + 1 if q else 0
        best = max(best, run)
    return best


def reached(threshold: int, games: list[list[bool]]) -> float:
    return sum(longest_quiet(g) >= threshold for g in games) / len(games)


@pytest.mark.parametrize("deck", [72, 36, 144])
@pytest.mark.parametrize("seats", range(2, 8))
def test_an_honest_spank_table_almost_never_reaches_its_quiet_threshold(
        seats: int, deck: int) -> None:
    rules = SpankThePig(SEATS[:seats], {"deck": deck, "doubles": "off"})
    threshold = rules.schedule().quiet_rounds
    assert threshold is not None
    rng = random.Random(seats * 1000 + deck)
    cards = [True] * (deck // 6) + [False] * (deck - deck // 6)  # True: a pig
    games = []
    for _ in range(GAMES):
        rng.shuffle(cards)
        rounds = deck // seats
        games.append([not any(cards[r * seats:(r + 1) * seats]) for r in range(rounds)])
    assert reached(threshold, games) < odds.MISS
    if seats <= 3 and deck == 72:  # the old fixed threshold: most games paused themselves
        assert reached(6, games) > 0.2


def pigs_tail_game(rng: random.Random) -> list[bool]:
    """One shuffled ring flipped onto the pile: True for a flip nobody presses (no match)."""
    ring = [(suit, rank) for suit in range(4) for rank in range(13)]
    rng.shuffle(ring)
    below = None
    quiet = []
    for card in ring:
        match = below is not None and (card[0] == below[0] or card[1] == below[1])
        quiet.append(not match)
        below = None if match else card  # a match is taken: the pile starts again
    return quiet


def test_an_honest_pigs_tail_table_almost_never_reaches_its_quiet_threshold() -> None:
    rules = PigsTail(["Ann", "Bob"])
    threshold = rules.schedule().quiet_rounds
    assert threshold is not None
    rng = random.Random(52)
    games = [pigs_tail_game(rng) for _ in range(GAMES)]
    assert reached(threshold, games) < odds.MISS
    assert reached(3, games) > 0.99  # the old threshold: nearly every game paused itself
    # the chain's figure agrees with the simulated decks
    assert abs(quiet_chance(threshold - 4) - reached(threshold - 4, games)) < 0.02


def test_the_run_arithmetic_against_counting() -> None:
    """run_chance by enumeration of every quiet/loud sequence of a few rounds."""
    from itertools import product

    quiet, rounds = 0.6, 8
    for k in range(1, 6):
        exact = sum(quiet ** sum(seq) * (1 - quiet) ** (rounds - sum(seq))
                    for seq in product((0, 1), repeat=rounds)
                    if longest_quiet([bool(x) for x in seq]) >= k)
        assert abs(odds.run_chance(quiet, rounds, k) - exact) < 1e-12
