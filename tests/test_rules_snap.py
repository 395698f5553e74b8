"""Snap (a game file shipped inside the package) as table-log scenarios, one per rule sentence of
PRODUCT.md's "More slap games": a log in, the replay's lines out."""

from __future__ import annotations

import random
from typing import Any

from referee.events import Cue, Press
from referee.rules.registry import rules_for
from tests.rules_log import facts, run

THREE = ["Ann", "Bob", "Cy"]
TWO = ["Ann", "Bob"]
S = 1_000_000
TURN = 3 * S


def game(seats: list[str] = THREE, **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": "snap", "seats": seats, "options": options}


def flip(k: int, seat: str) -> dict[str, Any]:
    return {"type": "cue", "t_us": k * TURN, "seat": seat}


def tap(k: int, after_ms: float, seat: str) -> dict[str, Any]:
    return {"type": "press", "t_us": k * TURN + int(after_ms * 1000), "seat": seat}


def rulings(out: list[dict[str, Any]], round: int | None = None) -> list[tuple[Any, ...]]:
    return [(r["round"], r["seat"], r["delta"], r["reason"], r["margin_us"]) for r in out
            if r["type"] == "ruling" and (round is None or r["round"] == round)]


def cards(out: list[dict[str, Any]]) -> dict[str, int]:
    return {r["seat"]: r["score"] for r in out[-1]["seats"]}


def test_the_deck_is_dealt_as_evenly_as_it_goes_the_first_seats_taking_the_extra_cards() -> None:
    assert cards(run(game())) == {"Ann": 18, "Bob": 17, "Cy": 17}
    assert cards(run(game(["A", "B", "C", "D", "E"]))) == {"A": 11, "B": 11, "C": 10, "D": 10,
                                                          "E": 10}


def test_each_flip_takes_a_card_from_the_flipper_onto_the_centre_pile() -> None:
    out = run(game(), flip(1, "Ann"), flip(2, "Bob"), flip(3, "Cy"))
    assert rulings(out) == []
    assert cards(out) == {"Ann": 17, "Bob": 16, "Cy": 16}  # three cards on the pile


def test_a_snap_the_first_to_press_takes_the_pile() -> None:
    out = run(game(), flip(1, "Ann"), flip(2, "Bob"), flip(3, "Cy"),
              tap(3, 300, "Bob"), tap(3, 420, "Ann"), tap(3, 500, "Cy"))
    assert rulings(out) == [(3, "Bob", 3, "first to snap", 120_000)]  # all pressed: a snap
    assert cards(out) == {"Ann": 17, "Bob": 19, "Cy": 16}


def test_the_first_card_onto_an_empty_pile_cannot_match() -> None:
    # everyone pressed on the first card (and the judge even says snap): no card below it,
    # so it is a wrong snap: the first presser gives the flipper one card
    out = run(game(), flip(1, "Ann"), tap(1, 200, "Bob"), tap(1, 300, "Ann"), tap(1, 350, "Cy"),
              facts(1, snap=True))
    assert rulings(out) == [(1, "Bob", -1, "wrong snap", 100_000), (1, "Ann", 1, "given a card",
                                                                    None)]
    # after a take the pile is empty again: the next card cannot match either
    out = run(game(), flip(1, "Ann"), flip(2, "Bob"), tap(2, 100, "Cy"), tap(2, 200, "Ann"),
              tap(2, 300, "Bob"), flip(3, "Cy"), tap(3, 100, "Ann"), tap(3, 200, "Bob"),
              tap(3, 300, "Cy"))
    assert rulings(out, 2) == [(2, "Cy", 2, "first to snap", 100_000)]
    assert rulings(out, 3) == [(3, "Ann", -1, "wrong snap", 100_000),
                               (3, "Cy", 1, "given a card", None)]


def test_a_wrong_snap_gives_the_flipper_one_card_as_two_rulings() -> None:
    out = run(game(), flip(1, "Ann"), flip(2, "Bob"), tap(2, 250, "Cy"), facts(2, snap=False))
    assert rulings(out) == [(2, "Cy", -1, "wrong snap", None), (2, "Bob", 1, "given a card", None)]
    assert cards(out) == {"Ann": 17, "Bob": 17, "Cy": 16}


def test_a_flipper_that_snaps_wrongly_gives_nothing() -> None:
    out = run(game(), flip(1, "Ann"), flip(2, "Bob"), tap(2, 250, "Bob"), facts(2, snap=False))
    assert rulings(out) == [(2, "Bob", 0, "wrong snap", None)]


def test_consensus_all_pressed_is_a_snap_none_is_no_snap_otherwise_the_judge_is_asked() -> None:
    quiet = run(game(), flip(1, "Ann"), flip(2, "Bob"))
    assert [o for o in quiet if o["type"] == "awaiting"] == []
    some = run(game(), flip(1, "Ann"), flip(2, "Bob"), tap(2, 300, "Ann"), tap(2, 400, "Cy"))
    assert [o for o in some if o["type"] == "awaiting"] == [
        {"type": "awaiting", "round": 2, "need": ["snap"]}]
    assert some[-1]["final"] is False
    judged = run(game(), flip(1, "Ann"), flip(2, "Bob"), tap(2, 300, "Ann"), tap(2, 400, "Cy"),
                 facts(2, snap=True))
    assert rulings(judged) == [(2, "Ann", 2, "first to snap", 100_000)]


def test_the_judges_question_is_snap_or_no_snap_and_the_fact_is_a_flag() -> None:
    cls = rules_for("snap")
    (fact,) = cls.FACTS
    assert (fact.name, fact.kind, fact.ask, fact.answers) == (
        "snap", "flag", "Snap or no snap?", ("Snap", "No snap"))


def test_too_close_to_call_between_the_first_two_the_pile_stays() -> None:
    out = run(game(), flip(1, "Ann"), flip(2, "Bob"), tap(2, 300, "Ann"), tap(2, 300.5, "Cy"),
              tap(2, 600, "Bob"))
    assert rulings(out) == [(2, None, 0, "too close to call", 500)]
    assert cards(out) == {"Ann": 17, "Bob": 16, "Cy": 17}  # two cards stay on the pile


def test_a_seat_with_no_cards_is_skipped_and_out_once_another_seat_takes_the_pile() -> None:
    rules = rules_for("snap")(TWO, {})
    t = 0
    # Bob flips his 26 cards while Ann never flips: he is out of cards
    for _ in range(26):
        t += TURN
        rules.advance(t)
        rules.feed(Cue(t, "Bob"))
    rules.advance(t + TURN)
    assert rules.next_call() == ("call", "Ann")  # Bob has no cards: skipped
    assert [r.out for r in rules.standings().seats] == [False, False]
    t += TURN
    rules.advance(t)
    rules.feed(Cue(t, "Ann"))
    for seat, after in (("Ann", 100_000), ("Bob", 200_000)):
        rules.advance(t + after)
        rules.feed(Press(t + after, seat))
    rules.finish()
    # Ann took all 52: she holds every card, Bob is out, and the game is over
    assert {r.seat: (r.score, r.out) for r in rules.standings().seats} == {
        "Ann": (52, False), "Bob": (0, True)}
    st = rules.standings()
    assert st.final and st.winners == ("Ann",)


def test_the_game_can_end_after_a_number_of_flips_most_cards_wins() -> None:
    out = run(game(flips=3), flip(1, "Ann"), flip(2, "Bob"), tap(2, 100, "Cy"), tap(2, 200, "Ann"),
              tap(2, 300, "Bob"), flip(3, "Cy"), flip(4, "Ann"))
    assert out[-1]["final"] is True and out[-1]["winners"] == ["Cy"]
    assert cards(out) == {"Cy": 18, "Ann": 17, "Bob": 16}  # the fourth flip came after the end


def honest_quiet_run(rng: random.Random, seats: int, cap: int = 2000) -> int:
    """The longest run of flips without a press in one honest Snap game of a shuffled deck: a
    press exactly on a card that matches the rank below it, a random seat first."""
    deck = [rank for rank in range(13) for _ in range(4)]
    rng.shuffle(deck)
    hands = [deck[i::seats] for i in range(seats)]
    pile: list[int] = []
    turn = run = longest = 0
    for _ in range(cap):
        seat = next((s % seats for s in range(turn, turn + seats) if hands[s % seats]), None)
        if seat is None:
            break  # every card is on the pile: the game is over
        card = hands[seat].pop(0)
        turn = seat + 1
        snap = bool(pile) and pile[-1] == card
        pile.append(card)
        if snap:
            hands[rng.randrange(seats)].extend(reversed(pile))  # turned over, under the stack
            pile, run = [], 0
            if sum(1 for h in hands if h) == 1:
                break  # one seat holds every card
        else:
            run += 1
            longest = max(longest, run)
    return longest


def test_snap_has_no_quiet_pause_because_an_honest_table_reaches_any_threshold() -> None:
    rng = random.Random(26)
    runs = [honest_quiet_run(rng, rng.choice([2, 3, 4, 6, 8])) for _ in range(400)]
    assert max(runs) <= 52  # a quiet run never passes the deck: the game is over there
    # any threshold up to the deck is reached by far more than 1 honest game in 100
    assert sum(r >= 52 for r in runs) / len(runs) > 0.01
    assert rules_for("snap")(THREE).schedule().quiet_rounds is None
