"""The judge always gets in (issue 24): PIN checks a guessing flood cannot starve, and pairing at
the box. A real Table on mocked pins behind the real waitress server on loopback; each guest is a
raw socket from its own loopback address (127.x.y.z), as guests on a LAN would be.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from referee.cli.table import Table
from referee.scoreboard.app import WebServer
from referee.scoreboard.pairing import Pairing
from tests import test_hostile_http as hostile_http
from tests.hostile_support import PIN, wait_for
from tests.test_hostile_http import request

served = hostile_http.served  # the same real table and server (a fixture)


def call(port: int, method: str, path: str, source: str, body: Any = None,
         **headers: str) -> tuple[int, Any]:
    raw = b"" if body is None else json.dumps(body).encode()
    head = {"Content-Type": "application/json", **{k.replace("_", "-"): v
                                                   for k, v in headers.items()}}
    status, answer = request(port, method, path, source=source, headers=head, body=raw)
    try:
        return status, json.loads(answer) if answer else None
    except ValueError:
        return status, answer


def keypad_yes(port: int) -> None:
    assert call(port, "POST", "/api/press", "127.0.0.1", {"seat": "judge", "button": "yes"},
                X_Table_Pin=PIN)[0] == 204


class Flood:
    """Wrong PINs from `addresses` loopback addresses of one /24, as fast as they are answered."""

    def __init__(self, port: int, network: str, addresses: int) -> None:
        self.port, self.network, self.addresses = port, network, addresses
        self.stop = threading.Event()
        self.counts: dict[int, int] = {}
        self.threads = [threading.Thread(target=self.guess, args=(k,)) for k in range(6)]

    def guess(self, k: int) -> None:
        n = k
        while not self.stop.is_set():
            source = f"{self.network}.{n % self.addresses + 1}"
            try:
                status = request(self.port, "POST", "/api/pin", source=source,
                                 headers={"X-Table-Pin": f"{n % 1000:06d}"}, timeout=5)[0]
            except OSError:
                status = 0
            self.counts[status] = self.counts.get(status, 0) + 1
            n += len(self.threads)

    def __enter__(self) -> Flood:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=10)


def test_during_a_60_address_pin_flood_the_right_pin_and_a_pairing_get_in(
        served: tuple[Table, WebServer]) -> None:
    table, server = served
    port = server.port
    with Flood(port, "127.0.30", 60) as flood:
        wait_for(lambda: flood.counts.get(429, 0) > 50, timeout=20)  # the flood is held back
        start = time.monotonic()
        while call(port, "POST", "/api/pin", "127.0.31.7", X_Table_Pin=PIN)[0] != 204:
            assert time.monotonic() - start < 10, "the right PIN from a new address waited 10 s"
            time.sleep(0.5)
        took = time.monotonic() - start
        assert call(port, "POST", "/api/pin", "127.0.0.1", X_Table_Pin=PIN)[0] == 204  # the box
        # a phone in the very network that floods asks to judge, and the judge's YES lets it in
        status, asked = call(port, "POST", "/api/pair", "127.0.30.200", {})
        assert status == 201 and len(asked["code"]) == 4
        state = call(port, "GET", "/api/state", "127.0.31.8")[1]
        assert state["pairing"] == [asked["code"]]  # the table page shows the same code
        keypad_yes(port)
        wait_for(lambda: call(port, "GET", "/api/pair", "127.0.30.200",
                              X_Table_Token=asked["token"])[1]["state"] == "paired")
        assert call(port, "POST", "/api/pause", "127.0.30.200", {},
                    X_Table_Token=asked["token"])[0] == 200  # no PIN needed now
        assert table.engine is not None and table.engine.paused
    assert flood.counts.get(401, 0) < 60  # few guesses were ever checked
    assert took < 10


def test_yes_lets_in_only_a_device_waiting_alone(served: tuple[Table, WebServer]) -> None:
    table, server = served
    port = server.port
    _, judge = call(port, "POST", "/api/pair", "127.0.40.1", {})
    _, guest = call(port, "POST", "/api/pair", "127.0.41.1", {})  # asks at the same moment
    assert sorted(call(port, "GET", "/api/state", "127.0.40.1")[1]["pairing"]) == sorted(
        [judge["code"], guest["code"]])
    keypad_yes(port)  # two codes show: YES lets nobody in, and does not start play either
    time.sleep(0.3)
    for device in (judge, guest):
        assert call(port, "GET", "/api/pair", "127.0.40.1",
                    X_Table_Token=device["token"])[1]["state"] == "waiting"
    assert table.engine is not None and table.engine.command("snapshot")["phase"] != "cadence"
    # a guest cannot approve itself, nor act with a token not approved
    assert call(port, "POST", "/api/pair/approve", "127.0.41.1", {"code": guest["code"]})[0] == 403
    assert call(port, "POST", "/api/pause", "127.0.41.1", {},
                X_Table_Token=guest["token"])[0] == 401
    # the box's own screen picks the judge's code
    assert call(port, "POST", "/api/pair/approve", "127.0.0.1", {"code": judge["code"]})[0] == 200
    assert call(port, "GET", "/api/pair", "127.0.40.1",
                X_Table_Token=judge["token"])[1]["state"] == "paired"
    assert call(port, "GET", "/api/pair", "127.0.41.1",
                X_Table_Token=guest["token"])[1]["state"] == "waiting"


def test_a_flood_of_pairing_requests_is_bounded_per_network() -> None:
    pairing = Pairing(clock=lambda: 100.0)
    asked = [pairing.ask(f"10.0.0.{i}") for i in range(1, 10)]
    assert sum(1 for a in asked if a is not None) == 2  # one network: two waiting at most
    assert pairing.ask("10.0.1.1") is not None  # another network still asks
    assert not pairing.approve("9999") or "9999" in pairing.waiting()


def test_a_request_runs_out_and_a_paired_device_keeps_its_evening() -> None:
    from referee.scoreboard.pairing import EVENING_S, WAIT_S

    now = [100.0]
    pairing = Pairing(clock=lambda: now[0])
    first = pairing.ask("10.0.0.1")
    second = pairing.ask("10.0.0.2")
    assert first is not None and second is not None
    assert pairing.approve(first[0])
    now[0] += WAIT_S
    assert pairing.status(second[1]) == "unknown" and pairing.waiting() == []
    assert pairing.paired(first[1])
    now[0] += EVENING_S - WAIT_S
    assert not pairing.paired(first[1])


def test_the_judge_page_pairs_at_the_box_and_the_table_page_shows_the_code(
        served: tuple[Table, WebServer], browser: Any) -> None:
    """In a real browser: the judge's phone has no PIN, pairs instead; the table page (the TV)
    shows the same code; the keypad's YES lets the phone in and its Pause goes through."""
    table, server = served
    context = browser.new_context()
    try:
        tv, phone = context.new_page(), browser.new_context().new_page()
        for page in (tv, phone):
            page.set_default_timeout(15_000)
        tv.goto(server.url)
        phone.goto(server.url + "judge")
        table.engine.command("start")  # type: ignore[union-attr]  # play, so Pause has a meaning
        if not phone.locator("#pin-dialog").is_visible():  # the panel asks for the PIN at once
            phone.locator("#pause").click()
        phone.locator("#pin-pair").click()
        wait_for(lambda: "Your code:" in phone.locator("#pin-error").inner_text())
        code = phone.locator("#pin-error").inner_text().split("Your code: ")[1][:4]
        wait_for(lambda: code in tv.locator("#alert").inner_text())  # the same code on the TV
        keypad_yes(server.port)
        wait_for(lambda: not phone.locator("#pin-dialog").is_visible())  # let in
        phone.locator("#pause").click()
        wait_for(lambda: table.engine is not None and table.engine.paused, timeout=15)
        phone.context.close()
    finally:
        context.close()


@pytest.mark.parametrize(("path", "body"), [("/api/pair", {"zzz": 1}),
                                            ("/api/pair/approve", {"code": "12345"}),
                                            ("/api/pair/approve", {"code": "1234", "zzz": 1})])
def test_a_bad_pairing_body_is_a_400_and_asks_nothing(
        served: tuple[Table, WebServer], path: str, body: dict[str, Any]) -> None:
    _, server = served
    status, answer = call(server.port, "POST", path, "127.0.0.1", body)
    assert status == 400 and "\n" not in answer["error"], answer
    assert call(server.port, "GET", "/api/state", "127.0.0.1")[1]["pairing"] == []
