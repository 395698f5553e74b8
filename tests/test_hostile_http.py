"""Hostile guests on the LAN, against the real waitress server on loopback (issue 16).

Every guest here is a raw socket from its own loopback address (127.x.y.z: Linux answers the whole
127/8), so per-address limits are exercised as a LAN would exercise them. A real `Table` on mocked
pins and a temporary SQLite file; the page test runs the real page in headless Chromium.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.cli.table import Table
from referee.scoreboard import history
from referee.scoreboard.app import WebServer
from referee.scoreboard.pin import PinGuard
from tests.harness import SimClock
from tests.hostile_support import PIN, served_table, wait_for

FAST = {"tempo_ms": 100, "window_ms": 300, "pause_ms": 100, "tie_us": 1}


@pytest.fixture
def served(mock_factory: Any, tmp_path: Path) -> Iterator[tuple[Table, WebServer]]:
    with served_table(tmp_path / "referee.db", FAST) as both:
        yield both


def guest(port: int, source: str = "127.0.0.1", timeout: float = 5.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                    source_address=(source, 0))


def request(port: int, method: str, path: str, *, source: str = "127.0.0.1",
            headers: dict[str, str] | None = None, body: bytes = b"",
            timeout: float = 5.0) -> tuple[int, bytes]:
    """One request on its own connection; (status, body)."""
    sock = guest(port, source, timeout)
    try:
        head = {"Host": "127.0.0.1", "Connection": "close", **(headers or {})}
        if body or method == "POST":
            head["Content-Length"] = str(len(body))
        lines = "".join(f"{k}: {v}\r\n" for k, v in head.items())
        sock.sendall(f"{method} {path} HTTP/1.1\r\n{lines}\r\n".encode() + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            if method == "HEAD" and b"\r\n\r\n" in data:
                break
    finally:
        sock.close()
    status = int(data.split(b" ", 2)[1]) if data else 0
    return status, data.partition(b"\r\n\r\n")[2]


def open_stream(port: int, source: str) -> tuple[socket.socket, int]:
    """GET /api/events; (socket left open, status)."""
    sock = guest(port, source)
    sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return sock, int(data.split(b" ", 2)[1])


# -- High 1: HEAD /api/events --------------------------------------------------------------------


def test_head_on_the_live_feed_does_not_keep_a_slot(served: tuple[Table, WebServer]) -> None:
    table, server = served
    hub = server.app.extensions["referee"].hub
    for i in range(hub.max_streams + 6):  # more HEADs than there are slots, from many addresses
        status, _ = request(server.port, "HEAD", "/api/events", source=f"127.0.1.{i % 200 + 1}")
        assert status == 200
    wait_for(lambda: not hub.clients)  # every slot came back
    sock, status = open_stream(server.port, "127.0.0.1")
    try:
        assert status == 200  # a real scoreboard still gets its stream
    finally:
        sock.close()


# -- Medium 6: streams per address, and the page without a stream ---------------------------------


def test_one_address_cannot_take_every_stream(served: tuple[Table, WebServer]) -> None:
    _, server = served
    hub = server.app.extensions["referee"].hub
    held = []
    try:
        for _ in range(hub.per_address):
            sock, status = open_stream(server.port, "127.0.2.1")
            held.append(sock)
            assert status == 200
        sock, status = open_stream(server.port, "127.0.2.1")
        held.append(sock)
        assert status == 503  # this address has its share
        sock, status = open_stream(server.port, "127.0.2.2")
        held.append(sock)
        assert status == 200  # everyone else still gets a stream
    finally:
        for sock in held:
            sock.close()


def test_the_page_polls_the_state_when_no_stream_is_free(
        served: tuple[Table, WebServer], browser: Any) -> None:
    table, server = served
    hub = server.app.extensions["referee"].hub
    hub.max_streams = hub.kept_streams = 0  # every slot taken, the box's kept ones too
    context = browser.new_context()  # on the shared headless Chromium (tests/conftest.py)
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(server.url)
        page.locator("#seats li").nth(3).wait_for()
        assert page.locator("#round").inner_text() != "No game yet"
        assert "every few seconds" in page.locator("#conn").inner_text()
        # and it keeps up: a pause shows within a couple of polls
        assert table.engine is not None
        table.engine.command("pause")
        wait_for(lambda: page.locator("#phase").inner_text() == "Paused")
        # someone guesses the PIN from many addresses: the page says so
        for i in range(15):
            request(server.port, "POST", "/api/pin", source=f"127.0.6.{i + 1}",
                    headers={"X-Table-Pin": f"{i:06d}"})
        wait_for(lambda: "guessing the table PIN" in page.locator("#alert").inner_text())
    finally:
        context.close()


# -- High 3: bodies are limited at the server -----------------------------------------------------


def test_a_huge_body_is_refused_before_it_is_sent(served: tuple[Table, WebServer]) -> None:
    _, server = served
    sock = guest(server.port, "127.0.3.1", timeout=5.0)
    try:
        sock.sendall(b"POST /api/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Table-Pin: " + PIN.encode()
                     + b"\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n")
        sock.sendall(b"x" * 65536)  # a first piece of the 100 MB; the rest never comes
        data = sock.recv(4096)  # waitress answers now, not after 100 MB are spooled to disk
    finally:
        sock.close()
    assert data.startswith(b"HTTP/1.1 413"), data[:80]


def test_a_body_under_the_limit_still_works(served: tuple[Table, WebServer]) -> None:
    _, server = served
    body = json.dumps({"round": 1, "pigs": 1, "pad": "x" * 100}).encode()
    status, answer = request(server.port, "POST", "/api/facts", body=body,
                             headers={"X-Table-Pin": PIN, "Content-Type": "application/json"})
    assert status == 400 and b"unknown field 'pad'" in answer  # read and judged, not refused


# -- Medium 5: slowloris --------------------------------------------------------------------------


def test_slow_connections_from_one_address_leave_the_judge_panel_usable(
        served: tuple[Table, WebServer]) -> None:
    table, server = served
    server.guard.request_s = 2.0  # the deadline for a trickling request (10 s at the table)
    slow = []
    try:
        for _ in range(220):
            try:
                sock = guest(server.port, "127.0.4.1", timeout=2.0)
                sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
                slow.append(sock)
            except OSError:
                pass
        # the judge, from their own phone, meanwhile:
        start = time.monotonic()
        status, _ = request(server.port, "GET", "/judge", source="127.0.0.9", timeout=5.0)
        assert status == 200
        status, _ = request(server.port, "POST", "/api/pause", source="127.0.0.9",
                            headers={"X-Table-Pin": PIN},
                            timeout=5.0)
        assert status == 200
        assert time.monotonic() - start < 5.0
        assert table.engine is not None and table.engine.paused
        # the trickling requests are dropped at their deadline even as they keep sending
        for sock in slow[:3]:
            sock.sendall(b"a")
        wait_for(lambda: not server.guard.open.get("127.0.4.1"), timeout=10.0)
    finally:
        for sock in slow:
            sock.close()


# -- High 4: the PIN, table-wide ------------------------------------------------------------------


def test_wrong_pins_from_many_addresses_slow_every_guess() -> None:
    clock = SimClock.in_seconds()
    guard = PinGuard(lambda: PIN, clock=clock)
    assert guard.check("10.0.0.1", PIN) == (0, 0.0)  # the judge's phone, earlier
    statuses = []
    for i in range(200):  # one guess per address: the per-address lock never trips
        status, _ = guard.check(f"10.1.{i // 250}.{i % 250}", f"{i:06d}")
        statuses.append(status)
        clock.advance(s=0.01)
    # the network's first tries, then everyone there waits their turn
    assert statuses.count(401) <= guard.fresh + guard.free_wrong + 1
    assert statuses[-1] == 429
    assert guard.alert()  # the pages say someone is guessing
    assert guard.check("10.1.0.251", PIN)[0] == 429  # a stranger in the guessing network waits
    assert guard.check("10.2.0.1", PIN) == (0, 0.0)  # a newcomer elsewhere does not (issue 24)
    assert guard.check("10.0.0.1", PIN) == (0, 0.0)  # nor does the judge who unlocked earlier
    assert guard.check("127.0.0.1", PIN) == (0, 0.0)  # nor the box's own screen
    clock.advance(s=guard.refill_s + 0.1)
    assert guard.check("10.1.0.252", "000000")[0] == 401  # one guess per refill_s there
    assert guard.check("10.1.0.253", "000001")[0] == 429


def test_the_table_page_says_someone_is_guessing(served: tuple[Table, WebServer]) -> None:
    _, server = served
    for i in range(15):
        request(server.port, "POST", "/api/pin", source=f"127.0.5.{i + 1}",
                headers={"X-Table-Pin": f"{i:06d}"})
    status, body = request(server.port, "GET", "/api/state")
    assert status == 200
    assert "guessing the table PIN" in json.loads(body)["pin_alert"]


# -- Low: Host header (DNS rebinding) ---------------------------------------------------------------


def test_only_the_tables_own_names_are_answered(served: tuple[Table, WebServer]) -> None:
    _, server = served
    port = server.port
    for host in ("rebind.attacker.example", "evil.example:80", "127.0.0.1.nip.io"):
        status, body = request(port, "GET", "/api/state", headers={"Host": host})
        assert status == 421, host
        status, _ = request(port, "POST", "/api/pin", headers={"Host": host, "X-Table-Pin": PIN})
        assert status == 421, host
    hostname = socket.gethostname()
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]", f"{hostname}:{port}",
                 f"{hostname}.local", "192.168.1.20:8000"):
        status, _ = request(port, "GET", "/api/state", headers={"Host": host})
        assert status == 200, host


# -- Medium 11: /history does not re-rule the live game on every request ------------------------


def test_history_requests_do_not_replay_the_live_game_each_time(
        served: tuple[Table, WebServer], monkeypatch: pytest.MonkeyPatch) -> None:
    table, server = served
    engine = table.engine
    assert engine is not None
    replays = []
    real = history.replay

    def counting(lines: Any, *args: Any) -> Any:
        replays.append(1)
        return real(lines, *args)

    monkeypatch.setattr(history, "replay", counting)
    for _ in range(20):  # the live game grows between requests, as it does during play
        table.press("Blue", "slap")
        status, _ = request(server.port, "GET", "/history")
        assert status == 200
        time.sleep(0.02)
    assert len(replays) <= 3, len(replays)  # the first, and at most a background refresh or two


# -- Low: --host :: ---------------------------------------------------------------------------------


def test_host_double_colon_prints_a_usable_url_and_serves_ipv4_and_ipv6(tmp_path: Path) -> None:
    import subprocess
    import sys

    with socket.socket(socket.AF_INET6) as s:
        s.bind(("::", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli.main", "play", "--mock", "--no-speech", "--host", "::",
         "--port", str(port), "--db", str(tmp_path / "referee.db"), "--pin", PIN],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = ""
        end = time.monotonic() + 30
        while time.monotonic() < end and not line.startswith("Scoreboard:"):
            line = proc.stdout.readline()
            assert line or proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        url = line.split()[-1]
        assert ":::" not in url and url.endswith(f":{port}/"), url
        for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            with socket.socket(family) as sock:
                sock.settimeout(5)
                sock.connect((address, port))
                sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: localhost\r\n"
                             b"Connection: close\r\n\r\n")
                assert sock.recv(64).startswith(b"HTTP/1.1 200"), address
    finally:
        proc.kill()
        proc.communicate(timeout=10)
