"""Halli Galli as table-log scenarios: a log in, the replay's lines out (one test per rule sentence
of PRODUCT.md's "More slap games"), and its quiet-table threshold against simulated decks."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from referee.rules import odds
from referee.rules.halligalli import COUNTS, FRUITS, HalliGalli, quiet_chance, run_bound
from referee.store.tablelog import LogError, replay
from tests.test_games_quiet_odds import longest_quiet

TWO = ["Ann", "Bob"]
THREE = ["Ann", "Bob", "Cy"]
S = 1_000_000
TURN = 3 * S  # a flip every 3 s; the race window is 2.5 s


def game(seats: list[str] = THREE, **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": "halli-galli", "seats": seats, "options": options}


def flip(k: int, seat: str) -> dict[str, Any]:
    return {"type": "cue", "t_us": k * TURN, "seat": seat}


def turns(a: int, b: int, seats: list[str]) -> list[dict[str, Any]]:
    return [flip(k, seats[(k - 1) % len(seats)]) for k in range(a, b + 1)]


def ring(k: int, after_ms: int, *seats: str) -> list[dict[str, Any]]:
    """The seats ring in this order, 50 ms apart from `after_ms` after flip k."""
    return [{"type": "press", "t_us": k * TURN + (after_ms + 50 * i) * 1000, "seat": s}
            for i, s in enumerate(seats)]


def facts(round: int, **values: Any) -> dict[str, Any]:
    return {"type": "facts", "round": round, **values}


def run(*lines: dict[str, Any]) -> Any:
    return replay([json.dumps(x) for x in lines])


def rulings(r: Any, round: int | None = None) -> list[tuple[Any, ...]]:
    return [(o["round"], o["seat"], o["delta"], o["reason"]) for o in r.lines()
            if o["type"] == "ruling" and (round is None or o["round"] == round)]


def held(r: Any) -> dict[str, int]:
    return {row["seat"]: row["score"] for row in r.lines()[-1]["seats"]}


# -- the deal and the flips -----------------------------------------------------------------------


def test_56_cards_dealt_as_evenly_as_they_go_flips_onto_each_seats_own_face_up_pile() -> None:
    assert held(run(game(["A", "B", "C", "D", "E"]))) == {"A": 12, "B": 11, "C": 11, "D": 11,
                                                           "E": 11}
    r = run(game(), *turns(1, 4, THREE))
    assert r.rules.state.up == {"Ann": 2, "Bob": 1, "Cy": 1}
    assert r.rules.state.down == {"Ann": 17, "Bob": 18, "Cy": 17}
    assert held(r) == {"Ann": 19, "Bob": 19, "Cy": 18}  # face down and face up


# -- five of a fruit ------------------------------------------------------------------------------


def test_five_all_rang_the_first_ringer_takes_every_face_up_card() -> None:
    r = run(game(), *turns(1, 4, THREE), *ring(4, 200, "Bob", "Cy", "Ann"))
    assert rulings(r) == [(4, "Bob", 3, "first to ring on five")]  # Ann's two, Cy's one
    assert r.lines()[0]["margin_us"] == 50_000
    assert r.rules.state.up == {"Ann": 0, "Bob": 0, "Cy": 0}
    assert held(r) == {"Ann": 17, "Bob": 22, "Cy": 17}


def test_none_rang_not_five_some_rang_the_judge_is_asked_five_or_not_five() -> None:
    assert rulings(run(game(), *turns(1, 3, THREE))) == []
    r = run(game(), *turns(1, 3, THREE), *ring(3, 200, "Cy", "Ann"))
    assert r.lines()[0] == {"type": "awaiting", "round": 3, "need": ["five"]}
    assert HalliGalli.FACTS[0].ask == "Five or not five?"
    r = run(game(), *turns(1, 3, THREE), *ring(3, 200, "Cy", "Ann"), facts(3, five=True))
    assert rulings(r) == [(3, "Cy", 2, "first to ring on five")]
    with pytest.raises(LogError, match="five must be true or false"):
        run(game(), flip(1, "Ann"), facts(1, five=5))


def test_too_close_between_the_first_two_ringers_the_cards_stay() -> None:
    r = run(game(), *turns(1, 3, THREE), *ring(3, 200, "Ann"), *ring(3, 200, "Bob"),
            *ring(3, 400, "Cy"))
    assert rulings(r) == [(3, None, 0, "too close to call")]
    assert r.rules.state.up == {"Ann": 1, "Bob": 1, "Cy": 1}


# -- a wrong ring ---------------------------------------------------------------------------------


def test_a_wrong_ring_the_first_ringer_gives_one_card_to_each_other_seat() -> None:
    r = run(game(), *turns(1, 2, THREE), *ring(2, 200, "Cy", "Ann"), facts(2, five=False))
    assert rulings(r) == [(2, "Cy", -2, "rang with no five"),  # only the first pays
                          (2, "Ann", 1, "given a card for a wrong ring"),
                          (2, "Bob", 1, "given a card for a wrong ring")]
    assert held(r) == {"Ann": 20, "Bob": 20, "Cy": 16}


def test_a_wrong_ringer_pays_as_many_as_it_has_from_its_face_down_cards() -> None:
    # Cy flips all 18 of its cards; then it rings wrongly on Ann's flip: nothing to pay
    r = run(game(), *turns(1, 55, THREE), *ring(55, 200, "Cy"), facts(55, five=False))
    assert r.rules.state.down["Cy"] == 0 and r.rules.state.up["Cy"] == 18
    assert rulings(r) == [(55, "Cy", 0, "rang with no five and no card to pay")]


# -- seats out and the end ------------------------------------------------------------------------


def cy_runs_out() -> list[dict[str, Any]]:
    """Ann takes at flip 3; Cy flips its 18th card at 54; Bob his last at 56: Cy's turn comes
    next with no cards (out), then Ann's (she has three)."""
    return [game(), *turns(1, 56, THREE), *ring(3, 100, "Ann", "Bob", "Cy")]


def test_a_seat_is_out_when_its_turn_comes_with_no_face_down_cards() -> None:
    r = run(*cy_runs_out()[:-3], *ring(3, 100, "Ann", "Bob", "Cy"))  # to flip 56
    state = r.rules.state
    assert state.down == {"Ann": 3, "Bob": 0, "Cy": 0}
    assert state.out == {"Cy"}  # Bob's turn has not come yet: Bob is still in
    assert [row["out"] for row in r.lines()[-1]["seats"] if row["seat"] == "Cy"] == [True]
    assert held(r)["Cy"] == 17  # its face-up cards stay until taken
    assert r.rules.next_call().seat == "Ann"  # skipped in the calls


def test_an_out_seats_presses_are_ignored_and_its_face_up_cards_go_with_the_next_take() -> None:
    r = run(*cy_runs_out(), flip(57, "Ann"), *ring(57, 100, "Cy"))
    assert rulings(r, 57) == []  # Cy is out: its ring is nobody's
    r = run(*cy_runs_out(), flip(57, "Ann"), *ring(57, 100, "Cy", "Bob", "Ann"))
    assert rulings(r, 57) == [(57, "Bob", 19 + 17, "first to ring on five")]  # Ann's, Cy's


def test_the_game_ends_when_one_seat_is_left_and_it_wins() -> None:
    r = run(*cy_runs_out(), flip(57, "Ann"), flip(58, "Ann"))
    final = r.lines()[-1]
    assert r.rules.state.out == {"Bob", "Cy"}  # Bob's turn came after flip 57
    assert final["final"] is True and final["winners"] == ["Ann"]
    assert final["seats"][0]["seat"] == "Ann" and final["seats"][0]["place"] == 1
    assert r.rules.round_count() == 57  # the cue after the end is ignored


def test_a_wrong_ringer_pays_only_the_seats_still_in() -> None:
    r = run(*cy_runs_out(), flip(57, "Ann"), *ring(57, 100, "Ann"), facts(57, five=False))
    assert rulings(r, 57) == [(57, "Ann", -1, "rang with no five"),
                              (57, "Bob", 1, "given a card for a wrong ring")]  # not Cy: out


# -- the quiet table ------------------------------------------------------------------------------


def honest_game(rng: random.Random, seats: int, cap: int = 3000) -> list[bool]:
    """One honest game played out: True for a flip nobody rings on (no fruit shows exactly five);
    on five a random seat still in rings first and takes every face-up card."""
    deck = [(f, n) for f in range(FRUITS) for n, cards in COUNTS.items() for _ in range(cards)]
    rng.shuffle(deck)
    down = [deck[i::seats] for i in range(seats)]
    up: list[list[tuple[int, int]]] = [[] for _ in range(seats)]
    out = [False] * seats
    quiet: list[bool] = []
    turn = -1
    while len(quiet) < cap and out.count(False) > 1:
        for k in range(1, seats + 1):
            s = (turn + k) % seats
            if not out[s] and down[s]:
                break
            out[s] = True
        else:
            break
        if out.count(False) <= 1:
            break
        turn = s
        up[s].append(down[s].pop(0))
        sums = [0] * FRUITS
        for pile in up:
            if pile:
                sums[pile[-1][0]] += pile[-1][1]
        quiet.append(5 not in sums)
        if 5 in sums:
            taker = rng.choice([i for i in range(seats) if not out[i]])
            for pile in up:
                down[taker] += pile
                pile.clear()
    return quiet


@pytest.mark.parametrize("seats", [2, 4, 6])
def test_an_honest_halli_galli_table_almost_never_reaches_its_quiet_threshold(seats: int) -> None:
    threshold = HalliGalli([f"S{i}" for i in range(seats)]).schedule().quiet_rounds
    assert threshold is not None
    rng = random.Random(seats)
    games = [longest_quiet(honest_game(rng, seats)) for _ in range(300)]
    assert sum(g >= threshold for g in games) / len(games) < odds.MISS
    # the bound is a bound: an honest game reaches a shorter run at most as often as it says
    k = sorted(games)[len(games) // 2]
    assert sum(g >= k for g in games) / len(games) <= run_bound(seats, k)


def test_the_chance_of_no_five_on_the_top_cards_against_dealt_cards() -> None:
    deck = [(f, n) for f in range(FRUITS) for n, cards in COUNTS.items() for _ in range(cards)]
    assert len(deck) == 56 and sum(1 for c in deck if c[1] == 5) == 4
    rng = random.Random(5)
    for seats in (2, 4, 6):
        quiet = 0
        for _ in range(6000):
            sums = [0] * FRUITS
            for f, n in rng.choices(deck, k=seats):
                sums[f] += n
            quiet += 5 not in sums
        assert abs(quiet / 6000 - quiet_chance(seats)) < 0.02
