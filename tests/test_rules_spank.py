"""Spank the Pig! as table-log scenarios: a log in, the replay's lines out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from referee.store.tablelog import LogError, replay

FOUR = ["Blue", "Red", "Green", "Yellow"]


def game(seats: list[str] = FOUR, **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": "spank-the-pig", "seats": seats, "options": options}


def cue(t_ms: float) -> dict[str, Any]:
    return {"type": "cue", "t_us": int(t_ms * 1000)}


def press(t_ms: float, seat: str, button: str = "slap") -> dict[str, Any]:
    return {"type": "press", "t_us": int(t_ms * 1000), "seat": seat, "button": button}


def run(*lines: dict[str, Any], **overrides: Any) -> list[dict[str, Any]]:
    return replay([json.dumps(x) for x in lines], overrides).lines()


def rulings(out: list[dict[str, Any]], round: int | None = None) -> list[tuple[Any, ...]]:
    return [(r["round"], r["seat"], r["delta"], r["reason"]) for r in out
            if r["type"] == "ruling" and (round is None or r["round"] == round)]


def scores(out: list[dict[str, Any]]) -> dict[str, int]:
    return {row["seat"]: row["score"] for row in out[-1]["seats"]}


def all_slap(t0: float, order: list[str], gap: float = 20, button: str = "slap"):
    return [press(t0 + 100 + i * gap, seat, button) for i, seat in enumerate(order)]


def test_seed_example_round_comes_out_exactly() -> None:
    # Zebracorn, Hippo, Pig, Zebracorn. Blue slapped the Hippo and is last to the Pig: 2.
    # Red is last to declare Zebracorn: 1. Nobody else takes a whammy.
    out = run(
        game(doubles="buttons"),
        cue(1000),
        press(1150, "Green"), press(1180, "Red"), press(1210, "Yellow"), press(1260, "Blue"),
        press(1300, "Blue", "double"), press(1320, "Green", "double"),
        press(1340, "Yellow", "double"), press(1400, "Red", "double"),
        {"type": "facts", "round": 1, "pigs": 1, "doubles": ["zebracorn"]},
        {"type": "penalty", "round": 1, "seat": "Blue", "count": 1, "reason": "slapped the hippo"},
    )
    assert rulings(out) == [
        (1, "Blue", 1, "last to spank the pig"),
        (1, "Red", 1, "last to declare the double"),
        (1, "Blue", 1, "slapped the hippo"),
    ]
    assert out[0]["margin_us"] == 50_000 and out[1]["margin_us"] == 60_000
    assert scores(out) == {"Blue": 2, "Red": 1, "Green": 0, "Yellow": 0}
    assert out[-1]["final"] is False and out[-1]["winners"] == []


def test_everyone_slaps_means_one_pig_and_the_last_takes_it() -> None:
    out = run(game(doubles="off"), cue(1000), *all_slap(1000, ["Red", "Blue", "Yellow", "Green"]))
    assert rulings(out) == [(1, "Green", 1, "last to spank the pig")]
    assert out[0]["margin_us"] == 20_000


def test_presses_are_ordered_by_edge_time_not_by_line_order() -> None:
    lines = [press(1100, "Red"), press(1180, "Green"), press(1120, "Blue"), press(1140, "Yellow")]
    out = run(game(doubles="off"), *reversed(lines), cue(1000))
    assert rulings(out) == [(1, "Green", 1, "last to spank the pig")]


def test_nobody_slaps_is_a_clean_round() -> None:
    out = run(game(doubles="off"), cue(1000), cue(5000))
    assert rulings(out) == [] and not [x for x in out if x["type"] == "awaiting"]


def test_no_pig_the_first_slap_is_the_mistake() -> None:
    out = run(game(doubles="off"), cue(1000), press(1300, "Red"), press(1500, "Blue"),
              {"type": "facts", "round": 1, "pigs": 0})
    assert rulings(out) == [(1, "Red", 1, "first to slap with no pig")]
    assert out[0]["margin_us"] == 200_000


def test_two_pigs_the_last_slapper_takes_two() -> None:
    out = run(game(doubles="off"), cue(1000), *all_slap(1000, FOUR),
              {"type": "facts", "round": 1, "pigs": 2})
    assert rulings(out) == [(1, "Yellow", 2, "last to spank the pigs")]


def test_three_pigs_the_first_three_shed_a_whammy_never_below_zero() -> None:
    out = run(
        game(doubles="off"),
        cue(1000), *all_slap(1000, ["Red", "Blue", "Green", "Yellow"]),  # Yellow +1
        cue(5000), *all_slap(5000, ["Green", "Red", "Yellow", "Blue"]),  # Blue +1
        cue(9000), *all_slap(9000, ["Yellow", "Blue", "Red", "Green"]),
        {"type": "facts", "round": 3, "pigs": 3},
    )
    r3 = rulings(out, 3)
    assert r3 == [
        (3, "Yellow", -1, "first to spank a pig"),
        (3, "Blue", -1, "first to spank a pig"),
        (3, "Red", 0, "first to spank a pig, no whammy to shed"),
    ]
    assert scores(out) == {"Yellow": 0, "Blue": 0, "Red": 0, "Green": 0}


def test_a_seat_that_never_slaps_is_last() -> None:
    out = run(game(doubles="off"), cue(1000), press(1100, "Red"), press(1200, "Blue"),
              press(1300, "Green"), {"type": "facts", "round": 1, "pigs": 1})
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig")]
    assert out[0]["margin_us"] is None  # margins are only between seats that pressed


def test_two_seats_that_never_slap_each_take_what_the_last_would() -> None:
    """Issue 23: never pressing is never a way out (`stragglers = all-lose`, the default)."""
    out = run(game(doubles="off"), cue(1000), press(1100, "Red"), press(1200, "Blue"),
              {"type": "facts", "round": 1, "pigs": 1})
    assert rulings(out) == [(1, "Green", 1, "last to spank the pig"),
                            (1, "Yellow", 1, "last to spank the pig")]


def test_a_photo_finish_is_too_close_to_call() -> None:
    out = run(game(doubles="off"), cue(1000), press(1100, "Red"), press(1150, "Blue"),
              press(1300.0, "Green"), press(1300.4, "Yellow"))
    assert rulings(out) == [(1, None, 0, "too close to call")]
    assert out[0]["margin_us"] == 400


def test_tie_threshold_is_an_option() -> None:
    lines = [game(doubles="off"), cue(1000), press(1100, "Red"), press(1150, "Blue"),
             press(1300.0, "Green"), press(1300.4, "Yellow")]
    assert rulings(run(*lines, tie_us="200")) == [(1, "Yellow", 1, "last to spank the pig")]


def test_some_slapped_asks_the_judge_then_rules() -> None:
    lines = [game(doubles="off"), cue(1000), press(1100, "Red"), press(1200, "Blue")]
    out = run(*lines)
    assert {"type": "awaiting", "round": 1, "need": ["pigs"]} in out
    out = run(*lines, {"type": "facts", "round": 1, "pigs": 0})
    assert rulings(out) == [(1, "Red", 1, "first to slap with no pig")]
    assert not [x for x in out if x["type"] == "awaiting"]


def test_early_slap_earns_the_whammy_and_does_not_count_as_slapping() -> None:
    out = run(game(doubles="off"), press(200, "Red"), cue(1000), press(1100, "Blue"),
              press(1150, "Green"), press(1200, "Yellow"), {"type": "facts", "round": 1, "pigs": 1})
    # Red slapped 800 ms before "PIG!": early (1 whammy). Red never slapped again: last (1).
    assert rulings(out) == [(1, "Red", 1, "slap too early"), (1, "Red", 1, "last to spank the pig")]
    assert scores(out)["Red"] == 2


def test_only_the_first_early_slapper_is_penalised() -> None:
    out = run(game(doubles="off"), press(300, "Red"), press(500, "Blue"), cue(1000),
              *all_slap(1000, ["Red", "Blue", "Green", "Yellow"]))
    assert rulings(out) == [(1, "Red", 1, "slap too early"), (1, "Yellow", 1, "last to spank the pig")]


def test_presses_before_the_early_window_are_ignored() -> None:
    out = run(game(doubles="off"), press(100, "Red"), cue(2000),
              *all_slap(2000, ["Red", "Blue", "Green", "Yellow"]))
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig")]


def test_only_a_seats_first_press_counts() -> None:
    out = run(game(doubles="off"), cue(1000), press(1100, "Red"), press(1120, "Blue"),
              press(1130, "Green"), press(1140, "Yellow"), press(1300, "Red"))
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig")]


def test_the_window_closes_and_late_presses_do_not_count() -> None:
    out = run(game(doubles="off"), cue(1000), press(1100, "Red"), press(1200, "Blue"),
              press(1300, "Green"), press(4500, "Yellow"), {"type": "facts", "round": 1, "pigs": 1})
    assert rulings(out) == [(1, "Yellow", 1, "last to spank the pig")]


def test_the_next_cue_closes_the_window() -> None:
    out = run(game(doubles="off", window_ms=10000), cue(1000), press(1100, "Red"),
              press(1200, "Blue"), press(1300, "Green"), cue(3000), press(3100, "Yellow"),
              {"type": "facts", "round": 1, "pigs": 1})
    assert rulings(out, 1) == [(1, "Yellow", 1, "last to spank the pig")]


def test_doubles_buttons_no_double_first_presser_takes_one() -> None:
    out = run(game(doubles="buttons"), cue(1000), press(1400, "Green", "double"),
              press(1450, "Red", "double"), {"type": "facts", "round": 1, "doubles": []})
    assert rulings(out) == [(1, "Green", 1, "first to declare a double with no double")]


def test_doubles_two_doubles_last_presser_takes_two() -> None:
    out = run(game(doubles="buttons"), cue(1000), *all_slap(1000, FOUR, button="double"),
              {"type": "facts", "round": 1, "doubles": ["cow", "bean"]})
    assert rulings(out) == [(1, "Yellow", 2, "last to declare the doubles")]


def test_doubles_split_presses_ask_the_judge() -> None:
    out = run(game(doubles="buttons"), cue(1000), press(1400, "Green", "double"))
    assert {"type": "awaiting", "round": 1, "need": ["doubles"]} in out


def test_doubles_off_ignores_double_buttons() -> None:
    out = run(game(doubles="off"), cue(1000), press(1400, "Green", "double"))
    assert rulings(out) == [] and not [x for x in out if x["type"] == "awaiting"]


def test_replayed_log_without_doubles_option_defaults_by_seat_count() -> None:
    four = run(game(), cue(1000), press(1400, "Green", "double"))
    assert {"type": "awaiting", "round": 1, "need": ["doubles"]} in four
    five = ["Blue", "Red", "Green", "Yellow", "Purple"]
    out = run(game(five), cue(1000), press(1400, "Green", "double"))
    assert not [x for x in out if x["type"] == "awaiting"]


def test_correction_re_rules_and_undo_reverts() -> None:
    base = [game(doubles="off"), cue(1000), *all_slap(1000, FOUR)]
    corrected = run(*base, {"type": "facts", "round": 1, "pigs": 2})
    assert rulings(corrected) == [(1, "Yellow", 2, "last to spank the pigs")]
    undone = run(*base, {"type": "facts", "round": 1, "pigs": 2}, {"type": "undo"})
    assert rulings(undone) == [(1, "Yellow", 1, "last to spank the pig")]


def test_undo_reverts_a_penalty() -> None:
    out = run(game(doubles="off"), cue(1000),
              {"type": "penalty", "round": 1, "seat": "Red", "count": 2, "reason": "slapped the cow"},
              {"type": "undo"})
    assert rulings(out) == []


def test_rounds_and_the_champion() -> None:
    # 2 seats, deck 4: two rounds. Red is last both times: Blue is champion.
    out = run(game(["Blue", "Red"], deck=4), cue(1000), press(1100, "Blue"), press(1200, "Red"),
              cue(5000), press(5100, "Blue"), press(5200, "Red"), cue(9000))
    assert out[-1] == {"type": "standings", "final": True, "winners": ["Blue"], "seats": [
        {"seat": "Blue", "score": 0, "place": 1, "out": False},
        {"seat": "Red", "score": 2, "place": 2, "out": False}]}
    assert rulings(out) == [(1, "Red", 1, "last to spank the pig"),
                            (2, "Red", 1, "last to spank the pig")]


def test_sudden_death_only_tied_leaders_play_and_a_whammy_knocks_out() -> None:
    seats = ["Blue", "Red", "Green"]
    out = run(
        game(seats, deck=3, doubles="off"),  # one regular round
        cue(1000), press(1100, "Blue"), press(1200, "Red"), press(1300, "Green"),  # Green +1
        # sudden death between Blue and Red: Green's presses no longer count
        cue(5000), press(5100, "Red"), press(5200, "Blue"), press(5050, "Green"),
    )
    assert rulings(out, 2) == [(2, "Blue", 1, "last to spank the pig")]
    final = out[-1]
    assert final["final"] is True and final["winners"] == ["Red"]
    assert {r["seat"]: r["out"] for r in final["seats"]} == {"Red": False, "Blue": True,
                                                            "Green": False}
    assert [r["seat"] for r in final["seats"]][0] == "Red"


def test_sudden_death_all_take_the_same_play_goes_on() -> None:
    out = run(
        game(["Blue", "Red"], deck=2, doubles="off"),
        cue(1000),  # round 1: clean, tied at 0
        cue(5000), press(5100, "Blue"), press(5100.5, "Red"),  # too close: nobody
        {"type": "penalty", "round": 2, "seat": "Blue", "count": 1, "reason": "slapped a cow"},
        {"type": "penalty", "round": 2, "seat": "Red", "count": 1, "reason": "slapped a cow"},
        cue(9000), press(9100, "Blue"), press(9300, "Red"),
    )
    assert out[-1]["winners"] == ["Blue"]
    assert scores(out) == {"Blue": 1, "Red": 2}


def test_cues_after_the_game_is_over_are_ignored() -> None:
    out = run(game(["Blue", "Red"], deck=2, doubles="off"), cue(1000), press(1100, "Blue"),
              press(1300, "Red"), cue(5000), press(5100, "Red"), press(5300, "Blue"))
    assert out[-1]["final"] is True and out[-1]["winners"] == ["Blue"]
    assert rulings(out) == [(1, "Red", 1, "last to spank the pig")]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"type": "slap", "t_us": 5}, "line 2: unknown type 'slap'"),
        ({"type": "press", "t_us": 5}, "line 2: missing field 'seat'"),
        ({"type": "press", "t_us": 5.5, "seat": "Red"}, "line 2: t_us must be a whole number"),
        ({"type": "press", "t_us": 5, "seat": "Mauve"}, "line 2: seat 'Mauve' is not at this table"),
        ({"type": "press", "t_us": 5, "seat": "Red", "button": "nose"}, "line 2: button must be"),
        ({"type": "facts", "round": 1, "pigs": 1}, "line 2: round 1 has no cue before this line"),
        ({"type": "penalty", "round": 1, "seat": "Red", "count": 0, "reason": "x"},
         "line 2: count must be"),
        ({"type": "undo"}, "line 2: undo: there is no judge action left to undo"),
        ({"type": "game", "game": "spank-the-pig", "seats": FOUR}, "line 2: a second game line"),
    ],
)
def test_bad_lines_name_the_line(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(LogError) as info:
        run(game(), bad)
    assert message in str(info.value)


def test_bad_first_lines() -> None:
    with pytest.raises(LogError, match="line 1: the first line must be the game line"):
        run(cue(1))
    with pytest.raises(LogError, match="line 1: unknown option 'speed'"):
        run(game(speed=3))
    with pytest.raises(LogError, match="line 1: option tie_us='fast'"):
        run(game(tie_us="fast"))
    with pytest.raises(LogError, match="for 2 to 7 seats, not 8"):
        run(game([f"S{i}" for i in range(8)]))
    with pytest.raises(LogError, match="line 3: not valid JSON"):
        replay(['{"type": "game", "game": "spank-the-pig", "seats": ["A", "B"]}', "", "{oops"])


def test_an_early_slap_carries_no_margin_against_the_races_slaps() -> None:
    """An early slap 0.8 ms before another seat's race slap, with no pig: the early slap is the
    round's first mistake, ruled with no margin (it competes only with other early slaps; before,
    it was "by 800 µs", under tie_us, against the race's slap)."""
    facts = {"type": "facts", "round": 1, "pigs": 0}
    out = run(game(), cue(1000), press(999.6, "Blue"), press(1000.4, "Red"), facts)
    early = [r for r in out if r["type"] == "ruling" and r["reason"] == "slap too early"]
    assert early == [{"type": "ruling", "round": 1, "seat": "Blue", "delta": 1,
                      "reason": "slap too early", "margin_us": None}]
    # two early slaps still race each other
    out = run(game(), cue(1000), press(900, "Blue"), press(950, "Red"), facts)
    assert [(r["seat"], r["margin_us"]) for r in out if r["type"] == "ruling"] == [
        ("Blue", 50_000)]
