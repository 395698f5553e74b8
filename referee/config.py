"""The table's configuration: which game, which seats, and which GPIO pin does what.

A table is described by a small TOML file (``config.toml``)::

    [table]                      # game, host, port, db, pin (the judge panel's PIN),
                                 # delivery_us (how late a press may arrive; default: the pins'),
                                 # language (en, de, es: the voice's and the pages' words)
    game = "spank-the-pig"
    [[seats]]                    # one per seat, in seat order
    name = "Blue"
    colour = "#1f6feb"
    slap = 4                     # BCM number of the slap button (pull-up, button to ground)
    double = 23                  # optional second button
    led = 12                     # optional LED on its own pin
    [judge]                      # optional three-key keypad
    yes = 16
    no = 9
    undo = 7
    [leds]                       # optional 74HC595 chain: seat i lights output Qi
    data = 10
    clock = 11
    latch = 8
    oe = 25                      # optional: 74HC595 OE, pulled high by 10 kΩ, driven low
    [options]                    # options of the game being played ([table] game), k = v
    [options.pigs-tail]          # one game's own options, whichever game the table plays
    [speech]                     # voice, rate, volume, language, device, output_delay_ms
    [buttons]                    # confirm_ms (glitch filter), untimed_edges (allow RPi.GPIO)

Everything is checked once, when the config is built, so a mistake is reported as one line that
names the bad value and says what to do (``ConfigError``), never as a traceback at the table.
Pins are BCM numbers 0-27; the HAT ID EEPROM, I2C and I2S audio pins are refused, and every pin
may be used only once. ``DEFAULT_WIRING`` is the wiring that wiring.md documents.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import stat
import tomllib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from referee.seatnames import MAX_NAME, seat_problem, seats_problem

MAX_SEATS: Final = 8
BCM_RANGE: Final = range(0, 28)
RESERVED_PINS: Final[Mapping[int, str]] = {
    0: "the HAT ID EEPROM (ID_SD/ID_SC)",
    1: "the HAT ID EEPROM (ID_SD/ID_SC)",
    2: "I2C (SDA/SCL)",
    3: "I2C (SDA/SCL)",
    18: "the I2S audio HAT",
    19: "the I2S audio HAT",
    20: "the I2S audio HAT",
    21: "the I2S audio HAT",
}
MAX_DELIVERY_US: Final = 100_000  # a ruling said a tenth of a second late is still "at once"
JUDGE_SEAT: Final = "judge"  # the name events use for the keypad; no seat may take it
# The keys that stand for the box's buttons, in the terminal and on the virtual box page alike:
# seat n's slap and double, and the judge keypad's YES / NO / UNDO.
SLAP_KEYS: Final = "12345678"
DOUBLE_KEYS: Final = "qwertyui"
JUDGE_KEYS: Final = {"j": "yes", "n": "no", "z": "undo"}
SEAT_KEYS: Final = ("name", "colour", "slap", "double", "led")
SPEECH_KEYS: Final = ("voice", "rate", "volume", "language", "device", "output_delay_ms")
BUTTON_KEYS: Final = ("confirm_ms", "untimed_edges")
MAX_OUTPUT_DELAY_MS: Final = 1000  # a TV's picture processing is 20-150 ms; Bluetooth ~200


_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
MAX_CONFIG_BYTES: Final = 1 << 20  # a config file is a few hundred bytes; /dev/zero is endless
PIN_DIGITS: Final = range(4, 9)
_PIN = re.compile(r"[0-9]{4,8}")

OptionValue = str | int | bool


class ConfigError(ValueError):
    """A mistake in the table configuration, as one line naming the bad value and the fix."""


@dataclass(frozen=True)
class SeatConfig:
    name: str
    colour: str
    slap: int | None
    double: int | None = None
    led: int | None = None


@dataclass(frozen=True)
class JudgeKeys:
    yes: int
    no: int
    undo: int


@dataclass(frozen=True)
class LedChain:
    """A 74HC595 shift register driving up to 8 seat LEDs through a ULN2803; seat i is output Qi."""

    data: int
    clock: int
    latch: int
    oe: int | None = None  # output enable: held high (LEDs off) by a pull-up until driven low


@dataclass(frozen=True)
class ButtonOptions:
    """How presses are read: the glitch filter, and whether a factory without edge times
    (RPi.GPIO) may referee at all."""

    confirm_us: int = 1000  # a press must still be low this long after its first edge
    untimed_edges: bool = False


@dataclass(frozen=True)
class Wiring:
    """A pin assignment for the box: slap and double buttons by seat, judge keys, LED chain."""

    slap: tuple[int, ...]
    double: tuple[int, ...]
    judge: JudgeKeys
    leds: LedChain

    def rows(self) -> list[tuple[str, int]]:
        """(role, BCM) for every pin, in the order wiring.md lists them."""
        rows = [(f"seat {i + 1} slap", pin) for i, pin in enumerate(self.slap)]
        rows += [(f"seat {i + 1} double", pin) for i, pin in enumerate(self.double)]
        rows += [(f"judge {k}", getattr(self.judge, k)) for k in ("yes", "no", "undo")]
        rows += [(f"LED chain {k}", getattr(self.leds, k)) for k in ("data", "clock", "latch")]
        return rows


DEFAULT_WIRING: Final = Wiring(
    slap=(4, 17, 27, 22, 5, 6, 13, 26),
    double=(23, 24, 25, 12),
    judge=JudgeKeys(yes=16, no=9, undo=7),
    leds=LedChain(data=10, clock=11, latch=8),
)
DEFAULT_SEATS: Final[tuple[tuple[str, str], ...]] = (
    ("Blue", "#1f6feb"),
    ("Red", "#d1242f"),
    ("Green", "#1a7f37"),
    ("Yellow", "#d4a72c"),
    ("Purple", "#8250df"),
    ("Orange", "#e16f24"),
    ("Pink", "#e85aad"),
    ("Teal", "#1b9aaa"),
)


@dataclass(frozen=True)
class TableConfig:
    game: str = "spank-the-pig"
    seats: tuple[SeatConfig, ...] = ()
    judge: JudgeKeys | None = None
    leds: LedChain | None = None
    options: dict[str, OptionValue] = field(default_factory=dict)  # flat [options]: `game`'s
    game_options: dict[str, dict[str, OptionValue]] = field(default_factory=dict)  # [options.g]
    host: str = "127.0.0.1"
    port: int = 8000
    db: str | None = None
    pin: str | None = None
    speech: dict[str, Any] = field(default_factory=dict)
    buttons: ButtonOptions = field(default_factory=ButtonOptions)
    # how late a press may reach the engine after its edge (µs); None: the pin library's bound
    delivery_us: int | None = None
    # the table's language: the voice's phrases, the pages' words and the voice (never logged)
    language: str = "en"
    source: str | None = field(default=None, compare=False)  # the file it was read from

    def __post_init__(self) -> None:
        _check(self)

    def seat(self, name: str) -> SeatConfig:
        for seat in self.seats:
            if seat.name == name:
                return seat
        known = ", ".join(s.name for s in self.seats)
        raise ConfigError(f"unknown seat {name!r}; seats: {known}")


# --------------------------------------------------------------------------------------------
# Checks


def _check(config: TableConfig) -> None:
    if not config.seats:
        raise ConfigError("no seats configured; add a [[seats]] table per seat or use --seats")
    if len(config.seats) > MAX_SEATS:
        raise ConfigError(
            f"{len(config.seats)} seats configured; the box supports at most {MAX_SEATS}"
        )
    for seat in config.seats:
        _check_name(seat.name)
    twice = seats_problem(seat.name for seat in config.seats)
    if twice:
        raise ConfigError(twice)
    for seat in config.seats:
        if not isinstance(seat.colour, str) or not _COLOUR.fullmatch(seat.colour):
            raise ConfigError(
                f"colour {seat.colour!r} of seat {seat.name} is not a #rrggbb colour; e.g. #1f6feb"
            )
    users: dict[int, str] = {}
    for pin, user in _pin_uses(config):
        if isinstance(pin, bool) or not isinstance(pin, int):
            raise ConfigError(f"{user} pin {pin!r} is not a BCM pin number; use 0-27")
        if pin not in BCM_RANGE:
            raise ConfigError(f"BCM pin {pin} is out of range; use 0-27 (for {user})")
        if pin in RESERVED_PINS:
            raise ConfigError(
                f"pin {pin} is reserved for {RESERVED_PINS[pin]}; choose another for {user}"
            )
        if pin in users:
            what = "one" if "LED" in user + users[pin] else "button"
            raise ConfigError(
                f"pin {pin} is used by both {users[pin]} and {user}; give each {what} its own pin"
            )
        users[pin] = user
    port = config.port
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigError(f"port {config.port!r} is not a TCP port; use 1-65535, e.g. 8000")
    for where, options in (("[options]", config.options),
                           *((f"[options.{g}]", o) for g, o in config.game_options.items())):
        for key, value in options.items():
            if not isinstance(value, str | int | bool):
                raise ConfigError(f"option {key} = {value!r} in {where} must be text, a whole "
                                  f"number or true/false")
    delivery = config.delivery_us
    if delivery is not None and (isinstance(delivery, bool) or not isinstance(delivery, int)
                                 or not 0 <= delivery <= MAX_DELIVERY_US):
        raise ConfigError(f"delivery_us = {delivery!r} in [table] must be a whole number of "
                          f"microseconds from 0 to {MAX_DELIVERY_US}, e.g. 5000")
    if config.pin is not None:
        check_pin(config.pin, "pin")
    for key in config.speech:
        if key not in SPEECH_KEYS:
            raise ConfigError(f"unknown key {key!r} in [speech]; known: {', '.join(SPEECH_KEYS)}")
    _check_speech_device(config.speech)


def _check_speech_device(speech: Mapping[str, Any]) -> None:
    device = speech.get("device")
    if device is not None and (isinstance(device, bool) or not isinstance(device, str | int)
                               or isinstance(device, str) and not device.strip()):
        raise ConfigError(f'device = {device!r} in [speech] must be part of a sound card\'s name '
                          f'in quotes, e.g. device = "USB" (referee doctor lists them)')
    delay = speech.get("output_delay_ms")
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int | float)
                              or not 0 <= delay <= MAX_OUTPUT_DELAY_MS):
        raise ConfigError(f"output_delay_ms = {delay!r} in [speech] must be 0-"
                          f"{MAX_OUTPUT_DELAY_MS} (milliseconds); referee calibrate measures it")


def clean_text(value: str, what: str, limit: int) -> str:
    """User text as the table keeps it: NFC (so "Zoë" typed two ways is one name), trimmed, and
    refused with one line if it holds control characters (ESC, NUL, newlines print raw to the
    console and the journal), a lone surrogate (it cannot be stored as UTF-8), or is too long."""
    for ch in value:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs") or ch in "\u2028\u2029":
            raise ConfigError(f"{what} {_shown(value)} holds the control character "
                              f"{ascii(ch)}; use letters, digits and spaces")
    value = unicodedata.normalize("NFC", value).strip()
    if len(value) > limit:
        raise ConfigError(f"{what} {_shown(value)} is longer than {limit} characters; shorten it")
    return value


def _shown(value: str) -> str:
    """repr() made safe for one line of ASCII, cut short if long."""
    shown = ascii(value)
    return shown if len(shown) <= 48 else shown[:45] + "...'"


def check_pin(pin: object, where: str = "--pin") -> str:
    """A table PIN: 4 to 8 digits."""
    text = str(pin) if isinstance(pin, int) and not isinstance(pin, bool) else pin
    if not isinstance(text, str) or not _PIN.fullmatch(text):
        raise ConfigError(f"{where} {_shown(str(pin))} is not a PIN of 4 to 8 digits; "
                          f"e.g. {where} 483920")
    return text


def _check_name(name: object) -> None:
    """The seat-name rule every way a name arrives shares (`referee.seatnames`), then the box's
    own: a name typed in NFC (the config file's), no comma (`--seats`), not the keypad's."""
    problem = seat_problem(name)
    if problem:
        raise ConfigError(problem)
    assert isinstance(name, str)
    if clean_text(name, "seat name", MAX_NAME) != name:
        raise ConfigError(f"seat name {_shown(name)} is not in its normal form (NFC) or has "
                          f"stray spaces; type it again")
    if "," in name:
        raise ConfigError(f"seat name {name!r} has a comma; use e.g. 'Blue'")
    if name.casefold() == JUDGE_SEAT:
        raise ConfigError(f"seat name {name!r} is kept for the judge keypad; choose another")


def _pin_uses(config: TableConfig) -> list[tuple[int, str]]:
    uses: list[tuple[int, str]] = []
    for seat in config.seats:
        for role in ("slap", "double", "led"):
            pin = getattr(seat, role)
            if pin is not None:
                uses.append((pin, f"{seat.name} ({'LED' if role == 'led' else role})"))
    if config.judge is not None:
        uses += [(getattr(config.judge, k), f"judge ({k.upper()})") for k in ("yes", "no", "undo")]
    if config.leds is not None:
        uses += [(getattr(config.leds, k), f"LED chain ({k})") for k in ("data", "clock", "latch")]
        if config.leds.oe is not None:
            uses.append((config.leds.oe, "LED chain (oe)"))
    return uses


# --------------------------------------------------------------------------------------------
# Building a config


def default_config(seat_names: Sequence[str] | None = None, *, doubles: bool = True) -> TableConfig:
    """The box as wiring.md builds it; seats take the default pins in order (default: 4 seats)."""
    if seat_names is None:
        seat_names = [name for name, _ in DEFAULT_SEATS[:4]]
    if len(seat_names) > MAX_SEATS:
        raise ConfigError(f"{len(seat_names)} seats configured; the box supports at most {MAX_SEATS}")
    wiring = DEFAULT_WIRING
    seat_names = [clean_text(name, "seat name", MAX_NAME) for name in seat_names]
    seats = tuple(
        SeatConfig(
            name=name,
            colour=DEFAULT_SEATS[i][1],
            slap=wiring.slap[i],
            double=wiring.double[i] if doubles and i < len(wiring.double) else None,
        )
        for i, name in enumerate(seat_names)
    )
    return TableConfig(seats=seats, judge=wiring.judge, leds=wiring.leds)


def build_seats(given: Sequence[Mapping[str, Any]]) -> tuple[SeatConfig, ...]:
    """Seats from their names and whatever else is given of each (colour, slap, double, led);
    the rest as wiring.md wires the box. The one place seats are built from parts."""
    base = default_config([g["name"] for g in given])
    return tuple(
        SeatConfig(name=g["name"], colour=g.get("colour") or d.colour,
                   slap=g.get("slap", d.slap), double=g.get("double", d.double),
                   led=g.get("led", d.led))
        for g, d in zip(given, base.seats, strict=True))


def parse_seats(text: str) -> list[str]:
    """Seat names from ``--seats Blue,Red,...``: trimmed, none empty, none twice."""
    names = [clean_text(part, "seat name", MAX_NAME) for part in text.split(",")]
    if not any(names):
        raise ConfigError("--seats is empty; list the seats in order, e.g. --seats Blue,Red,Green")
    if not all(names):
        raise ConfigError(f"--seats {text!r} has an empty name; separate names with single commas")
    for name in names:
        _check_name(name)
    twice = seats_problem(names)
    if twice:
        raise ConfigError(f"--seats: {twice}")
    return names


def load_config(path: str | Path) -> TableConfig:
    """Read and check a config.toml; every mistake is a one-line ConfigError."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"config file {str(path)!r} is larger than 1 MB (or endless); "
                              f"give the path of a config.toml")
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} not found; check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_toml_message(path, exc)) from None
    except RecursionError:
        raise ConfigError(f"config file {str(path)!r} is nested too deeply; "
                          f"see hardware/config.example.toml for its shape") from None
    return dataclasses.replace(_from_toml(_merge_drop_in(path, data)), source=str(path))


def _toml_message(path: Path, exc: tomllib.TOMLDecodeError) -> str:
    text = str(exc)
    where = re.search(r"\s*\(at line (\d+), column (\d+)\)$", text)
    if where:
        what = text[: where.start()]
        return f"{path}: line {where.group(1)}: {what} (column {where.group(2)})"
    end = re.search(r"\s*\(at end of document\)$", text)
    if end:
        lines = max(1, len(path.read_text(encoding="utf-8").splitlines()))
        return f"{path}: line {lines}: {text[: end.start()]} (at end of file)"
    return f"{path}: {text}"


# The file's shape, declared once: msgspec decodes the TOML into these (unknown keys and values of
# the wrong kind refused), and `_refusal` says each refusal in the words of the table's checks.
# What a value means (pin ranges and clashes, names, colours, ports) `TableConfig` checks.


class _Seat(msgspec.Struct, forbid_unknown_fields=True):
    name: str | None = None
    colour: str | None = None
    slap: int | None = None
    double: int | None = None
    led: int | None = None


class _Judge(msgspec.Struct, forbid_unknown_fields=True):
    yes: int
    no: int
    undo: int


class _Leds(msgspec.Struct, forbid_unknown_fields=True):
    data: int
    clock: int
    latch: int
    oe: int | None = None


class _Table(msgspec.Struct, forbid_unknown_fields=True):
    game: str | None = None
    host: str | None = None
    port: Any = 8000  # its range and kind: TableConfig's check, one message for both
    db: str | None = None
    pin: str | int | None = None
    delivery_us: Any = None  # likewise
    language: str | None = None


class _Buttons(msgspec.Struct, forbid_unknown_fields=True):
    confirm_ms: int | float = 1.0
    untimed_edges: bool = False


class _File(msgspec.Struct, forbid_unknown_fields=True):
    table: _Table = msgspec.field(default_factory=_Table)
    seats: list[_Seat] | None = None
    judge: _Judge | None = None
    leds: _Leds | None = None
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    speech: dict[str, Any] = msgspec.field(default_factory=dict)
    buttons: _Buttons = msgspec.field(default_factory=_Buttons)


_SECTIONS: Final[dict[str, type[msgspec.Struct]]] = {
    "table": _Table, "seats": _Seat, "judge": _Judge, "leds": _Leds, "buttons": _Buttons}
_PIN_KEYS: Final = frozenset({"slap", "double", "led", "yes", "no", "undo", "data", "clock",
                              "latch", "oe"})
_TEXT_KEYS: Final = frozenset({"name", "colour", "game", "host", "db", "language"})
_REFUSAL = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _decode(data: Mapping[str, Any]) -> _File:
    try:
        return msgspec.convert(data, _File, strict=True)
    except msgspec.ValidationError as exc:
        raise ConfigError(_refusal(str(exc), data)) from None


def _refusal(text: str, data: Mapping[str, Any]) -> str:
    """msgspec's refusal ("Expected `int | null`, got `str` - at `$.seats[0].slap`") as the
    table's one line naming the key, where it is and the fix."""
    found = _REFUSAL.match(text)
    what = found.group("what") if found else text
    path: list[str | int] = [m.group(1) if m.group(1) is not None else int(m.group(2))
                             for m in _STEP.finditer(found.group("path") or "" if found else "")]
    section = path[0] if path and isinstance(path[0], str) else None
    where = ("the config file" if section is None else f"seat {int(path[1]) + 1}"
             if section == "seats" and len(path) > 1 else f"[{section}]")
    unknown = re.match(r"Object contains unknown field `(.*)`$", what)
    if unknown:
        shape = _SECTIONS.get(section) if section is not None else _File
        known = ", ".join(shape.__struct_fields__) if shape else ""
        return f"unknown key {unknown.group(1)!r} in {where}; known: {known}"
    missing = re.match(r"Object missing required field `(.*)`$", what)
    if missing:
        keys = _SECTIONS[str(section)].__struct_fields__[:3]
        return f"{where} has no {missing.group(1)} pin; set {keys[0]}, {keys[1]} and {keys[2]}"
    field_path = path[2:] if section == "seats" else path[1:]
    if section == "seats" and len(path) <= 2:
        return "seats must be [[seats]] tables, one per seat"
    if not field_path:
        return f"{where} must be a table, e.g. [{section}]"
    key = str(field_path[0])
    value: Any = data
    for step in path:
        value = value[step]
    if key in _PIN_KEYS:
        return f"{key} = {value!r} in {where} is not a BCM pin number; use e.g. {key} = 4"
    if key in _TEXT_KEYS:
        return f'{key} = {value!r} in {where} must be text in quotes, e.g. {key} = "x"'
    if key == "pin":
        return f'pin = {value!r} in [table] must be a PIN code in quotes, e.g. pin = "483920"'
    if key == "confirm_ms":
        return _CONFIRM.format(value=value)
    if key == "untimed_edges":
        return f"untimed_edges = {value!r} in [buttons] must be true or false"
    return f"{key} = {value!r} in {where}: {what}"  # pragma: no cover - every key is above


_CONFIRM: Final = ("confirm_ms = {value!r} in [buttons] must be 0-20 (milliseconds a press must "
                   "stay low to count; default 1)")


def _from_toml(data: Mapping[str, Any]) -> TableConfig:
    raw = _decode(data)
    if raw.seats is None:
        raise ConfigError("no [[seats]] in the config file; add one [[seats]] table per seat")
    if len(raw.seats) > MAX_SEATS:
        raise ConfigError(f"{len(raw.seats)} seats configured; the box supports at most {MAX_SEATS}")
    seats = []
    for i, given in enumerate(raw.seats):
        where = f"seat {i + 1}"
        name = given.name
        if name is None:
            name = DEFAULT_SEATS[i][0]
        elif not name.strip():
            raise ConfigError(f'name = "" in {where} is empty; give the seat a name, e.g. '
                              f'name = "{DEFAULT_SEATS[i][0]}"')
        name = clean_text(name, f"name in {where}", MAX_NAME)
        by_name = dict(DEFAULT_SEATS).get(name, DEFAULT_SEATS[i][1])
        seats.append(SeatConfig(name=name, colour=given.colour or by_name, slap=given.slap,
                                double=given.double, led=given.led))
    for i, seat in enumerate(seats):  # after every seat's keys were checked
        if seat.slap is None:
            raise ConfigError(f"seat {i + 1} ({seat.name}) has no slap pin; give it one, e.g. "
                              f"slap = {DEFAULT_WIRING.slap[i]}")
    judge = None if raw.judge is None else JudgeKeys(raw.judge.yes, raw.judge.no, raw.judge.undo)
    leds = None if raw.leds is None else LedChain(raw.leds.data, raw.leds.clock, raw.leds.latch,
                                                  oe=raw.leds.oe)
    table = raw.table
    if table.pin is not None:
        check_pin(table.pin, "pin in [table]")
    flat, per_game = _options(raw.options)
    return TableConfig(
        game=table.game or "spank-the-pig",
        seats=tuple(seats),
        judge=judge,
        leds=leds,
        options=flat,
        game_options=per_game,
        host=table.host or "127.0.0.1",
        port=table.port,
        db=table.db,
        pin=None if table.pin is None else str(table.pin),
        speech=dict(raw.speech),
        buttons=_buttons(raw.buttons),
        delivery_us=table.delivery_us,
        # [speech] language, the older place, when [table] names none
        language=table.language or str(raw.speech.get("language") or "en"),
    )


def _options(raw: Mapping[str, Any]
             ) -> tuple[dict[str, OptionValue], dict[str, dict[str, OptionValue]]]:
    """[options] as the flat options of the config's own game and the `[options.<game>]`
    tables (a table inside [options] is a game's; which games exist the registry says)."""
    flat = {k: v for k, v in raw.items() if not isinstance(v, dict)}
    per_game = {k: dict(v) for k, v in raw.items() if isinstance(v, dict)}
    for game, table in per_game.items():
        for key, value in table.items():
            if isinstance(value, dict):
                raise ConfigError(f"[options.{game}.{key}] is a table; a game's options are "
                                  f"k = v lines under [options.{game}]")
    return flat, per_game


def _buttons(raw: _Buttons) -> ButtonOptions:
    if not 0 <= raw.confirm_ms <= 20:
        raise ConfigError(_CONFIRM.format(value=raw.confirm_ms))
    return ButtonOptions(confirm_us=round(raw.confirm_ms * 1000), untimed_edges=raw.untimed_edges)


# -- writing: `referee calibrate` saves a measured value -----------------------------------------
#
# The service's config, /etc/table-referee/config.toml, is root's (mode 0640, group referee: it
# holds the table PIN), in a directory only root may write. So a value is written into the config
# itself when this user may replace it keeping its owner and mode, and otherwise into a drop-in
# of this user's own, in its state directory (the service user's is under its home,
# /var/lib/table-referee), which `load_config` merges over the config whenever this user loads it.


def drop_in_path(config: str | Path) -> Path:
    """This user's drop-in for `config`: $XDG_STATE_HOME (else ~/.local/state)
    /table-referee/config.d/<the config's absolute path, '/' as '-'>."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                             "state")
    name = os.path.abspath(config).strip("/").replace("/", "-") or "config.toml"
    return Path(state) / "table-referee" / "config.d" / name


def _merge_drop_in(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    drop = drop_in_path(path)
    try:
        text = drop.read_text(encoding="utf-8")
    except FileNotFoundError:
        return data
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {str(drop)!r} (saved by referee calibrate over "
                          f"{str(path)!r}): {exc}; delete it, or fix its permissions") from None
    try:
        extra = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{_toml_message(drop, exc)}; delete {drop} to drop what referee "
                          "calibrate saved") from None
    return _merge(data, extra)


def _merge(data: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`data` with each table of `extra` merged over its own (a key of `extra` wins)."""
    merged = dict(data)
    for section, values in extra.items():
        if isinstance(values, dict) and isinstance(merged.get(section, {}), dict):
            merged[section] = {**merged.get(section, {}), **values}
        else:
            merged[section] = values
    return merged


def _with_value(text: str, section: str, key: str, value: int | float | str) -> str:
    shown = f'"{value}"' if isinstance(value, str) else repr(value)
    line = f"{key} = {shown}"
    lines = text.splitlines()
    head = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")
    start = next((i for i, ln in enumerate(lines)
                  if (m := head.match(ln)) and m.group(1).strip() == section), None)
    if start is None:
        lines += ["", f"[{section}]", line]
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
                   len(lines))
        own = re.compile(rf"^\s*{re.escape(key)}\s*=")
        found = next((i for i in range(start + 1, end) if own.match(lines[i])), None)
        if found is None:
            lines.insert(start + 1, line)
        else:
            lines[found] = line
    return "\n".join(lines) + "\n"


def _replace(path: Path, text: str, like: os.stat_result | None) -> None:
    """Replace `path` by `text` at once (a pulled plug leaves the old file or the new one), with
    `like`'s owner and mode; never readable by others on the way. PermissionError when this
    user cannot create the file beside it or cannot give it that owner."""
    tmp = path.with_name(path.name + ".new")
    try:
        tmp.unlink()
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            if like is not None:
                mine = os.fstat(fd)
                if (mine.st_uid, mine.st_gid) != (like.st_uid, like.st_gid):
                    os.fchown(fd, like.st_uid, like.st_gid)  # root, or a group of this user's
                os.fchmod(fd, stat.S_IMODE(like.st_mode))
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def set_config_value(path: str | Path, section: str, key: str, value: int | float | str) -> Path:
    """Save ``key = value`` under ``[section]`` for the config at `path`; returns where it went.

    Into the config itself, keeping everything else (comments too: an existing line is replaced,
    else the key is added at the section's top, else the section is appended), its owner and its
    mode, when this user may; otherwise (a root-owned /etc/table-referee) into this user's drop-in
    (`drop_in_path`), merged over the config at load. The result is checked before it is written.
    A value this user's drop-in already holds is saved there (it would win over the config).
    Every failure is a one-line ConfigError with the fix."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        like = path.stat()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc}") from None
    drop = drop_in_path(path)
    dropped = drop.read_text(encoding="utf-8") if _merge_drop_in(path, {}) else None
    held = dropped is not None and key in tomllib.loads(dropped).get(section, {})
    if not held:
        new = _with_value(text, section, key, value)
        _from_toml(_merge_drop_in(path, tomllib.loads(new)))  # never a file the referee refuses
        try:
            _replace(path, new, like)
            return path
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise ConfigError(f"cannot write config file {str(path)!r}: {exc}") from None
    header = (f"# Saved by referee calibrate for {os.path.abspath(path)} (which this user cannot "
              "write);\n# merged over it whenever this user loads it. Delete this file to drop "
              "it.\n")
    new_drop = _with_value(dropped if dropped is not None else header, section, key, value)
    _from_toml(_merge(tomllib.loads(text), tomllib.loads(new_drop)))
    try:
        drop.parent.mkdir(parents=True, exist_ok=True)
        _replace(drop, new_drop, None)
    except OSError as exc:
        raise ConfigError(
            f"cannot save {key} = {value!r}: this user may write neither {str(path)!r} nor "
            f"{str(drop)!r} ({exc.strerror or exc}); run it as the user the referee runs as "
            f"(sudo -u referee ...), or add {key} = {value!r} under [{section}] in {path} "
            "yourself") from None
    return drop
