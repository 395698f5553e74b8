"""A stand-in for PortAudio (through python-sounddevice) that behaves like it where it matters.

Modelled on PortAudio's documented behaviour and python-sounddevice's wrapper:

* The device list is built once, when PortAudio initialises (``Pa_Initialize``); a card plugged
  in later is invisible until ``rescan()`` (sounddevice's ``_terminate()`` + ``_initialize()``).
* The callback gets ``(outdata, frames, time_info, status)``; ``time_info.currentTime`` and
  ``outputBufferDacTime`` are on the stream's own clock (``stream.time``, ``Pa_GetStreamTime``),
  which has its own origin, not the engine's. The DAC time is ``currentTime`` plus the latency.
* The Python callback starts some time after ``currentTime`` was taken (``entry_delay_us``:
  PortAudio's thread → cffi → the GIL), which is what biased the earlier DAC-time estimate.
* ``status.output_underflow`` marks a block the device ran dry before.
* A raw ``hw:`` device has no ALSA plugin: the Pi's vc4-hdmi one refuses plain PCM, and any is
  held by one stream at a time (EBUSY); ALSA's ``default`` (plug, dmix) opens for everyone.
* An unplugged card simply stops calling back; ``abort()`` returns, ``stop()`` would wait for a
  drain that never comes (it hangs here, so a sink that calls it fails its test).
"""

from __future__ import annotations

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
    def __init__(self, pa: FakePortAudio, device: OutputDevice, samplerate: int, latency: float,
                 callback: Callable[[Any, int, Any, Any], None]) -> None:
        self.pa, self.device, self.samplerate = pa, device, samplerate
        self.latency = latency
        self.callback = callback
        self.blocksize = max(1, samplerate * pa.block_ms // 1000)
        self.written: list[np.ndarray] = []
        self.closed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def time(self) -> float:
        return self.pa.pa_time()

    def fire(self, *, underflow: bool = False, dac: float | None = None) -> TimeInfo:
        """One callback, as PortAudio's thread makes it (tests may call this directly)."""
        now = self.pa.pa_time()
        info = TimeInfo(now, now + self.latency if dac is None else dac)
        self.pa.before_callback()
        out = np.zeros((self.blocksize, 1), dtype=np.float32)
        self.callback(out, self.blocksize, info, Status(underflow))
        self.written.append(out[:, 0].copy())
        if self.pa.room is not None and self.device.name in self.pa.present:
            self.pa.room.play(info.outputBufferDacTime, out[:, 0])
        return info

    def start(self) -> None:
        if self.pa.manual:
            self.fire()
            return
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # Frame-accurate, like a sound card: block k leaves the DAC at start + latency + k
        # periods, and its callback runs about one latency before that.
        period = self.blocksize / self.samplerate
        start = self.pa.pa_time()
        n = 0
        while not self._stop.is_set():
            if self.device.name in self.pa.present:
                self.fire(underflow=n + 1 in self.pa.underflow_blocks,
                          dac=start + self.latency + n * period)
            n += 1
            wait = start + n * period - self.pa.pa_time()
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
                 pa_origin_s: float = 4711.25, block_ms: int = 10, manual: bool = False) -> None:
        self.present = list(names)  # what is plugged in
        self.visible = list(names)  # what PortAudio listed at its last initialisation
        self.default = default
        self.clock = clock
        self.pa_origin_s = pa_origin_s  # the stream clock reads this at engine time 0
        self.block_ms = block_ms
        self.manual = manual
        self.entry_delay_us = 0  # applied by before_callback (manual mode moves a sim clock)
        self.advance: Callable[[int], None] | None = None
        self.underflow_blocks: set[int] = set()
        self.streams: list[FakeStream] = []
        self.rescans = 0
        self.rates = {22050, 44100, 48000}  # what the cards accept (a hw USB card: 48000 only)
        self.inputs: list[str] = []  # microphones plugged in
        self.room: Room | None = None  # what the microphones hear

    def pa_time(self) -> float:
        return self.pa_origin_s + self.clock() / 1e6

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
