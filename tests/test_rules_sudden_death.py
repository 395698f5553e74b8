"""Spank the Pig!'s sudden death as table-log scenarios (issue 23): each log in, the replay's
lines out, as `referee replay` prints them.

- The race window closes at the first of cue + `window_ms`, every active seat having pressed plus
  `tie_us`, and the start of the next round's early window: also when a judge's line, read after
  every press, is what sends the table into sudden death (the next round's slaps never count in
  the earlier one).
"""

from __future__ import annotations

from typing import Any

from tests.rules_log import MS, THREE, S, cue, facts, game, press, rulings, run

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


# -- places after a sudden death are a play-off's ------------------------------------------------


def slaps(t0: int, order: list[str]) -> list[dict[str, Any]]:
    """Each seat of `order` slaps, 100 ms apart from 200 ms after the cue at `t0`."""
    return [press(t0 + (200 + 100 * i) * MS, s) for i, s in enumerate(order)]


def places(out: list[dict[str, Any]]) -> dict[str, int]:
    return {r["seat"]: r["place"] for r in out[-1]["seats"]}


def test_places_after_a_sudden_death_are_a_play_offs() -> None:
    """Five seats, one regular round: Purple last, the other four tied at 0 play sudden death.
    Yellow is out first (round 2), Red second (round 3), Blue loses the final (round 4): Green
    is champion, then Blue, Red, Yellow, then Purple who sat it out. All four losers have one
    whammy: by score they were all "2nd"."""
    out = run(game("spank-the-pig", ["Blue", "Red", "Green", "Yellow", "Purple"], deck=5,
                   doubles="off"),
              cue(1 * S), *slaps(1 * S, ["Blue", "Red", "Green", "Yellow", "Purple"]),
              cue(6 * S), *slaps(6 * S, ["Blue", "Red", "Green", "Yellow"]),
              cue(11 * S), *slaps(11 * S, ["Blue", "Green", "Red"]),
              cue(16 * S), *slaps(16 * S, ["Green", "Blue"]))
    assert final(out)[:2] == (True, ["Green"])
    assert places(out) == {"Green": 1, "Blue": 2, "Red": 3, "Yellow": 4, "Purple": 5}
    assert [r["seat"] for r in out[-1]["seats"]] == ["Green", "Blue", "Red", "Yellow", "Purple"]


def test_seats_knocked_out_in_the_same_round_share_a_place() -> None:
    """Sudden death for Blue, Red, Green, Yellow: in round 2 Red and Yellow never slap the pig
    the judge saw, and both are out; in round 3 Blue is last: Green, Blue, then Red and Yellow
    sharing 3rd, then Purple 5th."""
    out = run(game("spank-the-pig", ["Blue", "Red", "Green", "Yellow", "Purple"], deck=5,
                   doubles="off"),
              cue(1 * S), *slaps(1 * S, ["Blue", "Red", "Green", "Yellow", "Purple"]),
              cue(6 * S), *slaps(6 * S, ["Blue", "Green"]), facts(2, pigs=1),
              cue(11 * S), *slaps(11 * S, ["Green", "Blue"]))
    assert final(out)[:2] == (True, ["Green"])
    assert places(out) == {"Green": 1, "Blue": 2, "Red": 3, "Yellow": 3, "Purple": 5}


def test_a_seat_that_sat_out_the_sudden_death_is_placed_after_it_whatever_its_score() -> None:
    """Purple (2 whammies after the regular rounds) sat out; Red, knocked out of the sudden
    death, ends with 3: Red is still 2nd, Purple 3rd."""
    out = run(game("spank-the-pig", ["Blue", "Red", "Purple"], deck=3, doubles="off"),
              cue(1 * S), press(1 * S + 100 * MS, "Blue"), press(1 * S + 100 * MS, "Red"),
              press(1 * S + 500 * MS, "Purple"), facts(1, pigs=2),
              cue(6 * S), press(5 * S + 500 * MS, "Red"), *slaps(6 * S, ["Blue", "Red"]),
              facts(2, pigs=2))
    assert [(r[1], r[2]) for r in rulings(out, 2)] == [("Red", 1), ("Red", 2)]
    assert final(out) == (True, ["Blue"], [("Blue", 0, 1, False), ("Red", 3, 2, True),
                                           ("Purple", 2, 3, False)])


def test_a_round_awaiting_the_judge_knocks_nobody_out_in_sudden_death() -> None:
    """Sudden death for Blue and Red: in round 2 only Blue slaps, so the judge is asked; round
    3 is played meanwhile and Red is last. Until the judge answers, nobody is out of round 2
    and the game is not final. The judge: no pig in round 2. Blue, first to slap with no pig,
    is out in round 2: Red is champion, and round 3 came after the end."""
    lines = [game("spank-the-pig", TWO, deck=2, doubles="off"),
             cue(1 * S), press(1 * S + 100 * MS, "Blue"), press(1 * S + 100 * MS + 500, "Red"),
             cue(5 * S), press(5 * S + 100 * MS, "Blue"),
             cue(10 * S), *slaps(10 * S, ["Blue", "Red"])]
    waiting = run(*lines)
    assert {"type": "awaiting", "round": 2, "need": ["pigs"]} in waiting
    assert rulings(waiting, 2) == []
    assert final(waiting)[:2] == (False, [])
    answered = run(*lines, facts(2, pigs=0))
    assert rulings(answered, 2) == [(2, "Blue", 1, "first to slap with no pig", None)]
    assert rulings(answered, 3) == []
    assert final(answered) == (True, ["Red"], [("Red", 0, 1, False), ("Blue", 1, 2, True)])


def test_shedding_in_sudden_death_knocks_nobody_out() -> None:
    """Sudden death for Blue, Red and Green (each on 2 whammies, the judge's): three pigs, and
    all three, the first three, shed one: nobody took one, nobody is out, and play goes on
    (not final)."""
    out = run(game("spank-the-pig", THREE, deck=3, doubles="off"),
              cue(1 * S), *slaps(1 * S, THREE), facts(1, pigs=3),
              {"type": "penalty", "round": 1, "seat": "Blue", "count": 2, "reason": "peeked"},
              {"type": "penalty", "round": 1, "seat": "Red", "count": 2, "reason": "peeked"},
              {"type": "penalty", "round": 1, "seat": "Green", "count": 2, "reason": "peeked"},
              cue(6 * S), *slaps(6 * S, THREE), facts(2, pigs=3))
    assert [(r[1], r[2]) for r in rulings(out, 2)] == [("Blue", -1), ("Red", -1), ("Green", -1)]
    assert final(out)[:2] == (False, [])
    assert not any(r["out"] for r in out[-1]["seats"])


# -- seats that sat the sudden death out (issue 23's surviving mutants) --------------------------


def test_a_benched_seats_early_slap_in_sudden_death_takes_nothing() -> None:
    """Purple (last in the regular round) sits the sudden death out; it slaps during round 2's
    cadence (early): nothing, since only Blue and Red play on. Red is last: Blue champion."""
    out = run(game("spank-the-pig", ["Blue", "Red", "Purple"], deck=3, doubles="off"),
              cue(1 * S), press(1 * S + 100 * MS, "Blue"), press(1 * S + 100 * MS, "Red"),
              press(1 * S + 500 * MS, "Purple"),
              cue(6 * S), press(5 * S + 600 * MS, "Purple"), *slaps(6 * S, ["Blue", "Red"]))
    assert rulings(out, 2) == [(2, "Red", 1, "last to spank the pig", 100 * MS)]
    assert final(out) == (True, ["Blue"], [("Blue", 0, 1, False), ("Red", 1, 2, True),
                                           ("Purple", 1, 3, False)])


def test_a_benched_seats_slap_at_the_settle_instant_shows_no_reaction_time() -> None:
    """Sudden death for Blue and Red: Red's slap at 6.3 s is the last of the race, which
    settles `tie_us` (1 ms) later. Purple, sitting out, slaps at that very instant: the race
    is closed, so the table shows no reaction time for it (a slap 1 µs earlier would show)."""
    from referee.events import Cue, Press
    from referee.rules.spank import SpankThePig

    def sudden(purple_at: int) -> SpankThePig:
        rules = SpankThePig(("Blue", "Red", "Purple"), {"deck": 3, "doubles": "off"})
        for ev in (Cue(1 * S), Press(1 * S + 100 * MS, "Blue"), Press(1 * S + 100 * MS, "Red"),
                   Press(1 * S + 500 * MS, "Purple"), Cue(6 * S),
                   Press(6 * S + 200 * MS, "Blue"), Press(6 * S + 300 * MS, "Red"),
                   Press(purple_at, "Purple")):
            rules.advance(ev.t_us)
            rules.feed(ev)
        rules.advance(8 * S)
        return rules

    settle = 6 * S + 300 * MS + 1 * MS
    assert sudden(settle).reactions(2) == {"Blue": 200 * MS, "Red": 300 * MS}
    assert sudden(settle - 1).reactions(2) == {"Blue": 200 * MS, "Red": 300 * MS,
                                               "Purple": 301 * MS - 1}
    assert sudden(settle).standings().winners == ("Blue",)
