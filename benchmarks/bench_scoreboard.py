"""How fast does a ruling reach the scoreboards? Server-Sent Events against polling, on loopback.

A real Table on mocked pins plays Spank the Pig! by itself behind the real waitress server: after
each "PIG!" the four mocked slap buttons are pressed a few milliseconds apart, so every round ends in
a ruling ("last to spank the pig"). A listener subscribed to the
engine before the scoreboard's own stamps each ruling as the engine publishes it; N raw event-stream
clients stamp it as its `event: ruling` line arrives; a page that polls GET /api/state once a second
stamps the first answer that shows the round ruled. Prints median, p95 and max for 20 and 50 open
streams, and whether every client saw every ruling, in order.

    .venv/bin/python benchmarks/bench_scoreboard.py [--rounds 15] [--clients 20 50]
"""

from __future__ import annotations

import argparse
import io
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.cli.table import Table, use_mock_pins  # noqa: E402
from referee.config import default_config  # noqa: E402
from referee.scoreboard.app import serve_in_thread  # noqa: E402

OPTIONS = {"pause_ms": 1200, "tempo_ms": 100, "window_ms": 150, "deck": 4000, "doubles": "off"}


class StreamClient(threading.Thread):
    """One open scoreboard: reads the event stream, stamps each ruling as it arrives."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.seen: dict[int, float] = {}
        self.order: list[int] = []
        self.connected = threading.Event()
        self.stop = False

    def run(self) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.settimeout(0.5)
        buf = b""
        while not self.stop:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                break
            now = time.perf_counter()
            buf += chunk
            self.connected.set()
            # chunked transfer framing lines never start with "event:" or "data:"
            while b"\n\n" in buf:
                msg, buf = buf.split(b"\n\n", 1)
                lines = msg.split(b"\n")
                if b"event: ruling" in lines:
                    data = next(x for x in lines if x.startswith(b"data: "))
                    number = json.loads(data[6:])["round"]
                    self.seen.setdefault(number, now)
                    self.order.append(number)
        sock.close()


class Poller(threading.Thread):
    """A page polling GET /api/state once a second."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.seen: dict[int, float] = {}
        self.stop = False

    def run(self) -> None:
        while not self.stop:
            started = time.perf_counter()
            with urllib.request.urlopen(self.url + "api/state") as resp:
                state = json.loads(resp.read())
            now = time.perf_counter()
            number = state["round"]
            ruled = state["phase"] not in ("cadence", "race")
            for n in range(1, number + (1 if ruled else 0)):
                self.seen.setdefault(n, now)
            time.sleep(max(0.0, 1.0 - (time.perf_counter() - started)))


def figures(values_ms: list[float]) -> str:
    if not values_ms:
        return "no samples"
    values_ms = sorted(values_ms)
    p95 = values_ms[min(len(values_ms) - 1, int(round(0.95 * (len(values_ms) - 1))))]
    return (f"median {statistics.median(values_ms):7.2f} ms   p95 {p95:7.2f} ms   "
            f"max {values_ms[-1]:7.2f} ms   (n={len(values_ms)})")


def run(clients: int, rounds: int) -> None:
    use_mock_pins()
    with tempfile.TemporaryDirectory() as tmp:
        table = Table(default_config(["Blue", "Red", "Green", "Yellow"]), db=Path(tmp) / "b.db",
                      mock=True, no_speech=True, pin="0000", out=io.StringIO(), auto=False)
        engine = table.start("spank-the-pig", OPTIONS, resume=False)
        published: dict[int, float] = {}
        racing: list[int] = []
        go = threading.Event()

        def stamp(kind: str, data: dict[str, Any]) -> None:
            if kind == "ruling" and not data["correction"]:
                published.setdefault(data["round"], time.perf_counter())
            elif kind == "state" and data["phase"] == "race" and data["round"] not in racing:
                racing.append(data["round"])
                go.set()  # the listener never waits: the slapper thread presses

        def slapper() -> None:
            while not done.is_set():
                if go.wait(0.2):
                    go.clear()
                    for seat in ("Blue", "Red", "Green", "Yellow"):
                        time.sleep(0.01)
                        table.box.press(seat, "slap")

        done = threading.Event()
        threading.Thread(target=slapper, daemon=True).start()

        engine.subscribe(stamp)  # before the scoreboard's listener: we stamp first
        server = serve_in_thread(table, "127.0.0.1", 0)
        streams = [StreamClient(server.port) for _ in range(clients)]
        for s in streams:
            s.start()
        for s in streams:
            s.connected.wait(5)
        poller = Poller(server.url)
        poller.start()
        engine.auto = True  # go: rounds start by themselves
        engine.command("resume")
        deadline = time.monotonic() + rounds * 3 + 10
        while len(published) < rounds and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.2)  # let the last ruling reach everyone (and one more poll)
        done.set()
        for s in streams:
            s.stop = True
        poller.stop = True
        server.close()
        table.close()
    wanted = sorted(n for n in published if n <= rounds)
    sse = [(s.seen[n] - published[n]) * 1000 for s in streams for n in wanted if n in s.seen]
    missing = sum(1 for s in streams for n in wanted if n not in s.seen)
    in_order = all(s.order == sorted(s.order) for s in streams)
    polled = [(poller.seen[n] - published[n]) * 1000 for n in wanted if n in poller.seen]
    print(f"{clients} open event streams, {len(wanted)} rulings:")
    print(f"  SSE  publish → received : {figures(sse)}")
    print(f"       every stream saw every ruling: {missing == 0} (missing {missing}); "
          f"in order: {in_order}")
    print(f"  poll GET /api/state 1/s : {figures(polled)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--clients", type=int, nargs="+", default=[20, 50])
    args = parser.parse_args()
    for n in args.clients:
        run(n, args.rounds)


if __name__ == "__main__":
    main()
