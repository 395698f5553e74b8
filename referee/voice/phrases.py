"""Every shared sentence the referee says, in one table per language (English first).

A phrase key maps to a list of *beats*: a cadence is spoken beat by beat (`tempo_ms` apart, the last
beat is the go-word); any other phrase is one beat. Parameters are filled with `str.format`.

The voice holds only what every game shares (rulings, the judge's question, corrections,
standings, the champion, pauses, readiness...). A game's own words come with it in a `Phrasebook`
that the engine hands over (`Announcer.learn`): its phrases, in English, beside its rules (its
calls, its deal...), and how its score is said (`SaidUnit`: one, many, a loss, a gain). A phrase
is looked up in the translation, then the game's own English, then the shared English; a key
found nowhere is said as its name and a filler nobody gave as its name, never a KeyError at a
live table.

Other languages are TOML files in `lang/` beside this module (`lang/de.toml`): the same keys as
`ENGLISH`, the small words the helpers build parameters from ("and", the buttons, the margin's
units, the decimal sign) and the espeak-ng voice; a new file is a new language (`LANGUAGES`). A
game's own words in a language come from the game's file beside its rules, in the `Phrasebook`
(its `language` is the table's; every function here speaks the book's language unless told).
A phrase may pick its words by a count: "{n, plural, =0 {…} one {…} other {# …}}" ("#": the
count in words, "#f": agreeing with a feminine noun), by CLDR's plural rule (`numbers.plural`).
A key a translation lacks is said in English and logged; the suite fails on it
(tests/test_languages.py). Reasons arrive as the game's English text ("last to tap"); the book's
texts translate them.

`table_lines(seats, book=...)` lists every phrase a table can say that can be known ahead of time
(the game's calls, prompts, counts...), with the phrases a game says it will say: the speech cache
renders them at start and `referee speech render DIR` writes them out. Rulings carry a margin, so
they are rendered when said. Only phrases the referee says are here.
"""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from referee.events import BUTTONS, Ruling
from referee.voice import numbers

log = logging.getLogger(__name__)

ENGLISH: dict[str, list[str]] = {
    # rulings ({count_words}: see count_words(); {margin}: see margin_text())
    # (the pages show the same words: {what} beside the seat and its count)
    "ruling": ["{seat}: {what}. {count_words}."],
    "what_margin": ["{reason} by {margin}"],
    "ruling_never": ["{seat} {what}. {count_words}."],  # {what}: "never slapped: last to..."
    "ruling_plain": ["{seat}: {what}."],  # a ruling that moves no score (a game that says so)
    "what_never": ["never {pressed}: {reason}"],  # the seat never pressed: no margin to tell
    "what_never_one_of": ["never {pressed}"],  # one of several seats that never pressed
    # several seats never pressed and each takes what the last would (said as one sentence)
    "never_each": ["{seats} never {pressed}. {count_words} each."],
    # several seats never pressed where only one could take it (or nobody is to): nobody does
    "never_nobody": ["{seats} never {pressed}. Nobody loses."],
    "too_close": ["Too close to call."],
    "nobody": ["Clean round."],
    "unclear": ["{Reason}. Nobody loses."],  # {Reason}: the ruling's, capitalised
    # a correction says what changed, seat by seat ({changes}: "Dev, one point; Ben, ...")
    "correction": ["Correction, round {round}: {changes}."],
    "voided": ["Round {round} voided."],  # UNDO voided a round ruled from presses alone
    "change": ["{seat}, {count_words}"],  # one seat's change in a correction
    # the judge ({question}: the judge_<fact> phrases of the facts asked, else the game's own)
    # (the pages ask the very same question: `question_text`)
    "awaiting": ["Judge: {question}"],
    # game flow
    "practice": ["Practice round."],
    "practice_over": ["Practice over. Now for real."],
    "last_round": ["Last round!"],
    "sudden_death": ["Sudden death: {seats}."],
    "standings": ["{text}"],
    "standing_row": ["{seat}, {count_words}."],  # count_words not capitalised
    "champion": ["{seats} {verb} the champion!"],
    "co_champions": ["{seats} are co-champions!"],
    "game_over": ["Game over. {text}"],
    "paused": ["Paused. Press your slap button to go on."],
    "quiet_table": ["Nobody is pressing. Paused. Press your slap button to go on."],
    "ready": ["Press your slap button when you're ready."],
    "count_in": ["Here we go."],
    "nothing_to_undo": ["Nothing to undo."],
    "storage_full": ["Storage is full. The game is paused."],
    # the box
    "stuck": ["{seat}'s {button} button is stuck."],
    "button_check": ["{seat}, {button} button."],
    "button_ask": ["Press {seat} {button}."],
}

# Entries that are parts of other phrases, never said on their own: a ruling's margin or "never
# slapped" clause, a seat's change in a correction, a row of the standings.
PARTS = ("what_margin", "what_never", "what_never_one_of", "change", "standing_row")


class SaidUnit(Protocol):
    """How a game's score is said (the rules declare one): `one` and `many`, a count of it
    ("{n} point", "{n} points": {n} is the number in words); `loss` and `gain`, a change bad
    or good for its seat ("{count} lost", "{count} back": {count} is the count, {n} the number).
    A score is said as what it counts: losses where fewer wins, gains where more wins."""

    @property
    def one(self) -> str: ...

    @property
    def many(self) -> str: ...

    @property
    def loss(self) -> str: ...

    @property
    def gain(self) -> str: ...


@dataclass(frozen=True)
class PlainUnit:
    """A unit with no words: numbers alone (a table that has not learned its game)."""

    one: str = "{n}"
    many: str = "{n}"
    loss: str = "{count}"
    gain: str = "{count} back"


@dataclass(frozen=True)
class Phrasebook:
    """A game's own words in the table's language, handed to the voice by the engine: its
    phrases (declared beside its rules), how its score is said (`gender`: its unit's, for the
    number's agreement), its score's direction, which of its phrases are calls (said beat by
    beat, on time: they must be ready before any cue), and `texts`: its other English texts
    (reasons, fillers, questions) in `language`."""

    phrases: Mapping[str, Any] = field(default_factory=dict)
    unit: SaidUnit = field(default_factory=PlainUnit)
    more_wins: bool = False
    calls: tuple[str, ...] = ()
    language: str = "en"
    texts: Mapping[str, str] = field(default_factory=dict)
    gender: str = "m"
    zero: str = ""  # how none of the unit is said, where it is not "{n}" of many ("keine Karten")

    def text(self, english: str) -> str:
        return self.texts.get(english, english)


NO_GAME = Phrasebook()


def beats_of(key: str, language: str | None = None, book: Phrasebook = NO_GAME) -> list[str]:
    """The beats of phrase `key` before filling: the language's shared phrase, else the game's
    own (in the book's language), else the shared English (logged: a translation lacks it); a
    key found nowhere is said as its name (and logged), never a KeyError."""
    lang = _lang(language, book)
    found = lang.phrases.get(key) or book.phrases.get(key)
    if not found and key in ENGLISH:
        if lang.code != "en":
            log.warning("no %s phrase %r; said in English", lang.code, key)
        found = ENGLISH[key]
    if found:
        return list(found)
    log.warning("no phrase %r in the table or the game's own phrases; said as its name", key)
    return [key.replace("_", " ")]


def names_a_seat(key: str, book: Phrasebook = NO_GAME) -> bool:
    return any("{seat}" in beat for beat in beats_of(key, book=book))


def _lang(language: str | None, book: Phrasebook = NO_GAME) -> Language:
    return LANGUAGES.get(language or book.language, LANGUAGES["en"])


ENGLISH_WORDS: dict[str, Any] = {
    "and": "and",
    "or": "or",
    "verb_one": "is",
    "verb_many": "are",
    "decimal": ".",
    "buttons": {"slap": "slap", "double": "double"},  # the box's buttons
    "millisecond": ["{n} millisecond", "{n} milliseconds"],  # one, other ({n}: digits)
    "second": ["{n} second", "{n} seconds"],
    "unit_gender": "m",
    "one": "1",  # how "1" is said before those units (the English voice reads "1" well)
    "reasons": {},  # English reasons are said as the rules wrote them
}


@dataclass(frozen=True)
class Language:
    """One translation: its phrases, its small words, and the espeak-ng voice that reads it."""

    code: str
    voice: str
    phrases: Mapping[str, list[str]]
    words: Mapping[str, Any]
    name: str = ""


def _load_languages() -> dict[str, Language]:
    """English, and each `lang/<code>.toml` beside this module."""
    out = {"en": Language("en", "en-us", ENGLISH, ENGLISH_WORDS, "English")}
    for path in sorted((Path(__file__).parent / "lang").glob("*.toml")):
        with path.open("rb") as f:
            data = tomllib.load(f)
        words = dict(data.get("words", {}))
        words["reasons"] = dict(data.get("reasons", {}))
        out[path.stem] = Language(path.stem, str(data["voice"]), data.get("phrases", {}), words,
                                  str(data.get("name", path.stem)))
    return out


LANGUAGES: dict[str, Language] = _load_languages()


def get_language(code: str = "en") -> Language:
    try:
        return LANGUAGES[code]
    except KeyError:
        known = ", ".join(sorted(LANGUAGES))
        raise ValueError(f"no phrase table for language {code!r}; known: {known}") from None


def _word(lang: Language, name: str) -> Any:
    return lang.words.get(name, ENGLISH_WORDS[name])


class _Fillers(dict[str, Any]):
    """Parameters for `str.format_map`: a filler nobody gave is said as its name."""

    def __missing__(self, key: str) -> str:
        log.warning("no value for {%s}; said as its name", key)
        return key


_PLURAL = re.compile(r"\{(\w+), plural,((?:\s*(?:=\d+|one|other)\s*\{(?:[^{}]|\{\w+\})*\})+)\s*\}")
_FORM = re.compile(r"(=\d+|one|other)\s*\{((?:[^{}]|\{\w+\})*)\}")


def _plurals(beat: str, params: Mapping[str, Any], language: str) -> str:
    """Each "{n, plural, =0 {…} one {…} other {# …}}" in `beat` as the form for params[n]
    ("#": the count in words, "#f": agreeing with a feminine noun)."""

    def pick(match: re.Match[str]) -> str:
        value = params.get(match.group(1))
        if not isinstance(value, int):
            return match.group(0)
        forms: dict[str, str] = dict(_FORM.findall(match.group(2)))
        exact, category = f"={value}", numbers.plural(language, value)
        form = forms[exact] if exact in forms else forms.get(category, forms.get("other", ""))
        return (form.replace("#f", numbers.number_words(value, language, "f"))
                .replace("#", numbers.number_words(value, language)))

    return _PLURAL.sub(pick, beat)


def _fill(beat: str, params: Mapping[str, Any], language: str = "en") -> str:
    try:
        if ", plural," in beat:
            beat = _plurals(beat, params, language)
        return re.sub(r"\s{2,}", " ", beat.format_map(_Fillers(params))).strip()
    except (ValueError, IndexError, AttributeError, TypeError):  # a malformed game phrase
        log.warning("phrase beat %r cannot be filled; said without its fillers", beat)
        return re.sub(r"\{[^{}]*\}|[{}]", "", beat).strip()


def words(key: str, params: dict[str, Any] | None = None, language: str | None = None, *,
          book: Phrasebook = NO_GAME, shown: bool = False) -> list[str]:
    """The beats of phrase `key` with `params` filled in.

    Convenience parameters are completed when missing: `margin` from `margin_ms` or
    `margin_us` (`shown`: as the pages write it, in digits; else as it is said), `count_words`
    from `count` (in the `book`'s unit), list parameters as a list ("Ann, Bob and Cy"), and
    `reason` and the game's other English fillers are translated.
    """
    lang = _lang(language, book)
    filled = _complete(dict(params or {}), lang, book, shown=shown)
    return [_fill(beat, filled, lang.code) for beat in beats_of(key, lang.code, book)]


def text(key: str, params: dict[str, Any] | None = None, language: str | None = None, *,
         book: Phrasebook = NO_GAME, shown: bool = False) -> str:
    return " ".join(words(key, params, language, book=book, shown=shown))


# Fillers that name seats or are built here: never looked up among a game's texts.
_OWN_FILLERS = frozenset({"seat", "seats", "text", "changes", "question", "what", "count_words",
                          "margin", "number", "Reason", "need", "asks"})


def _complete(params: dict[str, Any], lang: Language, book: Phrasebook, *,
              shown: bool = False) -> dict[str, Any]:
    if "margin_ms" not in params and params.get("margin_us") is not None:
        params["margin_ms"] = round(int(params["margin_us"]) / 1000)
    if "margin" not in params and "margin_ms" in params:
        ms = int(params["margin_ms"])
        params["margin"] = margin_text(ms, lang.code) if shown else margin_said(ms, lang.code)
    if "count_words" not in params and "count" in params:
        params["count_words"] = count_words(int(params["count"]), book, lang.code)
    if lang.code != "en":  # the game's own English fillers (an act, a rank) in its words
        for name, value in list(params.items()):
            if name in _OWN_FILLERS:
                continue
            if isinstance(value, str):
                params[name] = book.text(value)
            elif isinstance(value, list | tuple) and name not in ("need", "asks"):
                params[name] = [book.text(v) if isinstance(v, str) else v for v in value]
    if "reason" in params:
        reason = book.text(params["reason"])
        params["reason"] = _word(lang, "reasons").get(reason, reason)
        params.setdefault("Reason", _capital(params["reason"]))
        if "what" not in params:  # a ruling: the reason, with its margin when there is one
            margin = beats_of("what_margin", lang.code, book)[0]
            params["what"] = (_fill(margin, {"reason": params["reason"],
                                             "margin": params["margin"]}, lang.code)
                              if "margin" in params else params["reason"])
    # the rules give numbers and names; the words for them are the voice's
    if "question" not in params and "need" in params:
        params["question"] = question_text(params["need"], params.get("asks") or (), lang.code,
                                           book=book)
    if isinstance(params.get("button"), str):  # the box's buttons in the language's words
        params["button"] = _word(lang, "buttons").get(params["button"], params["button"])
    if "verb" not in params and "seats" in params:  # "Blue is", "Blue and Red are"
        many = isinstance(params["seats"], list | tuple) and len(params["seats"]) > 1
        params["verb"] = _word(lang, "verb_many" if many else "verb_one")
    for name, value in list(params.items()):  # names given as a list: "Ann, Bob and Cy"
        if isinstance(value, list | tuple) and name not in ("need", "asks"):
            params[name] = list_words([str(v) for v in value], lang.code)
    if "number" not in params and "n" in params:
        params["number"] = number_words(int(params["n"]), lang.code)
    return params


# ------------------------------------------------------------------------------------------------
# Building parameters


def number_words(n: int, language: str = "en", gender: str = "m") -> str:
    """A number as said before a noun (`numbers.number_words`): "two", "einundzwanzig"."""
    return numbers.number_words(n, language, gender)


def _capital(said: str, capital: bool = True) -> str:
    """The first letter capitalised, after any opening "¿" or "¡"."""
    if not capital:
        return said
    lead = len(said) - len(said.lstrip("¿¡"))
    return said[:lead] + said[lead:lead + 1].upper() + said[lead + 1:]


def unit_count(n: int, book: Phrasebook = NO_GAME, language: str | None = None) -> str:
    """ "one point", "two points", "13 points": a count of the game's unit (n ≥ 0), in the
    plural form the language's rule picks, the number agreeing with the unit."""
    code = _lang(language, book).code
    if n == 0 and book.zero:
        return book.zero
    form = book.unit.one if numbers.plural(code, abs(n)) == numbers.ONE else book.unit.many
    return _fill(form, {"n": number_words(abs(n), code, book.gender)}, code)


def count_words(n: int, book: Phrasebook = NO_GAME, language: str | None = None, *,
                capital: bool = True) -> str:
    """A ruling's or a change's count in the game's words: a loss or a gain for its seat by the
    score's direction ("One point", "One point lost", "Two points back");
    a zero (or a standing score) as what the score counts: losses where fewer wins, gains where
    more wins."""
    gain = n < 0 if not book.more_wins else n >= 0
    if n == 0:
        gain = book.more_wins
    form = book.unit.gain if gain else book.unit.loss
    code = _lang(language, book).code
    said = _fill(form, {"count": unit_count(n, book, code), "count_n": abs(n),
                        "n": number_words(abs(n), code, book.gender)}, code)
    return _capital(said, capital)


def list_words(names: Sequence[str], language: str = "en", conjunction: str = "and") -> str:
    """ "Blue", "Blue and Red", "Blue, Red and Green"; "Blau, Rot und Grün"; "Azul, Rojo y
    Verde" (Spanish "e" before an "i" sound: "Rojo e Inés"). `conjunction`: "and" or "or"."""
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    conj = _word(lang, conjunction)
    if len(names) <= 1:
        return "".join(names)
    last = names[-1]
    if lang.code == "es" and conj == "y" and re.match(r"(?i)h?i(?![aeiouáéó])", last):
        conj = "e"
    return f"{', '.join(names[:-1])} {conj} {last}"


def question_text(need: Sequence[str], asks: Sequence[str] = (), language: str | None = None, *,
                  book: Phrasebook = NO_GAME) -> str:
    """What the judge is asked, one sentence per fact ("Heard or not heard? Seen or not seen?"):
    the voice says it after "Judge:" and the pages show it, from this one place. A fact is asked
    by its judge_<fact> phrase when a translation (or its game) has one, else in its game's words
    (`asks`, the fact's declared question), else by its name."""
    lang = _lang(language, book)
    said = []
    for i, fact in enumerate(need):
        key = f"judge_{fact}"
        if key in lang.phrases or key in book.phrases:
            q = text(key, None, lang.code, book=book)
        else:
            q = book.text(asks[i]) if i < len(asks) else f"{fact}?"
        said.append(_capital(q))
    return " ".join(said)


def _reason_said(ruling: Ruling, language: str, book: Phrasebook = NO_GAME) -> str:
    """The ruling's reason as said, in the book's words: a count among its fillers in words
    ("unclear: three did not press"), the log's digits being no sentence."""
    template = book.text(ruling.reason.value)
    if not ruling.words:
        return template
    # a filler inside a reason may read otherwise than the same English elsewhere (German "einen
    # Löffel geschnappt" in a reason, "einen Löffel schnappen" told to the table): "reason|<text>"
    fillers = {k: number_words(int(v), language) if v.isdigit()
               else book.texts.get(f"reason|{v}", book.text(v)) for k, v in ruling.words}
    try:
        return _plurals(template, {k: int(v) for k, v in ruling.words if v.isdigit()},
                        language).format(**fillers)
    except (KeyError, IndexError, ValueError):
        log.warning("reason %r cannot be filled in %s", template, language)
        return ruling.text


def ruling_phrase(
    ruling: Ruling,
    book: Phrasebook = NO_GAME,
    language: str | None = None,
    *,
    never: tuple[str, ...] = (),
    pressed: str = "pressed",
    plain_zero: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The phrase key and parameters that announce one ruling: its reason's phrase key ("ruling":
    the seat, what it did and its count). `never`: the seats of the race that never pressed; a
    ruling on one of them says so ("Yellow never pressed: last to press"; one of several: "Red
    never pressed. One point."), and stragglers that take nothing are named ("Red and Yellow
    never pressed. Nobody loses."). `pressed`: what they did not do (the game's word).
    `plain_zero`: a ruling that moves no score says no count ("Bob: buzzed first.")."""
    language = _lang(language, book).code
    pressed = book.text(pressed)
    key = ruling.reason.phrase
    if key != "ruling":
        params: dict[str, Any] = {"reason": _reason_said(ruling, language, book)}
        if ruling.seat is None and never and key != "too_close":  # stragglers, named
            params.update(seats=list(never), pressed=pressed)
        elif "{seats}" in " ".join(beats_of(key, language, book)):
            key = "unclear"  # the seats are not known: the reason says how many
        return key, params
    if ruling.seat is None:
        return "nobody", {}
    reason = _reason_said(ruling, language, book)
    key = "ruling"
    shown = ""
    if ruling.seat in never:
        what = text("what_never_one_of" if len(never) >= 2 else "what_never",
                    {"pressed": pressed, "reason": reason}, language, book=book)
        key = "ruling_never"
    elif ruling.margin_us is not None:
        what = text("what_margin", {"reason": reason, "margin_us": ruling.margin_us}, language,
                    book=book)
        shown = text("what_margin", {"reason": reason, "margin_us": ruling.margin_us}, language,
                     book=book, shown=True)
    else:
        what = _word(LANGUAGES.get(language, LANGUAGES["en"]), "reasons").get(reason, reason)
        if plain_zero and ruling.delta == 0:
            return "ruling_plain", {"seat": ruling.seat, "what": what}
    params = {
        "seat": ruling.seat, "what": what,
        "count_words": count_words(ruling.delta, book, language)}
    if shown != what and shown:
        params["what_shown"] = shown
    if key == "ruling" and ruling.margin_us is not None:  # said in pieces: see `segments`
        params.update(reason=reason, margin_us=ruling.margin_us)
    return key, params


def ruling_shown(key: str, params: dict[str, Any], language: str | None = None, *,
                 book: Phrasebook = NO_GAME) -> dict[str, str]:
    """A ruling as the pages show it, in the words it is said with (a margin in digits, as the
    language writes them): `said`, the whole sentence; `what`, the part beside the seat's name
    and count ("last to press by 42 milliseconds"), or the whole sentence when no seat is
    named."""
    if "what_shown" in params:
        params = {**params, "what": params["what_shown"]}
    said = text(key, params, language, book=book, shown=True)
    return {"said": said, "what": str(params["what"]) if "what" in params else said}


def correction_changes(before: Sequence[Ruling], after: Sequence[Ruling],
                       book: Phrasebook = NO_GAME, language: str | None = None) -> str:
    """What a correction changed, seat by seat, in the game's loss and gain words: "Dev, one
    point lost; Ben, one point" (each seat's total for the round, before and after);
    "" if nothing changed."""
    totals: dict[str, int] = {}
    order: list[str] = []
    for sign, rulings in ((-1, before), (1, after)):
        for r in rulings:
            if r.seat is not None:
                if r.seat not in totals:
                    order.append(r.seat)
                totals[r.seat] = totals.get(r.seat, 0) + sign * r.delta
    return "; ".join(
        text("change", {"seat": seat, "count_words": count_words(
            totals[seat], book, language, capital=False)}, language, book=book)
        for seat in order if totals[seat])


def _margin(margin_ms: int) -> tuple[int, int, bool]:
    """(whole, hundredths, in seconds) of a margin: milliseconds under a second; from a second
    on, seconds to the hundredth (rounded half up); from ten seconds on, whole seconds."""
    m = max(0, int(margin_ms))
    if m < 1000:
        return m, 0, False
    whole, hundredths = divmod((m + 5) // 10, 100)
    if whole >= 10:
        whole, hundredths = (m + 500) // 1000, 0
    return whole, hundredths, True


def margin_text(margin_ms: int, language: str = "en") -> str:
    """A margin as shown (and said in English): "1 millisecond", "201 milliseconds" under a
    second; from a second on, seconds to the hundredth, trailing zeros dropped, with the
    language's decimal sign ("1 second", "1.05 seconds" for 1049 ms, "1,05 Sekunden",
    "1,5 segundos"); from ten seconds on, whole seconds. Singular only for exactly one."""
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    whole, hundredths, seconds = _margin(margin_ms)
    number = f"{whole}.{hundredths:02d}".rstrip("0").rstrip(".") if seconds else str(whole)
    one, other = _word(lang, "second" if seconds else "millisecond")
    form: str = one if number == "1" else other
    return form.replace("{n}", number.replace(".", _word(lang, "decimal")))


def margin_said(margin_ms: int, language: str = "en") -> str:
    """A margin as the voice says it: as shown, but a whole number in words where the language's
    voice would read the digits wrongly ("eine Millisekunde", "veintiún milisegundos")."""
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    shown = margin_text(margin_ms, language)
    whole, hundredths, seconds = _margin(margin_ms)
    if lang.code == "en" or hundredths:
        return shown
    one, other = _word(lang, "second" if seconds else "millisecond")
    form: str = one if whole == 1 else other
    return form.replace("{n}", number_words(whole, lang.code, _word(lang, "unit_gender")))


def margin_words(margin_ms: int) -> list[str]:
    """How a margin is said, as pieces that can all be rendered before the game, each read by
    espeak-ng as the number it is part of: under 100 ms one piece ("by 42 milliseconds."), up
    to a second the hundreds and the rest ("by 4 hundred", "23 milliseconds.", as its en-us
    voice reads 423: no "and"), from a second on the seconds and the hundredths ("by 1 point",
    "0 5 seconds.", as it reads 1.05). About 330 pieces cover every margin, so no ruling waits for the
    speech engine."""
    m = max(0, int(margin_ms))
    said = margin_text(m)
    if m < 100:
        return [f"by {said}."]
    if m < 1000:
        hundreds, rest = divmod(m, 100)
        if rest == 0:
            return [f"by {said}."]
        return [f"by {hundreds} hundred", f"{rest} milliseconds."]
    number, unit = said.split(" ")
    if "." not in number:
        return [f"by {said}."]
    whole, fraction = number.split(".")
    return [f"by {whole} point", f"{' '.join(fraction)} {unit}."]


def segments(key: str, params: dict[str, Any] | None = None, language: str = "en", *,
             book: Phrasebook = NO_GAME) -> list[str]:
    """A phrase as the clips it is said from. A ruling with a margin is said in pieces (who and
    why, the margin, the count), each of which is rendered ahead of time (`prerender_texts`);
    every other phrase is one clip. English only: other languages say the whole sentence."""
    params = dict(params or {})
    if key != "ruling" or language != "en" or "margin_us" not in params and "margin_ms" not in params:
        return [text(key, params, language, book=book)]
    params = _complete(params, get_language(language), book)
    return [f"{params['seat']}: {params['reason']}", *margin_words(int(params["margin_ms"])),
            f"{params['count_words']}."]


def prerender_texts(seats: Sequence[str], language: str = "en",
                    reasons: Sequence[str] = (), *, book: Phrasebook = NO_GAME) -> list[str]:
    """The ruling pieces a table may need: every margin piece, every count of the game's unit,
    and "seat: reason" for the reasons a game declares. Rendered in the background at start."""
    if language != "en":
        return []
    out: list[str] = []
    for m in [*range(0, 100), *range(100, 1000, 100), *range(101, 200), *range(1000, 2000, 10),
              *range(1000, 10_000, 1000)]:
        out += margin_words(m)
    out += [f"by {h} hundred" for h in range(2, 10)]
    out += [f"by {s} point" for s in range(2, 10)]
    out += [f"{count_words(n, book, language)}." for n in (*range(0, 13), -1, -2, -3)]
    out += [f"{seat}: {reason}" for seat in seats for reason in reasons]
    return list(dict.fromkeys(out))


def standings_text(rows: Iterable[tuple[str, int]], book: Phrasebook = NO_GAME,
                   language: str | None = None) -> str:
    """ "Blue, two points. Red, one point." for (seat, score) rows in place order: each score
    said as what it counts (see `count_words`)."""
    return " ".join(
        text("standing_row", {"seat": seat, "count_words": count_words(
            score, book, language, capital=False)}, language, book=book)
        for seat, score in rows
    )


# ------------------------------------------------------------------------------------------------
# Everything a table can say ahead of time


@dataclass(frozen=True)
class Line:
    """One phrase to render: a file-safe name and the text spoken."""

    name: str
    text: str


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "x"


def _fillers(beats: Sequence[str]) -> set[str]:
    return {name for beat in beats for name in re.findall(r"\{([^{}]*)\}", beat)}


def table_lines(seats: Sequence[str], language: str | None = None,
                said: Sequence[tuple[str, dict[str, Any]]] = (), *,
                book: Phrasebook = NO_GAME) -> list[Line]:
    """Every phrase a table with these seats can say that is known before play: the shared ones,
    the game's own that need nothing but a seat (its calls, beat by beat: each beat is its own
    clip), and the phrases `said` that the game knows it will say (dealing, its questions, a
    seat's letters...). Rulings carry a margin: they are rendered when said.
    """
    lang = get_language(language or book.language)
    lines: list[Line] = []

    def add(name: str, key: str, params: dict[str, Any] | None = None) -> None:
        beats = words(key, params, lang.code, book=book)
        for i, beat in enumerate(beats, start=1):
            lines.append(Line(f"{name}.{i}" if len(beats) > 1 else name, beat))

    for key in (*book.calls, *book.phrases):
        needs = _fillers(beats_of(key, lang.code, book))
        if needs == {"seat"}:
            for seat in seats:
                add(f"{key}.{slug(seat)}", key, {"seat": seat})
        elif not needs:
            add(key, key)
    for key in ("too_close", "nobody", "practice", "practice_over", "last_round", "paused",
                "storage_full", "quiet_table", "ready", "count_in", "nothing_to_undo"):
        add(key, key)
    for i, (key, params) in enumerate(said):
        add(f"{slug(key)}.{i}", key, params)
    for seat in seats:
        s = slug(seat)
        for button in BUTTONS:
            said = _word(lang, "buttons").get(button, button)
            add(f"button_check.{s}.{button}", "button_check", {"seat": seat, "button": said})
            add(f"button_ask.{s}.{button}", "button_ask", {"seat": seat, "button": said})
        add(f"champion.{s}", "champion", {"seats": seat, "verb": _word(lang, "verb_one")})
    unique: dict[str, Line] = {}
    for line in lines:
        unique.setdefault(line.text, line)
    return list(unique.values())
