"""The judge's keypad as the engine decides it, on the simulated clock (issue 17, points 1 and 3).

UNDO reaches back exactly one round (the current or the previous one) and no further (what it
reverts, a judge action or a round ruled from presses alone, tests/test_undo_live.py); YES and NO
answer the question the current round asks with the game's own yes and no values; with nothing
asked, NO pauses and YES starts play again. Each case has its sibling on the other side of the
rule, so a keypad that undid one round too far, or answered the wrong way round, is seen.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from referee.events import Penalty
from tests.harness import Sim

SEATS = ["Blue", "Red", "Green"]
OPTIONS = {"deck": "72", "tempo_ms": "100", "window_ms": "1000", "doubles": "off",
           "pause_ms": "100"}


def play_round(s: Sim, order: list[str]) -> int:
    """One round started by hand, slapped in `order`, ruled; returns its number."""
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    for i, seat in enumerate(order):
        s.press(seat, cue + 100 + 10 * i)
    number = engine.rules.round_count()
    s.run_until(lambda: number in engine.announced, limit_ms=3000, step_ms=10)
    return number


def said(s: Sim) -> list[str]:
    return [key for key, _, _ in s.voice.said]


def key(s: Sim, name: str) -> None:
    s.press("judge", s.t_ms + 1, button=name)
    s.run_to(s.t_ms + 50, step_ms=10)


@pytest.mark.parametrize(("rounds_after", "undone"), [(0, True), (1, True), (2, False)])
def test_keypad_undo_reaches_back_exactly_one_round(
        sim: Callable[..., Sim], rounds_after: int, undone: bool) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    penalised = play_round(s, ["Blue", "Red", "Green"])
    s.command("feed", event=Penalty(penalised, "Blue", 1, "slapped the hippo"))
    for _ in range(rounds_after):
        play_round(s, [])  # a clean round: no score changed, nothing of it to undo
    before = len(engine.rules.judge_log)
    key(s, "undo")
    assert ("nothing_to_undo" in said(s)) is not undone
    blue = {r.seat: r.score for r in engine.rules.standings().seats}["Blue"]
    assert blue == (0 if undone else 1)
    assert len(engine.rules.judge_log) == before - (1 if undone else 0)


def test_keypad_undo_with_nothing_that_changed_the_score_says_so(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, [])  # nobody slapped: no pig, a clean round
    key(s, "undo")
    assert said(s)[-1] == "nothing_to_undo"


@pytest.mark.parametrize(("answer", "pigs", "ruled"), [("yes", 1, "Green"), ("no", 0, "Blue")])
def test_yes_and_no_answer_the_question_of_the_round(
        sim: Callable[..., Sim], answer: str, pigs: int, ruled: str) -> None:
    """Blue and Red slap, Green does not: the judge is asked "pig or no pig?". YES: a pig, Green
    (who never slapped) is last; NO: no pig, Blue's first slap was the mistake."""
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    number = play_round(s, ["Blue", "Red"])
    assert engine.rules.status().awaiting is not None
    key(s, answer)
    assert engine.rules.status().awaiting is None
    facts = [e for e in engine.rules.judge_log]
    assert len(facts) == 1 and facts[0].round == number
    rulings = [o for o in engine.rules.round_outputs(number) if hasattr(o, "delta")]
    assert [(r.seat, r.delta) for r in rulings] == [(ruled, 1)]
    assert not engine.paused  # an answer is no pause


def test_with_nothing_asked_no_pauses_and_yes_plays_on(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.rules.round_count() == 1 and engine.cue_us is None,
                limit_ms=5000, step_ms=10)
    key(s, "no")
    s.run_until(lambda: engine.paused and engine.snapshot()["phase"] == "paused",
                limit_ms=5000, step_ms=10)  # once the round in hand is ruled
    rounds = engine.rules.round_count()
    s.run_to(s.t_ms + 10_000)
    assert engine.rules.round_count() == rounds  # nothing is called while paused
    key(s, "yes")
    assert "count_in" in said(s)
    s.run_until(lambda: engine.rules.round_count() == rounds + 1, limit_ms=10_000)
