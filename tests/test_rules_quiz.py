"""The quiz buzzer (a game file shipped inside the package) as table-log scenarios, one per rule
sentence of PRODUCT.md's "More slap games": a log in, the replay's lines out."""

from __future__ import annotations

from typing import Any

import pytest

from referee.events import Cue, Facts, Press
from referee.rules.registry import rules_for
from referee.store.tablelog import LogError
from tests.rules_log import facts, run

THREE = ["Ann", "Bob", "Cy"]
S = 1_000_000
MOMENT = 1_500_000  # "Next question." … "Buzzers!": the early window


def game(seats: list[str] = THREE, **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": "quiz", "seats": seats, "options": {"questions": 3, **options}}


def buzzers(q: int) -> dict[str, Any]:
    """Question q's "Buzzers!" at q × 30 s."""
    return {"type": "cue", "t_us": q * 30 * S}


def buzz(q: int, after_ms: float, seat: str) -> dict[str, Any]:
    """A buzz `after_ms` after question q's "Buzzers!" (negative: before it)."""
    return {"type": "press", "t_us": q * 30 * S + int(after_ms * 1000), "seat": seat}


def rulings(out: list[dict[str, Any]], round: int | None = None) -> list[tuple[Any, ...]]:
    return [(r["round"], r["seat"], r["delta"], r["reason"]) for r in out
            if r["type"] == "ruling" and (round is None or r["round"] == round)]


def asked(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in out if o["type"] == "awaiting"]


def points(out: list[dict[str, Any]]) -> dict[str, int]:
    return {r["seat"]: r["score"] for r in out[-1]["seats"]}


def test_the_first_buzzer_after_buzzers_is_named_and_the_judge_is_asked() -> None:
    out = run(game(), buzzers(1), buzz(1, 400, "Bob"), buzz(1, 700, "Ann"))
    assert rulings(out) == [(1, "Bob", 0, "buzzed first")]
    assert asked(out) == [{"type": "awaiting", "round": 1, "need": ["right"]}]


def test_right_earns_the_points_option() -> None:
    out = run(game(), buzzers(1), buzz(1, 400, "Bob"), facts(1, right="Bob"))
    assert rulings(out) == [(1, "Bob", 1, "answered right")]
    out = run(game(points=3), buzzers(1), buzz(1, 400, "Bob"), facts(1, right="Bob"))
    assert points(out)["Bob"] == 3


def test_wrong_loses_the_wrong_option_and_the_next_fastest_is_named() -> None:
    out = run(game(), buzzers(1), buzz(1, 400, "Bob"), buzz(1, 700, "Ann"), buzz(1, 900, "Cy"),
              facts(1, wrong=["Bob"]))
    assert rulings(out) == [(1, "Bob", 0, "answered wrong"), (1, "Ann", 0, "answers next")]
    assert asked(out) == [{"type": "awaiting", "round": 1, "need": ["right"]}]
    out = run(game(wrong=2), buzzers(1), buzz(1, 400, "Bob"), buzz(1, 700, "Ann"),
              facts(1, right="Bob"), buzzers(2), buzz(2, 300, "Bob"), buzz(2, 500, "Cy"),
              facts(2, wrong=["Bob"]), facts(2, right="Cy"))
    assert rulings(out, 2) == [(2, "Bob", -1, "answered wrong"),  # never below zero
                               (2, "Cy", 1, "answered right")]
    assert points(out) == {"Cy": 1, "Ann": 0, "Bob": 0}


def test_a_buzz_before_buzzers_locks_that_seat_out_of_the_question_with_no_penalty() -> None:
    out = run(game(), buzzers(1), buzz(1, -800, "Ann"), buzz(1, 200, "Ann"), buzz(1, 500, "Cy"))
    assert rulings(out) == [(1, "Ann", 0, "buzzed early: locked out"), (1, "Cy", 0, "buzzed first")]
    # after Cy's wrong answer nobody is left who may answer: Ann is locked out
    out = run(game(), buzzers(1), buzz(1, -800, "Ann"), buzz(1, 200, "Ann"), buzz(1, 500, "Cy"),
              facts(1, wrong=["Cy"]))
    assert rulings(out) == [(1, "Ann", 0, "buzzed early: locked out"),
                            (1, "Cy", 0, "answered wrong")]
    assert asked(out) == [] and points(out) == {"Ann": 0, "Bob": 0, "Cy": 0}
    # a buzz before the judge's "next" (outside the moment before "Buzzers!") is not early
    out = run(game(), buzzers(1), buzz(1, -MOMENT / 1000 - 100, "Ann"), buzz(1, 300, "Ann"))
    assert rulings(out) == [(1, "Ann", 0, "buzzed first")]


def test_too_close_between_the_first_two_buzzers_the_judge_picks() -> None:
    out = run(game(), buzzers(1), buzz(1, 300, "Ann"), buzz(1, 300.4, "Cy"))
    assert rulings(out) == [(1, None, 0, "too close to call")]
    assert asked(out) == [{"type": "awaiting", "round": 1, "need": ["right"]}]
    out = run(game(), buzzers(1), buzz(1, 300, "Ann"), buzz(1, 300.4, "Cy"), facts(1, right="Cy"))
    assert rulings(out) == [(1, None, 0, "too close to call"), (1, "Cy", 1, "answered right")]


def test_nobody_right_settles_the_question() -> None:
    out = run(game(), buzzers(1), buzz(1, 300, "Ann"), buzz(1, 600, "Bob"),
              facts(1, wrong=["Ann"]), facts(1, right=None))
    assert rulings(out) == [(1, "Ann", 0, "answered wrong")]
    assert asked(out) == []


def test_the_facts_are_the_seat_that_answered_right_or_null() -> None:
    cls = rules_for("quiz")
    right = cls.FACTS[0]
    assert (right.name, right.kind, right.ask, right.answers) == (
        "right", "seat", "Right or wrong?", ("Right", "Wrong"))
    with pytest.raises(LogError, match="'Dee' is not a seat"):
        run(game(), buzzers(1), buzz(1, 300, "Ann"), facts(1, right="Dee"))
    with pytest.raises(LogError, match="right must be a seat's name or null"):
        run(game(), buzzers(1), buzz(1, 300, "Ann"), facts(1, right=True))


def test_the_game_ends_after_the_questions_option_most_points_wins() -> None:
    lines = [game()]
    for q, seat in ((1, "Ann"), (2, "Bob"), (3, "Ann")):
        lines += [buzzers(q), buzz(q, 300, seat), facts(q, right=seat)]
    out = run(*lines, buzzers(4), buzz(4, 300, "Cy"))  # a fourth "Buzzers!" after the end
    assert out[-1]["final"] is True and out[-1]["winners"] == ["Ann"]
    assert points(out) == {"Ann": 2, "Bob": 1, "Cy": 0}
    assert rulings(out, 4) == []


def test_rounds_are_started_by_the_judge_and_there_is_no_quiet_pause() -> None:
    rules = rules_for("quiz")(THREE, {})
    pace = rules.schedule()
    assert pace.judge_starts and pace.quiet_rounds is None and pace.next_label == "Next question"
    assert rules.next_call() == ("call", None)
    assert rules.PHRASES["call"] == ("Next question.", "Buzzers!")
    assert pace.tempo_ms * 1000 == MOMENT  # "Buzzers!" a moment after the judge's next


def test_the_named_seat_is_lit_and_the_judges_marks_are_right_or_wrong_for_it() -> None:
    rules = rules_for("quiz")(THREE, {})
    rules.advance(30 * S)
    rules.feed(Cue(30 * S))
    rules.advance(30 * S + 300_000)
    rules.feed(Press(30 * S + 300_000, "Bob"))
    assert rules.lit(1) is None  # a later buzz might yet tie it
    rules.advance(30 * S + 400_000)
    rules.feed(Press(30 * S + 400_000, "Cy"))
    rules.advance(30 * S + 500_000)
    assert rules.lit(1) == "Bob"
    assert rules.judge_marks(1) == {"yes": {"right": "Bob"}, "no": {"wrong": ["Bob"]}}
    rules.feed(Facts(1, rules.judge_marks(1)["no"]))
    assert rules.lit(1) == "Cy"
    assert rules.judge_marks(1) == {"yes": {"right": "Cy"}, "no": {"wrong": ["Bob", "Cy"]}}
    rules.feed(Facts(1, rules.judge_marks(1)["yes"]))
    assert rules.lit(1) is None and rules.status().race_open is False
    assert rules.next_call() == ("call", None)  # the judge may start the next question


def test_a_buzz_after_the_first_is_named_is_said_to_wait_in_line_not_to_change_nothing() -> None:
    """The terminal echoed a later buzz as "late for round 1, already ruled: it changes nothing",
    and a moment later named that seat to answer after the first answered wrong."""
    rules = rules_for("quiz")(THREE, {})
    rules.advance(30 * S)
    rules.feed(Cue(30 * S))
    rules.advance(30 * S + 300_000)
    rules.feed(Press(30 * S + 300_000, "Bob"))
    rules.advance(30 * S + 600_000)
    assert rules.lit(1) == "Bob"
    note = rules.press_note("Cy", "slap", 30 * S + 700_000)
    assert note == ("in line to answer in round 1, 2nd to buzz: named if the answers before it "
                    "are wrong")
    rules.advance(30 * S + 700_000)
    rules.feed(Press(30 * S + 700_000, "Cy"))
    assert rules.press_note("Bob", "slap", 30 * S + 800_000) == (
        "late for round 1, already ruled: it changes nothing")  # the seat answering now
    rules.feed(Facts(1, {"wrong": ["Bob"]}))
    rules.advance(30 * S + 900_000)  # no buzz within the tie margin of Cy's
    assert rules.lit(1) == "Cy"  # as the note said
