"""What the pages and the terminal show: a read model of the table, built from the rules and what
the engine knows of the moment (`Moment`), apart from the engine that decides.

The engine hands `present` a `Moment` on its own thread each time the table changes; the words
are the voice's (the game's `Phrasebook`), so a page shows a ruling exactly as it is said.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.events import Awaiting, Ruling
from referee.rules.base import Rules
from referee.rules.declare import Fact
from referee.rules.lingo import words_of
from referee.voice.phrases import (
    Phrasebook,
    count_words,
    question_text,
    ruling_phrase,
    ruling_shown,
)


@dataclass(frozen=True)
class Moment:
    """What only the engine knows of the table now (the rules know the rest)."""

    game_id: int
    practice: bool
    phase: str  # as the API says it: setup, ready, count-in, cadence, race, ...
    round: int  # the round shown (a silent race: the latest ruled one)
    turn: str | None  # the seat whose turn it is, if calls name one
    ready: tuple[str, ...]
    final: dict[str, Any] | None  # the standings as the judge ended the game, if so
    said: str
    cue_word: str
    call: str
    stuck: tuple[str, ...]
    storage_full: str


def ruling_words(rules: Rules, book: Phrasebook, r: Ruling) -> tuple[str, dict[str, Any]]:
    """The phrase that says ruling `r` (and the pages show): seats that never pressed said so."""
    never: tuple[str, ...] = ()
    button, pressed = rules.NEVER.get(r.reason, ("slap", rules.PRESSED))
    raced = dict(r.words).get("button")  # a photo finish names its race's button
    if raced is not None and raced != button:
        button, pressed = raced, next(
            (p for b, p in rules.NEVER.values() if b == raced), rules.PRESSED)
    if r.seat is None or r.reason in rules.NEVER:
        pressers = rules.pressers(r.round, button)
        never = tuple(s for s in rules.racing(r.round) if s not in pressers)
    return ruling_phrase(r, book, never=never, pressed=pressed, plain_zero=not rules.ZERO_SAID)


def said_rulings(rules: Rules, book: Phrasebook,
                 rulings: Sequence[Ruling]) -> list[tuple[str, dict[str, Any]]]:
    """The phrases that say `rulings`, in order; seats that never pressed and each take the same
    for it are said in one sentence ("Ann and Bob never pressed. One point each.")."""
    out: list[tuple[str, dict[str, Any]]] = []
    i = 0
    while i < len(rulings):
        r = rulings[i]
        j = i + 1
        if r.seat is not None and r.reason in rules.NEVER:
            button, pressed = rules.NEVER[r.reason]
            never = set(rules.racing(r.round)) - rules.pressers(r.round, button)
            while j < len(rulings) and r.seat in never and rulings[j].seat in never and (
                    rulings[j].round, rulings[j].reason, rulings[j].delta) == (
                    r.round, r.reason, r.delta):
                j += 1
            if j - i >= 2:
                out.append(("never_each", {
                    "seats": [o.seat for o in rulings[i:j]], "pressed": pressed,
                    "count_words": count_words(r.delta, book)}))
                i = j
                continue
        out.append(ruling_words(rules, book, r))
        i += 1
    return out


def shown(rules: Rules, book: Phrasebook,
          outputs: Sequence[Ruling | Awaiting]) -> list[dict[str, str]]:
    """What the pages show for each ruling line, in the words the referee says it: the sentence
    (`said`) and the part beside the seat (`what`); for a question, `question`. Beside the ruling
    lines, which keep the table log's shape."""
    facts = {f.name: f for f in rules.facts()}
    out: list[dict[str, str]] = []
    for o in outputs:
        if isinstance(o, Ruling):
            out.append(ruling_shown(*ruling_words(rules, book, o), book=book))
        else:
            out.append({"question": question_text(
                o.need, [facts[n].question if n in facts else f"{n}?" for n in o.need],
                book=book)})
    return out


def fact_json(fact: Fact, book: Phrasebook) -> dict[str, Any]:
    """A fact as the judge panel builds its buttons from it, in the table's language."""
    out = fact.to_json()
    for key in ("label", "question", "ask", "what"):
        out[key] = book.text(out[key])
    out["answers"] = [book.text(a) for a in out["answers"]]
    out["choices"] = [[value, book.text(label)] for value, label in out["choices"]]
    return out


def translated(said: dict[str, Any], rules: Rules, book: Phrasebook) -> dict[str, Any]:
    """The game's own words for the pages (`Rules.words`) in the table's language: its title,
    unit, pressed word, penalty reasons, a variant's act; seats' letters stay as they are."""
    if book.language == "en":
        return said
    game = words_of(type(rules), book.language)
    out = dict(said)
    out["title"] = book.text(said["title"]) if said.get("title") != rules.TITLE else game.title
    if list(said.get("unit", [])) == list(rules.UNIT_WORDS):
        out["unit"] = list(game.unit_words)
    else:
        out["unit"] = [book.text(u) for u in said.get("unit", [])]
    for key in ("pressed", "thing", "act", "next"):
        if isinstance(said.get(key), str):
            out[key] = book.text(said[key])
    out["penalties"] = [book.text(p) for p in said.get("penalties", [])]
    if isinstance(said.get("stacks"), dict) and "labels" in said["stacks"]:
        out["stacks"] = {**said["stacks"],
                         "labels": [book.text(label) for label in said["stacks"]["labels"]]}
    return out


def _rulings(rules: Rules, number: int) -> list[Ruling]:
    return [o for o in rules.round_outputs(number) if isinstance(o, Ruling)] if number else []


def present(rules: Rules, book: Phrasebook, m: Moment) -> dict[str, Any]:
    """The table as `GET /api/state` gives it (the API's `State`)."""
    status = rules.status()
    st = rules.standings()
    final = m.final
    latest = m.round
    rulings = _rulings(rules, latest)
    return {
        "game": rules.NAME,
        "title": words_of(type(rules), book.language).title,
        "game_id": m.game_id,
        "practice": m.practice,
        "phase": m.phase,
        "round": latest,
        "rounds": rules.planned_rounds(),
        "unit": rules.UNIT,
        "seats": final["seats"] if final else [r.to_json() for r in st.seats],
        "seat_order": list(rules.seats),
        "ready": list(m.ready),
        "rulings": [o.to_json() for o in rulings],
        # the judge ended the game while this round raced: it was never ruled (not "clean")
        "cut_by_end": bool(final) and bool(latest) and status.race_open,
        "rulings_said": shown(rules, book, rulings),
        "reactions_us": rules.reactions(latest) if latest else {},
        "early_us": rules.early(latest) if latest else {},  # slaps before the go-word
        "late_us": rules.late(latest) if latest else {},  # after the ruling: change nothing
        "racing": list(rules.racing(latest)) if latest else list(rules.seats),
        "turn": m.turn,
        "awaiting": status.awaiting.to_json() if status.awaiting else None,
        "question": (shown(rules, book, [status.awaiting])[0]["question"]
                     if status.awaiting else None),
        "final": bool(final["final"]) if final else st.final,
        "winners": list(final["winners"]) if final else list(st.winners),
        "options": dict(rules.options),
        "said": m.said,
        "cue_word": m.cue_word,
        "call": m.call,
        "stuck": list(m.stuck),
        "storage_full": m.storage_full,
        "words": translated(rules.words({r.seat: r.score for r in st.seats}), rules, book),
        "facts": [f.name for f in rules.panel_facts()],  # what the judge panel offers
        "fact_info": {f.name: fact_json(f, book) for f in rules.facts()},
        "quiet": rules.schedule().silent,
        "buttons": list(rules.race_buttons),
        "earlier": [  # the rounds before, so a page opened mid-game shows them too
            {"round": n, "rulings": [o.to_json() for o in _rulings(rules, n)],
             "rulings_said": shown(rules, book, _rulings(rules, n))}
            for n in range(max(1, latest - 5), latest)],
    }
