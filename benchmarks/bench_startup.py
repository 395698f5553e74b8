"""Start-up: process start to the scoreboard answering GET /api/state, with a warm speech cache.

Runs ``referee play spank-the-pig --mock --new --db <tmp> --port <free>`` with speech on and a
private speech cache (XDG_CACHE_HOME in a temporary folder): one cold run fills the cache, then
`--runs` warm runs are timed from just before the process is spawned to the first 200 answer of
/api/state (polled with urllib every 5 ms). Each run also notes when the "Table PIN" line appeared.
If `referee.scoreboard.app` does not exist, the figure is process start to the "Table PIN" line instead.
For scale, the bare interpreter (``python -c pass``) and ``python -c "import referee.cli.main"`` are
timed the same way.

Last line: ``RESULT {json}``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from child import Reader  # benchmarks/child.py (run as a script: its folder is on the path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def rss_kb(pid: int, key: str = "VmRSS") -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            kids += [int(x) for x in task.read_text().split()]
        except OSError:
            continue
    return kids


def cache_filled(cache: Path, proc: subprocess.Popen[str], timeout: float,
                 still_s: float = 5.0) -> float:
    """Wait until the table has rendered its whole cache (no new clip for `still_s`); the seconds
    it took (the cold run renders every phrase and ruling piece behind play)."""
    t0 = time.monotonic()
    count, since = -1, t0
    while time.monotonic() - t0 < timeout and proc.poll() is None:
        now = len(list(cache.glob("*/*/*.json")))
        if now != count:
            count, since = now, time.monotonic()
        elif time.monotonic() - since >= still_s:
            break
        time.sleep(0.25)
    return since - t0


def one_run(tmp: Path, n: int, env: dict[str, str], web: bool, timeout: float,
            settle_s: float = 0.0, fill: bool = False) -> dict[str, Any]:
    port = free_port()
    cmd = [str(Path(sys.executable).with_name("referee")), "play", "spank-the-pig", "--mock",
           "--new", "--db", str(tmp / f"start{n}.db"), "--port", str(port)]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    reader = Reader(proc)
    answered = None
    try:
        if web:
            url = f"http://127.0.0.1:{port}/api/state"
            while time.monotonic() - t0 < timeout and proc.poll() is None:
                try:
                    with urllib.request.urlopen(url, timeout=2) as r:
                        if r.status == 200:
                            r.read()
                            answered = time.monotonic()
                            break
                except OSError:
                    pass
                time.sleep(0.005)
        # the scoreboard may answer before the PIN line has come through the pipe: wait for it
        pin = reader.first("Table PIN", 5.0 if answered else timeout)
        filled = cache_filled(Path(env["XDG_CACHE_HOME"]), proc, 600.0) if fill else None
        memory: dict[str, float] = {}
        if settle_s and proc.poll() is None:  # the table speaking, its cache warm
            time.sleep(settle_s)
            kids = children(proc.pid)
            memory = {"rss_mb": rss_kb(proc.pid) / 1024, "hwm_mb": rss_kb(proc.pid, "VmHWM") / 1024,
                      "children_rss_mb": sum(rss_kb(k) for k in kids) / 1024}
    finally:
        stop(proc)
    out = reader.text()
    if (web and answered is None) or pin is None:
        raise RuntimeError(f"run {n}: the referee did not come up within {timeout} s:\n{out[-2000:]}")
    speech = "printed (speech could not render)" if "phrases will be printed" in out else "rendered"
    return {"scoreboard_s": None if answered is None else answered - t0, "pin_s": pin - t0,
            "speech": speech, "filled_s": filled, **memory}


def sound_output() -> str:
    try:
        from referee.voice.audio import output_devices

        devices = output_devices()
    except Exception:  # noqa: BLE001 - only a label for the report
        devices = []
    return f"sound device {devices[0]}" if devices else "no sound device: recording sink"


def time_cmd(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.monotonic()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=30.0, help="per run")
    ap.add_argument("--settle", type=float, default=30.0,
                    help="seconds the last warm run plays on before its memory is read")
    ap.add_argument("--no-fill", action="store_true",
                    help="stop the cold run at once (its cache unfilled: the smoke test)")
    args = ap.parse_args()
    web = importlib.util.find_spec("referee.scoreboard.app") is not None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-start-") as d:
        tmp = Path(d)
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "XDG_CACHE_HOME": str(tmp / "cache")}
        cold = one_run(tmp, 0, env, web, args.timeout * 3, fill=not args.no_fill)
        warm = [one_run(tmp, n, env, web, args.timeout,
                        settle_s=args.settle if n == args.runs else 0.0)
                for n in range(1, args.runs + 1)]
    key = "scoreboard_s" if web else "pin_s"
    figures = [r[key] for r in warm]
    median = statistics.median(figures)
    bare = time_cmd([sys.executable, "-c", "pass"], 5)
    imports = time_cmd([sys.executable, "-c", "import referee.cli.main"], 5)
    what = "scoreboard answering GET /api/state" if web else \
        "the 'Table PIN' line (referee.scoreboard.app does not exist yet)"
    print(f"start-up to {what}, warm speech cache: median {median * 1000:.0f} ms over "
          f"{len(figures)} runs (min {min(figures) * 1000:.0f}, max {max(figures) * 1000:.0f}); "
          f"'Table PIN' line at {statistics.median(r['pin_s'] for r in warm) * 1000:.0f} ms")
    voice = f"speech {warm[0]['speech']}, {sound_output()}"
    filled = "" if cold["filled_s"] is None else (
        f"; it rendered the rest of its cache behind play in {cold['filled_s']:.1f} s (this "
        f"machine's CPU)")
    print(f"  cold speech cache (first run): {cold[key] * 1000:.0f} ms; {voice}{filled}")
    print(f"  for scale: python -c pass {bare * 1000:.0f} ms, import referee.cli.main "
          f"{imports * 1000:.0f} ms")
    mem = warm[-1]
    if "rss_mb" in mem:
        print(f"  memory, a speaking 4-seat table {args.settle:g} s after start (warm cache): "
              f"VmRSS {mem['rss_mb']:.1f} MB, VmHWM {mem['hwm_mb']:.1f} MB, its children "
              f"(the render process) {mem['children_rss_mb']:.1f} MB; target <= 90 MB")
    summary = {"name": "startup", "memory": {k: round(mem[k], 1) for k in
                                             ("rss_mb", "hwm_mb", "children_rss_mb") if k in mem},
               "settle_s": args.settle, "web": web, "measured_to": what, "median_s": round(median, 3),
               "runs_s": [round(x, 3) for x in figures],
               "pin_line_median_s": round(statistics.median(r["pin_s"] for r in warm), 3),
               "cold_s": round(cold[key], 3),
               "cache_filled_s": cold["filled_s"] and round(cold["filled_s"], 1),
               "voice": voice,
               "python_bare_s": round(bare, 3), "import_cli_s": round(imports, 3),
               "seconds": round(time.monotonic() - started, 1)}
    print("RESULT " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
