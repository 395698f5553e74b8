"""Pig / Spoons / Tongue as table-log scenarios: a log in, the replay's lines out."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from referee.engine.loop import phrasebook
from referee.events import Facts, Penalty, Press, Undo
from referee.rules.pig import Pig
from referee.store.tablelog import LogError, replay
from referee.voice import phrases

FOUR = ["Blue", "Red", "Green", "Yellow"]
FIVE = [*FOUR, "Purple"]
S = 1_000_000  # one second in µs


def game(seats: list[str] = FOUR, **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": "pig", "seats": seats, "options": options}


def press(t_us: int, seat: str) -> dict[str, Any]:
    return {"type": "press", "t_us": t_us, "seat": seat}


def facts(round: int, **values: Any) -> dict[str, Any]:
    return {"type": "facts", "round": round, **values}


def penalty(round: int, seat: str, count: int = 1, reason: str = "peeked") -> dict[str, Any]:
    return {"type": "penalty", "round": round, "seat": seat, "count": count, "reason": reason}


def run(*lines: dict[str, Any], **overrides: Any) -> list[dict[str, Any]]:
    return replay([json.dumps(x) for x in lines], overrides).lines()


def ruling(round: int, seat: str | None, delta: int, reason: str,
           margin_us: int | None = None) -> dict[str, Any]:
    return {"type": "ruling", "round": round, "seat": seat, "delta": delta, "reason": reason,
            "margin_us": margin_us}


def table(out: list[dict[str, Any]]) -> list[tuple[str, int, int, bool]]:
    return [(r["seat"], r["score"], r["place"], r["out"]) for r in out[-1]["seats"]]


def claim_round(t0: int, order: list[str], gap_us: int = 200_000) -> list[dict[str, Any]]:
    """A round: the first seat claims at t0, the others follow `gap_us` apart."""
    return [press(t0 + i * gap_us, seat) for i, seat in enumerate(order)]


# -- the race -----------------------------------------------------------------------------------


def test_all_but_one_pressed_the_remaining_seat_loses_and_is_eliminated() -> None:
    # the log lists the presses out of time order: time decides, not line order
    out = run(
        game(),
        press(1_600_000, "Green"),
        press(1_000_000, "Blue"),
        press(1_300_000, "Red"),
    )
    assert out == [
        ruling(1, "Yellow", 1, "last to touch the nose"),
        {"type": "standings", "final": False, "winners": [], "seats": [
            {"seat": "Blue", "score": 0, "place": 1, "out": False},
            {"seat": "Red", "score": 0, "place": 1, "out": False},
            {"seat": "Green", "score": 0, "place": 1, "out": False},
            {"seat": "Yellow", "score": 1, "place": 4, "out": True},
        ]},
    ]


def test_straggler_pressing_after_the_settle_time_still_loses() -> None:
    out = run(game(), *claim_round(S, ["Blue", "Red", "Green"]), press(1_400_000 + 1_000, "Yellow"))
    assert out[:-1] == [ruling(1, "Yellow", 1, "last to touch the nose")]


def test_photo_finish_between_the_last_two_is_too_close_to_call() -> None:
    out = run(game(), *claim_round(S, ["Blue", "Red", "Green"]), press(1_400_000 + 999, "Yellow"))
    assert out[:-1] == [ruling(1, None, 0, "too close to call", 999)]
    assert table(out) == [(s, 0, 1, False) for s in FOUR]


def test_tie_us_option_widens_the_photo_finish() -> None:
    lines = [game(tie_us=50_000), *claim_round(S, ["Blue", "Red", "Green"]),
             press(1_430_000, "Yellow")]
    assert run(*lines)[:-1] == [ruling(1, None, 0, "too close to call", 30_000)]
    assert run(*lines, tie_us=20_000)[:-1] == [ruling(1, "Yellow", 1, "last to touch the nose")]


def test_variant_words() -> None:
    lines = [game(variant="spoons"), *claim_round(S, ["Blue", "Red", "Green"])]
    assert run(*lines)[0]["reason"] == "last to grab a spoon"
    assert run(*lines, variant="tongue")[0]["reason"] == "last to stick out the tongue"


def test_stragglers_no_one_nobody_loses() -> None:
    out = run(game(), *claim_round(S, ["Blue", "Red"]))
    assert out == [
        ruling(1, None, 0, "unclear: 2 did not touch the nose"),
        {"type": "standings", "final": False, "winners": [],
         "seats": [{"seat": s, "score": 0, "place": 1, "out": False} for s in FOUR]},
    ]


def test_stragglers_all_lose_share_their_place() -> None:
    out = run(game(FIVE, stragglers="all-lose"), *claim_round(S, ["Red", "Blue", "Purple"]))
    assert out[:-1] == [
        ruling(1, "Green", 1, "did not touch the nose in time"),
        ruling(1, "Yellow", 1, "did not touch the nose in time"),
    ]
    assert table(out) == [("Blue", 0, 1, False), ("Red", 0, 1, False), ("Purple", 0, 1, False),
                          ("Green", 1, 4, True), ("Yellow", 1, 4, True)]


def test_stragglers_are_those_who_missed_the_window() -> None:
    # window 15 s: Green's press at 16.1 s is after it; it opens no round of its own
    # (it is a claim that nobody follows: unclear)
    out = run(game(), *claim_round(S, ["Blue", "Red"]), press(16_100_000, "Green"))
    assert out[:-1] == [ruling(1, None, 0, "unclear: 2 did not touch the nose"),
                        ruling(2, None, 0, "unclear: 3 did not touch the nose")]
    out = run(game(window_ms=20_000), *claim_round(S, ["Blue", "Red"]), press(16_100_000, "Green"))
    assert out[:-1] == [ruling(1, "Yellow", 1, "last to touch the nose")]


def test_presses_inside_the_window_after_the_ruling_belong_to_the_round() -> None:
    out = run(
        game(FIVE),
        *claim_round(S, ["Blue", "Red", "Green", "Yellow"]),
        press(9 * S, "Purple"),  # late but inside the 15 s window: changes nothing
        press(15 * S + 999_999, "Blue"),  # still inside: not a claim
        *claim_round(20 * S, ["Red", "Green", "Yellow"]),  # Purple is out: Blue loses
    )
    assert out[:-1] == [ruling(1, "Purple", 1, "last to touch the nose"),
                        ruling(2, "Blue", 1, "last to touch the nose")]
    assert out[-1]["final"] is False


def test_final_two_are_co_winners_and_later_presses_are_ignored() -> None:
    out = run(
        game(),
        *claim_round(S, ["Blue", "Red", "Green"]),  # Yellow out
        *claim_round(20 * S, ["Green", "Red"]),  # Blue out: Red and Green win
        *claim_round(40 * S, ["Blue", "Red"]),  # after the game: nothing
    )
    assert out == [
        ruling(1, "Yellow", 1, "last to touch the nose"),
        ruling(2, "Blue", 1, "last to touch the nose"),
        {"type": "standings", "final": True, "winners": ["Red", "Green"], "seats": [
            {"seat": "Red", "score": 0, "place": 1, "out": False},
            {"seat": "Green", "score": 0, "place": 1, "out": False},
            {"seat": "Blue", "score": 1, "place": 3, "out": True},
            {"seat": "Yellow", "score": 1, "place": 4, "out": True},
        ]},
    ]


def test_eliminated_seat_cannot_claim_and_is_not_in_the_race() -> None:
    out = run(
        game(FIVE),
        *claim_round(S, ["Blue", "Red", "Green", "Yellow"]),  # Purple out
        press(20 * S, "Purple"),  # out: not a claim
        press(21 * S, "Purple"),
        *claim_round(22 * S, ["Red", "Green", "Blue"]),  # Yellow is the one left
    )
    assert out[:-1] == [ruling(1, "Purple", 1, "last to touch the nose"),
                        ruling(2, "Yellow", 1, "last to touch the nose")]
    assert out[-1]["final"] is False


# -- lives ----------------------------------------------------------------------------------------


def test_three_lives_spell_pig_before_elimination() -> None:
    lines = [game(lives=3)]
    for k in range(3):
        lines += claim_round((1 + 20 * k) * S, ["Blue", "Red", "Green"])
    out = run(*lines)
    assert out[:-1] == [ruling(k, "Yellow", 1, "last to touch the nose") for k in (1, 2, 3)]
    assert table(out) == [("Blue", 0, 1, False), ("Red", 0, 1, False), ("Green", 0, 1, False),
                          ("Yellow", 3, 4, True)]
    two = run(*lines[:-3])  # after two rounds Yellow has P, I and plays on
    assert table(two)[-1] == ("Yellow", 2, 4, False)


def test_three_lives_while_playing_ranks_by_lives_lost() -> None:
    out = run(game(lives=3), *claim_round(S, ["Blue", "Red", "Green"]),
              *claim_round(20 * S, ["Blue", "Yellow", "Green"]))
    assert table(out) == [("Blue", 0, 1, False), ("Green", 0, 1, False),
                          ("Red", 1, 3, False), ("Yellow", 1, 3, False)]


def test_penalty_adds_lives_lost_and_can_eliminate() -> None:
    out = run(game(lives=3), *claim_round(S, ["Blue", "Red", "Green"]),
              penalty(1, "Yellow", 2, "passed two cards"))
    assert out[:-1] == [ruling(1, "Yellow", 1, "last to touch the nose"),
                        ruling(1, "Yellow", 2, "passed two cards")]
    assert table(out)[-1] == ("Yellow", 3, 4, True)


# -- the judge ----------------------------------------------------------------------------------


def test_false_claim_voids_the_race_and_costs_the_claimer_a_life() -> None:
    out = run(game(), *claim_round(S, ["Blue", "Red", "Green"]), facts(1, claim=False))
    assert out[:-1] == [ruling(1, "Blue", 1, "false claim")]
    assert table(out)[-1] == ("Blue", 1, 4, True)


def test_false_claim_costs_nothing_when_the_option_says_so() -> None:
    out = run(game(false_claim="nothing"), *claim_round(S, ["Blue", "Red", "Green"]),
              facts(1, claim=False))
    assert out[:-1] == [ruling(1, "Blue", 0, "false claim")]
    assert table(out) == [(s, 0, 1, False) for s in FOUR]


def test_confirmed_claim_and_correction_and_undo() -> None:
    base = [game(), *claim_round(S, ["Blue", "Red", "Green"])]
    confirmed = run(*base, facts(1, claim=True))
    assert confirmed == run(*base)
    corrected = run(*base, facts(1, claim=True), facts(1, claim=False))
    assert corrected[:-1] == [ruling(1, "Blue", 1, "false claim")]
    undone = run(*base, facts(1, claim=True), facts(1, claim=False), {"type": "undo"})
    assert undone == confirmed


def test_correction_re_rules_later_rounds() -> None:
    # round 1 puts Yellow out, so round 2's straggler is Blue. Rejecting round 1's claim puts
    # the claimer Red out instead: in round 2 Yellow plays again and is the one left.
    lines = [
        game(),
        *claim_round(S, ["Red", "Blue", "Green"]),
        *claim_round(20 * S, ["Green", "Red", "Yellow"]),
    ]
    out = run(*lines)
    assert out[:-1] == [ruling(1, "Yellow", 1, "last to touch the nose"),
                        ruling(2, "Blue", 1, "last to touch the nose")]
    assert out[-1]["winners"] == ["Red", "Green"]
    out = run(*lines, facts(1, claim=False))
    assert out[:-1] == [ruling(1, "Red", 1, "false claim"),
                        ruling(2, "Blue", 1, "last to touch the nose")]
    assert out[-1]["winners"] == ["Green", "Yellow"]


def test_void_round_has_no_rulings() -> None:
    out = run(game(), *claim_round(S, ["Blue", "Red", "Green"]), penalty(1, "Red"),
              facts(1, void=True))
    assert out[:-1] == []


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("options, message", [
    ({"lives": 2}, "option lives=2: expected 1 or 3"),
    ({"variant": "poker"}, "option variant='poker': expected one of pig, spoons, tongue"),
    ({"stragglers": "some"}, "option stragglers='some'"),
    ({"false_claim": True}, "option false_claim=True"),
    ({"pass_beat_ms": -1}, "option pass_beat_ms=-1"),
    ({"deck": 52}, "unknown option 'deck' for pig"),
])
def test_bad_options_name_the_game_line(options: dict[str, Any], message: str) -> None:
    with pytest.raises(LogError) as err:
        run(game(**options), press(S, "Blue"))
    assert err.value.line == 1 and message in str(err.value)


@pytest.mark.parametrize("seats", [FOUR[:2], [*FIVE, "A", "B", "C", "D"]])
def test_seat_count_outside_3_to_8(seats: list[str]) -> None:
    with pytest.raises(LogError) as err:
        run(game(seats))
    assert err.value.line == 1 and "pig is for 3 to 8 seats" in str(err.value)


@pytest.mark.parametrize("line, message", [
    (facts(1, pigs=1), "facts field 'pigs' is not used in pig"),
    (facts(1, claim="no"), "claim must be true or false, not 'no'"),
    (facts(2, claim=False), "round 2 has not started"),
    (penalty(1, "Purple"), "seat 'Purple' is not at this table"),
    ({"type": "cue", "t_us": 5}, "pig has no cues"),
])
def test_bad_lines_name_their_line(line: dict[str, Any], message: str) -> None:
    with pytest.raises(LogError) as err:
        run(game(), *claim_round(S, ["Blue", "Red", "Green"]), line)
    assert err.value.line == 5 and message in str(err.value)


# -- the live table -------------------------------------------------------------------------------


def test_silent_at_a_claim_then_the_ruling() -> None:
    rules = Pig(FOUR)
    rules.advance(S)
    rules.feed(Press(S, "Blue"))
    assert rules.take_changed() == [] and rules.round_outputs(1) == []
    assert rules.announcements(2) == []
    st = rules.status()
    assert (st.round, st.race_open, st.closes_at_us) == (1, True, 16 * S)
    rules.feed(Press(S + 300_000, "Red"))
    rules.feed(Press(S + 500_000, "Green"))
    assert rules.status().closes_at_us == S + 501_000
    rules.advance(S + 500_999)
    assert rules.take_changed() == []
    rules.advance(S + 501_000)
    assert rules.take_changed() == [1]
    assert rules.round_outputs(1) == [rules.round_outputs(1)[0]]
    assert rules.round_outputs(1)[0].seat == "Yellow"
    assert rules.reactions(1) == {"Blue": 0, "Red": 300_000, "Green": 500_000}
    rules.feed(Press(S + 900_000, "Yellow"))  # inside the window, after the ruling: nothing
    assert rules.take_changed() == []
    assert rules.next_call() is None


def test_a_late_arriving_press_re_rules_its_round() -> None:
    rules = Pig(FOUR)
    for t, seat in [(S, "Blue"), (S + 100_000, "Red"), (S + 200_000, "Green")]:
        rules.advance(t)
        rules.feed(Press(t, seat))
    rules.advance(S + 210_000)
    assert rules.take_changed() == [1] and rules.round_outputs(1)[0].seat == "Yellow"
    rules.feed(Press(S + 200_400, "Yellow"))  # pressed within the settle time, delivered late
    assert rules.take_changed() == [1]
    assert rules.round_outputs(1)[0].reason == "too close to call"
    assert rules.standings().seats[-1].out is False


def test_with_one_life_each_seat_s_elimination_is_made_ready_in_its_own_name() -> None:
    """With `lives = 1` the letters are never said: only each seat's "is out", made ready
    before the first claim (a phrase missing its seat was said as "{seat} is out" at best)."""
    rules = Pig(["Blue", "Red", "Green"], {"lives": 1})
    assert [phrases.text(key, params, book=phrasebook(rules))
            for key, params in rules.said_ahead()] == [
        f"{seat} is out. Remove one set of four cards." for seat in ("Blue", "Red", "Green")]


def test_announcements_deal_lives_elimination_and_co_winners() -> None:
    """The rules say what happened in numbers and names; the voice puts it into words."""

    def said(number: int) -> list[str]:
        return [phrases.text(key, params, book=phrasebook(rules))
                for key, params in rules.announcements(number)]

    rules = Pig(FIVE, {"lives": 3})
    assert rules.announcements(1) == [
        ("deal_sets", {"sets": 5, "ranks": ["aces", "twos", "threes", "fours", "fives"]}),
        ("variant_rule", {"variant": "pig", "act": "touch your nose"})]
    assert said(1) == [
        "Use the aces, twos, threes, fours and fives: one set of four per player. "
        "Deal four cards to each player.",
        "Four of a kind? Quietly touch your nose.",
    ]
    t = S
    for _ in range(3):
        for i, seat in enumerate(["Blue", "Red", "Green", "Yellow"]):
            rules.advance(t + i * 100_000)
            rules.feed(Press(t + i * 100_000, seat))
        t += 20 * S
    rules.advance(t)
    assert rules.announcements(2) == [("lives", {"seat": "Purple", "lost": 1, "left": 2,
                                                 "letter": "P"})]
    assert said(2) == ["Purple takes the letter P."]
    assert rules.announcements(4) == [("eliminated", {"seat": "Purple", "rank_index": 4})]
    rules.feed(Penalty(3, "Yellow", 3, "peeked"))
    rules.feed(Penalty(3, "Green", 3, "peeked"))
    assert rules.announcements(4) == [
        ("eliminated", {"seat": "Green", "rank_index": 4}),
        ("eliminated", {"seat": "Yellow", "rank_index": 3}),
        ("eliminated", {"seat": "Purple", "rank_index": 2}),
    ]  # the co-winners are said by the table's end of game, once
    assert said(4) == [f"{seat} is out. Remove one set of four cards." for seat in
                       ("Green", "Yellow", "Purple")]
    assert rules.standings().winners == ("Blue", "Red")
    assert [r.place for r in rules.standings().seats] == [1, 1, 3, 3, 3]
    rules.feed(Undo())
    assert rules.standings().final is False


def test_pass_beat_is_an_option_not_a_cue() -> None:
    assert Pig(FOUR).schedule().beat_ms == 0
    beat = Pig(FOUR, {"pass_beat_ms": 2500}).schedule()
    assert (beat.beat_ms, beat.beat, Pig(FOUR).next_call()) == (2500, "pass", None)


def _live(lines: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Feed the log as the live engine might: each press delivered up to 30 ms late."""
    rnd = random.Random(seed)
    rules = Pig(lines[0]["seats"], lines[0]["options"])
    timed = [(x["t_us"] + rnd.randrange(30_000), x) for x in lines[1:] if x["type"] == "press"]
    for arrival, x in sorted(timed, key=lambda a: a[0]):
        rules.advance(arrival)
        rules.feed(Press(x["t_us"], x["seat"]))
    rules.finish()
    for x in lines[1:]:
        if x["type"] == "facts":
            rules.feed(Facts(x["round"], {k: v for k, v in x.items() if k not in ("type", "round")}))
    return [o.to_json() for o in rules.outputs()] + [rules.standings().to_json()]


LIVE_LOG = [
    game(FIVE, lives=3, stragglers="all-lose"),
    *claim_round(S, ["Blue", "Red", "Green", "Yellow"], 5_000),
    press(S + 15_000 + 600, "Purple"),  # photo finish
    *claim_round(20 * S, ["Red", "Blue", "Green", "Purple"], 4_000),
    press(20 * S + 12_000 + 1_200, "Yellow"),  # just clear of it
    *claim_round(40 * S, ["Green", "Yellow", "Red"], 3_000),  # two stragglers
    *claim_round(60 * S, ["Yellow", "Purple", "Blue", "Green"], 2_000),
    facts(4, claim=False),
]


@pytest.mark.parametrize("seed", range(20))
def test_arrival_order_does_not_change_the_outcome(seed: int) -> None:
    lines = LIVE_LOG
    expected = run(*lines)
    assert [r["seat"] for r in expected if r["type"] == "ruling"] == [
        None, "Yellow", "Blue", "Purple", "Yellow"]
    assert _live(lines, seed) == expected
