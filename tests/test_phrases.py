"""The phrase table: what the referee says, word for word, and what a table must have rendered."""

from __future__ import annotations

import re

import pytest

from referee.engine.loop import phrasebook
from referee.events import Ruling
from referee.rules.base import Shared
from referee.rules.pig import Pig
from referee.rules.pig import Why as PigWhy
from referee.rules.pigstail import PigsTail
from referee.rules.registry import games
from referee.rules.spank import SpankThePig, Why
from referee.voice import phrases
from referee.voice.phrases import (
    ENGLISH,
    LANGUAGES,
    Language,
    count_words,
    list_words,
    ruling_phrase,
    standings_text,
    table_lines,
    text,
    words,
)
from tests.made_up_game import FirstAfterTheBeep

SEATS = ["Blue", "Red", "Green", "Yellow", "Purple", "Orange", "Pink", "Teal"]
SPANK, PIG, TAIL = phrasebook(SpankThePig), phrasebook(Pig), phrasebook(PigsTail)
BEEP = phrasebook(FirstAfterTheBeep)


def test_cadences_are_beats_with_the_go_word_last() -> None:
    assert words("spank", {}, book=SPANK) == ["Spank", "the", "PIG!"]
    assert words("turn", {"seat": "Blue"}, book=TAIL) == ["Blue,", "flip!"]
    assert words("pass", {}, book=PIG) == ["Pass!"]


def test_a_ruling_reads_with_the_margin_in_milliseconds() -> None:
    params = {"seat": "Blue", "reason": "last to spank the pig", "margin_ms": 42,
              "count_words": "One whammy"}
    assert text("ruling", params) == "Blue: last to spank the pig by 42 milliseconds. One whammy."


def test_ruling_phrase_from_a_ruling() -> None:
    r = Ruling(1, "Blue", 1, Why.LAST_TO_THE_PIG, 42_400)
    assert text(*ruling_phrase(r, SPANK)) == (
        "Blue: last to spank the pig by 42 milliseconds. One whammy.")
    penalty = Ruling(1, "Red", 2, Shared.PENALTY, None, (("said", "slapped the hippo"),))
    assert text(*ruling_phrase(penalty, SPANK)) == "Red: slapped the hippo. Two whammies."
    shed = Ruling(1, "Red", -1, Why.FIRST_TO_A_PIG, 3000)
    assert text(*ruling_phrase(shed, SPANK)) == (
        "Red: first to spank a pig by 3 milliseconds. One off the whammy pile.")
    assert text(*ruling_phrase(Ruling(1, None, 0, Shared.TOO_CLOSE, 400))) == "Too close to call."
    # the reason's own phrase key says it: an unclear race is not a clean round
    unclear = Ruling(1, None, 0, PigWhy.UNCLEAR, None, (("n", "2"), ("act", "grab a spoon")))
    assert unclear.text == "unclear: 2 did not grab a spoon"  # the log's words
    assert text(*ruling_phrase(unclear, PIG)) == "Unclear: two did not grab a spoon. Nobody loses."
    # a unit the voice has no words for is said in the game's own words
    point = ruling_phrase(Ruling(1, "Blue", 2, Why.LAST_TO_THE_PIG), BEEP)
    assert text(*point) == "Blue: last to spank the pig. Two points."


def test_a_reason_with_a_count_is_a_sentence() -> None:
    """Issue 22: "Unclear: 3 did not touch the nose: nobody loses." (the log's digit, two
    colons)."""
    unclear = Ruling(4, None, 0, PigWhy.UNCLEAR, None, (("n", "3"), ("act", "touch the nose")))
    assert text(*ruling_phrase(unclear, PIG)) == (
        "Unclear: three did not touch the nose. Nobody loses.")


@pytest.mark.parametrize(("book", "deltas", "said"), [
    # Pig: "Blue loses one life lost", "gets one life lost back" (the unit's words twice)
    (PIG, (1, -1, 2), ["One life lost", "One life back", "Two lives lost"]),
    (SPANK, (1, -1, 2, -2), ["One whammy", "One off the whammy pile", "Two whammies",
                             "Two off the whammy pile"]),
    (TAIL, (3, -1, 0), ["Three cards", "One card back", "Zero cards"]),
    (BEEP, (1, -1, 0), ["One point", "One point lost", "Zero points"]),  # more wins
])
def test_a_count_is_said_as_a_loss_or_a_gain_in_the_game_s_own_words(
        book: phrases.Phrasebook, deltas: tuple[int, ...], said: list[str]) -> None:
    assert [count_words(d, book) for d in deltas] == said


def test_a_correction_says_each_change_once_in_the_game_s_words() -> None:
    """Issue 22: "Blue loses one life lost", "gets one life lost back", and "sheds" said for an
    undo: a correction says each seat's change in the game's loss and gain words."""
    lost = Ruling(2, "Blue", 1, PigWhy.LAST)
    assert phrases.correction_changes([lost], [], PIG) == "Blue, one life back"
    assert phrases.correction_changes([], [lost], PIG) == "Blue, one life lost"
    penalty = Ruling(1, "Red", 1, Shared.PENALTY, None, (("said", "slapped the hippo"),))
    undone = phrases.correction_changes([penalty], [], SPANK)
    assert undone == "Red, one off the whammy pile" and "sheds" not in undone
    assert phrases.correction_changes([penalty], [penalty], SPANK) == ""


def test_every_reason_of_every_game_has_a_phrase_to_be_said_with() -> None:
    for cls in games().values():
        for reasons in cls.reasons():
            for reason in reasons:
                assert reason.phrase in ENGLISH or reason.phrase in cls.PHRASES, (cls.NAME, reason)


def test_parameters_are_completed_from_raw_values() -> None:
    said = text("ruling", {"seat": "Blue", "reason": "last to tap", "margin_us": 41_600,
                           "count": 3}, book=TAIL)
    assert said == "Blue: last to tap by 42 milliseconds. Three cards."


def test_count_list_and_standings_words() -> None:
    assert count_words(1, SPANK) == "One whammy"
    assert count_words(13, SPANK) == "13 whammies"
    assert count_words(2, PIG) == "Two lives lost"
    assert count_words(0, SPANK, capital=False) == "zero whammies"
    assert list_words(["Blue"]) == "Blue"
    assert list_words(["Blue", "Red", "Green"]) == "Blue, Red and Green"
    assert standings_text([("Red", 1), ("Blue", 2)], SPANK) == (
        "Red, one whammy. Blue, two whammies.")
    assert standings_text([("Red", 0), ("Blue", 2)], PIG) == (
        "Red, zero lives lost. Blue, two lives lost.")
    assert standings_text([("Ann", 2), ("Bob", 1)], BEEP) == "Ann, two points. Bob, one point."


def test_names_given_as_a_list_are_said_as_a_list() -> None:
    """Issue 22: "Ann and Bob and Cy are co-champions!" (the names joined with "and")."""
    assert text("co_champions", {"seats": ["Ann", "Bob", "Cy"]}) == (
        "Ann, Bob and Cy are co-champions!")
    assert text("co_champions", {"seats": ["Ann", "Bob"]}) == "Ann and Bob are co-champions!"
    assert text("sudden_death", {"seats": ["Ann", "Bob", "Cy"]}) == "Sudden death: Ann, Bob and Cy."


@pytest.mark.parametrize(("ms", "said"), [
    (0, "0 milliseconds"), (1, "1 millisecond"), (2, "2 milliseconds"),
    (201, "201 milliseconds"), (999, "999 milliseconds"),
    (1000, "1 second"), (1004, "1 second"), (1005, "1.01 seconds"), (1020, "1.02 seconds"),
    (1049, "1.05 seconds"), (1500, "1.5 seconds"), (9994, "9.99 seconds"),
    (9995, "10 seconds"), (12_400, "12 seconds"),
])
def test_a_margin_is_said_with_its_unit_in_the_singular_or_plural(ms: int, said: str) -> None:
    """Issue 22: "by 1 seconds" for every margin from 1000 to 1049 ms. From a second on, a
    margin is said in seconds to the hundredth (half up, trailing zeros dropped)."""
    assert phrases.margin_text(ms) == said
    r = Ruling(1, "Blue", 1, Why.LAST_TO_THE_PIG, ms * 1000)
    assert text(*ruling_phrase(r, SPANK)) == (
        f"Blue: last to spank the pig by {said}. One whammy.")


@pytest.mark.parametrize("ms", [0, 1, 2, 42, 100, 201, 342, 999, 1000, 1020, 1049, 1500, 9994,
                                12_400])
def test_every_margin_piece_is_rendered_ahead(ms: int) -> None:
    """The pieces of every margin are among those rendered at start, and say the margin."""
    pieces = phrases.margin_words(ms)
    assert set(pieces) <= set(phrases.prerender_texts([], book=SPANK)) or ms >= 10_000
    joined = " ".join(pieces).removesuffix(".")
    said = phrases.margin_text(ms)
    if "." in said:  # seconds to the hundredth: "1 point 0 5 seconds"
        whole, rest = said.split(" ")[0].split(".")
        assert joined == f"by {whole} point {' '.join(rest)} {said.split(' ')[1]}"
    elif 100 <= ms < 1000 and ms % 100:
        assert joined == f"by {ms // 100} hundred {ms % 100} milliseconds"  # as espeak says it
    else:
        assert joined == f"by {said}"


def test_every_phrase_of_an_eight_seat_table_is_listed_once() -> None:
    lines = table_lines(SEATS)
    said = [line.text for line in lines]
    assert len(said) == len(set(said))
    assert len({line.name for line in lines}) == len(lines)
    assert all(re.fullmatch(r"[a-z0-9._-]+", line.name) for line in lines)
    assert all(s and "{" not in s for s in said)
    assert all(s in said for s in ("Too close to call.", "Last round!", "Teal is the champion!"))
    assert not {"Spank", "PIG!", "Pass!", "flip!"} & set(said)  # no game learned: no game's words
    for book, beats in ((SPANK, ("Spank", "the", "PIG!")), (PIG, ("Pass!",)),
                        (TAIL, ("flip!", *(f"{s}," for s in SEATS)))):
        said = [line.text for line in table_lines(SEATS, book=book)]
        assert all(beat in said for beat in beats), (book.calls, said)
    pig = Pig(SEATS, {"lives": 3, "variant": "spoons"})
    said = [line.text for line in table_lines(SEATS, said=[*pig.announcements(1),
                                                           *pig.said_ahead()], book=PIG)]
    for expected in ("Four of a kind? Quietly grab a spoon.", "Teal takes the letter I.",
                     "Teal is out. Remove one set of four cards."):
        assert expected in said


def test_only_phrases_the_referee_says_are_in_the_table() -> None:
    gone = {"penalty", "undone", "void", "takes_pile", "false_start", "no_match", "first_card",
            "ring_empty", "judge_shout", "judge_claim", "welcome", "remove_set", "rounds_left"}
    assert not gone & set(ENGLISH)


def test_a_game_s_own_phrases_are_rendered_ahead_with_the_table() -> None:
    five = ("A", "B", "C", "D", "E")
    deal = SpankThePig(five, {"deck": 72}).announcements(1)
    said = [line.text for line in table_lines(five, said=deal, book=SPANK)]
    assert "Deal 14 cards to each player. Set 2 cards aside." in said
    assert [text(k, p, book=SPANK) for k, p in SpankThePig(five[:4]).announcements(1)] == [
        "Deal 18 cards to each player."]
    said = [line.text for line in table_lines(five, said=Pig(five).announcements(1), book=PIG)]
    assert ("Use the aces, twos, threes, fours and fives: one set of four per player. "
            "Deal four cards to each player.") in said


def test_one_card_dealt_or_set_aside_is_said_in_the_singular() -> None:
    """A standard 52-card deck at three seats leaves one card over; a deck of as many cards as
    seats deals one each. The words come from the game's own announcement."""
    from referee.rules.spank import SpankThePig

    three = SpankThePig(("Blue", "Red", "Green"), {"deck": 52})
    assert [text(k, p, book=SPANK) for k, p in three.announcements(1)] == [
        "Deal 17 cards to each player. Set 1 card aside."]
    two = SpankThePig(("Blue", "Red"), {"deck": 3})
    assert text(*two.announcements(1)[0], book=SPANK) == (
        "Deal 1 card to each player. Set 1 card aside.")
    five = SpankThePig(("A", "B", "C", "D", "E"), {"deck": 13})
    assert text(*five.announcements(1)[0], book=SPANK) == (
        "Deal 2 cards to each player. Set 3 cards aside.")


def test_a_translation_falls_back_to_english_per_key(monkeypatch: pytest.MonkeyPatch) -> None:
    pirate = Language("xx", "en", {"spank": ["Arr", "the", "HOG!"], "nobody": ["Arr."]},
                      {"and": "an'"})
    monkeypatch.setitem(LANGUAGES, "xx", pirate)
    assert words("spank", {}, "xx", book=SPANK) == ["Arr", "the", "HOG!"]  # a game's key too
    assert words("nobody", {}, "xx") == ["Arr."]
    assert words("pass", {}, "xx", book=PIG) == ["Pass!"]  # the game's own English
    assert words("paused", {}, "xx") == ENGLISH["paused"]  # the shared English
    assert list_words(["Blue", "Red"], "xx") == "Blue an' Red"
    assert count_words(2, SPANK, "xx") == "Two whammies"  # words not translated: English


def test_a_missing_phrase_or_filler_is_said_as_its_name_never_a_key_error() -> None:
    """A game's phrase the table was not handed, or a filler the game forgot, must not stop a
    live table (docs/games.md: it falls back)."""
    assert words("beep_rules", {}) == ["beep rules"]
    assert words("beep_rules", {}, book=BEEP) == ["rounds beeps. First to press wins."]
    assert words("beep_rules", {"rounds": 3}, book=BEEP) == ["3 beeps. First to press wins."]
    odd = phrases.Phrasebook({"odd": ["{0} and {x.y} and {"]})
    assert words("odd", {}, book=odd) and phrases.segments("odd", {}, book=odd)


def test_the_voice_holds_no_game_s_words() -> None:
    """Each game's phrases are its own: none of them is in the shared table, and the shared
    table says nothing only one game says."""
    for cls in games().values():
        assert not set(cls.PHRASES) & set(ENGLISH), cls.NAME
        assert set(cls.CALLS) <= set(cls.PHRASES), cls.NAME


def test_an_unknown_language_is_named() -> None:
    with pytest.raises(ValueError, match="'tlh'.*known: de, en, es"):
        phrases.get_language("tlh")
