"""Each game's facts and options are its own: one game's `match` may be a count where another's
is a flag, and a config's options for one game never stop another from starting.

A game defined only here (`TallyRace`) declares `match` as a count, as Pig's Tail declares it a
flag; it plays through a real HTTP server and through `referee replay`.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

import tests.made_up_game as made_up
from referee.cli.main import main as cli_main
from referee.cli.table import Table
from referee.config import default_config, load_config
from referee.events import Awaiting, Facts, Reason, Ruling
from referee.rules.declare import Fact
from referee.scoreboard.app import serve_in_thread
from referee.store.tablelog import LogError, replay
from tests.harness import close_table, end_window, register_game
from tests.made_up_game import Beep, BeepRound, FirstAfterTheBeep
from tests.support import ROOT, assert_refused_in_one_line, export, run_referee

PIN = "2468"
SEATS = ["Ann", "Bob", "Cy"]
WINDOW_MS = 60_000
# the made-up game's words: declared beside its rules where games declare their phrases, else
# added to the phrase table from its module (as a translation would)
PHRASES = dict(getattr(FirstAfterTheBeep, "PHRASES", None) or made_up.PHRASES)
OPTIONS = {"rounds": 2, "tempo_ms": 200, "window_ms": 10_000, "pause_ms": 100}


class Tally(Reason):
    MATCHED = "dealt the matches nobody slapped"


class TallyRace(FirstAfterTheBeep):
    """First after the beep; when nobody pressed, the judge counts the cards that matched and the
    dealer (the first seat) scores one point per card. Its name sorts after every shipped game's,
    so a flat namespace of facts would read its `match` as Pig's Tail's flag."""

    NAME: ClassVar[str] = "tally-race"
    TITLE: ClassVar[str] = "Tally Race"
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("match", "count", "Cards that matched", "how many cards matched?",
             "How many matched?", yes=1, no=0, most=4, shown=4, what="card"),
        Fact("tally", "count", "Tally", "what is the tally?", "Tally?", yes=1, no=0, most=9,
             asked=False),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Beep, Tally)

    def _rule(self, rnd: BeepRound, scores: dict[str, int]) -> list[Ruling | Awaiting]:
        facts = self.facts_for(rnd.number)
        if rnd.firsts or facts.get("void"):
            return super()._rule(rnd, scores)
        if "match" not in facts:
            return [Awaiting(rnd.number, ("match",))]
        return [Ruling(rnd.number, self.seats[0], facts["match"], Tally.MATCHED),
                *self.penalty_rulings(rnd.number)]


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> type[TallyRace]:
    register_game(monkeypatch, TallyRace, PHRASES)
    return TallyRace


@pytest.fixture
def table(tally: type[TallyRace], mock_factory: Any, tmp_path: Path) -> Iterator[Table]:
    t = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
              pin=PIN, out=io.StringIO(), auto=False)
    t.start(TallyRace.NAME, OPTIONS, resume=False)
    yield t
    close_table(t, WINDOW_MS)


def http(port: int, path: str, body: Any = None) -> tuple[int, Any]:
    """A request to the real server: POST with the PIN when there is a body, else GET."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                 headers={"X-Table-Pin": PIN, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def wait_phase(port: int, phase: str) -> dict[str, Any]:
    for _ in range(500):
        _, got = http(port, "/api/state")
        if got["phase"] == phase:
            return dict(got)
        time.sleep(0.02)
    raise AssertionError(f"never {phase!r}: {got}")


# -- facts: each game's own ------------------------------------------------------------------


def test_a_game_s_count_named_like_another_game_s_flag_is_given_through_the_api(
        table: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = serve_in_thread(table, "127.0.0.1", 0)
    try:
        assert http(server.port, "/api/next-round", {})[0] == 200
        wait_phase(server.port, "race")
        assert table.engine is not None
        end_window(table.engine, OPTIONS["window_ms"])  # nobody pressed: the judge counts
        asked = wait_phase(server.port, "awaiting")
        assert asked["awaiting"] == {"type": "awaiting", "round": 1, "need": ["match"]}
        status, bad = http(server.port, "/api/facts", {"round": 1, "match": True})
        assert status == 400 and "\n" not in bad["error"] and "match" in bad["error"]
        status, after = http(server.port, "/api/facts", {"round": 1, "match": 2})
        assert status == 200, after
        assert after["awaiting"] is None
        assert {s["seat"]: s["score"] for s in after["seats"]} == {"Ann": 2, "Bob": 0, "Cy": 0}
    finally:
        server.close()
    log = tmp_path / "tally.jsonl"
    log.write_text("\n".join(export(tmp_path / "referee.db")) + "\n", encoding="utf-8")
    assert '{"type": "facts", "round": 1, "match": 2}' in log.read_text(encoding="utf-8")
    capsys.readouterr()
    assert cli_main(["replay", str(log)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0] == {"type": "ruling", "round": 1, "seat": "Ann", "delta": 2,
                        "reason": Tally.MATCHED.value, "margin_us": None}


def test_the_game_in_play_reads_a_facts_body_as_it_declares_its_facts(
        tally: type[TallyRace], mock_factory: Any, tmp_path: Path) -> None:
    t = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
              pin=PIN, out=io.StringIO(), auto=False)
    t.start("pigs-tail", {"window_ms": 60_000, "pause_ms": 100}, resume=False)
    server = serve_in_thread(t, "127.0.0.1", 0)
    try:
        status, got = http(server.port, "/api/facts", {"round": 1, "match": 2})
        assert status == 400  # Pig's Tail's match is a flag, whatever another game says
        assert got["error"].startswith("match must be true or false"), got
        status, got = http(server.port, "/api/facts", {"round": 1, "tally": 2})
        assert status == 400 and "tally" in got["error"]  # the other game's fact is not its
    finally:
        server.close()
        close_table(t, WINDOW_MS)


TAIL = [{"type": "game", "game": "pigs-tail", "seats": ["Ann", "Bob"], "options": {}},
        {"type": "cue", "t_us": 1_000_000, "seat": "Ann"},
        {"type": "press", "t_us": 1_200_000, "seat": "Ann"},
        {"type": "facts", "round": 1, "match": True, "tally": 3}]


def test_a_log_reads_its_facts_as_its_own_game_declares_them(tally: type[TallyRace]) -> None:
    # Extra fields are allowed (PRODUCT.md, "Table log"): `tally` is no fact of Pig's Tail, so a
    # game installed beside it that declares one changes nothing in a Pig's Tail log.
    alone = replay([json.dumps(line) for line in TAIL])
    assert alone.rules.facts_for(1) == {"match": True}
    game = {"type": "game", "game": TallyRace.NAME, "seats": ["Ann", "Bob"], "options": {}}
    counted = replay([json.dumps(game), json.dumps({"type": "cue", "t_us": 1_000_000}),
                      json.dumps({"type": "facts", "round": 1, "match": 3, "claim": True})])
    assert counted.lines()[0]["delta"] == 3  # Pig's `claim` in this game's line: extra, dropped
    with pytest.raises(LogError, match=r"^line 3: match must be a whole number"):
        replay([json.dumps(game), json.dumps({"type": "cue", "t_us": 1_000_000}),
                json.dumps({"type": "facts", "round": 1, "match": True})])
    with pytest.raises(LogError, match=r"^line 3: facts field 'pigs' is not used in tally-race; "
                                       r"use match, tally or void$"):
        replay([json.dumps(game), json.dumps({"type": "cue", "t_us": 1_000_000}),
                json.dumps({"type": "facts", "round": 1, "pigs": 1})])


def test_a_resumed_game_reads_its_facts_as_its_game_does(
        tally: type[TallyRace], mock_factory: Any, tmp_path: Path) -> None:
    def open_table() -> Table:
        return Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True,
                     no_speech=True, pin=PIN, out=io.StringIO(), auto=False)

    first = open_table()
    engine = first.start(TallyRace.NAME, OPTIONS, resume=False)
    engine.command("next_round")
    end_window(engine, OPTIONS["window_ms"])
    engine.command("feed", event=Facts(1, {"match": 4}))
    first.close()
    again = open_table()
    try:
        resumed = again.start(TallyRace.NAME, OPTIONS)  # from the log, facts line and all
        assert resumed.rules.facts_for(1) == {"match": 4}
        assert resumed.rules.standings().seats[0].score == 4
    finally:
        close_table(again, WINDOW_MS)


# -- option values: typed in a log and the API, text only from `--option` ------------------------

SPANK = {"type": "game", "game": "spank-the-pig", "seats": ["Ann", "Bob"]}
ROUND = [{"type": "cue", "t_us": 1_000_000}, {"type": "press", "t_us": 1_100_000, "seat": "Ann"},
         {"type": "press", "t_us": 1_101_500, "seat": "Bob"}]


def _log(tmp_path: Path, options: dict[str, Any]) -> Path:
    log = tmp_path / "game.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in [{**SPANK, "options": options}, *ROUND]),
                   encoding="utf-8")
    return log


@pytest.mark.parametrize(("options", "message"), [
    ({"tie_us": "1000"}, "option tie_us='1000': expected a whole number from 0 to 1000000"),
    ({"window_ms": 2500.5}, "option window_ms=2500.5: expected a whole number from 100 to"),
    ({"window_ms": 2500.0}, "option window_ms=2500.0: expected a whole number from 100 to"),
    ({"deck": True}, "option deck=True: expected a whole number from 2 to"),
])
def test_an_option_value_in_a_log_is_the_declared_json_kind(
        tmp_path: Path, options: dict[str, Any], message: str) -> None:
    # PRODUCT.md, "Table log": option values in a log are JSON values of the declared kind.
    result = run_referee("replay", str(_log(tmp_path, options)))
    assert_refused_in_one_line(result)
    assert f"line 1: {message}" in result.stderr


def test_option_text_is_converted_only_from_the_command_line(tmp_path: Path) -> None:
    log = _log(tmp_path, {"tie_us": 1000})
    close = run_referee("replay", str(log))
    assert close.returncode == 0, close.stderr
    assert json.loads(close.stdout.splitlines()[0])["seat"] == "Bob"  # 1.5 ms is clear at 1 ms
    wider = run_referee("replay", str(log), "--option", "tie_us=2000")
    assert wider.returncode == 0, wider.stderr
    assert json.loads(wider.stdout.splitlines()[0])["reason"] == "too close to call"
    for bad in ("tie_us=2000.5", "tie_us=lots", "doubles=Buttons"):
        assert_refused_in_one_line(run_referee("replay", str(log), "--option", bad))


def test_the_api_takes_option_values_typed(table: Table) -> None:
    server = serve_in_thread(table, "127.0.0.1", 0)
    try:
        status, got = http(server.port, "/api/new-game",
                           {"game": "spank-the-pig", "options": {"deck": "36"}})
        assert status == 400 and got["error"].startswith("option deck='36': expected a whole"), got
        status, got = http(server.port, "/api/new-game",
                           {"game": "spank-the-pig", "options": {"deck": 36.5}})
        assert status == 400 and "a whole number" in got["error"], got
        status, got = http(server.port, "/api/new-game",
                           {"game": "pig", "options": {"lives": 3}})
        assert status == 200 and got["options"]["lives"] == 3, got
        status, got = http(server.port, "/api/new-game",
                           {"game": "pig", "options": {"lives": "3"}})
        assert status == 400 and got["error"] == "option lives='3': expected 1 or 3", got
    finally:
        server.close()


# -- options per game in the config ----------------------------------------------------------------

CONFIG = """\
[table]
game = "spank-the-pig"
[[seats]]
name = "Ann"
slap = 4
[[seats]]
name = "Bob"
slap = 17
[[seats]]
name = "Cy"
slap = 27
[options]
deck = 36
tie_us = 2000
{more}
[options.pigs-tail]
take = "slowest"
{tail}
"""


def config_file(tmp_path: Path, more: str = "", tail: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.format(more=more, tail=tail), encoding="utf-8")
    return path


def play(tmp_path: Path, config: Path, *game: str) -> dict[str, Any]:
    """`referee play [GAME] --config FILE` until the table is up; the game line it logged."""
    db = tmp_path / "table.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli.main", "play", *game, "--config", str(config),
         "--mock", "--no-web", "--no-speech", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("Table PIN"):
                break
        else:
            raise AssertionError(f"the table did not start: {proc.wait(20)} {proc.stderr.read()}")
    finally:
        proc.send_signal(signal.SIGTERM)  # a clean stop, as systemctl's
        proc.communicate(timeout=30)
    return dict(json.loads(export(db)[0]))


def test_another_game_chosen_takes_its_own_options_and_passes_over_the_config_game_s(
        tmp_path: Path) -> None:
    config = config_file(tmp_path)
    tail = play(tmp_path, config, "pigs-tail")  # Spank's deck = 36 does not stop it
    assert tail["game"] == "pigs-tail"
    assert tail["options"]["take"] == "slowest" and tail["options"]["tie_us"] == 2000
    assert "deck" not in tail["options"]
    (tmp_path / "table.db").unlink()
    spank = play(tmp_path, config)  # [table] game: the flat [options] are its own
    assert spank["game"] == "spank-the-pig"
    assert (spank["options"]["deck"], spank["options"]["tie_us"]) == (36, 2000)


@pytest.mark.parametrize(("more", "tail", "game", "message"), [
    ("dekc = 36", "", (), "unknown option 'dekc' for spank-the-pig in [options] of {file}; "
     "known: deck, doubles, early_ms, pause_ms, stragglers, tempo_ms, tie_us, window_ms "
     "(another game's options go in [options.<game>])"),
    ("tei_us = 5", "", ("pig",), "unknown option 'tei_us' in [options] of {file}: no game has "
     "it; pig knows false_claim, lives, pass_beat_ms, pause_ms, stragglers, tie_us, variant, "
     "window_ms"),
    ("", "deck = 36", ("pigs-tail",), "unknown option 'deck' for pigs-tail in "
     "[options.pigs-tail] of {file}; known: pause_ms, take, tempo_ms, tie_us, turn_ms, "
     "window_ms"),
    ("", "deck = 36", (), "unknown option 'deck' for pigs-tail in [options.pigs-tail] of {file}"),
    ("[options.pigs_tail]\nturn_ms = 900", "", (), "[options.pigs_tail] of {file} names no game; "
     "use one of "),
    ("", "turn_ms = \"900\"", ("pigs-tail",), "option turn_ms = '900' in [options.pigs-tail] "
     "of {file}: expected a whole number from 200 to 60000"),
    ("", "window_ms = 2500.5", ("pigs-tail",), "option window_ms = 2500.5 in "
     "[options.pigs-tail] must be text, a whole number or true/false"),
    ("[options.pig]\nlives = 2", "", ("pig",), "option lives = 2 in [options.pig] of {file}: "
     "expected 1 or 3"),
])
def test_a_bad_option_in_the_config_is_one_line_naming_its_table_and_file(
        tmp_path: Path, more: str, tail: str, game: tuple[str, ...], message: str) -> None:
    config = config_file(tmp_path, more, tail)
    result = run_referee("play", *game, "--config", str(config), "--mock", "--no-web",
                         "--no-speech", "--db", str(tmp_path / "x.db"))
    assert_refused_in_one_line(result)
    assert message.format(file=config) in result.stderr
    assert not (tmp_path / "x.db").exists()  # refused before anything was written


@pytest.fixture
def configured(mock_factory: Any, tmp_path: Path) -> Iterator[Table]:
    t = Table(load_config(config_file(tmp_path)), db=tmp_path / "referee.db", mock=True,
              no_speech=True, pin=PIN, out=io.StringIO(), auto=False)
    t.start("spank-the-pig", {}, resume=False)
    yield t
    close_table(t, WINDOW_MS)


def test_the_setup_page_s_new_game_takes_each_game_s_options_from_the_config(
        configured: Table) -> None:
    server = serve_in_thread(configured, "127.0.0.1", 0)
    try:
        assert configured.engine is not None
        assert configured.engine.rules.options["deck"] == 36
        status, got = http(server.port, "/api/new-game", {"game": "pigs-tail"})
        assert status == 200, got
        assert (got["options"]["take"], got["options"]["tie_us"]) == ("slowest", 2000)
        assert "deck" not in got["options"]
        status, got = http(server.port, "/api/new-game",
                           {"game": "pigs-tail", "options": {"take": "flipper", "tie_us": 5}})
        assert status == 200 and got["options"]["take"] == "flipper", got  # the page's win
        status, got = http(server.port, "/api/new-game", {"game": "pig"})
        assert status == 200 and got["options"]["tie_us"] == 2000, got
        status, got = http(server.port, "/api/new-game", {"game": "spank-the-pig"})
        assert status == 200 and got["options"]["deck"] == 36, got
    finally:
        server.close()


def test_the_setup_page_s_new_game_names_a_config_typo_for_the_config_s_own_game(
        mock_factory: Any, tmp_path: Path) -> None:
    # `lives` in the flat [options] of a Spank the Pig! table: Pig takes it; for Spank the Pig!,
    # the game the flat options are for, it is a mistake said in one line
    config = load_config(config_file(tmp_path, "lives = 3"))
    t = Table(config, db=tmp_path / "referee.db", mock=True, no_speech=True, pin=PIN,
              out=io.StringIO(), auto=False)
    t.start("pig", {}, resume=False)
    server = serve_in_thread(t, "127.0.0.1", 0)
    try:
        assert t.engine is not None and t.engine.rules.options["lives"] == 3
        status, got = http(server.port, "/api/new-game", {"game": "spank-the-pig"})
        assert status == 400, got
        assert got["error"] == (f"unknown option 'lives' for spank-the-pig in [options] of "
                                f"{config.source}; known: deck, doubles, early_ms, pause_ms, "
                                f"stragglers, tempo_ms, tie_us, window_ms (another game's options go in "
                                f"[options.<game>])")
        assert t.engine.rules.NAME == "pig"  # refused before anything changed
    finally:
        server.close()
        close_table(t, WINDOW_MS)
