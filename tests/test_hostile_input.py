"""Hostile input at the edges (issue 16): names, reasons, PINs, [speech], flags and config files.

Every bad value is one line naming it and exit status 2 on the command line, HTTP 400 on the
scoreboard; never a traceback, never a half-started game. The CLI runs as a real process.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from referee.cli.table import Table
from referee.config import default_config
from referee.scoreboard.app import create_app
from tests.hostile_support import PIN, REFEREE, SEATS, one_line_error

ZOE_NFC = unicodedata.normalize("NFC", "Zoë")
ZOE_NFD = unicodedata.normalize("NFD", "Zoë")


def run(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*REFEREE, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def play(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run("play", "--mock", "--no-web", "--db", str(tmp_path / "referee.db"),
               "--exit-when-over", *args)


# -- Medium 8: names and every other user text ------------------------------------------------------


@pytest.mark.parametrize("seats", [
    "Blue,Red,Gr\x1b[2Jeen",  # ESC: would clear the console it is printed on
    "Blue,Red\x7f,Green",  # DEL (a NUL cannot even be passed in argv)
    "Blue,Red\nGreen,Yellow",  # a newline: a forged line in the journal
    "Blue,Red," + "x" * 60,  # far longer than a tile or a phrase
])
def test_bad_seat_names_on_the_command_line(tmp_path: Path, seats: str) -> None:
    line = one_line_error(play(tmp_path, "--no-speech", "--seats", seats))
    assert "seat name" in line
    assert not (tmp_path / "referee.db").exists()  # refused before anything was written


def test_zoe_in_two_normal_forms_is_one_name(tmp_path: Path) -> None:
    line = one_line_error(play(tmp_path, "--no-speech", "--seats", f"{ZOE_NFC},Red,{ZOE_NFD}"))
    assert "twice" in line


def test_empty_seats_flag_is_a_mistake_not_the_default_seats(tmp_path: Path) -> None:
    line = one_line_error(play(tmp_path, "--no-speech", "--seats", ""))
    assert "--seats" in line


@pytest.fixture
def client(mock_factory: Any, tmp_path: Path) -> Iterator[tuple[Table, FlaskClient]]:
    table = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
                  pin=PIN, out=io.StringIO(), auto=False)
    table.start("spank-the-pig", {"tempo_ms": 100, "window_ms": 300, "pause_ms": 100},
                resume=False)
    try:
        yield table, create_app(table).test_client()
    finally:
        table.close()


def post(client: FlaskClient, path: str, body: Any) -> Any:
    return client.post(path, data=body if isinstance(body, str) else json.dumps(body),
                       headers={"X-Table-Pin": PIN}, content_type="application/json",
                       environ_base={"REMOTE_ADDR": "10.0.0.2"})


def test_a_lone_surrogate_in_a_seat_name_is_a_400_and_starts_nothing(
        client: tuple[Table, FlaskClient]) -> None:
    table, c = client
    game_id = table.engine.game_id if table.engine else None
    # "\ud800" is valid JSON but no text: it cannot be stored as UTF-8
    body = '{"game": "spank-the-pig", "seats": [{"name": "X\\ud800"}, {"name": "Red"}]}'
    resp = post(c, "/api/new-game", body)
    assert resp.status_code == 400
    error = resp.get_json()["error"]  # the name, the bad character, and what to use instead
    assert error == "seats[0].name holds 'X\\ud800', half of a character; send text", error
    assert table.engine is not None and table.engine.game_id == game_id  # no game started
    for path in ("/api/events", "/history", "/api/games", f"/api/games/{game_id}/log"):
        resp = c.get(path)
        assert resp.status_code == 200, path
        resp.close()


def test_names_from_the_setup_page_are_normalised(client: tuple[Table, FlaskClient]) -> None:
    table, c = client
    resp = post(c, "/api/new-game", {"game": "spank-the-pig",
                                     "seats": [{"name": ZOE_NFC}, {"name": ZOE_NFD}]})
    assert resp.status_code == 400 and "twice" in resp.get_json()["error"]
    resp = post(c, "/api/new-game", {"game": "spank-the-pig",
                                     "seats": [{"name": ZOE_NFD}, {"name": "Red"}]})
    assert resp.status_code == 200
    assert resp.get_json()["seat_order"][0] == ZOE_NFC


@pytest.mark.parametrize("path,body", [
    ("/api/penalty", {"round": 1, "seat": "Blue", "reason": "slow\x1b[31m red"}),
    ("/api/penalty", {"round": 1, "seat": "Blue", "reason": "one\ntwo"}),
    ("/api/penalty", {"round": 1, "seat": "Blue", "reason": "nul\x00"}),
    ("/api/facts", {"round": 1, "doubles": ["hip\x00po"]}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A\x07"}, {"name": "B"}]}),
])
def test_control_characters_in_texts_are_refused(client: tuple[Table, FlaskClient], path: str,
                                                 body: dict[str, Any]) -> None:
    _, c = client
    c.post("/api/next-round", headers={"X-Table-Pin": PIN})
    resp = post(c, path, body)
    assert resp.status_code == 400, resp.get_data(as_text=True)
    assert "control character" in resp.get_json()["error"]


# -- config files ----------------------------------------------------------------------------------


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


SEATS_TOML = "".join(f'[[seats]]\nname = "{n}"\nslap = {p}\n'
                     for n, p in (("Blue", 4), ("Red", 17)))


@pytest.mark.parametrize("speech,flags", [
    ('rate = "fast"', ()), ('rate = "fast"', ("--no-speech",)),
    ("volume = 99", ()), ("volume = 99", ("--no-speech",)),
    ('language = "xx"', ()), ('language = "xx"', ("--no-speech",)),
])
def test_bad_speech_values_are_one_line(tmp_path: Path, speech: str, flags: tuple[str, ...]) -> None:
    path = config(tmp_path, f"{SEATS_TOML}[speech]\n{speech}\n")
    line = one_line_error(play(tmp_path, "--config", path, *flags))
    assert "[speech]" in line and speech.split(" = ")[1].strip('"') in line


def test_a_config_seat_with_an_empty_name_is_refused(tmp_path: Path) -> None:
    path = config(tmp_path, '[[seats]]\nname = ""\nslap = 4\n[[seats]]\nname = "Red"\nslap = 17\n')
    line = one_line_error(play(tmp_path, "--no-speech", "--config", path))
    assert "seat 1" in line and "empty" in line


def test_a_config_seat_without_a_slap_pin_is_refused(tmp_path: Path) -> None:
    path = config(tmp_path, '[[seats]]\nname = "Blue"\nslap = 4\n[[seats]]\nname = "Red"\n')
    line = one_line_error(play(tmp_path, "--no-speech", "--config", path))
    assert "Red" in line and "slap" in line


def test_a_config_seat_name_with_control_characters_is_refused(tmp_path: Path) -> None:
    path = config(tmp_path, '[[seats]]\nname = "Bl\\u001bue"\nslap = 4\n'
                            '[[seats]]\nname = "Red"\nslap = 17\n')
    line = one_line_error(play(tmp_path, "--no-speech", "--config", path))
    assert "control character" in line


def test_an_endless_config_file_is_refused(tmp_path: Path) -> None:
    line = one_line_error(run("play", "--mock", "--no-speech", "--no-web", "--config", "/dev/zero",
                              "--db", str(tmp_path / "x.db"), timeout=20))
    assert "/dev/zero" in line


# -- High 4: PINs of 4 to 8 digits -------------------------------------------------------------------


@pytest.mark.parametrize("pin", ["12", "abcd", "123456789", "12 34", ""])
def test_a_bad_pin_flag_is_one_line(tmp_path: Path, pin: str) -> None:
    line = one_line_error(play(tmp_path, "--no-speech", "--pin", pin))
    assert "4 to 8 digits" in line


def test_a_bad_pin_in_the_config_is_one_line(tmp_path: Path) -> None:
    path = config(tmp_path, f'[table]\npin = "12"\n{SEATS_TOML}')
    line = one_line_error(play(tmp_path, "--no-speech", "--config", path))
    assert "4 to 8 digits" in line


def test_the_default_pin_is_six_random_digits(mock_factory: Any, tmp_path: Path) -> None:
    pins = set()
    for i in range(3):
        table = Table(default_config(SEATS), db=tmp_path / f"{i}.db", mock=True, no_speech=True,
                      out=io.StringIO(), box=False)
        pins.add(table.pin)
        table.close()
    assert all(re.fullmatch(r"[0-9]{6}", p) for p in pins) and len(pins) > 1


# -- Low: mock mode's memory ---------------------------------------------------------------------------


def test_mock_pins_do_not_keep_every_press(tmp_path: Path) -> None:
    from gpiozero import Device

    from referee.cli.table import use_mock_pins

    previous = Device.pin_factory
    Device.pin_factory = None
    try:
        use_mock_pins()
        table = Table(default_config(SEATS), db=tmp_path / "m.db", mock=True, no_speech=True,
                      pin=PIN, out=io.StringIO(), auto=False)
        try:
            for _ in range(2000):
                table.press("Blue", "slap")
            pin = table.box._mock_pin("Blue", "slap")
            assert len(pin.states) <= 64  # gpiozero's MockPin kept all 4001 level changes
        finally:
            table.close()
    finally:
        if Device.pin_factory is not None:
            Device.pin_factory.close()
        Device.pin_factory = previous


# -- issue 24: invisible characters in seat names (the spec's seat-name definition) --------------

INVISIBLE = {"zero-width space": "Blue\u200b", "bidi override": "\u202eeulB",
             "zero-width joiner alone": "Bl\u200due", "byte order mark": "\ufeffBlue",
             "soft hyphen": "Bl\u00adue", "Hangul filler": "Blue\u3164"}


@pytest.mark.parametrize("name", INVISIBLE.values(), ids=list(INVISIBLE))
def test_a_seat_name_with_an_invisible_character_is_a_400_and_starts_nothing(
        client: tuple[Table, FlaskClient], name: str) -> None:
    table, c = client
    game_id = table.engine.game_id if table.engine else None
    resp = post(c, "/api/new-game", {"game": "spank-the-pig",
                                     "seats": [{"name": "Blue"}, {"name": name}]})
    assert resp.status_code == 400, resp.get_data(as_text=True)
    error = resp.get_json()["error"]
    assert "invisible" in error and "\n" not in error and error.isascii(), error
    assert table.engine is not None and table.engine.game_id == game_id


@pytest.mark.parametrize("name", INVISIBLE.values(), ids=list(INVISIBLE))
def test_seats_with_an_invisible_character_on_the_command_line_are_one_line(
        name: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.hostile_support import one_line_error

    proc = subprocess.run([sys.executable, "-m", "referee.cli.main", "play", "--mock",
                           "--no-speech", "--no-web", "--seats", f"Red,{name}", "--db",
                           str(tmp_path / "referee.db"), "--exit-when-over"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert "invisible" in one_line_error(proc)
    assert not list(tmp_path.iterdir())  # nothing written


def test_emoji_sequences_stay_good_names() -> None:
    from referee.config import parse_seats

    family, heart = "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\u2764\ufe0f"
    assert parse_seats(f"{family},{heart},Zo\u00eb") == [family, heart, "Zo\u00eb"]
