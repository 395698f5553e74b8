"""systemd's watchdog and readiness (hardware/table-referee.service: Type=notify, WatchdogSec=).

The referee writes to ``$NOTIFY_SOCKET`` itself (referee/notify.py, no library): READY=1 once
the table plays, WATCHDOG=1 from the engine's thread while it turns, STOPPING=1 on the way out.
Here a datagram socket stands in for systemd's, with the environment systemd gives a unit.
"""

from __future__ import annotations

import io
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from referee.notify import Watchdog, notify
from tests.support import ROOT


@pytest.fixture
def systemd(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(0.2)
    messages: list[tuple[float, str]] = []
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            try:
                messages.append((time.monotonic(), sock.recv(4096).decode()))
            except TimeoutError:
                continue

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    yield str(path), messages
    stop.set()
    thread.join()
    sock.close()


def test_the_referee_as_the_unit_runs_it_says_ready_pings_and_stops(
        tmp_path: Path, systemd: tuple[str, list[tuple[float, str]]]) -> None:
    path, messages = systemd
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NOTIFY_SOCKET": path,
           "WATCHDOG_USEC": "2000000"}  # 2 s: a ping at each engine turn, at most every 0.5 s
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli.main", "play", "spank-the-pig", "--mock",
         "--no-speech", "--no-web", "--db", str(tmp_path / "t.db")],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and sum(m == "WATCHDOG=1" for _, m in messages) < 4:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = [m for _, m in messages]
    assert proc.returncode == 0, err
    (ready,) = [m for m in said if m.startswith("READY=1")]  # once (pings may come before it)
    assert ready.startswith("READY=1\nSTATUS=Spank the Pig"), said[:3]
    assert "Table PIN:" in out  # ready comes after the table's first lines
    pings = [t for t, m in messages if m == "WATCHDOG=1"]
    assert len(pings) >= 4 and said[-1] == "STOPPING=1", said
    gaps = [b - a for a, b in zip(pings, pings[1:], strict=False)]
    assert max(gaps) < 2.0, gaps  # inside the timeout, even on a loaded machine


def test_a_wedged_engine_stops_the_pings(tmp_path: Path,
                                         systemd: tuple[str, list[tuple[float, str]]]) -> None:
    """The ping proves the engine's thread turns: blocked in a handler, it stops, and systemd
    kills and restarts the service after WatchdogSec."""
    from referee.cli.table import Table, use_mock_pins
    from referee.config import default_config

    path, messages = systemd
    use_mock_pins()
    out = io.StringIO()  # (a file opened here and never closed warned in a later test)
    table = Table(default_config(["Blue", "Red"]), db=tmp_path / "t.db", mock=True,
                  no_speech=True, out=out)
    table.watchdog = Watchdog({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"})
    try:
        engine = table.start("spank-the-pig", {"doubles": "off"})
        time.sleep(1.2)  # idle, the engine turns at least every 0.5 s
        assert table.watchdog.pings >= 2
        wedge = threading.Event()
        real_turn = engine.turn
        engine.turn = lambda: (wedge.wait(), real_turn())  # type: ignore[method-assign]
        time.sleep(0.7)  # the turn in hand ends; the next one blocks
        before = table.watchdog.pings
        time.sleep(1.5)
        assert table.watchdog.pings == before  # nothing said while it is wedged
        wedge.set()
        time.sleep(1.2)
        assert table.watchdog.pings > before  # and again once it turns
    finally:
        table.close()


def test_no_socket_no_watchdog_and_nothing_sent() -> None:
    assert not notify("READY=1", {})
    assert not notify("READY=1", {"NOTIFY_SOCKET": "relative/path"})
    assert not Watchdog({}).enabled
    assert not Watchdog({"WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "1"}).enabled  # not us
    assert Watchdog({"WATCHDOG_USEC": "60000000"}).interval_s == 15.0


def test_an_abstract_socket_is_reached(tmp_path: Path) -> None:
    name = f"table-referee-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        assert notify("WATCHDOG=1", {"NOTIFY_SOCKET": "@" + name})
        assert sock.recv(100) == b"WATCHDOG=1"


def test_the_unit_has_a_watchdog_and_a_closed_device_policy() -> None:
    unit = (ROOT / "hardware" / "table-referee.service").read_text()
    settings = re.findall(r"^(\w+)=(.*)$", unit, re.M)
    assert ("Type", "notify") in settings and ("NotifyAccess", "main") in settings
    assert ("WatchdogSec", "60s") in settings and ("Restart", "on-failure") in settings
    assert ("DevicePolicy", "closed") in settings
    allowed = {v for k, v in settings if k == "DeviceAllow"}
    assert allowed == {"char-gpiochip rw", "char-alsa rw"}
    assert not any(k == "PrivateDevices" for k, _ in settings)  # it would hide both
