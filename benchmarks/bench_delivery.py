"""Edge → engine on lgpio's path: how late presses reach the engine, against what it waits.

On a Pi an edge reaches the engine in steps: lg's alert thread (C) ppoll()s the lines with a 0.5 ms
timeout and writes each edge, with its kernel timestamp, into a notification pipe once it is at
least 0.5 ms old (lgPthAlerts.c: ≤ 1 ms in the library); the lgpio module's Python thread reads the
pipe 16 bytes at a time and calls gpiozero's callback, our `ButtonBox`; the box's confirmer thread
emits the press to the engine's queue once it has been low `confirm_us` and every edge up to then
has surely arrived (`EdgeTiming.delivery_us`). The engine rules a race only `box.settled_us` past
its close. Two figures, measured here with the real `ButtonBox` (its confirmer thread running) and
the real engine thread, a writer thread standing in for lg at its best (it writes a 16-byte record
to an `os.pipe` the instant it stamps the edge):

* callback lateness: edge → our callback runs. With lg's own ≤ 1 ms it must stay within
  `LGPIO_DELIVERY_US`, or the box's glitch check (and the engine) could miss an edge;
* confirmer lateness: how far past its deadline (edge + confirm + delivery) the press reaches the
  engine's queue. It must stay within `CONFIRMER_WAKE_US`, the rest of the engine's wait.

With `--busy` a third thread keeps the GIL busy the way the scoreboard does (JSON of a state
snapshot, in a loop); the engine sets its GIL switch interval to 0.5 ms as it does at the table.
Beside them, the floor in the same run: a bare Python thread woken through a queue (what the
machine's scheduler alone costs; on a loaded shared machine it, not the referee, sets the tail).

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

from referee.capture.gpio import CONFIRMER_WAKE_US, LGPIO_DELIVERY_US, ButtonBox
from referee.clock import now_us
from referee.config import default_config
from referee.engine.loop import open_game
from referee.events import GameStart, Press
from referee.store.database import Store
from referee.voice.announce import PrintAnnouncer

LG_LIBRARY_US = 1000  # lg's alert thread: an edge leaves once 0.5 ms old, polled every 0.5 ms
RECORD = struct.Struct("QBBBBI")  # lgpio's notification record: tick, chip, gpio, level, flags


def pct(values: list[int], q: float) -> int:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


class LGPIOFactory(MockFactory):  # type: ignore[misc]
    """Mock pins on the monotonic clock whose callbacks the lgpio-like reader thread calls; named
    like gpiozero's class, so the box times it as lgpio."""

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


def figures(values: list[int]) -> dict[str, int]:
    return {"median_us": pct(values, 50), "p99_us": pct(values, 99), "max_us": max(values)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presses", type=int, default=1000)
    parser.add_argument("--busy", action="store_true", help="keep the GIL busy meanwhile")
    args = parser.parse_args()
    seats = ["Blue", "Red", "Green", "Yellow"]
    config = default_config(seats)
    factory = LGPIOFactory()
    callback_late: list[int] = []  # our callback runs − edge time, µs
    confirm_late: list[int] = []  # on the engine's queue − the press's deadline, µs
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "d.db")
        engine = open_game(store, GameStart("pig", tuple(seats), {"window_ms": 600000}),
                           PrintAnnouncer(io.StringIO(), quiet=True), auto=False)
        box: ButtonBox | None = None

        def sink(event: Any) -> None:  # the engine's queue
            if isinstance(event, Press) and box is not None:
                due = event.t_us + box.confirm_us + box.timing.delivery_us
                confirm_late.append(max(0, now_us() - due))
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
                    if level == 0:
                        callback_late.append(now_us() - tick_ns // 1000)
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
    floor = bare_handoff(len(callback_late) or 1)
    if not callback_late or not confirm_late:
        print("no press reached the engine", file=sys.stderr)
        return 1
    cb, cf = figures(callback_late), figures(confirm_late)
    met = (LG_LIBRARY_US + cb["max_us"] <= LGPIO_DELIVERY_US
           and cf["max_us"] <= CONFIRMER_WAKE_US)
    fig = {"presses": len(confirm_late), "callback": cb, "confirmer": cf,
           "lg_library_us": LG_LIBRARY_US, "delivery_us": LGPIO_DELIVERY_US,
           "confirmer_wake_us": CONFIRMER_WAKE_US, "floor": figures(floor), "met": met,
           "worst_total_us": LG_LIBRARY_US + cb["max_us"], "busy": args.busy}
    busy = "GIL kept busy" if args.busy else "GIL free"
    print(f"{len(confirm_late)} presses on lgpio's Python path ({busy}), load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"edge → callback: median {cb['median_us']} µs, p99 {cb['p99_us']} µs, max "
          f"{cb['max_us']} µs; with lg's own ≤ {LG_LIBRARY_US} µs: {fig['worst_total_us']} µs "
          f"against {LGPIO_DELIVERY_US} µs")
    print(f"confirmer past its deadline: median {cf['median_us']} µs, p99 {cf['p99_us']} µs, "
          f"max {cf['max_us']} µs against {CONFIRMER_WAKE_US} µs")
    print(f"floor, a bare thread woken through a queue in the same run: median "
          f"{pct(floor, 50)} µs, p99 {pct(floor, 99)} µs, max {floor[-1]} µs")
    print("RESULT " + json.dumps(fig))
    return 0


if __name__ == "__main__":
    sys.exit(main())
