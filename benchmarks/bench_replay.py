"""Replay speed: events per second re-ruling a long generated table log.

The log is Spank the Pig! for 4 seats (doubles on the buttons), 10,000 rounds, generated with a
fixed seed: plain pigs, doubles races, empty rounds, split slaps answered by the judge (pigs 0 or 1),
corrections (pigs 2 or 3), early slaps, photo finishes, penalties, penalties undone, voided rounds.
The deck option stops at 10,000 cards, so 4 seats get 2,500 regular rounds; the generator keeps all
four seats level (roles rotate every 4 rounds), and the remaining rounds are sudden death rounds
that knock nobody out (every seat sheds, or every seat takes one, or nobody, or too close to call).

Sizes are replayed smallest first (1,000 rounds up to 10,000; the largest three times, median);
a size whose projected time would overrun the budget is skipped and reported as such. The largest
size that fits the budget is then profiled with cProfile and its hot spots are printed (the
figure itself is always taken without the profiler).

Last line: ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import random
import sys
import time
from typing import Any

from referee.store.tablelog import dumps, replay

SEATS = ("Blue", "Red", "Green", "Yellow")
TARGET_EPS = 50_000
REGULAR_KINDS = [  # (kind, weight) for a block of 4 rounds with rotating roles
    ("pig", 30), ("pig_doubles", 15), ("nopig", 10), ("split_nopig", 10), ("split_pig", 10),
    ("two_pigs", 5), ("three_pigs", 5), ("early", 5), ("penalty", 5), ("close", 3),
    ("penalty_undo", 2),
]
SUDDEN_KINDS = [  # every seat ends each sudden-death round level with the others
    ("sd_all_shed", 25), ("sd_nobody", 20), ("sd_close", 20), ("sd_all_pen", 20), ("sd_void", 10),
    ("sd_pen_undo", 5),
]


def _pick(rng: random.Random, kinds: list[tuple[str, int]]) -> str:
    return rng.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]


def _slaps(rng: random.Random, cue: int, who: list[str], close: bool) -> list[dict[str, Any]]:
    """Slaps in role order, 40 ms apart (± 30 ms); `close`: the last one under tie_us behind."""
    out: list[dict[str, Any]] = []
    t = cue
    for i, seat in enumerate(who):
        if close and i == len(who) - 1:
            t = t + rng.randint(100, 900)  # a photo finish
        else:
            t = cue + 200_000 + i * 40_000 + rng.randint(0, 30_000)
        out.append({"type": "press", "t_us": t, "seat": seat, "button": "slap"})
    return out


def _doubles(rng: random.Random, cue: int, who: list[str]) -> list[dict[str, Any]]:
    return [{"type": "press", "t_us": cue + 300_000 + i * 35_000 + rng.randint(0, 25_000),
             "seat": seat, "button": "double"} for i, seat in enumerate(who)]


def generate(rounds: int, seed: int = 8) -> list[str]:
    """A table log of `rounds` rounds (JSON Lines, as `referee export` writes it)."""
    rng = random.Random(seed)
    deck = min(10_000, 4 * rounds)
    regular = deck // len(SEATS)
    out = [dumps({"type": "game", "game": "spank-the-pig", "seats": list(SEATS),
                  "options": {"deck": deck, "doubles": "buttons", "tie_us": 1000,
                              "window_ms": 3000, "early_ms": 1500, "tempo_ms": 500,
                              "pause_ms": 4000}})]
    kind = "pig"
    for r in range(1, rounds + 1):
        if r <= regular:
            if (r - 1) % 4 == 0:
                kind = _pick(rng, REGULAR_KINDS)
        else:
            kind = _pick(rng, SUDDEN_KINDS)
        roles = [SEATS[(i + r) % 4] for i in range(4)]  # role 0 presses first, role 3 last
        cue = 1_000_000 + r * 5_000_000
        timed: list[dict[str, Any]] = []
        judge: list[dict[str, Any]] = []

        if kind in ("pig", "two_pigs", "three_pigs", "penalty", "penalty_undo", "sd_all_shed",
                    "sd_all_pen", "sd_void"):
            timed += _slaps(rng, cue, roles, False)
        if kind == "pig_doubles":
            timed += _slaps(rng, cue, roles, False)
            timed += _doubles(rng, cue, roles)
        if kind == "split_nopig":
            timed += _slaps(rng, cue, roles[:1], False)
            judge.append({"type": "facts", "round": r, "pigs": 0})
        if kind == "split_pig":
            timed += _slaps(rng, cue, roles[:3], False)
            judge.append({"type": "facts", "round": r, "pigs": 1})
        if kind == "two_pigs":
            judge.append({"type": "facts", "round": r, "pigs": 2})
        if kind == "three_pigs":
            judge.append({"type": "facts", "round": r, "pigs": 3})
        if kind == "sd_all_shed":
            judge.append({"type": "facts", "round": r, "pigs": 4})
        if kind == "early":
            timed.append({"type": "press", "t_us": cue - 300_000, "seat": roles[0],
                          "button": "slap"})
            timed += _slaps(rng, cue, roles, False)
        if kind in ("close", "sd_close", "sd_pen_undo"):
            timed += _slaps(rng, cue, roles, True)
        if kind == "penalty":
            judge.append({"type": "penalty", "round": r, "seat": roles[1], "count": 1,
                          "reason": "slapped the hippo"})
        if kind in ("penalty_undo", "sd_pen_undo"):
            judge.append({"type": "penalty", "round": r, "seat": roles[2], "count": 1,
                          "reason": "slapped the cow"})
            judge.append({"type": "undo"})
        if kind == "sd_all_pen":
            for seat in roles[:3]:  # role 3 was last: everyone takes one
                judge.append({"type": "penalty", "round": r, "seat": seat, "count": 1,
                              "reason": "slapped the hippo"})
        if kind == "sd_void":
            judge.append({"type": "facts", "round": r, "void": True})
        cue_line = {"type": "cue", "t_us": cue}
        for ev in sorted([cue_line, *timed], key=lambda e: e["t_us"]):
            out.append(dumps(ev))
        out += [dumps(ev) for ev in judge]
    return out


def time_replay(lines: list[str]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = replay(lines)
    return time.perf_counter() - t0, result


def profile(lines: list[str], top: int = 12) -> list[dict[str, Any]]:
    prof = cProfile.Profile()
    prof.enable()
    replay(lines)
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    rows = []
    for (path, line, func), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        short = path.split("/referee/")[-1] if "/referee/" in path else path.rsplit("/", 1)[-1]
        rows.append({"func": f"{short}:{line}({func})", "calls": ncalls,
                     "tottime_s": round(tottime, 3), "cumtime_s": round(cumtime, 3)})
    rows.sort(key=lambda r: r["tottime_s"], reverse=True)
    return rows[:top]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--budget", type=float, default=120.0, help="seconds for the whole script")
    args = ap.parse_args()
    start = time.monotonic()
    sizes = sorted({s for s in (1_000, 2_000, 5_000, args.rounds) if s <= args.rounds})
    runs: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    prev: tuple[int, float] | None = None
    for size in sizes:
        lines = generate(size)
        events = len(lines)
        if prev is not None:
            # project from the previous size, assuming time grows as the square of the rounds
            projected = prev[1] * (size / prev[0]) ** 2
            left = args.budget - (time.monotonic() - start)
            if projected > left * 0.6:
                skipped.append({"rounds": size, "events": events, "projected_s": round(projected, 1)})
                print(f"  replay {size:>6} rounds ({events} events): skipped, projected "
                      f"{projected:.0f} s (quadratic) > budget left {left:.0f} s", flush=True)
                continue
        result: Any
        secs, result = time_replay(lines)
        if size == args.rounds:  # the median of 3, holding one result at a time
            times = [secs]
            for _ in range(2):
                result = None
                gc.collect()
                t, result = time_replay(lines)
                times.append(t)
            secs = sorted(times)[1]
        gc_off = None
        if size == args.rounds:  # how much of it is the cyclic garbage collector
            result_keep, result = result, None
            gc.collect()
            gc.disable()
            try:
                gc_off, _ = time_replay(lines)
            finally:
                gc.enable()
            result = result_keep
        counted = sum(1 for r in result.rules.rounds if getattr(r, "counted", True))
        eps = events / secs
        runs.append({"rounds": size, "events": events, "seconds": round(secs, 3),
                     "seconds_gc_off": None if gc_off is None else round(gc_off, 3),
                     "events_per_s": round(eps), "rounds_ruled": counted,
                     "outputs": len(result.outputs), "final": result.standings.final})
        print(f"  replay {size:>6} rounds ({events} events): {secs:.2f} s = {eps:,.0f} events/s"
              f"  [{counted} rounds ruled, {len(result.outputs)} rulings]", flush=True)
        if gc_off is not None:
            print(f"         same, garbage collector off: {gc_off:.2f} s = {events / gc_off:,.0f}"
                  " events/s", flush=True)
        prev = (size, secs)
        result = None
        gc.collect()
    biggest = max(runs, key=lambda r: r["rounds"])
    met = biggest["rounds"] == args.rounds and biggest["events_per_s"] >= TARGET_EPS
    hot: list[dict[str, Any]] = []
    hot_gc_off: list[dict[str, Any]] = []
    # where the time goes: profile the largest size that fits what is left of the budget
    # (cProfile roughly doubles the time)
    left = args.budget - (time.monotonic() - start)
    pick = next((r for r in sorted(runs, key=lambda r: r["rounds"], reverse=True)
                 if r["seconds"] * 2.5 < left * 0.8), None)
    if pick is not None:
        hot = profile(generate(pick["rounds"]), top=8)
        print(f"  profile of the {pick['rounds']}-round replay (cProfile, by own time):")
        for h in hot:
            print(f"    {h['tottime_s']:>7.2f} s own {h['cumtime_s']:>7.2f} s cum "
                  f"{h['calls']:>10} calls  {h['func']}")
        hot = [{**h, "profiled_rounds": pick["rounds"]} for h in hot]
        gc.collect()
        gc.disable()
        try:
            hot_gc_off = profile(generate(pick["rounds"]), top=6)
        finally:
            gc.enable()
        print("  same, garbage collector off:")
        for h in hot_gc_off:
            print(f"    {h['tottime_s']:>7.2f} s own {h['cumtime_s']:>7.2f} s cum "
                  f"{h['calls']:>10} calls  {h['func']}")
    summary = {
        "name": "replay",
        "target_events_per_s": TARGET_EPS,
        "runs": runs,
        "skipped": skipped,
        "events_per_s": biggest["events_per_s"],
        "at_rounds": biggest["rounds"],
        "met": met,
        "hot_spots": hot,
        "hot_spots_gc_off": hot_gc_off,
        "seconds": round(time.monotonic() - start, 1),
    }
    print("RESULT " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
