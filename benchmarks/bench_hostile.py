"""Hostile guests and a full disk, measured: the figures docs/reliability.md quotes (issue 16).

A real Table on mocked pins behind the real waitress server on loopback; guests are raw sockets,
each from its own loopback address (127.x.y.z), as guests on a LAN would be.

1. PIN brute force: `--threads` guessers try PINs as fast as the server answers, each guess from a
   new address (so the per-address lock never trips), for `--seconds`. Prints how many guesses
   the server actually checked (401) and how many it held back (429), the rate, and the expected
   and worst time to find a 4-digit and a 6-digit PIN at that rate.
2. Slots under flood: 20 addresses each open 20 event streams; how many does each get, how many in
   all, and what does a new guest get? Then 220 slow connections from one address and the time the
   judge's GET /judge and POST /api/pause take meanwhile.
3. Floods side by side (issue 24): a new guest's page load (GET / and GET /api/state, from an
   address never seen before) and the box's press round-trip (POST /api/press from 127.0.0.1),
   the median of several, before, during and after each flood: 12 addresses x 40 idle
   connections, the same as slowloris (a byte a second of headers that never end), and 60
   addresses guessing the PIN as fast as they are answered (where the right PIN from a new
   address, and a pairing by the keypad's YES, must still get in).
4. A full disk: the log may not grow past a few pages (SQLite's real "database or disk is full");
   presses through /api/press until the first refusal: presses answered 204, presses found in the
   log, the answer to the next press, the phase, and how many error lines were logged.

    .venv/bin/python benchmarks/bench_hostile.py [--seconds 60] [--threads 16] [--samples 5]
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import socket
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.cli.table import Table, use_mock_pins  # noqa: E402
from referee.config import default_config  # noqa: E402
from referee.scoreboard.app import WebServer, serve_in_thread  # noqa: E402
from referee.scoreboard.pin import FREE_WRONG, FRESH_TOTAL  # noqa: E402

PIN = "482913"
SEATS = ["Blue", "Red", "Green", "Yellow"]
OPTIONS = {"tempo_ms": 100, "window_ms": 300, "pause_ms": 100, "tie_us": 1, "doubles": "off"}


def request(port: int, method: str, path: str, *, source: str = "127.0.0.1",
            headers: dict[str, str] | None = None, body: bytes = b"",
            timeout: float = 10.0) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as sock:
        head = {"Host": "127.0.0.1", "Connection": "close", "Content-Length": str(len(body)),
                **(headers or {})}
        lines = "".join(f"{k}: {v}\r\n" for k, v in head.items())
        sock.sendall(f"{method} {path} HTTP/1.1\r\n{lines}\r\n".encode() + body)
        data = sock.recv(64)
    return int(data.split(b" ", 2)[1]) if data else 0


def table_and_server(db: Path) -> tuple[Table, WebServer]:
    table = Table(default_config(SEATS), db=db, mock=True, no_speech=True, pin=PIN,
                  out=io.StringIO(), auto=False)
    table.start("spank-the-pig", OPTIONS, resume=False)
    return table, serve_in_thread(table, "127.0.0.1", 0)


def duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def brute_force(port: int, seconds: float, threads: int) -> dict[str, Any]:
    counts = {401: 0, 429: 0, "other": 0}
    lock = threading.Lock()
    next_guess = iter(range(10**6))
    end = time.monotonic() + seconds

    def guesser(k: int) -> None:
        n = 0
        while time.monotonic() < end:
            with lock:
                guess = next(next_guess)
            n += 1
            source = f"127.{10 + k}.{n // 250 % 250}.{n % 250 + 1}"
            try:
                status = request(port, "POST", "/api/pin", source=source,
                                 headers={"X-Table-Pin": f"{guess:06d}"})
            except OSError:
                status = 0
            with lock:
                key: Any = status if status in (401, 429) else "other"
                counts[key] += 1

    workers = [threading.Thread(target=guesser, args=(k,)) for k in range(threads)]
    start = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    took = time.monotonic() - start
    checked = counts[401]
    rate = checked / took
    addresses = sum(counts[k] for k in (401, 429, "other"))
    print(f"PIN brute force: {addresses} guesses from {addresses} loopback addresses in {took:.1f} s:"
          f" {checked} checked (401), {counts[429]} held back (429), {counts['other']} other")
    # once the networks' FRESH_TOTAL first tries are spent (they spend the FREE_WRONG budget as
    # they go), a guesser gets what the two refill: measured here
    burst = max(FREE_WRONG, FRESH_TOTAL)
    steady = max(checked - burst, 1) / took
    print(f"  checked guesses per second, table-wide: {rate:.3f} in all, {steady:.3f} after the "
          f"first {burst} (one per {1 / steady:.1f} s)")
    figures: dict[str, Any] = {"guesses": addresses, "checked": checked, "held": counts[429],
                               "seconds": round(took, 1), "steady_per_s": round(steady, 4)}
    for digits in (4, 6, 8):
        space = 10**digits
        mean, worst = space / 2 / steady, space / steady
        print(f"  {digits}-digit PIN: expected {duration(mean)}, at worst {duration(worst)}")
        figures[f"pin{digits}_expected_s"] = round(mean)
    return figures


def flood(port: int, server: WebServer, request_s: float | None = None) -> dict[str, Any]:
    hub = server.app.extensions["referee"].hub
    if request_s is not None:  # a shorter request deadline than the guard's own (the smoke run)
        server.guard.request_s = request_s
    held: list[socket.socket] = []
    granted: dict[str, int] = {}
    try:
        for a in range(20):
            source = f"127.20.0.{a + 1}"
            for _ in range(20):
                sock = socket.create_connection(("127.0.0.1", port), timeout=5,
                                                source_address=(source, 0))
                sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                status = sock.recv(16)
                if b" 200 " in status:
                    granted[source] = granted.get(source, 0) + 1
                    held.append(sock)
                else:
                    sock.close()
        most = max(granted.values())
        total = len(hub.clients)
        newcomer = request(port, "GET", "/api/events", source="127.21.0.1", timeout=3)
        state = request(port, "GET", "/api/state", source="127.21.0.1")
        print(f"Slots under flood: 20 addresses x 20 streams tried: at most {most} per address, "
              f"{total} in all (the table-wide cap is {hub.max_streams}); a new guest's stream: "
              f"{newcomer}, its GET /api/state (the page's fallback, every 2 s): {state}")
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 20
    while hub.clients and time.monotonic() < deadline:
        time.sleep(0.1)
    slow: list[socket.socket] = []
    try:
        for _ in range(220):
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=2,
                                                source_address=("127.22.0.1", 0))
                sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                slow.append(sock)
            except OSError:
                pass
        kept = server.guard.open.get("127.22.0.1", 0)
        t0 = time.perf_counter()
        page = request(port, "GET", "/judge", source="127.23.0.1")
        t1 = time.perf_counter()
        pause = request(port, "POST", "/api/pause", source="127.23.0.1",
                        headers={"X-Table-Pin": PIN})
        t2 = time.perf_counter()
        print(f"Slowloris: 220 slow connections from one address: {kept} kept open, the rest "
              f"answered 503; meanwhile GET /judge {page} in {(t1 - t0) * 1000:.0f} ms, "
              f"POST /api/pause {pause} in {(t2 - t1) * 1000:.0f} ms")
        start = time.monotonic()
        while server.guard.open.get("127.22.0.1") and time.monotonic() - start < 30:
            for sock in slow[:5]:
                try:
                    sock.sendall(b"a")  # trickling: it never finishes
                except OSError:
                    pass
            time.sleep(0.5)
        dropped = time.monotonic() - start
        print(f"  the trickling requests were dropped after {dropped:.1f} s more "
              f"(deadline {server.guard.request_s:.0f} s from the first byte)")
    finally:
        for sock in slow:
            sock.close()
    return {"streams_per_address": most, "streams_total": total, "newcomer_stream": newcomer,
            "slow_kept": kept, "judge_ms": round((t1 - t0) * 1000), "pause_ms": round((t2 - t1) * 1000)}


def page_and_press(port: int, n: int, fresh: list[int], times: int) -> tuple[float, float]:
    """Median ms of a new guest's page load and of the box's press round-trip."""
    pages, presses = [], []
    for _ in range(times):
        fresh[0] += 1
        source = f"127.70.{fresh[0] // 250 % 250}.{fresh[0] % 250 + 1}"
        t0 = time.perf_counter()
        ok = (request(port, "GET", "/", source=source, timeout=15) == 200
              and request(port, "GET", "/api/state", source=source, timeout=15) == 200)
        t1 = time.perf_counter()
        pressed = request(port, "POST", "/api/press", headers={"X-Table-Pin": PIN},
                          body=json.dumps({"seat": SEATS[n % len(SEATS)]}).encode(),
                          timeout=15) == 204
        t2 = time.perf_counter()
        pages.append((t1 - t0) * 1000 if ok else float("inf"))
        presses.append((t2 - t1) * 1000 if pressed else float("inf"))
        time.sleep(0.25)
    return sorted(pages)[len(pages) // 2], sorted(presses)[len(presses) // 2]


class Flooder:
    """12 x 40 idle or slowloris connections from 127.60.0.0/24, or 60 addresses guessing."""

    def __init__(self, port: int, kind: str, settle_s: float) -> None:
        self.port, self.kind, self.settle_s = port, kind, settle_s
        self.stop = threading.Event()
        self.socks: list[tuple[socket.socket, str]] = []
        self.guesses = {401: 0, 429: 0}
        workers = 6 if kind == "pin" else 1
        self.threads = [threading.Thread(target=self.run, args=(k,)) for k in range(workers)]

    def open_one(self, source: str) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=2,
                                            source_address=(source, 0))
            if self.kind == "slowloris":
                sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            self.socks.append((sock, source))
        except OSError:
            pass

    def run(self, k: int) -> None:
        if self.kind == "pin":
            n = k
            while not self.stop.is_set():
                status = request(self.port, "POST", "/api/pin", source=f"127.61.0.{n % 60 + 1}",
                                 headers={"X-Table-Pin": f"{n % 10**6:06d}"})
                if status in self.guesses:
                    self.guesses[status] += 1
                n += len(self.threads)
            return
        for a in range(12):
            for _ in range(40):
                self.open_one(f"127.60.0.{a + 1}")
        while not self.stop.wait(1.0):
            for sock, source in list(self.socks):
                try:
                    if self.kind == "slowloris":
                        sock.send(b"X")
                    else:
                        sock.setblocking(False)
                        if sock.recv(1, socket.MSG_PEEK) == b"":
                            raise OSError
                except BlockingIOError:
                    pass
                except OSError:
                    self.socks.remove((sock, source))
                    sock.close()
                    self.open_one(source)

    def __enter__(self) -> Flooder:
        for t in self.threads:
            t.start()
        time.sleep(self.settle_s)  # the flood is at the door
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=30)
        for sock, _ in self.socks:
            sock.close()


def side_by_side(tmp: Path, samples: int, settle_s: float) -> dict[str, Any]:
    table, server = table_and_server(tmp / "side.db")
    port, fresh = server.port, [0]
    figures: dict[str, Any] = {}
    print("Floods side by side: a new guest's page load / the box's press round-trip, "
          "median ms (inf: no answer in 15 s)")
    print(f"  {'flood':<34}{'before':>16}{'during':>16}{'after':>16}")
    try:
        for kind, label in (("idle", "12 addresses x 40 idle"),
                            ("slowloris", "12 addresses x 40 slowloris"),
                            ("pin", "60 addresses guessing the PIN")):
            before = page_and_press(port, 0, fresh, samples)
            extra = ""
            with Flooder(port, kind, settle_s) as flooder:
                during = page_and_press(port, 1, fresh, samples)
                if kind == "pin":
                    t0 = time.perf_counter()
                    while request(port, "POST", "/api/pin", source="127.62.0.1",
                                  headers={"X-Table-Pin": PIN}) != 204:
                        time.sleep(0.2)
                    right_ms = (time.perf_counter() - t0) * 1000
                    extra = (f"; the right PIN from a new address: {right_ms:.0f} ms; guesses "
                             f"checked {flooder.guesses[401]}, held {flooder.guesses[429]}")
                    figures["right_pin_ms"] = round(right_ms)
            time.sleep(settle_s * 2 / 3)
            after = page_and_press(port, 2, fresh, samples)
            cells = [f"{p:.0f} / {q:.0f}" for p, q in (before, during, after)]
            print(f"  {label:<34}{cells[0]:>16}{cells[1]:>16}{cells[2]:>16}{extra}")
            figures[kind] = {"before": before, "during": during, "after": after}
        guard = server.guard
        print(f"  the door: {guard.refused} connections answered 503 at once, {guard.evicted} "
              f"idle ones closed to make room, {guard.dropped} dropped at their deadline")
    finally:
        server.close()
        table.close()
    return figures


def full_disk(tmp: Path) -> dict[str, Any]:
    errors: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.ERROR:
                errors.append(record)

    handler = Keep()
    logging.getLogger().addHandler(handler)
    table, server = table_and_server(tmp / "full.db")
    try:
        (pages,) = table.store.conn.execute("PRAGMA page_count").fetchone()
        table.store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        port = server.port
        accepted = 0
        first_refusal = None
        while first_refusal is None:
            request(port, "POST", "/api/next-round", headers={"X-Table-Pin": PIN})
            for seat in SEATS:
                status = request(port, "POST", "/api/press", headers={"X-Table-Pin": PIN},
                                 body=json.dumps({"seat": seat}).encode())
                if status == 204:
                    accepted += 1
                else:
                    first_refusal = status
                    break
            time.sleep(0.35)
        engine = table.engine
        assert engine is not None
        snap = engine.command("snapshot")
        later = [request(port, "POST", "/api/press", headers={"X-Table-Pin": PIN},
                         body=json.dumps({"seat": "Blue"}).encode()) for _ in range(10)]
        conn = sqlite3.connect(f"file:{table.store.path}?mode=ro", uri=True)
        logged = sum(1 for (b,) in conn.execute("SELECT body FROM events")
                     if json.loads(b).get("type") == "press")
        conn.close()
        print(f"Full disk: {accepted} presses answered 204 before the disk filled, {logged} "
              f"presses in the log; the first press that could not be logged: {first_refusal}; "
              f"10 more: {sorted(set(later))}; phase {snap['phase']!r}; "
              f"error lines logged: {len(errors)} "
              f"({'with' if any(e.exc_info for e in errors) else 'no'} traceback)")
        print(f"  said and shown: {snap['storage_full']!r}")
        return {"accepted": accepted, "logged": logged, "refusal": first_refusal,
                "phase": snap["phase"], "error_lines": len(errors)}
    finally:
        server.close()
        table.close()
        logging.getLogger().removeHandler(handler)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--samples", type=int, default=5,
                        help="page loads and presses per median, before, during and after a flood")
    parser.add_argument("--settle-s", type=float, default=3.0,
                        help="how long a flood runs before it is measured (after one: 2/3 of it)")
    parser.add_argument("--request-s", type=float, default=None,
                        help="the slow requests' deadline (default: the guard's own)")
    args = parser.parse_args()
    use_mock_pins()
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        table, server = table_and_server(Path(tmp) / "pin.db")
        try:
            result["pin"] = brute_force(server.port, args.seconds, args.threads)
        finally:
            server.close()
            table.close()
        table, server = table_and_server(Path(tmp) / "flood.db")
        try:
            result["flood"] = flood(server.port, server, args.request_s)
        finally:
            server.close()
            table.close()
        result["side_by_side"] = side_by_side(Path(tmp), args.samples, args.settle_s)
        result["full_disk"] = full_disk(Path(tmp))
    print("RESULT " + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
