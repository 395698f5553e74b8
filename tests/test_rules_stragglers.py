"""Never pressing is never a way out (PRODUCT.md, "Too close to call"; issue 23), as table-log
scenarios: each log in, the replay's lines out, as `referee replay` prints them.

- Where every seat had to press (a pig, a double, a match on a "slowest" Pig's Tail table), each
  seat that never pressed takes what the last presser would take, every one of them (option
  `stragglers`: `all-lose`, the default in Spank the Pig!; `no-one`, the default in Pig).
- Where only one seat can take the result (Pig's Tail's pile), two or more never-pressers take
  nothing and the pile stays.
- Margins and "too close to call" are only ever between seats that pressed.
- Pig: the window's end wins over the photo-finish wait.
"""

from __future__ import annotations

from typing import Any

from tests.rules_log import FOUR, MS, THREE, S, cue, facts, game, press, rulings, run


def spank(*lines: dict[str, Any], **options: Any) -> list[dict[str, Any]]:
    return run(game("spank-the-pig", FOUR, doubles="off", **options), *lines)


def scores(out: list[dict[str, Any]]) -> dict[str, int]:
    return {row["seat"]: row["score"] for row in out[-1]["seats"]}


def test_two_seats_that_never_slap_a_pig_each_take_the_whammy() -> None:
    """Blue and Red slap, Green and Yellow never do; the judge saw a pig: each of the two takes
    the whammy the last slapper would (before: "too close to call", and nobody took it)."""
    out = spank(cue(1 * S), press(1 * S + 200 * MS, "Blue"), press(1 * S + 300 * MS, "Red"),
                facts(1, pigs=1))
    assert rulings(out) == [(1, "Green", 1, "last to spank the pig", None),
                            (1, "Yellow", 1, "last to spank the pig", None)]
    assert scores(out) == {"Blue": 0, "Red": 0, "Green": 1, "Yellow": 1}


def test_three_that_never_slap_two_pigs_each_take_two() -> None:
    out = spank(cue(1 * S), press(1 * S + 200 * MS, "Blue"), facts(1, pigs=2))
    assert rulings(out) == [(1, s, 2, "last to spank the pigs", None)
                            for s in ("Red", "Green", "Yellow")]


def test_nobody_slapping_a_pig_the_judge_saw_all_take_it() -> None:
    """The consensus says no pig; the judge corrects it to one: every seat never slapped."""
    out = spank(cue(1 * S), facts(1, pigs=1))
    assert [(r[1], r[2]) for r in rulings(out)] == [(s, 1) for s in FOUR]


def test_two_that_never_declare_a_double_each_take_it() -> None:
    out = run(game("spank-the-pig", FOUR, doubles="buttons"),
              cue(1 * S), press(1 * S + 200 * MS, "Blue", "double"),
              press(1 * S + 250 * MS, "Red", "double"), facts(1, doubles=["hippo"]))
    assert rulings(out) == [(1, "Green", 1, "last to declare the double", None),
                            (1, "Yellow", 1, "last to declare the double", None)]


def test_with_stragglers_no_one_nobody_takes_it_and_it_is_not_too_close_to_call() -> None:
    out = spank(cue(1 * S), press(1 * S + 200 * MS, "Blue"), press(1 * S + 300 * MS, "Red"),
                facts(1, pigs=1), stragglers="no-one")
    assert rulings(out) == [(1, None, 0, "unclear: 2 never slapped", None)]
    assert scores(out) == dict.fromkeys(FOUR, 0)


def test_a_lone_seat_that_never_slapped_is_last_with_no_margin() -> None:
    """Margins are only ever between seats that pressed: none to the window's end (it was
    1.7 s, the window's end less Red's slap)."""
    out = spank(cue(1 * S), *[press(1 * S + t * MS, s) for s, t in
                              (("Blue", 200), ("Red", 300), ("Green", 1300))], facts(1, pigs=1))
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig", None)]


def test_the_slappers_margins_do_not_matter_when_a_seat_never_slapped() -> None:
    """Red and Green slap 0.2 ms apart (a photo finish between them), Yellow never does: Yellow
    is last, and nothing is too close to call."""
    out = spank(cue(1 * S), press(1 * S + 200 * MS, "Blue"), press(1 * S + 300 * MS, "Red"),
                press(1 * S + 300 * MS + 200, "Green"), facts(1, pigs=1))
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig", None)]


def test_in_sudden_death_two_that_never_slap_are_both_out() -> None:
    """One regular round, all four slap 0.1 ms apart (too close to call); the judge gives
    Yellow a penalty: Blue, Red and Green, tied, play sudden death. Only Blue slaps the pig:
    Red and Green both take a whammy and are out (before: too close to call, and play went
    on); Blue is champion."""
    out = run(game("spank-the-pig", FOUR, doubles="off", deck=4),
              cue(1 * S), *[press(1 * S + 200 * MS + i * 100, s) for i, s in enumerate(FOUR)],
              cue(6 * S), press(6 * S + 200 * MS, "Blue"),
              facts(2, pigs=1),
              {"type": "penalty", "round": 1, "seat": "Yellow", "count": 1, "reason": "peeked"})
    assert rulings(out, 2) == [(2, "Red", 1, "last to spank the pig", None),
                               (2, "Green", 1, "last to spank the pig", None)]
    st = out[-1]
    assert st["final"] and st["winners"] == ["Blue"]
    assert {r["seat"]: r["out"] for r in st["seats"]} == {
        "Blue": False, "Red": True, "Green": True, "Yellow": False}


# -- Pig's Tail: only one seat can take the pile -------------------------------------------------

TURN = 4 * S


def test_pigs_tail_two_that_never_tap_a_match_take_nothing_and_the_pile_stays() -> None:
    """`take = slowest`, three seats: flip 2 matches and only Blue taps; the judge says match:
    Red and Green never tapped, only one could take the pile, so nobody does and it stays (3
    cards after flip 3): never "too close to call". Flip 3: all tap, Green last: 3 cards."""
    flips = [cue(k * TURN, THREE[(k - 1) % 3]) for k in (1, 2, 3)]
    out = run(game("pigs-tail", THREE, take="slowest"), *flips,
              press(2 * TURN + 300 * MS, "Blue"), facts(2, match=True),
              *[press(3 * TURN + t * MS, s) for s, t in
                (("Blue", 200), ("Red", 300), ("Green", 400))])
    assert rulings(out, 2) == [(2, None, 0, "unclear: 2 never tapped", None)]
    assert rulings(out, 3) == [(3, "Green", 3, "last to tap", 100 * MS)]


def test_pigs_tail_one_that_never_taps_takes_the_pile_with_no_margin() -> None:
    flips = [cue(k * TURN, THREE[(k - 1) % 3]) for k in (1, 2)]
    out = run(game("pigs-tail", THREE, take="slowest"), *flips,
              press(2 * TURN + 300 * MS, "Blue"), press(2 * TURN + 500 * MS, "Red"),
              facts(2, match=True))
    assert rulings(out, 2) == [(2, "Green", 2, "last to tap", None)]


# -- Pig: stragglers no-one by default; the window's end wins over the photo-finish wait ---------


def pig_claim(*lines: dict[str, Any], **options: Any) -> list[dict[str, Any]]:
    return run(game("pig", FOUR, **options), *lines)


def test_pig_two_that_never_press_lose_nothing_by_default_and_each_a_life_with_all_lose() -> None:
    claim = [press(1 * S, "Blue"), press(2 * S, "Red")]
    assert rulings(pig_claim(*claim)) == [(1, None, 0, "unclear: 2 did not touch the nose", None)]
    assert rulings(pig_claim(*claim, stragglers="all-lose")) == [
        (1, "Green", 1, "did not touch the nose in time", None),
        (1, "Yellow", 1, "did not touch the nose in time", None)]


def test_pig_the_windows_end_wins_over_the_photo_finish_wait() -> None:
    """Window 15 s, `tie_us` 1 s: Blue claims at 1 s, Red at 2 s, Green at 15.5 s (all but one:
    the photo-finish wait would run to 16.5 s). Yellow presses at 16.2 s, inside that wait but
    after the window's end (16 s): the race closed at 16 s, Yellow never pressed and loses
    (no photo finish with Green), and its press is no new claim by a seat that is out."""
    out = pig_claim(press(1 * S, "Blue"), press(2 * S, "Red"), press(15 * S + 500 * MS, "Green"),
                    press(16 * S + 200 * MS, "Yellow"), tie_us=1_000_000)
    assert rulings(out) == [(1, "Yellow", 1, "last to touch the nose", None)]
    assert [(r["seat"], r["out"]) for r in out[-1]["seats"] if r["out"]] == [("Yellow", True)]
