"""Slapjack as table-log scenarios: a log in, the replay's lines out (one test per rule sentence of
PRODUCT.md's "More slap games"), and its quiet-table threshold against simulated decks."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from referee.rules import odds
from referee.rules.slapjack import Slapjack, pass_chance, quiet_flips
from referee.store.tablelog import LogError, replay
from tests.test_quiet_odds import longest_quiet as longest

TWO = ["Ann", "Bob"]
THREE = ["Ann", "Bob", "Cy"]
S = 1_000_000
TURN = 3 * S  # a flip every 3 s; the race window is 2 s


def game(seats: list[str] = THREE, **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": "slapjack", "seats": seats, "options": options}


def flip(k: int, seat: str) -> dict[str, Any]:
    return {"type": "cue", "t_us": k * TURN, "seat": seat}


def turns(a: int, b: int, seats: list[str]) -> list[dict[str, Any]]:
    """Flips a..b by the seats in turn (flip k by seat (k − 1) mod n)."""
    return [flip(k, seats[(k - 1) % len(seats)]) for k in range(a, b + 1)]


def slap(k: int, after_ms: int, seat: str) -> dict[str, Any]:
    return {"type": "press", "t_us": k * TURN + after_ms * 1000, "seat": seat}


def facts(round: int, **values: Any) -> dict[str, Any]:
    return {"type": "facts", "round": round, **values}


def run(*lines: dict[str, Any]) -> Any:
    return replay([json.dumps(x) for x in lines])


def rulings(r: Any, round: int | None = None) -> list[tuple[Any, ...]]:
    return [(o["round"], o["seat"], o["delta"], o["reason"]) for o in r.lines()
            if o["type"] == "ruling" and (round is None or o["round"] == round)]


def held(r: Any) -> dict[str, int]:
    return {row["seat"]: row["score"] for row in r.lines()[-1]["seats"]}


def outs(r: Any) -> set[str]:
    return {row["seat"] for row in r.lines()[-1]["seats"] if row["out"]}


# -- the deal and the turns -----------------------------------------------------------------------


def test_the_deal_is_as_even_as_it_goes_and_the_score_is_the_cards_held() -> None:
    r = run(game())
    assert held(r) == {"Ann": 18, "Bob": 17, "Cy": 17}
    r = run(game(["A", "B", "C", "D", "E"]), flip(1, "A"))
    assert held(r) == {"A": 10, "B": 11, "C": 10, "D": 10, "E": 10}  # A flipped one: the pile


def test_turns_go_round_in_seat_order_skipping_seats_with_no_cards_a_take_keeps_the_order(
) -> None:
    r = run(game(TWO), *turns(1, 3, TWO), slap(3, 100, "Bob"), slap(3, 200, "Ann")).rules
    assert r.next_call().seat == "Bob"  # Bob took flip 3 (Ann's): the order goes on after Ann
    r = run(game(TWO), *turns(1, 51, TWO)).rules  # Ann flipped all 26, Bob 25
    assert r.state.down == {"Ann": 0, "Bob": 1}
    assert r.next_call().seat == "Bob"
    r = run(game(TWO), *turns(1, 51, TWO), flip(52, "Bob")).rules
    assert r.next_call() is None and r.over  # nobody has a card to flip


def test_a_cue_names_the_flipper() -> None:
    with pytest.raises(LogError, match="names the flipper"):
        run(game(), {"type": "cue", "t_us": S})


# -- a Jack ---------------------------------------------------------------------------------------


def test_a_jack_all_slapped_the_first_slapper_takes_the_whole_pile() -> None:
    r = run(game(), *turns(1, 4, THREE), slap(4, 300, "Cy"), slap(4, 250, "Bob"),
            slap(4, 200, "Ann"))
    assert rulings(r) == [(4, "Ann", 4, "first to slap the jack")]
    assert held(r) == {"Ann": 16 + 4, "Bob": 16, "Cy": 16}
    assert r.lines()[0]["margin_us"] == 50_000
    assert r.rules.state.pile == 0


def test_nobody_slapped_no_jack_some_slapped_the_judge_is_asked() -> None:
    r = run(game(), *turns(1, 2, THREE), slap(2, 300, "Cy"), slap(2, 250, "Bob"))
    assert r.lines()[0] == {"type": "awaiting", "round": 2, "need": ["jack"]}
    assert rulings(r) == [] and r.lines()[-1]["final"] is False
    r = run(game(), *turns(1, 2, THREE), slap(2, 300, "Cy"), slap(2, 250, "Bob"),
            facts(2, jack=True))
    assert rulings(r) == [(2, "Bob", 2, "first to slap the jack")]


def test_judge_question_is_jack_or_no_jack() -> None:
    (fact,) = Slapjack.FACTS
    assert (fact.name, fact.kind, fact.ask) == ("jack", "flag", "Jack or no jack?")
    with pytest.raises(LogError, match="jack must be true or false"):
        run(game(), flip(1, "Ann"), facts(1, jack="yes"))


def test_too_close_on_a_jack_the_pile_stays_for_the_next_jack() -> None:
    r = run(game(), *turns(1, 5, THREE), slap(2, 300, "Ann"), slap(2, 300, "Bob"),
            slap(2, 500, "Cy"), slap(5, 100, "Cy"), slap(5, 200, "Ann"), slap(5, 300, "Bob"))
    assert rulings(r) == [(2, None, 0, "too close to call"), (5, "Cy", 5, "first to slap the jack")]


# -- a wrong slap ---------------------------------------------------------------------------------


def test_a_wrong_slap_gives_one_card_to_the_flipper_two_rulings() -> None:
    r = run(game(), *turns(1, 2, THREE), slap(2, 300, "Cy"), slap(2, 400, "Ann"),
            facts(2, jack=False))
    assert rulings(r) == [(2, "Cy", -1, "slapped no jack"),
                          (2, "Bob", 1, "given a card for a wrong slap")]
    assert held(r) == {"Ann": 17, "Bob": 17, "Cy": 16}  # Bob flipped one and got one


def test_a_flipper_that_is_the_first_wrong_slapper_gives_nothing() -> None:
    r = run(game(), *turns(1, 2, THREE), slap(2, 300, "Bob"), slap(2, 400, "Cy"),
            facts(2, jack=False))
    assert rulings(r) == [(2, "Bob", 0, "slapped no jack on its own card")]
    assert held(r) == {"Ann": 17, "Bob": 16, "Cy": 17}


def test_two_wrong_slappers_too_close_to_call_nobody_gives() -> None:
    r = run(game(), *turns(1, 2, THREE), slap(2, 300, "Ann"), slap(2, 300, "Cy"),
            facts(2, jack=False))
    assert rulings(r) == [(2, None, 0, "too close to call")]
    assert held(r) == {"Ann": 17, "Bob": 16, "Cy": 17}


def test_a_wrong_slapper_with_no_cards_gives_nothing() -> None:
    lines = [game(TWO), *turns(1, 52, TWO), slap(52, 300, "Ann"), facts(52, jack=False)]
    r = run(*lines)  # Ann flipped her last card at 51: she has none to give
    assert rulings(r) == [(52, "Ann", 0, "slapped no jack with no card to give")]
    assert held(r) == {"Ann": 0, "Bob": 0}


# -- seats with no cards --------------------------------------------------------------------------


def two_down_to_bob() -> list[dict[str, Any]]:
    """Two seats flip 50 cards; Ann takes the 50th (a Jack): Ann 51, Bob 1; then Ann and Bob flip
    one each (Bob's last): Ann 50, Bob 0, the pile 2; Ann flips again (Bob is skipped)."""
    return [game(TWO), *turns(1, 50, TWO), slap(50, 100, "Ann"), slap(50, 200, "Bob"),
            flip(51, "Ann"), flip(52, "Bob"), flip(53, "Ann")]


def test_the_consensus_counts_a_seat_with_no_cards() -> None:
    r = run(*two_down_to_bob(), slap(53, 100, "Ann"))
    assert r.rules.state.down == {"Ann": 49, "Bob": 0}
    assert r.lines()[1] == {"type": "awaiting", "round": 53, "need": ["jack"]}


def test_a_seat_with_no_cards_stays_in_and_slaps_back_in_at_the_next_jack() -> None:
    r = run(*two_down_to_bob(), slap(53, 100, "Bob"), slap(53, 200, "Ann"))
    assert rulings(r, 53) == [(53, "Bob", 3, "first to slap the jack")]
    assert held(r) == {"Ann": 49, "Bob": 3} and outs(r) == set()


def test_a_seat_with_no_cards_is_out_when_another_takes_the_jacks_pile_and_ends_the_game(
) -> None:
    r = run(*two_down_to_bob(), slap(53, 100, "Ann"), slap(53, 200, "Bob"), flip(54, "Ann"))
    assert rulings(r, 53) == [(53, "Ann", 3, "first to slap the jack")]
    assert outs(r) == {"Bob"}
    final = r.lines()[-1]
    assert final["final"] is True and final["winners"] == ["Ann"]  # Ann holds every card
    assert held(r) == {"Ann": 52, "Bob": 0}
    assert r.rules.round_count() == 53  # the cue after the end is ignored


def test_a_too_close_jack_keeps_a_seat_with_no_cards_in() -> None:
    r = run(*two_down_to_bob(), slap(53, 100, "Ann"), slap(53, 100, "Bob"))
    assert rulings(r, 53) == [(53, None, 0, "too close to call")]
    assert outs(r) == set() and r.lines()[-1]["final"] is False


# -- the end --------------------------------------------------------------------------------------


def test_option_flips_ends_the_game_most_cards_wins_ties_share_a_place() -> None:
    r = run(game(TWO, flips=4), *turns(1, 6, TWO), slap(5, 100, "Ann"), slap(5, 200, "Bob"))
    final = r.lines()[-1]
    assert final["final"] is True and rulings(r) == []  # flip 5 is after the end: ignored
    assert [(row["seat"], row["score"], row["place"]) for row in final["seats"]] == [
        ("Ann", 24, 1), ("Bob", 24, 1)]
    assert final["winners"] == ["Ann", "Bob"]
    r = run(game(TWO, flips=4), *turns(1, 4, TWO), slap(4, 100, "Ann"), slap(4, 200, "Bob"))
    assert r.lines()[-1]["winners"] == ["Ann"] and held(r) == {"Ann": 28, "Bob": 24}


def test_a_judges_penalty_puts_cards_on_the_pile_for_the_next_jack() -> None:
    r = run(game(TWO), *turns(1, 4, TWO), {"type": "penalty", "round": 1, "seat": "Bob",
                                           "count": 2, "reason": "slapped out of turn"},
            slap(4, 100, "Ann"), slap(4, 200, "Bob"))
    assert rulings(r) == [(1, "Bob", -2, "slapped out of turn"),
                          (4, "Ann", 6, "first to slap the jack")]


# -- the quiet table ------------------------------------------------------------------------------


def honest_game(rng: random.Random, seats: int, cap: int = 3000) -> list[bool]:
    """One honest game played out: True for a flip nobody slaps (not a Jack); on a Jack a random
    seat still in slaps first and takes the pile under its cards."""
    deck = [r == 11 for r in range(13)] * 4  # True: a Jack
    rng.shuffle(deck)
    hands = [deck[i::seats] for i in range(seats)]
    out = [False] * seats
    pile: list[bool] = []
    quiet: list[bool] = []
    turn = -1
    while len(quiet) < cap and not any(len(h) == 52 for h in hands):
        nxt = [(turn + k) % seats for k in range(1, seats + 1)]
        turn = next((s for s in nxt if hands[s] and not out[s]), -1)
        if turn < 0:
            break
        card = hands[turn].pop(0)
        pile.append(card)
        quiet.append(not card)
        if card:
            taker = rng.choice([s for s in range(seats) if not out[s]])
            hands[taker] += pile
            pile = []
            out = [o or (not hands[s] and s != taker) for s, o in enumerate(out)]
    return quiet


@pytest.mark.parametrize("seats", [2, 4, 8])
def test_an_honest_slapjack_table_almost_never_reaches_its_quiet_threshold(seats: int) -> None:
    threshold = Slapjack(THREE[:1] + [f"S{i}" for i in range(seats - 1)]).schedule().quiet_rounds
    assert threshold == quiet_flips(0)
    rng = random.Random(seats)
    runs = [longest(honest_game(rng, seats)) for _ in range(400)]
    assert sum(r >= threshold for r in runs) / len(runs) < odds.MISS
    assert max(runs) <= 48  # between two Jacks every card stays on the pile: 48 at most


def test_the_pass_arithmetic_against_shuffled_decks() -> None:
    rng = random.Random(4)
    deck = [r == 11 for r in range(13)] * 4
    hits = {20: 0, 30: 0}
    for _ in range(8000):
        rng.shuffle(deck)
        best = longest([not c for c in deck])
        for k in hits:
            hits[k] += best >= k
    for k, n in hits.items():
        assert abs(n / 8000 - pass_chance(k)) < 0.02
    assert quiet_flips(0) >= quiet_flips(100) >= odds.FEWEST
