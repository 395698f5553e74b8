"""Sound as numbers: clips, where speech starts in them, cadence buffers, and the output sinks.

A `Clip` is mono float samples plus the measured *onset*: the first sample where speech is heard
(an energy threshold on 1 ms frames). `premix` lays the beats of a cadence into one buffer so that
each beat's onset falls exactly on its tempo grid sample. A `Mixer` holds clips scheduled at output
frame numbers and fills output blocks with them. Two sinks pull blocks from a mixer:

- `SoundDeviceSink` (in `referee.voice.device`): PortAudio output streams (via sounddevice) whose
  callback mixes straight into the device buffer. Each callback carries the DAC time of its first
  frame; that time is mapped onto the engine clock (`referee.clock.now_us`) and filtered
  (`DacClock`: the least-late reading of about a second), so any output frame has an
  engine-clock time. PortAudio was chosen over raw
  ALSA because it is already the `audio` extra, runs on developers' laptops (CoreAudio, WASAPI,
  PulseAudio) as well as on the Pi, and hands us the DAC timestamp per block; raw ALSA would
  need a compiled binding and `snd_pcm_delay` bookkeeping for the same figure. The mixing
  callback costs tens of microseconds per block (see benchmarks/bench_speech.py), far inside
  any buffer period.
- `RecordingSink`: no sound device. A thread "plays" the mixer in real time against the engine
  clock, keeps what was played (tape) and what was scheduled (phrase, time, samples), and prints
  each phrase as it starts. Cue times stay real future times.
"""

from __future__ import annotations

import threading
import wave
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

import numpy as np
import numpy.typing as npt

from referee.clock import now_us

Samples = npt.NDArray[np.float32]

ONSET_FRAME_S = 0.001  # 1 ms analysis frames
ONSET_REL_DB = -45.0  # speech starts where a frame rises within 45 dB of the clip's loudest frame
ONSET_FLOOR_DB = -65.0  # ...and above this absolute level (dBFS)


# ------------------------------------------------------------------------------------------------
# Clips


@dataclass(frozen=True)
class Clip:
    """One rendered phrase: samples in [-1, 1], sample rate, and where the speech starts."""

    samples: Samples
    samplerate: int
    onset: int  # first sample of speech

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.samplerate

    @property
    def onset_s(self) -> float:
        return self.onset / self.samplerate

    def at_rate(self, samplerate: int) -> Clip:
        """This clip resampled (linear interpolation, ample for speech) to `samplerate`."""
        if samplerate == self.samplerate:
            return self
        n = max(1, round(len(self.samples) * samplerate / self.samplerate))
        src = np.arange(len(self.samples), dtype=np.float64)
        dst = np.arange(n, dtype=np.float64) * (self.samplerate / samplerate)
        out = np.interp(dst, src, self.samples).astype(np.float32)
        return Clip(out, samplerate, round(self.onset * samplerate / self.samplerate))


def read_wav(path: Path) -> tuple[Samples, int]:
    """Mono 16-bit PCM WAV → float samples and sample rate (other layouts are refused)."""
    with wave.open(str(path), "rb") as w:
        if w.getsampwidth() != 2:
            raise ValueError(f"{path}: expected 16-bit PCM, got {8 * w.getsampwidth()}-bit")
        raw = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        channels = w.getnchannels()
        rate = w.getframerate()
    data = raw.reshape(-1, channels).mean(axis=1) if channels > 1 else raw
    return (data / 32768.0).astype(np.float32), rate


def write_wav(path: Path, samples: Samples, samplerate: int) -> None:
    pcm = np.clip(np.round(samples * 32767.0), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(samplerate)
        w.writeframes(pcm.tobytes())


def frame_levels_db(samples: Samples, samplerate: int) -> npt.NDArray[np.float64]:
    """RMS level (dBFS) of consecutive 1 ms frames."""
    win = max(1, round(samplerate * ONSET_FRAME_S))
    n = len(samples) // win
    if n == 0:
        return np.full(1, -200.0)
    frames = samples[: n * win].astype(np.float64).reshape(n, win)
    rms = np.sqrt((frames**2).mean(axis=1))
    return np.asarray(20.0 * np.log10(rms + 1e-10), dtype=np.float64)


def find_onset(samples: Samples, samplerate: int) -> int | None:
    """First sample of speech: the first 1 ms frame above the threshold, refined to the first
    sample in it (or the frame before) that reaches the threshold's amplitude. None if silent."""
    levels = frame_levels_db(samples, samplerate)
    peak = float(levels.max())
    threshold = max(peak + ONSET_REL_DB, ONSET_FLOOR_DB)
    loud = np.nonzero(levels >= threshold)[0]
    if peak < ONSET_FLOOR_DB or len(loud) == 0:
        return None
    win = max(1, round(samplerate * ONSET_FRAME_S))
    first = int(loud[0]) * win
    lo = max(0, first - win)
    amp = 10 ** (threshold / 20)
    hits = np.nonzero(np.abs(samples[lo : first + win]) >= amp)[0]
    return lo + int(hits[0]) if len(hits) else first


def speech_rms_db(samples: Samples, samplerate: int) -> float:
    """Level of the speech part (frames within 45 dB of the peak), dBFS; -200 for silence."""
    levels = frame_levels_db(samples, samplerate)
    peak = float(levels.max())
    voiced = levels[levels >= max(peak + ONSET_REL_DB, ONSET_FLOOR_DB)]
    if len(voiced) == 0:
        return -200.0
    power = float(np.mean(10 ** (voiced / 10)))
    return 10.0 * float(np.log10(power))


# ------------------------------------------------------------------------------------------------
# Cadences


@dataclass(frozen=True)
class Premix:
    """A cadence in one buffer: beat i's speech onset is at `beats[i]` (the last one: the go-word)."""

    samples: Samples
    beats: tuple[int, ...]

    @property
    def go(self) -> int:
        return self.beats[-1]


def premix(clips: Sequence[Clip], tempo: int, origin: int | None = None, fade: int = 64) -> Premix:
    """Lay `clips` out so beat i's onset lands on sample origin + i*tempo.

    `origin` defaults to the smallest value that keeps every clip inside the buffer. A beat that
    would still be sounding when the next one starts is cut there (with a short fade), so words
    never pile up; a clip whose leading silence does not fit before `origin` loses that silence.
    """
    if not clips:
        raise ValueError("a cadence needs at least one beat")
    rate = clips[0].samplerate
    if any(c.samplerate != rate for c in clips):
        raise ValueError("every beat of a cadence must have the same sample rate")
    if origin is None:
        origin = max(0, *(c.onset - i * tempo for i, c in enumerate(clips)))
    beats = tuple(origin + i * tempo for i in range(len(clips)))
    places = [b - c.onset for b, c in zip(beats, clips, strict=True)]
    end = max(p + len(c.samples) for p, c in zip(places, clips, strict=True))
    out = np.zeros(end, dtype=np.float32)
    for i, (place, clip) in enumerate(zip(places, clips, strict=True)):
        data = clip.samples
        if place < 0:
            data, place = data[-place:], 0
        if i + 1 < len(clips):
            stop = places[i + 1] - place
            if stop < len(data):
                data = data[: max(0, stop)].copy()
                ramp = min(fade, len(data))
                if ramp:
                    data[-ramp:] *= np.linspace(1.0, 0.0, ramp, dtype=np.float32)
        out[place : place + len(data)] += data
    return Premix(out, beats)


# ------------------------------------------------------------------------------------------------
# The mixer


@dataclass
class Scheduled:
    """A clip placed at an output frame. `kind` is "cadence" or "say" (only says are cut short)."""

    ident: int
    label: str
    samples: Samples
    frame: int
    kind: str
    started_us: int | None = None  # engine time its first sample reached the output
    late: int = 0  # samples lost because it was scheduled after its frame had been rendered
    marks: list[tuple[int, str]] = field(default_factory=list)  # (frame, beat): a beat's onset

    @property
    def end(self) -> int:
        return self.frame + len(self.samples)


class Mixer:
    """Clips at frame numbers → output blocks. Thread-safe; `render` is cheap enough for a callback."""

    def __init__(self, samplerate: int) -> None:
        self.samplerate = samplerate
        self.lock = threading.Lock()
        self.next_frame = 0  # the first frame not yet rendered
        self.last_end = 0  # the frame after the last sample given so far (past ones included)
        self._items: list[Scheduled] = []
        self._ident = 0
        self.on_start: Callable[[Scheduled], None] | None = None  # first sample rendered
        self.on_schedule: Callable[[Scheduled], None] | None = None
        self.on_mark: Callable[[Scheduled, str], None] | None = None  # a beat's onset rendered

    def schedule(self, samples: Samples, frame: int, label: str, kind: str = "say",
                 marks: Sequence[tuple[int, str]] = ()) -> Scheduled:
        with self.lock:
            self._ident += 1
            item = Scheduled(self._ident, label, samples, frame, kind, marks=sorted(marks))
            item.late = max(0, self.next_frame - frame)
            self._items.append(item)
            self.last_end = max(self.last_end, item.end)
        if self.on_schedule is not None:
            self.on_schedule(item)
        return item

    def busy_until(self, kind: str | None = None) -> int:
        """The frame after the last scheduled sample (of `kind`), at least `next_frame`."""
        with self.lock:
            ends = [i.end for i in self._items if kind is None or i.kind == kind]
            return max([self.next_frame, *ends])

    def cut(self, kind: str = "say", fade: int = 220) -> int:
        """Stop every clip of `kind`: those playing fade out, those waiting are dropped."""
        with self.lock:
            keep: list[Scheduled] = []
            for item in self._items:
                if item.kind != kind:
                    keep.append(item)
                elif item.frame < self.next_frame:  # playing: fade out from the next frame
                    played = self.next_frame - item.frame
                    tail = item.samples[played : played + fade].copy()
                    tail *= np.linspace(1.0, 0.0, len(tail), dtype=np.float32)
                    item.samples = np.concatenate([item.samples[:played], tail])
                    keep.append(item)
            dropped = len(self._items) - len(keep)
            self._items = keep
            self.last_end = max([i.end for i in keep], default=min(self.last_end, self.next_frame))
            return dropped

    def render(self, n: int, t_us: int | None = None) -> Samples:
        """The next `n` frames (summed, clipped to [-1, 1]); `t_us`: when the first reaches the
        output (it stamps each clip's `started_us`: the time of its first sample)."""
        out = np.zeros(n, dtype=np.float32)
        started: list[Scheduled] = []
        marked: list[tuple[Scheduled, str]] = []
        with self.lock:
            f0 = self.next_frame
            f1 = f0 + n
            alive: list[Scheduled] = []
            for item in self._items:
                if item.end <= f0:
                    continue
                alive.append(item)
                if item.frame >= f1:
                    continue
                a = max(f0, item.frame)
                b = min(f1, item.end)
                out[a - f0 : b - f0] += item.samples[a - item.frame : b - item.frame]
                if item.started_us is None and t_us is not None:
                    item.started_us = t_us + round((a - f0) * 1e6 / self.samplerate)
                    started.append(item)
                while item.marks and item.marks[0][0] < f1:
                    marked.append((item, item.marks.pop(0)[1]))
            self._items = alive
            self.next_frame = f1
        np.clip(out, -1.0, 1.0, out=out)
        if self.on_start is not None:
            for item in started:
                self.on_start(item)
        if self.on_mark is not None:
            for item, beat in marked:
                self.on_mark(item, beat)
        return out


# ------------------------------------------------------------------------------------------------
# Sinks


class Sink(Protocol):
    """An audio output pulling from a `Mixer`, with output frames mapped to the engine clock."""

    samplerate: int
    mixer: Mixer
    lead_frames: int  # schedule at least this far past mixer.next_frame

    def start(self) -> None: ...

    def frame_to_us(self, frame: int) -> int: ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Record:
    """What a recording sink was asked to play: the phrase, its engine-clock start, its samples."""

    label: str
    t_us: int
    samples: Samples
    kind: str
    item: Scheduled = field(repr=False)


class RecordingSink:
    """No sound device: plays the mixer against the real clock, records it and prints phrases."""

    def __init__(
        self,
        samplerate: int = 22050,
        *,
        out: TextIO | None = None,
        block_ms: int = 5,
        keep_s: float = 120.0,
        clock: Callable[[], int] = now_us,
    ) -> None:
        self.samplerate = samplerate
        self.mixer = Mixer(samplerate)
        self.mixer.on_start = self._started
        self.mixer.on_schedule = self._note
        self.mixer.on_mark = self._beat
        self.block = max(1, samplerate * block_ms // 1000)
        self.lead_frames = self.block
        self.out = out
        self.clock = clock
        self.records: deque[Record] = deque(maxlen=1000)
        self._tape: deque[tuple[int, Samples]] = deque(maxlen=max(1, int(keep_s * 1000 / block_ms)))
        self._t0 = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, *, thread: bool = True) -> None:
        """Frame 0 plays now; `thread=False`: the caller plays it with `play_until` (tests on a
        simulated clock)."""
        if self._thread is not None:
            return
        self._t0 = self.clock()
        if not thread:
            return
        self._thread = threading.Thread(target=self._run, name="speech-recording-sink", daemon=True)
        self._thread.start()

    def frame_to_us(self, frame: int) -> int:
        return self._t0 + round(frame * 1_000_000 / self.samplerate)

    def _run(self) -> None:
        while not self._stop.is_set():
            wait = self.play_until(self.clock())
            self._stop.wait(wait / 1_000_000)

    def play_until(self, now: int) -> int:
        """Play every block due by `now` (the thread does this against its clock; a test on a
        simulated clock calls it itself). Returns µs until the next block is due."""
        while True:
            frame = self.mixer.next_frame
            due = self.frame_to_us(frame)
            if due > now:
                return due - now
            block = self.mixer.render(self.block, due)
            self._tape.append((frame, block))

    def _started(self, item: Scheduled) -> None:
        if self.out is not None and not (item.kind == "cadence" and item.marks):
            print("  » " + item.label, file=self.out, flush=True)

    def _beat(self, item: Scheduled, beat: str) -> None:
        """A cadence is printed beat by beat as it sounds, so the go-word shows at the cue."""
        if self.out is not None:
            print("  » " + beat, file=self.out, flush=True)

    def _note(self, item: Scheduled) -> None:
        """Keep (phrase, scheduled engine-clock time, samples) for a newly scheduled clip."""
        self.records.append(
            Record(item.label, self.frame_to_us(item.frame), item.samples, item.kind, item)
        )

    def tape(self) -> tuple[int, Samples]:
        """What was played (as far as kept): first frame number and the samples."""
        blocks = list(self._tape)
        if not blocks:
            return 0, np.zeros(0, dtype=np.float32)
        return blocks[0][0], np.concatenate([b for _, b in blocks])

    def describe(self) -> str:
        return f"no sound device: recording sink at {self.samplerate} Hz, phrases printed"

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)


class DacClock:
    """Maps output frame numbers to the engine clock from per-block DAC-time readings.

    Each audio callback says when its first frame reaches the DAC. On ALSA that reading is never
    early and often late: PortAudio computes it as ``htstamp + delay`` from ``snd_pcm_status``,
    and ``delay = appl_ptr - hw_ptr`` counts the frames the DAC has played since the driver's
    pointer last moved (it moves at the card's period boundaries: 21.3 ms behind dmix) as still
    queued. PortAudio's thread wakes when the pointer moves, so a reading is late by how long
    after that move the thread ran: a few hundred microseconds, several milliseconds on a busy
    Zero 2 W; a reading whose ``stream.time`` read was pre-empted is off either way.

    So the frame -> time offset (``dac_us - frame / rate``) is the *minimum* over the last
    ``WINDOW`` readings, not an average: the least-delayed wake-up is the one nearest the truth,
    and a late outlier never moves it. Around that:

    * an underflow (xrun) re-anchors at once: ALSA stopped and restarted the card, every later
      frame plays later by the gap, and the old readings describe a stream that is gone;
    * every reading ``SHIFT_US`` past the minimum for ``CONFIRM_S`` of frames in a row is a
      mapping that moved without a flag: re-anchored on the later half of those readings (one
      late wake-up runs a burst of callbacks, all late alike: so a span of frames, not a count
      of readings; and the run may have begun with a late wake-up just before an xrun);
    * a reading more than ``EARLY_US`` before the minimum is a clock step between the two
      reads (PortAudio's ALSA stamps are wall-clock time), dropped unless it lasts as long;
    * a reading's engine time is the midpoint of the two clock reads around ``stream.time``, off
      by up to half their bracket either way (a pre-empted read): half the bracket is added, so
      a reading is never early on that account, only late, which the minimum passes over.

    The card's crystal drifts against CLOCK_MONOTONIC by tens of ppm: over a window of
    ``WINDOW`` blocks (about a second) that is tens of microseconds, so the oldest readings
    leave the window before their drift matters.
    """

    WINDOW = 48  # readings the minimum is taken over (about a second of 10-20 ms blocks)
    SHIFT_US = 2_000.0  # later than the minimum by this for CONFIRM_S in a row: it moved
    EARLY_US = 30_000.0  # earlier than the minimum by more: a clock step, not a reading
    CONFIRM_S = 0.2

    def __init__(self, samplerate: int) -> None:
        self.samplerate = samplerate
        self.base_us: float | None = None  # engine-clock time of frame 0
        self.readings: deque[float] = deque(maxlen=self.WINDOW)
        self.reanchors = 0
        self.dropped = 0
        self._late: list[tuple[int, float]] = []  # (frame, offset)
        self._early: list[tuple[int, float]] = []

    def reset(self) -> None:
        """A new stream (or an xrun): a new frame -> time mapping from the next reading on."""
        self.base_us = None
        self.readings.clear()
        self._late.clear()
        self._early.clear()

    def update(self, frame: int, now: int, ahead_s: float) -> None:
        self.update_at(frame, now + ahead_s * 1e6)

    def update_at(self, frame: int, dac_us: float, *, bracket_us: float = 0.0,
                  underflow: bool = False) -> None:
        """`frame` reaches the DAC at engine time `dac_us` (read within `bracket_us`)."""
        offset = dac_us + bracket_us / 2 - frame * 1e6 / self.samplerate
        if underflow and self.readings:
            self.reanchors += 1
            self.reset()
        if not self.readings:
            self._anchor([offset])
            return
        best = min(self.readings)
        early = offset < best - self.EARLY_US
        late = offset > best + self.SHIFT_US
        self._early = [*self._early, (frame, offset)] if early else []
        self._late = [*self._late, (frame, offset)] if late else []
        for run in (self._early, self._late):
            if run and (frame - run[0][0]) / self.samplerate >= self.CONFIRM_S:
                # on its second half: a late wake-up just before an xrun began the run too
                half = (run[0][0] + frame) / 2
                self.reanchors += 1
                self._anchor([o for f, o in run if f >= half])
                return
        if early:
            self.dropped += 1
            return
        self.readings.append(offset)
        self.base_us = min(self.readings)

    def _anchor(self, offsets: list[float]) -> None:
        self.readings.clear()
        self.readings.extend(offsets)
        self.base_us = min(self.readings)
        self._late, self._early = [], []

    def frame_to_us(self, frame: int, fallback_now: int) -> int:
        base = self.base_us if self.base_us is not None else float(fallback_now)
        return round(base + frame * 1e6 / self.samplerate)


def output_devices() -> list[str]:
    """Names of the sound output devices PortAudio sees ([] if sounddevice or PortAudio is missing)."""
    try:
        import sounddevice as sd

        devices: Any = sd.query_devices()
    except Exception:
        return []
    return [str(d["name"]) for d in devices if int(d["max_output_channels"]) > 0]
