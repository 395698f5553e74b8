"""Pig's Tail as table-log scenarios: a log in, the replay's lines out."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from referee.events import Cue, Facts, Press, Undo
from referee.rules.pigstail import PigsTail
from referee.store.tablelog import LogError, replay

THREE = ["Blue", "Red", "Green"]
S = 1_000_000  # one second in µs
TURN = 4 * S


def game(seats: list[str] = THREE, **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": "pigs-tail", "seats": seats, "options": options}


def flip(k: int, seats: list[str] = THREE) -> dict[str, Any]:
    """The k-th flip (from 1), at k × 4 s, by the seats in turn."""
    return {"type": "cue", "t_us": k * TURN, "seat": seats[(k - 1) % len(seats)]}


def flips(a: int, b: int, seats: list[str] = THREE) -> list[dict[str, Any]]:
    return [flip(k, seats) for k in range(a, b + 1)]


def tap(k: int, after_ms: float, seat: str) -> dict[str, Any]:
    """A press `after_ms` after the k-th flip."""
    return {"type": "press", "t_us": k * TURN + int(after_ms * 1000), "seat": seat}


def facts(round: int, **values: Any) -> dict[str, Any]:
    return {"type": "facts", "round": round, **values}


def run(*lines: dict[str, Any], **overrides: Any) -> list[dict[str, Any]]:
    return replay([json.dumps(x) for x in lines], overrides).lines()


def ruling(round: int, seat: str | None, delta: int, reason: str,
           margin_us: int | None = None) -> dict[str, Any]:
    return {"type": "ruling", "round": round, "seat": seat, "delta": delta, "reason": reason,
            "margin_us": margin_us}


def table(out: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    return [(r["seat"], r["score"], r["place"]) for r in out[-1]["seats"]]


# -- the flipper takes it -------------------------------------------------------------------------


def test_flipper_claims_a_match_and_takes_the_pile() -> None:
    out = run(game(), *flips(1, 4), tap(3, 500, "Green"), tap(3, 400, "Blue"), tap(4, 300, "Blue"),
              tap(4, 200, "Red"))
    # Green flipped card 3: pile of 3. Blue's press on Green's card is ignored. Blue flips card 4
    # onto an empty pile: the claim is refused (Red's press is ignored).
    assert out == [
        ruling(3, "Green", 3, "flipped a match"),
        ruling(4, "Blue", 0, "no card below to match"),
        {"type": "standings", "final": False, "winners": [], "seats": [
            {"seat": "Blue", "score": 0, "place": 1, "out": False},
            {"seat": "Red", "score": 0, "place": 1, "out": False},
            {"seat": "Green", "score": 3, "place": 3, "out": False},
        ]},
    ]


def test_claim_on_the_very_first_card_is_refused() -> None:
    out = run(game(), *flips(1, 2), tap(1, 200, "Blue"), tap(2, 200, "Red"))
    assert out[:-1] == [ruling(1, "Blue", 0, "no card below to match"),
                        ruling(2, "Red", 2, "flipped a match")]


def test_judge_marks_a_match_the_flipper_missed_and_refuses_a_false_one() -> None:
    lines = [game(), *flips(1, 5), tap(4, 100, "Blue")]
    assert run(*lines)[:-1] == [ruling(4, "Blue", 4, "flipped a match")]
    out = run(*lines, facts(2, match=True), facts(4, match=False))
    assert out[:-1] == [ruling(2, "Red", 2, "flipped a match"), ruling(4, "Blue", 0, "no match")]
    assert table(out)[-1] == ("Red", 2, 3)


def test_flipper_press_outside_its_window_is_ignored() -> None:
    out = run(game(window_ms=1000), *flips(1, 3), tap(2, 1500, "Red"))
    assert out[:-1] == []


# -- the slowest takes it -------------------------------------------------------------------------


def test_slowest_all_tapped_is_a_match_and_the_last_takes_it() -> None:
    out = run(game(take="slowest"), *flips(1, 3),
              tap(3, 310, "Red"), tap(3, 250, "Blue"), tap(3, 420, "Green"))
    assert out[:-1] == [ruling(3, "Green", 3, "last to tap", 110_000)]


def test_slowest_too_close_to_call_keeps_the_pile() -> None:
    out = run(game(take="slowest"), *flips(1, 4),
              tap(2, 300, "Blue"), tap(2, 400, "Red"), tap(2, 400.5, "Green"),
              tap(4, 300, "Blue"), tap(4, 400, "Red"), tap(4, 350, "Green"))
    assert out[:-1] == [ruling(2, None, 0, "too close to call", 500),
                        ruling(4, "Red", 4, "last to tap", 50_000)]


def test_slowest_nobody_tapped_is_no_match() -> None:
    assert run(game(take="slowest"), *flips(1, 5))[:-1] == []


def test_slowest_split_taps_ask_the_judge() -> None:
    lines = [game(take="slowest"), *flips(1, 3), tap(2, 300, "Blue"), tap(2, 500, "Red")]
    assert run(*lines)[:-1] == [{"type": "awaiting", "round": 2, "need": ["match"]}]
    # a match: Green never tapped and takes the pile, with no margin (only between tappers)
    assert run(*lines, facts(2, match=True))[:-1] == [
        ruling(2, "Green", 2, "last to tap", None)]
    # no match: the first tapper made a false start
    assert run(*lines, facts(2, match=False))[:-1] == [
        ruling(2, "Blue", 2, "false start", 200_000)]


def test_slowest_two_never_tapped_take_nothing_and_the_pile_stays() -> None:
    """Issue 23: only one seat can take the pile, so two that never tapped take nothing; not
    "too close to call", which is only ever between seats that tapped."""
    out = run(game(take="slowest"), *flips(1, 3), tap(2, 300, "Blue"), facts(2, match=True),
              tap(3, 100, "Red"), tap(3, 200, "Blue"), tap(3, 300, "Green"))
    assert out[:-1] == [ruling(2, None, 0, "unclear: 2 never tapped"),
                        ruling(3, "Green", 3, "last to tap", 100_000)]


def test_slowest_tap_on_the_first_card_is_a_false_start() -> None:
    out = run(game(take="slowest"), *flips(1, 2), tap(1, 200, "Red"), tap(1, 300, "Blue"),
              tap(1, 400, "Green"))  # even everyone: the first card cannot match
    assert out[:-1] == [ruling(1, "Red", 1, "false start", 100_000)]


def test_slowest_false_start_too_close_to_call() -> None:
    out = run(game(take="slowest"), *flips(1, 3), tap(2, 200, "Red"), tap(2, 200.3, "Blue"),
              facts(2, match=False))
    assert out[:-1] == [ruling(2, None, 0, "too close to call", 300)]


def test_slowest_tap_between_flips_is_a_false_start() -> None:
    out = run(game(take="slowest"),
              tap(0, 500, "Green"),  # before the first flip: nothing to take
              *flips(1, 3),
              tap(2, 3500, "Red"), tap(2, 3600, "Blue"),  # after the window, before flip 3
              tap(3, 100, "Blue"),  # the first card on the pile: a false start takes it
              tap(3, 3500, "Green"))  # the pile is empty: nothing to take
    assert out[:-1] == [ruling(2, "Red", 2, "false start between flips", 100_000),
                        ruling(3, "Blue", 1, "false start")]


def test_slowest_window_closes_early_once_all_tapped() -> None:
    rules = PigsTail(THREE, {"take": "slowest"})
    rules.feed(Cue(TURN, "Blue"))
    rules.feed(Cue(2 * TURN, "Red"))
    for ms, seat in [(100, "Blue"), (150, "Red"), (300, "Green")]:
        rules.advance(2 * TURN + ms * 1000)
        rules.feed(Press(2 * TURN + ms * 1000, seat))
    assert rules.status().closes_at_us == 2 * TURN + 301_000
    rules.advance(2 * TURN + 301_000)
    assert rules.take_changed() == [2]
    assert rules.round_outputs(2)[0].seat == "Green"
    rules.feed(Press(2 * TURN + 900_000, "Blue"))  # a second tap in the window: not a false start
    assert rules.take_changed() == [] and rules.next_call() == ("turn", "Green")


# -- penalties, corrections, undo -------------------------------------------------------------------


def test_penalty_adds_cards_and_correction_re_rules_the_piles_after() -> None:
    lines = [game(), *flips(1, 6), tap(3, 100, "Green"), tap(6, 100, "Green"),
             {"type": "penalty", "round": 1, "seat": "Blue", "count": 2, "reason": "peeked"}]
    out = run(*lines)
    assert out[:-1] == [ruling(1, "Blue", 2, "peeked"), ruling(3, "Green", 3, "flipped a match"),
                        ruling(6, "Green", 3, "flipped a match")]
    out = run(*lines, facts(2, match=True))  # Red took 2: card 3 has none below, stays on
    assert out[:-1] == [ruling(1, "Blue", 2, "peeked"), ruling(2, "Red", 2, "flipped a match"),
                        ruling(3, "Green", 0, "no card below to match"),
                        ruling(6, "Green", 4, "flipped a match")]
    assert run(*lines, facts(2, match=True), {"type": "undo"}) == run(*lines)
    assert run(*lines, facts(2, match=True), facts(2, match=False)) == run(*lines)


def test_void_round_rules_nothing_but_its_card_stays() -> None:
    out = run(game(), *flips(1, 3), tap(2, 100, "Red"), tap(3, 100, "Green"), facts(2, void=True))
    assert out[:-1] == [ruling(3, "Green", 3, "flipped a match")]


# -- the end --------------------------------------------------------------------------------------


def test_game_over_after_the_52nd_card_with_shared_places() -> None:
    lines = [game(["Blue", "Red", "Green", "Yellow"]), *flips(1, 55, ["Blue", "Red", "Green", "Yellow"])]
    lines += [tap(2, 100, "Red"),  # Red flips card 2: 2 cards
              tap(3, 100, "Green"),  # card 3 onto an empty pile: refused, it stays
              tap(4, 100, "Yellow"),  # cards 3 and 4: 2 cards
              tap(7, 100, "Green"),  # cards 5 to 7: 3 cards
              tap(49, 100, "Blue"),  # cards 8 to 49: 42 cards
              tap(53, 100, "Red")]  # after the ring is empty: ignored
    out = run(*lines)
    assert [(r["seat"], r["delta"]) for r in out[:-1]] == [
        ("Red", 2), ("Green", 0), ("Yellow", 2), ("Green", 3), ("Blue", 42)]
    assert out[-1] == {"type": "standings", "final": True, "winners": ["Red", "Yellow"], "seats": [
        {"seat": "Red", "score": 2, "place": 1, "out": False},
        {"seat": "Yellow", "score": 2, "place": 1, "out": False},
        {"seat": "Green", "score": 3, "place": 3, "out": False},
        {"seat": "Blue", "score": 42, "place": 4, "out": False},
    ]}
    # cues after the 52nd card are ignored, but they number rounds: a judge line naming one is
    # well formed and changes nothing (PRODUCT.md, "Table log")
    late_penalty = {"type": "penalty", "round": 55, "seat": "Red", "count": 1, "reason": "late"}
    assert run(*lines, facts(53, match=True), late_penalty) == out
    with pytest.raises(LogError) as err:  # no cue of round 56 in the log at all
        run(*lines, facts(56, match=True))
    assert "round 56" in str(err.value)


def test_tied_winners_share_first_place() -> None:
    out = run(game(), *flips(1, 52), tap(2, 100, "Red"), tap(4, 100, "Blue"))
    assert out[-1]["winners"] == ["Green"]
    assert table(out) == [("Green", 0, 1), ("Blue", 2, 2), ("Red", 2, 2)]
    out = run(game(), *flips(1, 52), tap(2, 100, "Red"), tap(4, 100, "Blue"), tap(6, 100, "Green"))
    assert table(out) == [("Blue", 2, 1), ("Red", 2, 1), ("Green", 2, 1)]
    assert out[-1]["winners"] == ["Blue", "Red", "Green"]


def test_not_over_while_the_last_card_awaits_the_judge() -> None:
    lines = [game(["Blue", "Red"], take="slowest"), *flips(1, 52, ["Blue", "Red"]),
             tap(52, 100, "Red")]
    out = run(*lines)
    assert out[-2] == {"type": "awaiting", "round": 52, "need": ["match"]}
    assert out[-1]["final"] is False
    out = run(*lines, facts(52, match=True))
    assert out[-2] == ruling(52, "Blue", 52, "last to tap", None)
    assert out[-1]["final"] is True and out[-1]["winners"] == ["Red"]


# -- the live table -------------------------------------------------------------------------------


def test_turn_calls_go_round_in_seat_order() -> None:
    rules = PigsTail(THREE, {"take": "slowest"})
    assert rules.next_call() == ("turn", "Blue")
    assert rules.announcements(1) == [("deal_ring", {})]
    rules.feed(Cue(TURN, "Blue"))
    assert rules.next_call() is None  # race open
    rules.advance(TURN + 3 * S)
    assert rules.next_call() == ("turn", "Red")
    rules.feed(Cue(2 * TURN, "Red"))
    rules.feed(Press(2 * TURN + 100_000, "Blue"))
    rules.advance(2 * TURN + 3 * S)
    # a question does not stop the ring: the engine holds the table while the current round
    # waits for the judge, not the rules (an older round's question never holds it)
    assert rules.status().awaiting is not None and rules.next_call() == ("turn", "Green")
    rules.feed(Facts(2, {"match": False}))
    assert rules.next_call() == ("turn", "Green")
    rules.feed(Undo())
    assert rules.status().awaiting is not None
    rules.feed(Facts(2, {"match": True}))
    rules.feed(Cue(3 * TURN, "Green"))
    rules.advance(3 * TURN + 3 * S)
    assert rules.next_call() == ("turn", "Blue")


def test_over_has_no_next_call() -> None:
    rules = PigsTail(["Blue", "Red"])
    for k in range(1, 53):
        rules.feed(Cue(k * TURN, "Blue"))
        assert rules.status().over is False
    rules.advance(53 * TURN)
    assert rules.status().over is True and rules.next_call() is None
    assert rules.standings().winners == ("Blue", "Red")


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("options, message", [
    ({"take": "fastest"}, "option take='fastest': expected one of flipper, slowest"),
    ({"window_ms": "soon"}, "option window_ms='soon'"),
    ({"turn_ms": 0}, "option turn_ms=0"),
    ({"lives": 3}, "unknown option 'lives' for pigs-tail"),
])
def test_bad_options_name_the_game_line(options: dict[str, Any], message: str) -> None:
    with pytest.raises(LogError) as err:
        run(game(**options), flip(1))
    assert err.value.line == 1 and message in str(err.value)


@pytest.mark.parametrize("seats", [["Blue"], [f"S{i}" for i in range(9)]])
def test_seat_count_outside_2_to_8(seats: list[str]) -> None:
    with pytest.raises(LogError) as err:
        run(game(seats))
    assert err.value.line == 1 and "pigs-tail is for 2 to 8 seats" in str(err.value)


@pytest.mark.parametrize("line, message", [
    ({"type": "cue", "t_us": 9 * S}, 'cue names the flipper: add "seat"'),
    (facts(1, pigs=1), "facts field 'pigs' is not used in pigs-tail"),
    (facts(1, match=1), "match must be true or false, not 1"),
    (facts(1, claim=True), "facts field 'claim' is not used"),
    (facts(3, match=True), "round 3 has no cue"),
])
def test_bad_lines_name_their_line(line: dict[str, Any], message: str) -> None:
    with pytest.raises(LogError) as err:
        run(game(), *flips(1, 2), line)
    assert err.value.line == 4 and message in str(err.value)


def _live(lines: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Feed the log as the live engine might: cues on time, presses up to 30 ms late."""
    rnd = random.Random(seed)
    rules = PigsTail(lines[0]["seats"], lines[0]["options"])
    timed = [(x["t_us"] + (rnd.randrange(30_000) if x["type"] == "press" else 0), x)
             for x in lines[1:] if x["type"] in ("cue", "press")]
    for arrival, x in sorted(timed, key=lambda a: a[0]):
        rules.advance(arrival)
        if x["type"] == "cue":
            rules.feed(Cue(x["t_us"], x["seat"]))
        else:
            rules.feed(Press(x["t_us"], x["seat"]))
    rules.finish()
    for x in lines[1:]:
        if x["type"] == "facts":
            rules.feed(Facts(x["round"], {k: v for k, v in x.items() if k not in ("type", "round")}))
    return [o.to_json() for o in rules.outputs()] + [rules.standings().to_json()]


LIVE_LOG = [
    game(take="slowest"), *flips(1, 9),
    tap(1, 10, "Red"),  # first card: false start
    tap(3, 200, "Blue"), tap(3, 204, "Red"), tap(3, 204.5, "Green"),  # too close
    tap(4, 100, "Green"), tap(4, 105, "Blue"), tap(4, 110, "Red"),  # Red last
    tap(5, 3001, "Red"), tap(5, 3005, "Green"),  # between flips: Red's false start
    tap(6, 3995, "Green"),  # between flips, delivered after the next flip call
    tap(8, 2990, "Blue"), tap(8, 2995, "Red"),  # split taps: the judge says a match
    facts(8, match=True),
    tap(9, 3990, "Green"), tap(9, 4010, "Blue"),
]


@pytest.mark.parametrize("seed", range(20))
def test_arrival_order_does_not_change_the_outcome(seed: int) -> None:
    lines = LIVE_LOG
    expected = run(*lines)
    assert [(r["round"], r["seat"], r.get("delta")) for r in expected[:-1]] == [
        (1, "Red", 1), (3, None, 0), (4, "Red", 3), (5, "Red", 1), (6, "Green", 1),
        (8, "Green", 2), (9, "Green", 1)]
    assert _live(lines, seed) == expected
