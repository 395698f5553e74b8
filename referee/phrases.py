"""Every word the referee says, in one table per language (English first).

A phrase key maps to a list of *beats*: a cadence is spoken beat by beat (`tempo_ms` apart, the last
beat is the go-word); any other phrase is one beat. Parameters are filled with `str.format`.
"""

from __future__ import annotations

from typing import Any

ENGLISH: dict[str, list[str]] = {
    # cadences (the last beat is the go-word)
    "spank": ["Spank", "the", "PIG!"],
    "turn": ["{seat},", "flip!"],
    "pass": ["Pass!"],
    # rulings
    "ruling": ["{seat}: {reason} by {margin_ms} milliseconds. {count_words}."],
    "ruling_plain": ["{seat}: {reason}. {count_words}."],
    "too_close": ["Too close to call."],
    "nobody": ["Clean round."],
    "correction": ["Correction, round {round}: {text}"],
    # the judge
    "awaiting": ["Judge: {question}"],
    "judge_pigs": ["pig or no pig?"],
    "judge_doubles": ["double or no double?"],
    "judge_match": ["match or no match?"],
    "judge_claim": ["was that four of a kind?"],
    # game flow
    "deal": ["Deal {cards} cards to each player. {aside}"],
    "rounds_left": ["{rounds} rounds to go."],
    "last_round": ["Last round!"],
    "sudden_death": ["Sudden death: {seats}."],
    "standings": ["{text}"],
    "champion": ["{seats} {verb} the champion!"],
    "game_over": ["Game over. {text}"],
    "paused": ["Paused."],
    "resumed": ["Play on."],
    "stuck": ["{seat}'s {button} button is stuck."],
}

LANGUAGES: dict[str, dict[str, list[str]]] = {"en": ENGLISH}


def words(key: str, params: dict[str, Any] | None = None, language: str = "en") -> list[str]:
    """The beats of phrase `key` with `params` filled in."""
    table = LANGUAGES.get(language, ENGLISH)
    beats = table.get(key) or ENGLISH[key]
    return [beat.format(**(params or {})) for beat in beats]


def text(key: str, params: dict[str, Any] | None = None, language: str = "en") -> str:
    return " ".join(words(key, params, language))
