"""UNDO, the judge's End and practice at a live table, on the simulated clock (PRODUCT.md, "The
table's rhythm": Undo, The end, Practice), each checked against the exported log's replay.

- UNDO reverts the latest change to the score, whatever made it: a judge action is withdrawn (an
  `undo` line); a round ruled from presses alone is voided (a `facts` line with "void": true) and
  said ("Round 2 voided."); that void is a judge action, so UNDO again restores the round. The
  keypad reaches the current and the previous round; the judge panel's UNDO any round.
- The judge's End writes an `end` line: `referee export N | referee replay` gives the champions
  the table named; a race open at the End closes there, and a question it leaves open is
  answered before the game is over.
- A practice game's game line says "practice": true and it ends with an `end` line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from referee.events import Penalty
from referee.store.database import connect, export_lines
from referee.store.tablelog import replay
from tests import test_keypad_decisions
from tests.sim import Sim
from tests.support import run_referee

SEATS, OPTIONS = test_keypad_decisions.SEATS, test_keypad_decisions.OPTIONS
play_round, key = test_keypad_decisions.play_round, test_keypad_decisions.key


def said(s: Sim) -> list[tuple[str, dict[str, Any]]]:
    return [(k, p) for k, p, _ in s.voice.said]


def scores(s: Sim) -> dict[str, int]:
    assert s.engine is not None
    return {r.seat: r.score for r in s.engine.rules.standings().seats}


def logged(s: Sim) -> list[dict[str, Any]]:
    return [json.loads(line) for line in s.exported()[1:]]


def test_keypad_undo_voids_a_round_ruled_from_presses_alone_and_undo_again_restores_it(
        sim: Callable[..., Sim]) -> None:
    """"Green: last to spank the pig… One whammy." then UNDO: before, "Nothing to undo"."""
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red"])
    number = play_round(s, ["Blue", "Red", "Green"])
    assert scores(s)["Green"] == 1
    key(s, "undo")
    assert logged(s)[-1] == {"type": "facts", "round": number, "void": True}
    assert said(s)[-1] == ("voided", {"round": number})  # "Round 2 voided."
    assert scores(s)["Green"] == 0
    key(s, "undo")  # the void was a judge action: UNDO withdraws it
    assert logged(s)[-1] == {"type": "undo"}
    assert scores(s)["Green"] == 1
    assert said(s)[-1][0] == "ruling" and said(s)[-1][1]["seat"] == "Green"
    s.check_log_replays_to_live()


def test_undo_takes_whichever_change_came_last(sim: Callable[..., Sim]) -> None:
    """A penalty in round 1, then round 2 ruled from presses: UNDO voids round 2, not the
    penalty. A penalty for round 1 given after round 2 was ruled: UNDO withdraws the penalty."""
    s = sim(SEATS, OPTIONS)
    first = play_round(s, [])
    s.command("feed", event=Penalty(first, "Blue", 1, "slapped the hippo"))
    second = play_round(s, ["Blue", "Red", "Green"])
    key(s, "undo")
    assert logged(s)[-1] == {"type": "facts", "round": second, "void": True}
    assert scores(s) == {"Blue": 1, "Red": 0, "Green": 0}
    key(s, "undo")
    assert scores(s) == {"Blue": 1, "Red": 0, "Green": 1}
    s.command("feed", event=Penalty(first, "Red", 1, "slapped the hippo"))
    key(s, "undo")
    assert logged(s)[-1] == {"type": "undo"}
    assert scores(s) == {"Blue": 1, "Red": 0, "Green": 1}
    s.check_log_replays_to_live()


def test_the_keypad_reaches_the_previous_round_and_the_panel_any(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    first = play_round(s, ["Blue", "Red", "Green"])  # Green's whammy
    play_round(s, [])
    play_round(s, [])  # two clean rounds: round 1 is out of the keypad's reach
    key(s, "undo")
    assert said(s)[-1] == ("nothing_to_undo", {})
    assert scores(s)["Green"] == 1
    s.command("undo")  # the judge panel's UNDO
    assert logged(s)[-1] == {"type": "facts", "round": first, "void": True}
    assert scores(s)["Green"] == 0
    s.check_log_replays_to_live()


def test_the_judges_end_with_tied_leaders_exports_and_replays_to_the_same_co_champions(
        sim: Callable[..., Sim], tmp_path: Any) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])  # Green last: Blue and Red lead
    shown = s.command("end")
    assert shown["final"] is True and shown["winners"] == ["Blue", "Red"]
    assert ("co_champions", {"seats": ["Blue", "Red"]}) in said(s)
    assert logged(s)[-1]["type"] == "end"
    assert s.engine is not None
    exported = run_referee("export", "--db", str(s.store.path), str(s.engine.game_id))
    assert exported.returncode == 0, exported.stderr
    replayed = run_referee("replay", "-", stdin=exported.stdout)
    assert replayed.returncode == 0, replayed.stderr
    standings = json.loads(replayed.stdout.splitlines()[-1])
    assert standings["final"] is True and standings["winners"] == ["Blue", "Red"]
    assert standings == s.check_log_replays_to_live()


def test_an_end_during_a_race_closes_it_then_and_waits_for_the_question_it_leaves(
        sim: Callable[..., Sim]) -> None:
    """Blue and Red slap, the judge ends before Green does: Green's slap after the end counts
    for nothing; two of three slapped, so the judge is asked; YES (a pig): Green is last, then
    the game is over with Blue and Red as co-champions."""
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.press("Blue", cue + 100)
    s.press("Red", cue + 110)
    s.run_to(cue + 200, step_ms=10)
    s.command("end")
    s.press("Green", cue + 250)
    s.run_to(cue + 400, step_ms=10)
    assert engine.snapshot()["phase"] == "awaiting"
    assert not engine.rules.standings().final
    key(s, "yes")
    s.run_to(s.t_ms + 200, step_ms=10)
    assert engine.snapshot()["phase"] == "over"
    assert [k for k, _ in said(s)].count("co_champions") == 1
    assert [(r["seat"], r["delta"]) for r in s.outputs(1)] == [("Green", 1)]
    assert engine.snapshot()["winners"] == ["Blue", "Red"]
    assert all(e.get("seat") != "Green" for e in logged(s) if e["type"] == "press")
    assert s.check_log_replays_to_live()["winners"] == ["Blue", "Red"]


def test_a_practice_game_says_so_in_its_game_line_and_ends_with_an_end_line(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, practice=True)
    engine = s.engine
    assert engine is not None
    practice_id = engine.game_id
    play_round(s, ["Blue", "Red", "Green"])
    s.command("end")  # the judge ends the practice: the real game's Ready step
    assert engine.game_id != practice_id and not engine.practice
    conn = connect(s.store.path, readonly=True)
    try:
        lines = list(export_lines(conn, practice_id))
    finally:
        conn.close()
    assert json.loads(lines[0])["practice"] is True
    assert json.loads(lines[-1])["type"] == "end"
    assert replay(lines).lines()[-1]["final"] is True
    assert replay(lines).lines()[-1]["winners"] == []
    real = json.loads(s.exported()[0])
    assert "practice" not in real  # the real game's line says nothing of practice


def test_once_the_next_game_is_dealt_the_keypad_leaves_the_finished_game_alone(
        sim: Callable[..., Sim]) -> None:
    """Red last in the only round: Blue is the champion, and the next game's deal is said; the
    keypad's UNDO now belongs to the next game (nothing to undo); the panel still reaches back."""
    s = sim(["Blue", "Red"], {**OPTIONS, "deck": "2"}, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.rules.status().race_open and engine.cue_us is None,
                limit_ms=5000, step_ms=10)
    assert engine.last_cue_us is not None
    cue = s.ms(engine.last_cue_us)
    s.press("Blue", cue + 100)
    s.press("Red", cue + 150)
    s.run_until(lambda: engine.rhythm.dealt, limit_ms=10_000, step_ms=10)
    assert engine.rules.standings().winners == ("Blue",)
    key(s, "undo")
    assert said(s)[-1] == ("nothing_to_undo", {}) and scores(s)["Red"] == 1
    s.command("undo")  # the judge panel: the finished game's last round voided
    assert logged(s)[-1] == {"type": "facts", "round": 1, "void": True}
