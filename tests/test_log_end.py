"""Scenario logs for the table log's end, practice and judge lines (PRODUCT.md, "Table log" and
"The table's rhythm": The end, Practice, Undo), each replayed as `referee replay` does.

- An `end` line ends the game at its `t_us`: cues after it are ignored, a race open at it closes
  there (presses after it count for nothing), judge lines for rounds before it still count
  wherever they stand; the standings are final with the leaders as (co-)champions unless a
  question is still open.
- A practice game's `game` line says `"practice": true`: no sudden death, no champion.
- A judge line naming a round whose cue (Pig: claim) came once the game was over is well formed
  and changes nothing; a later `facts` line corrects only the facts it names.
- A logged `undo` is honoured whatever round it reverts; a void is a judge action like any other.
"""

from __future__ import annotations

from typing import Any

import pytest

from referee.store.tablelog import LogError
from tests.rules_log import FOUR, MS, THREE, S, cue, facts, game, press, rulings, run


def end(t_us: int) -> dict[str, Any]:
    return {"type": "end", "t_us": t_us}


def penalty(round: int, seat: str, count: int = 1) -> dict[str, Any]:
    return {"type": "penalty", "round": round, "seat": seat, "count": count,
            "reason": "slapped the hippo"}


def spank_round(k: int, order: list[str], gap_ms: int = 100) -> list[dict[str, Any]]:
    """Round k's cue at k × 10 s, then slaps `gap_ms` apart in `order` (the last is last)."""
    t = k * 10 * S
    return [cue(t), *(press(t + 200 * MS + i * gap_ms * MS, s) for i, s in enumerate(order))]


def final(out: list[dict[str, Any]]) -> tuple[bool, list[str], list[tuple[str, int, int]]]:
    st = out[-1]
    assert st["type"] == "standings"
    return st["final"], st["winners"], [(r["seat"], r["score"], r["place"]) for r in st["seats"]]


SPANK = game("spank-the-pig", FOUR, doubles="off")


# -- the end line --------------------------------------------------------------------------------


def test_an_end_line_crowns_the_leaders_as_co_champions_and_ignores_the_cues_after_it() -> None:
    """Yellow, then Green last; the judge ends the game: Blue and Red are co-champions. A round
    called after the end (Blue last in it) counts for nothing."""
    log = [SPANK, *spank_round(1, ["Blue", "Red", "Green", "Yellow"]),
           *spank_round(2, ["Blue", "Red", "Yellow", "Green"]), end(25 * S),
           *spank_round(3, ["Red", "Green", "Yellow", "Blue"])]
    out = run(*log)
    assert [(r[1], r[2]) for r in rulings(out)] == [("Yellow", 1), ("Green", 1)]
    assert final(out) == (True, ["Blue", "Red"], [("Blue", 0, 1), ("Red", 0, 1),
                                                  ("Green", 1, 3), ("Yellow", 1, 3)])
    # without the end line the same log is a game in progress
    assert final(run(*log[:-6], *log[-5:]))[:2] == (False, [])


def test_a_single_leader_at_the_end_is_the_champion_and_a_later_end_line_changes_nothing() -> None:
    log = [SPANK, *spank_round(1, ["Blue", "Red", "Green", "Yellow"]),
           *spank_round(2, ["Yellow", "Red", "Green", "Blue"]),
           *spank_round(3, ["Yellow", "Blue", "Green", "Red"]), end(35 * S)]
    out = run(*log)
    assert final(out)[:2] == (True, ["Green"])
    assert run(*log, end(36 * S)) == out


def test_a_race_open_at_the_end_closes_there_and_a_press_after_it_counts_for_nothing() -> None:
    """Round 1: Blue, Red and Green slap; the end comes before Yellow's slap. Yellow's slap after
    the end counts for nothing: three of four slapped, so the judge is asked (the standings wait
    for the answer); the answer, on a line after the end, still counts: Yellow never slapped."""
    race = spank_round(1, ["Blue", "Red", "Green"])
    late = press(10 * S + 700 * MS, "Yellow")
    out = run(SPANK, *race, end(10 * S + 600 * MS), late)
    assert out[0] == {"type": "awaiting", "round": 1, "need": ["pigs"]}
    assert final(out)[:2] == (False, [])  # a question is still open
    out = run(SPANK, *race, end(10 * S + 600 * MS), late, facts(1, pigs=1))
    assert [(r[1], r[2], r[3], r[4]) for r in rulings(out)] == [
        ("Yellow", 1, "last to spank the pig", None)]  # never slapped: no margin to tell
    assert final(out)[:2] == (True, ["Blue", "Red", "Green"])
    # without the end, Yellow's slap is in the race, last by 300 ms
    out = run(SPANK, *race, late)
    assert [(r[1], r[4]) for r in rulings(out)] == [("Yellow", 300 * MS)]


def test_judge_lines_for_rounds_before_the_end_count_wherever_they_stand() -> None:
    log = [SPANK, *spank_round(1, ["Blue", "Red", "Green", "Yellow"]),
           *spank_round(2, ["Blue", "Red", "Yellow", "Green"]), end(25 * S)]
    out = run(*log, penalty(1, "Red"), facts(2, pigs=2))
    assert final(out) == (True, ["Blue"], [("Blue", 0, 1), ("Red", 1, 2), ("Yellow", 1, 2),
                                           ("Green", 2, 4)])
    out = run(*log, penalty(1, "Red"), {"type": "undo"})  # undone after the end: as before
    assert final(out)[:2] == (True, ["Blue", "Red"])


def test_an_end_in_sudden_death_crowns_the_seats_still_in_it() -> None:
    """Two rounds of a 2-round game leave Blue and Red tied (Green last twice); in sudden death
    both take two whammies (the judge's) and play on; the judge ends it: Blue and Red, not Green
    (out of the running), even though Green's score now equals theirs."""
    log = [game("spank-the-pig", THREE, doubles="off", deck=6),
           *spank_round(1, ["Blue", "Red", "Green"]), *spank_round(2, ["Red", "Blue", "Green"]),
           *spank_round(3, []), penalty(3, "Blue", 2), penalty(3, "Red", 2)]
    out = run(*log)
    assert final(out)[:2] == (False, [])
    out = run(*log[:-2], end(35 * S), *log[-2:])
    assert final(out)[:2] == (True, ["Blue", "Red"])
    assert {r[0]: r[1] for r in final(out)[2]} == {"Blue": 2, "Red": 2, "Green": 2}


def test_a_sudden_death_race_cut_by_the_end_is_ruled_from_the_slaps_before_it() -> None:
    """Round 1 leaves Blue, Red and Green tied (Yellow last): round 2 is their sudden death.
    Blue slaps; the judge ends the game before Red and Green do (Red's slap after the end
    counts for nothing). The end closes the race there (PRODUCT.md, Table log): one of three
    slapped, so the judge is asked and the standings wait. A pig: Red and Green never slapped
    and each takes what the last would (`stragglers = all-lose`): both are out, Blue is the
    champion. No pig: Blue slapped first with none and is out; Red and Green are still in and
    the end crowns them, then the play-off's places: Blue (in the sudden death) ahead of Yellow
    (who sat it out) though both have a whammy. With `stragglers = no-one` nobody takes the
    pig and the three still in are co-champions."""
    def log(**options: Any) -> list[dict[str, Any]]:
        return [game("spank-the-pig", FOUR, doubles="off", deck=4, **options),
                *spank_round(1, FOUR), *spank_round(2, ["Blue"]), end(20 * S + 500 * MS),
                press(20 * S + 600 * MS, "Red")]
    out = run(*log())
    assert out[1] == {"type": "awaiting", "round": 2, "need": ["pigs"]}
    assert final(out)[:2] == (False, [])  # the question is open: nobody is out yet
    out = run(*log(), facts(2, pigs=1))
    assert rulings(out, 2) == [(2, "Red", 1, "last to spank the pig", None),
                               (2, "Green", 1, "last to spank the pig", None)]
    assert final(out) == (True, ["Blue"], [("Blue", 0, 1), ("Red", 1, 2), ("Green", 1, 2),
                                           ("Yellow", 1, 4)])
    out = run(*log(), facts(2, pigs=0))
    assert rulings(out, 2) == [(2, "Blue", 1, "first to slap with no pig", None)]
    assert final(out) == (True, ["Red", "Green"], [("Red", 0, 1), ("Green", 0, 1),
                                                   ("Blue", 1, 3), ("Yellow", 1, 4)])
    assert [r["out"] for r in out[-1]["seats"]] == [False, False, True, False]
    out = run(*log(stragglers="no-one"), facts(2, pigs=1))
    assert [(r[1], r[2], r[3]) for r in rulings(out, 2)] == [
        (None, 0, "unclear: 2 never slapped")]
    assert final(out)[:2] == (True, ["Blue", "Red", "Green"])


@pytest.mark.parametrize(("name", "seats", "claims"), [
    ("pig", ["Blue", "Red", "Green", "Yellow"], True),
    ("pigs-tail", THREE, False),
])
def test_an_end_line_ends_every_game(name: str, seats: list[str], claims: bool) -> None:
    """Pig: Blue claims, Red and Green press, Yellow never does: Yellow loses a life; then the
    end. Pig's Tail: one flip, no claim; then the end. Both: final, every seat still in a leader."""
    if claims:
        log = [game(name, seats), press(10 * S, "Blue"), press(10 * S + 100 * MS, "Red"),
               press(10 * S + 200 * MS, "Green"), end(40 * S), press(50 * S, "Red")]
        expected = ["Blue", "Red", "Green"]
    else:
        log = [game(name, seats), cue(4 * S, "Blue"), end(5 * S), cue(8 * S, "Red"),
               press(8 * S + 100 * MS, "Red")]
        expected = seats
    out = run(*log)
    assert final(out)[:2] == (True, expected)
    assert final(run(*[x for x in log if x["type"] != "end"]))[:2] == (False, [])


@pytest.mark.parametrize("name", ["slapjack", "halli-galli", "snap"])
def test_an_end_line_crowns_the_card_game_seat_holding_the_most_cards(name: str) -> None:
    """Blue, Red, Green and Blue flip; on the fourth card everyone presses, Red first, and Red
    takes the cards (a Jack, five of a fruit, a snap: all pressed); then the judge's End. The
    most cards wins (PRODUCT.md, "More slap games": "or by the judge"): Red is the champion."""
    flips = [cue(k * S, seat) for k, seat in enumerate(["Blue", "Red", "Green"], start=1)]
    take = [cue(4 * S, "Blue"), press(4 * S + 200 * MS, "Red"),
            press(4 * S + 300 * MS, "Green"), press(4 * S + 400 * MS, "Blue")]
    log = [game(name, THREE), *flips, *take, end(10 * S)]
    out = run(*log)
    assert [(r[1], r[2] > 0) for r in rulings(out)] == [("Red", True)]
    done, winners, rows = final(out)
    assert (done, winners) == (True, ["Red"])
    assert rows[0][0] == "Red" and rows[0][2] == 1 and all(r[2] > 1 for r in rows[1:])
    assert final(run(*log[:-1]))[:2] == (False, [])  # without the end: still playing


# -- practice --------------------------------------------------------------------------------------


PRACTICE = {**game("spank-the-pig", ["Blue", "Red"], doubles="off", deck=6), "practice": True}


def test_a_practice_game_has_no_sudden_death_and_no_champion() -> None:
    """Three rounds, one whammy each: tied leaders, but a practice has no sudden death."""
    log = [PRACTICE, *spank_round(1, ["Blue", "Red"]), *spank_round(2, ["Red", "Blue"]),
           *spank_round(3, [])]
    out = run(*log, end(35 * S))
    assert final(out) == (True, [], [("Blue", 1, 1), ("Red", 1, 1)])
    assert run(*log) == out  # over by itself all the same
    assert final(run({k: v for k, v in PRACTICE.items() if k != "practice"}, *log[1:]))[:2] == (
        False, [])  # the real game goes to sudden death


def test_a_practice_ended_early_still_crowns_nobody() -> None:
    out = run(PRACTICE, *spank_round(1, ["Blue", "Red"]), end(15 * S))
    assert final(out) == (True, [], [("Blue", 0, 1), ("Red", 1, 2)])


def test_practice_must_be_true_or_false() -> None:
    with pytest.raises(LogError, match="line 1: .*practice"):
        run({**PRACTICE, "practice": "yes"})


# -- judge lines for rounds after the game was over -------------------------------------------------


def test_a_judge_line_for_a_pig_claim_after_the_game_was_over_changes_nothing() -> None:
    """Blue claims, Red presses: Green loses its only life and two are left, the game is over.
    Blue claims again later: a round the judge may name, which changes nothing."""
    log = [game("pig", THREE), press(10 * S, "Blue"), press(10 * S + 100 * MS, "Red"),
           press(60 * S, "Blue")]
    out = run(*log)
    assert final(out)[:2] == (True, ["Blue", "Red"])
    assert run(*log, facts(2, claim=False), penalty(2, "Red")) == out
    with pytest.raises(LogError, match="line 5: round 3 has not started"):
        run(*log, facts(3, claim=False))


def test_a_judge_line_for_a_cue_after_the_end_changes_nothing() -> None:
    log = [SPANK, *spank_round(1, ["Blue", "Red", "Green", "Yellow"]), end(15 * S),
           *spank_round(2, ["Blue", "Red", "Green", "Yellow"])]
    out = run(*log)
    assert run(*log, facts(2, pigs=3), penalty(2, "Blue", 2)) == out


def test_a_later_facts_line_corrects_only_the_facts_it_names() -> None:
    """Two pigs (Yellow takes 2); the round voided; the void taken back by a facts line naming
    only "void": the two pigs still stand."""
    base = [SPANK, *spank_round(1, ["Blue", "Red", "Green", "Yellow"])]
    out = run(*base, facts(1, pigs=2), facts(1, void=True), facts(1, void=False))
    assert [(r[1], r[2]) for r in rulings(out)] == [("Yellow", 2)]


def test_a_logged_undo_reverts_the_latest_judge_line_whatever_its_round() -> None:
    """A void of round 1, given after round 3 was played, is what an undo at the end takes back
    (the keypad could not have reached it; the log is honoured all the same)."""
    log = [SPANK, *(x for k in (1, 2, 3) for x in spank_round(k, ["Blue", "Red", "Green",
                                                                  "Yellow"]))]
    voided = run(*log, facts(1, void=True))
    assert [r[0] for r in rulings(voided)] == [2, 3]
    assert run(*log, facts(1, void=True), {"type": "undo"}) == run(*log)
