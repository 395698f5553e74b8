"""`referee buttons` and `referee doctor` on gpiozero's real MockFactory and a real SQLite file.

The button check is driven through its ``on_prompt`` hook: for each asked button the test presses
the pin a (correctly or wrongly) wired box would, or nothing. Pins are the default wiring's.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from referee.capture.header import HEADER_PIN, nearest_ground
from referee.cli import doctor
from referee.cli.buttons import (
    Button,
    ButtonCheck,
    Report,
    configured_buttons,
    run_buttons,
)
from referee.config import DEFAULT_WIRING, SeatConfig, TableConfig, default_config
from referee.voice.announce import PrintAnnouncer

REFEREE = [sys.executable, "-m", "referee.cli.main"]
BLUE, RED, GREEN = 4, 17, 27  # default slap pins of seats 1-3
DATA, CLOCK, LATCH = 10, 11, 8


def tap(factory: MockFactory, bcm: int) -> None:
    time.sleep(0.006)  # two taps of one pin closer than the box's 5 ms debounce are one press
    pin = factory.pin(bcm)
    pin.drive_low()
    pin.drive_high()


def check(
    factory: MockFactory,
    answer: Callable[[Button], int | None],
    config: TableConfig | None = None,
    **kwargs: Any,
) -> tuple[Report, str]:
    """Run the check; ``answer(asked)`` gives the BCM pin the tester's press reaches (or None)."""
    def on_prompt(asked: Button) -> None:
        bcm = answer(asked)
        if bcm is not None:
            tap(factory, bcm)

    return check_by(factory, on_prompt, config, **kwargs)


def check_by(factory: MockFactory, on_prompt: Callable[[Button], None],
             config: TableConfig | None = None, **kwargs: Any) -> tuple[Report, str]:
    """Run the check; ``on_prompt(asked)`` presses what the tester presses (any pins, any number)."""
    out = io.StringIO()
    options: dict[str, Any] = {"seconds": 5.0, "prompt_s": 0.15, "led_s": 0.0, "linger_s": 0.0,
                               **kwargs}
    run = ButtonCheck(config or default_config(["Blue", "Red", "Green"]),
                      announcer=PrintAnnouncer(out), out=out, factory=factory,
                      on_prompt=on_prompt, **options)
    return run.run(), out.getvalue()


def correct(asked: Button) -> int:
    return asked.bcm


# ------------------------------------------------------------------------------------------------
# Button check


def test_every_button_pressed_in_order_passes_and_is_said(mock_factory: MockFactory) -> None:
    report, out = check(mock_factory, correct)
    assert report.ok and report.problems() == []
    assert report.seen == configured_buttons(default_config(["Blue", "Red", "Green"]))
    assert "Press each button in turn when asked: Blue slap, Blue double, Red slap" in out
    assert "Blue: slap (BCM 4, pin 7)" in out
    assert "» Blue, slap button." in out  # said through the announcer
    assert "Judge: undo (BCM 7, pin 26)" in out
    assert "Summary: 9 of 9 buttons seen." in out and "All buttons work." in out
    assert not report.timed_out


def test_run_buttons_exit_status_through_the_command(mock_factory: MockFactory,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    args = argparse.Namespace(config=None, mock=True, seats="Blue,Red", no_speech=True,
                              seconds=5.0)
    out = io.StringIO()
    assert run_buttons(args, out=out, on_prompt=lambda b: tap(mock_factory, b.bcm), led_s=0,
                       linger_s=0) == 0
    assert "Summary: 7 of 7 buttons seen." in out.getvalue()

    args.seconds = 0.1
    out = io.StringIO()
    assert run_buttons(args, out=out, on_prompt=lambda b: None, led_s=0) == 1
    assert "Summary: 0 of 7 buttons seen." in out.getvalue()


def test_a_button_never_pressed_is_reported_silent_with_its_physical_pin(
        mock_factory: MockFactory) -> None:
    report, out = check(mock_factory, lambda b: None if b.bcm == GREEN else b.bcm)
    assert [b.label for b in report.silent] == ["Green slap"]
    assert report.problems() == [
        "Green slap (BCM 27, pin 13): never pressed — check its wires: pin 13 to the button, the "
        "button to ground (e.g. pin 14); or the button is dead"]
    assert "no answer from Green slap; moving on" in out
    assert "FIX Green slap (BCM 27, pin 13): never pressed" in out
    assert "Green double" not in report.problems()[0]


def test_two_swapped_buttons_are_reported_as_a_pair(mock_factory: MockFactory) -> None:
    swap = {BLUE: RED, RED: BLUE}
    report, out = check(mock_factory, lambda b: swap.get(b.bcm, b.bcm))
    assert "you pressed Red slap when Blue slap was asked: swapped or miswired?" in out
    assert "you pressed Blue slap when Red slap was asked: swapped or miswired?" in out
    assert report.problems() == [
        "Blue slap (BCM 4, pin 7) and Red slap (BCM 17, pin 11) are swapped — swap their two "
        "wires at the header (or their pin numbers in the config)"]
    assert not report.silent


def test_a_wrong_answer_is_reported_and_the_check_stays_on_the_asked_button(
        mock_factory: MockFactory) -> None:
    # Blue slap's button is wired to Red slap's pin; Red slap's own button is fine.
    report, out = check(mock_factory, lambda b: RED if b.bcm == BLUE else b.bcm)
    assert report.swaps == [(Button("Blue", "slap", BLUE), Button("Red", "slap", RED))]
    problems = report.problems()
    assert any(p.startswith("Blue slap (BCM 4, pin 7): never pressed") for p in problems)
    assert ("you pressed Red slap when Blue slap was asked: swapped or miswired? — the button "
            "you pressed is wired to BCM 17, pin 11; Blue slap belongs on BCM 4, pin 7") in problems
    # Blue slap is asked again, and only its own time moves the check on to Blue double
    wrong = out.index("when Blue slap was asked")
    assert out.index("→ press Blue slap", wrong) < out.index("no answer from Blue slap; moving on")
    assert out.index("no answer from Blue slap; moving on") < out.index("→ press Blue double")
    assert "Red: slap (BCM 17, pin 11) again" in out and "   ok: Red slap" in out


def test_one_wrong_press_is_reported_once_and_every_later_prompt_is_answered(
        mock_factory: MockFactory) -> None:
    """A tester presses Red slap (twice) when Blue double is asked, then Blue double: one line
    says so, the check stays on Blue double, and every later button answers its own prompt."""
    def answer(asked: Button) -> None:
        if asked.label == "Blue double":
            tap(mock_factory, RED)
            tap(mock_factory, RED)
        tap(mock_factory, asked.bcm)

    report, text = check_by(mock_factory, answer, prompt_s=2.0)
    assert text.count("swapped or miswired?") == 1
    assert "you pressed Red slap when Blue double was asked: swapped or miswired?" in text
    buttons = configured_buttons(default_config(["Blue", "Red", "Green"]))
    assert report.answered == buttons and text.count("   ok: ") == len(buttons)
    assert "no answer" not in text and not report.timed_out
    assert report.ok and "All buttons work." in text  # a slip of the hand is not the wiring


def test_a_button_proven_already_is_echoed_and_the_asked_one_stays_asked(
        mock_factory: MockFactory) -> None:
    def answer(asked: Button) -> None:
        if asked.label == "Red slap":
            tap(mock_factory, BLUE)
        tap(mock_factory, asked.bcm)

    report, out = check_by(mock_factory, answer, prompt_s=2.0)
    assert "Blue slap works already (checked above)" in out
    assert report.ok and report.swaps == []


def test_the_voice_asks_for_the_button_the_screen_asks_for_at_the_same_step(
        mock_factory: MockFactory) -> None:
    def answer(asked: Button) -> None:
        if asked.label == "Blue double":
            tap(mock_factory, RED)  # a wrong press: both ask for Blue double again
        tap(mock_factory, asked.bcm)

    report, out = check_by(mock_factory, answer, prompt_s=2.0)
    lines = out.splitlines()
    prompts = [i for i, line in enumerate(lines) if line.startswith("→ press ")]
    assert len(prompts) == 10  # nine buttons, Blue double twice
    for i in prompts:
        label = lines[i].removeprefix("→ press ")
        seat, button = label.rsplit(" ", 1)
        assert lines[i + 1] == f"  » Press {seat} {button.lower()}.", lines[i:i + 2]
    # a press is said as what it reached, never in the asking words, and before the next ask
    i = lines.index("Red: slap (BCM 17, pin 11)")
    assert lines[i + 1] == "  » Red, slap button."
    assert lines[i + 2].startswith("   you pressed Red slap when Blue double was asked")
    assert lines[i + 3:i + 5] == ["→ press Blue double", "  » Press Blue double."]
    assert report.ok


def test_a_button_held_at_start_is_stuck_never_asked_and_the_check_ends(
        mock_factory: MockFactory) -> None:
    mock_factory.pin(BLUE).closed = True  # held shut before the box opens
    asked: list[str] = []

    def answer(b: Button) -> int:
        asked.append(b.label)
        return b.bcm

    report, out = check(mock_factory, answer)
    assert report.stuck_at_start == [Button("Blue", "slap", BLUE)]
    assert "Blue slap" not in asked and len(asked) == 8
    assert not report.silent and not report.timed_out
    assert "Blue slap (BCM 4, pin 7) is held down as the check starts" in out
    assert "» Blue's slap button is stuck." in out
    assert report.problems()[0].startswith(
        "Blue slap (BCM 4, pin 7): held down when the check started — free the button")


def test_a_stuck_button_is_asked_for_once_released(mock_factory: MockFactory) -> None:
    blue = mock_factory.pin(BLUE)
    blue.closed = True
    asked: list[str] = []

    def answer(b: Button) -> int:
        asked.append(b.label)
        if b.label == "Red slap":
            blue.closed = False
            blue.drive_high()  # let go
        return b.bcm

    report, out = check(mock_factory, answer)
    assert asked[:3] == ["Blue double", "Red slap", "Blue slap"] and "Blue slap released" in out
    assert Button("Blue", "slap", BLUE) in report.seen
    assert not report.ok  # it was still held at start: reported


def test_a_button_held_too_long_is_reported(mock_factory: MockFactory) -> None:
    blue = mock_factory.pin(BLUE)

    def answer(b: Button) -> int | None:
        if b.label == "Blue slap":
            blue.drive_low()  # and keep holding it
            return None
        if b.label == "Blue double":
            def later() -> None:
                blue.drive_high()
                tap(mock_factory, b.bcm)
            threading.Timer(0.3, later).start()
            return None
        return b.bcm

    report, out = check(mock_factory, answer, prompt_s=2.0, stuck_after_s=0.1)
    assert report.held_long == [Button("Blue", "slap", BLUE)]
    assert "has been held down for more than 0.1 s: stuck?" in out
    assert "Blue slap released" in out
    assert report.problems() == [
        "Blue slap (BCM 4, pin 7): held down for more than 0.1 s — free the button or replace it"]


def test_time_limit_ends_the_check(mock_factory: MockFactory) -> None:
    report, out = check(mock_factory, lambda b: None, seconds=0.1, prompt_s=5.0)
    assert report.timed_out and "Time is up (0.1 s)." in out
    assert len(report.silent) == 9


def test_seat_leds_on_their_own_pins_are_lit_in_turn(mock_factory: MockFactory) -> None:
    config = TableConfig(seats=(SeatConfig("Blue", "#1f6feb", slap=BLUE, led=5),
                                SeatConfig("Red", "#d1242f", slap=RED, led=6)))
    report, out = check(mock_factory, correct, config=config)
    assert report.ok and report.leds == ["Blue", "Red"]
    changes = sorted([(seq, bcm, level) for bcm in (5, 6)
                      for seq, level in mock_factory.pin(bcm).history])
    lit = [(bcm, level) for _, bcm, level in changes]
    assert lit[:4] == [(5, True), (5, False), (6, True), (6, False)]
    assert "LED: Blue lit (LED on BCM 5, pin 29)" in out


def latched(factory: MockFactory) -> list[int]:
    """The 74HC595's outputs after every latch pulse, decoded from the three pins' histories."""
    merged = sorted((seq, bcm, level) for bcm in (DATA, CLOCK, LATCH)
                    for seq, level in factory.pin(bcm).history)
    data, register, outputs = False, 0, []
    for _, bcm, level in merged:
        if bcm == DATA:
            data = level
        elif bcm == CLOCK and level:
            register = ((register << 1) | data) & 0xFF
        elif bcm == LATCH and level:
            outputs.append(register)
    return [v for i, v in enumerate(outputs) if i == 0 or outputs[i - 1] != v]


def test_chain_leds_are_lit_one_seat_at_a_time(mock_factory: MockFactory) -> None:
    report, out = check(mock_factory, lambda b: None, config=default_config(), seconds=0.05)
    assert report.leds == ["Blue", "Red", "Green", "Yellow"]
    assert latched(mock_factory) == [0, 0b0001, 0, 0b0010, 0, 0b0100, 0, 0b1000, 0]
    assert "LED: Yellow lit (74HC595 output Q3)" in out


def test_header_map_and_ground_pins() -> None:
    assert sorted(HEADER_PIN.values()) == sorted(
        {p for p in range(1, 41)} - {1, 2, 4, 6, 9, 14, 17, 20, 25, 30, 34, 39})
    assert [HEADER_PIN[b] for b in DEFAULT_WIRING.slap] == [7, 11, 13, 15, 29, 31, 33, 37]
    assert nearest_ground(7) == 9 and nearest_ground(40) == 39 and nearest_ground(16) == 14


def test_buttons_command_end_to_end_on_mocked_pins() -> None:
    result = subprocess.run([*REFEREE, "buttons", "--mock", "--no-speech", "--seats", "Blue",
                             "--seconds", "0.2"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "LED: Blue lit (74HC595 output Q0)" in result.stdout
    assert "FIX Blue slap (BCM 4, pin 7): never pressed" in result.stdout


# ------------------------------------------------------------------------------------------------
# Doctor

SECTIONS = ("config", "pin factory", "GPIO access", "Pi model", "button Blue slap",
            "LED chain latch", "audio output", "espeak-ng", "pyttsx3", "database", "scoreboard")


def check_lines(text: str) -> list[str]:
    lines = text.strip().splitlines()
    assert lines, "no output"
    for line in lines[:-1]:
        assert line.startswith(("ok  ", "FIX ")), line
    return lines


def free_port(host: str = "127.0.0.1") -> int:
    """A port the doctor will find free on `host`, checked the way the doctor (and waitress)
    use it. It is taken below the kernel's ephemeral range, so no other program's outgoing
    connection can take it in the meantime: a port free on 127.0.0.1 may be busy on 0.0.0.0,
    and a port from bind(0) is one the kernel hands out again at once."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    for _ in range(100):
        port = rng.randrange(20_000, min(low, 32_768))
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
                s.listen()
            except OSError:
                continue
            return port
    raise AssertionError("no free port below the ephemeral range")


def quiet_speech(monkeypatch: pytest.MonkeyPatch, devices: list[str] | None = None,
                 cards: list[str] | None = None) -> None:
    monkeypatch.setattr(doctor.Doctor, "_describe_announcer",
                        lambda self: ("no speech: phrases are printed", ""))
    monkeypatch.setattr(doctor, "sound_devices", lambda: devices or [])
    monkeypatch.setattr(doctor, "alsa_cards", lambda: cards or [])


def run_doctor(db: Path, config: Path | None = None) -> tuple[int, str]:
    out = io.StringIO()
    args = argparse.Namespace(config=str(config) if config else None, mock=True, db=str(db))
    return doctor.run_doctor(args, out=out), out.getvalue()


def test_doctor_command_end_to_end(tmp_path: Path) -> None:
    from referee.store.database import connect

    db = tmp_path / "sub" / "referee.db"
    connect(db).close()  # the referee made it (the doctor never does: see below)
    result = subprocess.run([*REFEREE, "doctor", "--mock", "--db", str(db)], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "XDG_DATA_HOME": str(tmp_path)})
    assert "Traceback" not in result.stderr
    lines = check_lines(result.stdout)
    for section in SECTIONS:
        assert any(line[4:].startswith(section + ":") for line in lines), section
    assert f"ok  database: {db} (WAL, writable, 0 games)" in lines
    assert any(line.startswith("ok  pin factory: MockFactory (--mock)") for line in lines)
    assert sorted(p.name for p in db.parent.iterdir()) == ["referee.db"]  # nothing left beside it
    assert result.returncode == (1 if any(line.startswith("FIX") for line in lines) else 0)


def test_doctor_in_process_all_ok(mock_factory: MockFactory, monkeypatch: pytest.MonkeyPatch,
                                  tmp_path: Path) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    quiet_speech(monkeypatch, devices=["USB Audio"])
    monkeypatch.setattr(doctor.Doctor, "check_espeak", lambda self: [doctor.ok("espeak-ng", "1")])
    monkeypatch.setattr(doctor.Doctor, "check_pyttsx3", lambda self: [doctor.ok("pyttsx3", "2")])
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nport = {free_port()}\n[[seats]]\nname = "Blue"\nslap = 4\n'
                      '[[seats]]\nname = "Red"\nslap = 17\nled = 5\n')
    status, out = run_doctor(tmp_path / "r.db", config)
    lines = check_lines(out)
    assert status == 0, out
    assert lines[-1] == f"All {len(lines) - 1} checks ok."
    assert "ok  button Red slap: BCM 17, pin 11, released" in lines
    assert "ok  Red LED: BCM 5, pin 29, off" in lines
    assert "ok  audio output: no speech: phrases are printed" in lines


def test_doctor_reports_a_stuck_pin_and_no_sound_card(
        mock_factory: MockFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    quiet_speech(monkeypatch, devices=[])
    mock_factory.pin(RED).closed = True
    status, out = run_doctor(tmp_path / "r.db")
    assert status == 1
    stuck = [line for line in out.splitlines() if line.startswith("FIX button Red slap:")]
    assert stuck == ["FIX button Red slap: BCM 17, pin 11 reads pressed at rest: free the stuck "
                     "button, or fix the wiring — pin 11 to the microswitch's COM tab, its NO "
                     "(normally open) tab to ground (e.g. pin 9); leave NC free, never wire the "
                     "pin straight to ground"]
    assert "ok  button Blue slap: BCM 4, pin 7, released" in out
    assert "FIX audio output: no sound card (no speech: phrases are printed): phrases will be " \
           "printed; plug a speaker" in out

    quiet_speech(monkeypatch, devices=[], cards=["0 [Headphones ]: bcm2835_headpho"])
    _, out = run_doctor(tmp_path / "r.db")
    assert "FIX audio output: the sound card (0 [Headphones ]: bcm2835_headpho) is not usable " \
           "from Python (no speech: phrases are printed): sudo apt install libportaudio2" in out


def test_doctor_bad_config_unwritable_db_and_open_scoreboard(
        mock_factory: MockFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    quiet_speech(monkeypatch)
    bad = tmp_path / "bad.toml"
    bad.write_text('[[seats]]\nname = "Blue"\nslap = 4\n[[seats]]\nname = "Red"\nslap = 4\n')
    blocker = tmp_path / "file"
    blocker.write_text("")
    status, out = run_doctor(blocker / "r.db", bad)
    assert status == 1
    assert "FIX config: pin 4 is used by both Blue (slap) and Red (slap)" in out
    assert "ok  button Blue slap: BCM 4, pin 7, released" in out  # default wiring meanwhile
    assert f"FIX database: {blocker / 'r.db'} cannot be opened" in out

    open_cfg = tmp_path / "open.toml"
    open_cfg.write_text('[table]\nhost = "0.0.0.0"\n[[seats]]\nname = "Blue"\nslap = 4\n')
    _, out = run_doctor(tmp_path / "r.db", open_cfg)
    assert ("FIX scoreboard: 0.0.0.0:8000 is open to the whole network without a PIN: set "
            'pin = "NNNN" in [table] (or start with --pin NNNN)') in out
    open_cfg.write_text(f'[table]\nhost = "0.0.0.0"\npin = "1234"\nport = {free_port("0.0.0.0")}\n'
                        '[[seats]]\nname = "Blue"\nslap = 4\n')
    _, out = run_doctor(tmp_path / "r.db", open_cfg)
    assert "ok  scoreboard: http://0.0.0.0:" in out


def test_doctor_port_in_use(mock_factory: MockFactory, monkeypatch: pytest.MonkeyPatch,
                            tmp_path: Path) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    quiet_speech(monkeypatch)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cfg = tmp_path / "t.toml"
        cfg.write_text(f'[table]\nport = {port}\n[[seats]]\nname = "Blue"\nslap = 4\n')
        _, out = run_doctor(tmp_path / "r.db", cfg)
    assert f"FIX scoreboard: 127.0.0.1:{port} is already in use" in out


def test_doctor_checks_the_address_it_will_serve_on(mock_factory: MockFactory,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    """A port can be free on 127.0.0.1 and busy on 0.0.0.0 (here: a connection from 127.0.0.2
    holds it). The doctor checks the host and port the scoreboard will really use (the old suite
    took its "free" port from 127.0.0.1 and then had the doctor check 0.0.0.0: it failed whenever
    another program's connection held that port)."""
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    quiet_speech(monkeypatch)
    with socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen()
        client.bind(("127.0.0.2", 0))
        client.connect(server.getsockname())
        port = client.getsockname()[1]
        cfg = tmp_path / "t.toml"
        seat = '[[seats]]\nname = "Blue"\nslap = 4\n'
        cfg.write_text(f'[table]\nport = {port}\n{seat}')
        _, out = run_doctor(tmp_path / "r.db", cfg)
        assert f"ok  scoreboard: http://127.0.0.1:{port}/" in out
        cfg.write_text(f'[table]\nhost = "0.0.0.0"\npin = "1234"\nport = {port}\n{seat}')
        _, out = run_doctor(tmp_path / "r.db", cfg)
        assert f"FIX scoreboard: 0.0.0.0:{port} is already in use" in out


def make_doctor(**attrs: Any) -> doctor.Doctor:
    d = doctor.Doctor(argparse.Namespace(config=None, mock=False, db=None), io.StringIO())
    for key, value in attrs.items():
        setattr(d, key, value)
    return d


def texts(lines: Iterable[doctor.Line]) -> list[str]:
    return [str(line) for line in lines]


def test_doctor_pi5_needs_lgpio_not_rpigpio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    monkeypatch.setattr(doctor, "MODEL_FILE", model)
    assert doctor.pi_model() == "Raspberry Pi 5 Model B Rev 1.0"

    class RPiGPIOFactory:
        pass

    d = make_doctor(model=doctor.pi_model(), factory=RPiGPIOFactory())
    assert texts(d.check_pi_model()) == [
        "FIX Pi model: Raspberry Pi 5 Model B Rev 1.0: RPi.GPIO does not work on a Pi 5: sudo apt "
        "install python3-lgpio and set GPIOZERO_PIN_FACTORY=lgpio"]
    model.write_bytes(b"Raspberry Pi 4 Model B Rev 1.4\x00")
    assert texts(make_doctor(model=doctor.pi_model()).check_pi_model()) == [
        "ok  Pi model: Raspberry Pi 4 Model B Rev 1.4"]
    monkeypatch.setattr(doctor, "MODEL_FILE", tmp_path / "absent")
    assert doctor.pi_model() is None
    assert texts(make_doctor().check_pi_model())[0].startswith("ok  Pi model: not a Raspberry Pi")


def test_doctor_gpio_access(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "gpiochip0").write_text("")
    monkeypatch.setattr(doctor, "GPIOCHIP_GLOB", str(tmp_path / "gpiochip*"))
    pi = "Raspberry Pi 4 Model B"
    assert texts(make_doctor(model=pi).check_gpio_access())[0].startswith(
        f"ok  GPIO access: {tmp_path / 'gpiochip0'} readable and writable")
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    monkeypatch.setattr(doctor, "_in_group", lambda name: False)
    assert texts(make_doctor(model=pi).check_gpio_access()) == [
        f"FIX GPIO access: {tmp_path / 'gpiochip0'} not readable by this user: sudo usermod -aG "
        "gpio $USER, then log out and in"]
    monkeypatch.setattr(doctor, "GPIOCHIP_GLOB", str(tmp_path / "none*"))
    assert texts(make_doctor().check_gpio_access())[0].startswith(
        "FIX GPIO access: not a Raspberry Pi (no /dev/gpiochip*): run this on the Pi, or use --mock")


def test_doctor_speech_tools_and_a_broken_check(mock_factory: MockFactory,
                                                monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    espeak = texts(make_doctor().check_espeak())
    assert espeak[0].startswith(("ok  espeak-ng: ", "FIX espeak-ng: not installed"))
    monkeypatch.setattr(doctor, "_PYTTSX3_PROBE", "import time; time.sleep(5)")
    monkeypatch.setattr(doctor, "PYTTSX3_TIMEOUT_S", 0.2)
    pyttsx3 = texts(make_doctor().check_pyttsx3())
    # pyttsx3 is a dependency of the package: it is installed wherever the suite runs
    assert pyttsx3[0].startswith("FIX pyttsx3: ") and "init hangs (> 0.2 s)" in pyttsx3[0]
    monkeypatch.setattr(doctor, "_PYTTSX3_PROBE", "raise SystemExit('no espeak library')")
    assert "init fails (no espeak library)" in texts(make_doctor().check_pyttsx3())[0]

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    quiet_speech(monkeypatch)

    def broken(self: doctor.Doctor) -> list[doctor.Line]:
        raise RuntimeError("boom")

    monkeypatch.setattr(doctor.Doctor, "check_scoreboard", broken)
    status, out = run_doctor(tmp_path / "r.db")
    assert status == 1
    assert "FIX scoreboard: the check itself failed (RuntimeError: boom)" in out
