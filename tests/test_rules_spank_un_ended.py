"""Spank the Pig!: a game the judge ends and then un-ends while a race is running (issue 17).

A judge's penalty in the last regular round can break the tie that sent the table into sudden
death: the game is over at once, and the sudden-death round being raced no longer counts. An UNDO
of that penalty, or a second penalty that ties the leaders again, un-ends it: the withdrawn round
counts again and its race is still running. Fed as the live table feeds the rules (time advanced
to each event), each test checks what the table shows or says: the live status, whether the
referee may call the next round, the rulings, the champion, the rounds handed to the announcer.
"""

from __future__ import annotations

from referee.events import Cue, Facts, Penalty, Press, Ruling, Undo
from referee.rules.spank import SpankThePig

TWO = ("Blue", "Red")
MS = 1000
S = 1_000_000


def feed(rules: SpankThePig, *events: Cue | Press) -> None:
    for ev in events:
        rules.advance(ev.t_us)
        rules.feed(ev)


def said(rules: SpankThePig, number: int) -> list[tuple[str | None, int, str, int | None]]:
    return [(r.seat, r.delta, r.reason.value, r.margin_us)
            for r in rules.round_outputs(number) if isinstance(r, Ruling)]


def sudden_death_racing() -> SpankThePig:
    """Two seats, one regular round: a photo finish (0.5 ms apart) leaves them tied at 0, so
    round 2 is sudden death. Its cue came at 5 s (the window runs to 8 s); Blue has slapped at
    5.1 s, Red not yet; it is 5.2 s."""
    rules = SpankThePig(TWO, {"deck": 2, "doubles": "off"})
    feed(rules, Cue(1 * S), Press(1 * S + 100 * MS, "Blue"), Press(1 * S + 100 * MS + 500, "Red"))
    rules.advance(2 * S)
    feed(rules, Cue(5 * S), Press(5 * S + 100 * MS, "Blue"))
    rules.advance(5 * S + 200 * MS)
    status = rules.status()
    assert status.race_open and status.closes_at_us == 8 * S and not rules.over
    return rules


def ended_by_a_penalty(rules: SpankThePig) -> None:
    """The judge gives Blue a penalty in round 1: Red leads alone and is champion; round 2's race
    no longer counts. The live table reads the status at once (and so must the test: the search
    for open rounds moves past the withdrawn round)."""
    rules.take_changed()
    rules.feed(Penalty(1, "Blue", 1, "slapped the cow"))
    status = rules.status()
    assert rules.over and rules.standings().winners == ("Red",)
    assert not status.race_open and status.closes_at_us is None


def test_withdrawing_the_running_sudden_death_race_hands_that_round_to_the_announcer() -> None:
    """Round 2 was racing when the penalty ended the game: it is handed to the announcer with
    round 1 (the engine announces exactly the rounds `take_changed` names), so the table hears
    that round 2 came to nothing ("Nobody") and the pages get its (empty) ruling. A round handed
    over only when it had rulings (a racing round has none yet) would leave round 2 unsaid, with
    no ruling sent to the pages and no "ruled" mark in the log."""
    rules = sudden_death_racing()
    ended_by_a_penalty(rules)
    assert rules.take_changed() == [1, 2]
    assert rules.round_outputs(2) == [] and rules.racing(2) == ()


def test_an_undo_that_un_ends_the_game_reopens_the_race_still_running() -> None:
    """UNDO of the penalty: round 1 is tied again and round 2's race, whose window runs to 8 s,
    is open again: the status says so, and the referee must not call another round over it. Red
    slaps at 5.3 s: Red is last by 200 ms, takes the whammy and is out; Blue is champion. Were
    the race not found open again, it would never close: no ruling, no champion, and a new
    round called in the middle of it."""
    rules = sudden_death_racing()
    ended_by_a_penalty(rules)
    rules.feed(Undo())
    status = rules.status()
    assert not rules.over and status.race_open and status.closes_at_us == 8 * S
    assert rules.next_call() is None
    feed(rules, Press(5 * S + 300 * MS, "Red"))
    rules.advance(5 * S + 400 * MS)
    assert said(rules, 2) == [("Red", 1, "last to spank the pig", 200 * MS)]
    assert rules.take_changed() == [1, 2]
    assert rules.over and rules.standings().winners == ("Blue",)
    assert not rules.status().race_open


def test_a_second_penalty_that_ties_the_leaders_again_reopens_the_race() -> None:
    """Instead of an UNDO, the judge gives Red a penalty in round 1 too: 1 each, tied again, so
    round 2 counts and its race is open. Nobody else slaps: at 8 s the window closes with only
    Blue's slap, so the judge is asked about the pig; one pig: Red, who never slapped, is last
    and out, and Blue is champion."""
    rules = sudden_death_racing()
    ended_by_a_penalty(rules)
    rules.feed(Penalty(1, "Red", 1, "peeked"))
    status = rules.status()
    assert not rules.over and status.race_open and status.closes_at_us == 8 * S
    assert rules.next_call() is None
    rules.advance(8 * S)
    awaiting = rules.status().awaiting
    assert awaiting is not None and awaiting.round == 2 and not rules.over
    rules.feed(Facts(2, {"pigs": 1}))
    assert said(rules, 2) == [("Red", 1, "last to spank the pig", None)]
    assert rules.over and rules.standings().winners == ("Blue",)
    assert [(r.seat, r.score) for r in rules.standings().seats] == [("Blue", 1), ("Red", 2)]


def test_a_race_cued_after_the_end_counts_once_a_correction_un_ends_the_game() -> None:
    """Round 1 ruled Red last: Blue won. A cue came after that (5 s) and Red slapped at 5.1 s:
    ignored while the game is over. The judge then gives Blue a penalty in round 1: 1 each, so
    sudden death, and that round is the sudden-death race, still open (to 8 s). Blue slaps at
    5.3 s: last by 200 ms; Red is champion."""
    rules = SpankThePig(TWO, {"deck": 2, "doubles": "off"})
    feed(rules, Cue(1 * S), Press(1 * S + 100 * MS, "Blue"), Press(1 * S + 200 * MS, "Red"))
    rules.advance(2 * S)
    assert rules.over and rules.standings().winners == ("Blue",)
    feed(rules, Cue(5 * S), Press(5 * S + 100 * MS, "Red"))
    assert not rules.status().race_open and rules.status().round == 1
    rules.take_changed()
    rules.feed(Penalty(1, "Blue", 1, "slapped the cow"))
    status = rules.status()
    assert not rules.over and status.race_open and status.round == 2
    assert rules.next_call() is None
    feed(rules, Press(5 * S + 300 * MS, "Blue"))
    rules.advance(6 * S)
    assert said(rules, 2) == [("Blue", 1, "last to spank the pig", 200 * MS)]
    assert rules.over and rules.standings().winners == ("Red",)
