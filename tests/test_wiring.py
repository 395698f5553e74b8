"""The build kit agrees with itself: wiring.md, hardware/ and referee.config tell one story.

A builder wires the box from wiring.md (or the diagram), the Pi reads hardware/config.example.toml,
and the code's defaults live in referee.config. If any of them drifts, someone solders a button to
the wrong pin, so these tests compare them all, pin by pin, and check every physical pin number
against the real 40-pin header.
"""

from __future__ import annotations

import csv
import importlib.util
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
WIRING_MD = ROOT / "wiring.md"
HARDWARE = ROOT / "hardware"
EXAMPLE = HARDWARE / "config.example.toml"
SERVICE = HARDWARE / "table-referee.service"
INSTALL = HARDWARE / "install.sh"

# The 40-pin header of every Pi since the B+ (Zero 2 W, 3, 4, 5): physical pin -> function.
HEADER: dict[int, str] = {
    1: "3V3", 2: "5V", 3: "BCM2", 4: "5V", 5: "BCM3", 6: "GND", 7: "BCM4", 8: "BCM14",
    9: "GND", 10: "BCM15", 11: "BCM17", 12: "BCM18", 13: "BCM27", 14: "GND", 15: "BCM22",
    16: "BCM23", 17: "3V3", 18: "BCM24", 19: "BCM10", 20: "GND", 21: "BCM9", 22: "BCM25",
    23: "BCM11", 24: "BCM8", 25: "GND", 26: "BCM7", 27: "BCM0", 28: "BCM1", 29: "BCM5",
    30: "GND", 31: "BCM6", 32: "BCM12", 33: "BCM13", 34: "GND", 35: "BCM19", 36: "BCM16",
    37: "BCM26", 38: "BCM20", 39: "GND", 40: "BCM21",
}
PIN_OF_BCM = {int(f[3:]): pin for pin, f in HEADER.items() if f.startswith("BCM")}

# Pins the wiring must never use: HAT ID EEPROM, I2C, I2S audio HATs, and the UART left free.
RESERVED = {0, 1, 2, 3, 18, 19, 20, 21, 14, 15}

# The fixed default wiring (the spec referee.config implements).
SPEC_SLAP = (4, 17, 27, 22, 5, 6, 13, 26)
SPEC_DOUBLE = (23, 24, 25, 12)
SPEC_JUDGE = {"yes": 16, "no": 9, "undo": 7}
SPEC_LEDS = {"data": 10, "clock": 11, "latch": 8}
SPEC_SEATS = (
    ("Blue", "#1f6feb"), ("Red", "#d1242f"), ("Green", "#1a7f37"), ("Yellow", "#d4a72c"),
    ("Purple", "#8250df"), ("Orange", "#e16f24"), ("Pink", "#e85aad"), ("Teal", "#1b9aaa"),
)


# --------------------------------------------------------------------------------------------
# helpers


def config_module() -> ModuleType:
    import referee.config  # lazily: the tests of the header map need no package at all

    return referee.config


def md_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every pipe table in a markdown text: (header cells, body rows)."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"\|[-| :]+\|$", lines[i + 1]):
            head = cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            tables.append((head, rows))
        else:
            i += 1
    return tables


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table(starts_with: list[str]) -> list[dict[str, str]]:
    """The one wiring.md table whose header begins with these cells, as dicts."""
    found = [
        (head, rows)
        for head, rows in md_tables(WIRING_MD.read_text(encoding="utf-8"))
        if head[: len(starts_with)] == starts_with
    ]
    assert len(found) == 1, f"wiring.md should have exactly one table headed {starts_with}"
    head, rows = found[0]
    assert all(len(r) == len(head) for r in rows), f"ragged table {starts_with}"
    return [dict(zip(head, r, strict=True)) for r in rows]


def seat_rows() -> list[dict[str, str]]:
    return table(["Seat", "Name", "Colour", "Slap BCM", "Slap pin"])


def numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def uncomment_all_seats(toml_text: str) -> str:
    """The example config with its commented-out seats 5-8 switched on."""
    out = []
    in_seat = False
    for line in toml_text.splitlines():
        if line.startswith("# [[seats]]"):
            in_seat = True
        elif not line.startswith("# ") or line.startswith("# A small build"):
            in_seat = False
        out.append(line[2:] if in_seat else line)
    return "\n".join(out) + "\n"


def unit(path: Path) -> dict[str, list[str]]:
    """A systemd unit as key -> values (keys may repeat)."""
    values: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, _, value = line.partition("=")
        values.setdefault(key.strip(), []).append(value.strip())
    return values


# --------------------------------------------------------------------------------------------
# the header map itself


def test_header_map_is_a_real_40_pin_header() -> None:
    assert sorted(HEADER) == list(range(1, 41))
    assert sorted(PIN_OF_BCM) == list(range(28)), "BCM 0-27 each appear once"
    assert [p for p, f in HEADER.items() if f == "GND"] == [6, 9, 14, 20, 25, 30, 34, 39]


def test_header_map_matches_gpiozero_board_data() -> None:
    """A second, independent source: gpiozero's own header drawings for Zero 2 W, 3, 4 and 5."""
    mock = pytest.importorskip("gpiozero.pins.mock")
    for revision in ("902120", "a02082", "c03111", "c04170"):
        j8 = mock.MockFactory(revision=revision).board_info.headers["J8"].pins
        theirs = {n: p.name.replace("GPIO", "BCM") for n, p in j8.items()}
        assert theirs == HEADER, revision


# --------------------------------------------------------------------------------------------
# wiring.md against the code's defaults


def test_spec_table_is_the_code_default() -> None:
    config = config_module()
    wiring = config.DEFAULT_WIRING
    assert tuple(wiring.slap) == SPEC_SLAP
    assert tuple(wiring.double) == SPEC_DOUBLE
    assert {k: getattr(wiring.judge, k) for k in SPEC_JUDGE} == SPEC_JUDGE
    assert {k: getattr(wiring.leds, k) for k in SPEC_LEDS} == SPEC_LEDS
    assert tuple(config.DEFAULT_SEATS) == SPEC_SEATS


def test_seat_table_matches_default_wiring() -> None:
    config = config_module()
    wiring = config.DEFAULT_WIRING
    rows = seat_rows()
    assert [int(r["Seat"]) for r in rows] == list(range(1, 9))
    assert [(r["Name"], r["Colour"].strip("`")) for r in rows] == list(config.DEFAULT_SEATS)
    assert tuple(int(r["Slap BCM"]) for r in rows) == tuple(wiring.slap)
    doubles = [r["Double BCM"] for r in rows]
    assert tuple(int(d) for d in doubles[: len(wiring.double)]) == tuple(wiring.double)
    assert all(d == "—" for d in doubles[len(wiring.double):])
    assert [r["LED"] for r in rows] == [f"74HC595 Q{i}" for i in range(8)]


def test_judge_and_led_tables_match_default_wiring() -> None:
    wiring = config_module().DEFAULT_WIRING
    judge = {r["Key"].lower(): int(r["BCM"]) for r in table(["Key", "BCM", "Pin"])}
    assert judge == {k: getattr(wiring.judge, k) for k in ("yes", "no", "undo")}
    leds = {r["Signal"]: int(r["BCM"]) for r in table(["Signal", "BCM", "Pin", "74HC595 pin"])}
    assert leds == {k: getattr(wiring.leds, k) for k in ("data", "clock", "latch")}
    chip = {r["Signal"]: numbers(r["74HC595 pin"])[0] for r in table(["Signal", "BCM", "Pin"])}
    assert chip == {"data": 14, "clock": 11, "latch": 12}  # DS, SHCP, STCP


def test_wiring_md_covers_every_default_pin_once() -> None:
    rows = config_module().DEFAULT_WIRING.rows()
    documented = [int(r["Slap BCM"]) for r in seat_rows()]
    documented += [int(r["Double BCM"]) for r in seat_rows() if r["Double BCM"] != "—"]
    documented += [int(r["BCM"]) for r in table(["Key", "BCM", "Pin"])]
    documented += [int(r["BCM"]) for r in table(["Signal", "BCM", "Pin", "74HC595 pin"])]
    assert sorted(documented) == sorted(bcm for _, bcm in rows)
    assert len(set(documented)) == len(documented), "a pin is used twice"


# --------------------------------------------------------------------------------------------
# physical pin numbers


def documented_pairs() -> list[tuple[int, int, str]]:
    """(BCM, physical pin, where) for every pin wiring.md names."""
    pairs = []
    for r in seat_rows():
        pairs.append((int(r["Slap BCM"]), int(r["Slap pin"]), f"seat {r['Seat']} slap"))
        if r["Double BCM"] != "—":
            pairs.append((int(r["Double BCM"]), int(r["Double pin"]), f"seat {r['Seat']} double"))
    for r in table(["Key", "BCM", "Pin"]):
        pairs.append((int(r["BCM"]), int(r["Pin"]), f"judge {r['Key']}"))
    for r in table(["Signal", "BCM", "Pin", "74HC595 pin"]):
        pairs.append((int(r["BCM"]), int(r["Pin"]), f"LED {r['Signal']}"))
    for r in table(["BCM", "Pins", "Why it is not used"]):
        bcms, pins = numbers(r["BCM"]), numbers(r["Pins"])
        assert len(bcms) == len(pins), r
        pairs += [(b, p, "left free") for b, p in zip(bcms, pins, strict=True)]
    text = WIRING_MD.read_text(encoding="utf-8")
    for bcm, pin in re.findall(r"BCM (\d+) \(pin (\d+)\)", text):
        pairs.append((int(bcm), int(pin), "text"))
    for bcm, pin in re.findall(r"led = (\d+)` \(pin (\d+)\)", text):
        pairs.append((int(bcm), int(pin), "small build"))
    return pairs


def test_every_physical_pin_in_wiring_md_matches_the_header() -> None:
    pairs = documented_pairs()
    assert len(pairs) >= 8 + 4 + 3 + 3 + 10 + 4
    wrong = [(where, bcm, pin) for bcm, pin, where in pairs if PIN_OF_BCM[bcm] != pin]
    assert not wrong, f"BCM/physical pin mismatches (where, BCM, pin): {wrong}"


def test_power_and_ground_pins_in_wiring_md() -> None:
    rows = {r["What"].split(" (")[0]: numbers(r["Pins"]) for r in table(["What", "Pins"])}
    for label, function in (("Ground", "GND"), ("3.3 V", "3V3"), ("5 V", "5V")):
        assert rows[label] == [p for p, f in HEADER.items() if f == function], label


def test_no_reserved_pin_is_used() -> None:
    config = config_module()
    used = {bcm for _, bcm in config.DEFAULT_WIRING.rows()}
    assert not used & RESERVED
    assert {0, 1, 2, 3, 18, 19, 20, 21} <= set(config.RESERVED_PINS)
    free = {b for r in table(["BCM", "Pins", "Why it is not used"]) for b in numbers(r["BCM"])}
    assert free == RESERVED


# --------------------------------------------------------------------------------------------
# the example config


def test_example_config_is_the_default_config() -> None:
    config = config_module()
    loaded = config.load_config(EXAMPLE)
    default = config.default_config()
    assert loaded.seats == default.seats
    assert loaded.judge == default.judge == config.DEFAULT_WIRING.judge
    assert loaded.leds == default.leds == config.DEFAULT_WIRING.leds
    assert loaded.game == "spank-the-pig"
    assert loaded.db == "/var/lib/table-referee/referee.db"


def test_example_config_with_all_eight_seats(tmp_path: Path) -> None:
    config = config_module()
    full = tmp_path / "config.toml"
    full.write_text(uncomment_all_seats(EXAMPLE.read_text(encoding="utf-8")), encoding="utf-8")
    loaded = config.load_config(full)
    names = [name for name, _ in config.DEFAULT_SEATS]
    assert loaded.seats == config.default_config(names).seats
    assert tuple(s.slap for s in loaded.seats) == tuple(config.DEFAULT_WIRING.slap)


def test_example_config_has_the_documented_sections() -> None:
    data = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert set(data) == {"table", "seats", "judge", "leds", "options", "speech", "buttons"}
    assert set(data["table"]) == {"game", "host", "port", "db", "pin", "language"}
    assert all(set(s) <= {"name", "colour", "slap", "double", "led"} for s in data["seats"])


def test_example_config_pin_comments_match_the_header() -> None:
    found = 0
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#?\s*(\w+) = (\d+)\s+# pin (\d+)", line)
        if m:
            bcm, pin = int(m.group(2)), int(m.group(3))
            assert PIN_OF_BCM[bcm] == pin, f"{line!r}: BCM {bcm} is pin {PIN_OF_BCM[bcm]}"
            found += 1
    assert found == 8 + 4 + 3 + 3 + 1  # seats, doubles, judge, LED chain, its OE


# --------------------------------------------------------------------------------------------
# the diagram


def load_diagram() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_diagram", HARDWARE / "make_diagram.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_diagram_draws_the_default_wiring() -> None:
    config = config_module()
    diagram = load_diagram()
    wiring = config.DEFAULT_WIRING
    assert diagram.HEADER == HEADER
    assert tuple(diagram.SLAP) == tuple(wiring.slap)
    assert tuple(diagram.DOUBLE) == tuple(wiring.double)
    assert {k.lower(): v for k, v in diagram.JUDGE.items()} == {
        k: getattr(wiring.judge, k) for k in ("yes", "no", "undo")
    }
    assert diagram.LEDS == {k: getattr(wiring.leds, k) for k in ("data", "clock", "latch")}
    assert tuple(diagram.SEATS) == tuple(config.DEFAULT_SEATS)


def test_committed_svg_is_up_to_date() -> None:
    svg = (HARDWARE / "wiring.svg").read_text(encoding="utf-8")
    assert svg == load_diagram().build(), "run: python hardware/make_diagram.py (and the PNG)"
    assert (HARDWARE / "wiring.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "](hardware/wiring.png)" in WIRING_MD.read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------
# the service, the installer, the bill of materials


def test_service_unit() -> None:
    u = unit(SERVICE)
    assert u["Restart"] == ["on-failure"]
    assert u["NoNewPrivileges"] == ["true"]
    assert u["User"] == ["referee"], "the service runs under its own, non-root user"
    assert u["User"][0] not in ("root", "0")
    assert u["ProtectSystem"] == ["strict"]
    assert u["StateDirectory"] == ["table-referee"]
    assert set(u["SupplementaryGroups"][0].split()) == {"gpio", "audio"}
    assert u["After"] == ["sound.target"]  # never waits for a network an offline party lacks
    assert u["RestartPreventExitStatus"] == ["2"]  # a config mistake does not loop forever
    assert "GPIOZERO_PIN_FACTORY=lgpio" in u["Environment"]
    exec_start = u["ExecStart"][0].split()
    assert exec_start[:2] == ["/opt/table-referee/venv/bin/referee", "play"]
    assert exec_start[2:] == ["--config", "/etc/table-referee/config.toml"]
    assert u["WorkingDirectory"] == ["/var/lib/table-referee"]  # lgpio writes its pipes here
    assert "PrivateDevices" not in u, "the GPIO chip and sound card are devices"


def test_installer_paths_match_the_service_and_config() -> None:
    script = INSTALL.read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in script
    assert "readonly PREFIX=/opt/table-referee" in script
    assert 'readonly CONF="$CONF_DIR/config.toml"' in script
    assert "readonly CONF_DIR=/etc/table-referee" in script
    assert "readonly STATE_DIR=/var/lib/table-referee" in script
    assert "readonly ACCOUNT=referee" in script
    assert "--system-site-packages" in script
    for package in ("python3-venv", "python3-lgpio", "espeak-ng", "libportaudio2", "alsa-utils"):
        assert package in script
    assert 'pin = "4321"' in EXAMPLE.read_text(encoding="utf-8"), "install.sh replaces this PIN"


def test_installer_passes_shellcheck() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    result = subprocess.run(["shellcheck", str(INSTALL)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_installer_refuses_other_systems_politely(tmp_path: Path) -> None:
    os_release = tmp_path / "os-release"
    os_release.write_text('ID=fedora\nPRETTY_NAME="Fedora Linux 40"\n', encoding="utf-8")
    result = subprocess.run(
        ["bash", str(INSTALL), "--dry-run"],
        capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", "TABLE_REFEREE_OS_RELEASE": str(os_release)},
    )
    assert result.returncode == 1
    assert "sorry" in result.stderr and "Fedora Linux 40" in result.stderr
    assert "hardware/README.md" in result.stderr


def test_installer_rejects_unknown_options() -> None:
    result = subprocess.run(["bash", str(INSTALL), "--frobnicate"], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == "install.sh: unknown option '--frobnicate'; see --help"


def test_bill_of_materials() -> None:
    with (HARDWARE / "bom.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["part", "qty", "example", "part_number", "typical_price", "notes"]
    assert all(len(r) == 6 and r[0] and r[1] and r[2] and r[3] and r[4] for r in rows[1:])
    text = " ".join(r[2] for r in rows[1:])
    for part in ("74HC595", "ULN2803A", "arcade push button"):
        assert part in text
