"""Every threshold of the rules, exactly at it and one µs (or one ms) either side (issue 17).

Tie (`tie_us`), the early window (`early_ms`), the race window (`window_ms`), the window that
settles once everyone pressed, the next round's early window or cue, and each option's accepted
range. Logs go through `replay`, the path of `referee replay`; times are whole µs so that "one µs
either side" is exact. Non-default thresholds are used where a default would hide a changed
default.
"""

from __future__ import annotations

from typing import Any

import pytest

from referee.events import Cue, Press
from referee.rules.base import Rules
from referee.rules.pig import Pig
from referee.rules.pigstail import PigsTail
from referee.rules.spank import SpankThePig
from referee.store.tablelog import LogError
from tests.rules_log import FIVE, FOUR, MS, THREE, S, cue, facts, game, press, rulings, run


def spank(seats: list[str] = FOUR, **options: Any) -> dict[str, Any]:
    options.setdefault("doubles", "off")
    return game("spank-the-pig", seats, **options)


# -- the tie threshold, in every race of every game ----------------------------------------------

TIE = 2500  # not the default, so that a changed default cannot pass for the option
EITHER_SIDE = pytest.mark.parametrize("gap", [TIE - 1, TIE, TIE + 1])


def close_or_named(gap: int, named: tuple[Any, ...], round: int = 1) -> tuple[Any, ...]:
    """Under tie_us: too close to call (nobody); at it or over: the seat the race names."""
    if gap < TIE:
        return (round, None, 0, "too close to call", gap)
    return named[:4] + (gap,)


@EITHER_SIDE
def test_spank_last_slapper_at_the_tie(gap: int) -> None:
    c = 1 * S
    out = run(spank(tie_us=TIE), cue(c), press(c + 100 * MS, "Blue"), press(c + 200 * MS, "Red"),
              press(c + 300 * MS, "Green"), press(c + 300 * MS + gap, "Yellow"))
    assert rulings(out) == [close_or_named(gap, (1, "Yellow", 1, "last to spank the pig"))]


@EITHER_SIDE
def test_spank_first_slap_with_no_pig_at_the_tie(gap: int) -> None:
    c = 1 * S
    out = run(spank(tie_us=TIE), cue(c), press(c + 100 * MS, "Red"),
              press(c + 100 * MS + gap, "Blue"), facts(1, pigs=0))
    assert rulings(out) == [close_or_named(gap, (1, "Red", 1, "first to slap with no pig"))]


@EITHER_SIDE
@pytest.mark.parametrize("pigs", [0, 1])
def test_spank_first_early_slap_at_the_tie(gap: int, pigs: int) -> None:
    """Two early slappers, with a pig or without: the first early slap against the second."""
    c = 2 * S
    out = run(spank(tie_us=TIE), press(c - 500 * MS, "Green"), press(c - 500 * MS + gap, "Red"),
              cue(c), *(press(c + (100 + 50 * i) * MS, s) for i, s in enumerate(FOUR)),
              facts(1, pigs=pigs))
    assert rulings(out)[0] == close_or_named(gap, (1, "Green", 1, "slap too early"))


def test_spank_void_round_rules_nothing_and_asks_nothing() -> None:
    c = 1 * S
    out = run(spank(), press(c - 200 * MS, "Red"), cue(c), press(c + 100 * MS, "Blue"),
              facts(1, void=True))
    assert rulings(out) == [] and not [x for x in out if x["type"] == "awaiting"]


@EITHER_SIDE
def test_spank_last_double_at_the_tie(gap: int) -> None:
    c = 1 * S
    out = run(spank(doubles="buttons", tie_us=TIE), cue(c),
              press(c + 100 * MS, "Blue", "double"), press(c + 200 * MS, "Red", "double"),
              press(c + 300 * MS, "Green", "double"), press(c + 300 * MS + gap, "Yellow", "double"),
              facts(1, pigs=0, doubles=["cow"]))
    assert rulings(out) == [close_or_named(gap, (1, "Yellow", 1, "last to declare the double"))]


@EITHER_SIDE
def test_spank_first_p_at_the_group_boundary_at_the_tie(gap: int) -> None:
    c = 1 * S
    out = run(spank(FIVE, tie_us=TIE), cue(c), press(c + 100 * MS, "Blue"),
              press(c + 150 * MS, "Red"), press(c + 200 * MS, "Green"),
              press(c + 200 * MS + gap, "Yellow"), press(c + 400 * MS, "Purple"), facts(1, pigs=3))
    named = [s for _, s, _, _, _ in rulings(out)]
    assert named == (["Blue", "Red", None] if gap < TIE else ["Blue", "Red", "Green"])


@EITHER_SIDE
def test_pig_photo_finish_at_the_tie(gap: int) -> None:
    """The remaining seat pressing `gap` after the last of the others: under tie_us a photo
    finish; at tie_us the race was already decided (it lost)."""
    out = run(game("pig", FOUR, tie_us=TIE), press(1 * S, "Blue"), press(1 * S + 200 * MS, "Red"),
              press(1 * S + 400 * MS, "Green"), press(1 * S + 400 * MS + gap, "Yellow"))
    if gap < TIE:
        assert rulings(out) == [(1, None, 0, "too close to call", gap)]
    else:
        assert rulings(out) == [(1, "Yellow", 1, "last to touch the nose", None)]


@EITHER_SIDE
def test_pigs_tail_last_tap_at_the_tie(gap: int) -> None:
    c = 8 * S
    out = run(game("pigs-tail", THREE, take="slowest", tie_us=TIE), cue(4 * S, "Blue"),
              cue(c, "Red"), press(c + 300 * MS, "Blue"), press(c + 500 * MS, "Red"),
              press(c + 500 * MS + gap, "Green"))
    assert rulings(out, 2) == [close_or_named(gap, (2, "Green", 2, "last to tap"), 2)]


@EITHER_SIDE
def test_pigs_tail_false_start_at_the_tie(gap: int) -> None:
    c = 8 * S
    out = run(game("pigs-tail", THREE, take="slowest", tie_us=TIE), cue(4 * S, "Blue"),
              cue(c, "Red"), press(c + 300 * MS, "Green"), press(c + 300 * MS + gap, "Blue"),
              facts(2, match=False))
    assert rulings(out, 2) == [close_or_named(gap, (2, "Green", 2, "false start"), 2)]


@EITHER_SIDE
def test_pigs_tail_false_start_between_flips_at_the_tie(gap: int) -> None:
    c = 8 * S
    after = c + 3 * S  # the window (3 s) is over; the next flip is at 12 s
    out = run(game("pigs-tail", THREE, take="slowest", tie_us=TIE), cue(4 * S, "Blue"),
              cue(c, "Red"), press(after + 100 * MS, "Red"), press(after + 100 * MS + gap, "Green"),
              cue(12 * S, "Green"))
    assert rulings(out, 2) == [close_or_named(gap, (2, "Red", 2, "false start between flips"), 2)]


# -- Spank the Pig!: the early window ------------------------------------------------------------


@pytest.mark.parametrize(("before_cue_us", "early"), [
    (300 * MS + 1, False),  # one µs before the early window: between rounds, ignored
    (300 * MS, True),  # its first µs
    (1, True),  # its last µs
])
def test_early_window_edges_with_early_ms_set(before_cue_us: int, early: bool) -> None:
    c = 2 * S
    out = run(spank(early_ms=300), press(c - before_cue_us, "Red"), cue(c),
              *(press(c + (100 + 50 * i) * MS, s) for i, s in enumerate(FOUR)))
    expect = [(1, "Yellow", 1, "last to spank the pig", 50 * MS)]
    if early:
        expect.insert(0, (1, "Red", 1, "slap too early", None))
    assert rulings(out) == expect


def test_a_press_at_the_cue_is_in_the_race_not_early() -> None:
    c = 2 * S
    out = run(spank(early_ms=300), cue(c), press(c, "Red"), facts(1, pigs=0))
    assert rulings(out) == [(1, "Red", 1, "first to slap with no pig", None)]


def test_early_ms_zero_means_no_early_window() -> None:
    c = 2 * S
    out = run(spank(early_ms=0), press(c - 1, "Red"), cue(c), press(c + 100 * MS, "Blue"),
              facts(1, pigs=0))
    assert rulings(out) == [(1, "Blue", 1, "first to slap with no pig", None)]


@pytest.mark.parametrize(("before_cue_us", "early"), [(1400 * MS + 1, False), (1400 * MS, True)])
def test_early_window_follows_the_tempo_when_early_ms_is_not_given(before_cue_us: int,
                                                                   early: bool) -> None:
    """early_ms defaults to the cadence: 2 × tempo_ms = 1400 ms at a 700 ms tempo."""
    c = 3 * S
    out = run(spank(tempo_ms=700), press(c - before_cue_us, "Red"), cue(c), facts(1, pigs=0))
    assert rulings(out) == ([(1, "Red", 1, "slap too early", None)] if early else [])


# -- Spank the Pig!: the race window's close -------------------------------------------------------


@pytest.mark.parametrize(("after_cue_us", "counts"), [
    (2000 * MS - 1, True), (2000 * MS, False), (2000 * MS + 1, False)])
def test_race_window_closes_at_window_ms(after_cue_us: int, counts: bool) -> None:
    c = 1 * S
    out = run(spank(window_ms=2000), cue(c), press(c + after_cue_us, "Green"), facts(1, pigs=0))
    assert rulings(out) == ([(1, "Green", 1, "first to slap with no pig", None)] if counts else [])


@pytest.mark.parametrize(("before_next_cue_us", "round"), [
    (500 * MS + 1, 1),  # the last µs of round 1's race window
    (500 * MS, 2),  # the first µs of round 2's early window
])
def test_race_window_closes_at_the_next_rounds_early_window(before_next_cue_us: int,
                                                            round: int) -> None:
    nxt = 4 * S
    out = run(spank(window_ms=10_000, early_ms=500), cue(1 * S), press(nxt - before_next_cue_us, "Red"),
              cue(nxt), facts(1, pigs=0), facts(2, pigs=0))
    reason = "first to slap with no pig" if round == 1 else "slap too early"
    assert rulings(out) == [(round, "Red", 1, reason, None)]


def ruled_at(rules: Rules, presses: list[tuple[int, str]], last_us: int) -> list[int]:
    """Feed the presses, then step the clock: the instants (µs after the last press) at which
    the round is ruled, checked one µs before tie_us, at it, and one after."""
    for t, seat in presses:
        rules.advance(t)
        rules.feed(Press(t, seat))
    rules.take_changed()
    ruled = []
    for after in (TIE - 1, TIE, TIE + 1):
        rules.advance(last_us + after)
        if rules.take_changed():
            ruled.append(after)
    return ruled


def test_spank_rules_tie_us_after_every_seat_slapped() -> None:
    """Once every seat has slapped the window settles tie_us later and the round is ruled then
    (not one µs sooner, not at cue + window_ms)."""
    rules = SpankThePig(THREE, {"doubles": "off", "tie_us": TIE})
    rules.feed(Cue(1 * S))
    last = 1 * S + 300 * MS
    assert ruled_at(rules, [(1 * S + 100 * MS, "Blue"), (1 * S + 200 * MS, "Red"),
                            (last, "Green")], last) == [TIE]
    assert rules.round_outputs(1)[0].seat == "Green"


def test_spank_with_double_buttons_settles_only_once_the_doubles_are_in_too() -> None:
    rules = SpankThePig(["Blue", "Red"], {"doubles": "buttons", "tie_us": TIE})
    rules.feed(Cue(1 * S))
    for t, seat in [(1 * S + 100 * MS, "Blue"), (1 * S + 200 * MS, "Red")]:
        rules.advance(t)
        rules.feed(Press(t, seat))
    rules.advance(1 * S + 200 * MS + TIE)
    assert rules.status().race_open  # nobody pressed a double yet
    last = 1 * S + 400 * MS
    assert ruled_at(rules, [(1 * S + 300 * MS, "Red"), (last, "Blue")], last) == []  # slaps again
    for t, seat in [(1 * S + 500 * MS, "Red"), (1 * S + 600 * MS, "Blue")]:
        rules.advance(t)
        rules.feed(Press(t, seat, "double"))
    assert rules.status().closes_at_us == 1 * S + 600 * MS + TIE


def test_pig_rules_tie_us_after_all_but_one_pressed() -> None:
    rules = Pig(FOUR, {"tie_us": TIE})
    last = 1 * S + 400 * MS
    assert ruled_at(rules, [(1 * S, "Blue"), (1 * S + 200 * MS, "Red"), (last, "Green")],
                    last) == [TIE]
    assert rules.round_outputs(1)[0].seat == "Yellow"


def test_pigs_tail_slowest_rules_tie_us_after_every_tap() -> None:
    rules = PigsTail(THREE, {"take": "slowest", "tie_us": TIE})
    rules.feed(Cue(4 * S, "Blue"))
    rules.feed(Cue(8 * S, "Red"))
    last = 8 * S + 500 * MS
    assert ruled_at(rules, [(8 * S + 100 * MS, "Blue"), (8 * S + 300 * MS, "Red"),
                            (last, "Green")], last) == [TIE]
    assert rules.round_outputs(2)[0].seat == "Green"


# -- Pig: the claim's window ---------------------------------------------------------------------


@pytest.mark.parametrize(("after_claim_us", "in_round_one"), [
    (1000 * MS - 1, True), (1000 * MS, False)])
def test_pig_window_ends_window_ms_after_the_claim(after_claim_us: int, in_round_one: bool) -> None:
    """Five seats, two stragglers: Yellow pressing inside the 1 s window leaves Purple alone to
    lose; at the window's end it is a new claim and round 1 is unclear."""
    out = run(game("pig", FIVE, window_ms=1000), press(1 * S, "Blue"),
              press(1 * S + 100 * MS, "Red"), press(1 * S + 200 * MS, "Green"),
              press(1 * S + after_claim_us, "Yellow"))
    if in_round_one:
        assert rulings(out) == [(1, "Purple", 1, "last to touch the nose", None)]
    else:
        assert rulings(out, 1) == [(1, None, 0, "unclear: 2 did not touch the nose", None)]
        assert len(rulings(out, 2)) == 1  # Yellow's press opened round 2


# -- Pig's Tail: the flip's window -----------------------------------------------------------------


@pytest.mark.parametrize(("after_flip_us", "claimed"), [(1000 * MS - 1, True), (1000 * MS, False)])
def test_pigs_tail_claim_window_ends_at_window_ms(after_flip_us: int, claimed: bool) -> None:
    out = run(game("pigs-tail", THREE, window_ms=1000), cue(4 * S, "Blue"), cue(8 * S, "Red"),
              press(8 * S + after_flip_us, "Red"), cue(12 * S, "Green"))
    assert rulings(out) == ([(2, "Red", 2, "flipped a match", None)] if claimed else [])


@pytest.mark.parametrize(("before_next_us", "round"), [(1, 2), (0, 3)])
def test_pigs_tail_the_next_flip_ends_the_window(before_next_us: int, round: int) -> None:
    """window 10 s, flips 4 s apart: the next flip closes the window; a claim at that very µs
    belongs to the new flip (whose flipper is not Red: ignored)."""
    out = run(game("pigs-tail", THREE, window_ms=10_000), cue(4 * S, "Blue"), cue(8 * S, "Red"),
              press(12 * S - before_next_us, "Red"), cue(12 * S, "Green"))
    assert rulings(out) == ([(2, "Red", 2, "flipped a match", None)] if round == 2 else [])


@pytest.mark.parametrize(("after_flip_us", "between"), [(1000 * MS - 1, False), (1000 * MS, True)])
def test_pigs_tail_slowest_a_tap_after_the_window_is_between_flips(after_flip_us: int,
                                                                   between: bool) -> None:
    out = run(game("pigs-tail", THREE, take="slowest", window_ms=1000), cue(4 * S, "Blue"),
              cue(8 * S, "Red"), press(8 * S + after_flip_us, "Green"), facts(2, match=False),
              cue(12 * S, "Green"))
    reason = "false start between flips" if between else "false start"
    assert rulings(out) == [(2, "Green", 2, reason, None)]


# -- option ranges: the lowest and highest accepted, one beyond refused in one line -----------------

RANGES = [
    ("spank-the-pig", FOUR[:2], "deck", 2, 1_000_000),
    ("spank-the-pig", FOUR, "tempo_ms", 100, 5000),
    ("spank-the-pig", FOUR, "window_ms", 100, 60_000),
    ("spank-the-pig", FOUR, "early_ms", 0, 60_000),
    ("spank-the-pig", FOUR, "tie_us", 0, 1_000_000),
    ("spank-the-pig", FOUR, "pause_ms", 0, 600_000),
    ("pig", FOUR, "window_ms", 1000, 600_000),
    ("pig", FOUR, "pass_beat_ms", 0, 60_000),
    ("pig", FOUR, "tie_us", 0, 1_000_000),
    ("pigs-tail", THREE, "turn_ms", 200, 60_000),
    ("pigs-tail", THREE, "tempo_ms", 50, 5000),
    ("pigs-tail", THREE, "window_ms", 100, 60_000),
    ("pigs-tail", THREE, "tie_us", 0, 1_000_000),
]


@pytest.mark.parametrize(("name", "seats", "option", "lo", "hi"), RANGES)
def test_option_range_edges(name: str, seats: list[str], option: str, lo: int, hi: int) -> None:
    for ok in (lo, hi):
        out = run(game(name, seats, **{option: ok}))
        assert out[-1]["type"] == "standings"
    for bad in (lo - 1, hi + 1):
        with pytest.raises(LogError) as info:
            run(game(name, seats, **{option: bad}))
        message = str(info.value)
        assert message == (f"line 1: option {option}={bad!r}: expected a whole number "
                           f"from {lo} to {hi}")
        assert "\n" not in message


@pytest.mark.parametrize(("name", "option", "good", "bad"), [
    ("spank-the-pig", "doubles", ["buttons", "judge", "off"], "both"),
    ("pig", "variant", ["pig", "spoons", "tongue"], "nose"),
    ("pig", "stragglers", ["no-one", "all-lose"], "some"),
    ("pig", "false_claim", ["lose-life", "nothing"], "two-lives"),
    ("pig", "lives", [1, 3], 2),
    ("pigs-tail", "take", ["flipper", "slowest"], "fastest"),
])
def test_choice_options_accept_each_choice_and_refuse_others(name: str, option: str,
                                                             good: list[Any], bad: Any) -> None:
    seats = FOUR if name != "pigs-tail" else THREE
    for value in good:
        assert run(game(name, seats, **{option: value}))[-1]["type"] == "standings"
    with pytest.raises(LogError) as info:
        run(game(name, seats, **{option: bad}))
    assert str(info.value).startswith(f"line 1: option {option}={bad!r}: expected ")


# -- the order rulings apply in: the time of the press that earned each --------------------------


def test_a_photo_finish_is_placed_at_the_runner_ups_press() -> None:
    """No pig and no double: Red and Blue slap 0.8 ms apart (too close), Green presses its
    double between them (first with no double). The photo finish is settled by Blue's press, so
    Green's ruling comes first."""
    c = 1 * S
    out = run(spank(doubles="buttons"), cue(c), press(c + 100 * MS, "Red"),
              press(c + 100 * MS + 400, "Green", "double"), press(c + 100 * MS + 800, "Blue"),
              facts(1, pigs=0, doubles=[]))
    assert rulings(out) == [(1, "Green", 1, "first to declare a double with no double", None),
                            (1, None, 0, "too close to call", 800)]


def test_at_one_instant_slaps_are_ruled_before_doubles() -> None:
    c = 1 * S
    out = run(spank(doubles="buttons"), cue(c), press(c + 100 * MS, "Red"),
              press(c + 100 * MS, "Blue"), press(c + 100 * MS, "Green", "double"),
              facts(1, pigs=0, doubles=[]))
    assert rulings(out) == [(1, None, 0, "too close to call", 0),
                            (1, "Green", 1, "first to declare a double with no double", None)]
