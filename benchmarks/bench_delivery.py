"""Edge → engine delivery on lgpio's path, and whether `LGPIO_DELIVERY_US` bounds it.

On a Pi an edge reaches the engine in three steps: lg's alert thread (C) ppoll()s the lines with a
0.5 ms timeout and writes the edge, with its kernel timestamp, into a notification pipe; the lgpio
module's Python thread reads the pipe 16 bytes at a time and calls gpiozero's callback (our
`ButtonBox`), which puts the press on the engine's queue; the engine thread takes it. The first
step is bounded from lg's source (lgPthAlerts.c): ≤ 1 ms (read on the next poll turn, at most one
turn held back). The Python steps are measured here, on this machine, with the real `ButtonBox`
and the real engine thread running: a writer thread stamps an edge and writes a 16-byte record to
an `os.pipe` the instant it happens (lg at its best), a reader thread does what lgpio's does, and
the figure is (the press is on the engine's queue) − (edge timestamp). That is the whole of it:
the engine reads its clock before it takes what is queued, so a press queued by then is in the
rules before they are told that time has come, however busy the engine thread itself is.
With `--busy` a third thread keeps the GIL busy the way the scoreboard does (JSON of a state
snapshot, in a loop); the engine sets its GIL switch interval to 0.5 ms as it does at the table.
Beside it, the floor in the same run: a bare Python thread woken through a queue (what the machine's
scheduler alone costs; on a loaded shared machine it, not the referee, sets the tail).

Last line: ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import queue
import random
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPin
from gpiozero.pins.pi import PiPin

from referee.capture.gpio import LGPIO_DELIVERY_US, ButtonBox
from referee.clock import now_us
from referee.config import default_config
from referee.engine.loop import open_game
from referee.events import GameStart, Press
from referee.store.database import Store
from referee.voice.announce import PrintAnnouncer

LG_LIBRARY_US = 1000  # lg's alert thread: the next 0.5 ms poll turn, plus one turn held back
RECORD = struct.Struct("QBBBBI")  # lgpio's notification record: tick, chip, gpio, level, flags


def pct(values: list[int], q: float) -> int:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


class Pins(MockFactory):  # type: ignore[misc]
    """Mock pins whose callbacks we call ourselves, from the lgpio-like reader thread."""

    def __init__(self) -> None:
        super().__init__(pin_class=MockPin)

    def ticks(self) -> float:
        return time.monotonic_ns() / 1e9


def bare_handoff(samples: int) -> list[int]:
    """µs from put() to get() between two bare threads: the scheduler's own floor."""
    q: queue.SimpleQueue[int] = queue.SimpleQueue()
    out: list[int] = []

    def take() -> None:
        for _ in range(samples):
            sent = q.get()
            out.append(now_us() - sent)

    t = threading.Thread(target=take, daemon=True)
    t.start()
    for _ in range(samples):
        q.put(now_us())
        time.sleep(0.005)
    t.join(5)
    return sorted(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presses", type=int, default=2000)
    parser.add_argument("--busy", action="store_true", help="keep the GIL busy meanwhile")
    args = parser.parse_args()
    seats = ["Blue", "Red", "Green", "Yellow"]
    config = default_config(seats)
    factory = Pins()
    late: list[int] = []  # engine has it − edge time, µs
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "d.db")
        engine = open_game(store, GameStart("pig", tuple(seats), {"window_ms": 600000}),
                           PrintAnnouncer(io.StringIO(), quiet=True), auto=False)

        def sink(event: Any) -> None:  # the engine's queue: what is in it counts at its next turn
            if isinstance(event, Press):
                late.append(now_us() - event.t_us)
            engine.submit(event)

        box = ButtonBox(config, sink, factory=factory)
        engine.start()
        pins = {config.seat(s).slap: factory.pin(config.seat(s).slap) for s in seats}
        read_fd, write_fd = os.pipe()
        stop = threading.Event()

        def reader() -> None:  # the lgpio module's notification thread
            with open(read_fd, "rb") as pipe:
                while True:
                    data = pipe.read(RECORD.size)
                    if len(data) < RECORD.size:
                        return
                    tick_ns, _, gpio, level, _, _ = RECORD.unpack(data)
                    pin = pins[gpio]
                    pin._state = bool(level)
                    PiPin._call_when_changed(pin, tick_ns / 1e9, level)

        def busy() -> None:  # the scoreboard, serialising state while the table plays
            snap = engine.snapshot()
            while not stop.is_set():
                json.dumps(snap)

        threads = [threading.Thread(target=reader, daemon=True)]
        if args.busy:
            threads.append(threading.Thread(target=busy, daemon=True))
        for t in threads:
            t.start()
        rng = random.Random(7)
        with open(write_fd, "wb", buffering=0) as pipe:
            for _ in range(args.presses):
                gpio = rng.choice(list(pins))
                for level in (0, 1):  # press, release 20 ms later
                    pipe.write(RECORD.pack(time.monotonic_ns(), 0, gpio, level, 0, 0))
                    time.sleep(0.02 if level == 0 else rng.uniform(0.005, 0.015))
            time.sleep(0.2)
        stop.set()
        engine.stop()
        box.close()
        store.close()
    floor = bare_handoff(len(late) or 1)
    late.sort()
    if not late:
        print("no press reached the engine", file=sys.stderr)
        return 1
    bound = LG_LIBRARY_US + late[-1]
    fig = {"presses": len(late), "median_us": pct(late, 50), "p99_us": pct(late, 99),
           "p999_us": pct(late, 99.9), "max_us": late[-1], "lg_library_us": LG_LIBRARY_US,
           "bound_us": LGPIO_DELIVERY_US, "worst_total_us": bound,
           "met": bound <= LGPIO_DELIVERY_US}
    fig["floor"] = {"median_us": pct(floor, 50), "p99_us": pct(floor, 99), "max_us": floor[-1]}
    busy = "GIL kept busy" if args.busy else "GIL free"
    print(f"edge → engine on lgpio's Python path ({len(late)} presses, {busy}): median "
          f"{fig['median_us']} µs, p99 {fig['p99_us']} µs, p99.9 {fig['p999_us']} µs, "
          f"max {fig['max_us']} µs")
    print(f"floor, a bare thread woken through a queue in the same run: median "
          f"{pct(floor, 50)} µs, p99 {pct(floor, 99)} µs, max {floor[-1]} µs; load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"with lg's own ≤ {LG_LIBRARY_US} µs: worst {bound} µs against the engine's wait of "
          f"{LGPIO_DELIVERY_US} µs ({'within' if fig['met'] else 'OVER'})")
    print("RESULT " + json.dumps(fig))
    return 0


if __name__ == "__main__":
    sys.exit(main())
