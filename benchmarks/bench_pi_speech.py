"""Speech on a slow Pi, printed (nothing asserted): espeak-ng and Piper under a Zero 2 W's CPU budget.

    .venv/bin/python benchmarks/bench_pi_speech.py [--quota 0.15] [--sample 40] [--piper-sample 6]

A Pi Zero 2 W has four Cortex-A53 cores at 1 GHz; one of them does roughly a sixth of the
single-thread work of a current desktop core (an estimate from public single-thread scores, not
a measurement on a Zero), so the table's speech is run with ``--quota`` of one core (default 15%):
the process group is stopped and continued (SIGSTOP/SIGCONT) to that duty cycle in 10 ms periods.
``--cgroup`` uses a cgroup CPU quota instead (root; cgroup v2 ``cpu.max`` or v1
``cpu.cfs_quota_us``); on this sandboxed build machine the cgroup quota throttled a busy loop to
60% instead of 15%, so the duty cycle, which can be checked, is the default. (Piper runs
onnxruntime on every core it finds; under the duty cycle all of them stop together, so Piper
gets 15% of this machine's cores, not of one: its figures under the quota flatter it.)

Figures, for each voice (espeak-ng through pyttsx3; Piper with the English en_US-joe-medium model
when the `voice` extra is installed), side by side:
1. Render time per phrase: the ruling pieces (margins, counts), at full speed and under the quota.
2. A cold start (first boot, empty cache) under the quota: the voice started, the game learned
   and the table warmed as the engine does, the deal said; the time until the voice is quiet,
   which is when the first call is made (its cue), and how many phrases were rendered by then.
3. The time to warm the whole table's cache (every phrase and ruling piece of a four-seat Spank
   table), under the quota, from the per-phrase figure.
4. A ruling said from pre-rendered pieces: the cost of joining them, under the quota.
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

from referee.voice.phrases import prerender_texts, segments, table_lines, text  # noqa: E402

RULING = {"seat": "Yellow", "reason": "last to spank the pig", "margin_us": 423_000,
          "count_words": "Two whammies"}
SEATS = ["Blue", "Red", "Green", "Yellow"]

CHILD = r"""
import json, sys, time, tempfile
sys.path.insert(0, sys.argv[1])
from referee.voice.tts import Renderer, SpeechOptions
from referee.voice.sentence import join, tight
job = json.loads(sys.stdin.read())
t0, c0 = time.perf_counter(), time.process_time()
while time.process_time() - c0 < 0.2:  # what share of a core this process really gets
    pass
share = 0.2 / (time.perf_counter() - t0)
out = {"texts": [], "share": share}
if job["first_cue"]:  # a cold start, as the engine starts a table
    from referee.engine.loop import phrasebook
    from referee.rules.registry import games
    from referee.voice.audio import RecordingSink
    from referee.voice.speech import SpeechAnnouncer, startup_texts
    rules = games()[job["game"]](tuple(job["seats"]), {})
    t0 = time.perf_counter()
    renderer = Renderer(SpeechOptions(cache_dir=tempfile.mkdtemp(), voice=job["voice"]))
    renderer.clips(startup_texts("en"))  # make_announcer: the first words, the voice started
    sink = RecordingSink(22050)
    sink.start()
    voice = SpeechAnnouncer(renderer, sink)
    voice.learn(phrasebook(type(rules)))
    first = rules.announcements(1)
    voice.warm_table(job["seats"], [*first, *rules.said_ahead()], reasons=rules.reason_texts(),
                     first=first)
    for key, params in first:
        voice.say(key, params)
    while voice.quiet_at() is None:
        time.sleep(0.005)
    out["first_cue_s"] = time.perf_counter() - t0
    out["first_renders"] = renderer.renders
    out["engine"] = renderer.engine
    with voice._cond:  # the rest of the table is not waited for: its child renders the pieces
        voice._jobs.clear()
    voice.idle(600)
    out["start_s"] = None
else:
    renderer = Renderer(SpeechOptions(cache_dir=tempfile.mkdtemp(), voice=job["voice"]))
    t0 = time.perf_counter()
    renderer.clip("Warm up.")  # the child process and the voice start once, at table start
    out["start_s"] = time.perf_counter() - t0
for t in job["render"]:
    t0 = time.perf_counter(); renderer.clip(t); out["texts"].append(time.perf_counter() - t0)
clips = [renderer.clip(t) for t in job["pieces"]]
t0 = time.perf_counter()
for _ in range(20):
    join(clips, tight(job["pieces"]))
out["join"] = (time.perf_counter() - t0) / 20
out["engine"] = out.get("engine", renderer.engine)
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


def run(job: dict[str, object], share: float | None, cgroup: bool = False) -> dict[str, object]:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    quota = Quota(share, cgroup) if share else None
    if quota is not None:
        quota.apply(child.pid)
    try:
        out, _ = child.communicate(json.dumps(job), timeout=1800)
    finally:
        if quota is not None:
            quota.release()
    result = json.loads(out)
    result["how"] = quota.how if quota else "full speed"
    return dict(result)


def piper_installed() -> bool:
    from referee.voice.piper_voice import PiperMissing, resolve

    try:
        resolve("piper", "en")
    except PiperMissing:
        return False
    return True


def mean_ms(times: list[float]) -> float:
    return sum(times) / len(times) * 1000 if times else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quota", type=float, default=0.15, help="share of one core (Zero 2 W)")
    parser.add_argument("--sample", type=int, default=40, help="espeak-ng pieces rendered")
    parser.add_argument("--piper-sample", type=int, default=6, help="Piper pieces rendered")
    parser.add_argument("--voices", default="espeak-ng,piper", help="which voices to measure")
    parser.add_argument("--game", default="spank-the-pig", help="the table of the cold start")
    parser.add_argument("--cgroup", action="store_true", help="a cgroup quota, not a duty cycle")
    args = parser.parse_args()
    whole = text("ruling", RULING)
    pieces = segments("ruling", RULING)
    every = prerender_texts(SEATS)
    from referee.engine.loop import phrasebook
    from referee.rules.registry import games

    rules = games()[args.game](tuple(SEATS), {})
    book = phrasebook(type(rules))
    table = {line.text for line in table_lines(SEATS, "en", [*rules.announcements(1),
                                                             *rules.said_ahead()], book=book)}
    table |= set(prerender_texts(SEATS, "en", rules.reason_texts(), book=book))
    figures: dict[str, dict[str, object]] = {}
    for voice in [v.strip() for v in args.voices.split(",") if v.strip()]:
        if voice == "piper" and not piper_installed():
            print("   Piper: not installed (pip install '.[voice]'): not measured")
            continue
        n = args.piper_sample if voice == "piper" else args.sample
        step = max(1, len(every) // max(1, n))
        sample = every[::step][:n]
        option = "piper" if voice == "piper" else None
        job = {"voice": option, "render": [whole, *sample], "pieces": pieces, "first_cue": False,
               "game": args.game, "seats": SEATS}
        fast = run(job, None)
        slow = run({**job, "first_cue": True}, args.quota, args.cgroup)
        fast_t, slow_t = fast["texts"], slow["texts"]
        per_fast, per_slow = mean_ms(fast_t[1:]), mean_ms(slow_t[1:])  # type: ignore[index]
        name = "Piper en_US-joe-medium" if voice == "piper" else "espeak-ng (pyttsx3)"
        engines = {str(fast["engine"]), str(slow["engine"])}
        print(f"\n{name}, rendered by {' and '.join(sorted(engines))}; quota: {slow['how']} "
              f"(Zero 2 W estimate: "
              f"{args.quota:.0%} of one core); measured share of a core: "
              f"{float(fast['share']):.0%} free, {float(slow['share']):.0%} under the quota")  # type: ignore[arg-type]
        print(f"   render per phrase ({len(sample)} ruling pieces): {per_fast:.0f} ms at full "
              f"speed, {per_slow:.0f} ms under the quota; the voice starting (its child, "
              f"the model): {float(fast['start_s']) * 1000:.0f} ms at full speed")  # type: ignore[arg-type]
        print(f"   a whole ruling sentence rendered when said: {fast_t[0] * 1000:.0f} ms at full "  # type: ignore[index]
              f"speed, {slow_t[0] * 1000:.0f} ms under the quota")  # type: ignore[index]
        print(f"   cold start under the quota: the first cue after {float(slow['first_cue_s']):.1f} s "  # type: ignore[arg-type]
              f"({slow['first_renders']} phrases rendered first: the first words, the calls' "
              f"words, the deal)")
        print(f"   warming the whole {args.game} table ({len(table)} phrases and pieces), behind "
              f"play: about {per_slow * len(table) / 1000:.0f} s under the quota "
              f"({per_fast * len(table) / 1000:.0f} s at full speed)")
        print(f"   a ruling said from pre-rendered pieces: joining costs "
              f"{float(slow['join']) * 1000:.2f} ms under the quota")  # type: ignore[arg-type]
        figures[voice] = {
            "piece_ms_fast": round(per_fast), "piece_ms_quota": round(per_slow),
            "whole_ruling_ms_fast": round(fast_t[0] * 1000),  # type: ignore[index]
            "whole_ruling_ms_quota": round(slow_t[0] * 1000),  # type: ignore[index]
            "first_cue_s_quota": round(float(slow["first_cue_s"]), 1),  # type: ignore[arg-type]
            "first_renders": slow["first_renders"], "table_phrases": len(table),
            "warm_table_s_quota": round(per_slow * len(table) / 1000),
            "join_ms_quota": round(float(slow["join"]) * 1000, 2),  # type: ignore[arg-type]
            "engine": " and ".join(sorted(engines)), "share_quota": round(float(slow["share"]), 2)}  # type: ignore[arg-type]
    print("   (wall-clock figures on a shared machine; other engineers' load inflates them)")
    print("RESULT " + json.dumps({"voices": figures, "pieces": len(every),
                                  "quota": f"{args.quota:.0%} of one core"}))


if __name__ == "__main__":
    main()
