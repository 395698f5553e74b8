"""The phrase table: what the referee says, word for word, and what a table must have rendered."""

from __future__ import annotations

import re

import pytest

from referee.events import Ruling
from referee.voice import phrases
from referee.voice.phrases import (
    ENGLISH,
    LANGUAGES,
    Language,
    count_words,
    letters_words,
    list_words,
    ruling_phrase,
    standings_text,
    table_lines,
    text,
    words,
)

SEATS = ["Blue", "Red", "Green", "Yellow", "Purple", "Orange", "Pink", "Teal"]


def test_cadences_are_beats_with_the_go_word_last() -> None:
    assert words("spank", {}) == ["Spank", "the", "PIG!"]
    assert words("turn", {"seat": "Blue"}) == ["Blue,", "flip!"]
    assert words("pass", {}) == ["Pass!"]


def test_a_ruling_reads_with_the_margin_in_milliseconds() -> None:
    params = {"seat": "Blue", "reason": "last to spank the pig", "margin_ms": 42,
              "count_words": "One whammy"}
    assert text("ruling", params) == "Blue: last to spank the pig by 42 milliseconds. One whammy."


def test_ruling_phrase_from_a_ruling() -> None:
    r = Ruling(1, "Blue", 1, "last to spank the pig", 42_400)
    key, params = ruling_phrase(r.seat, r.reason, r.delta, r.margin_us)
    assert text(key, params) == "Blue: last to spank the pig by 42 milliseconds. One whammy."
    key, params = ruling_phrase("Red", "slapped the hippo", 2, None)
    assert text(key, params) == "Red: slapped the hippo. Two whammies."
    key, params = ruling_phrase("Red", "first to the pigs", -1, 3000)
    assert text(key, params) == "Red: first to the pigs by 3 milliseconds. One off the whammy pile."
    assert text(*ruling_phrase(None, "too close to call", 0, 400)) == "Too close to call."
    assert text(*ruling_phrase(None, "no pig", 0)) == "Clean round."


def test_parameters_are_completed_from_raw_values() -> None:
    said = text("ruling", {"seat": "Blue", "reason": "last to tap", "margin_us": 41_600,
                           "count": 3, "unit": "cards"})
    assert said == "Blue: last to tap by 42 milliseconds. Three cards."


def test_count_list_letters_and_standings_words() -> None:
    assert count_words(1) == "One whammy"
    assert count_words(13) == "13 whammies"
    assert count_words(2, "lives") == "Two lives lost"
    assert count_words(0, capital=False) == "zero whammies"
    assert list_words(["Blue"]) == "Blue"
    assert list_words(["Blue", "Red", "Green"]) == "Blue, Red and Green"
    assert [letters_words(n) for n in (1, 2, 3)] == ["P", "P, I", "P, I, G"]
    assert standings_text([("Red", 1), ("Blue", 2)]) == "Red, one whammy. Blue, two whammies."


def test_every_phrase_of_an_eight_seat_table_is_listed_once() -> None:
    lines = table_lines(SEATS)
    said = [line.text for line in lines]
    assert len(said) == len(set(said))
    assert len({line.name for line in lines}) == len(lines)
    assert all(re.fullmatch(r"[a-z0-9._-]+", line.name) for line in lines)
    assert all(s and "{" not in s for s in said)
    for beat in ("Spank", "the", "PIG!", "Pass!", "flip!", *(f"{s}," for s in SEATS)):
        assert beat in said
    for expected in ("Too close to call.", "Last round!", "Judge: pig or no pig?",
                     "Judge: match or no match?", "Deal 9 cards to each player.",
                     "Four of a kind? Quietly grab a spoon.", "Teal: P, I, G.",
                     "Blue: last to spank the pig by 42 milliseconds. One whammy."):
        assert expected in said


def test_deal_sets_aside_the_remainder() -> None:
    said = [line.text for line in table_lines(["A", "B", "C", "D", "E"])]
    assert "Deal 14 cards to each player. Set 2 cards aside." in said
    assert ("Use the aces, twos, threes, fours and fives: one set of four per player. "
            "Deal four cards to each player.") in said


def test_a_translation_falls_back_to_english_per_key(monkeypatch: pytest.MonkeyPatch) -> None:
    pirate = Language("xx", "en", {"spank": ["Arr", "the", "HOG!"]}, {"and": "an'"})
    monkeypatch.setitem(LANGUAGES, "xx", pirate)
    assert words("spank", {}, "xx") == ["Arr", "the", "HOG!"]
    assert words("pass", {}, "xx") == ENGLISH["pass"]
    assert list_words(["Blue", "Red"], "xx") == "Blue an' Red"
    assert count_words(2, "whammies", "xx") == "Two whammies"  # words not translated: English


def test_an_unknown_language_is_named() -> None:
    with pytest.raises(ValueError, match="'tlh'.*known: en"):
        phrases.get_language("tlh")
