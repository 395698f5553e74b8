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

To translate, copy `ENGLISH` (the phrases) and `ENGLISH_WORDS` (the small words the helpers below
build parameters from: numbers, "and", the box's buttons) into a new `Language` and add it to
`LANGUAGES`; a key missing from a translation falls back to English. A translation may carry a
game's keys too. Reasons arrive as the game's English text ("last to tap"); a translation maps
them in `words["reasons"]`.

`table_lines(seats, book=...)` lists every phrase a table can say that can be known ahead of time
(the game's calls, prompts, counts...), with the phrases a game says it will say: the speech cache
renders them at start and `referee speech render DIR` writes them out. Rulings carry a margin, so
they are rendered when said. Only phrases the referee says are here.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from referee.events import BUTTONS, Ruling

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
    """A game's own words, handed to the voice by the engine: its phrases (English, declared
    beside its rules), how its score is said, its score's direction, and which of its phrases
    are calls (said beat by beat, on time: they must be ready before any cue)."""

    phrases: Mapping[str, Sequence[str]] = field(default_factory=dict)
    unit: SaidUnit = field(default_factory=PlainUnit)
    more_wins: bool = False
    calls: tuple[str, ...] = ()


NO_GAME = Phrasebook()


def beats_of(key: str, language: str = "en", book: Phrasebook = NO_GAME) -> list[str]:
    """The beats of phrase `key` before filling: the translation's, else the game's English, else
    the shared English; a key found nowhere is said as its name (and logged), never a KeyError."""
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    found = lang.phrases.get(key) or book.phrases.get(key) or ENGLISH.get(key)
    if found:
        return list(found)
    log.warning("no phrase %r in the table or the game's own phrases; said as its name", key)
    return [key.replace("_", " ")]


def names_a_seat(key: str, book: Phrasebook = NO_GAME) -> bool:
    return any("{seat}" in beat for beat in beats_of(key, book=book))


ENGLISH_WORDS: dict[str, Any] = {
    "and": "and",
    "verb_one": "is",
    "verb_many": "are",
    "numbers": ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve"],
    "buttons": {"slap": "slap", "double": "double"},  # the box's buttons
    "reasons": {},  # English reasons are said as the rules wrote them
}


@dataclass(frozen=True)
class Language:
    """One translation: its phrases, its small words, and the espeak-ng voice that reads it."""

    code: str
    voice: str
    phrases: Mapping[str, list[str]]
    words: Mapping[str, Any]


LANGUAGES: dict[str, Language] = {"en": Language("en", "en-us", ENGLISH, ENGLISH_WORDS)}


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


def _fill(beat: str, params: Mapping[str, Any]) -> str:
    try:
        return beat.format_map(_Fillers(params)).strip()
    except (ValueError, IndexError, AttributeError, TypeError):  # a malformed game phrase
        log.warning("phrase beat %r cannot be filled; said without its fillers", beat)
        return re.sub(r"\{[^{}]*\}|[{}]", "", beat).strip()


def words(key: str, params: dict[str, Any] | None = None, language: str = "en", *,
          book: Phrasebook = NO_GAME) -> list[str]:
    """The beats of phrase `key` with `params` filled in.

    Convenience parameters are completed when missing: `margin` from `margin_ms` or
    `margin_us`, `count_words` from `count` (in the `book`'s unit), list parameters as a list
    ("Ann, Bob and Cy"), and `reason` is translated.
    """
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    filled = _complete(dict(params or {}), lang, book)
    return [_fill(beat, filled) for beat in beats_of(key, lang.code, book)]


def text(key: str, params: dict[str, Any] | None = None, language: str = "en", *,
         book: Phrasebook = NO_GAME) -> str:
    return " ".join(words(key, params, language, book=book))


def _complete(params: dict[str, Any], lang: Language, book: Phrasebook) -> dict[str, Any]:
    if "margin_ms" not in params and params.get("margin_us") is not None:
        params["margin_ms"] = round(int(params["margin_us"]) / 1000)
    if "margin" not in params and "margin_ms" in params:
        params["margin"] = margin_text(int(params["margin_ms"]))
    if "count_words" not in params and "count" in params:
        params["count_words"] = count_words(int(params["count"]), book, lang.code)
    if "reason" in params:
        params["reason"] = _word(lang, "reasons").get(params["reason"], params["reason"])
        params.setdefault("Reason", params["reason"][:1].upper() + params["reason"][1:])
        if "what" not in params:  # a ruling: the reason, with its margin when there is one
            margin = beats_of("what_margin", lang.code, book)[0]
            params["what"] = (_fill(margin, {"reason": params["reason"],
                                             "margin": params["margin"]})
                              if "margin" in params else params["reason"])
    # the rules give numbers and names; the words for them are the voice's
    if "question" not in params and "need" in params:
        params["question"] = question_text(params["need"], params.get("asks") or (), lang.code,
                                           book=book)
    for name, value in list(params.items()):  # names given as a list: "Ann, Bob and Cy"
        if isinstance(value, list | tuple) and name not in ("need", "asks"):
            params[name] = list_words([str(v) for v in value], lang.code)
    if "number" not in params and "n" in params:
        params["number"] = number_words(int(params["n"]), lang.code)
    return params


# ------------------------------------------------------------------------------------------------
# Building parameters


def number_words(n: int, language: str = "en") -> str:
    """Small numbers spelled out ("two"), larger ones as digits (the voice reads them)."""
    names: list[str] = _word(LANGUAGES.get(language, LANGUAGES["en"]), "numbers")
    return names[n] if 0 <= n < len(names) else str(n)


def _capital(said: str, capital: bool) -> str:
    return said[:1].upper() + said[1:] if capital else said


def unit_count(n: int, book: Phrasebook = NO_GAME, language: str = "en") -> str:
    """ "one point", "two points", "13 points": a count of the game's unit (n ≥ 0)."""
    form = book.unit.one if abs(n) == 1 else book.unit.many
    return _fill(form, {"n": number_words(abs(n), language)})


def count_words(n: int, book: Phrasebook = NO_GAME, language: str = "en", *,
                capital: bool = True) -> str:
    """A ruling's or a change's count in the game's words: a loss or a gain for its seat by the
    score's direction ("One point", "One point lost", "Two points back");
    a zero (or a standing score) as what the score counts: losses where fewer wins, gains where
    more wins."""
    gain = n < 0 if not book.more_wins else n >= 0
    if n == 0:
        gain = book.more_wins
    form = book.unit.gain if gain else book.unit.loss
    said = _fill(form, {"count": unit_count(n, book, language),
                        "n": number_words(abs(n), language)})
    return _capital(said, capital)


def list_words(names: Sequence[str], language: str = "en") -> str:
    """ "Blue", "Blue and Red", "Blue, Red and Green"."""
    conj = _word(LANGUAGES.get(language, LANGUAGES["en"]), "and")
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {conj} {names[-1]}"


def question_text(need: Sequence[str], asks: Sequence[str] = (), language: str = "en", *,
                  book: Phrasebook = NO_GAME) -> str:
    """What the judge is asked, one sentence per fact ("Heard or not heard? Seen or not seen?"):
    the voice says it after "Judge:" and the pages show it, from this one place. A fact is asked
    by its judge_<fact> phrase when a translation (or its game) has one, else in its game's words
    (`asks`, the fact's declared question), else by its name."""
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    said = []
    for i, fact in enumerate(need):
        key = f"judge_{fact}"
        if key in lang.phrases or key in book.phrases:
            q = text(key, None, lang.code, book=book)
        else:
            q = asks[i] if i < len(asks) else f"{fact}?"
        said.append(q[:1].upper() + q[1:])
    return " ".join(said)


def _reason_said(ruling: Ruling, language: str) -> str:
    """The ruling's reason as said: a count among its fillers in words ("unclear: three did not
    press"), the log's digits being no sentence."""
    if not ruling.words:
        return ruling.text
    fillers = {k: number_words(int(v), language) if v.isdigit() else v for k, v in ruling.words}
    return ruling.reason.format(**fillers)


def ruling_phrase(
    ruling: Ruling,
    book: Phrasebook = NO_GAME,
    language: str = "en",
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
    key = ruling.reason.phrase
    if key != "ruling":
        params: dict[str, Any] = {"reason": _reason_said(ruling, language)}
        if ruling.seat is None and never and key != "too_close":  # stragglers, named
            params.update(seats=list(never), pressed=pressed)
        elif "{seats}" in " ".join(beats_of(key, language, book)):
            key = "unclear"  # the seats are not known: the reason says how many
        return key, params
    if ruling.seat is None:
        return "nobody", {}
    reason = ruling.text
    key = "ruling"
    if ruling.seat in never:
        what = text("what_never_one_of" if len(never) >= 2 else "what_never",
                    {"pressed": pressed, "reason": reason}, language, book=book)
        key = "ruling_never"
    elif ruling.margin_us is not None:
        what = text("what_margin", {"reason": reason, "margin_us": ruling.margin_us}, language,
                    book=book)
    else:
        what = _word(LANGUAGES.get(language, LANGUAGES["en"]), "reasons").get(reason, reason)
        if plain_zero and ruling.delta == 0:
            return "ruling_plain", {"seat": ruling.seat, "what": what}
    params = {
        "seat": ruling.seat, "what": what,
        "count_words": count_words(ruling.delta, book, language)}
    if key == "ruling" and ruling.margin_us is not None:  # said in pieces: see `segments`
        params.update(reason=reason, margin_us=ruling.margin_us)
    return key, params


def ruling_shown(key: str, params: dict[str, Any], language: str = "en", *,
                 book: Phrasebook = NO_GAME) -> dict[str, str]:
    """A ruling as the pages show it, in the words it is said with: `said`, the whole sentence;
    `what`, the part beside the seat's name and count ("last to press by 42
    milliseconds"), or the whole sentence when no seat is named."""
    said = text(key, params, language, book=book)
    return {"said": said, "what": str(params["what"]) if "what" in params else said}


def correction_changes(before: Sequence[Ruling], after: Sequence[Ruling],
                       book: Phrasebook = NO_GAME, language: str = "en") -> str:
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


def margin_text(margin_ms: int) -> str:
    """A margin as said and shown: "1 millisecond", "201 milliseconds" under a second; from a
    second on, seconds to the hundredth (rounded half up, trailing zeros dropped: "1 second",
    "1.05 seconds" for 1049 ms, "1.5 seconds"); from ten seconds on, whole seconds."""
    m = max(0, int(margin_ms))
    if m < 1000:
        return f"{m} millisecond" + ("" if m == 1 else "s")
    whole, hundredths = divmod((m + 5) // 10, 100)
    if whole >= 10:
        whole, hundredths = (m + 500) // 1000, 0
    said = f"{whole}.{hundredths:02d}".rstrip("0").rstrip(".")
    return f"{said} second" + ("" if said == "1" else "s")


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
                   language: str = "en") -> str:
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


def table_lines(seats: Sequence[str], language: str = "en",
                said: Sequence[tuple[str, dict[str, Any]]] = (), *,
                book: Phrasebook = NO_GAME) -> list[Line]:
    """Every phrase a table with these seats can say that is known before play: the shared ones,
    the game's own that need nothing but a seat (its calls, beat by beat: each beat is its own
    clip), and the phrases `said` that the game knows it will say (dealing, its questions, a
    seat's letters...). Rulings carry a margin: they are rendered when said.
    """
    lang = get_language(language)
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
