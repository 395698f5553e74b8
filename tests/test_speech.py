"""Speech on real audio: espeak-ng renders every phrase, and the clips, the cache, the cadence buffer,
the cue time and the non-blocking calls are checked on the samples themselves (no sound card
needed: the recording sink plays against the real clock)."""

from __future__ import annotations

import io
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.cli.main import main as cli_main
from referee.clock import now_us
from referee.engine.loop import phrasebook
from referee.events import Press
from referee.rules.registry import games
from referee.voice.announce import PrintAnnouncer
from referee.voice.audio import (
    Clip,
    DacClock,
    RecordingSink,
    Samples,
    find_onset,
    frame_levels_db,
    premix,
    read_wav,
    speech_rms_db,
)
from referee.voice.phrases import NO_GAME, Line, table_lines, text, words
from referee.voice.speech import (
    Renderer,
    SpeechAnnouncer,
    SpeechError,
    SpeechOptions,
    doctor_lines,
    make_announcer,
    render_all,
    speech_main,
    startup_texts,
)

SEATS = ["Blue", "Red", "Green"]
BOOKS = {name: phrasebook(cls) for name, cls in games().items()}  # each game's own words
SPANK, TAIL = BOOKS["spank-the-pig"], BOOKS["pigs-tail"]


def all_lines(seats: list[str]) -> list[Line]:
    """Every phrase a table of any game can say ahead of time: the shared ones and each game's."""
    lines = {line.text: line for book in (NO_GAME, *BOOKS.values())
             for line in table_lines(seats, book=book)}
    return list(lines.values())
RATE = 22050
MS = RATE // 1000  # samples per millisecond


@pytest.fixture(scope="session")
def options(tmp_path_factory: pytest.TempPathFactory) -> SpeechOptions:
    return SpeechOptions(cache_dir=tmp_path_factory.mktemp("speech-cache"))


@pytest.fixture(scope="session")
def rendered(options: SpeechOptions) -> dict[str, Clip]:
    """Every phrase of a three-seat table, rendered once for the whole session (cold cache)."""
    renderer = Renderer(options)
    try:
        return {line.text: renderer.clip(line.text) for line in all_lines(SEATS)}
    finally:
        assert renderer.renders == len(all_lines(SEATS))
        renderer.close()


@pytest.fixture
def announcer(options: SpeechOptions, rendered: dict[str, Clip]) -> Iterator[SpeechAnnouncer]:
    sink = RecordingSink(RATE)
    sink.start()
    voice = SpeechAnnouncer(Renderer(options), sink)
    voice.warm(list(rendered), wait=True)
    yield voice
    voice.close()


def onsets(samples: Samples, rate: int = RATE, gap_ms: int = 60) -> list[int]:
    """Sample positions where speech starts after at least `gap_ms` of silence (words have
    closures of up to ~40 ms inside them, "Spa-nk", "fli-p")."""
    levels = frame_levels_db(samples, rate)
    loud = levels >= max(float(levels.max()) - 45.0, -65.0)
    found: list[int] = []
    quiet = gap_ms
    for i, is_loud in enumerate(loud):
        if is_loud and quiet >= gap_ms:
            lo = max(0, (i - 2) * MS)
            onset = find_onset(samples[lo : (i + 5) * MS], rate)
            assert onset is not None
            found.append(lo + onset)
        quiet = 0 if is_loud else quiet + 1
    return found


# ------------------------------------------------------------------------------------------------
# Rendering and the cache


def test_every_clip_is_real_speech(rendered: dict[str, Clip]) -> None:
    for said, clip in rendered.items():
        assert clip.samplerate == RATE
        assert 0.2 <= clip.seconds <= 1.0 + 0.12 * len(said), said
        assert speech_rms_db(clip.samples, RATE) > -35.0, said
        assert clip.onset == find_onset(clip.samples, RATE)
        assert 0 <= clip.onset <= 200 * MS, said  # voiced starts ("Red") begin at once
        assert float(np.abs(clip.samples[: clip.onset]).max(initial=0.0)) < 0.01, said
    go = rendered["PIG!"]
    assert 5.0 <= go.onset_s * 1000 <= 150.0


def test_a_restart_renders_nothing_new(options: SpeechOptions, rendered: dict[str, Clip]) -> None:
    renderer = Renderer(options)
    started = time.perf_counter()
    again = renderer.clips(rendered)
    elapsed = time.perf_counter() - started
    renderer.close()
    assert renderer.renders == 0
    assert elapsed < 5.0  # a cache read, generous for a loaded machine (renders == 0 is the proof)
    for clip, first in zip(again, rendered.values(), strict=True):
        assert clip.onset == first.onset
        assert np.array_equal(clip.samples, first.samples)


def test_the_cache_key_covers_voice_rate_and_volume(options: SpeechOptions,
                                                    rendered: dict[str, Clip]) -> None:
    keys = {Renderer(SpeechOptions(cache_dir=options.cache_dir, **change)).key("Pass!")
            for change in ({}, {"rate": 200}, {"volume": 0.5}, {"voice": "en-gb"})}
    assert len(keys) == 4
    faster = Renderer(SpeechOptions(cache_dir=options.cache_dir, rate=300))
    clip = faster.clip("Last round!")
    assert faster.renders == 1
    faster.close()
    assert clip.seconds < rendered["Last round!"].seconds  # the same words at 175


def test_a_broken_pyttsx3_falls_back_to_espeak_ng_once(tmp_path: Path) -> None:
    log = io.StringIO()
    renderer = Renderer(SpeechOptions(cache_dir=tmp_path, python="/bin/false"), log=log)
    clips = renderer.clips(["Pass!", "Last round!", "PIG!"])
    renderer.close()
    assert renderer.engine == "espeak-ng"
    assert renderer.renders == 3
    notices = log.getvalue().splitlines()
    assert len(notices) == 1
    assert "pyttsx3 failed" in notices[0] and "espeak-ng" in notices[0]
    for clip in clips:
        assert speech_rms_db(clip.samples, clip.samplerate) > -35.0
    assert 5.0 <= clips[2].onset_s * 1000 <= 150.0


def test_a_clip_pyttsx3_is_still_writing_is_not_ready_yet_rather_than_an_error(
        tmp_path: Path) -> None:
    """pyttsx3 may return before its file is whole: the header promises frames not written yet.
    The render child must see "not ready" (and wait or say it again), not fail: an error there
    once made a loaded table give up pyttsx3 for espeak-ng for the rest of the evening."""
    import wave

    from referee.voice.tts import _complete_wav

    whole = tmp_path / "whole.wav"
    with wave.open(str(whole), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(22050)
        w.writeframes(np.concatenate([np.full(4410, 3000, np.int16),
                                      np.zeros(441, np.int16)]).tobytes())
    assert _complete_wav(whole)  # 0.2 s of sound ending in silence
    data = whole.read_bytes()
    for cut in (2000, 1001):  # half the samples; an odd byte count
        partial = tmp_path / f"partial{cut}.wav"
        partial.write_bytes(data[:44 + cut])
        assert _complete_wav(partial) is False


# espeak-ng as pyttsx3 drives it (AUDIO_OUTPUT_RETRIEVAL): a rate or volume change and a Synth
# are commands queued for espeak-ng's synthesis thread, run in order; espeak_IsPlaying is true
# while anything is queued; espeak_Cancel empties the queue (fifo_stop); espeak_Synchronize
# returns once it is empty. Here that thread is late, as on a machine with every core busy: a
# queued change waits until something needs it, and a synthesis starts `sys.argv[3]` s later.
_LATE_ESPEAK = """
import json, sys, threading, wave
sys.path.insert(0, sys.argv[1])
import pyttsx3
from pyttsx3.drivers import _espeak
from referee.voice.tts import _child_render

engine = pyttsx3.init()
voices = engine.getProperty("voices")
real = {n: getattr(_espeak, n) for n in ("SetParameter", "IsPlaying", "Cancel", "Synchronize",
                                          "Synth")}
late_s = float(sys.argv[3])
queued = []  # ("set", args) or ("synth", args, kwargs), in order
lock = threading.Lock()
synthesised = []

def run_queued():
    with lock:
        while queued:
            item = queued.pop(0)
            if item[0] == "set":
                real["SetParameter"](*item[1])
            else:
                synthesised.append(item[1][0])
                real["Synth"](*item[1], **item[2])
                real["Synchronize"]()

def synth(*args, **kwargs):
    with lock:
        queued.append(("synth", args, kwargs))
    threading.Timer(late_s, run_queued).start()

def cancel():
    with lock:
        queued.clear()
    return real["Cancel"]()

def synchronize():
    run_queued()
    return real["Synchronize"]()

_espeak.SetParameter = lambda *args: queued.append(("set", args)) or 0
_espeak.IsPlaying = lambda: 1 if queued else real["IsPlaying"]()
_espeak.Cancel, _espeak.Synchronize, _espeak.Synth = cancel, synchronize, synth
frames, current = [], {}
for path in sys.argv[4:]:
    _child_render(engine, voices, current, {"text": sys.argv[2], "path": path, "voice": "en-us",
                                            "rate": 175, "volume": 1.0})
    with wave.open(path) as w:
        frames.append(w.getnframes())
print(json.dumps({"frames": frames, "synthesised": len(synthesised)}))
"""


@pytest.mark.parametrize("late_s", [0.0, 0.5])
def test_every_phrase_is_whole_and_at_its_rate_when_espeak_ng_is_slow(
        tmp_path: Path, late_s: float) -> None:
    """A loaded CI machine rendered phrases wrong in two ways: 12 % short (pyttsx3 stopped
    espeak-ng before its synthesis thread had taken the new rate: pyttsx3's 200 words a minute,
    not the table's 175); and, when the first phrase's synthesis outlasted the wait for its file,
    read half-written and said again (espeak-ng then says a sentence it has just said a little
    differently: a German or Spanish phrase no longer matched espeak-ng's own). Each phrase
    must be synthesised once and be as long as espeak-ng's own at 175."""
    import json
    import sys
    import wave

    text = "Press your slap button when you're ready."
    out = subprocess.run(["espeak-ng", "-v", "en-us", "-s", "175", "--stdout", text],
                         capture_output=True, check=True).stdout
    with wave.open(io.BytesIO(out)) as w:  # written as a stream: its header gives no length
        expected = len(w.readframes(w.getnframes())) // 2
    paths = [str(tmp_path / f"{i}.wav") for i in range(3)]
    done = subprocess.run([sys.executable, "-c", _LATE_ESPEAK, str(Path(__file__).parents[1]),
                           text, str(late_s), *paths], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    frames = got["frames"]
    assert len(frames) == 3
    assert got["synthesised"] == 3  # each phrase once: none read half-written and said again
    for n in frames:
        assert abs(n - expected) < 0.03 * expected, (n, expected)


def test_a_bogus_voice_is_named_with_the_fix(tmp_path: Path) -> None:
    log = io.StringIO()
    renderer = Renderer(SpeechOptions(cache_dir=tmp_path, voice="zz-bogus"), log=log)
    with pytest.raises(SpeechError, match=r"'zz-bogus'.*espeak-ng --voices"):
        renderer.clip("Pass!")
    renderer.close()
    assert log.getvalue().count("pyttsx3 failed") == 1
    assert not list(tmp_path.glob("*.wav"))


# ------------------------------------------------------------------------------------------------
# Cadences: sample-exact beats, and the cue is when the go-word sounds


@pytest.mark.parametrize("tempo_ms", [600, 800])
def test_cadence_beats_land_on_their_samples(rendered: dict[str, Clip], tempo_ms: int) -> None:
    """Onsets found blind in the mixed buffer fall within 1 ms of beat start + i * tempo."""
    for beats in (words("spank", {}, book=SPANK), words("turn", {"seat": "Green"}, book=TAIL)):
        mix = premix([rendered[b] for b in beats], tempo_ms * MS)
        assert [b - mix.beats[0] for b in mix.beats] == [i * tempo_ms * MS for i in range(len(beats))]
        found = onsets(mix.samples)
        assert len(found) == len(beats)
        for got, want in zip(found, mix.beats, strict=True):
            assert abs(got - want) <= MS, (beats, got, want)


def test_a_fast_cadence_cuts_words_but_keeps_every_onset(rendered: dict[str, Clip]) -> None:
    """At 400 ms "Spank" is still sounding when "the" is due: it is faded out, and each beat's
    speech still starts exactly on its sample."""
    clips = [rendered[b] for b in words("spank", {}, book=SPANK)]
    mix = premix(clips, 400 * MS)
    assert len(mix.samples) < sum(len(c.samples) for c in clips)
    for beat, clip in zip(mix.beats, clips, strict=True):
        span = 20 * MS
        assert np.array_equal(mix.samples[beat : beat + span], clip.samples[clip.onset : clip.onset + span])
        assert float(np.abs(mix.samples[beat - clip.onset : beat]).max(initial=0.0)) < 0.01


def test_the_cue_is_when_the_go_word_sounds(announcer: SpeechAnnouncer) -> None:
    sink = announcer.sink
    assert isinstance(sink, RecordingSink)
    for key, params, book in (("spank", {}, SPANK), ("turn", {"seat": "Red"}, TAIL)):
        announcer.learn(book)  # the engine hands over the game's own words first
        called = now_us()
        cue = announcer.cadence(key, params, 500)
        returned = now_us()
        # the call does not wait for the audio: it returns long before the cadence has sounded
        # (a whole tempo, 500 ms; a loaded machine may take some milliseconds to return)
        assert returned - called < 100_000
        assert cue > returned  # a real future time
        assert announcer.wait_quiet(10.0)
        frame0, tape = sink.tape()
        found = onsets(tape)
        go = frame0 + found[-1]
        assert abs(sink.frame_to_us(go) - cue) <= 1_000
        record = sink.records[-1]
        assert record.label == " … ".join(words(key, params, book=book))
        assert record.item.started_us is not None and record.item.started_us < cue


def test_a_cadence_with_an_unrendered_seat_still_keeps_its_cue(
        options: SpeechOptions, rendered: dict[str, Clip]) -> None:
    """The sink plays on a simulated clock: the placement is checked, not how fast this machine
    renders a word (under a heavy load the render outran the cold cadence's lead on the wall
    clock; how long a render takes on a Pi is a benchmark's figure)."""
    now = [1_000_000]
    sink = RecordingSink(RATE, clock=lambda: now[0])
    sink.start(thread=False)
    announcer = SpeechAnnouncer(Renderer(options), sink)
    try:
        announcer.warm(list(rendered), wait=True)
        cue = announcer.cadence("turn", {"seat": "Magenta"}, 600)  # "Magenta," is not in memory
        assert announcer.idle(30.0)  # rendered, and placed in the mixer
        now[0] = cue + 2_000_000
        sink.play_until(now[0])
        frame0, tape = sink.tape()
        assert abs(sink.frame_to_us(frame0 + onsets(tape)[-1]) - cue) <= 1_000
    finally:
        announcer.close()


# ------------------------------------------------------------------------------------------------
# Saying things


def test_rulings_say_the_intended_phrase(announcer: SpeechAnnouncer, options: SpeechOptions) -> None:
    sink = announcer.sink
    assert isinstance(sink, RecordingSink)
    params = {"seat": "Blue", "reason": "last to spank the pig", "margin_ms": 42,
              "count_words": "One whammy"}
    announcer.say("ruling", params)
    announcer.say("too_close", {})
    assert announcer.idle(10.0)
    first, second = list(sink.records)[-2:]
    assert first.label == "Blue: last to spank the pig by 42 milliseconds. One whammy."
    assert second.label == "Too close to call."
    assert second.t_us >= first.t_us + round(len(first.samples) / RATE * 1e6) - 1_000
    # Said from pieces that are all rendered before the game (a slow Pi never waits for them).
    from referee.voice.phrases import segments
    from referee.voice.sentence import join, tight

    pieces = segments("ruling", params)
    assert pieces == ["Blue: last to spank the pig", "by 42 milliseconds.", "One whammy."]
    renderer = Renderer(options)
    assert np.array_equal(first.samples, join([renderer.clip(t) for t in pieces], tight(pieces)).samples)


@pytest.mark.parametrize(("ms", "said"), [(201, "201 milliseconds"), (1020, "1.02 seconds"),
                                         (1000, "1 second"), (1049, "1.05 seconds")])
def test_a_margin_said_in_pieces_is_shown_and_heard_as_its_number(
        announcer: SpeechAnnouncer, ms: int, said: str) -> None:
    """Issue 22: "by 2 hundred and 1 milliseconds" (the pieces shown as the sentence) and "by 1
    seconds". The recording sink shows the sentence the pages show; the pieces, as espeak-ng
    reads them one after another, are the words it reads for the whole margin."""
    sink = announcer.sink
    assert isinstance(sink, RecordingSink)
    params = {"seat": "Blue", "reason": "last to spank the pig", "margin_us": ms * 1000,
              "count_words": "One whammy"}
    announcer.say("ruling", params)
    assert announcer.idle(30.0)
    assert sink.records[-1].label == f"Blue: last to spank the pig by {said}. One whammy."
    if shutil.which("espeak-ng") is None:
        return
    from referee.voice.phrases import margin_words

    def read(words: str) -> str:  # espeak-ng's phonemes, without stress, pauses and spaces
        out = subprocess.run(["espeak-ng", "-q", "-x", "-v", "en-us", words], check=True,
                             capture_output=True, text=True, timeout=30).stdout
        return re.sub(r"[\s'_:,]", "", out)

    pieces = margin_words(ms)
    assert "".join(read(p) for p in pieces) == read(f"by {said}."), pieces


def test_presses_are_taken_without_delay_while_speech_plays(announcer: SpeechAnnouncer) -> None:
    """An engine loop takes stamped presses from its queue while it asks for a long (unrendered)
    ruling and a cadence; no call waits for audio and no press waits for the voice."""
    sink = announcer.sink
    assert isinstance(sink, RecordingSink)
    presses: queue.Queue[Press | None] = queue.Queue()
    delays: list[int] = []
    calls: list[int] = []
    taken: list[int] = []
    asked_at: list[int] = []
    long_ruling = text("standings", {"text": "Blue, seventeen whammies. Red, nineteen whammies. "
                                             "Green, twenty-three whammies. Game over."})
    scheduled: dict[str, int] = {}  # phrase → when its rendered clip reached the mixer
    note = sink.mixer.on_schedule

    def noting(item: Any) -> None:
        scheduled.setdefault(item.label, now_us())
        if note is not None:
            note(item)

    sink.mixer.on_schedule = noting

    def engine() -> None:
        asked = False
        while (press := presses.get()) is not None:
            t = now_us()
            delays.append(t - press.t_us)
            taken.append(t)
            if not asked:
                asked = True
                asked_at.append(now_us())
                for call in (lambda: announcer.say_text(long_ruling),
                             lambda: announcer.cadence("spank", {}, 500)):
                    before = now_us()
                    call()
                    calls.append(now_us() - before)

    loop = threading.Thread(target=engine)
    loop.start()
    # presses go on until the ruling has played for 2 s (a loaded machine may take seconds to
    # render it: the presses must outlast that, not a fixed time)
    give_up = time.monotonic() + 60
    while time.monotonic() < give_up and (long_ruling not in scheduled
                                          or now_us() < scheduled[long_ruling] + 2_000_000):
        presses.put(Press(now_us(), "Blue"))
        time.sleep(0.003)
    presses.put(None)
    loop.join()
    # Rendering the unasked-for ruling (espeak-ng at work) took `rendering`. Had a call waited
    # for it, it would have taken about as long: it may not take half of it. (Rendering and
    # scheduling slow down together on a loaded machine, so this holds there, where a fixed
    # number of milliseconds does not.) The presses' own delays are not compared: the loop
    # here is the test's, so they show only how the machine scheduled its thread (a busy
    # machine once left it waiting 240 ms with nothing blocking it).
    assert long_ruling in scheduled, "the ruling never reached the mixer in 60 s"
    rendering = scheduled[long_ruling] - asked_at[0]
    assert max(calls) < rendering / 2, (calls, rendering)
    record = next(r for r in sink.records if r.label == long_ruling)
    started = record.item.started_us
    assert started is not None
    ended = started + len(record.samples) / RATE * 1e6
    # presses kept flowing while the ruling was being spoken: every press made while it played
    # was taken while it played (how many that is depends on how often a loaded machine let
    # the pressing thread run, so the count is compared with itself, not with a fixed number)
    made = [t - d for t, d in zip(taken, delays, strict=True)]
    made_during = [m for m in made if started <= m <= ended - 50_000]
    taken_during = [t for t, m in zip(taken, made, strict=True) if started <= m <= ended - 50_000
                    and t <= ended]
    assert len(made_during) >= 10, (len(made_during), started, ended)
    assert len(taken_during) == len(made_during)


def test_interrupt_cuts_a_stale_ruling_short(announcer: SpeechAnnouncer) -> None:
    sink = announcer.sink
    assert isinstance(sink, RecordingSink)
    stale = "Blue, zero whammies. Red, one whammy. Green, two whammies."
    announcer.warm([stale], wait=True)  # said at once, as a warm phrase is
    announcer.say("standings", {"text": stale})
    time.sleep(0.4)
    asked = now_us()
    announcer.say("too_close", {}, interrupt=True)
    assert announcer.wait_quiet(10.0)
    old = next(r for r in sink.records if r.label == stale)
    new = sink.records[-1]
    assert new.label == "Too close to call."
    assert len(old.item.samples) < 0.6 * len(old.samples)  # faded out after ~0.4 s
    assert new.t_us - asked < 150_000  # at once, not after the stale phrase (seconds)


# ------------------------------------------------------------------------------------------------
# Wiring


def test_make_announcer_picks_an_output(options: SpeechOptions, rendered: dict[str, Clip]) -> None:
    out = io.StringIO()
    assert isinstance(make_announcer(options, no_speech=True, out=out), PrintAnnouncer)
    voice = make_announcer({"speech_rate": "175", "cache_dir": str(options.cache_dir),
                            "unrelated": 1}, no_speech=False, out=out)
    try:
        assert isinstance(voice, SpeechAnnouncer)
        line = voice.describe()
        assert ("recording sink" in line) or ("sound device" in line)
        assert voice.renderer.renders == 0  # the start-up words came from the cache
        assert set(startup_texts()) <= set(rendered)
        voice.say("last_round", {})
        assert voice.wait_quiet(5.0)
        if isinstance(voice.sink, RecordingSink):
            assert "  » Last round!" in out.getvalue()
    finally:
        voice.close()
    assert any("audio output" in line for _, line in doctor_lines(options))


def test_render_all_writes_every_phrase(options: SpeechOptions, tmp_path: Path,
                                        rendered: dict[str, Clip]) -> None:
    written = render_all(tmp_path / "out", SEATS, options, books=list(BOOKS.values()))
    index = (tmp_path / "out" / "phrases.tsv").read_text().splitlines()
    assert len(index) == len(written) + 1
    cadences = [w for w in written if Path(w).name.startswith("cadence.")]
    assert len(written) == len(all_lines(SEATS)) + len(cadences)  # each phrase once, + cadences
    assert len(cadences) >= 1 + len(SEATS)  # Spank's, and a turn call naming each seat
    samples, rate = read_wav(tmp_path / "out" / "cadence.spank.wav")
    assert rate == RATE and len(onsets(samples)) == 3
    assert (tmp_path / "out" / "spank.3.wav").exists()


def test_the_speech_command(options: SpeechOptions, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    cache = str(options.cache_dir)
    assert speech_main(["--cache", cache, "render", str(tmp_path / "a"), "--seats", "Blue"],
                       list(BOOKS.values())) == 0
    assert list((tmp_path / "a").glob("*.blue.1.wav"))  # a turn call's first beat ("Blue,")
    # the `referee` command hands `speech ...` to the voice's own parser
    assert cli_main(["speech", "--cache", cache, "render", str(tmp_path / "b"), "--seats", "Red"]
                    ) == 0
    assert list((tmp_path / "b").glob("*.red.1.wav"))
    assert speech_main(["--rate", "5", "render", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["referee speech: speech rate 5 is out of range; use 80-450 words/minute"]


@pytest.mark.parametrize("drift", [50e-6, -50e-6])  # the card 50 ppm fast, or slow
def test_the_dac_clock_ignores_late_readings_and_follows_drift(drift: float) -> None:
    # ALSA's readings are late, never early (tests/test_dac_clock.py plays the whole card)
    clock = DacClock(48000)
    rng = np.random.default_rng(1)
    for block in range(3000):  # 64 s of 1024-frame callbacks
        frame = block * 1024
        true_us = 5_000_000 + frame / 48000 * 1e6 * (1 - drift)
        late = int(rng.exponential(300)) + (int(rng.uniform(2000, 15000)) if block % 9 == 0 else 0)
        clock.update(frame, int(true_us) - 10_000 + late, 0.010)
    frame = 3000 * 1024
    true_us = 5_000_000 + frame / 48000 * 1e6 * (1 - drift)
    assert abs(clock.frame_to_us(frame, 0) - true_us) < 250


def test_a_phrase_never_starts_with_more_than_a_tenth_of_a_second_of_silence(
        tmp_path: Path) -> None:
    """Piper now and then starts a ruling a third of a second in ("Red takes the
    pile: one card." began 348 ms in): the clip is cut to 0.1 s before its speech, in the cache
    too, so a restart plays the same."""
    import wave

    from referee.voice.tts import LEAD_S, check_clip

    rate = 22050
    t = np.arange(rate // 2) / rate
    speech = (0.5 * np.sin(2 * np.pi * 220 * t) * 32767).astype(np.int16)
    for silence_s, onset_s in ((0.35, LEAD_S), (0.06, 0.06)):
        path = tmp_path / f"lead{silence_s}.wav"
        pcm = np.concatenate([np.zeros(round(rate * silence_s), np.int16), speech,
                              np.zeros(rate // 10, np.int16)])
        with wave.open(str(path), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(pcm.tobytes())
        clip = check_clip(path, "Red takes the pile: one card.", 175)
        assert abs(clip.onset_s - onset_s) < 0.002, (silence_s, clip.onset_s)
        samples, _ = read_wav(path)
        assert np.array_equal(samples, clip.samples)  # the cache holds what is played
