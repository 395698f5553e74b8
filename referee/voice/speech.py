"""The referee's voice: phrases rendered ahead of time (`referee.voice.tts`), played on time.

 `SpeechAnnouncer` implements the engine's `Announcer` port over an audio sink
(`referee.voice.audio`). A cadence is pre-mixed into one buffer with each beat's onset on its tempo grid
sample, scheduled at an output frame, and the cue returned is that frame's engine-clock time plus
the go-word's offset: the instant its speech starts. `say()` queues phrases one after another;
`interrupt=True` fades out a stale one. Callers never wait: rendering happens on a worker thread.
"""

from __future__ import annotations

import argparse
import heapq
import io
import shutil
import sys
import tempfile
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

from referee.voice import phrases, sentence
from referee.voice.announce import PrintAnnouncer
from referee.voice.audio import (
    Clip,
    RecordingSink,
    Scheduled,
    Sink,
    output_devices,
    premix,
    write_wav,
)
from referee.voice.device import SoundDeviceSink
from referee.voice.tts import (
    Renderer,
    SpeechError,
    SpeechOptions,
    espeak_version,
    pyttsx3_version,
)

__all__ = [
    "SpeechAnnouncer", "SpeechError", "SpeechOptions", "Renderer", "make_announcer", "open_sink",
    "render_all", "doctor_lines", "speech_main", "startup_texts",
]


# ------------------------------------------------------------------------------------------------
# The announcer


@dataclass(frozen=True)
class Held:
    """A clip as the voice keeps it in memory: 16-bit samples at the output rate (half of
    float32's bytes), turned back into a `Clip` when it is said."""

    pcm: npt.NDArray[np.int16]
    samplerate: int
    onset: int

    @classmethod
    def of(cls, clip: Clip) -> Held:
        pcm = np.clip(np.round(clip.samples * 32768.0), -32768, 32767).astype(np.int16)
        return cls(pcm, clip.samplerate, clip.onset)

    def clip(self) -> Clip:
        return Clip((self.pcm * (1 / 32768.0)).astype(np.float32), self.samplerate, self.onset)


@dataclass(frozen=True)
class CueRecord:
    """A cadence as scheduled: its words, output frame of the buffer, go-word frame, cue time."""

    beats: tuple[str, ...]
    frame: int
    go_frame: int
    cue_us: int


class SpeechAnnouncer:
    """`Announcer` with real speech: warm clips are scheduled at once, cold ones by a worker.

    Held in memory (16-bit): the words of the game's calls (said on the beat: a cue is promised
    when the call is made) and what `warm` is asked for; every other phrase of the table is
    rendered into the disk cache ahead of time (`warm_table`) and read from it when said (a
    few milliseconds, on the worker), the latest `RECENT` kept. On a cold cache the calls'
    words come first: the voice is not quiet (`quiet_at`, which the first call waits for) until
    they are ready; the rest renders behind play."""

    COLD_ORIGIN_S = 0.15  # room left for a beat's leading silence when its clip is not yet known
    COLD_LEAD_S = 0.4  # how far ahead a cadence with unrendered beats is placed
    RECENT = 64  # how many rendered-on-demand phrases (rulings) stay in memory
    REST_S = 60.0  # the render child (pyttsx3's 42 MB, Piper's 190 MB) is closed after this idle

    def __init__(
        self,
        renderer: Renderer,
        sink: Sink,
        *,
        language: str = "en",
        out: TextIO | None = None,
    ) -> None:
        self.renderer = renderer
        self.sink = sink
        self.language = language
        self.out = out if out is not None else sys.stdout
        self.cues: deque[CueRecord] = deque(maxlen=256)  # the latest cadences, for checks
        self.book = phrases.NO_GAME  # the game's own words (`learn`)
        self._pinned: dict[str, Held] = {}
        self._recent: OrderedDict[str, Held] = OrderedDict()
        self._needed = 0  # the calls' words still being rendered (`quiet_at` waits for them)
        self._lock = threading.Lock()
        self._reserved = 0  # the voice is promised up to here to a cadence still being rendered
        self._calls_cut = 0  # how many times the calls were cut (a late cadence then is dropped)
        self._generation = 0
        self._pending_says = 0
        self._jobs: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = 0
        self._cond = threading.Condition()
        self._running = 0
        self._closed = False
        self._worker = threading.Thread(target=self._work, name="speech-worker", daemon=True)
        self._worker.start()

    # -- Announcer --------------------------------------------------------------------------------

    def learn(self, book: phrases.Phrasebook) -> None:
        """The game's own words; its calls' beats are made ready before any cue is promised.
        A book in another language (the table's changed on the setup page) changes the phrase
        table and the voice that reads it (the renderer's `language`)."""
        if book == self.book:
            return
        self.book = book
        if book.language != self.language:
            self.language = book.language
            retarget = getattr(self.renderer, "use_language", None)
            if retarget is not None:
                retarget(book.language)
        self.warm(startup_texts(self.language, [book]), wait=True)

    def cadence(self, key: str, params: dict[str, Any], tempo_ms: int) -> int:
        beats = tuple(phrases.words(key, params, self.language, book=self.book))
        rate = self.sink.samplerate
        tempo = round(tempo_ms * rate / 1000)
        clips = [self._loaded(b) for b in beats]
        label = " … ".join(beats)
        with self._lock:
            now = self.sink.mixer.next_frame + self.sink.lead_frames
            if all(c is not None for c in clips):
                mix = premix([c for c in clips if c is not None], tempo)
                frame = max(now, self._free())
                go = frame + mix.go
                self.sink.mixer.schedule(mix.samples, frame, label, "cadence",
                                         marks=_marks(frame, mix.beats, beats))
            else:
                origin = round(self.COLD_ORIGIN_S * rate)
                frame = max(now + round(self.COLD_LEAD_S * rate), self._free())
                go = frame + origin + (len(beats) - 1) * tempo
                self._reserved = go + rate  # until the real length is known
                cut = self._calls_cut
                self._submit(0, lambda: self._late_cadence(beats, tempo, origin, frame, label,
                                                           cut))
        cue = self.sink.frame_to_us(go)
        self.cues.append(CueRecord(beats, frame, go, cue))
        return cue

    def say(self, key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
        parts = phrases.segments(key, params, self.language, book=self.book)
        if len(parts) == 1:
            self.say_text(parts[0], interrupt=interrupt)
        else:  # shown as the sentence it is ("by 201 milliseconds"), not as its pieces
            self.say_parts(parts, interrupt=interrupt,
                           label=phrases.text(key, params, self.language, book=self.book))

    def say_parts(self, parts: Sequence[str], *, interrupt: bool = False,
                  label: str | None = None) -> Scheduled | None:
        """Say a phrase made of pre-rendered pieces as one clip, heard as one sentence
        (`referee.voice.sentence`), shown as `label` (default: the pieces). The joining
        (milliseconds on a Zero 2 W) is done by the speech worker, never on the caller's (the
        engine's) thread."""
        label = " ".join(parts) if label is None else label
        if interrupt:
            self.hush()
        with self._lock:
            self._pending_says += 1
            generation = self._generation
        self._submit(0, lambda: self._late_parts(list(parts), label, generation))
        return None

    def say_text(self, said: str, *, interrupt: bool = False) -> Scheduled | None:
        """Say this text (already in the table's language); see `say`. Returns the scheduled clip
        when it was in memory (placed at once), None when it is being rendered first."""
        if not said:
            return None
        if interrupt:
            self.hush()
        clip = self._loaded(said)
        with self._lock:
            if clip is not None and self._pending_says == 0:
                return self._place(said, clip)
            self._pending_says += 1
            generation = self._generation
        self._submit(0, lambda: self._late_parts([said], said, generation))
        return None

    def hush(self) -> None:
        """Fade out the phrase being said and drop those waiting (cadences carry on)."""
        with self._lock:
            self._generation += 1
            self.sink.mixer.cut("say")

    def cut_calls(self) -> None:
        """The game ended under a call: fade out the call being said and everything waiting."""
        with self._lock:
            self._generation += 1
            self._calls_cut += 1
            self._reserved = 0
            self.sink.mixer.cut("cadence")
            self.sink.mixer.cut("say")

    def quiet_at(self) -> int | None:
        """The engine-clock time the last phrase given so far ends (None: still rendering)."""
        with self._lock:
            if self._pending_says or self._reserved or self._needed:
                return None
            return self.sink.frame_to_us(self.sink.mixer.last_end)

    def describe(self) -> str:
        o = self.renderer.options
        return (
            f"speech: {self.sink.describe()}; voice {self.renderer.voice} at {o.rate} words/min, "
            f"rendered by {self.renderer.engine} (espeak-ng {espeak_version()}), "
            f"cache {self.renderer.dir}"
        )

    def health(self) -> dict[str, Any]:
        """The sound device's state (playing, problem, underruns) for the scoreboard and doctor."""
        report = getattr(self.sink, "health", None)
        return dict(report()) if report is not None else {"device": None, "playing": True,
                                                          "problem": None, "underruns": 0}

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._worker.join(timeout=2.0)
        self.sink.close()
        self.renderer.close()

    # -- warming and waiting ----------------------------------------------------------------------

    def warm(self, texts: Iterable[str], *, wait: bool = False) -> None:
        """Render (or load) these phrases into memory; in the background unless `wait`."""
        for said in texts:
            if wait:
                self._pin(said)
            else:
                self._submit(1, lambda said=said: self._pin(said))  # type: ignore[misc]

    def warm_table(self, seats: Sequence[str], said: Sequence[tuple[str, dict[str, Any]]] = (),
                   *, wait: bool = False, reasons: Sequence[str] = (),
                   first: Sequence[tuple[str, dict[str, Any]]] = ()) -> None:
        """Get every phrase this table can say ahead of time ready (see `phrases.table_lines`),
        then every ruling piece (margins, counts, each seat with each reason its game declares),
        so that on a slow Pi no ruling waits for the speech engine (benchmarks/bench_speech.py
        measures it). First, held, the words of the game's calls for these seats and the phrases
        said `first` (the deal): the voice is not quiet (`quiet_at`, which the first call waits
        for) until they are; then the table's phrases and the ruling pieces into the disk cache
        only, behind play.
        `wait`: all of it now, all held (tests and benchmarks)."""
        lines = [line.text for line in phrases.table_lines(seats, self.language, said,
                                                           book=self.book)]
        pieces = phrases.prerender_texts(seats, self.language, reasons, book=self.book)
        if wait:
            self.warm([*lines, *pieces], wait=True)
            return
        calls = list(dict.fromkeys(
            beat for call in self.book.calls
            for seat in (seats if phrases.names_a_seat(call, self.book) else [""])
            for beat in phrases.words(call, {"seat": seat}, self.language, book=self.book)))
        calls += [text for key, params in first
                  for text in phrases.segments(key, params, self.language, book=self.book)]
        needed = [text for text in dict.fromkeys(calls) if self._loaded(text) is None]
        with self._lock:
            self._needed += len(needed)
        for beat in needed:
            self._submit(0, lambda beat=beat: self._pin_needed(beat))  # type: ignore[misc]
        for text in (*lines, *pieces):  # the table's phrases (1), then the ruling pieces (2)
            if text not in calls:
                self._submit(1 if text in lines else 2,
                             lambda text=text: self.renderer.ensure(text))  # type: ignore[misc]

    def held(self) -> dict[str, Held]:
        """What the voice holds in memory now (the calls' words, what it was asked to warm,
        the latest phrases said)."""
        with self._lock:
            return {**self._pinned, **self._recent}

    def idle(self, timeout: float = 10.0) -> bool:
        """Wait until no rendering job is queued or running (tests, benchmarks, shutdown)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._jobs or self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def wait_quiet(self, timeout: float = 30.0) -> bool:
        """Wait until everything queued has been rendered and played."""
        deadline = time.monotonic() + timeout
        if not self.idle(timeout):
            return False
        while self.sink.mixer.busy_until() > self.sink.mixer.next_frame:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    # -- inside ------------------------------------------------------------------------------------

    def _loaded(self, said: str) -> Clip | None:
        with self._lock:
            held = self._pinned.get(said) or self._recent.get(said)
            if held is not None and said in self._recent:
                self._recent.move_to_end(said)
        return None if held is None else held.clip()

    def _pin(self, said: str) -> None:
        held = Held.of(self.renderer.clip(said).at_rate(self.sink.samplerate))
        with self._lock:
            self._pinned[said] = held

    def _pin_needed(self, said: str) -> None:
        try:
            self._pin(said)
        finally:
            with self._lock:
                self._needed -= 1

    def _fetch(self, said: str) -> Clip:
        found = self._loaded(said)
        if found is not None:
            return found
        clip = self.renderer.clip(said).at_rate(self.sink.samplerate)
        with self._lock:
            self._recent[said] = Held.of(clip)
            while len(self._recent) > self.RECENT:
                self._recent.popitem(last=False)
        return clip

    def _free(self) -> int:
        """The first frame after everything the voice has been given (call with the lock held)."""
        return max(self.sink.mixer.busy_until(), self._reserved)

    def _place(self, said: str, clip: Clip) -> Scheduled:
        """Schedule a phrase as soon as the voice is free (call with the lock held)."""
        start = max(self.sink.mixer.next_frame + self.sink.lead_frames, self._free())
        return self.sink.mixer.schedule(clip.samples, start, said, "say")

    def _late_parts(self, parts: list[str], label: str, generation: int) -> None:
        """Render what is missing of a phrase (one piece, or several joined), then place it."""
        try:
            clip = sentence.join([self._fetch(p) for p in parts], sentence.tight(parts))
        except SpeechError as exc:
            print(f"speech: {exc}", file=sys.stderr, flush=True)
            print("  » " + label, file=self.out, flush=True)
            clip = None
        with self._lock:
            self._pending_says -= 1
            if clip is not None and generation == self._generation:
                self._place(label, clip)

    def _late_cadence(
        self, beats: tuple[str, ...], tempo: int, origin: int, frame: int, label: str,
        calls_cut: int,
    ) -> None:
        try:
            clips = [self._fetch(b) for b in beats]
        except SpeechError as exc:
            print(f"speech: {exc}", file=sys.stderr, flush=True)
            print("  » " + label, file=self.out, flush=True)
            return
        mix = premix(clips, tempo, origin=origin)
        with self._lock:
            if self._calls_cut != calls_cut:
                return  # the game ended while it was being rendered
            self.sink.mixer.schedule(mix.samples, frame, label, "cadence",
                                     marks=_marks(frame, mix.beats, beats))
            self._reserved = 0

    def _submit(self, priority: int, job: Callable[[], None]) -> None:
        with self._cond:
            self._seq += 1
            heapq.heappush(self._jobs, (priority, self._seq, job))
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._jobs and not self._closed:
                    if not self._cond.wait(self.REST_S):
                        break
                if self._closed:
                    return
                if not self._jobs:  # nothing to render for a while: the child's memory back
                    self._cond.release()
                    try:
                        self.renderer.rest()
                    finally:
                        self._cond.acquire()
                    continue
                _, _, job = heapq.heappop(self._jobs)
                self._running += 1
            try:
                job()
            except Exception as exc:  # noqa: BLE001 - the voice must not take the table down
                print(f"speech: {exc}", file=sys.stderr, flush=True)
            finally:
                with self._cond:
                    self._running -= 1
                    self._cond.notify_all()


# ------------------------------------------------------------------------------------------------
# Wiring, render-all, doctor, command line


def startup_texts(language: str = "en", books: Sequence[phrases.Phrasebook] = ()) -> list[str]:
    """What must be ready before any cue is promised: the first words of a table, and the
    seat-free beats of every call of these games."""
    first = [phrases.text(key, None, language) for key in ("ready", "count_in")]
    return first + [beat for book in books for call in book.calls
                    for beat in phrases.words(call, {"seat": ""}, language, book=book)
                    if any(ch.isalpha() for ch in beat)]


def make_announcer(
    options: SpeechOptions | Mapping[str, Any] | None,
    *,
    no_speech: bool,
    out: TextIO = sys.stdout,
) -> SpeechAnnouncer | PrintAnnouncer:
    """The table's voice: a sound device if there is one, else a recording sink that prints the
    phrases; `no_speech` (or speech that cannot render at all) gives the printing announcer."""
    if no_speech:
        return PrintAnnouncer(out)
    opts = SpeechOptions.coerce(options)
    renderer = Renderer(opts)
    try:
        renderer.clips(startup_texts(opts.language))
    except SpeechError as exc:
        renderer.close()
        print(f"speech: {exc}; phrases will be printed", file=sys.stderr, flush=True)
        return PrintAnnouncer(out)
    sink = open_sink(opts, out=out)
    announcer = SpeechAnnouncer(renderer, sink, language=opts.language, out=out)
    announcer.warm(startup_texts(opts.language), wait=True)
    if opts.seats:
        announcer.warm_table(opts.seats)
    return announcer


def open_sink(options: SpeechOptions, *, out: TextIO | None = sys.stdout) -> Sink:
    """The sound device if PortAudio has one and it opens, else a recording sink (which prints
    each phrase to `out` as it plays; None: silent)."""
    if output_devices() or options.device is not None:
        try:
            # A configured device that is not there yet is waited for (the table pauses and
            # says why); without one, any trouble falls back to the recording sink.
            device_sink = SoundDeviceSink(options.device, output_delay_ms=options.output_delay_ms)
            device_sink.start()
            return device_sink
        except Exception as exc:  # noqa: BLE001 - any device trouble: keep the table running
            print(f"speech: sound device unusable ({exc}); recording instead", file=sys.stderr)
    sink = RecordingSink(out=out)
    sink.start()
    return sink


def render_all(
    directory: Path | str,
    seats: Sequence[str],
    options: SpeechOptions | Mapping[str, Any] | None = None,
    *,
    tempo_ms: int = 600,
    books: Sequence[phrases.Phrasebook] = (),
) -> list[Path]:
    """Write every phrase of `table_lines(seats)` as DIR/<name>.wav, each cadence pre-mixed at
    `tempo_ms` as DIR/cadence.<name>.wav, and DIR/phrases.tsv (file, onset ms, text); with the
    own phrases and calls of the games in `books`."""
    opts = SpeechOptions.coerce(options)
    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    renderer = Renderer(opts)
    written: list[Path] = []
    index: list[str] = []
    try:
        lines = {line.text: line for book in (phrases.NO_GAME, *books)
                 for line in phrases.table_lines(seats, opts.language, book=book)}
        for line in lines.values():
            clip = renderer.clip(line.text)
            target = out_dir / f"{line.name}.wav"
            shutil.copyfile(renderer.path(line.text), target)
            written.append(target)
            index.append(f"{target.name}\t{clip.onset_s * 1000:.1f}\t{line.text}")
        cadences: list[tuple[str, str, dict[str, Any], phrases.Phrasebook]] = []
        for book in books:
            for call in book.calls:
                if phrases.names_a_seat(call, book):
                    cadences += [(f"{call}.{phrases.slug(s)}", call, {"seat": s}, book)
                                 for s in seats]
                else:
                    cadences.append((call, call, {}, book))
        seen: dict[str, str] = {}  # games that share a call (the same words): one file
        for name, key, params, book in cadences:
            said = phrases.text(key, params, opts.language, book=book)
            if seen.get(name) == said:
                continue
            name = name if name not in seen else f"{name}.{len(seen)}"  # other words, same key
            seen[name] = said
            clips = renderer.clips(phrases.words(key, params, opts.language, book=book))
            mix = premix(clips, round(tempo_ms * clips[0].samplerate / 1000))
            target = out_dir / f"cadence.{name}.wav"
            write_wav(target, mix.samples, clips[0].samplerate)
            written.append(target)
            go_ms = mix.go * 1000 / clips[0].samplerate
            index.append(f"{target.name}\t{go_ms:.1f}\t{said}")
    finally:
        renderer.close()
    (out_dir / "phrases.tsv").write_text("file\tonset_ms\ttext\n" + "\n".join(index) + "\n")
    return written


def doctor_lines(options: SpeechOptions | Mapping[str, Any] | None = None) -> list[tuple[bool, str]]:
    """`referee doctor`'s audio checks: (ok, one line) each, without opening the device."""
    opts = SpeechOptions.coerce(options)
    lines: list[tuple[bool, str]] = []
    version = espeak_version()
    lines.append((version != "missing", f"espeak-ng: {version}" if version != "missing"
                  else "espeak-ng: missing; install it (apt install espeak-ng)"))
    lines.append((pyttsx3_version() != "missing", f"pyttsx3: {pyttsx3_version()}"))
    if opts.piper:
        lines.append(piper_line(opts))
    devices = output_devices()
    if devices:
        lines.append((True, f"audio output: sound device via PortAudio ({devices[0]})"))
    else:
        lines.append((True, "audio output: no sound device; recording sink, phrases printed"))
    cache = opts.cache_path
    count = len(list(cache.glob("*.wav"))) if cache.is_dir() else 0
    lines.append((True, f"speech cache: {cache} ({count} clips)"))
    return lines


def piper_line(options: SpeechOptions) -> tuple[bool, str]:
    """Whether the Piper voice asked for speaks: one phrase rendered with it into a scratch
    cache (a model that is missing or broken is named, with the espeak-ng fallback and the fix)."""
    with tempfile.TemporaryDirectory(prefix="referee-piper-") as scratch:
        log = io.StringIO()
        renderer = Renderer(replace(options, cache_dir=Path(scratch)), log=log)
        try:
            renderer.clip(phrases.text("count_in", None, options.language))
        except SpeechError as exc:
            log.write(f"speech: {exc}\n")
        finally:
            renderer.close()
    if renderer.engine == "piper" and renderer.model is not None:
        return True, f"voice: Piper {renderer.model.name} ({renderer.model.path})"
    said = " ".join(log.getvalue().split()).removeprefix("speech: ")
    return False, (f"voice: {said} (fix the model or fetch it again: hardware/install.sh "
                   f"--voice NAME; or remove voice from [speech])")


def speech_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="referee speech", description="the referee's voice")
    parser.add_argument("--voice", help="espeak-ng voice (default: the language's), piper (the "
                        "language's Piper voice) or piper:/path/to/voice.onnx")
    parser.add_argument("--rate", type=int, help="words per minute (default 175)")
    parser.add_argument("--volume", type=float, help="0.1-1.0 (default 1.0)")
    parser.add_argument("--language", default="en",
                        help="the phrases' language: " + ", ".join(sorted(phrases.LANGUAGES)))
    parser.add_argument("--cache", type=Path, help="cache folder")
    sub = parser.add_subparsers(dest="speech_command", required=True)
    render = sub.add_parser("render", help="write every phrase as a WAV file")
    render.add_argument("dir", type=Path)
    render.add_argument("--seats", default="Blue,Red,Green,Yellow")
    render.add_argument("--tempo-ms", type=int, default=600)
    speak = sub.add_parser("say", help="say one text now")
    speak.add_argument("text")
    sub.add_parser("doctor", help="which audio output and voice are in use")
    return parser


def speech_main(argv: Sequence[str] | None = None,
                books: Sequence[phrases.Phrasebook] | Callable[[str], Sequence[phrases.Phrasebook]]
                = ()) -> int:
    """`referee speech render DIR [--seats ...] [--language de]` / `say TEXT` / `doctor`; exit
    status 2 on a bad voice, rate, language or folder. `books`: the games whose own phrases
    `render` writes too (or, given the language, the function that makes them in it)."""
    args = speech_parser().parse_args(argv)
    command = args.speech_command
    try:
        opts = SpeechOptions(
            voice=args.voice,
            rate=175 if args.rate is None else int(args.rate),
            volume=1.0 if args.volume is None else float(args.volume),
            language=args.language or "en",
            cache_dir=args.cache,
        )
        if command == "render":
            started = time.monotonic()
            seats = [s.strip() for s in str(args.seats).split(",") if s.strip()]
            directory = Path(args.dir)
            try:
                written = render_all(directory, seats, opts, tempo_ms=args.tempo_ms,
                                     books=books(opts.language) if callable(books) else books)
            except OSError as exc:
                if exc.filename is None or not str(exc.filename).startswith(str(directory)):
                    raise
                reason = exc.strerror or str(exc)
                raise SpeechError(f"cannot write the phrases to {str(directory)!r}: {reason}; "
                                  f"give a folder you may write to (it is made if missing), "
                                  f"e.g. referee speech render ./phrases") from None
            print(f"wrote {len(written)} files and phrases.tsv to {directory} "
                  f"in {time.monotonic() - started:.1f} s")
        elif command == "say":
            announcer = make_announcer(opts, no_speech=False)
            if isinstance(announcer, SpeechAnnouncer):
                announcer.say_text(args.text)
                announcer.wait_quiet(timeout=30.0)
            else:
                print("  » " + args.text)
            announcer.close()
        else:
            for ok, line in doctor_lines(opts):
                print(("ok   " if ok else "FAIL ") + line)
    except (SpeechError, ValueError, OSError) as exc:
        print(f"referee speech: {exc}", file=sys.stderr)
        return 2
    return 0


def _marks(frame: int, onsets: Sequence[int], beats: Sequence[str]) -> list[tuple[int, str]]:
    """Each beat's onset as an output frame, for sinks that show the cadence as it sounds."""
    return [(frame + onset, beat) for onset, beat in zip(onsets, beats, strict=True)]
