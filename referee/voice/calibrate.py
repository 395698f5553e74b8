"""`referee calibrate`: how late the speaker really is, measured with a microphone at it.

ALSA (and so PortAudio) knows when a sample reaches the DAC; it cannot see what comes after: a
TV's picture processing (20-150 ms, and it delays its sound to match), a USB speaker's own
buffer, a soundbar's DSP. The referee's cue is "when the go-word is heard", so that delay
belongs in it (``[speech] output_delay_ms``).

How: play ``clicks`` short clicks a fixed gap apart through the table's own sound sink (with no
delay configured); the mixer stamps each click's first sample with its DAC time on the engine
clock. At the same time record a USB microphone held against the speaker; each input block
carries PortAudio's ``inputBufferAdcTime``, moved onto the engine clock the same way as the
output side (a ``stream.time`` read bracketed by two engine-clock reads). Find each click's
onset in the recording (the first sample well above the noise floor after a quiet gap) and
subtract. The answer is the median of the delays; the spread (max - min) says how much to
trust it. A microphone's own hidden input delay adds to the figure (USB microphones: about
1-3 ms), so it is a slight overestimate; the acoustic path at 5 cm is 0.15 ms.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from referee.clock import now_us

CLICK_MS = 2.0
GAP_S = 0.25
SEARCH_S = 0.6  # a click is looked for this long after it left the DAC (TVs: up to ~200 ms)
RATE = 48000


class Microphone(Protocol):
    """An input stream whose callback gets float samples and the engine time of the first."""

    def start(self, on_block: Callable[[int, npt.NDArray[np.float32]], None]) -> None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Calibration:
    delays_ms: tuple[float, ...]  # one per click heard
    clicks: int  # how many were played

    @property
    def median_ms(self) -> float:
        return float(statistics.median(self.delays_ms))

    @property
    def spread_ms(self) -> float:
        return max(self.delays_ms) - min(self.delays_ms)

    def summary(self) -> str:
        return (f"speaker delay {self.median_ms:.1f} ms (median of {len(self.delays_ms)} of "
                f"{self.clicks} clicks; spread {self.spread_ms:.1f} ms, "
                f"{min(self.delays_ms):.1f}-{max(self.delays_ms):.1f} ms)")


class CalibrationError(RuntimeError):
    """The measurement failed: one line saying what to change."""


def click(rate: int) -> npt.NDArray[np.float32]:
    """A short full-scale click: a 2 ms burst with a raised-cosine end (sharp start)."""
    n = max(8, round(rate * CLICK_MS / 1000))
    t = np.arange(n) / rate
    burst = np.sin(2 * np.pi * 3000 * t) * np.cos(np.linspace(0, np.pi / 2, n)) ** 2
    out: npt.NDArray[np.float32] = (0.9 * burst).astype(np.float32)
    return out


def find_onsets(samples: npt.NDArray[np.float32], rate: int, quiet_s: float = 0.08) -> list[int]:
    """Sample indices where a click starts: the first sample above the threshold (well above
    the noise floor, and a fifth of the loudest click) after at least `quiet_s` below it."""
    x = np.abs(samples.astype(np.float64) - float(np.mean(samples)))
    if len(x) == 0:
        return []
    floor = float(np.median(x))
    peak = float(x.max())
    threshold = max(floor * 10, peak * 0.2)
    if peak < 1e-4 or peak < floor * 12:
        return []
    loud = np.nonzero(x >= threshold)[0]
    onsets: list[int] = []
    last = -10**12
    quiet = round(quiet_s * rate)
    for i in loud:
        if i - last >= quiet:
            onsets.append(int(i))
        last = int(i)
    return onsets


class Recording:
    """Input blocks as they arrive: (engine µs of the first sample, samples)."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.blocks: list[tuple[int, npt.NDArray[np.float32]]] = []
        self._lock = threading.Lock()

    def add(self, t_us: int, samples: npt.NDArray[np.float32]) -> None:
        with self._lock:
            self.blocks.append((t_us, samples.copy()))

    def joined(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        """All samples, and the engine time of each (µs, from its own block's stamp)."""
        with self._lock:
            blocks = list(self.blocks)
        if not blocks:
            return np.zeros(0, dtype=np.float32), np.zeros(0)
        samples = np.concatenate([b for _, b in blocks])
        times = np.concatenate([t + np.arange(len(b)) * 1e6 / self.rate for t, b in blocks])
        return samples, times


def measure(sink: Any, mic: Microphone, *, clicks: int = 10, gap_s: float = GAP_S,
            clock: Callable[[], int] = now_us) -> Calibration:
    """Play `clicks` clicks through `sink` (a started sound sink with no output delay) while
    `mic` records; return the delay of each click heard (see the module docstring)."""
    rate = sink.samplerate
    recording = Recording(getattr(mic, "samplerate", rate))
    mic.start(recording.add)
    try:
        time.sleep(0.2)  # the microphone's first blocks, and the noise floor
        sound = click(rate)
        gap = round(gap_s * rate)
        first = sink.mixer.next_frame + sink.lead_frames + rate // 10
        items = [sink.mixer.schedule(sound, first + k * gap, f"click {k + 1}") for k in range(clicks)]
        deadline = time.monotonic() + clicks * gap_s + 3.0
        while time.monotonic() < deadline and any(i.started_us is None for i in items):
            time.sleep(0.02)
        time.sleep(SEARCH_S)  # the last click's echo in the recording
    finally:
        mic.close()
    played = [i.started_us for i in items if i.started_us is not None]
    if not played:
        raise CalibrationError("the speaker did not play the clicks; check it with referee "
                               "doctor first")
    samples, times = recording.joined()
    onsets = [float(times[i]) for i in find_onsets(samples, recording.rate)]
    delays: list[float] = []
    for dac_us in played:
        heard = [t for t in onsets if dac_us - 2000 <= t <= dac_us + SEARCH_S * 1e6]
        if heard:
            delays.append((heard[0] - dac_us) / 1000)
    if len(delays) < max(3, clicks // 2):
        raise CalibrationError(
            f"the microphone heard {len(delays)} of {clicks} clicks: hold it against the "
            "speaker, turn the volume up (alsamixer), keep the room quiet and try again")
    return Calibration(tuple(delays), clicks)


# ------------------------------------------------------------------------------------------------
# The microphone through PortAudio


class PortAudioMicrophone:
    """A PortAudio input stream (python-sounddevice) stamping blocks on the engine clock."""

    def __init__(self, device: int, samplerate: int = RATE, *, opener: Callable[..., Any] | None = None,
                 clock: Callable[[], int] = now_us) -> None:
        self.device, self.samplerate, self.clock = device, samplerate, clock
        self._opener = opener
        self._stream: Any = None

    def start(self, on_block: Callable[[int, npt.NDArray[np.float32]], None]) -> None:
        box: list[Any] = []

        def callback(indata: Any, frames: int, time_info: Any, status: Any) -> None:
            a = self.clock()
            pa_now = float(box[0].time) if box else 0.0
            b = self.clock()
            adc = float(time_info.inputBufferAdcTime) or pa_now
            on_block(round((a + b) / 2 + (adc - pa_now) * 1e6),
                     np.asarray(indata[:, 0], dtype=np.float32))

        opener = self._opener
        if opener is None:
            import sounddevice as sd

            opener = sd.InputStream
        self._stream = opener(device=self.device, samplerate=self.samplerate, channels=1,
                              dtype="float32", latency="low", callback=callback)
        box.append(self._stream)
        self._stream.start()

    def close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.abort()
            stream.close()


def input_devices(query: Callable[[], Sequence[Any]] | None = None) -> list[tuple[int, str]]:
    """(index, name) of PortAudio's input devices, [] without PortAudio."""
    try:
        if query is None:
            import sounddevice as sd

            query = sd.query_devices
        listed = query()
    except Exception:  # noqa: BLE001
        return []
    return [(int(d["index"]), str(d["name"])) for d in listed if int(d["max_input_channels"]) > 0]
