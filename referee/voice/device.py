"""The sound device: chosen by name, watched while it plays, reopened when it comes back.

A Raspberry Pi does not keep its sound card still. A Pi 5 has only HDMI built in, so ALSA's
default is HDMI even with a USB speaker plugged in; a USB card may appear seconds after the
service starts (``After=sound.target`` is met by the first card); PortAudio's device list is
fixed when PortAudio starts; and an unplugged speaker simply stops calling back. So:

* ``[speech] device`` names the card by a fragment of its name ("USB", "Headphones", "HiFiBerry"),
  matched case-insensitively against PortAudio's output devices (`choose_device`).
* `SoundDeviceSink` keeps one mixer for the whole evening and (re)opens PortAudio streams under
  it. A watchdog thread notices when callbacks stop (``STALL_S``), aborts the stream, drops what
  was scheduled (nobody may be promised a cue on a dead speaker) and looks for the device again
  until it is back. Each look re-initialises PortAudio, and each re-initialisation probes every
  ALSA PCM (a dozen "ALSA lib ... Unknown PCM" lines in the journal on a Pi): so it looks at
  once when the kernel's card list (``/proc/asound/cards``) changes, a card plugged in or
  pulled, and otherwise after ``RESCAN_S``, doubling up to ``RESCAN_MAX_S`` while nothing
  changes. Each change of the problem is reported once to ``on_health`` (the table pauses
  itself and the scoreboard says why). Underruns are counted.
* Output frames are mapped to the engine clock from PortAudio's own clock, inside the callback:
  ``time_info.outputBufferDacTime`` is on the stream's clock, ``stream.time`` reads that clock
  now, and two engine-clock reads bracket that read. So the DAC time of each block is known to
  a few microseconds however late the Python callback started running; reading ``now_us()``
  at callback entry and adding ``outputBufferDacTime - currentTime`` (the earlier way) put every
  go-word late by the callback's own start-up delay (GIL, cffi, a busy Zero 2 W).
* ``output_delay_ms`` (measured by ``referee calibrate``) is added on top: what a TV or a USB
  speaker adds after the DAC, which ALSA cannot see.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from referee.clock import now_us
from referee.voice.audio import DacClock, Mixer

LATENCY_S = 0.05  # output latency asked of PortAudio: a Zero 2 W sustains it while rendering
STALL_S = 0.5  # no callback for this long: the device is gone
RESCAN_S = 2.0  # a missing device is looked for again after this, doubling while nothing changes
RESCAN_MAX_S = 60.0  # ...up to this (a card plugged in is looked for at once)
START_S = 2.0  # a stream that has not called back this long after start did not start


@dataclass(frozen=True)
class OutputDevice:
    """One PortAudio output device as the referee sees it."""

    index: int
    name: str
    samplerate: float
    is_default: bool = False

    @property
    def is_hdmi(self) -> bool:
        return "hdmi" in self.name.casefold()


class Stream(Protocol):
    time: float  # PortAudio's stream clock, seconds
    latency: float

    def start(self) -> None: ...
    def abort(self) -> None: ...
    def close(self) -> None: ...


class Backend(Protocol):
    """What the sink needs of PortAudio (real: `SoundDeviceBackend`; tests: a fake)."""

    def devices(self) -> list[OutputDevice]: ...
    def rescan(self) -> None: ...
    def cards(self) -> str | None: ...
    def rate_for(self, device: OutputDevice, preferred: int) -> int: ...
    def open(self, device: OutputDevice, samplerate: int, latency: float,
             callback: Callable[[Any, int, Any, Any], None]) -> Stream: ...


class SoundDeviceBackend:
    """PortAudio through python-sounddevice (the `audio` extra)."""

    def __init__(self) -> None:
        import sounddevice as sd

        self._sd = sd

    def devices(self) -> list[OutputDevice]:
        sd = self._sd
        try:
            default = int(sd.default.device[1])
        except (TypeError, ValueError, IndexError):
            default = -1
        found = []
        for info in sd.query_devices():
            if int(info["max_output_channels"]) > 0:
                index = int(info["index"])
                found.append(OutputDevice(index, str(info["name"]),
                                          float(info["default_samplerate"]), index == default))
        return found

    def rescan(self) -> None:
        # PortAudio builds its device list once, in Pa_Initialize: a card plugged in later is
        # only seen after terminating and initialising again (no stream may be open).
        self._sd._terminate()
        self._sd._initialize()

    def cards(self) -> str | None:
        """The kernel's sound card list (None where there is none to read)."""
        try:
            return ASOUND_CARDS.read_text()
        except OSError:
            return None

    def query_devices(self) -> Any:
        return self._sd.query_devices()

    def rate_for(self, device: OutputDevice, preferred: int) -> int:
        """`preferred` if the device plays it (ALSA's plug devices resample), else its own
        rate (a USB card's hw device often takes only 44100 or 48000 Hz)."""
        try:
            self._sd.check_output_settings(device=device.index, samplerate=preferred,
                                           channels=1, dtype="float32")
        except Exception:  # noqa: BLE001
            return int(device.samplerate)
        return preferred

    def open_input(self, **kwargs: Any) -> Any:
        return self._sd.InputStream(**kwargs)

    def open(self, device: OutputDevice, samplerate: int, latency: float,
             callback: Callable[[Any, int, Any, Any], None]) -> Stream:
        sd = self._sd
        try:
            sd.check_output_settings(device=device.index, samplerate=samplerate, channels=1,
                                     dtype="float32")
        except Exception as exc:
            raise OSError(f"{device.name!r} cannot play {samplerate} Hz mono ({exc})") from None
        stream: Stream = sd.OutputStream(samplerate=samplerate, channels=1, dtype="float32",
                                         device=device.index, latency=latency,
                                         callback=callback)
        return stream


def choose_device(devices: Sequence[OutputDevice], wanted: str | int | None) -> OutputDevice | None:
    """The device `wanted` names: an index, or a fragment of its name (case-insensitive, the
    first match in PortAudio's order); None: the system default (else the first)."""
    if wanted is None:
        return next((d for d in devices if d.is_default), devices[0] if devices else None)
    if isinstance(wanted, int):
        return next((d for d in devices if d.index == wanted), None)
    fragment = wanted.strip().casefold()
    return next((d for d in devices if fragment in d.name.casefold()), None)


# -- ALSA's own routing ------------------------------------------------------------------------
#
# PortAudio lists each card's raw device, "vc4-hdmi-0: MAI PCM i2s-hifi-0 (hw:0,0)" or "USB
# Audio Device: - (hw:2,0)", beside ALSA's named PCMs ("sysdefault", "default"). A raw hw: device
# gets no plugin: the Pi's vc4-hdmi takes only IEC958 subframes (its ALSA card config wraps it in
# an iec958 plug for "default"), so PortAudio cannot open it for plain PCM; and a raw USB card is
# held exclusively, so referee doctor, calibrate and speech say get EBUSY while the service
# plays. ALSA's `default` goes through plug and dmix (and iec958 for HDMI). So a card that
# /etc/asound.conf (or ~/.asoundrc) makes ALSA's default is played through `default`.

ASOUND_CONFS = (Path("/etc/asound.conf"), Path.home() / ".asoundrc")
ASOUND_CARDS = Path("/proc/asound/cards")
_RAW = re.compile(r"\(hw:(\d+),\d+\)\s*$")


def asound_default_name(confs: Sequence[Path] = ASOUND_CONFS) -> str | None:
    """The card `defaults.pcm.card` names (an id or an index) in /etc/asound.conf or this user's
    ~/.asoundrc (the later one wins, as ALSA reads them); None when none names one."""
    wanted: str | None = None
    for conf in confs:
        try:
            text = conf.read_text()
        except OSError:
            continue
        found = re.search(r"defaults\.pcm\.card\s+\"?([\w-]+)\"?", text)
        if found:
            wanted = found.group(1)
    return wanted


def alsa_default_card() -> int | None:
    """The index of the card ALSA's configs make the default (`asound_default_name`)."""
    wanted = asound_default_name(ASOUND_CONFS)
    if wanted is None:
        return None
    if wanted.isdigit():
        return int(wanted)
    try:
        cards = ASOUND_CARDS.read_text()
    except OSError:
        return None
    for line in cards.splitlines():
        found = re.match(r"\s*(\d+)\s*\[\s*([^\]]*?)\s*\]", line)
        if found and found.group(2) == wanted:
            return int(found.group(1))
    return None


def raw_card(device: OutputDevice) -> int | None:
    """The card of a raw ALSA device ("... (hw:2,0)"), else None."""
    found = _RAW.search(device.name)
    return int(found.group(1)) if found else None


def route(device: OutputDevice, devices: Sequence[OutputDevice],
          default_card: int | None) -> tuple[OutputDevice | None, str | None]:
    """What to open for `device`: ALSA's `default` when `device` is the raw device of the card
    ALSA's default plays on; (None, why) for a raw HDMI device nothing routes (unusable)."""
    card = raw_card(device)
    if card is None:
        return device, None
    plugged = next((d for d in devices if d.name == "default"), None)
    if card == default_card and plugged is not None:
        return plugged, None
    if device.is_hdmi:
        return None, (f"sound device {device.name!r} is HDMI's raw device, which takes only "
                      "IEC958 frames: make HDMI ALSA's default (sudo hardware/install.sh "
                      "--sound-card hdmi writes /etc/asound.conf), then the referee plays "
                      "through ALSA's default (plug, iec958)")
    return device, None


def _underflow(status: Any) -> bool:
    flag = getattr(status, "output_underflow", None)
    return bool(status) if flag is None else bool(flag)


class SoundDeviceSink:
    """One mixer, played through whichever PortAudio stream currently works (see module)."""

    def __init__(
        self,
        device: str | int | None = None,
        samplerate: int | None = None,
        *,
        latency: float = LATENCY_S,
        clock: Callable[[], int] = now_us,
        backend: Backend | None = None,
        output_delay_ms: float = 0.0,
        stall_s: float = STALL_S,
        rescan_s: float = RESCAN_S,
        rescan_max_s: float = RESCAN_MAX_S,
        on_health: Callable[[str | None], None] | None = None,
        default_card: Callable[[], int | None] = alsa_default_card,
    ) -> None:
        self.backend: Backend = backend if backend is not None else SoundDeviceBackend()
        self.default_card = default_card
        self.wanted = device
        self.samplerate = samplerate or 22050
        self.latency = latency
        self.clock = clock
        self.output_delay_us = round(output_delay_ms * 1000)
        self.stall_us = round(stall_s * 1_000_000)
        self.rescan_s = rescan_s
        self.rescan_max_s = max(rescan_s, rescan_max_s)
        self.on_health = on_health
        self.mixer = Mixer(self.samplerate)
        self.lead_frames = self.samplerate // 200  # 5 ms past the next block
        self.dac = DacClock(self.samplerate)
        self.underruns = 0
        self.callbacks = 0
        self.reopens = 0
        self.device: OutputDevice | None = None
        self.problem: str | None = None
        self.callback_us: list[int] = []  # time spent in recent callbacks (for benchmarks)
        self._stream: Stream | None = None
        self._last_callback_us = 0
        self._first = threading.Event()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None

    # -- Sink ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Open and start the device; if it is missing, keep looking for it (never raises for
        a configured device that is not there yet: the watchdog rescans)."""
        if not self._open(rescan=False) and self.wanted is None:
            raise OSError(self.problem or "no sound output device")
        self._watchdog = threading.Thread(target=self._watch, name="sound-watchdog", daemon=True)
        self._watchdog.start()

    def frame_to_us(self, frame: int) -> int:
        return self.dac.frame_to_us(frame, self.clock()) + self.output_delay_us

    def describe(self) -> str:
        if self.device is None or self.problem:
            return f"sound device {self.wanted!r}: {self.problem or 'not open'}"
        return (f"sound device {self.device.name!r} via PortAudio at {self.samplerate} Hz, "
                f"{self.latency * 1000:.0f} ms output latency"
                + (f" + {self.output_delay_us / 1000:g} ms speaker delay"
                   if self.output_delay_us else ""))

    def health(self) -> dict[str, Any]:
        """For the scoreboard's status and ``referee doctor``."""
        return {"device": None if self.device is None else self.device.name,
                "playing": self.problem is None and self.device is not None,
                "problem": self.problem, "underruns": self.underruns, "reopens": self.reopens}

    def close(self) -> None:
        self._stop.set()
        if self._watchdog is not None:
            self._watchdog.join(timeout=2.0)
        self._drop_stream()

    # -- the callback (PortAudio's thread) --------------------------------------------------------

    def _callback_for(self, stream_box: list[Stream]) -> Callable[[Any, int, Any, Any], None]:
        def callback(outdata: Any, frames: int, time_info: Any, status: Any) -> None:
            a = self.clock()
            stream = stream_box[0] if stream_box else None
            pa_now = float(stream.time) if stream is not None else 0.0
            b = self.clock()
            underflow = _underflow(status)
            if underflow:
                self.underruns += 1
            frame0 = self.mixer.next_frame
            if stream is not None:
                self.dac.update_at(frame0, self.dac_us(time_info, pa_now, (a + b) / 2, stream),
                                   bracket_us=b - a, underflow=underflow)
            outdata[:, 0] = self.mixer.render(frames, self.frame_to_us(frame0))
            self.callbacks += 1
            self._last_callback_us = b
            self._first.set()
            if len(self.callback_us) < 4096:
                self.callback_us.append(self.clock() - a)

        return callback

    @staticmethod
    def dac_us(time_info: Any, pa_now: float, engine_now: float, stream: Stream) -> float:
        """The engine-clock time the block's first frame reaches the DAC: PortAudio's
        ``outputBufferDacTime`` moved onto the engine clock by the (stream.time, engine time)
        pair read together. Host APIs that report no DAC time (0) get now + the latency."""
        dac = float(time_info.outputBufferDacTime)
        if dac <= 0.0:
            current = float(time_info.currentTime) or pa_now
            dac = current + float(getattr(stream, "latency", 0.0) or 0.0)
        return engine_now + (dac - pa_now) * 1e6

    # -- opening, watching, reopening -------------------------------------------------------------

    def _open(self, *, rescan: bool) -> bool:
        if rescan:
            try:
                self.backend.rescan()
            except Exception as exc:  # noqa: BLE001 - try again at the next rescan
                return self._trouble(f"cannot rescan the sound devices ({exc})")
        try:
            devices = self.backend.devices()
        except Exception as exc:  # noqa: BLE001
            return self._trouble(f"cannot list the sound devices ({exc})")
        device = choose_device(devices, self.wanted)
        if device is None:
            seen = ", ".join(repr(d.name) for d in devices) or "none"
            what = "no sound output device" if self.wanted is None else (
                f"sound device {self.wanted!r} not found (seen: {seen}); plug it in, or fix "
                f"device in [speech]")
            return self._trouble(what + "; looking again when a sound card is plugged in")
        routed, unusable = route(device, devices, self.default_card())
        if routed is None:
            return self._trouble(unusable or f"sound device {device.name!r} is not usable")
        device = routed
        if self.callbacks == 0:  # the first stream sets the rate; every later one keeps it
            rate = self.backend.rate_for(device, self.samplerate)
            if rate != self.samplerate:
                self.samplerate, self.mixer = rate, Mixer(rate)
                self.lead_frames, self.dac = rate // 200, DacClock(rate)
        box: list[Stream] = []
        self._first.clear()
        try:
            stream = self.backend.open(device, self.samplerate, self.latency, self._callback_for(box))
            box.append(stream)
            self.dac.reset()  # a new stream: a new frame → time mapping
            self._stream = stream
            stream.start()
        except Exception as exc:  # noqa: BLE001
            self._drop_stream()
            return self._trouble(f"sound device {device.name!r} does not open ({exc})")
        if not self._first.wait(START_S):
            self._drop_stream()
            return self._trouble(f"sound device {device.name!r} did not start playing")
        self.device = device
        self._last_callback_us = self.clock()
        self._healthy()
        return True

    def _cards(self) -> str | None:
        reader = getattr(self.backend, "cards", None)
        try:
            return None if reader is None else reader()
        except Exception:  # noqa: BLE001 - unreadable: the doubling wait alone decides
            return None

    def _watch(self) -> None:
        next_scan = 0.0
        backoff = self.rescan_s / 2  # the first look, at once, doubles it to rescan_s
        cards = self._cards()
        while not self._stop.wait(0.05):
            if self.problem is None:
                if self.clock() - self._last_callback_us > self.stall_us:
                    name = self.device.name if self.device else self.wanted
                    self._drop_stream()
                    self._trouble(f"sound device {name!r} stopped playing (unplugged?); "
                                  "looking for it again when a sound card is plugged in")
                    backoff = self.rescan_s
                    next_scan = time.monotonic() + backoff
                    cards = self._cards()
                continue
            seen = self._cards()
            changed = seen is not None and seen != cards
            if changed or time.monotonic() >= next_scan:
                # a card came or went: look now, and soon again (its PCM may not be ready yet);
                # nothing changed: look less and less often
                backoff = self.rescan_s if changed else min(2 * backoff, self.rescan_max_s)
                cards = seen
                self.reopens += 1
                self._open(rescan=True)
                next_scan = time.monotonic() + backoff

    def _drop_stream(self) -> None:
        stream, self._stream = self._stream, None
        # Whatever was scheduled would come out late (or never): the table is paused meanwhile.
        with self.mixer.lock:
            self.mixer._items.clear()
        if stream is None:
            return
        # abort, not stop: stop waits for buffers to drain, which a vanished device never does.
        closer = threading.Thread(target=_abort_and_close, args=(stream,), daemon=True)
        closer.start()
        closer.join(timeout=1.0)

    def _trouble(self, problem: str) -> bool:
        changed = problem != self.problem
        self.problem = problem
        if changed and self.on_health is not None:
            self.on_health(problem)
        return False

    def _healthy(self) -> None:
        if self.problem is not None:
            self.problem = None
            if self.on_health is not None:
                self.on_health(None)


def _abort_and_close(stream: Stream) -> None:
    try:
        stream.abort()
    except Exception:  # noqa: BLE001, S110 - a stream on a vanished device may refuse; close it
        pass
    try:
        stream.close()
    except Exception:  # noqa: BLE001, S110
        pass


def list_outputs() -> list[OutputDevice]:
    """PortAudio's output devices ([] without sounddevice or PortAudio)."""
    try:
        return SoundDeviceBackend().devices()
    except Exception:  # noqa: BLE001
        return []
