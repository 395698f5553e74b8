"""Every ruling right at the edges (issue 12): one table-log scenario per amended spec sentence.

Each test names the sentence of PRODUCT.md it checks in its docstring; the log goes through
`replay`, the same path as `referee replay`, and the lines that come out are checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.events import GameStart
from referee.store.tablelog import LogError, new_rules, replay

FOUR = ["Blue", "Red", "Green", "Yellow"]
FIVE = [*FOUR, "Purple"]
MS = 1000


def game(name: str = "spank-the-pig", seats: list[str] = FOUR, **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": name, "seats": seats, "options": options}


def spank(seats: list[str] = FOUR, **options: Any) -> dict[str, Any]:
    options.setdefault("doubles", "off")
    return game("spank-the-pig", seats, **options)


def cue(t_ms: float, seat: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "cue", "t_us": round(t_ms * MS)}
    if seat is not None:
        line["seat"] = seat
    return line


def press(t_ms: float, seat: str, button: str = "slap") -> dict[str, Any]:
    return {"type": "press", "t_us": round(t_ms * MS), "seat": seat, "button": button}


def facts(round: int, **values: Any) -> dict[str, Any]:
    return {"type": "facts", "round": round, **values}


def penalty(round: int, seat: str, count: int = 1, reason: str = "slapped the hippo") -> dict[str, Any]:
    return {"type": "penalty", "round": round, "seat": seat, "count": count, "reason": reason}


def run(*lines: dict[str, Any], **overrides: Any) -> list[dict[str, Any]]:
    return replay([json.dumps(x) for x in lines], overrides).lines()


def rulings(out: list[dict[str, Any]], round: int | None = None) -> list[tuple[Any, ...]]:
    return [(r["round"], r["seat"], r["delta"], r["reason"]) for r in out
            if r["type"] == "ruling" and (round is None or r["round"] == round)]


def margins(out: list[dict[str, Any]], round: int | None = None) -> list[int | None]:
    return [r["margin_us"] for r in out
            if r["type"] == "ruling" and (round is None or r["round"] == round)]


def scores(out: list[dict[str, Any]]) -> dict[str, int]:
    return {row["seat"]: row["score"] for row in out[-1]["seats"]}


def awaiting(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [x for x in out if x["type"] == "awaiting"]


def bad_line(*lines: dict[str, Any]) -> str:
    with pytest.raises(LogError) as info:
        run(*lines)
    return str(info.value)


# -- 1. Margins are between different seats ------------------------------------------------------


def test_no_pig_early_and_again_after_the_cue_is_not_compared_with_itself() -> None:
    """"First to be wrong", "last", "first p" and every margin compare distinct seats, each by
    its first counting press. With no pig, Blue slaps early and again after the cue: Blue is the
    first to be wrong, with no margin: an early slap competes only with other early slaps (the
    spec, "Early presses"), never with a race slap, Blue's own second one included."""
    lines = [spank(), press(800, "Blue"), cue(1000), press(1100, "Blue"), press(1300, "Red"),
             facts(1, pigs=0)]
    out = run(*lines)
    assert rulings(out) == [(1, "Blue", 1, "slap too early")]
    assert margins(out) == [None]
    # a wide tie threshold (400 ms) does not make it "too close to call": the margin is 500 ms
    assert rulings(run(*lines, tie_us=400_000)) == [(1, "Blue", 1, "slap too early")]


def test_no_pig_race_slaps_only_a_seats_first_counts_for_the_margin() -> None:
    """Only a seat's first press of each button in a round counts: Red's second slap is not the
    runner-up of "first to slap with no pig"; Green's slap is."""
    out = run(spank(), cue(1000), press(1100, "Red"), press(1100.5, "Red"), press(1400, "Green"),
              facts(1, pigs=0))
    assert rulings(out) == [(1, "Red", 1, "first to slap with no pig")]
    assert margins(out) == [300 * MS]


def test_two_early_slappers_compare_their_first_early_slaps() -> None:
    """An early slap is the one exception to one-press-per-button: it and the seat's next slap
    both count, but two early slaps of one seat are still one early slap."""
    out = run(spank(), press(500, "Red"), press(600, "Red"), press(650, "Blue"), cue(1000),
              press(1100, "Red"), press(1150, "Blue"), press(1200, "Green"), press(1250, "Yellow"))
    assert rulings(out, 1)[0] == (1, "Red", 1, "slap too early")
    assert margins(out, 1)[0] == 150 * MS  # Blue's 650 − Red's 500, not Red's 600 − 500
    assert rulings(out, 1)[1] == (1, "Yellow", 1, "last to spank the pig")


# -- 2. Clear membership -------------------------------------------------------------------------


def test_clear_membership_a_tie_at_the_pth_place_does_not_stop_a_seat_clearly_in() -> None:
    """Seat s is among the first p when at most p − 1 other seats pressed before s or less than
    tie_us after it. Three pigs: Blue 1100, Red 1299.5, Green 1300.0, Yellow 1300.8: Red has only
    Blue and Green before or within 1 ms after it, so Red is in; Green and Yellow are neither in
    nor out: too close to call, nothing happens to them."""
    out = run(spank(), cue(1000), press(1100, "Blue"), press(1299.5, "Red"), press(1300.0, "Green"),
              press(1300.8, "Yellow"), facts(1, pigs=3))
    named = [(seat, reason) for _, seat, _, reason in rulings(out)]
    assert ("Blue", "first to spank a pig, no whammy to shed") in named
    assert ("Red", "first to spank a pig, no whammy to shed") in named
    assert (None, "too close to call") in named
    assert not [s for s, _ in named if s in ("Green", "Yellow")]


def test_clear_membership_out_needs_p_seats_clearly_before() -> None:
    """It is out of the group when at least p other seats pressed at least tie_us before it.
    Three pigs, five seats: Purple, 5 ms after the third, is clearly out; the first three are in."""
    out = run(spank(FIVE), cue(1000), press(1100, "Blue"), press(1150, "Red"),
              press(1200, "Green"), press(1205, "Yellow"), press(1400, "Purple"), facts(1, pigs=3))
    assert [s for _, s, _, _ in rulings(out)] == ["Blue", "Red", "Green"]


def test_clear_membership_exactly_tie_us_apart_is_clear() -> None:
    """A margin of exactly tie_us is clear (only a margin under it is too close)."""
    out = run(spank(FIVE), cue(1000), press(1100, "Blue"), press(1150, "Red"),
              press(1200, "Green"), press(1201, "Yellow"), press(1400, "Purple"), facts(1, pigs=3))
    assert [s for _, s, _, _ in rulings(out)] == ["Blue", "Red", "Green"]
    out = run(spank(FIVE), cue(1000), press(1100, "Blue"), press(1150, "Red"),
              press(1200, "Green"), press(1200.999, "Yellow"), press(1400, "Purple"),
              facts(1, pigs=3))
    assert [s for _, s, _, _ in rulings(out)] == ["Blue", "Red", None]


def test_the_last_slapper_is_the_same_rule_from_the_other_end() -> None:
    """(The last slapper is the same rule with p = seats − 1 from the other end.) Yellow is last
    only when all three others pressed at least tie_us before it."""
    base = [spank(), cue(1000), press(1100, "Blue"), press(1200, "Red"), press(1299.2, "Green")]
    assert rulings(run(*base, press(1300, "Yellow"))) == [(1, None, 0, "too close to call")]
    assert rulings(run(*base, press(1300.2, "Yellow"))) == [(1, "Yellow", 1, "last to spank the pig")]


# -- 3. Identical edge times -----------------------------------------------------------------------


def test_identical_last_slaps_are_too_close_whatever_tie_us() -> None:
    """Identical edge times (a margin of 0 µs) are always too close to call, whatever tie_us is."""
    out = run(spank(tie_us=0), cue(1000), press(1100, "Blue"), press(1200, "Red"),
              press(1300, "Green"), press(1300, "Yellow"))
    assert rulings(out) == [(1, None, 0, "too close to call")]
    assert margins(out) == [0]
    # with tie_us = 0 one microsecond is enough
    out = run(spank(tie_us=0), cue(1000), press(1100, "Blue"), press(1200, "Red"),
              press(1300, "Green"), press(1300.001, "Yellow"))
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig")]


def test_identical_first_wrong_slaps_are_too_close_whatever_tie_us() -> None:
    """Identical edge times are always too close to call: two seats slapping at the same
    microsecond with no pig."""
    out = run(spank(tie_us=0), cue(1000), press(1100, "Red"), press(1100, "Blue"), facts(1, pigs=0))
    assert rulings(out) == [(1, None, 0, "too close to call")]


def test_identical_times_at_the_group_boundary_are_too_close() -> None:
    """Identical edge times are always too close to call, also at the p-th place."""
    out = run(spank(FIVE, tie_us=0), cue(1000), press(1100, "Blue"), press(1150, "Red"),
              press(1200, "Green"), press(1200, "Yellow"), press(1400, "Purple"), facts(1, pigs=3))
    assert [s for _, s, _, _ in rulings(out)] == ["Blue", "Red", None]


def test_pig_identical_photo_finish_with_tie_zero_is_too_close() -> None:
    """Pig: when all but one have pressed the remaining seat loses — unless it pressed at the
    very same microsecond as the last of the others: identical times are too close to call."""
    out = run(game("pig", FOUR, tie_us=0), press(100, "Blue"), press(300, "Red"),
              press(500, "Green"), press(500, "Yellow"))
    assert rulings(out) == [(1, None, 0, "too close to call")]


def test_pigs_tail_identical_last_taps_with_tie_zero_are_too_close() -> None:
    """Pig's Tail slowest: too close to call between the last two tappers, identical or not."""
    out = run(game("pigs-tail", ["Blue", "Red", "Green"], take="slowest", tie_us=0),
              cue(4000, "Blue"), cue(8000, "Red"), press(8300, "Blue"), press(8500, "Red"),
              press(8500, "Green"))
    assert rulings(out, 2) == [(2, None, 0, "too close to call")]


def test_pigs_tail_identical_false_starts_with_tie_zero_are_too_close() -> None:
    """Pig's Tail slowest: the first false-start tapper takes the pile, unless identical."""
    out = run(game("pigs-tail", ["Blue", "Red", "Green"], take="slowest", tie_us=0),
              cue(4000, "Blue"), cue(8000, "Red"), press(8300, "Blue"), press(8300, "Green"),
              facts(2, match=False))
    assert rulings(out, 2) == [(2, None, 0, "too close to call")]


# -- 4. The early window and the race window ---------------------------------------------------------


def test_early_ms_defaults_to_the_cadence_two_tempos() -> None:
    """early_ms defaults to the cadence's own length, 2 × tempo_ms (1000 at the default tempo)."""
    assert new_rules(GameStart("spank-the-pig", tuple(FOUR), {})).options["early_ms"] == 1000
    rules = new_rules(GameStart("spank-the-pig", tuple(FOUR), {"tempo_ms": 700}))
    assert rules.options["early_ms"] == 1400
    # a press 1200 ms before the cue at the default tempo is between rounds: ignored
    out = run(spank(), press(800, "Red"), cue(2000), press(2100, "Blue"), press(2150, "Red"),
              press(2200, "Green"), press(2250, "Yellow"))
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig")]


def test_early_window_boundaries() -> None:
    """A press in the early_ms before the go-word is early; one before that is ignored; a press
    at the go-word itself is in the race."""
    tail = [press(2100, "Blue"), press(2150, "Red"), press(2200, "Green"), press(2250, "Yellow")]
    at_start = run(spank(), press(1000, "Red"), cue(2000), *tail)
    assert rulings(at_start)[0] == (1, "Red", 1, "slap too early")
    before = run(spank(), press(999.999, "Red"), cue(2000), *tail)
    assert rulings(before) == [(1, "Yellow", 1, "last to spank the pig")]
    at_cue = run(spank(), cue(2000), press(2000, "Red"), *tail[:1], *tail[2:])
    assert rulings(at_cue) == [(1, "Yellow", 1, "last to spank the pig")]


def test_race_window_closes_at_the_next_rounds_early_window() -> None:
    """The race window closes at the first of: cue + window_ms; every active seat having pressed;
    the start of the next round's early window. Yellow's slap 500 ms before the next cue is that
    round's early slap, not a late slap of the round before (which Yellow never slapped in)."""
    out = run(spank(window_ms=10_000), cue(1000), press(1100, "Blue"), press(1200, "Red"),
              press(1300, "Green"), facts(1, pigs=1), press(3500, "Yellow"), cue(4000),
              press(4100, "Blue"), press(4150, "Red"), press(4200, "Green"), press(4250, "Yellow"))
    assert rulings(out, 1) == [(1, "Yellow", 1, "last to spank the pig")]
    assert margins(out, 1) == [None]  # never slapped: no margin (closed at 4000 − 1000 ms)
    assert rulings(out, 2) == [(2, "Yellow", 1, "slap too early"),
                               (2, "Yellow", 1, "last to spank the pig")]


def test_a_press_at_the_start_of_the_next_early_window_is_early_not_late() -> None:
    """The window closes at the start of the next early window: a press at that very instant
    belongs to the next round."""
    out = run(spank(window_ms=10_000), cue(1000), press(1100, "Blue"), press(1200, "Red"),
              press(1300, "Green"), press(2999.999, "Yellow"), cue(4000))
    assert rulings(out, 1) == [(1, "Yellow", 1, "last to spank the pig")]
    assert margins(out, 1) == [2999_999 - 1300_000]  # Yellow's own late slap
    assert rulings(out, 2) == []
    out = run(spank(window_ms=10_000), cue(1000), press(1100, "Blue"), press(1200, "Red"),
              press(1300, "Green"), facts(1, pigs=1), press(3000, "Yellow"), cue(4000))
    assert rulings(out, 1) == [(1, "Yellow", 1, "last to spank the pig")]
    assert margins(out, 1) == [None]  # never slapped before the close at 3000: no margin
    assert rulings(out, 2) == [(2, "Yellow", 1, "slap too early")]


def test_presses_between_rounds_are_ignored() -> None:
    """Presses between rounds, outside every race window and early window, are ignored."""
    out = run(spank(), cue(1000), press(1100, "Blue"), press(1200, "Red"), press(1300, "Green"),
              press(1400, "Yellow"), press(1500, "Blue"), press(2000, "Red"), cue(5000),
              press(5100, "Blue"), press(5200, "Red"), press(5300, "Green"), press(5400, "Yellow"))
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig"),
                            (2, "Yellow", 1, "last to spank the pig")]


def test_race_window_waits_for_every_raced_button() -> None:
    """Every active seat having pressed every button the round races on, plus tie_us: with the
    double buttons the window stays open until the doubles are pressed too."""
    out = run(spank(doubles="buttons"), cue(1000), press(1100, "Blue"), press(1200, "Red"),
              press(1300, "Green"), press(1400, "Yellow"), press(2500, "Green", "double"),
              facts(1, doubles=[]))
    assert (1, "Green", 1, "first to declare a double with no double") in rulings(out)


# -- 5. Scores inside a round ----------------------------------------------------------------------


def test_a_shed_before_a_whammy_in_the_same_round_sheds_nothing() -> None:
    """Within one round, rulings apply in the time order of the presses that earned them: Blue,
    with no whammy, sheds first (nothing to shed: delta 0) and is last to declare the double
    afterwards (1 whammy) — Blue ends the round with 1, not 0."""
    out = run(spank(doubles="buttons"), cue(1000),
              press(1100, "Blue"), press(1150, "Red"), press(1200, "Green"), press(1300, "Yellow"),
              press(1400, "Red", "double"), press(1450, "Green", "double"),
              press(1500, "Yellow", "double"), press(1600, "Blue", "double"),
              facts(1, pigs=3, doubles=["cow"]))
    assert (1, "Blue", 0, "first to spank a pig, no whammy to shed") in rulings(out)
    assert (1, "Blue", 1, "last to declare the double") in rulings(out)
    assert scores(out)["Blue"] == 1


def test_an_early_whammy_can_be_shed_later_in_the_same_round() -> None:
    """A whammy taken earlier in the round (an early slap) can be shed later in the same round."""
    out = run(spank(), press(900, "Blue"), cue(1000), press(1100, "Blue"), press(1150, "Red"),
              press(1200, "Green"), press(1300, "Yellow"), facts(1, pigs=3))
    assert rulings(out) == [
        (1, "Blue", 1, "slap too early"),
        (1, "Blue", -1, "first to spank a pig"),
        (1, "Red", 0, "first to spank a pig, no whammy to shed"),
        (1, "Green", 0, "first to spank a pig, no whammy to shed"),
    ]
    assert scores(out)["Blue"] == 0


def test_judge_penalties_apply_after_the_races() -> None:
    """...and judge penalties after them: a penalty does not give a seat a whammy to shed in the
    same round."""
    out = run(spank(), cue(1000), press(1100, "Blue"), press(1150, "Red"), press(1200, "Green"),
              press(1300, "Yellow"), facts(1, pigs=3), penalty(1, "Blue"))
    assert rulings(out) == [
        (1, "Blue", 0, "first to spank a pig, no whammy to shed"),
        (1, "Red", 0, "first to spank a pig, no whammy to shed"),
        (1, "Green", 0, "first to spank a pig, no whammy to shed"),
        (1, "Blue", 1, "slapped the hippo"),
    ]
    assert scores(out)["Blue"] == 1


def test_no_score_goes_below_zero() -> None:
    """A shed on an empty pile does nothing (delta 0). No score goes below zero."""
    out = run(spank(["Blue", "Red"]), cue(1000), press(1100, "Blue"), press(1200, "Red"),
              facts(1, pigs=5))
    assert scores(out) == {"Blue": 0, "Red": 0}
    assert [d for _, _, d, _ in rulings(out)] == [0, 0]


# -- 6. Sudden death -------------------------------------------------------------------------------


def test_sudden_death_shedding_knocks_nobody_out_and_wins_nothing() -> None:
    """Shedding a whammy in sudden death knocks nobody out and wins nothing by itself: only
    taking one is out. Blue sheds, Red does nothing: play goes on; then Red is last: Red is out."""
    base = [spank(["Blue", "Red"], deck=2), cue(1000), penalty(1, "Blue"), penalty(1, "Red"),
            cue(5000), press(5100, "Blue"), facts(2, pigs=3)]
    out = run(*base)
    assert rulings(out, 2) == [(2, "Blue", -1, "first to spank a pig")]
    assert out[-1]["final"] is False and out[-1]["winners"] == []
    assert not [r for r in out[-1]["seats"] if r["out"]]
    out = run(*base, cue(9000), press(9100, "Blue"), press(9300, "Red"))
    assert rulings(out, 3) == [(3, "Red", 1, "last to spank the pig")]
    assert out[-1]["final"] is True and out[-1]["winners"] == ["Blue"]


def test_sudden_death_a_shed_and_a_whammy_in_one_round() -> None:
    """Only taking a whammy is out: Red took one (early) and shed it in the same round; Blue took
    none. Red is out, Blue wins."""
    out = run(spank(["Blue", "Red"], deck=2), cue(1000), penalty(1, "Blue"), penalty(1, "Red"),
              press(4600, "Red"), cue(5000), press(5100, "Red"), press(5200, "Blue"),
              facts(2, pigs=3))
    assert out[-1]["final"] is True and out[-1]["winners"] == ["Blue"]


# -- 7. Unused buttons -----------------------------------------------------------------------------


def test_a_double_press_in_pig_is_kept_and_ignored() -> None:
    """A press on a button that the game does not use (a double button in Pig) is kept in the
    log and ignored by the rules."""
    base = [game("pig", FOUR), press(100, "Blue"), press(300, "Red"),
            press(500, "Green")]
    assert run(*base, press(200, "Yellow", "double")) == run(*base)
    assert rulings(run(*base)) == [(1, "Yellow", 1, "last to touch the nose")]


def test_a_double_press_in_pigs_tail_is_ignored() -> None:
    """A press on a button the game does not use is kept in the log and ignored by the rules."""
    base = [game("pigs-tail", ["Blue", "Red", "Green"]), cue(4000, "Blue"), cue(8000, "Red"),
            press(8100, "Red")]
    assert run(*base, press(8050, "Blue", "double")) == run(*base)


@pytest.mark.parametrize("doubles", ["off", "judge"])
def test_a_double_press_in_spank_without_double_buttons_is_ignored(doubles: str) -> None:
    """... or in Spank the Pig! with doubles off or judge: even as an early press."""
    base = [spank(doubles=doubles), cue(1000), press(1100, "Blue"), press(1200, "Red"),
            press(1300, "Green"), press(1400, "Yellow")]
    assert run(*base, press(900, "Red", "double"), press(1050, "Blue", "double")) == run(*base)


# -- 8. The log contract ---------------------------------------------------------------------------


def test_final_is_false_while_an_early_round_awaits_the_judge() -> None:
    """`final` is false and `winners` is empty while any round, however early, awaits the judge."""
    lines = [spank(["Blue", "Red"], deck=4), cue(1000), press(1100, "Blue"),
             cue(5000), press(5100, "Blue"), press(5200, "Red")]
    out = run(*lines)
    assert awaiting(out) == [{"type": "awaiting", "round": 1, "need": ["pigs"]}]
    assert out[-1]["final"] is False and out[-1]["winners"] == []
    answered = run(*lines, facts(1, pigs=1))  # Red never slapped round 1's pig: Red 2, Blue 0
    assert answered[-1]["final"] is True and answered[-1]["winners"] == ["Blue"]


def test_pigs_tail_final_is_false_while_an_early_round_awaits() -> None:
    """`final` is false while any round, however early, awaits the judge (Pig's Tail)."""
    seats = ["Blue", "Red"]
    lines: list[dict[str, Any]] = [game("pigs-tail", seats, take="slowest")]
    for k in range(1, 53):
        lines.append(cue(k * 4000, seats[(k - 1) % 2]))
    lines.append(press(2 * 4000 + 100, "Blue"))  # round 2: only Blue tapped — ask the judge
    out = run(*lines)
    assert awaiting(out) and out[-1]["final"] is False and out[-1]["winners"] == []


def test_deck_smaller_than_the_seats_is_a_bad_option() -> None:
    """Deck smaller than the seats (no round to play) is a bad option value."""
    message = bad_line(spank(deck=3))
    assert message.startswith("line 1:") and "deck" in message
    assert run(spank(["Blue", "Red"], deck=2))[-1]["type"] == "standings"


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        ([cue(1000), {"type": "undo"}], "line 3"),
        ([cue(1000), facts(1, pigs=1), {"type": "undo"}, {"type": "undo"}], "line 5"),
        ([cue(1000), {"type": "facts", "round": 1}], "line 3"),
        ([cue(1000), {"type": "facts", "round": 1, "note": "pigs"}], "line 3"),
        ([cue(1000), {"type": "penalty", "round": 1, "seat": "Red", "reason": "hippo"}], "line 3"),
        ([cue(1000), {"type": "penalty", "round": 1, "seat": "Red", "count": 1}], "line 3"),
        ([cue(1000), penalty(1, "Red", reason="")], "line 3"),
        ([cue(1000), penalty(1, "Red", reason="   ")], "line 3"),
    ],
    ids=["undo-nothing", "undo-twice", "facts-no-fact", "facts-unknown-only", "penalty-no-count",
         "penalty-no-reason", "penalty-empty-reason", "penalty-blank-reason"],
)
def test_bad_judge_lines_name_the_line(lines: list[dict[str, Any]], where: str) -> None:
    """An undo with nothing left to undo, a facts line with no fact in it, and a penalty line
    without count (≥ 1) or a non-empty reason are bad lines."""
    assert bad_line(spank(), *lines).startswith(f"{where}:")


def test_bad_line_is_exit_2_from_the_command(tmp_path: Path) -> None:
    """A bad value is a clear error naming the line number, and exit status 2."""
    log = tmp_path / "bad.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in [
        spank(), cue(1000), {"type": "penalty", "round": 1, "seat": "Red", "reason": "hippo"}]))
    done = subprocess.run([sys.executable, "-m", "referee", "replay", str(log)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "line 3" in done.stderr and "count" in done.stderr
    assert "Traceback" not in done.stderr


def test_pig_a_judge_line_before_the_claim_it_names_is_a_bad_line() -> None:
    """`facts` and `penalty` lines name a round whose cue (Pig: claim) came earlier."""
    claim = [press(100, "Blue"), press(300, "Red"), press(500, "Green")]
    assert bad_line(game("pig", FOUR), facts(1, claim=False), *claim).startswith("line 2:")
    assert bad_line(game("pig", FOUR), penalty(1, "Red"), *claim).startswith("line 2:")
    out = run(game("pig", FOUR), *claim, facts(1, claim=False))
    assert rulings(out) == [(1, "Blue", 1, "false claim")]
