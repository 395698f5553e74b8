"""A table's speaker on a simulated clock: PortAudio's thread (tests/fakeaudio.py, manual mode)
wakes after each step of the card's pointer, late by a scheduler's latency, sometimes held up
long enough for an xrun; after every callback, how far the sink's frame -> time map is from
the instant that frame really reaches the DAC. Shared by tests/test_dac_clock.py and
benchmarks/bench_dac_clock.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.voice.device import SoundDeviceSink
from tests.fakeaudio import FakePortAudio
from tests.harness import SimClock

USB = "USB Audio Device: - (hw:2,0)"


@dataclass
class Run:
    """Per callback: stream time (s), the map's error at its first frame (µs, + = late), and
    how many callbacks since the last xrun (None before the first)."""

    t_s: list[float] = field(default_factory=list)
    error_us: list[float] = field(default_factory=list)
    since_xrun: list[int | None] = field(default_factory=list)
    xruns: int = 0

    def steady(self, skip_s: float = 2.0, after_xrun: int = 0) -> list[float]:
        """Errors once the window has filled (`skip_s` after the start), leaving out the first
        `after_xrun` callbacks after each xrun."""
        t0 = self.t_s[0]
        return [e for t, e, n in zip(self.t_s, self.error_us, self.since_xrun, strict=True)
                if t - t0 >= skip_s and (n is None or n >= after_xrun)]

    def after_xruns(self, n: int) -> list[float]:
        """The error at the `n`-th callback after each xrun (0: the first)."""
        return [e for e, k in zip(self.error_us, self.since_xrun, strict=True) if k == n]


def simulate(seconds: float, *, tstamp: str = "now", xruns_at: Sequence[float] = (),
             stall_s: float = 0.12, flag_xruns: bool = True, seed: int = 25,
             entry_us: Callable[[Any], int] | None = None, block_ms: int = 10,
             clock_class: type | None = None) -> Run:
    """Play `seconds` of stream time through a `SoundDeviceSink` on a fake USB card at 48 kHz
    (a pointer stepping every 1024 frames, as behind dmix); hold PortAudio's thread up
    `stall_s` (longer than the 50 ms queued: an xrun) at each time in `xruns_at`."""
    clock = SimClock(0)
    pa = FakePortAudio([USB], default=USB, clock=clock.now, manual=True, block_ms=block_ms,
                       tstamp=tstamp, seed=seed)
    pa.advance = lambda us: clock.advance_to(clock.now() + us)
    sink = SoundDeviceSink("USB", 48000, backend=pa, clock=clock.now, latency=0.05,
                           stall_s=3600, rescan_s=3600)
    if clock_class is not None:
        sink.dac = clock_class(48000)
    run = Run()
    since: list[int | None] = [None]
    stream_box: list[Any] = []
    real_callback: list[Callable[..., None]] = []

    def advance(t_s: float) -> None:
        clock.advance_to(round((t_s - pa.pa_origin_s) * 1e6))

    def watched(outdata: Any, frames: int, time_info: Any, status: Any) -> None:
        stream = stream_box[0]
        if entry_us is not None:
            pa.entry_delay_us = entry_us(pa.rng)
        frame0 = sink.mixer.next_frame
        truth = stream.true_dac(stream.appl)
        if stream.xruns > run.xruns:  # flagged to the callback or not
            run.xruns = stream.xruns
            since[0] = 0
        real_callback[0](outdata, frames, time_info, status)
        run.t_s.append(pa.pa_time())
        run.error_us.append(sink.frame_to_us(frame0) - (truth - pa.pa_origin_s) * 1e6)
        run.since_xrun.append(since[0])
        if since[0] is not None:
            since[0] += 1

    opened = pa.open

    def open_watched(device: Any, samplerate: int, latency: float, callback: Any) -> Any:
        real_callback.append(callback)
        stream = opened(device, samplerate, latency, watched)
        stream_box.append(stream)
        return stream

    pa.open = open_watched  # type: ignore[method-assign]
    if not flag_xruns:
        pa.flag_xruns = False
    sink.start()
    try:
        stream = stream_box[0]
        start = pa.pa_time()
        for at in sorted(xruns_at):
            stream.pump(start + at, advance)
            stream.stall(stall_s, advance)
        stream.pump(start + seconds, advance)
    finally:
        sink.close()
    return run
