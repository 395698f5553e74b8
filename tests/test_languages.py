"""The table's language: every phrase of every registered game, and every shared sentence, in
every shipped language; grammatical in every count; no English in the middle of German.

A game's words in a language live beside its rules (`referee/rules/<module>.<lang>.toml`,
`referee.rules.lingo`); the shared sentences in `referee/voice/lang/<lang>.toml`. A game that
joins the registry joins these tests by existing: it fails them until its files are there.
"""

from __future__ import annotations

import io
import logging
import re
import subprocess
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.engine.loop import phrasebook
from referee.events import Ruling
from referee.rules import lingo
from referee.rules.registry import games
from referee.voice import phrases
from referee.voice.phrases import ENGLISH, LANGUAGES, Phrasebook
from referee.voice.tts import Renderer, SpeechOptions

SHIPPED = ("de", "es")
TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]
COUNTS = (0, 1, 2, 5, 21)
MARGINS_MS = (1, 2, 1000, 1049)
GAMES = sorted(games())


def test_the_shipped_languages_are_english_german_and_spanish() -> None:
    assert set(LANGUAGES) >= {"en", *SHIPPED}


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_shared_phrase_and_small_word_is_translated(language: str) -> None:
    lang = LANGUAGES[language]
    assert set(ENGLISH) - set(lang.phrases) == set(), "shared phrases missing"
    assert set(lang.phrases) - set(ENGLISH) == set(), "phrases English does not have"
    small = set(phrases.ENGLISH_WORDS) - {"reasons"}
    assert small - set(lang.words) == set(), "small words missing"
    for key, beats in ENGLISH.items():  # the same fillers: nothing the engine does not give
        fillers = set(re.findall(r"\{(\w+)\}", " ".join(beats)))
        assert set(re.findall(r"\{(\w+)\}", " ".join(lang.phrases[key]))) <= fillers | {"n"}, key


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("language", TRANSLATED)
def test_every_registered_game_has_every_word_in_every_language(game: str, language: str) -> None:
    """Its phrases (calls beat for beat), unit, title, options, facts, reasons, penalties."""
    assert lingo.missing(games()[game], language) == []


def _said(book: Phrasebook, key: str, params: dict[str, Any]) -> str:
    return phrases.text(key, params, book=book)


def _english_words() -> set[str]:
    """Every word of the English the referee says or a game declares (its msgids)."""
    english: list[str] = [b for beats in ENGLISH.values() for b in beats]
    for cls in games().values():
        english += [b for beats in cls.PHRASES.values() for b in beats]
        english += lingo.declared_texts(cls)
        english += [cls.TITLE, *cls.UNIT_WORDS]
    return {w for text in english for w in re.findall(r"[a-z]{2,}", text.lower())}


def _foreign_words(language: str) -> set[str]:
    """Words a translation keeps as they are in English (its own words too: "Tempo")."""
    kept = set()
    for cls in games().values():
        texts = lingo.words_of(cls, language).texts
        kept |= {w for en, tr in texts.items() if en == tr
                 for w in re.findall(r"[a-z]{2,}", en.lower())}
    # words that are German or Spanish as well as English
    return kept | {"in", "so", "um", "an", "die", "also", "no", "es", "den", "de", "la", "el",
                   "pause", "real", "fin"}


def _no_english(sentence: str, language: str) -> None:
    english = _english_words() - _foreign_words(language)
    left = {w for w in re.findall(r"[a-zäöüßáéíóúñ]{2,}", sentence.lower()) if w in english}
    assert not left, f"English {sorted(left)} in {sentence!r}"


def _sample(beats: Any, cls: Any) -> dict[str, Any]:
    """Fillers for a phrase as the engine gives them: counts where a count picks the words
    (and the round), seats, the game's own English (a reason, its pressed word, a rank)."""
    text = " ".join(beats if isinstance(beats, list | tuple) else [beats])
    reason = next(r.value for rs in cls.reasons() for r in rs if "{" not in r.value)
    params: dict[str, Any] = {"seat": "Blue", "seats": ["Blue", "Red"], "letter": "P",
                              "ranks": ["aces", "twos"], "act": "touch your nose",
                              "reason": reason, "pressed": cls.PRESSED, "button": "slap",
                              "need": [cls.facts()[0].name],
                              "asks": [cls.facts()[0].question], "changes": "Blue, 2"}
    for name in re.findall(r"\{(\w+)[},]", text):
        params.setdefault(name, 2)
    return params


def _own_words(key: str) -> bool:
    """Whether an English phrase has words of its own, beside its fillers."""
    return bool(re.search(r"[A-Za-z]", re.sub(r"\{[^{}]*\}", "", " ".join(ENGLISH[key]))))


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("language", TRANSLATED)
def test_every_phrase_of_every_game_is_said_in_the_language_with_no_english_left(
        game: str, language: str, caplog: pytest.LogCaptureFixture) -> None:
    cls = games()[game]
    book = phrasebook(cls, language)
    english = phrasebook(cls, "en")
    for key in (*cls.PHRASES, *ENGLISH):
        params = _sample(book.phrases.get(key) or LANGUAGES[language].phrases[key], cls)
        params.setdefault("count_words", phrases.count_words(2, book))
        params.setdefault("text", "")
        in_english = _said(english, key, params)  # (its own English fillers are not given)
        caplog.clear()
        said = _said(book, key, params)
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
        assert "{" not in said and "}" not in said, (key, said)
        if key in cls.PHRASES or _own_words(key):
            assert said != in_english, key
        _no_english(said, language)


EXPECTED = {  # (language, game, n): the count as a ruling says it
    ("de", "spank-the-pig", 0): "Keine Strafkarten", ("de", "spank-the-pig", 1): "Eine Strafkarte",
    ("de", "spank-the-pig", 2): "Zwei Strafkarten", ("de", "spank-the-pig", 21):
        "Einundzwanzig Strafkarten",
    ("de", "pig", 1): "Ein Leben verloren", ("de", "pig", 0): "Kein Leben verloren",
    ("de", "pig", 5): "Fünf Leben verloren", ("de", "pigs-tail", 1): "Eine Karte",
    ("es", "spank-the-pig", 1): "Un castigo", ("es", "spank-the-pig", 21): "Veintiún castigos",
    ("es", "spank-the-pig", 0): "Ningún castigo",
    ("es", "pig", 1): "Una vida perdida", ("es", "pig", 21): "Veintiuna vidas perdidas",
    ("es", "pig", 0): "Ninguna vida perdida", ("es", "pig", 2): "Dos vidas perdidas",
    ("es", "pigs-tail", 21): "Veintiuna cartas", ("es", "pigs-tail", 1): "Una carta",
    ("es", "pigs-tail", 5): "Cinco cartas",
}


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("language", TRANSLATED)
def test_counts_take_the_language_s_plural_form_and_agree(game: str, language: str) -> None:
    cls = games()[game]
    book = phrasebook(cls, language)
    said = {n: phrases.count_words(n, book) for n in COUNTS}
    for n, text in said.items():
        assert str(n) not in text, text  # numbers said as words
        _no_english(text, language)
        if (language, game, n) in EXPECTED:
            assert text == EXPECTED[(language, game, n)]
    assert said[1] != said[2] and said[2] != said[5]  # one, other (CLDR de/es: one, other)
    rows = phrases.standings_text([("Blue", n) for n in COUNTS], book)
    assert rows.count("Blue") == len(COUNTS) and "{" not in rows


@pytest.mark.parametrize("language,shown,said", [
    ("de", ["1 Millisekunde", "2 Millisekunden", "1 Sekunde", "1,05 Sekunden"],
     ["eine Millisekunde", "zwei Millisekunden", "eine Sekunde", "1,05 Sekunden"]),
    ("es", ["1 milisegundo", "2 milisegundos", "1 segundo", "1,05 segundos"],
     ["un milisegundo", "dos milisegundos", "un segundo", "1,05 segundos"]),
    ("en", ["1 millisecond", "2 milliseconds", "1 second", "1.05 seconds"],
     ["1 millisecond", "2 milliseconds", "1 second", "1.05 seconds"]),
])
def test_margins_are_written_and_said_as_the_language_does(
        language: str, shown: list[str], said: list[str]) -> None:
    assert [phrases.margin_text(m, language) for m in MARGINS_MS] == shown
    assert [phrases.margin_said(m, language) for m in MARGINS_MS] == said
    assert phrases.margin_said(21, "es") == "veintiún milisegundos" if language == "es" else True


def test_a_ruling_is_shown_with_digits_and_said_in_words() -> None:
    from referee.rules.spank import SpankThePig, Why

    book = phrasebook(SpankThePig, "de")
    key, params = phrases.ruling_phrase(Ruling(1, "Blau", 1, Why.LAST_TO_THE_PIG, 1000), book)
    assert phrases.text(key, params, book=book) == (
        "Blau: zuletzt aufs Schwein geklatscht, um eine Millisekunde. Eine Strafkarte.")
    assert phrases.ruling_shown(key, params, book=book)["what"] == (
        "zuletzt aufs Schwein geklatscht, um 1 Millisekunde")
    es = phrasebook(SpankThePig, "es")
    key, params = phrases.ruling_phrase(Ruling(1, "Azul", 2, Why.LAST_TO_THE_PIGS, 1_049_000), es)
    assert phrases.text(key, params, book=es) == (
        "Azul: golpeó los cerdos en último lugar por 1,05 segundos. Dos castigos.")


def test_lists_are_joined_as_each_language_does() -> None:
    assert phrases.list_words(["A", "B", "C"], "de") == "A, B und C"
    assert phrases.list_words(["A", "B", "C"], "es") == "A, B y C"
    assert phrases.list_words(["Ana", "Inés"], "es") == "Ana e Inés"  # "y" before an "i" sound
    assert phrases.list_words(["Ana", "Hielo"], "es") == "Ana y Hielo"


def test_a_pig_ruling_with_a_count_among_its_fillers_is_one_sentence_in_spanish() -> None:
    from referee.rules.pig import Pig, Why

    book = phrasebook(Pig, "es")
    r = Ruling(2, None, 0, Why.UNCLEAR, None, (("n", "2"), ("act", "touch the nose")))
    assert phrases.text(*phrases.ruling_phrase(r, book), book=book) == (
        "No está claro: dos no llegaron a tocarse la nariz. Nadie pierde.")


# -- real speech: the language's own espeak-ng voice ------------------------------------------


def _voiced(samples: Any) -> Any:
    """The samples from the first loud one to the last (the speech, without its silences)."""
    wave_ = np.asarray(samples, dtype=float)
    loud = np.nonzero(np.abs(wave_) > 0.05 * (np.abs(wave_).max() or 1))[0]
    return wave_[loud[0]:loud[-1]]


def _likeness(a: Any, b: Any, step: int = 256) -> float:
    """How alike two renderings sound: the correlation of their loudness envelopes (1: the
    same voice saying the same words; another voice reading them lands far below)."""
    env = [np.abs(_voiced(x)) for x in (a, b)]
    env = [e[: len(e) // step * step].reshape(-1, step).mean(axis=1) for e in env]
    n = min(len(e) for e in env)
    x, y = ((e[:n] - e[:n].mean()) / e[:n].std() for e in env)
    return float(np.mean(x * y))


def _espeak(text: str, voice: str) -> Any:
    out = subprocess.run(["espeak-ng", "-v", voice, "--stdout", text], capture_output=True,
                         check=True).stdout
    with wave.open(io.BytesIO(out)) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)


@pytest.mark.parametrize("language,key", [("de", "ready"), ("de", "too_close"),
                                          ("es", "ready"), ("es", "quiet_table")])
def test_a_translated_phrase_is_real_speech_in_that_language_s_voice(
        tmp_path: Path, language: str, key: str) -> None:
    """Rendered the way a table renders it (pyttsx3 over espeak-ng): speech, as long as
    espeak-ng's own voice of that language says it, and not as the English voice would."""
    text = phrases.text(key, None, language)
    renderer = Renderer(SpeechOptions(language=language, cache_dir=tmp_path))
    try:
        clip = renderer.clip(text)
    finally:
        renderer.close()
    assert renderer.options.voice_name == LANGUAGES[language].voice
    level = float(np.sqrt(np.mean(np.square(np.asarray(clip.samples, dtype=float)))))
    assert level > 0.01 * float(np.abs(clip.samples).max())  # sound, not silence
    assert len(_voiced(clip.samples)) > 0.5 * clip.samplerate  # a sentence's length
    assert _likeness(clip.samples, _espeak(text, LANGUAGES[language].voice)) > 0.95
    assert _likeness(clip.samples, _espeak(text, "en-us")) < 0.8


def test_speech_render_writes_the_german_set_with_phrases_tsv(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(Path(__import__("sys").executable).parent / "referee"), "speech", "--language",
         "de", "--cache", str(tmp_path / "cache"), "render", str(tmp_path / "de"),
         "--seats", "Blau,Rot"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = (tmp_path / "de" / "phrases.tsv").read_text(encoding="utf-8").splitlines()[1:]
    texts = [row.split("\t")[2] for row in rows]
    assert "Drückt euren Schlagknopf, wenn ihr bereit seid." in texts
    assert "Klatsch das SCHWEIN!" in texts and "Blau, aufdecken!" in texts
    for row in rows:
        assert (tmp_path / "de" / row.split("\t")[0]).stat().st_size > 1000
    for text in texts:
        _no_english(text, "de")


def test_a_variant_s_act_reads_as_done_in_a_reason_and_as_told_to_the_table() -> None:
    """Spoons' act is the same English told and done ("grab a spoon"): German and Spanish say
    it otherwise in a reason ("einen Löffel geschnappt") than to the table ("schnappen")."""
    from referee.rules.pig import Pig, Why

    r = Ruling(1, "Gelb", 1, Why.LAST, 5000, (("act", "grab a spoon"),))
    de, es = phrasebook(Pig, "de"), phrasebook(Pig, "es")
    assert phrases.text(*phrases.ruling_phrase(r, de), book=de) == (
        "Gelb: zuletzt einen Löffel geschnappt, um fünf Millisekunden. Ein Leben verloren.")
    assert phrases.text("variant_rule", {"act": "grab a spoon"}, book=de) == (
        "Vier gleiche? Dann leise: einen Löffel schnappen.")
    assert phrases.text(*phrases.ruling_phrase(r, es), book=es) == (
        "Gelb: tardó más en coger una cuchara por cinco milisegundos. Una vida perdida.")
