"""Turning text into checked speech clips: Piper or pyttsx3 in a child process, espeak-ng last.

`[speech] voice = "piper"` (or "piper:/path/to/voice.onnx") renders with Piper, a natural voice
(`referee.voice.piper_voice`), in the same child process and with the same checks; a missing or
failing Piper model is said once in the log and the table speaks with pyttsx3 from then on.
pyttsx3 (espeak-ng underneath) runs in a child process, one phrase per `save_to_file` +
`runAndWait`, each answer awaited with a timeout; every file is checked (it exists, its length is
plausible for the text, it is not silent, speech starts in it). If pyttsx3 fails in any way, the
renderer says so once and runs `espeak-ng -w` itself from then on. Clips are cached on disk under a
hash of (text, voice, rate, volume, language, pyttsx3 and espeak-ng versions; for Piper its
model's name, size and time and Piper's version) with their measured speech onset, so a restart
renders nothing new.
"""

from __future__ import annotations

import array
import dataclasses
import hashlib
import importlib.metadata
import json
import os
import re
import select
import shutil
import subprocess
import sys
import threading
import time
import wave
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

from referee.voice import phrases, piper_voice
from referee.voice.audio import Clip, find_onset, read_wav, speech_rms_db, write_wav

CACHE_FORMAT = 1
FALLBACK_SAID = "speaking with espeak-ng"  # how a Piper notice ends (the doctor's voice line)
LEVEL_FLOOR_DB = -50.0  # a clip quieter than this (speech part, dBFS) counts as silent


class SpeechError(RuntimeError):
    """Speech cannot be rendered; the message names the cause and the fix."""


# ------------------------------------------------------------------------------------------------
# Options


@dataclass(frozen=True)
class SpeechOptions:
    """How the referee speaks and where clips are kept (config `[speech]`, CLI flags)."""

    # an espeak-ng voice ("en-us", "en+f3"); None: the language's; "piper": the language's Piper
    # voice; "piper:/path/to/voice.onnx" (or "piper:NAME" in a voices folder): that Piper voice
    voice: str | None = None
    rate: int = 175  # words per minute
    volume: float = 1.0  # 0.1 .. 1.0
    language: str = "en"  # which phrase table
    cache_dir: Path | None = None  # None: $XDG_CACHE_HOME or ~/.cache, then table-referee/speech
    device: str | int | None = None  # sound output: part of its name, or an index; None: default
    output_delay_ms: float = 0.0  # what the speaker adds after the DAC (referee calibrate)
    engine: str = "pyttsx3"  # "pyttsx3" (espeak-ng as the fallback) or "espeak-ng" directly
    timeout_s: float = 10.0  # per phrase in the render child (plus start-up)
    python: str = sys.executable  # interpreter that runs the render child
    seats: tuple[str, ...] = ()  # seat names whose phrases are rendered in the background at start

    def __post_init__(self) -> None:
        phrases.get_language(self.language)
        if not 80 <= self.rate <= 450:
            raise SpeechError(f"speech rate {self.rate!r} is out of range; use 80-450 words/minute")
        if not 0.1 <= self.volume <= 1.0:
            raise SpeechError(f"speech volume {self.volume!r} is out of range; use 0.1-1.0")
        if self.engine not in ("pyttsx3", "espeak-ng"):
            raise SpeechError(f"speech engine {self.engine!r} is unknown; use pyttsx3 or espeak-ng")

    @classmethod
    def coerce(cls, options: SpeechOptions | Mapping[str, Any] | None) -> SpeechOptions:
        """Options from a mapping (config file, `--option`): keys as fields, optionally `speech_`."""
        if options is None:
            return cls()
        if isinstance(options, SpeechOptions):
            return options
        known = {f.name: f for f in fields(cls)}
        given: dict[str, Any] = {}
        for name, value in options.items():
            field_name = name.removeprefix("speech_")
            if field_name not in known:
                continue  # other components' options share the mapping
            try:
                given[field_name] = _convert(field_name, value)
            except (TypeError, ValueError):
                raise SpeechError(f"speech option {name}={value!r} is not valid") from None
        return cls(**given)

    @property
    def voice_name(self) -> str:
        """The espeak-ng voice (with Piper: the one it falls back to)."""
        if self.voice is None or self.piper:
            return phrases.get_language(self.language).voice
        return self.voice

    @property
    def piper(self) -> bool:
        """Whether a Piper voice is asked for (`voice = "piper..."`)."""
        return piper_voice.is_piper(self.voice)

    @property
    def cache_path(self) -> Path:
        if self.cache_dir is not None:
            return Path(self.cache_dir).expanduser()
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "table-referee" / "speech"


def _convert(name: str, value: Any) -> Any:
    if name == "rate":
        return int(value)
    if name in ("volume", "timeout_s", "output_delay_ms"):
        return float(value)
    if name == "cache_dir":
        return Path(value)
    if name == "seats":
        return tuple(value.split(",")) if isinstance(value, str) else tuple(value)
    if name == "device" and isinstance(value, str) and value.isdigit():
        return int(value)
    return value


@lru_cache(maxsize=1)
def espeak_version() -> str:
    """espeak-ng's version ("1.51"), or "missing"."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        return "missing"
    try:
        found = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "missing"
    match = re.search(r"(\d+\.\d+(?:\.\d+)?)", found.stdout)
    return match.group(1) if match else "unknown"


def pyttsx3_version() -> str:
    try:
        return importlib.metadata.version("pyttsx3")
    except importlib.metadata.PackageNotFoundError:
        return "missing"


# ------------------------------------------------------------------------------------------------
# The render child (runs pyttsx3; speaks JSON lines on a private copy of stdout)


def child_main(argv: list[str] | None = None) -> int:
    """Entry of the render child: one request line in, one answer line out, until stdin closes.
    `piper MODEL` as arguments: Piper with that model; none: pyttsx3."""
    argv = sys.argv[2:] if argv is None else argv
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # pyttsx3 prints "Audio saved to ..."; keep that off the protocol
    sys.stdout = sys.stderr

    def answer(**reply: Any) -> None:
        proto.write(json.dumps(reply) + "\n")

    if argv[:1] == ["piper"]:
        return piper_voice.serve(argv[1], sys.stdin, answer)
    try:
        import pyttsx3

        engine = pyttsx3.init()
        voices = engine.getProperty("voices")
    except Exception as exc:  # noqa: BLE001 - any failure means "use the fallback"
        answer(ok=False, error=f"pyttsx3 did not start: {exc}")
        return 1
    answer(ok=True, ready=True)
    current: dict[str, Any] = {}
    for line in sys.stdin:
        try:
            request = json.loads(line)
            _child_render(engine, voices, current, request)
            answer(ok=True)
        except Exception as exc:  # noqa: BLE001
            answer(ok=False, error=str(exc) or type(exc).__name__)
    return 0


def _voice_known(voices: Iterable[Any], wanted: str) -> bool:
    base = wanted.split("+")[0].lower()
    for v in voices:
        names = {str(v.id).lower(), str(v.id).lower().rsplit("/", 1)[-1], str(v.name).lower()}
        names.update(str(lang).lower() for lang in (v.languages or []))
        if base in names:
            return True
    return False


def _child_render(engine: Any, voices: Any, current: dict[str, Any], request: dict[str, Any]) -> None:
    voice = request["voice"]
    if current.get("voice") != voice and not _voice_known(voices, voice):
        raise ValueError(f"pyttsx3 knows no voice {voice!r}")
    path = Path(request["path"])
    # pyttsx3 2.99's first runAndWait after init() returns before the phrase is synthesised
    # (espeak-ng does it in its own thread): wait for espeak-ng, then for the file; a file still
    # not whole is said again, properties and all.
    for attempt in range(3):
        voice_now = {"voice": voice} if current.get("voice") != voice or attempt else {}
        _set_now(engine, {**voice_now, "rate": request["rate"], "volume": request["volume"]})
        current["voice"] = voice
        path.unlink(missing_ok=True)
        engine.save_to_file(request["text"], str(path))
        engine.runAndWait()
        _drain(engine)
        for _ in range(20):  # synthesis is over: only a missing file is worth waiting for
            if _complete_wav(path):
                return
            if path.exists():
                break
            time.sleep(0.01)
    raise RuntimeError("pyttsx3 wrote no usable file in 3 attempts")


def _set_now(engine: Any, properties: dict[str, Any]) -> None:
    """Set pyttsx3 properties so that they hold for the next phrase, whatever the load.

    espeak-ng (pyttsx3's AUDIO_OUTPUT_RETRIEVAL mode) queues a rate or volume change for its own
    synthesis thread, and pyttsx3's runAndWait starts by stopping the driver, which cancels
    espeak-ng's queue whenever anything is still in it (`espeak_IsPlaying`): on a busy machine
    the new rate was dropped there, and the phrase came out at pyttsx3's default 200 words a
    minute. So the properties are handed to the driver at once (pyttsx3 itself only queues
    them until the next runAndWait) and espeak-ng's queue is waited empty."""
    driver = _driver(engine)
    for name, value in properties.items():
        (engine if driver is None else driver).setProperty(name, value)  # None: its own queue
    _drain(engine)


def _driver(engine: Any) -> Any:
    """pyttsx3's driver behind its engine (None: a pyttsx3 that keeps it elsewhere)."""
    return getattr(getattr(engine, "proxy", None), "_driver", None)


def _drain(engine: Any) -> None:
    """Wait until espeak-ng has done everything asked of it (`espeak_Synchronize`): the
    properties set, the phrase synthesised and its file written. Without it the first phrase,
    whose runAndWait returns before it is synthesised, was read half-written and said again
    (which espeak-ng says a little differently)."""
    backend = getattr(sys.modules.get(type(_driver(engine)).__module__), "_espeak", None)
    synchronize = getattr(backend, "Synchronize", None)
    if synchronize is not None:
        synchronize()


def _complete_wav(path: Path) -> bool:
    """A WAV with at least 50 ms of audio that ends in silence (not cut off mid-word)."""
    try:
        with wave.open(str(path), "rb") as w:
            frames = w.getnframes()
            edge = w.getframerate() // 500  # 2 ms
            if frames < 25 * edge or w.getsampwidth() != 2 or w.getnchannels() != 1:
                return False
            w.setpos(frames - edge)
            tail = array.array("h", w.readframes(edge))  # an odd byte count: ValueError
    except (OSError, EOFError, ValueError, wave.Error):
        return False
    # a header that promises more frames than were written yet (pyttsx3 returned before the
    # file was whole) reads a short tail: not usable yet, never an error
    return len(tail) == edge and max(map(abs, tail)) < 64


class _Child:
    """The render child process, driven one request at a time with a timeout per answer."""

    def __init__(self, python: str, timeout_s: float, args: Sequence[str] = (),
                 start_s: float = 20.0) -> None:
        boot = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from referee.voice.tts import child_main; raise SystemExit(child_main())"
        )
        root = str(Path(__file__).resolve().parents[2])
        self.proc = subprocess.Popen(
            [python, "-c", boot, root, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self._buffer = b""
        try:
            self._read(timeout_s + start_s)  # start-up: importing pyttsx3 is slow on a Pi
        except BaseException:
            self.close()
            raise

    def render(self, request: dict[str, Any], timeout_s: float) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
        except OSError as exc:
            raise RuntimeError(f"render child is gone ({exc})") from None
        self._read(timeout_s)

    def _read(self, timeout_s: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"render child gave no answer within {timeout_s:g} s")
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise RuntimeError(f"render child exited (status {self.proc.wait()})")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(str(reply.get("error", "render child failed")))
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


# ------------------------------------------------------------------------------------------------
# Renderer + disk cache


LEAD_S = 0.1  # the most silence a phrase starts with: a ruling follows its race at once


def check_clip(path: Path, text: str, rate: int) -> Clip:
    """The rendered file as a clip, or ValueError saying what is wrong with it."""
    if not path.exists() or path.stat().st_size <= 44:
        raise ValueError(f"no audio written for {text!r}")
    samples, samplerate = read_wav(path)
    seconds = len(samples) / samplerate
    longest = 2.0 + 0.15 * len(text) * 175 / rate
    if not 0.1 <= seconds <= longest:
        raise ValueError(f"{seconds:.2f} s of audio for {text!r} is implausible")
    if speech_rms_db(samples, samplerate) < LEVEL_FLOOR_DB:
        raise ValueError(f"the audio for {text!r} is silent")
    onset = find_onset(samples, samplerate)
    if onset is None or onset > samplerate // 2:
        raise ValueError(f"no speech found at the start of the audio for {text!r}")
    lead = round(samplerate * LEAD_S)
    if onset > lead:  # Piper now and then starts a third of a second in
        write_wav(path, samples[onset - lead:], samplerate)  # the cache holds it as played
        samples, samplerate = read_wav(path)  # (as a restart will read it, to the last bit)
        onset = lead
    return Clip(samples, samplerate, onset)


class Renderer:
    """Text → checked `Clip`, from the disk cache or rendered (Piper or pyttsx3 in the child,
    else espeak-ng): each engine that fails hands over to the next, said once in the log."""

    PIPER_START_S = 90.0  # loading a Piper model takes seconds on a Zero 2 W
    PIPER_PHRASE_S = 60.0  # ... and a long phrase several: slow is not broken (a hang is)

    def __init__(self, options: SpeechOptions, *, log: TextIO | None = None) -> None:
        self.options = options
        self.log = log if log is not None else sys.stderr
        self.dir = options.cache_path
        self.renders = 0  # phrases actually synthesised (not found in the cache)
        self.notices: list[str] = []
        self.engine = options.engine
        self.model: piper_voice.PiperModel | None = None
        self._child: _Child | None = None
        self._lock = threading.Lock()
        self._versions = (pyttsx3_version(), espeak_version())
        if options.piper:
            self._choose_piper()

    def _choose_piper(self) -> None:
        """The Piper voice of `[speech] voice` for the options' language, or the fallback."""
        try:
            model = piper_voice.resolve(str(self.options.voice), self.options.language)
        except piper_voice.PiperMissing as exc:
            self.model = None
            self._give_up(f"speech: {exc}; {FALLBACK_SAID}")
            return
        if model != self.model and self._child is not None:
            self._child.close()  # another model: loaded afresh
            self._child = None
        self.model, self.engine = model, "piper"

    def use_language(self, language: str) -> None:
        """Speak `language` from now on: its phrase table, and its voice unless [speech] voice
        names one (`SpeechOptions.voice_name`); with `voice = "piper"`, that language's Piper
        voice (espeak-ng's, said once, when it has none)."""
        with self._lock:
            self.options = dataclasses.replace(self.options, language=language)
            if self.options.piper and self.options.voice == piper_voice.PREFIX:
                self._choose_piper()

    @property
    def voice(self) -> str:
        """The voice in use, as said by doctor and describe ("Piper en_US-joe-medium")."""
        if self.engine == "piper" and self.model is not None:
            return f"Piper {self.model.name}"
        return f"espeak-ng {self.options.voice_name}"

    def key(self, text: str) -> str:
        o = self.options
        if self.engine == "piper" and self.model is not None:
            blob = json.dumps([CACHE_FORMAT, text, "piper", self.model.identity, o.rate, o.volume,
                               o.language, piper_voice.version()])
        else:
            blob = json.dumps(
                [CACHE_FORMAT, text, o.voice_name, o.rate, o.volume, o.language, *self._versions]
            )
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def path(self, text: str) -> Path:
        return self.dir / f"{self.key(text)}.wav"

    def clip(self, text: str) -> Clip:
        with self._lock:
            while True:  # once more when Piper failed: the key is espeak-ng's then
                wav = self.path(text)
                meta = wav.with_suffix(".json")
                if wav.exists() and meta.exists():
                    try:
                        info = json.loads(meta.read_text())
                        samples, samplerate = read_wav(wav)
                        return Clip(samples, samplerate, int(info["onset"]))
                    except (OSError, ValueError, KeyError):
                        pass  # a damaged entry is rendered again
                self.dir.mkdir(parents=True, exist_ok=True)
                engine, voice = self.engine, self.voice
                clip = self._render(text, wav)
                if clip is not None:
                    break
            meta.write_text(json.dumps({
                "text": text, "onset": clip.onset, "samplerate": clip.samplerate,
                "seconds": round(clip.seconds, 4), "engine": engine, "voice": voice,
                "rate": self.options.rate, "volume": self.options.volume,
                "language": self.options.language, "pyttsx3": self._versions[0],
                "espeak_ng": self._versions[1], "piper": piper_voice.version(),
            }))
            return clip

    def ensure(self, text: str) -> None:
        """Have `text` in the disk cache (rendered if missing), without reading it."""
        with self._lock:
            wav = self.path(text)
            if wav.exists() and wav.with_suffix(".json").exists():
                return
        self.clip(text)

    def clips(self, texts: Iterable[str]) -> list[Clip]:
        return [self.clip(t) for t in texts]

    def _render(self, text: str, wav: Path) -> Clip | None:
        """The clip rendered into `wav`; None when Piper failed (the key has changed)."""
        tmp = wav.with_name(f".{wav.stem}.{os.getpid()}.{threading.get_ident()}.wav")
        try:
            if self.engine == "piper":
                try:
                    clip = self._with_piper(text, tmp)
                except (RuntimeError, ValueError, OSError) as exc:
                    self._give_up(f"speech: the Piper voice failed ({exc}); {FALLBACK_SAID}")
                    return None
                self.renders += 1
                os.replace(tmp, wav)
                return clip
            if self.engine == "pyttsx3":
                try:
                    clip = self._with_pyttsx3(text, tmp)
                    self.renders += 1
                    os.replace(tmp, wav)
                    return clip
                except (RuntimeError, ValueError, OSError) as exc:
                    self._give_up_pyttsx3(str(exc))
            clip = self._with_espeak(text, tmp)
            self.renders += 1
            os.replace(tmp, wav)
            return clip
        finally:
            tmp.unlink(missing_ok=True)

    def _with_pyttsx3(self, text: str, tmp: Path) -> Clip:
        o = self.options
        if self._child is None:
            self._child = _Child(o.python, o.timeout_s)
        request = {"text": text, "path": str(tmp), "voice": o.voice_name, "rate": o.rate,
                   "volume": o.volume}
        self._child.render(request, o.timeout_s)
        return check_clip(tmp, text, o.rate)

    def _with_piper(self, text: str, tmp: Path) -> Clip:
        o = self.options
        assert self.model is not None
        if self._child is None:
            self._child = _Child(o.python, o.timeout_s, ["piper", str(self.model.path)],
                                 start_s=self.PIPER_START_S)
        self._child.render({"text": text, "path": str(tmp), "rate": o.rate, "volume": o.volume},
                           max(o.timeout_s, self.PIPER_PHRASE_S))
        return check_clip(tmp, text, o.rate)

    def _give_up_pyttsx3(self, reason: str) -> None:
        self._give_up(f"speech: pyttsx3 failed ({reason}); rendering with espeak-ng directly",
                      "espeak-ng")

    def _give_up(self, notice: str, then: str | None = None) -> None:
        """Hand over to the next engine (after Piper: the configured one), said once."""
        if self._child is not None:
            self._child.close()
            self._child = None
        self.engine = then or self.options.engine
        self.notices.append(notice)
        print(notice, file=self.log, flush=True)

    def _with_espeak(self, text: str, tmp: Path) -> Clip:
        o = self.options
        exe = shutil.which("espeak-ng")
        if exe is None:
            raise SpeechError("espeak-ng is not installed; install it (apt install espeak-ng)")
        cmd = [exe, "-v", o.voice_name, "-s", str(o.rate), "-a", str(round(o.volume * 100)),
               "-w", str(tmp), "--stdin"]
        try:
            done = subprocess.run(cmd, input=text, capture_output=True, text=True,
                                  timeout=o.timeout_s)
        except subprocess.TimeoutExpired:
            raise SpeechError(f"espeak-ng took over {o.timeout_s:g} s for {text!r}") from None
        if "voice does not exist" in done.stderr:
            raise SpeechError(
                f"voice {o.voice_name!r} is not an installed espeak-ng voice; "
                f"list them with: espeak-ng --voices={o.language}"
            )
        if done.returncode != 0:
            raise SpeechError(f"espeak-ng failed for {text!r}: {done.stderr.strip()}")
        try:
            return check_clip(tmp, text, o.rate)
        except ValueError as exc:
            raise SpeechError(f"espeak-ng: {exc}") from None

    def rest(self) -> None:
        """Close the render child while nothing is rendered (started again when needed)."""
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._child is not None:
                self._child.close()
                self._child = None
