"""A stand-in for PortAudio (through python-sounddevice) that behaves like it where it matters.

Modelled on PortAudio's documented behaviour and python-sounddevice's wrapper:

* The device list is built once, when PortAudio initialises (``Pa_Initialize``); a card plugged
  in later is invisible until ``rescan()`` (sounddevice's ``_terminate()`` + ``_initialize()``).
* The callback gets ``(outdata, frames, time_info, status)``; ``time_info.currentTime`` and
  ``outputBufferDacTime`` are on the stream's own clock (``stream.time``, ``Pa_GetStreamTime``),
  which has its own origin, not the engine's (PortAudio leaves ALSA's timestamps on
  ``gettimeofday``).
* The hardware pointer steps. PortAudio's ALSA host API (``CalculateTimeInfo`` in
  pa_linux_alsa.c) reads ``snd_pcm_status``: ``currentTime`` is its ``htstamp`` and
  ``outputBufferDacTime`` is ``currentTime + delay / rate``, where ``delay = appl_ptr - hw_ptr``.
  The kernel's ``hw_ptr`` moves only when the driver's pointer does: at period boundaries of the
  card (behind ALSA's ``default``, dmix's slave period: 1024 frames at 48 kHz, 21.3 ms). So the
  reported delay counts frames the DAC has already played since the last step, and the DAC time
  is late by the pointer's age. ``tstamp="now"`` stamps ``htstamp`` at the status call (today's
  kernels: ``update_audio_tstamp`` on every hwsync); ``tstamp="step"`` at the pointer's last
  move (older kernels, and drivers that report no finer pointer), and then ``stream.time`` lags
  "now" by the same age. ``avail`` changes only when the pointer moves, so PortAudio's thread
  wakes at a step (``wake_us`` after it, the scheduler's latency) and runs a callback for each
  period free, back to back.
* The Python callback starts some time after ``currentTime`` was taken (``entry_delay_us``:
  PortAudio's thread -> cffi -> the GIL), which is what biased the earlier DAC-time estimate.
* An xrun: when PortAudio's thread is held up longer than the audio queued (``stall``), the DAC
  runs dry and ALSA stops the stream; PortAudio prepares and restarts it at its next wake
  (``PaAlsaStream_HandleXrun``), so every later frame plays later by the gap, and the next
  callback carries ``paOutputUnderflow``.
* ``status.output_underflow`` marks a block the device ran dry before.
* A raw ``hw:`` device has no ALSA plugin: the Pi's vc4-hdmi one refuses plain PCM, and any is
  held by one stream at a time (EBUSY); ALSA's ``default`` (plug, dmix) opens for everyone.
* An unplugged card simply stops calling back; ``abort()`` returns, ``stop()`` would wait for a
  drain that never comes (it hangs here, so a sink that calls it fails its test).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from referee.voice.device import OutputDevice


@dataclass
class TimeInfo:
    currentTime: float  # noqa: N815 - PortAudio's field names
    outputBufferDacTime: float  # noqa: N815
    inputBufferAdcTime: float = 0.0  # noqa: N815


@dataclass
class Status:
    output_underflow: bool = False

    def __bool__(self) -> bool:
        return self.output_underflow


class FakeStream:
    """An output stream on a card whose pointer steps (see the module docstring).

    The truth: frame ``anchor_frame`` reaches the DAC at stream time ``anchor_t``, and the DAC
    plays on at the sample rate. PortAudio's buffer is ``latency`` plus one period
    (``(alsaBufferSize - framesPerPeriod) / rate`` is the latency it reports).
    """

    def __init__(self, pa: FakePortAudio, device: OutputDevice, samplerate: int, latency: float,
                 callback: Callable[[Any, int, Any, Any], None]) -> None:
        self.pa, self.device, self.samplerate = pa, device, samplerate
        self.latency = latency
        self.callback = callback
        self.blocksize = max(1, samplerate * pa.block_ms // 1000)
        self.step_frames = max(1, round(pa.pointer_step_s * samplerate))
        self.buffer_frames = round(latency * samplerate) + self.blocksize
        self.written: list[np.ndarray] = []
        self.played: list[tuple[int, float, float]] = []  # (first frame, true DAC, reported DAC)
        self.closed = False
        self.appl = 0  # frames written
        self.calls = 0
        self.xruns = 0  # times the card ran dry and was restarted
        self.anchor_frame, self.anchor_t = 0, 0.0
        self.running = False
        self._underflow = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the card ---------------------------------------------------------------------------------

    def true_dac(self, frame: int) -> float:
        """Stream time `frame` really reaches the DAC."""
        return self.anchor_t + (frame - self.anchor_frame) / self.samplerate

    def hw_ptr(self, t: float) -> int:
        """The kernel's hardware pointer at stream time `t`: the DAC's position, in steps."""
        played = max(0, math.floor((t - self.anchor_t) * self.samplerate + 1e-6))
        return self.anchor_frame + min(played, self.appl - self.anchor_frame) \
            // self.step_frames * self.step_frames

    def last_step(self, t: float) -> float:
        return self.anchor_t + (self.hw_ptr(t) - self.anchor_frame) / self.samplerate

    def next_step(self, t: float) -> float:
        return self.last_step(t) + self.step_frames / self.samplerate

    def htstamp(self, t: float) -> float:
        return t if self.pa.tstamp == "now" else self.last_step(t)

    @property
    def time(self) -> float:
        """``Pa_GetStreamTime``: the htstamp of a fresh ``snd_pcm_status``."""
        now = self.pa.pa_time()
        return self.htstamp(now) if self.running else now

    def avail(self, t: float) -> int:
        return self.buffer_frames - (self.appl - self.hw_ptr(t))

    # -- PortAudio's thread -----------------------------------------------------------------------

    def fire(self, *, underflow: bool = False, dac: float | None = None) -> TimeInfo:
        """One callback, as PortAudio's thread makes it (tests may call this directly)."""
        now = self.pa.pa_time()
        if not self.running:  # the first period starts the card (start_threshold = a period)
            self.running, self.anchor_frame, self.anchor_t = True, self.appl, now
        current = self.htstamp(now)
        reported = current + (self.appl - self.hw_ptr(now)) / self.samplerate
        info = TimeInfo(current, reported if dac is None else dac)
        truth = self.true_dac(self.appl)
        self.pa.before_callback()
        out = np.zeros((self.blocksize, 1), dtype=np.float32)
        self.calls += 1
        flagged = underflow or self._underflow or self.calls in self.pa.underflow_blocks
        self._underflow = False
        self.callback(out, self.blocksize, info, Status(flagged))
        self.written.append(out[:, 0].copy())
        self.played.append((self.appl, truth, info.outputBufferDacTime))
        self.appl += self.blocksize
        if self.pa.room is not None and self.device.name in self.pa.present:
            self.pa.room.play(truth, out[:, 0])
        return info

    def wake(self) -> int:
        """PortAudio's thread wakes now: recover from an xrun, then a callback per free period."""
        now = self.pa.pa_time()
        fired = 0
        if self.running and self.true_dac(self.appl) < now:  # ran dry: ALSA stopped the card
            self.running = False
            self.xruns += 1
            self._underflow = self.pa.flag_xruns
        while not self._stop.is_set() and (not self.running or self.avail(now) >= self.blocksize):
            self.fire()
            fired += 1
            now = self.pa.pa_time()
        return fired

    def pump(self, until_s: float, advance: Callable[[float], None]) -> int:
        """Manual mode: move the clock (``advance``: to a stream time) from pointer step to
        pointer step until `until_s`, waking PortAudio's thread ``pa.wake_us()`` after each."""
        fired = 0
        while True:
            step = self.next_step(self.pa.pa_time())
            if step > until_s:
                advance(until_s)
                return fired
            advance(step + self.pa.wake_us() / 1e6)
            fired += self.wake()

    def stall(self, seconds: float, advance: Callable[[float], None]) -> int:
        """Manual mode: PortAudio's thread is held up `seconds` (a busy CPU, a long GC)."""
        advance(self.pa.pa_time() + seconds)
        return self.wake()

    def start(self) -> None:
        if self.pa.manual:
            self.wake()
            return
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.device.name in self.pa.present:
                self.wake()
            now = self.pa.pa_time()
            wait = self.next_step(now) - now
            if wait > 0:
                time.sleep(wait)

    def stop(self) -> None:
        if self.device.name not in self.pa.present:
            threading.Event().wait()  # draining a vanished device never ends
        self.abort()

    def abort(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        self.closed = True


class FakePortAudio:
    """Devices that come and go, a stream clock with its own origin, callbacks in real time."""

    def __init__(self, names: list[str], *, default: str | None = None, clock: Callable[[], int],
                 pa_origin_s: float = 4711.25, block_ms: int = 10, manual: bool = False,
                 pointer_step_s: float = 1024 / 48000, tstamp: str = "now", seed: int = 25) -> None:
        self.present = list(names)  # what is plugged in
        self.visible = list(names)  # what PortAudio listed at its last initialisation
        self.default = default
        self.clock = clock
        self.pa_origin_s = pa_origin_s  # the stream clock reads this at engine time 0
        self.block_ms = block_ms
        self.manual = manual
        self.entry_delay_us = 0  # applied by before_callback (manual mode moves a sim clock)
        self.pointer_step_s = pointer_step_s  # the hardware pointer's step (dmix's slave period)
        self.tstamp = tstamp  # "now" or "step": what snd_pcm_status's htstamp is
        self.rng = np.random.default_rng(seed)
        self.flag_xruns = True  # PortAudio passes paOutputUnderflow after recovering
        self.advance: Callable[[int], None] | None = None
        self.underflow_blocks: set[int] = set()
        self.streams: list[FakeStream] = []
        self.rescans = 0  # PortAudio re-initialisations (each probes every ALSA PCM)
        self.no_card_list = False  # no /proc/asound/cards to read (not Linux)
        self.rates = {22050, 44100, 48000}  # what the cards accept (a hw USB card: 48000 only)
        self.inputs: list[str] = []  # microphones plugged in
        self.room: Room | None = None  # what the microphones hear

    def pa_time(self) -> float:
        return self.pa_origin_s + self.clock() / 1e6

    def wake_us(self) -> int:
        """How long after a pointer step PortAudio's thread runs (manual mode): mostly a few
        hundred microseconds; one wake in ten on a busy Zero 2 W (speech rendering beside it)
        3-15 ms."""
        if self.rng.random() < 0.1:
            return int(self.rng.uniform(3000, 15000))
        return int(120 + self.rng.exponential(300))

    def before_callback(self) -> None:
        if self.entry_delay_us and self.advance is not None:
            self.advance(self.entry_delay_us)

    def plug(self, name: str) -> None:
        self.present.append(name)

    def unplug(self, name: str) -> None:
        self.present.remove(name)

    # -- the Backend protocol ---------------------------------------------------------------

    def devices(self) -> list[OutputDevice]:
        return [OutputDevice(i, name, 48000.0, name == self.default)
                for i, name in enumerate(self.visible)]

    def rate_for(self, device: OutputDevice, preferred: int) -> int:
        return preferred if preferred in self.rates else int(device.samplerate)

    def rescan(self) -> None:
        self.rescans += 1
        self.visible = list(self.present)

    def cards(self) -> str | None:
        """/proc/asound/cards: a line (and a description line) per card plugged in, by the
        index in its raw device's name ("(hw:2,0)"); ALSA's PCMs ("default") are no cards."""
        if self.no_card_list:
            return None
        lines = []
        for name in self.present:
            found = re.search(r"\(hw:(\d+),\d+\)", name)
            if found:
                short = name.split(":")[0]
                lines.append(f"{int(found.group(1)):2d} [{short[:15]:<15}]: {short}\n"
                             f"                      {short}")
        return "\n".join(sorted(lines)) + "\n" if lines else "--- no soundcards ---\n"

    def open(self, device: OutputDevice, samplerate: int, latency: float,
             callback: Callable[[Any, int, Any, Any], None]) -> FakeStream:
        if device.name not in self.present:
            raise OSError(f"Error opening OutputStream: Device unavailable [PaErrorCode -9985] "
                          f"({device.name})")
        raw = "(hw:" in device.name
        if raw and "vc4-hdmi" in device.name:
            # the Pi's HDMI PCM takes only IEC958_SUBFRAME_LE; without ALSA's iec958 plug
            # (its card config gives one to "default") PortAudio finds no format it can use
            raise OSError("Error opening OutputStream: Sample format not supported "
                          "[PaErrorCode -9994]")
        if raw and any(s.device.name == device.name and not s.closed for s in self.streams):
            # a raw hw: device is one opener's (snd_pcm_open: EBUSY); dmix behind "default" mixes
            raise OSError("Error opening OutputStream: Device unavailable [PaErrorCode -9985]")
        stream = FakeStream(self, device, samplerate, latency, callback)
        self.streams.append(stream)
        return stream


class Room:
    """A speaker `delay_s` behind its DAC (a TV, a USB speaker's buffer) and a microphone held
    at it: what leaves the DAC at stream time T is heard at T + delay_s, through the speaker's
    ringing response, over a noise floor."""

    def __init__(self, rate: int, delay_s: float, *, noise: float = 0.002, seconds: float = 120.0,
                 origin_s: float = 0.0, seed: int = 5) -> None:
        self.rate, self.delay_s, self.noise = rate, delay_s, noise
        self.base = round(origin_s * rate)
        self.air = np.zeros(round(seconds * rate), dtype=np.float32)
        t = np.arange(round(rate * 0.0015)) / rate
        self.kernel = (np.exp(-t / 0.0004) * np.sin(2 * np.pi * 2500 * t)).astype(np.float32)
        self.kernel /= float(np.abs(self.kernel).sum()) / 2
        self.rng = np.random.default_rng(seed)
        self.flag_xruns = True  # PortAudio passes paOutputUnderflow after recovering
        self.lock = threading.Lock()

    def play(self, dac_s: float, samples: np.ndarray) -> None:
        sound = np.convolve(samples, self.kernel)
        start = round((dac_s + self.delay_s) * self.rate) - self.base
        with self.lock:
            if 0 <= start and start + len(sound) <= len(self.air):
                self.air[start:start + len(sound)] += sound

    def hear(self, adc_s: float, n: int) -> np.ndarray:
        start = round(adc_s * self.rate) - self.base
        with self.lock:
            got = self.air[max(0, start):max(0, start + n)].copy()
        got = np.pad(got, (0, n - len(got)))
        return (got + self.rng.normal(0, self.noise, n)).astype(np.float32)


class FakeInputStream:
    """A microphone: blocks in real time, each stamped (inputBufferAdcTime) with the stream
    time its first sample was captured, `in_latency` before the callback."""

    def __init__(self, pa: FakePortAudio, samplerate: int, callback: Callable[..., None],
                 in_latency: float = 0.012) -> None:
        self.pa, self.samplerate, self.callback = pa, samplerate, callback
        self.in_latency = in_latency
        self.blocksize = samplerate * pa.block_ms // 1000
        self._stop = threading.Event()

    @property
    def time(self) -> float:
        return self.pa.pa_time()

    def start(self) -> None:
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        # Frame-accurate: block k's first sample was captured at start + k periods; its
        # callback runs once the block is complete and `in_latency` has passed.
        period = self.blocksize / self.samplerate
        start = self.pa.pa_time()
        n = 0
        while not self._stop.is_set():
            adc = start + n * period
            wait = adc + period + self.in_latency - self.pa.pa_time()
            if wait > 0:
                time.sleep(wait)
            assert self.pa.room is not None
            block = self.pa.room.hear(adc, self.blocksize).reshape(-1, 1)
            self.callback(block, self.blocksize, TimeInfo(self.pa.pa_time(), 0.0, adc), Status())
            n += 1

    def abort(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self._stop.set()


def _query(pa: FakePortAudio) -> list[dict[str, Any]]:
    out = [{"index": i, "name": n, "max_output_channels": 2, "max_input_channels": 0}
           for i, n in enumerate(pa.visible)]
    out += [{"index": len(pa.visible) + i, "name": n, "max_output_channels": 0,
             "max_input_channels": 1} for i, n in enumerate(pa.inputs)]
    return out


def _open_input(pa: FakePortAudio, *, device: int, samplerate: int, callback: Callable[..., None],
                **_: Any) -> FakeInputStream:
    return FakeInputStream(pa, samplerate, callback)


FakePortAudio.query_devices = _query  # type: ignore[attr-defined]
FakePortAudio.open_input = _open_input  # type: ignore[attr-defined]
