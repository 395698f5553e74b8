"""A group's own game from a file: the format, a bad file in one line (exit 2), the game line that
carries the declaration (the log replays on its own), and every key documented."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from referee.cli import main as cli
from referee.rules import gamefile, registry
from referee.rules.fromfile import compile_game
from referee.store.tablelog import replay

ROOT = Path(__file__).resolve().parent.parent
QUIZ = (ROOT / "referee/rules/games/quiz.toml").read_text()
SNAP = (ROOT / "referee/rules/games/snap.toml").read_text()
S = 1_000_000

# A group's own game: first after the gong, three gongs, an early press costs a point.
GONG = """
name = "gong"
title = "First after the Gong"
seats = [2, 4]
unit = ["point", "points"]
more_wins = true
intro = "{gongs} gongs. First to press after the gong scores."
quiet = 6

[round]
start = "cadence"
call = ["Ready,", "GONG!"]
tempo_ms = 300
window_ms = 1000
early = "wrong"
early_says = "pressed before the gong"

[press.first_right]
earns = "gain 1"
says = "first after the gong"

[press.first_wrong]
earns = "lose 1"
says = "pressed for nothing"

[judge]
fact = "gong"
label = "Did the gong sound?"
question = "Gong or no gong?"
answers = ["Gong", "No gong"]
consensus = "judge"

[end]
rounds = "gongs"

[options.gongs]
default = 3
min = 1
max = 20
label = "Gongs"
"""


def cli_run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(list(argv))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def gong(tmp_path: Path) -> Any:
    path = tmp_path / "gong.toml"
    path.write_text(GONG)
    yield path
    registry.unregister("gong")


def log_file(tmp_path: Path, *lines: dict[str, Any]) -> Path:
    path = tmp_path / "game.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


GONG_LOG = (
    {"type": "game", "game": "gong", "seats": ["Ann", "Bob"], "options": {"gongs": 2}},
    {"type": "press", "t_us": 2 * S - 100_000, "seat": "Bob"},  # before the gong: early
    {"type": "cue", "t_us": 2 * S},
    {"type": "press", "t_us": 2 * S + 250_000, "seat": "Ann"},
    {"type": "press", "t_us": 2 * S + 400_000, "seat": "Bob"},
    {"type": "cue", "t_us": 5 * S},
    {"type": "press", "t_us": 5 * S + 300_000, "seat": "Bob"},
    {"type": "facts", "round": 1, "gong": True},
    {"type": "facts", "round": 2, "gong": True},
)


def test_a_game_file_plays_its_declared_pieces_in_a_replay(tmp_path: Path, gong: Path) -> None:
    rc, out, err = cli_run("replay", str(log_file(tmp_path, *GONG_LOG)), "--game-file", str(gong))
    assert rc == 0, err
    lines = [json.loads(x) for x in out.splitlines()]
    assert [(x["round"], x["seat"], x["delta"], x["reason"]) for x in lines
            if x["type"] == "ruling"] == [
        (1, "Bob", 0, "pressed before the gong"),  # nothing to lose yet: never below zero
        (1, "Ann", 1, "first after the gong"),  # pressed: the judge was asked, and said gong
        (2, "Bob", 1, "first after the gong"),
    ]
    assert lines[-1]["final"] is True and lines[-1]["winners"] == ["Ann", "Bob"]


def test_the_judge_is_asked_the_files_question_when_only_some_pressed(
        tmp_path: Path, gong: Path) -> None:
    rc, out, _ = cli_run("replay", str(log_file(tmp_path, *GONG_LOG[:-2])), "--game-file",
                         str(gong))
    assert rc == 0
    assert [json.loads(x) for x in out.splitlines() if '"awaiting"' in x] == [
        {"type": "awaiting", "round": 1, "need": ["gong"]},
        {"type": "awaiting", "round": 2, "need": ["gong"]}]
    cls = registry.rules_for("gong")
    assert cls.FACTS[0].ask == "Gong or no gong?"
    assert cls(["Ann", "Bob"]).schedule().quiet_rounds == 6


# -- a bad game file: one line naming the key and the fix, exit 2 ------------------------------

BAD: list[tuple[str, str, str]] = [
    # (what is wrong, the file, what the one line must say)
    ("missing key", GONG.replace('title = "First after the Gong"\n', ""), "missing key 'title'"),
    ("unknown key", GONG + 'colour = "red"\n', "unknown key 'colour'"),
    ("unknown key in a table", GONG.replace("tempo_ms = 300", "speed = 300"),
     "unknown key 'speed' in round"),
    ("a bad name", GONG.replace('name = "gong"', 'name = "Gong!"'), "name must be"),
    ("a start it does not know", GONG.replace('start = "cadence"', 'start = "claim"'),
     "round.start must be 'cadence', 'judge' or 'turn', not 'claim'"),
    ("a window out of range", GONG.replace("window_ms = 1000", "window_ms = 50"),
     "round.window_ms must be a whole number from 100 to 60000, not 50"),
    ("a text for a number", GONG.replace("window_ms = 1000", 'window_ms = "1000"'),
     "round.window_ms must be a whole number"),
    ("seats backwards", GONG.replace("seats = [2, 4]", "seats = [4, 2]"),
     "seats = [4, 2]: the fewest comes first"),
    ("one seat", GONG.replace("seats = [2, 4]", "seats = [1, 4]"), "seats[0] must be"),
    ("an effect it does not know", GONG.replace('earns = "gain 1"', 'earns = "win big"'),
     "press.first_right.earns = 'win big': use"),
    ("a card effect without cards", GONG.replace('earns = "gain 1"', 'earns = "take-pile"'),
     "press.first_right.earns = 'take-pile' moves cards; add a [cards] table"),
    ("an amount naming no option", GONG.replace('earns = "gain 1"', 'earns = "gain bonus"'),
     "no option 'bonus'; declare [options.bonus]"),
    ("rounds naming no option", GONG.replace('rounds = "gongs"', 'rounds = "laps"'),
     "end.rounds = 'laps': no option of that name"),
    ("no end", GONG.replace('[end]\nrounds = "gongs"\n', ""), "end: say when the game ends"),
    ("an option every game has", GONG + "\n[options.tie_us]\ndefault = 5\nlabel = \"x\"\n",
     "options.tie_us: every game has tie_us already"),
    ("a default out of its range", GONG.replace("default = 3", "default = 30"),
     "options.gongs.default = 30: must be from min 1 to max 20"),
    ("no judge table", GONG[:GONG.index("[judge]")] + GONG[GONG.index("[end]"):],
     "missing key 'judge'"),
    ("a turn call without the seat",
     SNAP.replace('call = ["{seat},", "flip!"]', 'call = ["Flip!"]')
     .replace('name = "snap"', 'name = "snap2"'),
     'round.call: a turn call names the flipper; put "{seat}" in a word'),
    ("a turn game without cards", (SNAP[:SNAP.index("[cards]")] + SNAP[SNAP.index("[press.first_"):])
     .replace('name = "snap"', 'name = "snap2"'), "cards: a turn game flips a deck; add a [cards]"),
    ("answers marked on a deck game", SNAP.replace('mode = "flag"', 'mode = "answer"')
     .replace('name = "snap"', 'name = "snap2"'), 'judge.mode = "answer"'),
    ("the same reason twice", GONG.replace('says = "pressed for nothing"',
                                           'says = "first after the gong"'),
     "each reason is said differently"),
    ("a filler that is no option", GONG.replace("{gongs} gongs", "{laps} laps"),
     "intro: {laps} is not an option of this game"),
    ("a game the referee knows", GONG.replace('name = "gong"', 'name = "pig"'),
     "name = 'pig' is a game the referee knows already"),
    ("not TOML", GONG.replace('title = "First after the Gong"', "title = "), "not valid TOML"),
    ("a judge round with one word", QUIZ.replace('call = ["Next question.", "Buzzers!"]',
                                                 'call = ["Buzzers!"]').replace('"quiz"', '"q2"'),
     "round.call: a judge-started round says a word before the go-word"),
]


@pytest.mark.parametrize(("text", "says"), [(t, s) for _, t, s in BAD],
                         ids=[what for what, _, _ in BAD])
def test_a_bad_game_file_is_one_line_naming_the_key_exit_2(
        tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    log = log_file(tmp_path, {"type": "game", "game": "gong", "seats": ["Ann", "Bob"]})
    for argv in (["replay", str(log), "--game-file", str(path)],
                 ["play", "--game-file", str(path), "--seats", "Ann,Bob", "--no-web",
                  "--no-speech", "--mock", "--db", str(tmp_path / "t.db")]):
        rc, out, err = cli_run(*argv)
        assert rc == 2 and out == "", (argv[0], err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert "bad.toml" in err and says in err, err
    assert not (tmp_path / "t.db").exists()  # nothing written: the check comes first


def test_a_missing_or_binary_game_file_is_one_line(tmp_path: Path) -> None:
    log = log_file(tmp_path, {"type": "game", "game": "gong", "seats": ["Ann", "Bob"]})
    rc, _, err = cli_run("replay", str(log), "--game-file", str(tmp_path / "none.toml"))
    assert rc == 2 and "cannot be read" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00name")
    rc, _, err = cli_run("replay", str(log), "--game-file", str(tmp_path / "bin.toml"))
    assert rc == 2 and "not UTF-8" in err and len(err.strip().splitlines()) == 1


def test_a_log_of_another_game_with_the_game_file_is_one_line(tmp_path: Path, gong: Path) -> None:
    log = log_file(tmp_path, {"type": "game", "game": "snap", "seats": ["Ann", "Bob"]})
    rc, _, err = cli_run("replay", str(log), "--game-file", str(gong))
    assert rc == 2 and "line 1: the log is a game of 'snap', the game file declares 'gong'" in err


# -- the game line carries the declaration ------------------------------------------------------


def test_the_game_line_of_a_game_from_a_file_carries_it_and_the_log_replays_on_its_own(
        tmp_path: Path, gong: Path, mock_factory: Any) -> None:
    from tests.harness import SimTable

    rc, _, err = cli_run("replay", str(log_file(tmp_path, *GONG_LOG)), "--game-file", str(gong))
    assert rc == 0, err  # registers the file's game, as `referee play --game-file` does
    sim = SimTable(tmp_path / "gong.db", mock_factory, ["Ann", "Bob"], None)
    try:
        sim.start("gong", {"gongs": "2", "pause_ms": "300"})
        sim.until(lambda s: s["phase"] == "ready")
        sim.key("yes")  # the judge starts
        for _ in range(2):
            before = sim.engine.rules.round_count()
            sim.until(lambda s, b=before: s["phase"] == "race" and
                      sim.engine.rules.round_count() > b)
            cue = sim.engine.last_cue_us
            assert cue is not None
            sim.press("Ann", cue + 200_000)
            sim.press("Bob", cue + 350_000)
            sim.until(lambda s: s["phase"] == "awaiting")  # consensus "judge": asked
            sim.key("yes")  # the keypad's YES: it was a gong
        sim.until(lambda s: s["phase"] == "over")
        exported = sim.log()
    finally:
        sim.close()
    first = json.loads(exported[0])
    assert first["declared"] == gamefile.decode(GONG.encode()).to_builtins()
    registry.unregister("gong")  # a fresh process knows no gong: the log alone must do
    path = tmp_path / "exported.jsonl"
    path.write_text("\n".join(exported) + "\n")
    done = subprocess.run([sys.executable, "-m", "referee", "replay", str(path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout.splitlines()[-1])
    assert final["final"] is True and final["winners"] == ["Ann"]
    assert final["seats"][0] == {"seat": "Ann", "score": 2, "place": 1, "out": False}


def test_a_shipped_game_file_is_found_by_name_and_its_log_needs_no_declaration() -> None:
    for name in ("snap", "quiz"):
        cls = registry.rules_for(name)
        assert cls.DECLARATION is None and cls.NAME == name
    out = replay([json.dumps({"type": "game", "game": "quiz", "seats": ["A", "B"]})]).lines()
    assert out[-1]["type"] == "standings"


# -- docs/games.md has every key -----------------------------------------------------------------


def _keys(struct: type[msgspec.Struct], prefix: str = "") -> list[str]:
    out = []
    for f in msgspec.structs.fields(struct):
        out.append(prefix + f.name)
    return out


def test_every_key_of_the_format_is_documented() -> None:
    doc = (ROOT / "docs/games.md").read_text()
    section = doc[doc.index("## A group's own game, from a file"):]
    structs = (gamefile.Declaration, gamefile.RoundSpec, gamefile.CardsSpec, gamefile.Earn,
               gamefile.PressSpec, gamefile.JudgeSpec, gamefile.EndSpec, gamefile.OptionSpec)
    missing = [k for s in structs for k in _keys(s)
               if f"`{k}`" not in section and f"`[{k}" not in section and f".{k}]`" not in section]
    assert missing == [], f"undocumented keys: {missing}"
    for table in ("[round]", "[cards]", "[press.first_right]", "[judge]", "[end]",
                  "[options.NAME]"):
        assert table in section, table


def test_the_shipped_files_compile_as_the_docs_say() -> None:
    for text in (SNAP, QUIZ):
        decl = gamefile.decode(text.encode())
        cls = compile_game(decl, carried=False)
        assert cls.NAME == decl.name and cls.SEATS == (2, 8)
