"""Every word the referee says, in one table per language (English first).

A phrase key maps to a list of *beats*: a cadence is spoken beat by beat (`tempo_ms` apart, the last
beat is the go-word); any other phrase is one beat. Parameters are filled with `str.format`.

To translate, copy `ENGLISH` (the phrases) and `ENGLISH_WORDS` (the small words the helpers below
build parameters from: units, numbers, ranks, variant actions, "and") into a new `Language` and add
it to `LANGUAGES`; a key missing from a translation falls back to English. The games declare what
is said (phrase keys, their reasons, their facts' questions); the words are here. Reasons arrive
as the game's English text ("last to tap"); a translation maps them in `words["reasons"]`.

`table_lines(seats)` lists every phrase a table can say that can be known ahead of time (cadence
beats, turn calls, prompts, counts...), with the phrases a game says it will say: the speech cache
renders them at start and `referee speech render DIR` writes them out. Rulings carry a margin, so
they are rendered when said. Only phrases the referee says are here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.events import Ruling

ENGLISH: dict[str, list[str]] = {
    # cadences (the last beat is the go-word)
    "spank": ["Spank", "the", "PIG!"],
    "turn": ["{seat},", "flip!"],
    "pass": ["Pass!"],
    # rulings ({count_words}: see count_words(); {margin_ms}: whole milliseconds)
    # (the pages show the same words: {what} beside the seat and its count)
    "ruling": ["{seat}: {what}. {count_words}."],
    "what_margin": ["{reason} by {margin_ms} milliseconds"],
    "ruling_never": ["{seat} {what}. {count_words}."],  # {what}: "never slapped: last to..."
    "what_never": ["never {pressed}: {reason}"],  # the seat never pressed: no margin to tell
    "too_close": ["Too close to call."],
    "too_close_never": ["{seats} never {pressed}: too close to call."],
    "nobody": ["Clean round."],
    "unclear": ["{Reason}: nobody loses."],  # {Reason}: the ruling's, capitalised
    # a correction says what changed, seat by seat ({changes}: "Dev sheds one whammy; Ben...")
    "correction": ["Correction, round {round}: {changes}."],
    "take_cards": ["{seat}, take {number} face-up cards into your whammy pile."],
    # lives and eliminations
    "lives": ["{seat} takes the letter {letter}."],  # "the letter": espeak says "P." as "pee"
    "eliminated": ["{seat} is out. Remove one set of four cards."],
    # the judge ({question}: the judge_<fact> phrases of the facts asked, else the game's own)
    # (the pages ask the very same question: `question_text`)
    "awaiting": ["Judge: {question}"],
    "judge_pigs": ["Pig or no pig?"],
    "judge_doubles": ["Double or no double?"],
    "judge_match": ["Match or no match?"],
    # game flow
    "practice": ["Practice round."],
    "practice_over": ["Practice over. Now for real."],
    "deal": ["Deal {cards_said} to each player. {aside}"],
    "deal_aside": ["Set {cards_said} aside."],
    "deal_sets": ["Use the {ranks}: one set of four per player. Deal four cards to each player."],
    "deal_ring": ["Shuffle all fifty-two cards and lay them face down in a ring."],
    "variant_rule": ["Four of a kind? Quietly {act}."],
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
# slapped" clause, a judge's question, the cards set aside, a row of the standings.
PARTS = ("what_margin", "what_never", "judge_pigs", "judge_doubles", "judge_match",
         "deal_aside", "standing_row")

# The phrase keys that games call rounds (and beats) with: spoken beat by beat, on time.
CALLS = ("spank", "turn", "pass")


def names_a_seat(key: str) -> bool:
    return any("{seat}" in beat for beat in ENGLISH[key])


ENGLISH_WORDS: dict[str, Any] = {
    "and": "and",
    "verb_one": "is",
    "verb_many": "are",
    "numbers": ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve"],
    # unit: (one, many, taken back) — "{n} whammies", "one whammy back"
    "units": {
        "whammies": ("{n} whammy", "{n} whammies", "{n} off the whammy pile"),
        "lives": ("{n} life lost", "{n} lives lost", "{n} life back"),
        "cards": ("{n} card", "{n} cards", "{n} card back"),
    },
    # what a seat does with its unit when a correction changes its score: (gains, loses)
    "changes": {
        "whammies": ("takes {count}", "sheds {count}"),
        "lives": ("loses {count}", "gets {count} back"),
        "cards": ("takes {count}", "gives {count} back"),
    },
    # a count of cards dealt or set aside, said in digits: (one, many)
    "card_count": ("{n} card", "{n} cards"),
    "letters": ["P", "I", "G"],
    "ranks": ["aces", "twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines",
              "tens", "jacks", "queens", "kings"],
    "variants": {
        "pig": "touch your nose",
        "spoons": "grab a spoon",
        "tongue": "stick out your tongue",
    },
    "buttons": {"slap": "slap", "double": "double"},
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


def words(key: str, params: dict[str, Any] | None = None, language: str = "en") -> list[str]:
    """The beats of phrase `key` with `params` filled in.

    Convenience parameters are completed when missing: `margin_ms` from `margin_us`,
    `count_words` from `count` (+ `unit`, default whammies, and `unit_words`, the game's own
    one and many for a unit this table has no words for), and `reason` is translated.
    """
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    beats = lang.phrases.get(key) or ENGLISH[key]
    filled = _complete(dict(params or {}), lang)
    return [beat.format(**filled).strip() for beat in beats]


def text(key: str, params: dict[str, Any] | None = None, language: str = "en") -> str:
    return " ".join(words(key, params, language))


def _complete(params: dict[str, Any], lang: Language) -> dict[str, Any]:
    if "margin_ms" not in params and params.get("margin_us") is not None:
        params["margin_ms"] = round(int(params["margin_us"]) / 1000)
    if "count_words" not in params and "count" in params:
        params["count_words"] = count_words(int(params["count"]), params.get("unit", "whammies"),
                                            lang.code, words=params.get("unit_words"))
    if "reason" in params:
        params["reason"] = _word(lang, "reasons").get(params["reason"], params["reason"])
        params.setdefault("Reason", params["reason"][:1].upper() + params["reason"][1:])
        if "what" not in params:  # a ruling: the reason, with its margin when there is one
            margin = (lang.phrases.get("what_margin") or ENGLISH["what_margin"])[0]
            params["what"] = (margin.format(reason=params["reason"], margin_ms=params["margin_ms"])
                              if "margin_ms" in params else params["reason"])
    # the rules give numbers and names; the words for them are the voice's
    if "ranks" not in params and "sets" in params:
        params["ranks"] = ranks_words(int(params["sets"]), lang.code)
    if "act" not in params and "variant" in params:
        params["act"] = _word(lang, "variants").get(params["variant"], params["variant"])
    if "letters" not in params and "lost" in params:
        params["letters"] = letters_words(int(params["lost"]), lang.code)
    if "letter" not in params and "lost" in params:
        letters: list[str] = _word(lang, "letters")
        params["letter"] = letters[max(0, min(int(params["lost"]), len(letters)) - 1)]
    if isinstance(params.get("seats"), list | tuple):
        params["seats"] = list_words(list(params["seats"]), lang.code)
    if "number" not in params and "n" in params:
        params["number"] = number_words(int(params["n"]), lang.code)
    if "cards_said" not in params and "cards" in params:
        one, many = _word(lang, "card_count")
        params["cards_said"] = (one if int(params["cards"]) == 1 else many).format(n=params["cards"])
    if "aside" not in params and "aside_cards" in params:
        aside = int(params["aside_cards"])
        params["aside"] = text("deal_aside", {"cards": aside}, lang.code) if aside else ""
    if "question" not in params and "need" in params:
        params["question"] = question_text(params["need"], params.get("asks") or (), lang.code)
    if "rank" not in params and "rank_index" in params:
        ranks: list[str] = _word(lang, "ranks")
        i = int(params["rank_index"])
        params["rank"] = ranks[i] if 0 <= i < len(ranks) else str(i + 1)
    return params


# ------------------------------------------------------------------------------------------------
# Building parameters


def number_words(n: int, language: str = "en") -> str:
    """Small numbers spelled out ("two"), larger ones as digits (the voice reads them)."""
    names: list[str] = _word(LANGUAGES.get(language, LANGUAGES["en"]), "numbers")
    return names[n] if 0 <= n < len(names) else str(n)


def count_words(
    n: int, unit: str = "whammies", language: str = "en", *, capital: bool = True,
    words: Sequence[str] | None = None,
) -> str:
    """ "One whammy", "Two whammies", "One off the whammy pile" (n < 0); a unit the table has
    no words for is said with `words` (the game's one and many) or its own name."""
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    units: Mapping[str, tuple[str, str, str]] = _word(lang, "units")
    one_word, many_word = (words[0], words[1]) if words else (unit, unit)
    one, many, back = units.get(unit, ("{n} " + one_word, "{n} " + many_word,
                                       "{n} " + one_word + " back"))
    form = back if n < 0 else (one if abs(n) == 1 else many)
    said = form.format(n=number_words(abs(n), lang.code))
    return said[:1].upper() + said[1:] if capital else said


def list_words(names: Sequence[str], language: str = "en") -> str:
    """ "Blue", "Blue and Red", "Blue, Red and Green"."""
    conj = _word(LANGUAGES.get(language, LANGUAGES["en"]), "and")
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {conj} {names[-1]}"


def letters_words(lost: int, language: str = "en") -> str:
    """Lives lost as the letters of P-I-G: 1 → "P", 2 → "P, I", 3 → "P, I, G"."""
    letters: list[str] = _word(LANGUAGES.get(language, LANGUAGES["en"]), "letters")
    return ", ".join(letters[: max(0, min(lost, len(letters)))])


def ranks_words(sets: int, language: str = "en") -> str:
    """The ranks to deal for `sets` players: "aces, twos and threes"."""
    ranks: list[str] = _word(LANGUAGES.get(language, LANGUAGES["en"]), "ranks")
    return list_words(ranks[:sets], language)


def question_text(need: Sequence[str], asks: Sequence[str] = (), language: str = "en") -> str:
    """What the judge is asked, one sentence per fact ("Pig or no pig? Double or no double?"):
    the voice says it after "Judge:" and the pages show it, from this one place. A fact with no
    phrase of its own is asked in its game's words (`asks`), else by its name."""
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    said = []
    for i, fact in enumerate(need):
        if f"judge_{fact}" in lang.phrases or f"judge_{fact}" in ENGLISH:
            q = text(f"judge_{fact}", None, lang.code)
        else:
            q = asks[i] if i < len(asks) else f"{fact}?"
        said.append(q[:1].upper() + q[1:])
    return " ".join(said)


def ruling_phrase(
    ruling: Ruling,
    unit: str = "whammies",
    language: str = "en",
    unit_words: Sequence[str] | None = None,
    *,
    never: tuple[str, ...] = (),
    pressed: str = "pressed",
) -> tuple[str, dict[str, Any]]:
    """The phrase key and parameters that announce one ruling: its reason's phrase key ("ruling":
    the seat, what it did and its count). `never`: the seats of the race that never pressed; a
    ruling on one of them says so instead of a margin to the window's end ("Yellow never
    slapped: last to spank the pig"), and a photo finish between them names them ("Red and
    Yellow never slapped: too close to call"). `pressed`: what they did not do ("slapped")."""
    key = ruling.reason.phrase
    if key == "too_close" and ruling.margin_us == 0 and len(never) >= 2:
        return "too_close_never", {"seats": list(never), "pressed": pressed}
    if key != "ruling":
        return key, {"reason": ruling.text}
    if ruling.seat is None:
        return "nobody", {}
    reason = ruling.text
    key = "ruling"
    if ruling.seat in never:
        what = text("what_never", {"pressed": pressed, "reason": reason}, language)
        key = "ruling_never"
    elif ruling.margin_us is not None:
        what = text("what_margin", {"reason": reason, "margin_us": ruling.margin_us}, language)
    else:
        what = _word(LANGUAGES.get(language, LANGUAGES["en"]), "reasons").get(reason, reason)
    params: dict[str, Any] = {
        "seat": ruling.seat, "what": what,
        "count_words": count_words(ruling.delta, unit, language, words=unit_words)}
    if key == "ruling" and ruling.margin_us is not None:  # said in pieces: see `segments`
        params.update(reason=reason, margin_us=ruling.margin_us)
    return key, params


def ruling_shown(key: str, params: dict[str, Any], language: str = "en") -> dict[str, str]:
    """A ruling as the pages show it, in the words it is said with: `said`, the whole sentence;
    `what`, the part beside the seat's name and count ("last to spank the pig by 42
    milliseconds"), or the whole sentence when no seat is named."""
    said = text(key, params, language)
    return {"said": said, "what": str(params["what"]) if "what" in params else said}


def correction_changes(before: Sequence[Ruling], after: Sequence[Ruling], unit: str = "whammies",
                       language: str = "en", unit_words: Sequence[str] | None = None) -> str:
    """What a correction changed, seat by seat, as a referee says it: "Dev sheds one whammy;
    Ben takes one whammy" (each seat's total for the round, before and after); "" if nothing."""
    lang = LANGUAGES.get(language, LANGUAGES["en"])
    totals: dict[str, int] = {}
    order: list[str] = []
    for sign, rulings in ((-1, before), (1, after)):
        for r in rulings:
            if r.seat is not None:
                if r.seat not in totals:
                    order.append(r.seat)
                totals[r.seat] = totals.get(r.seat, 0) + sign * r.delta
    verbs: Mapping[str, tuple[str, str]] = _word(lang, "changes")
    gain, lose = verbs.get(unit, ("takes {count}", "gives {count} back"))
    parts = []
    for seat in order:
        n = totals[seat]
        if n:
            count = count_words(abs(n), unit, language, capital=False, words=unit_words)
            parts.append(f"{seat} " + (gain if n > 0 else lose).format(count=count))
    return "; ".join(parts)


def margin_words(margin_ms: int) -> list[str]:
    """How a margin is said, as pieces that can all be rendered before the game: under 100 ms
    one piece per number ("by 42 milliseconds."), up to a second hundreds and the rest ("by 4
    hundred", "and 23 milliseconds."), beyond that seconds to a tenth ("by 1.2 seconds.").
    About 300 pieces cover every margin, so no ruling waits for the speech engine."""
    m = max(0, int(margin_ms))
    if m < 100:
        return [f"by {m} milliseconds."]
    if m < 1000:
        hundreds, rest = divmod(m, 100)
        if rest == 0:
            return [f"by {hundreds} hundred milliseconds."]
        return [f"by {hundreds} hundred", f"and {rest} milliseconds."]
    seconds = round(m / 1000, 1)
    return [f"by {seconds:g} seconds." if seconds < 10 else f"by {round(seconds)} seconds."]


def segments(key: str, params: dict[str, Any] | None = None, language: str = "en") -> list[str]:
    """A phrase as the clips it is said from. A ruling with a margin is said in pieces (who and
    why, the margin, the count), each of which is rendered ahead of time (`prerender_texts`);
    every other phrase is one clip. English only: other languages say the whole sentence."""
    params = dict(params or {})
    if key != "ruling" or language != "en" or "margin_us" not in params and "margin_ms" not in params:
        return [text(key, params, language)]
    params = _complete(params, get_language(language))
    return [f"{params['seat']}: {params['reason']}", *margin_words(int(params["margin_ms"])),
            f"{params['count_words']}."]


def prerender_texts(seats: Sequence[str], language: str = "en",
                    reasons: Sequence[str] = ()) -> list[str]:
    """The ruling pieces a table may need: every margin piece, every count of every unit, and
    "seat: reason" for the reasons a game declares. Rendered in the background at start."""
    if language != "en":
        return []
    lang = get_language(language)
    out: list[str] = []
    for m in [*range(0, 100), *range(100, 1000, 100), *range(101, 200), *range(1000, 10_000, 100)]:
        out += margin_words(m)
    out += [f"by {h} hundred" for h in range(2, 10)]
    for unit in _word(lang, "units"):
        out += [f"{count_words(n, unit, language)}." for n in (*range(1, 13), -1, -2, -3)]
    out += [f"{seat}: {reason}" for seat in seats for reason in reasons]
    return list(dict.fromkeys(out))


def standings_text(rows: Iterable[tuple[str, int]], unit: str = "whammies",
                   language: str = "en", *, words: Sequence[str] | None = None) -> str:
    """ "Blue, one whammy. Red, two whammies." for (seat, score) rows in place order."""
    return " ".join(
        text("standing_row", {"seat": seat, "count_words": count_words(
            score, unit, language, capital=False, words=words)}, language)
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


def table_lines(seats: Sequence[str], language: str = "en",
                said: Sequence[tuple[str, dict[str, Any]]] = ()) -> list[Line]:
    """Every phrase a table with these seats can say that is known before play (all games), and
    the phrases `said` that a game knows it will say (dealing...).

    Cadences are listed beat by beat (each beat is its own clip). Rulings carry a margin: they
    are rendered when said.
    """
    lang = get_language(language)
    lines: list[Line] = []

    def add(name: str, key: str, params: dict[str, Any] | None = None) -> None:
        for i, beat in enumerate(words(key, params, lang.code), start=1):
            beats = len(lang.phrases.get(key) or ENGLISH[key])
            lines.append(Line(f"{name}.{i}" if beats > 1 else name, beat))

    for call in CALLS:
        if names_a_seat(call):
            for seat in seats:
                add(f"{call}.{slug(seat)}", call, {"seat": seat})
        else:
            add(call, call)
    for key in ("too_close", "nobody", "practice", "practice_over", "deal_ring",
                "last_round", "paused", "storage_full", "quiet_table", "ready",
                "count_in", "nothing_to_undo"):
        add(key, key)
    for key in ENGLISH:  # one fact asked (a game's facts asked together come in `said`)
        if key.startswith("judge_"):
            need = key.removeprefix("judge_")
            add(f"awaiting.{slug(need)}", "awaiting", {"need": [need]})
    for variant, act in _word(lang, "variants").items():
        add(f"variant_rule.{variant}", "variant_rule", {"act": act})
    n = len(seats)
    add("deal_sets", "deal_sets", {"ranks": ranks_words(n, lang.code)})
    for i, (key, params) in enumerate(said):
        add(f"{slug(key)}.{i}", key, params)
    for seat in seats:
        s = slug(seat)
        for button in _word(lang, "buttons").values():
            add(f"button_check.{s}.{button}", "button_check", {"seat": seat, "button": button})
            add(f"button_ask.{s}.{button}", "button_ask", {"seat": seat, "button": button})
        for lost in (1, 2, 3):
            add(f"lives.{s}.{lost}", "lives", {"seat": seat, "lost": lost})
        add(f"eliminated.{s}", "eliminated", {"seat": seat})
        add(f"champion.{s}", "champion", {"seats": seat, "verb": _word(lang, "verb_one")})
    unique: dict[str, Line] = {}
    for line in lines:
        unique.setdefault(line.text, line)
    return list(unique.values())
