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

    def fire(self, *, underflow: bool = False) -> TimeInfo:
        """One callback, as PortAudio's thread makes it (tests may call this directly)."""
        now = self.pa.pa_time()
        info = TimeInfo(now, now + self.latency)
        self.pa.before_callback()
        out = np.zeros((self.blocksize, 1), dtype=np.float32)
        self.callback(out, self.blocksize, info, Status(underflow))
        self.written.append(out[:, 0].copy())
        return info

    def start(self) -> None:
        if self.pa.manual:
            self.fire()
            return
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        period = self.blocksize / self.samplerate
        n = 0
        while not self._stop.is_set():
            if self.device.name in self.pa.present:
                n += 1
                self.fire(underflow=n in self.pa.underflow_blocks)
            time.sleep(period)

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

    def rescan(self) -> None:
        self.rescans += 1
        self.visible = list(self.present)

    def open(self, device: OutputDevice, samplerate: int, latency: float,
             callback: Callable[[Any, int, Any, Any], None]) -> FakeStream:
        if device.name not in self.present:
            raise OSError(f"Error opening OutputStream: Device unavailable [PaErrorCode -9985] "
                          f"({device.name})")
        stream = FakeStream(self, device, samplerate, latency, callback)
        self.streams.append(stream)
        return stream
