"""Idle cost: CPU and memory of `referee play --mock` while the table waits between rounds.

Starts ``referee play spank-the-pig --mock --no-speech --db <tmp> --option pause_ms=600000`` (plus
``--port <free port>`` when the scoreboard is served, so it never collides with another server),
waits until the table is idle (the scoreboard's /api/state says "ready": the table waits for
its players' first presses, or "ruled": round 1's race is over and the next round is 10 minutes
away; without a scoreboard, 8 s), from then on the referee only waits: on
its queue, on the scoreboard's sockets, then over the measuring window reads
/proc/<pid>/stat (utime + stime, clock ticks) and, for a finer figure, the sum of
/proc/<pid>/task/*/schedstat (ns on CPU); also voluntary context switches per second (how often
the process wakes up) and VmRSS / VmHWM from /proc/<pid>/status.

Last line: ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from child import Reader  # benchmarks/child.py (run as a script: its folder is on the path)

TARGET_CPU_PCT = 0.5
TARGET_RSS_MB = 80.0
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def referee_bin() -> str:
    return str(Path(sys.executable).with_name("referee"))


def stat_ticks(pid: int) -> int:
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of the whole line)


def task_totals(pid: int) -> tuple[int, dict[int, int]]:
    """(ns on CPU summed over the process's threads, voluntary switches of each thread)."""
    ns = 0
    switches: dict[int, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            ns += int((task / "schedstat").read_text().split()[0])
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    switches[int(task.name)] = int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return ns, switches


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=30.0)
    args = ap.parse_args()
    web = importlib.util.find_spec("referee.scoreboard.app") is not None
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as d:
        cmd = [referee_bin(), "play", "spank-the-pig", "--mock", "--no-speech",
               "--db", str(Path(d) / "idle.db"), "--option", "pause_ms=600000"]
        if web:
            cmd += ["--port", str(port)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=env)
        reader = Reader(proc)
        try:
            if reader.first("Table PIN", 30) is None:
                raise RuntimeError("the referee did not start within 30 s:\n"
                                   + reader.text(last=20))
            served = False
            phase: str | None = None
            deadline = time.monotonic() + 20
            if web:  # idle = round 1 over, the next one 10 minutes away
                # a table that waits for its players to be ready is idle too (it starts so)
                while time.monotonic() < deadline and phase not in ("ready", "ruled", "awaiting",
                                                                    "over"):
                    try:
                        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state",
                                                    timeout=5) as r:
                            served = r.status == 200
                            phase = json.loads(r.read()).get("phase")
                    except (OSError, ValueError):
                        pass
                    time.sleep(0.25)
            if not phase:  # no scoreboard to ask: round 1's window (cadence + 3 s) is over by then
                reader.first("Round 1:", 8)
            time.sleep(1.0)  # let round 1's announcements and the scoreboard refresh settle
            pid = proc.pid
            t0, ticks0 = time.monotonic(), stat_ticks(pid)
            ns0, sw0 = task_totals(pid)
            time.sleep(args.seconds)
            t1, ticks1 = time.monotonic(), stat_ticks(pid)
            ns1, sw1 = task_totals(pid)
            rss_kb, hwm_kb = status_kb(pid, "VmRSS"), status_kb(pid, "VmHWM")
            alive = proc.poll() is None
        finally:
            stop(proc)
    wall = t1 - t0
    cpu_pct_stat = 100 * (ticks1 - ticks0) / CLK_TCK / wall
    cpu_pct = 100 * (ns1 - ns0) / 1e9 / wall
    threads = len(sw1)
    per_thread = sorted(((sw1[t] - sw0.get(t, 0)) / wall for t in sw1), reverse=True)
    wakeups = sum(per_thread)
    busy = [round(x, 1) for x in per_thread if x > 0]
    rss_mb, hwm_mb = rss_kb / 1024, hwm_kb / 1024
    scoreboard = ("served, answering /api/state" if served else "served") if web else \
        "not served (referee.scoreboard.app does not exist yet)"
    print(f"idle over {wall:.1f} s (scoreboard {scoreboard}): CPU {cpu_pct_stat:.3f}% of one core "
          f"(/proc stat utime+stime, {ticks1 - ticks0} ticks of 1/{CLK_TCK} s; schedstat ns: "
          f"{cpu_pct:.3f}%), {wakeups:.1f} wake-ups/s, {threads} threads, of which {len(busy)} woke "
          f"({', '.join(f'{x:g}/s' for x in busy)})")
    print(f"memory: VmRSS {rss_mb:.1f} MB, VmHWM {hwm_mb:.1f} MB")
    summary: dict[str, Any] = {
        "name": "idle", "seconds": round(wall, 1), "command": " ".join(
            [Path(cmd[0]).name, *cmd[1:]]).replace(str(Path(d)), "<tmp>"),
        "web": web, "served": served, "phase": phase, "cpu_pct": round(cpu_pct_stat, 4),
        "cpu_pct_schedstat": round(cpu_pct, 4), "cpu_ticks": ticks1 - ticks0, "clk_tck": CLK_TCK,
        "wakeups_per_s": round(wakeups, 1), "threads": threads, "waking_threads_per_s": busy,
        "rss_mb": round(rss_mb, 1),
        "hwm_mb": round(hwm_mb, 1), "alive_at_end": alive,
        "target_cpu_pct": TARGET_CPU_PCT, "target_rss_mb": TARGET_RSS_MB,
        "cpu_met": cpu_pct_stat < TARGET_CPU_PCT, "rss_met": hwm_mb < TARGET_RSS_MB,
    }
    print("RESULT " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
