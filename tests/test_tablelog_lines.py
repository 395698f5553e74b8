"""The table log at its edges (issue 17): the line-size limit exactly at it and one character
over, blank lines and line numbers, the first line, facts lines, and what `export` writes."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest

from referee.events import Cue, Facts, GameStart, Penalty, Press, Undo
from referee.store.tablelog import (
    MAX_LINE,
    LogError,
    dumps,
    event_from_json,
    event_from_line,
    event_to_json,
    read_lines,
    replay,
)

GAME = {"type": "game", "game": "spank-the-pig", "seats": ["Blue", "Red"],
        "options": {"doubles": "off"}}


def padded(obj: dict[str, Any], size: int) -> str:
    """`obj` as one JSON line of exactly `size` characters (an extra field pads it)."""
    base = json.dumps({**obj, "note": ""})
    line = json.dumps({**obj, "note": "x" * (size - len(base))})
    assert len(line) == size
    return line


def test_max_line_is_64_kib() -> None:
    assert MAX_LINE == 65536


@pytest.mark.parametrize("size", [MAX_LINE - 1, MAX_LINE])
def test_a_line_up_to_the_limit_is_read(size: int) -> None:
    out = replay([json.dumps(GAME), json.dumps({"type": "cue", "t_us": 1_000_000}),
                  padded({"type": "press", "t_us": 1_100_000, "seat": "Blue"}, size),
                  json.dumps({"type": "press", "t_us": 1_200_000, "seat": "Red"})]).lines()
    assert out[0]["seat"] == "Red" and out[0]["reason"] == "last to spank the pig"


def test_a_line_one_character_over_the_limit_is_refused_by_its_number() -> None:
    line = padded({"type": "press", "t_us": 1_100_000, "seat": "Blue"}, MAX_LINE + 1)
    with pytest.raises(LogError) as info:
        replay([json.dumps(GAME), json.dumps({"type": "cue", "t_us": 1_000_000}), line])
    assert str(info.value) == "line 3: line is longer than 65536 characters"


def test_blank_lines_are_skipped_but_counted() -> None:
    lines = [json.dumps(GAME), "", "   ", "\t", json.dumps({"type": "cue", "t_us": 5}),
             json.dumps({"type": "press", "t_us": 6, "seat": "Mauve"})]
    assert [e.line for e in read_lines(lines[:5])] == [1, 5]
    with pytest.raises(LogError) as info:
        replay(lines)
    assert str(info.value) == "line 6: seat 'Mauve' is not at this table (Blue, Red)"


def test_an_empty_log_and_a_log_of_blank_lines_need_the_game_line() -> None:
    for lines in ([], ["", "  "]):
        with pytest.raises(LogError) as info:
            replay(lines)
        assert str(info.value) == "line 1: the log is empty; its first line must be the game line"


def test_the_first_line_must_be_the_game_line_and_is_named() -> None:
    with pytest.raises(LogError) as info:
        replay(["", json.dumps({"type": "cue", "t_us": 5}), json.dumps(GAME)])
    assert str(info.value).startswith("line 2: the first line must be the game line")


def test_a_bad_game_line_is_named() -> None:
    with pytest.raises(LogError) as info:
        replay([json.dumps({**GAME, "options": {"deck": 1}})])
    assert str(info.value).startswith("line 1: option deck=1")


def test_a_refused_line_later_in_the_log_is_named() -> None:
    with pytest.raises(LogError) as info:
        replay([json.dumps(GAME), json.dumps({"type": "cue", "t_us": 5}),
                json.dumps({"type": "undo"})])
    assert info.value.line == 3
    assert info.value.message == "undo: there is no judge action left to undo"


def test_overrides_replace_the_logs_options() -> None:
    lines = [json.dumps(GAME), json.dumps({"type": "cue", "t_us": 1_000_000}),
             json.dumps({"type": "press", "t_us": 1_100_000, "seat": "Blue"}),
             json.dumps({"type": "press", "t_us": 1_100_500, "seat": "Red"})]
    assert replay(lines).lines()[0]["reason"] == "too close to call"
    assert replay(lines, {"tie_us": 100}).lines()[0]["seat"] == "Red"


def test_replay_leaves_garbage_collection_as_it_found_it_even_on_a_bad_log() -> None:
    assert gc.isenabled()
    replay([json.dumps(GAME)])
    assert gc.isenabled()
    with pytest.raises(LogError):
        replay([json.dumps(GAME), "{"])
    assert gc.isenabled()
    gc.disable()
    try:
        replay([json.dumps(GAME)])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_line_nested_too_deeply_is_one_line() -> None:
    deep = '{"type": "press", "t_us": 5, "seat": "Red", "x": ' + "[" * 30_000 + "]" * 30_000 + "}"
    assert len(deep) < MAX_LINE
    with pytest.raises(LogError) as info:
        list(read_lines(["", deep]))
    assert str(info.value) == "line 2: nested too deeply to be a table-log line"


def test_a_facts_line_keeps_the_facts_and_drops_unknown_fields() -> None:
    event = event_from_line('{"type": "facts", "round": 2, "pigs": 1, "colour": "red"}')
    assert event == Facts(2, {"pigs": 1})
    assert event_from_json({"type": "facts", "round": 2, "pigs": 1, "colour": "red"}) == event
    with pytest.raises(ValueError, match="facts line names no facts"):
        event_from_line('{"type": "facts", "round": 2, "colour": "red"}')
    with pytest.raises(ValueError, match="facts line names no facts"):
        event_from_json({"type": "facts", "round": 2})


def test_a_facts_line_of_another_game_s_facts_is_named_against_the_log_s_game() -> None:
    """In a Pig's Tail log, Spank the Pig!'s `pigs` is no fact: the line is refused saying
    which game the log is and which facts it has, on the line itself and in a whole replay."""
    line = '{"type": "facts", "round": 1, "pigs": 1}'
    with pytest.raises(ValueError, match="^facts field 'pigs' is not used in pigs-tail; use "):
        event_from_line(line, "pigs-tail")
    assert event_from_line(line, "spank-the-pig") == Facts(1, {"pigs": 1})
    tail = {"type": "game", "game": "pigs-tail", "seats": ["Blue", "Red"], "options": {}}
    with pytest.raises(LogError, match="^line 3: facts field 'pigs' is not used in pigs-tail"):
        replay([json.dumps(tail), json.dumps({"type": "cue", "t_us": 1_000_000, "seat": "Blue"}),
                line])


@pytest.mark.parametrize(("obj", "message"), [
    ([1, 2], "each line must be a JSON object"),
    ({"t_us": 5}, "missing field 'type': add it, one of "),
    ({"type": "slap"}, "unknown type 'slap'; use "),
    ({"type": 7}, "unknown type 7; use "),
])
def test_refused_objects_say_why_in_one_line(obj: Any, message: str) -> None:
    for parse in (lambda: event_from_json(obj), lambda: event_from_line(json.dumps(obj))):
        with pytest.raises(ValueError) as info:
            parse()
        assert str(info.value).startswith(message)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("event", [
    GameStart("pig", ("Blue", "Red", "Green"), {"lives": 3}),
    Cue(5, "Blue"), Press(6, "Red", "double"), Facts(1, {"pigs": 2, "doubles": ["cow"]}),
    Penalty(1, "Red", 2, "slapped the cow"), Undo(),
])
def test_every_event_goes_out_and_comes_back_the_same(event: Any) -> None:
    obj = event_to_json(event)
    assert obj["type"] == {GameStart: "game", Cue: "cue", Press: "press", Facts: "facts",
                           Penalty: "penalty", Undo: "undo"}[type(event)]
    assert event_from_json(obj) == event
    assert event_from_line(dumps(obj)) == event


def test_facts_go_out_as_the_lines_own_fields() -> None:
    assert event_to_json(Facts(3, {"match": True})) == {"type": "facts", "round": 3, "match": True}


def test_dumps_writes_names_as_they_are_on_one_line() -> None:
    line = dumps({"type": "press", "t_us": 5, "seat": "Grün"})
    assert line == '{"type": "press", "t_us": 5, "seat": "Grün"}'


@pytest.mark.parametrize(("raw", "message"), [
    ("{", "not valid JSON: Input data was truncated"),
    ('{"type": "press", "t_us": "soon", "seat": "Red"}',
     "t_us must be a whole number ≥ 0, not 'soon'"),
    ('{"type": "press", "t_us": 5, "seat": "Red", "button": "nose"}',
     "button must be 'double' or 'slap', not 'nose'"),
    ("[1, 2]", "each line must be a JSON object"),
    ('{"t_us": 5}', "missing field 'type': add it, one of "),
])
def test_a_refused_line_says_what_is_wrong_with_the_value_given(raw: str, message: str) -> None:
    with pytest.raises(LogError) as info:
        list(read_lines([json.dumps(GAME), raw]))
    assert info.value.line == 2
    assert info.value.message.startswith(message)
    if not message.endswith(" "):
        assert info.value.message == message
    if raw.startswith("{\"type"):
        with pytest.raises(ValueError) as direct:
            event_from_json(json.loads(raw))
        assert str(direct.value) == message


def test_a_facts_line_with_no_facts_lists_the_facts_there_are() -> None:
    with pytest.raises(ValueError) as info:
        event_from_line('{"type": "facts", "round": 2, "colour": "red"}')
    message = str(info.value)
    assert message.startswith("facts line names no facts (")
    for fact in ("pigs", "doubles", "claim", "match", "void"):
        assert fact in message


def test_the_replay_keeps_the_rules_it_ruled_with() -> None:
    done = replay([json.dumps(GAME), json.dumps({"type": "cue", "t_us": 1_000_000})])
    assert done.rules.NAME == "spank-the-pig" and done.rules.seats == ("Blue", "Red")
    assert done.rules.standings() == done.standings
