"""The phrase table: what the referee says, word for word, and what a table must have rendered."""

from __future__ import annotations

import re

import pytest

from referee.events import Ruling
from referee.rules.base import Shared
from referee.rules.pig import Why as PigWhy
from referee.rules.registry import games
from referee.rules.spank import Why
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
    r = Ruling(1, "Blue", 1, Why.LAST_TO_THE_PIG, 42_400)
    assert text(*ruling_phrase(r)) == "Blue: last to spank the pig by 42 milliseconds. One whammy."
    penalty = Ruling(1, "Red", 2, Shared.PENALTY, None, (("said", "slapped the hippo"),))
    assert text(*ruling_phrase(penalty)) == "Red: slapped the hippo. Two whammies."
    shed = Ruling(1, "Red", -1, Why.FIRST_TO_A_PIG, 3000)
    assert text(*ruling_phrase(shed)) == (
        "Red: first to spank a pig by 3 milliseconds. One off the whammy pile.")
    assert text(*ruling_phrase(Ruling(1, None, 0, Shared.TOO_CLOSE, 400))) == "Too close to call."
    # the reason's own phrase key says it: an unclear race is not a clean round
    unclear = Ruling(1, None, 0, PigWhy.UNCLEAR, None, (("n", "2"), ("act", "grab a spoon")))
    assert unclear.text == "unclear: 2 did not grab a spoon"
    assert text(*ruling_phrase(unclear)) == "Unclear: 2 did not grab a spoon: nobody loses."
    # a unit the phrase table has no words for is said in the game's own words
    point = ruling_phrase(Ruling(1, "Blue", 2, Why.LAST_TO_THE_PIG), "points", "en",
                          ("point", "points"))
    assert text(*point) == "Blue: last to spank the pig. Two points."


def test_every_reason_of_every_game_has_a_phrase_to_be_said_with() -> None:
    for cls in games().values():
        for reasons in cls.reasons():
            for reason in reasons:
                assert reason.phrase in ENGLISH, (cls.NAME, reason)


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
    for expected in ("Too close to call.", "Last round!", "Judge: Pig or no pig?",
                     "Judge: Match or no match?", "Four of a kind? Quietly grab a spoon.",
                     "Teal takes the letter G."):
        assert expected in said


def test_only_phrases_the_referee_says_are_in_the_table() -> None:
    gone = {"penalty", "undone", "void", "takes_pile", "false_start", "no_match", "first_card",
            "ring_empty", "judge_shout", "judge_claim", "welcome", "remove_set", "rounds_left"}
    assert not gone & set(ENGLISH)


def test_a_game_s_own_phrases_are_rendered_ahead_with_the_table() -> None:
    deal = ("deal", {"cards": 14, "aside_cards": 2})
    said = [line.text for line in table_lines(["A", "B", "C", "D", "E"], said=[deal])]
    assert "Deal 14 cards to each player. Set 2 cards aside." in said
    assert text("deal", {"cards": 18, "aside_cards": 0}) == "Deal 18 cards to each player."
    assert ("Use the aces, twos, threes, fours and fives: one set of four per player. "
            "Deal four cards to each player.") in said


def test_one_card_dealt_or_set_aside_is_said_in_the_singular() -> None:
    """A standard 52-card deck at three seats leaves one card over; a deck of as many cards as
    seats deals one each. The words come from the game's own announcement."""
    from referee.rules.spank import SpankThePig

    three = SpankThePig(("Blue", "Red", "Green"), {"deck": 52})
    assert [text(k, p) for k, p in three.announcements(1)] == [
        "Deal 17 cards to each player. Set 1 card aside."]
    two = SpankThePig(("Blue", "Red"), {"deck": 3})
    assert text(*two.announcements(1)[0]) == "Deal 1 card to each player. Set 1 card aside."
    assert text("deal", {"cards": 2, "aside_cards": 3}) == (
        "Deal 2 cards to each player. Set 3 cards aside.")


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
