"""Pig and Pig's Tail played whole through the engine on mocked pins, then replayed from export.

The engine runs on a simulated clock (tests/harness.py): presses land at the milliseconds the test
picks, so every outcome is exact and a 52-flip game takes a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from referee.events import Facts
from referee.voice.phrases import words
from tests.harness import Sim


def rulings(s: Sim, number: int) -> list[dict[str, Any]]:
    """The rulings the engine published for round `number` (the latest publication)."""
    found = [d for k, d in s.published if k == "ruling" and d["round"] == number]
    assert found, f"no ruling published for round {number}"
    return list(found[-1]["rulings"])


def test_pig_whole_game_is_silent_at_claims_and_replays(sim: Callable[..., Sim]) -> None:
    s = sim(["Blue", "Red", "Green", "Yellow"], {"window_ms": "1000", "lives": "1"}, game="pig",
            auto=True)
    engine = s.engine
    assert engine is not None
    s.run_to(100)
    said_before = list(s.voice.said)
    assert [key for key, _, _ in said_before] == ["deal_sets", "variant_rule"]  # how to deal
    # round 1: Blue claims; the scoreboard and the voice give nothing away
    s.press("Blue", 100)
    s.run_to(150)
    snap = engine.snapshot()
    assert snap["phase"] in ("setup", "ruled") and snap["round"] == 0
    assert list(s.voice.said) == said_before
    s.press("Red", 160)
    s.press("Green", 170)
    s.run_to(1200)  # round 1's window (1 s from the claim) runs out
    assert [(r["seat"], r["delta"]) for r in rulings(s, 1)] == [("Yellow", 1)]
    # round 2: Red claims, Green follows; Blue is last
    s.press("Red", 1300)
    s.press("Green", 1310)
    s.run_until(lambda: any(k == "over" for k, _ in s.published), limit_ms=5000)
    final = s.check_log_replays_to_live()
    assert final["final"] is True and sorted(final["winners"]) == ["Green", "Red"]
    assert {r["seat"]: r["out"] for r in final["seats"]} == {
        "Red": False, "Green": False, "Blue": True, "Yellow": True}


def test_pig_false_claim_is_judged(sim: Callable[..., Sim]) -> None:
    s = sim(["Blue", "Red", "Green"], {"window_ms": "1000", "lives": "3"}, game="pig", auto=True)
    s.press("Blue", 100)  # a claim nobody follows
    s.run_to(1200)
    assert [(r["seat"], r["delta"]) for r in rulings(s, 1)] == [(None, 0)]  # nobody followed
    s.command("feed", event=Facts(1, {"claim": False}))
    assert [(r["seat"], r["delta"]) for r in rulings(s, 1) if r["type"] == "ruling"] == [
        ("Blue", 1)]
    s.check_log_replays_to_live()


@pytest.mark.parametrize("take", ["flipper", "slowest"])
def test_pigs_tail_whole_game_of_52_flips_replays(sim: Callable[..., Sim], take: str) -> None:
    """Every fifth card is a match: the flipper claims it (`flipper`), or everyone taps with Red
    last (`slowest`). Seats flip in turn, so Blue flips the odd cards and Red the even ones."""
    s = sim(["Blue", "Red"], {"take": take, "turn_ms": "200", "tempo_ms": "60",
                              "window_ms": "120", "tie_us": "1000", "pause_ms": "200"},
              game="pigs-tail", auto=True)
    engine = s.engine
    assert engine is not None
    seen_round = 0
    breaks = 0
    while not engine.rules.status().over:
        assert s.t_ms < 60_000, "52 flips take 52 turns of 200 ms"
        s.run_to(s.t_ms + 5, step_ms=5)
        snap = engine.snapshot()
        if snap["phase"] == "paused" and engine.rhythm.phase == "paused":
            breaks += 1  # three turns without a press: the table paused itself
            s.press("Red", s.t_ms)  # a press resumes (after a count-in); it is no tap
            continue
        if snap["phase"] != "race" or snap["round"] == seen_round:
            continue
        seen_round = snap["round"]
        if seen_round % 5 == 0:  # a match
            if take == "flipper":
                s.press(engine.rules.seats[(seen_round - 1) % 2], s.t_ms)
            else:
                s.press("Blue", s.t_ms)
                s.run_to(s.t_ms + 10, step_ms=5)
                s.press("Red", s.t_ms)
    s.run_until(lambda: any(k == "over" for k, _ in s.published), limit_ms=5000)
    # four flips in a row without a press is a table playing: it never pauses itself
    assert breaks == sum(1 for key, _, _ in s.voice.said if key == "quiet_table") == 0
    turns = [(key, params) for key, params, _ in s.voice.said if key == "turn"]
    assert turns == [("turn", {"seat": "Blue" if n % 2 else "Red"}) for n in range(1, 53)]
    assert words("turn", {"seat": "Blue"}, book=s.voice.book) == ["Blue,", "flip!"]
    final = s.check_log_replays_to_live()
    assert final["final"] is True
    assert sum(1 for line in s.exported() if '"type": "cue"' in line) == 52
    scores = {r["seat"]: r["score"] for r in final["seats"]}
    if take == "flipper":  # ten claims of a five-card pile; the last two cards stay
        assert scores == {"Blue": 25, "Red": 25} and sorted(final["winners"]) == ["Blue", "Red"]
    else:  # Red is last at every match: ten piles of five
        assert scores == {"Blue": 0, "Red": 50} and final["winners"] == ["Blue"]
