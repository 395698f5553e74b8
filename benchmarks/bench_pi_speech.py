"""Speech on a slow Pi, printed (nothing asserted): rendering under a CPU quota like a Zero 2 W's.

    .venv/bin/python benchmarks/bench_pi_speech.py [--quota 0.15] [--sample 40]

A Pi Zero 2 W has four Cortex-A53 cores at 1 GHz; one of them does roughly a sixth of the
single-thread work of a current desktop core (an estimate from public single-thread scores, not
a measurement on a Zero), so the render child is run with ``--quota`` of one core (default 15%):
the child's process group is stopped and continued (SIGSTOP/SIGCONT) to that duty cycle in
10 ms periods. ``--cgroup`` uses a cgroup CPU quota instead (root; cgroup v2 ``cpu.max`` or v1
``cpu.cfs_quota_us``); on this sandboxed build machine the cgroup quota throttled a busy loop to
60% instead of 15%, so the duty cycle, which can be checked, is the default.

Figures:
1. One whole ruling sentence rendered cold, at full speed and under the quota: how long a ruling
   waited for the speech engine before rulings were said from pre-rendered pieces.
2. The ruling pieces (every margin, every count): per piece, and the whole set at start-up
   (under the quota, a sample of ``--sample`` pieces, extrapolated).
3. A ruling said from pre-rendered pieces: the cost of joining them (all that is left on the
   ruling path), under the quota.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from referee.voice.phrases import prerender_texts, segments, text  # noqa: E402

RULING = {"seat": "Yellow", "reason": "last to spank the pig", "margin_us": 423_000,
          "count_words": "Two whammies"}

CHILD = r"""
import json, sys, time, tempfile
sys.path.insert(0, sys.argv[1])
from referee.voice.tts import Renderer, SpeechOptions
from referee.voice.sentence import join, tight
texts = json.loads(sys.stdin.read())
t0, c0 = time.perf_counter(), time.process_time()
while time.process_time() - c0 < 0.2:  # what share of a core this process really gets
    pass
share = 0.2 / (time.perf_counter() - t0)
renderer = Renderer(SpeechOptions(cache_dir=tempfile.mkdtemp()))
renderer.clip("Warm up.")  # the child process and the voice start once, at table start
out = {"texts": [], "share": share}
for t in texts["render"]:
    t0 = time.perf_counter(); renderer.clip(t); out["texts"].append(time.perf_counter() - t0)
clips = [renderer.clip(t) for t in texts["pieces"]]
t0 = time.perf_counter()
for _ in range(20):
    join(clips, tight(texts["pieces"]))
out["join"] = (time.perf_counter() - t0) / 20
renderer.close()
print(json.dumps(out))
"""


class Quota:
    """Limit a process (and its children) to `share` of one CPU."""

    def __init__(self, share: float, cgroup: bool = False) -> None:
        self.share = share
        self.cgroup = cgroup
        self.how = "none"
        self.path: Path | None = None
        self._stop = threading.Event()

    def apply(self, pid: int) -> None:
        period = 100_000
        quota = max(1000, int(period * self.share))
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        try:
            if not self.cgroup:
                raise OSError("duty cycle asked for")
            if v2.exists() and "cpu" in v2.read_text():
                self.path = Path(f"/sys/fs/cgroup/table-referee-bench-{os.getpid()}")
                self.path.mkdir()
                (self.path / "cpu.max").write_text(f"{quota} {period}")
                self.how = f"cgroup v2 cpu.max {quota}/{period}"
            else:
                self.path = Path(f"/sys/fs/cgroup/cpu/table-referee-bench-{os.getpid()}")
                self.path.mkdir()
                (self.path / "cpu.cfs_period_us").write_text(str(period))
                (self.path / "cpu.cfs_quota_us").write_text(str(quota))
                self.how = f"cgroup v1 cfs_quota {quota}/{period} µs"
            (self.path / "cgroup.procs").write_text(str(pid))
            return
        except OSError:
            self.path = None
        self.how = f"SIGSTOP/SIGCONT duty cycle {self.share:.0%} of 10 ms"
        threading.Thread(target=self._duty, args=(pid,), daemon=True).start()

    def _duty(self, pid: int) -> None:
        on, off = 0.01 * self.share, 0.01 * (1 - self.share)
        while not self._stop.is_set():
            try:
                os.killpg(pid, signal.SIGCONT)
                time.sleep(on)
                os.killpg(pid, signal.SIGSTOP)
                time.sleep(off)
            except ProcessLookupError:
                return
        try:
            os.killpg(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass

    def release(self) -> None:
        self._stop.set()
        if self.path is not None:
            for _ in range(50):
                try:
                    self.path.rmdir()
                    return
                except OSError:
                    time.sleep(0.1)


def run(texts: dict[str, list[str]], share: float | None, cgroup: bool = False) -> dict[str, object]:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    quota = Quota(share, cgroup) if share else None
    if quota is not None:
        quota.apply(child.pid)
    try:
        out, _ = child.communicate(json.dumps(texts), timeout=900)
    finally:
        if quota is not None:
            quota.release()
    result = json.loads(out)
    result["how"] = quota.how if quota else "full speed"
    return dict(result)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quota", type=float, default=0.15, help="share of one core (Zero 2 W)")
    parser.add_argument("--sample", type=int, default=40, help="pieces rendered under the quota")
    parser.add_argument("--cgroup", action="store_true", help="a cgroup quota, not a duty cycle")
    args = parser.parse_args()
    whole = text("ruling", RULING)
    pieces = segments("ruling", RULING)
    every = prerender_texts(["Blue", "Red", "Green", "Yellow"])
    step = max(1, len(every) // args.sample)
    sample = every[::step][: args.sample]

    fast = run({"render": [whole, *every], "pieces": pieces}, None)
    slow = run({"render": [whole, *sample], "pieces": pieces}, args.quota, args.cgroup)
    fast_t, slow_t = fast["texts"], slow["texts"]  # type: ignore[index]
    per_fast = sum(fast_t[1:]) / len(fast_t[1:])  # type: ignore[arg-type, index]
    per_slow = sum(slow_t[1:]) / len(slow_t[1:])  # type: ignore[arg-type, index]
    print(f"   quota: {slow['how']} (Zero 2 W estimate: {args.quota:.0%} of one core here); "
          f"measured share of a core: {float(fast['share']):.0%} free, "  # type: ignore[arg-type]
          f"{float(slow['share']):.0%} under the quota")  # type: ignore[arg-type]
    print(f"   a whole ruling sentence rendered when said (before): {fast_t[0] * 1000:.0f} ms "  # type: ignore[index]
          f"at full speed, {slow_t[0] * 1000:.0f} ms under the quota")  # type: ignore[index]
    print(f"   ruling pieces: {len(every)} (margins, counts); {per_fast * 1000:.0f} ms each at full "
          f"speed, {per_slow * 1000:.0f} ms under the quota")
    print(f"   pre-rendering them all at start (background, once: cached on disk): "
          f"{per_fast * len(every):.0f} s at full speed, about {per_slow * len(every):.0f} s "
          f"under the quota (from {len(sample)} pieces)")
    print(f"   a ruling said from pre-rendered pieces: joining costs "
          f"{float(slow['join']) * 1000:.2f} ms under the quota (was: the render above)")  # type: ignore[arg-type]
    print("   (wall-clock figures on a shared machine; other engineers' load inflates them)")
    print("RESULT " + json.dumps({
        "whole_ruling_ms_fast": round(fast_t[0] * 1000),  # type: ignore[index]
        "whole_ruling_ms_quota": round(slow_t[0] * 1000),  # type: ignore[index]
        "pieces": len(every), "piece_ms_fast": round(per_fast * 1000),
        "piece_ms_quota": round(per_slow * 1000),
        "prerender_s_quota": round(per_slow * len(every)),
        "join_ms_quota": round(float(slow["join"]) * 1000, 2),  # type: ignore[arg-type]
        "quota": slow["how"], "share_quota": round(float(slow["share"]), 2)}))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
