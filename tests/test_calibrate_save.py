"""`referee calibrate` saves what it measured, as the service user, without opening the PIN.

The Pi's config is /etc/table-referee/config.toml: root's, group referee, mode 0640 (the table
PIN is in it), in a directory only root may write (hardware/install.sh). The referee user runs
`sudo -u referee referee calibrate --config ...` (wiring.md). Here the same shapes: a root-owned
0755 directory, a root:nogroup 0640 config, and nobody (tests/unprivileged.py) running the real
command line, with PortAudio replaced by tests/fakeaudio.py's stand-in (a room with a known delay).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.config import ConfigError, drop_in_path, load_config, set_config_value
from tests.unprivileged import as_nobody

REPO = Path(__file__).resolve().parent.parent
NOGROUP = 65534
EXAMPLE = (REPO / "hardware" / "config.example.toml").read_text()

# The command line, as nobody, with the fake PortAudio in place of sounddevice's.
CALIBRATE = """
import sys, time
import referee.voice.device as device
from tests.fakeaudio import FakePortAudio, Room
from tests.test_pi_audio import PI5

def backend():
    pa = FakePortAudio(PI5, default="default", clock=lambda: time.monotonic_ns() // 1000,
                       block_ms=10)
    pa.inputs = ["USB PnP Sound Device: Audio (hw:3,0)"]
    pa.room = Room(48000, 0.0734, origin_s=pa.pa_time() - 1.0)
    return pa

device.SoundDeviceBackend = backend
from referee.cli.main import main
sys.exit(main(["calibrate", "--config", sys.argv[1], "--clicks", "3"]))
"""


@pytest.fixture
def etc() -> Iterator[Path]:
    """A root-owned 0755 directory holding a root:nogroup 0640 config (not pytest's tmp_path:
    nobody must reach it)."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to make a root-owned config directory")
    top = Path(tempfile.mkdtemp(prefix="referee-etc-"))
    top.chmod(0o755)
    conf = top / "table-referee"
    conf.mkdir(mode=0o755)
    (conf / "config.toml").write_text(EXAMPLE)
    os.chown(conf / "config.toml", 0, NOGROUP)
    (conf / "config.toml").chmod(0o640)
    home = top / "home"  # nobody's home, as /var/lib/table-referee is the referee user's
    home.mkdir()
    os.chown(home, 65534, NOGROUP)
    try:
        yield conf
    finally:
        shutil.rmtree(top, ignore_errors=True)


def as_user(script: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO))
    return subprocess.run([*as_nobody(), sys.executable, "-c", script, *args], cwd="/",
                          env=env, capture_output=True, text=True, timeout=120)


def owner_and_mode(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)


def test_calibrate_as_the_service_user_saves_beside_its_state_and_the_config_stays_root_s(
        etc: Path) -> None:
    config, home = etc / "config.toml", etc.parent / "home"
    before = config.read_bytes()
    done = as_user(CALIBRATE, str(config), home=home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    drop = home / ".local" / "state" / "table-referee" / "config.d" / \
        str(config).strip("/").replace("/", "-")
    assert f"in {drop}, this user's drop-in over {config}" in done.stdout
    assert config.read_bytes() == before and owner_and_mode(config) == (0, NOGROUP, 0o640)
    assert sorted(p.name for p in etc.iterdir()) == ["config.toml"]  # no config.toml.new left
    assert owner_and_mode(drop)[0] == 65534 and owner_and_mode(drop)[2] & 0o077 == 0
    # the service (this user, this home) loads the config with the measured delay merged in
    loaded = as_user("import sys; from referee.config import load_config; "
                     "c = load_config(sys.argv[1]); print(c.speech['output_delay_ms'], c.pin)",
                     str(config), home=home)
    delay, pin = loaded.stdout.split()
    assert abs(float(delay) - 73.4) <= 1.0, loaded.stdout + loaded.stderr
    assert pin == str(load_config(config).pin)  # the rest of the config is the config's


def test_calibrate_that_can_save_nowhere_says_so_in_one_line_and_exits_2(etc: Path) -> None:
    config = etc / "config.toml"
    before = config.read_bytes()
    done = as_user(CALIBRATE, str(config), home=etc)  # a "home" nobody may not write either
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("referee calibrate: cannot save output_delay_ms = ")
    assert "sudo -u referee" in line and f"under [speech] in {config} yourself" in line
    assert config.read_bytes() == before and owner_and_mode(config) == (0, NOGROUP, 0o640)


def test_a_config_written_in_place_keeps_its_owner_and_mode(etc: Path) -> None:
    """Root may write /etc: the value goes into the config itself, which stays root:nogroup
    0640 (a rename of a fresh file made it root:root 0644, the PIN readable by everyone)."""
    config = etc / "config.toml"
    assert set_config_value(config, "speech", "output_delay_ms", 41.5) == config
    assert owner_and_mode(config) == (0, NOGROUP, 0o640)
    assert load_config(config).speech["output_delay_ms"] == 41.5
    assert "# table PIN" in config.read_text() or "pin =" in config.read_text()  # comments kept


def test_a_drop_in_is_merged_over_the_config_and_a_broken_one_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    config = tmp_path / "config.toml"
    config.write_text(EXAMPLE)
    drop = drop_in_path(config)
    assert drop == tmp_path / "state" / "table-referee" / "config.d" / \
        str(config).strip("/").replace("/", "-")
    drop.parent.mkdir(parents=True)
    drop.write_text("[speech]\noutput_delay_ms = 12.0\n")
    assert load_config(config).speech["output_delay_ms"] == 12.0
    # a value the drop-in holds is saved there (in the config it would be overruled)
    assert set_config_value(config, "speech", "output_delay_ms", 30.0) == drop
    assert load_config(config).speech["output_delay_ms"] == 30.0
    drop.write_text("[speech\n")
    with pytest.raises(ConfigError, match=rf"^{drop}: line 1: .*delete {drop}"):
        load_config(config)
