"""The made-up turn game (tests/made_up_game.py, "Snap Grab") plays through the engine on the
simulated clock, the judge's keypad and panel, `referee replay` and the scoreboard's catalogue.

Nothing outside `tests/` knows it: it is registered here (as a package's entry point would) and
its own words come from its `PHRASES`, as the first made-up game's do. It is turn-based over the
framework's base, scores "more wins", and declares its own `match` fact, a count (Pig's Tail's
`match` is a flag).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.cli.main import main as cli_main
from referee.cli.table import Table
from referee.config import default_config
from referee.events import Facts
from referee.scoreboard.app import create_app
from referee.voice.announce import PrintAnnouncer
from referee.voice.phrases import ENGLISH
from tests.harness import Sim, register_game
from tests.made_up_game import SnapGrab

SEATS = ["Ann", "Bob", "Cy"]
OPTIONS = {"cards": "5", "strikes": "1", "window_ms": "1000", "turn_ms": "1500",
           "tempo_ms": "200", "pause_ms": "200", "tie_us": "1000"}


@pytest.fixture
def snap_grab(monkeypatch: pytest.MonkeyPatch) -> type[SnapGrab]:
    register_game(monkeypatch, SnapGrab)
    for key, beats in SnapGrab.PHRASES.items():
        monkeypatch.setitem(ENGLISH, key, beats)
    return SnapGrab


def next_turn(s: Sim, seen: int) -> float:
    """Let the table run until turn `seen + 1` is called and its race is open; its cue, in ms."""
    engine = s.engine
    assert engine is not None
    limit = s.t_ms + 10_000
    while True:
        assert s.t_ms < limit, f"turn {seen + 1} was never called: {engine.snapshot()}"
        s.run_to(s.t_ms + 5, step_ms=5)
        snap = engine.snapshot()
        if snap["phase"] == "race" and engine.rules.round_count() == seen + 1:
            assert engine.last_cue_us is not None
            return s.ms(engine.last_cue_us)


def rulings(s: Sim, number: int) -> list[tuple[str | None, int, str]]:
    engine = s.engine
    assert engine is not None
    return [(o["seat"], o["delta"], o["reason"]) for o in s.outputs(number)
            if o["type"] == "ruling"]


def test_the_turn_game_plays_through_the_engine_and_replays(
        snap_grab: type[SnapGrab], sim: Callable[..., Sim], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    s = sim(SEATS, OPTIONS, game=SnapGrab.NAME, auto=True)
    engine = s.engine
    assert engine is not None

    # turn 1, Ann flips the first card: Bob grabs it, a strike, and with one strike he is out
    cue = next_turn(s, 0)
    s.press("Bob", cue + 200)
    s.run_to(cue + 1100)
    assert rulings(s, 1) == [("Bob", 0, "grabbed the first card")]

    # turn 2 is Cy's (Bob's turn is skipped); both grab: the judge is asked how many match
    cue = next_turn(s, 1)
    assert engine.snapshot()["turn"] == "Cy"
    s.press("Ann", cue + 150)
    s.press("Cy", cue + 400)
    s.run_to(cue + 1100)
    snap = engine.snapshot()
    assert snap["phase"] == "awaiting" and snap["awaiting"]["need"] == ["match"]
    asked = [p for k, p, _ in s.voice.said if k == "awaiting"]
    assert asked[-1] == {"need": ["match"], "asks": ["how many cards match?"]}  # its own words
    assert snap["facts"] == ["match", "void"] and snap["fact_info"]["match"]["kind"] == "count"
    s.command("feed", event=Facts(2, {"match": 2}))  # the panel's count
    assert rulings(s, 2) == [("Ann", 2, "grabbed the match")]

    # turn 3, Ann: the pile was taken, a first card again; nobody grabs
    cue = next_turn(s, 2)
    s.run_to(cue + 1100)
    assert rulings(s, 3) == []

    # turn 4, Cy: Bob's grab is ignored (he is out), Cy grabs; the keypad's YES: one matches
    cue = next_turn(s, 3)
    s.press("Bob", cue + 100)
    s.press("Cy", cue + 300)
    s.run_to(cue + 1100)
    assert engine.snapshot()["awaiting"]["need"] == ["match"]
    s.press("judge", s.t_ms + 1, button="yes")
    s.run_to(s.t_ms + 50)
    assert engine.rules.facts_for(4) == {"match": 1}  # the declared YES of a count
    assert rulings(s, 4) == [("Cy", 2, "grabbed the match")]
    assert engine.rules.racing(4) == ("Ann", "Cy")

    # turn 5, Ann, the last card: Cy grabs the first card on an empty pile and puts one back
    cue = next_turn(s, 4)
    s.press("Cy", cue + 250)
    s.run_until(lambda: any(k == "over" for k, _ in s.published), limit_ms=5000)
    assert rulings(s, 5) == [("Cy", -1, "grabbed the first card")]

    # the calls named the flippers in turn, skipping the seat out; the game's own words
    calls = [params["seat"] for key, params, _ in s.voice.said if key == "snap_turn"]
    assert calls == ["Ann", "Cy", "Ann", "Cy", "Ann"]
    keys = [key for key, _, _ in s.voice.said]
    assert keys.index("snap_rules") < keys.index("snap_turn")  # before the first flip
    assert ("champion", {"seats": "Ann"}) in [(k, p) for k, p, _ in s.voice.said]

    # more wins: Ann's 2 cards beat Cy's 1; the exported log re-rules to what the table said
    final = s.check_log_replays_to_live()
    assert final["final"] is True and final["winners"] == ["Ann"]
    assert [(r["seat"], r["score"], r["place"]) for r in final["seats"]] == [
        ("Ann", 2, 1), ("Cy", 1, 2), ("Bob", 0, 3)]
    snap = engine.snapshot()
    assert snap["phase"] == "over" and snap["words"]["more_wins"] is True
    assert snap["rounds"] == 5

    # `referee replay` (in this process: a test's registration does not reach a subprocess)
    log = tmp_path / "snap.jsonl"
    log.write_text("\n".join(s.exported()) + "\n")
    capsys.readouterr()
    assert cli_main(["replay", str(log)]) == 0
    replayed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert replayed == s.outputs() + [final]
    assert '"match": 2' in log.read_text()  # the count, as the judge gave it


def test_the_scoreboard_offers_the_turn_game_with_its_own_declarations(
        snap_grab: type[SnapGrab], tmp_path: Path) -> None:
    table = Table(default_config(SEATS), db=tmp_path / "table.db",
                  announcer=PrintAnnouncer(io.StringIO(), quiet=True), box=False, pin="2468",
                  mock=True)
    try:
        client = create_app(table).test_client()
        catalogue: dict[str, Any] = client.get("/api/setup").get_json()
        game = next(g for g in catalogue["games"] if g["name"] == SnapGrab.NAME)
        assert game["title"] == "Snap Grab" and game["unit_words"] == ["card", "cards"]
        options = {o["name"]: o for o in game["options"]}
        assert options["cards"]["label"] == "Deck" and options["strikes"]["max"] == 9
        assert options["window_ms"]["default"] == 1000  # the turn options, its own defaults
        assert [f["name"] for f in game["facts"]] == ["match", "void"]
        assert game["facts"][0]["kind"] == "count"
        pigs_tail = next(g for g in catalogue["games"] if g["name"] == "pigs-tail")
        assert pigs_tail["facts"][0]["kind"] == "flag"  # the same name, each game's own kind
        assert "Snap Grab" in client.get("/setup").get_data(as_text=True)
    finally:
        table.close()


def test_the_judge_is_asked_the_turn_game_s_own_question(
        snap_grab: type[SnapGrab], sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, game=SnapGrab.NAME, auto=True)
    engine = s.engine
    assert engine is not None
    cue = next_turn(s, 0)
    s.run_to(cue + 1100)
    cue = next_turn(s, 1)
    s.press("Ann", cue + 150)
    s.run_to(cue + 1100)
    assert engine.snapshot()["question"] == "How many cards match?"
