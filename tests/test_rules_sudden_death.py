"""Spank the Pig!'s sudden death as table-log scenarios (issue 23): each log in, the replay's
lines out, as `referee replay` prints them.

- The race window closes at the first of cue + `window_ms`, every active seat having pressed plus
  `tie_us`, and the start of the next round's early window: also when a judge's line, read after
  every press, is what sends the table into sudden death (the next round's slaps never count in
  the earlier one).
"""

from __future__ import annotations

from typing import Any

from tests.rules_log import MS, S, cue, facts, game, press, rulings, run

TWO = ["Blue", "Red"]


def penalty(round: int, seat: str, count: int = 1) -> dict[str, Any]:
    return {"type": "penalty", "round": round, "seat": seat, "count": count, "reason": "peeked"}


def final(out: list[dict[str, Any]]) -> tuple[bool, list[str], list[tuple[str, int, int, bool]]]:
    st = out[-1]
    return st["final"], st["winners"], [(r["seat"], r["score"], r["place"], r["out"])
                                        for r in st["seats"]]


def test_a_penalty_that_ties_the_leaders_cuts_the_sudden_death_window_at_the_next_early_window(
) -> None:
    """One regular round: Red last, Blue alone ahead; the judge's penalty (a line read after
    every press) gives Blue a whammy too: 1 each, sudden death. Round 2 (cue 5 s): nobody slaps
    before round 3's early window opens (6 s): a clean round. Round 3 (cue 7 s): Red slaps early
    (6.5 s) and is out; Blue is champion. Counted in round 2's window (to 8 s), Red's early slap
    and Blue's 7.1 s slap made Blue last and out, and Red champion."""
    out = run(game("spank-the-pig", TWO, deck=2, doubles="off"),
              cue(1 * S), press(1 * S + 100 * MS, "Blue"), press(1 * S + 200 * MS, "Red"),
              cue(5 * S),
              press(6 * S + 500 * MS, "Red"),
              cue(7 * S), press(7 * S + 100 * MS, "Blue"), press(7 * S + 300 * MS, "Red"),
              penalty(1, "Blue"))
    assert rulings(out, 2) == []
    assert rulings(out, 3) == [(3, "Red", 1, "slap too early", None),
                               (3, "Red", 1, "last to spank the pig", 200 * MS)]
    assert final(out) == (True, ["Blue"], [("Blue", 1, 1, False), ("Red", 3, 2, True)])


def test_a_penalty_that_ties_the_leaders_cuts_the_sudden_death_window_at_the_next_cue() -> None:
    """No early window (`early_ms` 0): round 2's window ends at round 3's cue (7 s). Nobody
    slapped in round 2: clean. Round 3: both slap, and the judge says there was no pig: Red,
    first to slap, is out; Blue is champion. Counted in round 2 (to 8 s), the same slaps made
    Blue last to a pig and out, and Red champion."""
    out = run(game("spank-the-pig", TWO, deck=2, doubles="off", early_ms=0),
              cue(1 * S), press(1 * S + 100 * MS, "Blue"), press(1 * S + 200 * MS, "Red"),
              cue(5 * S),
              cue(7 * S), press(7 * S + 100 * MS, "Red"), press(7 * S + 200 * MS, "Blue"),
              facts(3, pigs=0),
              penalty(1, "Blue"))
    assert rulings(out, 2) == []
    assert rulings(out, 3) == [(3, "Red", 1, "first to slap with no pig", 100 * MS)]
    assert final(out) == (True, ["Blue"], [("Blue", 1, 1, False), ("Red", 2, 2, True)])


def test_a_cue_after_the_end_still_cuts_nothing() -> None:
    """Unchanged: with no penalty, Blue wins the regular round and the cues after it are
    ignored; a slap in their windows changes nothing."""
    out = run(game("spank-the-pig", TWO, deck=2, doubles="off"),
              cue(1 * S), press(1 * S + 100 * MS, "Blue"), press(1 * S + 200 * MS, "Red"),
              cue(5 * S), press(5 * S + 100 * MS, "Red"),
              cue(7 * S), press(6 * S + 500 * MS, "Blue"))
    assert rulings(out) == [(1, "Red", 1, "last to spank the pig", 100 * MS)]
    assert final(out) == (True, ["Blue"], [("Blue", 0, 1, False), ("Red", 1, 2, False)])
