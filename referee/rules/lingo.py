"""A game's words in the table's language, kept beside its rules.

A game declares its words in English (TITLE, UNIT_WORDS, UNIT_SAID, PHRASES, its options' and
facts' labels, its reasons, PENALTY_REASONS, PRESSED, and TEXTS: any other English it hands the
voice or the pages, such as Pig's ranks and variants). Each other language is a TOML file beside
the module that declares them, named `<module>.<language>.toml` (`spank.py` → `spank.de.toml`):

    title = "Klatsch das Schwein!"
    [unit]                  # how the score is said: one, many ({n}: the number in words), a loss
    one = "eine Strafkarte" # and a gain ({count}: the count; {count_n}: the number, for a
    many = "{n} Strafkarten" # "{count_n, plural, …}"); zero, if none is said apart; gender
    zero = "keine Strafkarten" # "m"/"f"/"n" for the number's agreement ("veintiuna cartas");
    gender = "f"            # words: the pages' one and many
    [phrases]               # the game's phrases by key, beat by beat
    spank = ["Klatsch", "das", "SCHWEIN!"]
    [text]                  # every other declared English text, translated
    "Deck" = "Kartenstapel" # ("reason|<text>": a filler as a reason says it, where it differs)

A class's words are the files of every class it inherits from, its own last (the shared options,
VOID and the shared reasons are the base's: `base.de.toml`; a turn game's, `turns.de.toml`). So a
new game joins a language by shipping its file, and a new language is one file per module that
declares words, plus the voice's and the pages' catalogues. `missing(cls, language)` lists what a
language lacks; the suite fails on anything listed, for every registered game. English needs no
file: its words are the declarations themselves.
"""

from __future__ import annotations

import inspect
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from referee.rules.declare import Fact, Option, UnitWords

ENGLISH = "en"


@dataclass(frozen=True)
class GameWords:
    """A game's words in one language: its title, phrases, how its score is said and shown, and
    its other texts (English text → this language's). `text()` of a text it lacks is the text."""

    language: str
    title: str
    phrases: Mapping[str, Any]
    unit: UnitWords
    unit_words: tuple[str, str]
    texts: Mapping[str, str] = field(default_factory=dict)
    gender: str = "m"
    zero: str = ""  # none of the unit, where a language says it apart ("keine Karten")

    def text(self, english: str) -> str:
        return self.texts.get(english, english)


def _file_of(cls: type, language: str) -> Path | None:
    """`<module>.<language>.toml` beside the module that declares `cls`; a game played from a file
    (its class declares `WORDS_BESIDE`, the game file) has its words beside that file."""
    beside = cls.__dict__.get("WORDS_BESIDE")
    module = sys.modules.get(cls.__module__)
    source = beside if beside is not None else getattr(module, "__file__", None)
    if source is None:
        return None
    path = Path(source).with_suffix(f".{language}.toml")
    return path if path.is_file() else None


@cache
def _read(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        return tomllib.load(f)


def _layers(cls: type, language: str) -> Iterator[dict[str, Any]]:
    """The language files of `cls` and its bases, the most basic first (one per module)."""
    seen: set[Path] = set()
    for klass in reversed(inspect.getmro(cls)):
        path = _file_of(klass, language)
        if path is not None and path not in seen:
            seen.add(path)
            yield _read(path)


@cache
def words_of(cls: Any, language: str = ENGLISH) -> GameWords:
    """The words of game class `cls` in `language` (English: its declarations); what a
    translation lacks is left in English, and `missing` names it."""
    english_unit = cls.unit_said()
    if language == ENGLISH:
        return GameWords(ENGLISH, cls.TITLE, dict(cls.PHRASES), english_unit,
                         tuple(cls.UNIT_WORDS))
    phrases, unit, texts = dict(cls.PHRASES), {}, {}
    own = _file_of(cls, language)
    title = _read(own).get("title", cls.TITLE) if own is not None else cls.TITLE
    for layer in _layers(cls, language):
        phrases.update(layer.get("phrases", {}))
        unit.update(layer.get("unit", {}))
        texts.update(layer.get("text", {}))
    said = UnitWords(unit.get("one", english_unit.one), unit.get("many", english_unit.many),
                     unit.get("loss", english_unit.loss), unit.get("gain", english_unit.gain))
    shown = tuple(unit.get("words", cls.UNIT_WORDS))
    return GameWords(language, title, phrases, said, (shown[0], shown[1]), texts,
                     unit.get("gender", "m"), unit.get("zero", ""))


UNIVERSAL_UNITS = ("ms", "µs")  # written alike in every language the referee speaks


def _option_texts(option: Option) -> list[str]:
    unit = [option.unit] if option.unit and option.unit not in UNIVERSAL_UNITS else []
    return [option.label, option.help, *option.labels, *unit]


def _fact_texts(fact: Fact) -> list[str]:
    return [fact.label, fact.question, fact.ask, *fact.answers, *(c[1] for c in fact.choices),
            *([fact.what] if fact.what else [])]


def declared_texts(cls: Any) -> list[str]:
    """Every English text game class `cls` declares that is shown or said, apart from its
    phrases and unit (which a language file gives by key)."""
    out: list[str] = [cls.PRESSED, *cls.PENALTY_REASONS, *getattr(cls, "TEXTS", ())]
    for option in cls.known_options().values():
        out += _option_texts(option)
    for fact in cls.facts():
        out += _fact_texts(fact)
    for reasons in cls.reasons():
        out += [r.value for r in reasons if not re.fullmatch(r"\{\w+\}", r.value)]
    return list(dict.fromkeys(t for t in out if t))


def missing(cls: Any, language: str) -> list[str]:
    """What `language` lacks of game class `cls`'s words (empty: all there)."""
    if language == ENGLISH:
        return []
    layers = list(_layers(cls, language))
    if not layers:
        return [f"no file {Path(sys.modules[cls.__module__].__file__ or '?').stem}"
                f".{language}.toml beside {cls.__module__}"]
    phrases: dict[str, Any] = {}
    unit: dict[str, Any] = {}
    texts: dict[str, str] = {}
    for layer in layers:
        phrases.update(layer.get("phrases", {}))
        unit.update(layer.get("unit", {}))
        texts.update(layer.get("text", {}))
    own = _file_of(cls, language)
    titled = own is not None and "title" in _read(own)
    gaps = [] if titled else ["title"]
    gaps += [f"phrase {k!r}" for k in cls.PHRASES if k not in phrases]
    gaps += [f"phrase {k!r} has {len(_beats(phrases[k]))} beats, English has {len(cls.PHRASES[k])}"
             for k in cls.CALLS if k in phrases and len(_beats(phrases[k])) != len(cls.PHRASES[k])]
    gaps += [f"unit {k!r}" for k in ("one", "many", "loss", "gain", "words", "gender")
             if k not in unit]
    gaps += [f"text {t!r}" for t in declared_texts(cls) if t not in texts]
    return gaps


def _beats(value: Any) -> Sequence[str]:
    return value if isinstance(value, list | tuple) else [value]
