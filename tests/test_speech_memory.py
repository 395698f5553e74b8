"""Issue 25 item 7, memory and first boot on a Zero 2 W, on real espeak-ng renders: the voice holds
its clips as 16-bit samples, holds only the words it must say on the beat (the game's calls, the
deal), keeps the rest of the table in the disk cache, and on a cold cache renders the first call's
words and the deal before anything else, so the first cue waits for those alone."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.rules.registry import games
from referee.voice.audio import RecordingSink
from referee.voice.phrases import count_words, prerender_texts, segments, table_lines, text, words
from referee.voice.speech import Renderer, SpeechAnnouncer, SpeechOptions, startup_texts
from tests.test_speech import BOOKS

SEATS = ["Blue", "Red", "Green", "Yellow"]
RATE = 22050


class Noting(Renderer):
    """A real espeak-ng renderer that notes each phrase it synthesises and, at that moment,
    whether the voice would let the first call be made (`quiet_at` is not None)."""

    def __init__(self, options: SpeechOptions) -> None:
        super().__init__(options)
        self.announcer: SpeechAnnouncer | None = None
        self.order: list[tuple[str, bool]] = []

    def _render(self, said: str, wav: Path) -> Any:
        quiet = self.announcer is not None and self.announcer.quiet_at() is not None
        self.order.append((said, quiet))
        return super()._render(said, wav)


def table(game: str) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, dict[str, Any]]],
                                list[str]]:
    """What the engine hands the voice at start for this game: the deal, everything said ahead,
    the reasons."""
    rules = games()[game](tuple(SEATS), {})
    first = list(rules.announcements(1))
    return first, [*first, *rules.said_ahead()], list(rules.reason_texts())


@pytest.fixture(scope="module")
def margins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding the margin pieces every table shares (rendered once for this file: the
    tests below start from a copy, cold for everything of their own game)."""
    cache = tmp_path_factory.mktemp("margins")
    renderer = Renderer(SpeechOptions(cache_dir=cache))
    renderer.clips(prerender_texts(SEATS))
    renderer.close()
    return cache


@pytest.fixture
def voice(tmp_path: Path, margins: Path) -> Iterator[tuple[SpeechAnnouncer, Noting]]:
    shutil.copytree(margins, tmp_path / "cache")
    renderer = Noting(SpeechOptions(cache_dir=tmp_path / "cache"))
    sink = RecordingSink(RATE, clock=lambda: 1_000_000)
    sink.start(thread=False)
    announcer = SpeechAnnouncer(renderer, sink)
    renderer.announcer = announcer
    yield announcer, renderer
    announcer.close()


def calls_words(game: str) -> set[str]:
    book = BOOKS[game]
    return {beat for call in book.calls for seat in SEATS
            for beat in words(call, {"seat": seat}, book=book)}


@pytest.mark.parametrize("game", ["pigs-tail", "spank-the-pig"])
def test_the_voice_holds_16_bit_clips_of_its_calls_and_the_deal_only(
        voice: tuple[SpeechAnnouncer, Noting], game: str) -> None:
    """It held ~450 phrases as float32 (119-134 MB at a speaking table): every phrase of the
    table and every ruling piece. Now the calls' words and the deal, 16-bit; the rest of what
    the table can say is in the disk cache, and a ruling is said from it without a render."""
    announcer, renderer = voice
    first, said, reasons = table(game)
    announcer.learn(BOOKS[game])
    announcer.warm_table(SEATS, said, reasons=reasons, first=first)
    assert announcer.idle(300.0)
    held = announcer.held()
    deal = {piece for key, params in first for piece in segments(key, params, book=BOOKS[game])}
    assert set(held) == {*startup_texts("en", [BOOKS[game]]), *calls_words(game), *deal}
    assert all(h.pcm.dtype == np.int16 and h.samplerate == RATE for h in held.values())
    every = [line.text for line in table_lines(SEATS, "en", said, book=BOOKS[game])]
    every += prerender_texts(SEATS, "en", reasons, book=BOOKS[game])
    assert all(renderer.path(t).exists() for t in every)  # ready on disk, not in memory
    # a ruling is said from the disk cache: nothing rendered, the whole sentence played
    rendered = renderer.renders
    params = {"seat": "Red", "reason": reasons[0], "margin_ms": 423,
              "count_words": count_words(1, BOOKS[game])}
    announcer.say("ruling", params)
    assert announcer.idle(30.0)
    assert renderer.renders == rendered
    assert announcer.sink.mixer.busy_until() > 0
    assert len(announcer.held()) <= len(held) + announcer.RECENT


@pytest.mark.parametrize("game", ["pigs-tail", "spank-the-pig"])
def test_a_cold_cache_renders_the_first_calls_words_and_the_deal_before_the_rest(
        voice: tuple[SpeechAnnouncer, Noting], game: str) -> None:
    """On a cold cache (first boot), the first call waits for the voice to be quiet. Before,
    the deal was said and the voice was quiet while the seats' call words ("Blue,") were still
    queued behind the table's other phrases: the first call went out cold, its cue placed a
    guessed 0.4 s ahead (on a Zero 2 W with Piper, a render takes seconds: a cue in the past).
    Now the calls' words and the deal come first; the voice is quiet as soon as they are
    rendered (each render counted: a simulated Zero 2 W's time), and the rest comes behind."""
    announcer, renderer = voice
    first, said, reasons = table(game)
    announcer.learn(BOOKS[game])  # the engine's start: the game's words, then warm, then the deal
    learned = len(renderer.order)
    announcer.warm_table(SEATS, said, reasons=reasons, first=first)
    for key, params in first:
        announcer.say(key, params)
    assert announcer.idle(300.0)
    order = renderer.order[learned:]
    deal = {piece for key, params in first for piece in segments(key, params, book=BOOKS[game])}
    needed = (calls_words(game) | deal) - set(startup_texts("en", [BOOKS[game]]))
    assert {said for said, _ in order[:len(needed)]} == needed
    assert not any(quiet for _, quiet in order[:len(needed)])  # the first call waits for them
    assert all(quiet for _, quiet in order[len(needed):])  # ... and for nothing else
    assert len(order) > 2 * len(needed)  # the rest (the table's phrases, its pieces): behind
    assert text("ready") in announcer.held()  # the first words of the table are held at once


def test_the_render_child_is_closed_when_the_voice_has_nothing_to_render(
        voice: tuple[SpeechAnnouncer, Noting]) -> None:
    """The render child (pyttsx3 42 MB, Piper 190 MB) stayed for the life of the table; once the
    cache is warm it is closed, and started again for a phrase never said before."""
    announcer, renderer = voice
    announcer.REST_S = 0.3
    announcer.warm(["Clean round."])  # rendered by the child, in the background
    assert announcer.idle(30.0)
    for _ in range(200):
        if renderer._child is None:
            break
        time.sleep(0.05)
    assert renderer._child is None
    announcer.say("nobody", {})  # "Clean round.": held, no render
    announcer.say_text("Magenta wins the tie.")  # never said: the child again
    assert announcer.idle(30.0)
    assert renderer.order[-1][0] == "Magenta wins the tie." and renderer.renders == 2
