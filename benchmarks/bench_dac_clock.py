"""The go-word's DAC time on a card whose pointer steps, against the instant it is really played.

A simulated minute (or ``--seconds``) of a table's speaker: PortAudio's ALSA host API on a USB
card behind dmix (its pointer steps every 1024 frames at 48 kHz), PortAudio's thread waking
after each step (one wake in ten 3-15 ms late), the Python callback entered 0.1 ms + an
exponential 0.8 ms later, and ``--xruns`` stalls of 120 ms (each an xrun: ALSA restarts the
card, every later frame plays 70 ms later). tests/fakeaudio.py is the card, tests/dacsim.py the
harness. For every callback: the sink's frame -> engine-time map at its first frame minus the
true DAC instant (late is +). The referee's `DacClock` (windowed minimum, re-anchored on an
xrun) beside the exponential average it replaced, in the same run, for both kinds of ALSA
stamp: ``now`` (the status call's time: today's kernels) and ``step`` (the pointer's last move).

    .venv/bin/python benchmarks/bench_dac_clock.py [--seconds 60] [--xruns 4]

Last line: ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.dacsim import Run, simulate  # noqa: E402

BOUND_US = 500.0  # today's kernels' stamps: every cue within 0 to +0.5 ms


class EmaClock:
    """The exponential average the referee used before (2 % per reading, no outlier rejection)."""

    def __init__(self, samplerate: int) -> None:
        self.samplerate = samplerate
        self.base_us: float | None = None

    def reset(self) -> None:
        self.base_us = None

    def update_at(self, frame: int, dac_us: float, **_: Any) -> None:
        base = dac_us - frame * 1e6 / self.samplerate
        self.base_us = base if self.base_us is None else self.base_us + 0.02 * (base - self.base_us)

    def frame_to_us(self, frame: int, fallback_now: int) -> int:
        base = self.base_us if self.base_us is not None else float(fallback_now)
        return round(base + frame * 1e6 / self.samplerate)


def entry_us(rng: Any) -> int:
    return int(100 + rng.exponential(800))


def figures(run: Run) -> dict[str, float]:
    steady = run.steady(skip_s=2.0, after_xrun=50)
    first = run.after_xruns(0)
    later = run.after_xruns(24)
    return {"steady_min_us": min(steady), "steady_median_us": statistics.median(steady),
            "steady_max_us": max(steady),
            "xrun_first_worst_us": max(first, key=abs) if first else 0.0,
            "xrun_25th_worst_us": max(later, key=abs) if later else 0.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--xruns", type=int, default=4)
    args = ap.parse_args()
    at = [args.seconds * (k + 1) / (args.xruns + 1) for k in range(args.xruns)]
    out: dict[str, Any] = {"seconds": args.seconds, "xruns": args.xruns}
    print(f"{args.seconds:g} s of stream time, {args.xruns} xruns, 10 ms blocks at 48 kHz; "
          "error = map - true DAC instant (late is +), µs")
    print(f"{'clock':<22} {'stamp':<5} {'min':>8} {'median':>8} {'max':>8} "
          f"{'xrun: 1st':>10} {'25th':>8}")
    for name, cls in (("DacClock (referee)", None), ("exponential average", EmaClock)):
        for tstamp in ("now", "step"):
            run = simulate(args.seconds, tstamp=tstamp, xruns_at=at, entry_us=entry_us,
                           clock_class=cls)
            f = figures(run)
            out[f"{'referee' if cls is None else 'ema'}_{tstamp}"] = f
            print(f"{name:<22} {tstamp:<5} {f['steady_min_us']:8.0f} {f['steady_median_us']:8.0f} "
                  f"{f['steady_max_us']:8.0f} {f['xrun_first_worst_us']:10.0f} "
                  f"{f['xrun_25th_worst_us']:8.0f}", flush=True)
    ours = out["referee_now"]
    worst = max(abs(ours["steady_min_us"]), abs(ours["steady_max_us"]),
                abs(ours["xrun_first_worst_us"]))
    out["figure"] = f"{worst / 1000:.2f} ms worst (peer: {out['ema_now']['steady_max_us'] / 1000:.1f} ms)"
    out["met"] = worst <= BOUND_US
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
