"""Table configuration: the default wiring, config.toml, and one-line errors a builder can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.config import (
    DEFAULT_SEATS,
    DEFAULT_WIRING,
    ConfigError,
    JudgeKeys,
    LedChain,
    SeatConfig,
    TableConfig,
    default_config,
    load_config,
    parse_seats,
)

FULL = """\
[table]
game = "pigs-tail"
host = "0.0.0.0"
port = 8080
db = "games.sqlite"
pin = "4321"

[[seats]]
name = "Ann"
colour = "#112233"
slap = 4
double = 23
led = 12

[[seats]]
name = "Red"
slap = 17

[judge]
yes = 16
no = 9
undo = 7

[leds]
data = 10
clock = 11
latch = 8

[options]
tie_us = 2000
doubles = "judge"
cadence = true

[speech]
voice = "en-gb"
rate = 160
"""


def error(make: object) -> str:
    with pytest.raises(ConfigError) as info:
        make()  # type: ignore[operator]
    message = str(info.value)
    assert "\n" not in message
    return message


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_default_wiring_is_the_one_wiring_md_documents():
    assert DEFAULT_WIRING.slap == (4, 17, 27, 22, 5, 6, 13, 26)
    assert DEFAULT_WIRING.double == (23, 24, 25, 12)
    assert DEFAULT_WIRING.judge == JudgeKeys(yes=16, no=9, undo=7)
    assert DEFAULT_WIRING.leds == LedChain(data=10, clock=11, latch=8)
    assert [name for name, _ in DEFAULT_SEATS] == [
        "Blue", "Red", "Green", "Yellow", "Purple", "Orange", "Pink", "Teal",
    ]
    assert ("seat 8 slap", 26) in DEFAULT_WIRING.rows() and len(DEFAULT_WIRING.rows()) == 18


def test_default_config_gives_seats_the_default_pins_in_order():
    config = default_config(["Ann", "Bob", "Cy", "Di", "Ed"])
    assert config.seats[0] == SeatConfig("Ann", "#1f6feb", 4, 23)
    assert config.seats[4] == SeatConfig("Ed", "#8250df", 5, None)
    assert config.judge == DEFAULT_WIRING.judge and config.leds == DEFAULT_WIRING.leds
    assert [s.name for s in default_config().seats] == ["Blue", "Red", "Green", "Yellow"]
    assert all(s.double is None for s in default_config(doubles=False).seats)
    assert len(default_config([n for n, _ in DEFAULT_SEATS]).seats) == 8


def test_parse_seats_trims_and_refuses_empty_or_repeated_names():
    assert parse_seats(" Blue, Red ,Green") == ["Blue", "Red", "Green"]
    assert "empty name" in error(lambda: parse_seats("Blue,,Red"))
    assert error(lambda: parse_seats("Blue,Red,blue")) == (
        "--seats: seats 'Blue' and 'blue' are the same name; give each seat its own name"
    )
    assert "--seats is empty" in error(lambda: parse_seats(" "))


def test_load_full_config(tmp_path):
    config = load_config(write(tmp_path, FULL))
    assert config == TableConfig(
        game="pigs-tail",
        seats=(SeatConfig("Ann", "#112233", 4, 23, 12), SeatConfig("Red", "#d1242f", 17)),
        judge=JudgeKeys(16, 9, 7),
        leds=LedChain(10, 11, 8),
        options={"tie_us": 2000, "doubles": "judge", "cadence": True},
        host="0.0.0.0",
        port=8080,
        db="games.sqlite",
        pin="4321",
        speech={"voice": "en-gb", "rate": 160},
    )


def test_minimal_config_leaves_judge_and_leds_out(tmp_path):
    config = load_config(write(tmp_path, "[[seats]]\nslap = 4\n[[seats]]\nslap = 17\n"))
    assert [s.name for s in config.seats] == ["Blue", "Red"]
    assert config.judge is None and config.leds is None and config.port == 8000


def test_pin_used_twice():
    seats = (SeatConfig("Blue", "#1f6feb", 17), SeatConfig("Red", "#d1242f", 4, double=17))
    assert error(lambda: TableConfig(seats=seats)) == (
        "pin 17 is used by both Blue (slap) and Red (double); give each button its own pin"
    )
    clash = (SeatConfig("Blue", "#1f6feb", 10),)
    assert "pin 10 is used by both Blue (slap) and LED chain (data)" in error(
        lambda: TableConfig(seats=clash, leds=LedChain(10, 11, 8))
    )


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        (3, "pin 3 is reserved for I2C (SDA/SCL); choose another for Blue (slap)"),
        (0, "pin 0 is reserved for the HAT ID EEPROM (ID_SD/ID_SC); choose another for Blue (slap)"),
        (19, "pin 19 is reserved for the I2S audio HAT; choose another for Blue (slap)"),
        (31, "BCM pin 31 is out of range; use 0-27 (for Blue (slap))"),
        (-1, "BCM pin -1 is out of range; use 0-27 (for Blue (slap))"),
    ],
)
def test_reserved_and_out_of_range_pins(pin, message):
    assert error(lambda: TableConfig(seats=(SeatConfig("Blue", "#1f6feb", pin),))) == message


def test_too_many_seats(tmp_path):
    names = [f"P{i}" for i in range(9)]
    assert error(lambda: default_config(names)) == "9 seats configured; the box supports at most 8"
    text = "".join(f'[[seats]]\nname = "{n}"\n' for n in names)
    assert error(lambda: load_config(write(tmp_path, text))) == (
        "9 seats configured; the box supports at most 8"
    )


def test_unknown_keys_are_named_with_the_known_ones(tmp_path):
    text = '[[seats]]\nname = "Blue"\n[[seats]]\nname = "Red"\ncolr = "#d1242f"\n'
    assert error(lambda: load_config(write(tmp_path, text))) == (
        "unknown key 'colr' in seat 2; known: name, colour, slap, double, led"
    )
    text = "[[seats]]\nslap = 4\n[judge]\nyes = 16\nno = 9\nundo = 7\nmaybe = 5\n"
    assert "unknown key 'maybe' in [judge]; known: yes, no, undo" == error(
        lambda: load_config(write(tmp_path, text))
    )
    assert "unknown key 'sound'" in error(lambda: load_config(write(tmp_path, "[sound]\n")))


def test_malformed_toml_names_the_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, '[table]\ngame = "pig"\n\nport = = 8000\n')
    message = error(lambda: load_config("config.toml"))
    assert message.startswith("config.toml: line 4: ")


def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / "nope.toml"
    assert str(path) in error(lambda: load_config(path))


def test_values_of_the_wrong_kind(tmp_path):
    assert "slap = '4' in seat 1 is not a BCM pin number" in error(
        lambda: load_config(write(tmp_path, '[[seats]]\nslap = "4"\n'))
    )
    assert "[judge] has no undo pin" in error(
        lambda: load_config(write(tmp_path, "[[seats]]\nslap = 4\n[judge]\nyes = 16\nno = 9\n"))
    )
    assert "colour 'blue' of seat Blue is not a #rrggbb colour" in error(
        lambda: TableConfig(seats=(SeatConfig("Blue", "blue", 4),))
    )
    assert "seat name 'Judge' is kept for the judge keypad" in error(
        lambda: TableConfig(seats=(SeatConfig("Judge", "#1f6feb", 4),))
    )
    assert "no [[seats]]" in error(lambda: load_config(write(tmp_path, "[table]\nport = 1\n")))
    assert "port 0 is not a TCP port" in error(
        lambda: load_config(write(tmp_path, "[table]\nport = 0\n[[seats]]\nslap = 4\n"))
    )


SEAT = '[[seats]]\nslap = 4\n'


@pytest.mark.parametrize(("text", "message"), [
    ("table = 5\n" + SEAT, "[table] must be a table, e.g. [table]"),
    ("judge = [1]\n" + SEAT, "[judge] must be a table, e.g. [judge]"),
    ("options = 3\n" + SEAT, "[options] must be a table, e.g. [options]"),
    ("seats = 4\n", "seats must be [[seats]] tables, one per seat"),
    ("seats = [4]\n", "seats must be [[seats]] tables, one per seat"),
    (SEAT + "[leds]\ndata = 10\nclock = 11\n", "[leds] has no latch pin; set data, clock and latch"),
    (SEAT + "[leds]\ndata = 10\nclock = 11\nlatch = 8\nblink = 1\n",
     "unknown key 'blink' in [leds]; known: data, clock, latch, oe"),
    (SEAT + "[judge]\nyes = 16\nno = 9.0\nundo = 7\n",
     "no = 9.0 in [judge] is not a BCM pin number; use e.g. no = 4"),
    (SEAT + "[[seats]]\nslap = 17\ndouble = true\n",
     "double = True in seat 2 is not a BCM pin number; use e.g. double = 4"),
    ('[table]\nhost = 80\n' + SEAT, 'host = 80 in [table] must be text in quotes, e.g. host = "x"'),
    ('[[seats]]\nname = 7\nslap = 4\n',
     'name = 7 in seat 1 must be text in quotes, e.g. name = "x"'),
    ('[table]\npin = true\n' + SEAT,
     'pin = True in [table] must be a PIN code in quotes, e.g. pin = "483920"'),
    (SEAT + '[buttons]\nconfirm_ms = "1"\n', "confirm_ms = '1' in [buttons] must be 0-20 "
     "(milliseconds a press must stay low to count; default 1)"),
    (SEAT + "[buttons]\nconfirm_ms = 25\n", "confirm_ms = 25 in [buttons] must be 0-20 "
     "(milliseconds a press must stay low to count; default 1)"),
    (SEAT + '[buttons]\nuntimed_edges = "yes"\n',
     "untimed_edges = 'yes' in [buttons] must be true or false"),
    (SEAT + "[options.pig]\nlives = 3\n[options.pig.more]\nx = 1\n",
     "[options.pig.more] is a table; a game's options are k = v lines under [options.pig]"),
])
def test_each_key_of_the_wrong_kind_is_named_with_its_fix(tmp_path, text, message):
    assert error(lambda: load_config(write(tmp_path, text))) == message


def test_game_option_tables_are_read_beside_the_flat_options(tmp_path):
    text = SEAT + '[options]\ndeck = 36\n[options.pigs-tail]\ntake = "slowest"\n'
    config = load_config(write(tmp_path, text))
    assert config.options == {"deck": 36}
    assert config.game_options == {"pigs-tail": {"take": "slowest"}}
    assert config.source == str(tmp_path / "config.toml")
