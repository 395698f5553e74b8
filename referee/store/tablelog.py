"""The table log (JSON Lines): reading it strictly, writing it, and re-ruling it.

Reading names the line of every problem (`LogError`), so `referee replay` can say
"game.jsonl: line 7: seat 'Purple' is not at this table" and exit 2. Replay feeds the very same
rules object the live table uses: timed events (cues, presses) in order of `t_us`, judge lines in
their own order, then closes every open race as at the end of the log.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from referee.events import (
    Awaiting,
    Cue,
    End,
    Event,
    Facts,
    GameStart,
    Penalty,
    Press,
    Ruling,
    Standings,
    Undo,
)
from referee.rules.base import Rules
from referee.rules.declare import RulesError, options_from_text
from referee.rules.registry import facts_by_game, rules_for
from referee.rules.registry import new_rules as registry_rules
from referee.rules.replay import ReplayError, drive
from referee.wire import explain, not_json, plain, words

MAX_LINE = 64 * 1024


class LogError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True)
class LoggedEvent:
    line: int
    event: Event


_LINE = msgspec.json.Decoder(Event)
_TAGS: dict[str, type[Event]] = {
    str(cls.__struct_config__.tag): cls for cls in (GameStart, Cue, Press, Facts, Penalty, Undo, End)
}
_SHAPE_FIELDS = frozenset({"type", "round"})  # a facts line's own fields; the rest are facts


def fact_names(game: str | None) -> tuple[str, ...]:
    """The fields a facts line of `game` holds, in its own namespace (its rules check the values);
    None: a line read without its game line, which may name any registered game's."""
    found = (rules_for(game).facts(),) if game is not None else facts_by_game().values()
    return tuple(dict.fromkeys(f.name for declared in found for f in declared))


def _facts(line: Facts, obj: Mapping[str, Any], game: str | None) -> Facts:
    known = fact_names(game)  # extra fields are allowed: those the game does not declare drop
    values = {k: v for k, v in obj.items() if k in known and k not in _SHAPE_FIELDS}
    if not values:
        others = [k for k in obj if k not in _SHAPE_FIELDS]
        if game is not None and others:  # a line of nothing but fields its game does not use
            raise ValueError(f"facts field {others[0]!r} is not used in {game}; "
                             f"use {words(list(known))}")
        raise ValueError(f"facts line names no facts ({words(list(known))})")
    return Facts(line.round, values)


def event_from_json(obj: Any, game: str | None = None) -> Event:
    """One log object (parsed JSON) → one event, checked against the same declarations; a facts
    line's fields are those `game` (the log's game line) declares."""
    try:
        event = msgspec.convert(obj, Event)
    except msgspec.ValidationError as exc:
        raise ValueError(_explain(exc, obj)) from None
    return _facts(event, obj, game) if isinstance(event, Facts) else event


def event_from_line(raw: str | bytes, game: str | None = None) -> Event:
    """One log line → one event, decoded and checked in one pass against the declarations; a
    facts line's fields are those `game` (the log's game line) declares."""
    try:
        event = _LINE.decode(raw)
    except msgspec.ValidationError as exc:
        raise ValueError(_explain(exc, plain(raw))) from None
    except msgspec.DecodeError as exc:
        raise ValueError(not_json(raw, exc)) from None
    if isinstance(event, Facts):  # rare: the judge's lines; their fields are the game's facts
        return _facts(event, json.loads(raw), game)
    return event


def _explain(exc: msgspec.ValidationError, obj: Any) -> str:
    """A refused line in one line: which field, what it must be, the value given."""
    if not isinstance(obj, dict):
        return "each line must be a JSON object"
    kind = obj.get("type")
    if "type" not in obj:
        return "missing field 'type': add it, one of " + words(list(_TAGS))
    shape = _TAGS.get(kind) if isinstance(kind, str) else None
    if shape is None:
        return f"unknown type {kind!r}; use {words(list(_TAGS))}"
    return explain(exc, shape, obj)


def event_to_json(event: Event) -> dict[str, Any]:
    if isinstance(event, Facts):  # the values are the line's own fields
        return {"type": "facts", "round": event.round, **event.values}
    out: dict[str, Any] = msgspec.to_builtins(event)
    if isinstance(event, GameStart) and not event.practice:
        del out["practice"]  # said only of a practice game
    return out


def read_lines(lines: Iterable[str]) -> Iterator[LoggedEvent]:
    """Parse a table log; blank lines are skipped; problems raise LogError naming the line. A facts
    line is read against the game its game line names."""
    game: str | None = None
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE:
            raise LogError(number, f"line is longer than {MAX_LINE} characters")
        if not raw or raw.isspace():
            continue
        try:
            event = event_from_line(raw, game)
            if isinstance(event, GameStart) and game is None:
                game = event.game
            yield LoggedEvent(number, event)
        except ValueError as exc:
            raise LogError(number, str(exc)) from None
        except RecursionError:
            raise LogError(number, "nested too deeply to be a table-log line") from None


@dataclass
class Replay:
    rules: Rules
    outputs: list[Ruling | Awaiting]
    standings: Standings

    def lines(self) -> list[dict[str, Any]]:
        return [o.to_json() for o in self.outputs] + [self.standings.to_json()]


def new_rules(start: GameStart, overrides: Mapping[str, Any] | None = None) -> Rules:
    """The rules of a game line; `overrides` (`--option k=v`) are text, converted to the kinds the
    game declares; the line's own options are JSON values, taken as they are typed."""
    if not overrides:
        return registry_rules(start)
    cls = rules_for(start.game)
    given = options_from_text(cls.known_options(), overrides, start.game)
    return registry_rules(GameStart(start.game, start.seats, {**start.options, **given},
                                    start.practice))


def replay(lines: Iterable[str], overrides: Mapping[str, Any] | None = None) -> Replay:
    """Re-rule a whole table log; `overrides` replace the log's options (`--option k=v`)."""
    collecting = gc.isenabled()
    gc.disable()  # a replay builds many small acyclic objects: cycle collection only slows it
    try:
        return _replay(lines, overrides)
    finally:
        if collecting:
            gc.enable()


def _replay(lines: Iterable[str], overrides: Mapping[str, Any] | None) -> Replay:
    events = read_lines(lines)
    first = next(events, None)
    if first is None:
        raise LogError(1, "the log is empty; its first line must be the game line")
    if not isinstance(first.event, GameStart):
        raise LogError(first.line, "the first line must be the game line ({\"type\": \"game\", ...})")
    try:
        rules = new_rules(first.event, overrides)
    except RulesError as exc:
        raise LogError(first.line, str(exc)) from None
    try:
        drive(rules, ((item.line, item.event) for item in events))
    except ReplayError as exc:
        raise LogError(exc.line, exc.message) from None
    return Replay(rules, rules.outputs(), rules.standings())


def dumps(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))
