"""Speech figures, printed (nothing asserted): render time, announce → first sample, cue error.

    .venv/bin/python benchmarks/bench_speech.py [--seats Blue,Red,Green,Yellow] [--runs 20]

1. Full-cache render of every phrase of a table: cold (empty cache) and warm (a restart).
2. "announce" → first audio sample, with the cache: `say()` and `cadence()` on the output in use
   (the recording sink when there is no sound card; the PortAudio callback when there is one),
   side by side with pyttsx3's own `say()` + `runAndWait()` on the same phrase (measured until it
   returns; with no sound card its `aplay` fails silently, so that figure is the render-and-try
   cost, not an audible delay).
3. Error of the reported cue: the go-word's onset found in what the sink played vs the cue time.
4. The mixer's cost per 1024-frame block (what the audio callback spends).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.clock import now_us  # noqa: E402
from referee.voice.audio import Mixer, RecordingSink, Sink, find_onset  # noqa: E402
from referee.voice.phrases import table_lines  # noqa: E402
from referee.voice.speech import SpeechAnnouncer, open_sink  # noqa: E402
from referee.voice.tts import Renderer, SpeechOptions, espeak_version, pyttsx3_version  # noqa: E402

PHRASE = "Blue: last to spank the pig by 42 milliseconds. One whammy."

PYTTSX3_SAY = """
import sys, time
t0 = time.perf_counter()
import pyttsx3
engine = pyttsx3.init()
t1 = time.perf_counter()
engine.say(sys.argv[1])
engine.runAndWait()
t2 = time.perf_counter()
engine.say(sys.argv[1])
engine.runAndWait()
t3 = time.perf_counter()
print(f"{t1 - t0:.4f} {t2 - t1:.4f} {t3 - t2:.4f}")
"""


def ms(us: float) -> str:
    return f"{us / 1000:8.2f} ms"


def stats(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"median {ms(statistics.median(values))}  p95 {ms(p95)}  max {ms(values[-1])}"


def bench_render(seats: list[str], cache: Path) -> None:
    from referee.engine.loop import phrasebook
    from referee.rules.spank import SpankThePig

    lines = [line.text for line in table_lines(seats, book=phrasebook(SpankThePig))]
    cold = Renderer(SpeechOptions(cache_dir=cache))
    t = time.perf_counter()
    cold.clips(lines)
    cold_s = time.perf_counter() - t
    cold.close()
    warm = Renderer(SpeechOptions(cache_dir=cache))
    t = time.perf_counter()
    warm.clips(lines)
    warm_s = time.perf_counter() - t
    warm.close()
    print(f"\n1. full-cache render, {len(lines)} phrases for {len(seats)} seats")
    print(f"   cold (pyttsx3 child, {cold.renders} renders, engine {cold.engine}): {cold_s:7.2f} s"
          f"  ({cold_s / len(lines) * 1000:.1f} ms/phrase)")
    print(f"   warm (restart, {warm.renders} renders):                       {warm_s:7.3f} s")


def bench_announce(cache: Path, runs: int) -> None:
    opts = SpeechOptions(cache_dir=cache)
    sink: Sink = open_sink(opts, out=None)
    voice = SpeechAnnouncer(Renderer(opts), sink)
    voice.warm([PHRASE, "Spank", "the", "PIG!"], wait=True)
    print(f"\n2. announce → first audio sample, warm cache, output: {sink.describe()}")
    say_lat: list[float] = []
    call_us: list[float] = []
    for _ in range(runs):
        voice.wait_quiet(30)
        t0 = now_us()
        item = voice.say_text(PHRASE)
        call_us.append(now_us() - t0)
        assert item is not None  # warm: placed at once
        while item.started_us is None:
            time.sleep(0.001)
        say_lat.append(item.started_us - t0)
        voice.hush()  # no need to hear it out
    print(f"   say() call returns in       {stats(call_us)}")
    print(f"   say() → first sample plays  {stats(say_lat)}")
    cadence_call: list[float] = []
    errors: list[float] = []
    for _ in range(max(3, runs // 4)):
        voice.wait_quiet(30)
        t0 = now_us()
        cue = voice.cadence("spank", {}, 500)
        cadence_call.append(now_us() - t0)
        voice.wait_quiet(30)
        if isinstance(sink, RecordingSink):
            frame0, tape = sink.tape()
            go = voice.cues[-1].go_frame
            lo = go - frame0 - 60 * sink.samplerate // 1000
            window = tape[lo : lo + 200 * sink.samplerate // 1000]
            onset = find_onset(window, sink.samplerate)
            if onset is not None:
                errors.append(abs(sink.frame_to_us(frame0 + lo + onset) - cue))
    print(f"   cadence() call returns in   {stats(cadence_call)}")
    if errors:
        print(f"\n3. cue error (go-word onset found in the played tape vs reported cue), "
              f"{len(errors)} cadences: mean {statistics.mean(errors):.0f} µs, "
              f"max {max(errors):.0f} µs (one sample = {1e6 / sink.samplerate:.0f} µs)")
    voice.close()

    print("   pyttsx3 say() + runAndWait(), same phrase, in a fresh process:")
    done = subprocess.run([sys.executable, "-c", PYTTSX3_SAY, PHRASE], capture_output=True,
                          text=True, timeout=120)
    try:
        init_s, first_s, second_s = (float(x) for x in done.stdout.split()[-3:])
        print(f"     import+init {init_s * 1000:8.1f} ms; say+runAndWait returns after "
              f"{first_s * 1000:8.1f} ms (first), {second_s * 1000:8.1f} ms (second)")
        if "aplay" in done.stderr or "not found" in done.stderr or not any_sound_device():
            print("     (no sound card / aplay here: pyttsx3 synthesised the whole phrase, then its"
                  " aplay call failed silently; nothing was heard — with a card, the first sample"
                  " plays only after the whole phrase has been synthesised)")
    except ValueError:
        print(f"     failed: {done.stderr.strip()[-200:]}")


def any_sound_device() -> bool:
    from referee.voice.audio import output_devices

    return bool(output_devices())


def bench_mixer() -> None:
    mixer = Mixer(48000)
    rng = np.random.default_rng(3)
    for i in range(3):
        mixer.schedule(rng.uniform(-0.3, 0.3, 48000 * 4).astype(np.float32), i * 5000, f"c{i}")
    times: list[float] = []
    for _ in range(200):
        t = time.perf_counter_ns()
        mixer.render(1024, 0)
        times.append((time.perf_counter_ns() - t) / 1000)
    print(f"\n4. mixer, three overlapping clips, 1024-frame block (21 ms at 48 kHz): "
          f"median {statistics.median(times):.0f} µs, max {max(times):.0f} µs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seats", default="Blue,Red,Green,Yellow")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    seats = [s for s in args.seats.split(",") if s]
    print(f"speech benchmark: pyttsx3 {pyttsx3_version()}, espeak-ng {espeak_version()}, "
          f"python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        bench_render(seats, cache)
        bench_announce(cache, args.runs)
    bench_mixer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
