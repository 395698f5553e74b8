"""The replay driver (`referee.rules.replay.drive`), the one path for `referee replay` and for
resuming a game from the database: time order, judge lines after, what it returns, and the
line it names when the rules refuse one (issue 17)."""

from __future__ import annotations

import pytest

from referee.events import Cue, Facts, GameStart, Penalty, Press, Undo
from referee.rules.pig import Pig
from referee.rules.replay import ReplayError, drive
from referee.rules.spank import SpankThePig

TWO = ("Blue", "Red")
S = 1_000_000


def test_drive_returns_the_latest_time_fed() -> None:
    assert drive(SpankThePig(TWO), []) == 0
    assert drive(SpankThePig(TWO), [(2, Cue(5 * S)), (3, Press(5 * S + 7, "Blue")),
                                    (4, Facts(1, {"pigs": 0}))]) == 5 * S + 7
    # presses out of line order: the latest in time, not the last line
    assert drive(SpankThePig(TWO), [(2, Cue(5 * S)), (3, Press(6 * S, "Red")),
                                    (4, Press(5 * S + 100, "Blue"))]) == 6 * S


def test_cues_out_of_line_order_are_fed_in_time_order() -> None:
    """Timed events go in by t_us, whatever their lines' order: a log whose second cue is
    written first is the same game (fed by line, the rules would refuse the earlier cue)."""
    rules = SpankThePig(TWO, {"doubles": "off"})
    drive(rules, [(2, Cue(5 * S)), (3, Press(5 * S + 100_000, "Blue")),
                  (4, Cue(1 * S)), (5, Press(1 * S + 100_000, "Red")),
                  (6, Press(1 * S + 200_000, "Blue")), (7, Press(5 * S + 200_000, "Red"))])
    assert [(r.round, r.seat) for r in rules.outputs()] == [(1, "Blue"), (2, "Red")]


def test_judge_lines_come_after_every_timed_event() -> None:
    """A correction written before the round's presses still judges the round they make."""
    rules = SpankThePig(TWO, {"doubles": "off"})
    drive(rules, [(2, Cue(1 * S)), (3, Facts(1, {"pigs": 0})),
                  (4, Press(1 * S + 100_000, "Red")), (5, Press(1 * S + 300_000, "Blue"))])
    assert [(r.seat, r.delta, r.margin_us) for r in rules.outputs()] == [("Red", 1, 200_000)]


def test_a_resumed_game_leaves_its_open_race_open() -> None:
    rules = SpankThePig(TWO, {"doubles": "off"})
    drive(rules, [(2, Cue(1 * S)), (3, Press(1 * S + 100_000, "Red")),
                  (4, Press(1 * S + 300_000, "Blue"))], finish=False)
    assert rules.status().race_open and rules.outputs() == []  # settles 1 ms after Blue
    drive(rules, [], finish=True)
    assert [(r.seat, r.delta) for r in rules.outputs()] == [("Blue", 1)]


@pytest.mark.parametrize(("lines", "line", "message"), [
    ([(2, Cue(5)), (3, Press(6, "Mauve"))], 3, "seat 'Mauve' is not at this table (Blue, Red)"),
    ([(2, Cue(5, "Mauve"))], 2, "seat 'Mauve' is not at this table (Blue, Red)"),
    ([(2, GameStart("spank-the-pig", TWO, {}))], 2,
     "a second game line; a log holds exactly one game"),
    ([(2, Cue(5)), (3, Facts(2, {"pigs": 1}))], 3,
     "round 2 has no cue before this line (cues so far: 1)"),
    ([(2, Penalty(1, "Red", 1, "peeked")), (3, Cue(5))], 2,
     "round 1 has no cue before this line (cues so far: 0)"),
    ([(2, Cue(5)), (3, Undo())], 3, "undo: there is no judge action left to undo"),
])
def test_the_refused_line_is_named(lines: list, line: int, message: str) -> None:
    with pytest.raises(ReplayError) as info:
        drive(SpankThePig(TWO), lines)
    assert (info.value.line, info.value.message) == (line, message)
    assert str(info.value) == f"line {line}: {message}"


def test_pig_a_judge_line_before_the_claim_it_judges_is_named() -> None:
    lines = [(2, Facts(1, {"claim": False})), (3, Press(1 * S, "Blue"))]
    with pytest.raises(ReplayError) as info:
        drive(Pig(("Blue", "Red", "Green")), lines)
    assert str(info.value) == ("line 2: round 1 is opened by the press on line 3, after this "
                               "line; a judge line comes after the claim it judges")
    rules = Pig(("Blue", "Red", "Green"))
    drive(rules, [(2, Press(1 * S, "Blue")), (3, Facts(1, {"claim": False}))])
    assert [(r.seat, r.delta) for r in rules.outputs()] == [("Blue", 1)]


def test_a_log_driven_in_pieces_counts_the_cues_of_the_pieces_before() -> None:
    """The live history feeds a growing log piece by piece: a judge line in a later piece may
    name a round whose cue came in an earlier one, and no later round."""
    rules = SpankThePig(TWO, {"doubles": "off"})
    drive(rules, [(2, Cue(1 * S)), (3, Press(1 * S + 100_000, "Red"))], finish=False)
    drive(rules, [(4, Facts(1, {"pigs": 0}))], cues_before=1)
    assert [(r.seat, r.delta) for r in rules.outputs()] == [("Red", 1)]
    with pytest.raises(ReplayError) as info:
        drive(rules, [(5, Facts(2, {"pigs": 0}))], cues_before=1)
    assert str(info.value) == "line 5: round 2 has no cue before this line (cues so far: 1)"


def test_a_logs_judge_lines_re_rule_the_game_once_not_once_each(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty-four judge lines after a whole game re-rule it once, from the earliest round they
    name (each re-ruling from its round to the last made a long log's replay quadratic: 1000
    rounds took 5 s instead of 0.1 s)."""
    seats = ("Blue", "Red", "Green")
    timed: list[tuple[int, Cue | Press | Penalty]] = []
    for n in range(24):  # a 72-card deck at three seats: 24 rounds; Green last every time
        t = (n + 1) * 10 * S
        timed.append((len(timed) + 2, Cue(t)))
        timed += [(len(timed) + 2, Press(t + 100_000 + 10_000 * i, seat))
                  for i, seat in enumerate(seats)]
    judged = [(len(timed) + 2 + n, Penalty(n + 1, "Blue", 1, "slapped the hippo"))
              for n in range(24)]

    def folds_of(lines: list[tuple[int, Cue | Press | Penalty]]) -> tuple[int, SpankThePig]:
        rules = SpankThePig(seats, {"doubles": "off"})
        starts: list[int] = []
        real = rules._fold
        monkeypatch.setattr(rules, "_fold", lambda start: (starts.append(start), real(start))[1])
        drive(rules, lines)
        return len(starts), rules

    without, _ = folds_of(timed)
    with_judge, rules = folds_of(timed + judged)
    assert with_judge - without <= 1  # the judge lines: one re-ruling
    assert {r.seat: r.score for r in rules.standings().seats} == {"Blue": 24, "Red": 0,
                                                                  "Green": 24}
