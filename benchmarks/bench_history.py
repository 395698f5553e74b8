"""/history and the game in play: what one history request costs while a long game grows.

A real SQLite file holds a Spank the Pig! game of 4 seats written as the live table writes it
(a cue, then the presses). The game first grows to `--rounds` rounds (5 lines a round: 11k events
at the default 2,200 rounds), then one round is logged between history requests, `--requests` times.
Each request opens its own reader connection, as the page does, and calls what `/history` calls.

Printed: the first sight of the game (one whole replay), the one-off build of the game's rules in
the background, and each request's time afterwards (median, p99, max), next to what one whole
replay of the same log costs (what every request cost before issue 16).

Last line: ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from referee.events import Cue, GameStart, Press
from referee.scoreboard import history
from referee.store.database import Store, connect, export_lines
from referee.store.tablelog import replay

SEATS = ("Blue", "Red", "Green", "Yellow")


def log_round(store: Store, game: int, number: int) -> None:
    cue = number * 3_000_000
    store.append(game, Cue(cue))
    last = SEATS[number % len(SEATS)]
    order = [s for s in SEATS if s != last] + [last]
    for i, seat in enumerate(order):
        store.append(game, Press(cue + 200_000 + i * 60_000 + number % 7 * 1000, seat, "slap"))


def request(path: Path) -> history.GameSummary:
    conn = connect(path, readonly=True)
    try:
        return history.past_games(conn, str(path))[-1]
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2200)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "referee.db"
        store = Store(path)
        game = store.new_game(GameStart("spank-the-pig", SEATS,
                                        {"deck": 10_000, "doubles": "off"}))
        for number in range(1, args.rounds + 1):
            log_round(store, game, number)
        conn = connect(path, readonly=True)
        events = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        t0 = time.perf_counter()
        replay(list(export_lines(conn, game)))
        whole_s = time.perf_counter() - t0
        conn.close()
        t0 = time.perf_counter()
        request(path)
        first_s = time.perf_counter() - t0
        number = args.rounds + 1
        log_round(store, game, number)
        t0 = time.perf_counter()
        while request(path).rounds < number:  # its rules are built once, in the background
            time.sleep(0.001)
        build_s = time.perf_counter() - t0
        times = []
        for _ in range(args.requests):
            number += 1
            log_round(store, game, number)
            t0 = time.perf_counter()
            summary = request(path)
            times.append(time.perf_counter() - t0)
            assert summary.rounds == number, (summary.rounds, number)
        store.close()
    times.sort()
    result = {
        "events": events, "whole_replay_ms": round(whole_s * 1000, 1),
        "first_request_ms": round(first_s * 1000, 1), "build_ms": round(build_s * 1000, 1),
        "request_median_ms": round(statistics.median(times) * 1000, 2),
        "request_p99_ms": round(times[int(len(times) * 0.99) - 1] * 1000, 2),
        "request_max_ms": round(times[-1] * 1000, 2), "requests": len(times),
    }
    print(f"a game of {events} events: one whole replay {result['whole_replay_ms']} ms "
          f"(what every /history request cost before)")
    print(f"first sight {result['first_request_ms']} ms; its rules built once in the background "
          f"in {result['build_ms']} ms")
    print(f"then a round logged between requests, {len(times)} requests: median "
          f"{result['request_median_ms']} ms, p99 {result['request_p99_ms']} ms, max "
          f"{result['request_max_ms']} ms, each current to the round just played")
    print("RESULT " + json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
