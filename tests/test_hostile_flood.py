"""Connection floods against the real waitress server on loopback (issue 24).

Each guest is a raw socket from its own loopback address (127.x.y.z: Linux answers the whole
127/8); the flooders share one /24, as guests on one LAN do, and so does the newcomer who must
still get in. The box itself is 127.0.0.1. A real Table on mocked pins and a real SQLite file.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.cli.table import Table
from referee.scoreboard.app import WebServer
from referee.scoreboard.guard import PER_ADDRESS
from tests.hostile_support import PIN, SEATS, served_table, wait_for
from tests.test_hostile_http import guest, open_stream, request

OPTIONS = {"tempo_ms": 100, "window_ms": 3000, "pause_ms": 100, "tie_us": 1, "doubles": "off"}


@pytest.fixture
def served(mock_factory: Any, tmp_path: Path) -> Iterator[tuple[Table, WebServer]]:
    with served_table(tmp_path / "referee.db", OPTIONS) as both:
        yield both


def state(port: int, source: str = "127.0.0.1") -> dict[str, Any]:
    status, body = request(port, "GET", "/api/state", source=source, timeout=5)
    assert status == 200, status
    return dict(json.loads(body))


def box_round(port: int) -> float:
    """The box starts a round and every seat slaps once the go-word has sounded: the round is
    ruled from those presses. Returns the seconds from the first press to the ruling."""
    pin = {"X-Table-Pin": PIN, "Content-Type": "application/json"}
    assert request(port, "POST", "/api/next-round", headers=pin, body=b"{}")[0] == 200
    number = state(port)["round"]
    wait_for(lambda: state(port)["phase"] == "race", timeout=5)
    start = time.monotonic()
    for seat in SEATS:
        body = json.dumps({"seat": seat}).encode()
        assert request(port, "POST", "/api/press", headers=pin, body=body, timeout=5)[0] == 204
    wait_for(lambda: (s := state(port))["round"] == number and s["phase"] != "race", timeout=5)
    ruled = state(port)
    assert any(r["type"] == "ruling" for r in ruled["rulings"]), ruled["rulings"]
    return time.monotonic() - start


class Flood:
    """`addresses` guests of 127.0.60.0/24, each opening `per` connections that send nothing
    (idle) or one byte a second of headers that never end (slowloris), reopened when closed."""

    def __init__(self, port: int, kind: str, addresses: int = 12, per: int = 40) -> None:
        self.port, self.kind, self.addresses, self.per = port, kind, addresses, per
        self.stop = threading.Event()
        self.socks: list[tuple[socket.socket, str]] = []
        self.thread = threading.Thread(target=self.run)

    def open_one(self, source: str) -> None:
        try:
            sock = guest(self.port, source, timeout=2)
            if self.kind == "slowloris":
                sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            self.socks.append((sock, source))
        except OSError:
            pass

    def run(self) -> None:
        for a in range(self.addresses):
            for _ in range(self.per):
                self.open_one(f"127.0.60.{a + 1}")
        while not self.stop.wait(1.0):
            for sock, source in list(self.socks):
                try:
                    if self.kind == "slowloris":
                        sock.send(b"X")
                    else:  # an idle one: is it still open? (no data means it was closed)
                        sock.setblocking(False)
                        if sock.recv(1, socket.MSG_PEEK) == b"":
                            raise OSError
                except BlockingIOError:
                    pass
                except OSError:  # closed by the server (a deadline, room made): open another
                    self.socks.remove((sock, source))
                    sock.close()
                    self.open_one(source)

    def __enter__(self) -> Flood:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)
        for sock, _ in self.socks:
            sock.close()


@pytest.mark.parametrize("kind", ["idle", "slowloris"])
def test_a_connection_flood_leaves_pages_and_the_box_working(
        served: tuple[Table, WebServer], kind: str) -> None:
    table, server = served
    port = server.port
    with Flood(port, kind):
        wait_for(lambda: server.guard.refused > 100, timeout=20)  # the flood is at the door
        for newcomer in ("127.0.60.200", "127.0.61.1"):  # in the flooding network, and beside it
            start = time.monotonic()
            status, page = request(port, "GET", "/", source=newcomer, timeout=5)
            assert status == 200 and b"<html" in page.lower()
            state(port, newcomer)
            assert time.monotonic() - start < 2.0, f"{newcomer} waited for the page"
        took = box_round(port)  # the box's presses are ruled within their window
        assert took < 3.0
        assert server.guard.guest_total <= server.guard.guests


def test_a_connection_over_the_cap_is_answered_503_at_once(
        served: tuple[Table, WebServer]) -> None:
    _, server = served
    held = [guest(server.port, "127.0.62.1") for _ in range(PER_ADDRESS)]
    try:
        wait_for(lambda: server.guard.open.get("127.0.62.1") == PER_ADDRESS)
        start = time.monotonic()
        status, body = request(server.port, "GET", "/api/state", source="127.0.62.1")
        assert status == 503 and time.monotonic() - start < 1.0
        assert "too many connections" in json.loads(body)["error"]
        assert request(server.port, "GET", "/api/state", source="127.0.0.1")[0] == 200  # the box
    finally:
        for sock in held:
            sock.close()


def test_a_connection_that_never_sends_its_headers_is_closed(
        served: tuple[Table, WebServer]) -> None:
    _, server = served
    server.guard.header_s = 1.0  # HEADER_S (5 s) at the table
    sock = guest(server.port, "127.0.63.1", timeout=6)
    try:
        start = time.monotonic()
        assert sock.recv(1) == b""  # closed by the server
        assert 0.9 < time.monotonic() - start < 4.0
    finally:
        sock.close()


def test_a_stream_slot_is_freed_when_the_client_goes_away(
        served: tuple[Table, WebServer]) -> None:
    _, server = served
    hub = server.app.extensions["referee"].hub
    for _ in range(hub.per_address * 2):  # a phone reloading, again and again
        sock, status = open_stream(server.port, "127.0.64.1")
        assert status == 200
        sock.shutdown(socket.SHUT_WR)  # the browser's close: a FIN, nothing more to tell
        try:
            wait_for(lambda: not hub.clients, timeout=3.0)  # not at the next heartbeat (15 s)
        finally:
            sock.close()


@pytest.mark.parametrize(("head", "status"), [
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", 431),
    (b"POST /api/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n", 413),
    (b"POST /api/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad header\r\n\r\n", 400),
])
def test_the_servers_own_refusals_are_the_apis_json_error(
        served: tuple[Table, WebServer], head: bytes, status: int) -> None:
    _, server = served
    sock = guest(server.port, "127.0.65.1")
    try:
        sock.sendall(head)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    finally:
        sock.close()
    assert data.split(b" ", 2)[1] == str(status).encode(), data[:200]
    headers, _, body = data.partition(b"\r\n\r\n")
    assert b"Content-Type: application/json" in headers
    error = json.loads(body)["error"]
    assert error and "\n" not in error
