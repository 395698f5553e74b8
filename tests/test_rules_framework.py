"""What the rules framework owns, for every game: reading never changes the rules (no lock, no
fold on a reader's thread), change detection, standings in the game's direction, and the turn
base's order, windows and first card (over the made-up turn game, defined only in tests/).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from referee.events import Awaiting, Cue, Facts, Penalty, Press, Ruling, Undo
from referee.rules.base import Rules
from referee.rules.declare import RulesError
from referee.rules.registry import games
from referee.rules.replay import drive
from tests.harness import every_game
from tests.made_up_game import SnapGrab

SEATS = ("Ann", "Bob", "Cy", "Dee")
MS = 1000
S = 1_000_000

GAMES = sorted(every_game().items())


def read_everything(rules: Rules) -> list[Any]:
    """Every read the engine, the pages and the keyboard make of the rules."""
    seen: list[Any] = [rules.status(), rules.standings(), rules.outputs(), rules.round_count(),
                       rules.next_call(), rules.questions(), rules.schedule()]
    for n in range(1, rules.round_count() + 1):
        seen += [rules.round_outputs(n), rules.reactions(n), rules.racing(n), rules.pressers(n),
                 rules.refutable(n), rules.announcements(n + 1), rules.said_after(n, [], False),
                 rules.facts_for(n)]
    seen.append(rules.words({r.seat: r.score for r in rules.standings().seats}))
    return seen


def answer(rules: Rules) -> bool:
    """The judge answers the question the rules ask, if any, with the keypad's YES."""
    ask = rules.status().awaiting
    if ask is not None:
        rules.feed(Facts(ask.round, rules.keypad(ask, "yes")))
    return ask is not None


def inputs() -> list[tuple[str, Any]]:
    """A few rounds of any game: its calls as cues (or claims, for a game without calls), presses
    after them, time passing, the judge answering what is asked, then the judge voiding round 2,
    taking it back, a penalty."""
    script: list[tuple[str, Any]] = []
    t = 5 * S
    for _ in range(4):
        script.append(("call", t))
        script += [("press", Press(t + (120 + 90 * i) * MS, seat))
                   for i, seat in enumerate(SEATS[:2])]
        t += 20 * S
        script += [("time", t), ("answer", None)]
    script += [("feed", Facts(2, {"void": True})), ("time", t + S), ("feed", Undo()),
               ("feed", Penalty(2, "Cy", 1, "peeked")), ("finish", None)]
    return script


@pytest.mark.parametrize("cls", [c for _, c in GAMES], ids=[n for n, _ in GAMES])
def test_reading_the_rules_changes_nothing_so_any_thread_may_read(cls: type[Rules]) -> None:
    """Every input re-rules what it made stale before it returns: a read from a page's or the
    keyboard's thread finds nothing to do, and changes nothing, while the engine thread feeds."""
    rules = cls(SEATS)
    folds = 0
    fold = rules._fold

    def counting(start: int) -> None:
        nonlocal folds
        folds += 1
        fold(start)

    rules._fold = counting  # type: ignore[method-assign]
    fed = 0
    for kind, what in inputs():
        if kind == "call":
            call = rules.next_call()
            if call is None and rules.ROUNDS_FROM_CUES:
                continue  # the game is over, or waits for the judge
            rules.advance(what)
            if call is None:  # claims open the rounds: a press is the claim
                rules.feed(Press(what, SEATS[2]))
            else:
                rules.feed(Cue(what, call.seat))
        elif kind == "press":
            rules.advance(what.t_us)
            rules.feed(what)
        elif kind == "time":
            rules.advance(what)
        elif kind == "answer":
            if not answer(rules):
                continue  # nothing asked
        elif kind == "feed":
            try:
                rules.check(what)
            except RulesError:
                continue  # (a round this game never reached)
            rules.feed(what)
        else:
            rules.finish()
        fed += 1
        assert rules.stale is None, f"{kind} left rounds from {rules.stale} to be re-ruled"
        before = copy.deepcopy(vars(rules))
        folds_before = folds
        read_everything(rules)
        read_everything(rules)
        assert folds == folds_before, f"a read after {kind} re-ruled rounds"
        after = vars(rules)
        changed = sorted(k for k in after if after[k] != before.get(k) and k != "_fold")
        assert changed == [], f"a read after {kind} changed {changed}"
    assert fed > 8 and folds > 0 and rules.round_count() >= 2


@pytest.mark.parametrize("cls", [c for _, c in GAMES], ids=[n for n, _ in GAMES])
def test_change_detection_names_each_round_whose_rulings_changed(cls: type[Rules]) -> None:
    """The framework marks a round changed when its rulings change (a judge's penalty), and only
    that round."""
    rules = cls(SEATS)
    t = 5 * S
    for _ in range(3):
        call = rules.next_call()
        rules.advance(t)
        rules.feed(Press(t, SEATS[2]) if call is None else Cue(t, call.seat))
        rules.feed(Press(t + 150 * MS, "Ann"))
        t += 20 * S
        rules.advance(t)
        answer(rules)
    rules.finish()
    ruled = set(rules.take_changed())  # a round that closed with nothing to rule may be no news
    assert ruled >= {n for n in range(1, 4) if rules.round_outputs(n)} and ruled <= {1, 2, 3}
    assert rules.take_changed() == [] and rules.round_count() == 3
    rules.feed(Penalty(3, "Bob", 1, "peeked"))
    assert rules.take_changed() == [3]
    rules.feed(Undo())
    assert rules.take_changed() == [3] and rules.take_changed() == []


# -- the turn base, over the made-up turn game ---------------------------------------------------


def grab(cards: int = 6, strikes: int = 2) -> SnapGrab:
    return SnapGrab(SEATS, {"cards": cards, "strikes": strikes, "window_ms": 1000})


def flip(rules: SnapGrab, t: int, *grabs: tuple[str, int]) -> None:
    """The next turn's cue at `t`, the grabs (seat, ms after the cue), the window closed."""
    call = rules.next_call()
    assert call is not None and call.phrase == "snap_turn"
    rules.advance(t)
    rules.feed(Cue(t, call.seat))
    for seat, ms in grabs:
        rules.advance(t + ms * MS)
        rules.feed(Press(t + ms * MS, seat))
    rules.advance(t + 1100 * MS)


def said(rules: SnapGrab, number: int) -> list[tuple[str | None, int, str]]:
    return [(o.seat, o.delta, o.reason.value) for o in rules.round_outputs(number)
            if isinstance(o, Ruling)]


def test_turns_go_round_in_seat_order_skipping_seats_out() -> None:
    rules = grab(strikes=1)
    assert rules.next_call() == ("snap_turn", "Ann")
    flip(rules, 5 * S, ("Bob", 200))  # the first card: nothing below it, a strike, Bob is out
    assert said(rules, 1) == [("Bob", 0, "grabbed the first card")]
    assert rules.next_call() == ("snap_turn", "Cy")  # Bob's turn is skipped
    flip(rules, 7 * S)
    assert rules.next_call() == ("snap_turn", "Dee")
    flip(rules, 9 * S)
    assert rules.next_call() == ("snap_turn", "Ann")  # round again, past Bob
    assert [c.seat for c in rules.cues] == ["Ann", "Cy", "Dee"]


def test_a_seat_out_is_skipped_and_its_grabs_ignored() -> None:
    rules = grab(strikes=1)
    flip(rules, 5 * S)  # Ann flips; nobody grabs
    flip(rules, 7 * S, ("Cy", 100))  # Bob flips; Cy grabs: the judge is asked how many match
    assert rules.status().awaiting == Awaiting(2, ("match",))
    rules.feed(Facts(2, {"match": 0}))  # no match: Cy's strike; Cy is out
    assert said(rules, 2) == [("Cy", 0, "grabbed with no match")]
    assert rules.next_call() == ("snap_turn", "Dee")  # Cy is skipped
    flip(rules, 9 * S, ("Cy", 100), ("Bob", 300))  # Cy's grab is ignored: Bob's is the first
    assert rules.reactions(3) == {"Bob": 300 * MS} and rules.racing(3) == ("Ann", "Bob", "Dee")
    rules.feed(Facts(3, {"match": 2}))
    assert said(rules, 3) == [("Bob", 3, "grabbed the match")]  # the pile: three cards


def test_a_turn_window_is_closed_early_by_the_next_cue() -> None:
    rules = grab()
    rules.feed(Cue(5 * S, "Ann"))
    rules.advance(5 * S + 400 * MS)
    rules.feed(Cue(5 * S + 400 * MS, "Bob"))  # before Ann's 1000 ms window ran out
    rules.advance(5 * S + 500 * MS)
    rules.feed(Press(5 * S + 500 * MS, "Cy"))  # inside Ann's window had it run on: Bob's turn
    assert rules.rounds[0].window_end_us == 5 * S + 400 * MS and rules.rounds[0].closed
    assert rules.reactions(1) == {} and rules.reactions(2) == {"Cy": 100 * MS}


def test_cues_after_the_last_card_are_ignored_and_the_game_ends() -> None:
    rules = grab(cards=2)
    flip(rules, 5 * S)
    flip(rules, 7 * S)
    assert rules.over and rules.next_call() is None and rules.round_count() == 2
    rules.feed(Cue(9 * S, "Ann"))
    assert rules.round_count() == 2


def test_more_wins_the_most_cards_take_first_place() -> None:
    rules = grab(cards=4)
    flip(rules, 5 * S)
    flip(rules, 7 * S, ("Cy", 100), ("Ann", 250))
    rules.feed(Facts(2, {"match": 1}))
    assert said(rules, 2) == [("Cy", 2, "grabbed the match")]
    flip(rules, 9 * S, ("Ann", 100))  # the pile was taken: the first card again, a strike
    assert said(rules, 3) == [("Ann", 0, "grabbed the first card")]
    assert rules.status().awaiting is None  # nothing below it: nothing to ask
    flip(rules, 11 * S, ("Cy", 100))
    rules.feed(Facts(4, {"match": 0}))  # Cy puts a card back: a loss, in a more-wins game
    assert said(rules, 4) == [("Cy", -1, "grabbed with no match")]
    assert rules.is_loss(-1) and not rules.is_loss(2)
    st = rules.standings()
    assert st.final and st.winners == ("Cy",)
    assert [(r.seat, r.score, r.place) for r in st.seats] == [
        ("Cy", 1, 1), ("Ann", 0, 2), ("Bob", 0, 2), ("Dee", 0, 2)]
    assert rules.state.pile == 3


def test_facts_are_each_game_s_own_match_a_count_here_a_flag_in_pig_s_tail() -> None:
    ours = grab()
    flip(ours, 5 * S)
    ours.check(Facts(1, {"match": 2}))
    with pytest.raises(RulesError, match="match must be a whole number"):
        ours.check(Facts(1, {"match": True}))
    theirs = games()["pigs-tail"](SEATS)
    drive(theirs, [(1, Cue(5 * S, "Ann"))])
    theirs.check(Facts(1, {"match": True}))
    with pytest.raises(RulesError, match="match must be true or false"):
        theirs.check(Facts(1, {"match": 2}))
