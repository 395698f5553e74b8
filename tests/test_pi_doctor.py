"""`referee doctor` on a Raspberry Pi it cannot see: a fake device tree (model, fitted HAT), a fake
/proc/asound/cards, a fake vcgencmd, a fake lgpio that makes its FIFO in the current directory
at import as the real one does, and the test doubles of gpiozero's factories."""

from __future__ import annotations

import argparse
import grp
import io
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.exc import GPIOPinInUse
from gpiozero.pins.mock import MockFactory as GpiozeroMockFactory

from referee.cli import doctor
from tests.pinfactories import RPiGPIOFactory
from tests.unprivileged import as_nobody

REPO = Path(__file__).resolve().parent.parent
PI5 = "Raspberry Pi 5 Model B Rev 1.0"
PI4 = "Raspberry Pi 4 Model B Rev 1.4"


def fake_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str,
            hat: tuple[str, str] | None = None) -> None:
    model_file = tmp_path / "dt" / "model"
    model_file.parent.mkdir(exist_ok=True)
    model_file.write_bytes(model.encode() + b"\0")
    monkeypatch.setattr(doctor, "MODEL_FILE", model_file)
    hat_dir = tmp_path / "dt" / "hat"
    if hat is not None:
        hat_dir.mkdir(exist_ok=True)
        (hat_dir / "product").write_bytes(hat[0].encode() + b"\0")
        (hat_dir / "vendor").write_bytes(hat[1].encode() + b"\0")
    monkeypatch.setattr(doctor, "HAT_DIR", hat_dir)
    monkeypatch.setattr(doctor, "VCGENCMD", "vcgencmd-not-here")
    monkeypatch.setattr(doctor.Doctor, "check_espeak", lambda self: [doctor.ok("espeak-ng", "1")])
    monkeypatch.setattr(doctor.Doctor, "check_pyttsx3", lambda self: [doctor.ok("pyttsx3", "2")])


def quiet_speech(monkeypatch: pytest.MonkeyPatch, devices: list[str], cards: list[str],
                 described: str = "sound device via PortAudio", health: dict | None = None) -> None:
    def describe(self: doctor.Doctor) -> tuple[str, str]:
        self.audio_health = health or {}
        return described, ""

    monkeypatch.setattr(doctor.Doctor, "_describe_announcer", describe)
    monkeypatch.setattr(doctor, "sound_devices", lambda: devices)
    monkeypatch.setattr(doctor, "alsa_cards", lambda: cards)
    monkeypatch.setattr(doctor, "ASOUND_CONFS", ())


def run(tmp_path: Path, config: Path | None = None, mock: bool = True) -> str:
    out = io.StringIO()
    args = argparse.Namespace(config=str(config) if config else None, mock=mock,
                              db=str(tmp_path / "r.db"))
    doctor.run_doctor(args, out=out)
    return out.getvalue()


def fix_lines(out: str, what: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(f"FIX {what}:")]


# -- the fitted HAT ------------------------------------------------------------------------------


def test_a_digiamp_hat_refuses_yellows_slap_on_its_mute_pin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_factory: GpiozeroMockFactory) -> None:
    fake_pi(tmp_path, monkeypatch, PI4, hat=("Raspberry Pi DigiAMP+", "Raspberry Pi Ltd"))
    quiet_speech(monkeypatch, [], [])
    out = run(tmp_path)
    ir, line = fix_lines(out, "HAT")
    assert "BCM 25, pin 22 is used by the optional IR receiver" in ir and "Green (double)" in ir
    assert line.startswith("FIX HAT: BCM 22, pin 15 is used by the DigiAMP+ amplifier mute on "
                           "the fitted HAT Raspberry Pi DigiAMP+ (Raspberry Pi Ltd), but the "
                           "config gives it to Yellow (slap): move Yellow (slap) to a HAT-safe "
                           "pin, e.g. BCM ")


def test_a_codec_zero_clashes_with_the_doubles_and_greens_slap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_factory: GpiozeroMockFactory) -> None:
    fake_pi(tmp_path, monkeypatch, PI5, hat=("Raspberry Pi Codec Zero", "Raspberry Pi Ltd"))
    quiet_speech(monkeypatch, [], [])
    lines = fix_lines(run(tmp_path), "HAT")
    named = {re.search(r"config gives it to ([^:]+):", line).group(1) for line in lines}  # type: ignore[union-attr]
    assert named == {"Blue (double)", "Red (double)", "Green (double)", "Green (slap)"}
    offered = [int(m) for line in lines for m in re.findall(r"e\.g\. BCM (\d+)", line)]
    assert len(set(offered)) == len(offered)  # a different free pin for each
    assert not set(offered) & {4, 17, 27, 22, 12, 16, 9, 7, 10, 11, 8, 23, 24, 25}


def test_no_hat_no_line_about_it_off_a_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          mock_factory: GpiozeroMockFactory) -> None:
    monkeypatch.setattr(doctor, "MODEL_FILE", tmp_path / "nothing")
    monkeypatch.setattr(doctor, "HAT_DIR", tmp_path / "nothing")
    quiet_speech(monkeypatch, [], [])
    assert "HAT:" not in run(tmp_path)


def test_a_busy_pin_is_named_with_its_real_owner(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class MockFactory(GpiozeroMockFactory):  # gpiozero's mock, but GPIO22 is claimed by a driver
        def pin(self, name, pin_class=None, **kwargs):  # type: ignore[no-untyped-def]
            if str(name) in ("22", "GPIO22"):
                raise GPIOPinInUse("GPIO22: 'GPIO busy'")
            return super().pin(name, pin_class, **kwargs)

    fake_pi(tmp_path, monkeypatch, PI4, hat=("Raspberry Pi DigiAMP+", "Raspberry Pi Ltd"))
    quiet_speech(monkeypatch, [], [])
    previous = Device.pin_factory
    Device.pin_factory = factory = MockFactory()
    try:
        out = run(tmp_path, mock=False)
    finally:
        factory.close()
        Device.pin_factory = previous
    (line,) = fix_lines(out, "pins")
    assert line == ("FIX pins: BCM 22, pin 15 for Yellow slap is busy: the DigiAMP+ amplifier "
                    "mute on the fitted HAT Raspberry Pi DigiAMP+ (Raspberry Pi Ltd); give it "
                    "another pin (wiring.md, HAT-safe pin map)")


# -- sound ------------------------------------------------------------------------------------------

PI5_CARDS = ["0 [vc4hdmi0 ]: vc4-hdmi - vc4-hdmi-0", "1 [vc4hdmi1 ]: vc4-hdmi - vc4-hdmi-1",
             "2 [Device ]: USB-Audio - USB Audio Device"]


def test_hdmi_as_default_with_a_usb_speaker_there_is_a_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_factory: GpiozeroMockFactory) -> None:
    fake_pi(tmp_path, monkeypatch, PI5)
    quiet_speech(monkeypatch, ["vc4-hdmi-0", "USB Audio Device: - (hw:2,0)"], PI5_CARDS)
    (line,) = fix_lines(run(tmp_path), "audio output")
    assert line.startswith("FIX audio output: ALSA's default sound card is HDMI (vc4-hdmi-0) "
                           "although 'USB Audio Device' is there: set device = \"USB Audio "
                           "Device\" under [speech]")
    # Named in the config: nothing to fix.
    config = tmp_path / "c.toml"
    config.write_text((REPO / "hardware/config.example.toml").read_text()
                      .replace("[speech]", '[speech]\ndevice = "USB"', 1))
    assert fix_lines(run(tmp_path, config), "audio output") == []
    # Made the system default by install.sh (/etc/asound.conf): nothing to fix either.
    conf = tmp_path / "asound.conf"
    conf.write_text('defaults.pcm.card "Device"\ndefaults.ctl.card "Device"\n')
    monkeypatch.setattr(doctor, "ASOUND_CONFS", (conf,))
    assert fix_lines(run(tmp_path), "audio output") == []


@pytest.mark.parametrize("model", [PI5, "Raspberry Pi Zero 2 W Rev 1.0"])
def test_no_jack_is_ever_suggested_on_a_pi_without_one(
        model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        mock_factory: GpiozeroMockFactory) -> None:
    fake_pi(tmp_path, monkeypatch, model)
    quiet_speech(monkeypatch, [], [])
    (line,) = fix_lines(run(tmp_path), "audio output")
    assert "3.5 mm jack:" in line and "has no 3.5 mm jack" in line and "USB speaker" in line
    assert "into the 3.5 mm jack" not in line


def test_underruns_are_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             mock_factory: GpiozeroMockFactory) -> None:
    fake_pi(tmp_path, monkeypatch, PI4)
    quiet_speech(monkeypatch, ["Headphones"], ["0 [Headphones ]: bcm2835_headpho - bcm2835 "
                                               "Headphones"], health={"underruns": 0})
    assert "ok  audio output: sound device via PortAudio; no underruns" in run(tmp_path)
    quiet_speech(monkeypatch, ["Headphones"], [], health={"underruns": 4})
    (line,) = fix_lines(run(tmp_path), "audio output")
    assert "4 underruns while checking" in line


# -- power -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer, says", [
    ("throttled=0x0", "ok  power: no under-voltage or throttling since boot"),
    ("throttled=0x50005", "FIX power: under-voltage now, throttled now, under-voltage since "
                          "boot, throttled since boot (get_throttled=0x50005): use the official "
                          "power supply"),
    ("throttled=0x80000", "FIX power: soft temperature limit reached since boot"),
])
def test_under_voltage_and_throttling(answer: str, says: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      mock_factory: GpiozeroMockFactory) -> None:
    fake_pi(tmp_path, monkeypatch, PI4)
    quiet_speech(monkeypatch, [], [])
    tool = tmp_path / "bin" / "vcgencmd"
    tool.parent.mkdir()
    tool.write_text(f"#!/bin/sh\n[ \"$1\" = get_throttled ] && echo {answer}\n")
    tool.chmod(0o755)
    monkeypatch.setattr(doctor, "VCGENCMD", str(tool))
    assert says in run(tmp_path)


# The doctor as the service user: not in the video group, so vcgencmd cannot open /dev/vcio
# (root:video 0660 on Raspberry Pi OS) and prints its complaint instead of throttled=0x...
NO_VIDEO = """
import argparse, io, sys
from pathlib import Path
from referee.cli import doctor
doctor.VCGENCMD, doctor.VCIO = sys.argv[1], Path(sys.argv[2])
d = doctor.Doctor(argparse.Namespace(config=None, mock=True, db=None), io.StringIO())
d.model = "Raspberry Pi 4 Model B Rev 1.4"
for line in d.check_power():
    print(line)
"""


def test_throttling_unreadable_without_the_video_group_says_so(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root, to make a root:video device stand-in")
    top = Path(tempfile.mkdtemp(prefix="referee-vcio-"))  # nobody must reach it
    try:
        top.chmod(0o755)
        tool, vcio = top / "vcgencmd", top / "vcio"
        tool.write_text('#!/bin/sh\n[ -r "$VCIO" ] && [ -w "$VCIO" ] && echo throttled=0x0 && '
                        'exit 0\necho "Can\'t open device file: $VCIO" >&2\nexit 255\n')
        tool.chmod(0o755)
        vcio.touch()
        os.chown(vcio, 0, grp.getgrnam("video").gr_gid)
        vcio.chmod(0o660)
        env = {**os.environ, "PYTHONPATH": str(REPO), "VCIO": str(vcio)}
        done = subprocess.run([*as_nobody(), sys.executable, "-c", NO_VIDEO, str(tool), str(vcio)],
                              cwd="/", env=env, capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == (
            f"ok  power: not checked: this user may not open {vcio} (the video group's), so "
            "vcgencmd cannot ask the firmware: run sudo referee doctor, or add the user to the "
            "video group (sudo usermod -aG video USER, then log in again)"), done.stderr
        # in the video group, the same tool answers
        video = ["setpriv", "--reuid=65534", "--regid=65534",
                 f"--groups={grp.getgrnam('video').gr_gid}"] + as_nobody()[4:]
        done = subprocess.run([*video, sys.executable, "-c", NO_VIDEO, str(tool), str(vcio)],
                              cwd="/", env=env, capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "ok  power: no under-voltage or throttling since boot", \
            done.stderr
    finally:
        shutil.rmtree(top, ignore_errors=True)


# -- who holds a pin -----------------------------------------------------------------------------


def test_a_line_labelled_lg_is_another_referee(monkeypatch: pytest.MonkeyPatch) -> None:
    """lg names every line it claims "lg" (lgGpiochipOpen sets the chip's userLabel to "lg";
    xClaim copies it into the request's consumer_label), whatever the program: a busy pin
    labelled so is most likely the referee service."""
    from referee.capture import lineinfo

    monkeypatch.setattr(doctor, "fitted_hat", lambda: None)
    d = doctor.Doctor(argparse.Namespace(config=None, mock=True, db=None), io.StringIO())
    for label, referee in (("lg", True), ("lgpio", True), ("mute", False)):
        monkeypatch.setattr(lineinfo, "line_info", lambda bcm, chip=None, label=label:
                            lineinfo.LineInfo("GPIO17", label, True, False))
        said = d._pin_owner(17)
        assert said.startswith(f"the kernel says {label!r} holds it"), said
        assert ("another referee? sudo systemctl stop table-referee" in said) is referee


# -- the database: checked, never created --------------------------------------------------------


def test_the_doctor_creates_no_database_and_no_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_factory: GpiozeroMockFactory) -> None:
    fake_pi(tmp_path, monkeypatch, PI4)
    quiet_speech(monkeypatch, [], [])
    db = tmp_path / "state" / "table-referee" / "referee.db"
    out = io.StringIO()
    doctor.run_doctor(argparse.Namespace(config=None, mock=True, db=str(db)), out=out)
    assert (f"ok  database: {db} not created yet: the referee creates it at its first start "
            "(this user may)") in out.getvalue().splitlines()
    assert not (tmp_path / "state").exists()


def test_the_doctor_as_root_leaves_no_file_beside_the_service_users_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_factory: GpiozeroMockFactory) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    from referee.store.database import connect

    fake_pi(tmp_path, monkeypatch, PI4)
    quiet_speech(monkeypatch, [], [])
    state = tmp_path / "state"
    state.mkdir()
    db = state / "referee.db"
    connect(db).close()
    for p in (state, db):
        os.chown(p, 65534, 65534)
    out = io.StringIO()
    doctor.run_doctor(argparse.Namespace(config=None, mock=True, db=str(db)), out=out)
    assert (f"ok  database: {db} (nobody's, 0 games; read only, so that root leaves no file "
            "beside it: run the doctor as nobody to check writing)") in out.getvalue()
    assert [p.name for p in state.iterdir()] == ["referee.db"]


# -- edge timing and lgpio ---------------------------------------------------------------------------


def test_a_factory_without_edge_times_is_a_fix_unless_allowed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_pi(tmp_path, monkeypatch, PI4)
    quiet_speech(monkeypatch, [], [])
    previous = Device.pin_factory
    Device.pin_factory = factory = RPiGPIOFactory()
    try:
        (line,) = fix_lines(run(tmp_path, mock=False), "pin factory")
        assert "RPi.GPIO passes no edge time" in line and "python3-lgpio" in line
        config = tmp_path / "c.toml"
        example = (REPO / "hardware/config.example.toml").read_text()
        assert "untimed_edges = false" in example
        config.write_text(example.replace("untimed_edges = false", "untimed_edges = true"))
        out = run(tmp_path, config, mock=False)
        assert fix_lines(out, "pin factory") == []
        assert "allowed by untimed_edges in [buttons]" in out
    finally:
        factory.close()
        Device.pin_factory = previous


FAKE_LGPIO = '''\
"""Stand-in for lgpio.py: at import it makes its notification FIFO in the current directory."""
import os
log = os.environ["FAKE_LGPIO_LOG"]
try:
    if os.environ.get("FAKE_LGPIO_DENY"):
        raise PermissionError(13, "Permission denied", ".lgd-nfy0")
    if os.path.exists(".lgd-nfy0"):
        os.remove(".lgd-nfy0")
    os.mkfifo(".lgd-nfy0")
except OSError as exc:
    with open(log, "a") as f:
        f.write(f"failed in {os.getcwd()}: {exc}\\n")
    raise
with open(log, "a") as f:
    f.write(f"fifo in {os.getcwd()}\\n")
raise ImportError("stand-in lgpio: no GPIO chip on this machine")
'''


def test_lgpio_is_imported_from_a_writable_directory_whatever_the_cwd() -> None:
    # Not pytest's tmp_path: the unprivileged user the referee runs as must reach these.
    tmp_path = Path(tempfile.mkdtemp(prefix="referee-cwd-"))
    tmp_path.chmod(0o755)
    try:
        check_lgpio_cwd(tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def check_lgpio_cwd(tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "lgpio.py").write_text(FAKE_LGPIO)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    log, state = shared / "lgpio.log", shared / "state"
    log.touch()
    log.chmod(0o666)
    locked = tmp_path / "locked"  # like systemd's default working directory, /
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IROTH | stat.S_IXOTH)
    env = {**os.environ, "PYTHONPATH": str(fake), "FAKE_LGPIO_LOG": str(log),
           "XDG_STATE_HOME": str(state), "HOME": str(shared)}
    env.pop("GPIOZERO_PIN_FACTORY", None)
    cmd = [*as_nobody(), sys.executable, "-m", "referee", "doctor", "--db", str(shared / "r.db")]
    done = subprocess.run(cmd, cwd=locked, env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert log.read_text().splitlines() == [f"fifo in {state / 'table-referee'}"], done.stdout

    # And when lgpio does fail for that reason, doctor names it.
    env["FAKE_LGPIO_DENY"] = "1"
    done = subprocess.run(cmd, cwd=locked, env=env, capture_output=True, text=True, timeout=120)
    (line,) = fix_lines(done.stdout, "pin factory")
    assert "notification pipe (.lgd-nfy*) in the current directory" in line, done.stdout


# -- words that must match wiring.md -----------------------------------------------------------------


def test_button_wiring_is_described_the_same_way_in_doctor_and_wiring_md() -> None:
    wiring = (REPO / "wiring.md").read_text()
    said = doctor.BUTTON_WIRING.format(at="the GPIO pin", gnd="")
    assert "COM tab" in said and "NO (normally open) tab to ground" in said
    assert "the microswitch's **COM** tab to the GPIO pin, its **NO** (normally open) tab to " \
           "ground" in wiring
    assert "NO leg to the GPIO" not in wiring and "COM) to the GPIO" not in wiring


def test_the_kernels_line_info_is_read_as_the_uapi_lays_it_out() -> None:
    """struct gpio_v2_line_info (linux/gpio.h): name[32], consumer[32], offset, num_attrs,
    flags (u64), attrs[10] of 16 bytes, padding[4] u32 — 256 bytes, as the ioctl number says."""
    import struct

    from referee.capture.lineinfo import GPIO_V2_GET_LINEINFO_IOCTL, LINE_INFO, parse_line_info

    assert LINE_INFO.size == 256 == (GPIO_V2_GET_LINEINFO_IOCTL >> 16) & 0x3FFF
    raw = struct.pack("<32s32sIIQ160s16s", b"GPIO22", b"mute", 22, 0, 1 | 8, b"", b"")
    info = parse_line_info(raw)
    assert (info.name, info.consumer, info.used, info.output) == ("GPIO22", "mute", True, True)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- a root in RAM: "a pulled plug loses nothing" would silently stop holding -------------------

# /proc/self/mountinfo with raspi-config's Overlay File System on (initramfs overlayroot): the SD
# card's root read-only underneath, every write in RAM
OVERLAY_ROOT = """\
22 28 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
26 1 0:24 / / rw,noatime shared:1 - overlay overlayroot rw,lowerdir=/media/root-ro,upperdir=/r/o
27 26 179:2 / /media/root-ro ro,relatime shared:2 - ext4 /dev/mmcblk0p2 ro
30 26 179:1 / /boot/firmware rw,relatime shared:3 - vfat /dev/mmcblk0p1 rw
"""
PLAIN_ROOT = """\
26 1 179:2 / / rw,noatime shared:1 - ext4 /dev/mmcblk0p2 rw
31 26 0:27 / /run rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,size=81000k
"""


def test_an_overlay_root_a_tmpfs_and_a_read_only_disk_are_named_with_the_fix(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    db = Path("/var/lib/table-referee/.local/share/table-referee/referee.db")
    info.write_text(OVERLAY_ROOT)
    said = doctor.volatile_storage(db, info)
    assert said is not None and said.startswith("the root is an overlay in RAM (overlayroot)")
    assert "raspi-config" in said and "--db" in said
    assert doctor.volatile_storage(Path("/boot/firmware/r.db"), info) is None  # the vfat is real
    info.write_text(PLAIN_ROOT)
    assert doctor.volatile_storage(db, info) is None
    said = doctor.volatile_storage(Path("/run/referee.db"), info)
    assert said is not None and said.startswith("/run/referee.db is on tmpfs (RAM)")
    info.write_text(PLAIN_ROOT.replace("rw,noatime", "ro,noatime"))
    said = doctor.volatile_storage(db, info)
    assert said is not None and "read-only file system" in said


def test_the_doctor_and_the_start_say_an_overlay_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mock_factory: GpiozeroMockFactory) -> None:
    fake_pi(tmp_path, monkeypatch, PI4)
    quiet_speech(monkeypatch, [], [])
    info = tmp_path / "mountinfo"
    info.write_text(OVERLAY_ROOT)
    monkeypatch.setattr(doctor, "MOUNTINFO", info)
    (line,) = fix_lines(run(tmp_path), "database")
    assert "overlay in RAM" in line
    # and `referee play` says it at start, after the PIN
    script = ("import sys; from pathlib import Path; from referee.cli import doctor; "
              "doctor.MOUNTINFO = Path(sys.argv[1]); from referee.cli.main import main; "
              "sys.exit(main(sys.argv[2:]))")
    cmd = [sys.executable, "-c", script, str(info), "play", "spank-the-pig", "--mock",
           "--no-speech", "--new", "--db", str(tmp_path / "p.db"), "--port", str(free_port())]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(REPO)})
    seen = []
    try:
        assert proc.stdout is not None
        for text in proc.stdout:
            seen.append(text.rstrip("\n"))
            if text.startswith(("Warning:", "Scoreboard:")) or len(seen) > 20:
                break
    finally:
        proc.send_signal(signal.SIGINT)
        try:  # a clean stop; slow beside four busy test workers
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # (the Ctrl-C was lost when the suite ran as a
            proc.kill()  # background job, SIGINT ignored: tests/conftest.py restores it)
            proc.communicate()
    pin = next((i for i, text in enumerate(seen) if text.startswith("Table PIN:")), -2)
    assert pin >= 0, seen
    # after the PIN (the engine's first phrases print from their own thread meanwhile)
    assert any(text.startswith("Warning: the root is an overlay in RAM (overlayroot)")
               for text in seen[pin + 1:]), seen
