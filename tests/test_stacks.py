"""The card-stacks layer (referee/rules/stacks.py) with a game that exists only here: the deal, each
flip, takes, cards given, penalties, seats out, what the pages get and what the voice says."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from referee.events import Awaiting, Cue, Facts, Penalty, Press, Reason, Ruling
from referee.rules import race
from referee.rules.declare import Fact
from referee.rules.stacks import StackRules, Stacks, deal
from referee.rules.turns import Pile, Turn, turn_options
from referee.voice.phrases import Phrasebook, text

S = 1_000_000


class Grab(Reason):
    TOOK = "grabbed a good card"
    GAVE = "grabbed a bad card"
    GOT = "given a card"


class Pairs(StackRules):
    """Flip in turn; on a good card ({"good": true}) the first grabber takes everything, on a
    bad one it gives a card to each other seat still in. A seat with no cards is out at once."""

    NAME: ClassVar[str] = "pairs-test"
    TITLE: ClassVar[str] = "Pairs"
    SEATS: ClassVar[tuple[int, int]] = (2, 5)
    DEAL: ClassVar[int] = 11
    OPTIONS = turn_options(turn_ms=1000, tempo_ms=100, window_ms=500)
    FACTS = (Fact("good", "flag", "Good?", "good?", "Good or not?"),)
    REASONS = (Grab,)
    HANDS: ClassVar[Mapping[Reason, Any]] = {Grab.TOOK: "take", Grab.GAVE: "give",
                                             Grab.GOT: "get"}
    PHRASES = {"turn": ("{seat},", "go!"), "took": ("{seat} takes {number} cards.",),
               "took_one": ("{seat} takes one card.",), "gave": ("{seat} gives {to} one.",),
               "gave_each": ("{seat} gives {to} one each.",), "out": ("{seat} is out.",)}
    CALLS = ("turn",)

    def rule(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        assert isinstance(table, Stacks)
        out: list[Ruling | Awaiting] = []
        if not turn.taps:
            return out
        first = race.first(turn.taps, self.options["tie_us"])
        if self.facts_for(turn.number).get("good", False):
            self.take_pile(out, table, turn.number, first.seat, Grab.TOOK, first.margin_us,
                           first.too_close)
        elif first.seat is not None:
            self.give(out, table, turn.number, first.seat,
                      [s for s in self.seats if s not in table.out], Grab.GAVE, Grab.GOT)
        return out

    def settle(self, turn: Turn, table: Stacks) -> None:
        table.out |= {s for s in self.seats if table.held()[s] == 0}


class FaceUp(Pairs):
    NAME: ClassVar[str] = "pairs-up-test"
    FACE_UP: ClassVar[bool] = True


def play(rules: StackRules, *events: Any) -> StackRules:
    for ev in events:
        rules.advance(ev.t_us) if hasattr(ev, "t_us") else None
        rules.feed(ev)
    rules.advance(10**12)
    return rules


def test_the_deal_is_as_even_as_it_goes_the_first_seats_get_the_extra_cards() -> None:
    assert deal(52, ["A", "B", "C"]) == {"A": 18, "B": 17, "C": 17}
    assert deal(56, list("ABCDE")) == {"A": 12, "B": 11, "C": 11, "D": 11, "E": 11}
    rules = Pairs(["Ann", "Bob", "Cy"])
    assert rules.scores() == {"Ann": 4, "Bob": 4, "Cy": 3}
    assert rules.words(rules.scores())["stacks"]["down"] == {"Ann": 4, "Bob": 4, "Cy": 3}
    assert rules.words(rules.scores())["pile"] == 0


def test_a_flip_moves_the_flippers_top_card_onto_the_centre_pile_and_a_take_takes_it() -> None:
    rules = play(Pairs(["Ann", "Bob"]), Cue(S, "Ann"), Cue(2 * S, "Bob"),
                 Press(2 * S + 100_000, "Ann"), Press(2 * S + 150_000, "Bob"))
    rules.feed(Facts(2, {"good": True}))
    assert rules.round_outputs(2) == [Ruling(2, "Ann", 2, Grab.TOOK, 50_000)]
    assert rules.state.down == {"Ann": 7, "Bob": 4} and rules.state.pile == 0
    assert rules.said_after(2, rules.round_outputs(2), True) == [
        ("took", {"seat": "Ann", "n": 2})]


def test_face_up_flips_go_to_the_flippers_own_pile_and_a_take_gains_the_others() -> None:
    rules = play(FaceUp(["Ann", "Bob"]), Cue(S, "Ann"), Cue(2 * S, "Bob"),
                 Press(2 * S + 100_000, "Bob"))
    assert rules.state.up == {"Ann": 1, "Bob": 1}
    assert rules.scores() == {"Ann": 7, "Bob": 4}  # face down and face up (Bob gave one)
    rules.feed(Facts(2, {"good": True}))
    assert rules.round_outputs(2) == [Ruling(2, "Bob", 1, Grab.TOOK, None)]  # Ann's one card
    assert rules.state.up == {"Ann": 0, "Bob": 0} and rules.state.down == {"Ann": 5, "Bob": 6}
    words = rules.words(rules.scores())
    assert words["stacks"]["up"] == {"Ann": 0, "Bob": 0} and "pile" not in words


def test_a_card_given_is_two_rulings_and_a_giver_gives_as_many_as_it_has() -> None:
    rules = Pairs(["Ann", "Bob", "Cy"])
    play(rules, Cue(S, "Ann"), Press(S + 100_000, "Cy"))
    assert rules.round_outputs(1) == [Ruling(1, "Cy", -2, Grab.GAVE), Ruling(1, "Ann", 1, Grab.GOT),
                                      Ruling(1, "Bob", 1, Grab.GOT)]
    assert rules.said_after(1, rules.round_outputs(1), True) == [
        ("gave_each", {"seat": "Cy", "to": ["Ann", "Bob"], "n": 2})]
    assert rules.scores() == {"Ann": 4, "Bob": 5, "Cy": 1}
    play(rules, Cue(3 * S, "Bob"), Press(3 * S + 100_000, "Cy"))  # one card left: Ann only
    assert rules.round_outputs(2) == [Ruling(2, "Cy", -1, Grab.GAVE), Ruling(2, "Ann", 1, Grab.GOT)]
    assert rules.state.out == {"Cy"}  # nothing held: out (this game's settle)
    assert rules.said_after(2, rules.round_outputs(2), True) == [
        ("gave", {"seat": "Cy", "to": ["Ann"], "n": 1}), ("out", {"seat": "Cy"})]
    assert [r.out for r in rules.standings().seats] == [False, False, True]
    assert rules.words(rules.scores())["stacks"]["out"] == ["Cy"]
    assert rules.next_call() is not None and rules.next_call().seat == "Ann"
    play(rules, Cue(5 * S, "Ann"), Press(5 * S + 50_000, "Cy"))  # an out seat does not race
    assert rules.round_outputs(3) == [] and rules.racing(3) == ("Ann", "Bob")


def test_a_seat_with_no_face_down_cards_is_skipped_and_a_cue_naming_it_flips_nothing() -> None:
    rules = Pairs(["Ann", "Bob"], {"window_ms": 500})
    events: list[Any] = []
    for i in range(6):  # Bob's five cards
        events += [Cue((2 * i + 1) * S, "Ann"), Cue((2 * i + 2) * S, "Bob")]
    play(rules, *events[:-1])
    assert rules.state.down == {"Ann": 0, "Bob": 0} and rules.state.pile == 11
    assert rules.over  # nobody has a card to flip: the game cannot go on
    rules = play(Pairs(["Ann", "Bob"]), *events[:9])
    assert rules.state.down == {"Ann": 1, "Bob": 1}
    play(rules, Cue(10 * S, "Bob"), Cue(11 * S, "Bob"), Press(11 * S + 1000, "Ann"))
    assert rules.state.down == {"Ann": 1, "Bob": 0} and rules.round_outputs(11) == []
    assert rules.racing(11) == ()  # no card: no race
    assert rules.next_call() is not None and rules.next_call().seat == "Ann"


def test_a_penalty_puts_the_seats_cards_on_the_centre_pile() -> None:
    rules = play(Pairs(["Ann", "Bob"]), Cue(S, "Ann"))
    rules.feed(Penalty(1, "Bob", 9, "grabbed out of turn"))  # as many as it has: five
    assert [(r.seat, r.delta) for r in rules.round_outputs(1)] == [("Bob", -5)]
    assert rules.state.pile == 6 and rules.scores() == {"Ann": 5, "Bob": 0}


@pytest.mark.parametrize("n, said", [(7, "Ann takes seven cards."), (1, "Ann takes one card.")])
def test_the_voice_says_what_changed_hands_in_the_games_phrases(n: int, said: str) -> None:
    rules = Pairs(["Ann", "Bob"])
    book = Phrasebook(phrases=Pairs.PHRASES)
    (key, params), = rules.said_after(0, [Ruling(1, "Ann", n, Grab.TOOK)], False)
    assert text(key, params, book=book) == said
