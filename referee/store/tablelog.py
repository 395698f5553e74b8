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

from referee.events import (
    Awaiting,
    Cue,
    Event,
    Facts,
    GameStart,
    Penalty,
    Press,
    Ruling,
    Standings,
    Undo,
)
from referee.rules.base import Rules, all_facts, rules_for
from referee.rules.declare import RulesError
from referee.rules.replay import ReplayError, drive

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


def _int(obj: Mapping[str, Any], key: str, *, lo: int) -> int:
    if key not in obj:
        raise ValueError(f"missing field {key!r}: add it, a whole number ≥ {lo}"
                         + (" (the time in microseconds)" if key == "t_us" else ""))
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise ValueError(f"{key} must be a whole number ≥ {lo}, not {value!r}")
    return value


def _text(obj: Mapping[str, Any], key: str) -> str:
    if key not in obj:
        raise ValueError(f"missing field {key!r}: add it, a non-empty text")
    value = obj[key]
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} must be a non-empty text, not {value!r}")
    return value


def event_from_json(obj: Any) -> Event:
    """One log object → one event (shape only; seats and rounds are checked by the rules)."""
    if not isinstance(obj, dict):
        raise ValueError("each line must be a JSON object")
    kind = obj.get("type")
    if kind == "game":
        game = _text(obj, "game")
        seats = obj.get("seats")
        if not isinstance(seats, list) or not all(isinstance(s, str) and s for s in seats):
            raise ValueError(f"seats must be a list of seat names, not {seats!r}")
        options = obj.get("options", {})
        if not isinstance(options, dict):
            raise ValueError(f"options must be an object, not {options!r}")
        return GameStart(game, tuple(seats), dict(options))
    if kind == "cue":
        seat = obj.get("seat")
        if seat is not None and (not isinstance(seat, str) or not seat):
            raise ValueError(f"seat must be a seat name, not {seat!r}")
        return Cue(_int(obj, "t_us", lo=0), seat)
    if kind == "press":
        button = obj.get("button", "slap")
        if button not in ("slap", "double"):
            raise ValueError(f"button must be 'slap' or 'double', not {button!r}")
        return Press(_int(obj, "t_us", lo=0), _text(obj, "seat"), button)
    if kind == "facts":
        known = all_facts()  # extra fields are allowed: those no game declares are dropped
        values = {k: v for k, v in obj.items() if k in known}
        if not values:
            names = list(known)
            raise ValueError(f"facts line names no facts ({', '.join(names[:-1])} or "
                             f"{names[-1]})")
        return Facts(_int(obj, "round", lo=1), values)
    if kind == "penalty":
        reason = obj.get("reason", "judge's penalty")
        if not isinstance(reason, str):
            raise ValueError(f"reason must be a text, not {reason!r}")
        count = _int(obj, "count", lo=1) if "count" in obj else 1
        return Penalty(_int(obj, "round", lo=1), _text(obj, "seat"), count, reason)
    if kind == "undo":
        return Undo()
    if kind is None:
        raise ValueError("missing field 'type': add it, one of game, cue, press, facts, "
                         "penalty or undo")
    raise ValueError(
        f"unknown type {kind!r}; use game, cue, press, facts, penalty or undo"
    )


def event_to_json(event: Event) -> dict[str, Any]:
    if isinstance(event, GameStart):
        return {"type": "game", "game": event.game, "seats": list(event.seats),
                "options": dict(event.options)}
    if isinstance(event, Cue):
        out: dict[str, Any] = {"type": "cue", "t_us": event.t_us}
        if event.seat is not None:
            out["seat"] = event.seat
        return out
    if isinstance(event, Press):
        return {"type": "press", "t_us": event.t_us, "seat": event.seat, "button": event.button}
    if isinstance(event, Facts):
        return {"type": "facts", "round": event.round, **event.values}
    if isinstance(event, Penalty):
        return {"type": "penalty", "round": event.round, "seat": event.seat,
                "count": event.count, "reason": event.reason}
    return {"type": "undo"}


def read_lines(lines: Iterable[str]) -> Iterator[LoggedEvent]:
    """Parse a table log; blank lines are skipped; problems raise LogError naming the line."""
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE:
            raise LogError(number, f"line is longer than {MAX_LINE} characters")
        stripped = raw.strip()
        if not stripped:
            continue
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise LogError(number, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise LogError(number, "nested too deeply to be a table-log line") from None
        try:
            yield LoggedEvent(number, event_from_json(obj))
        except ValueError as exc:
            raise LogError(number, str(exc)) from None


@dataclass
class Replay:
    rules: Rules
    outputs: list[Ruling | Awaiting]
    standings: Standings

    def lines(self) -> list[dict[str, Any]]:
        return [o.to_json() for o in self.outputs] + [self.standings.to_json()]


def new_rules(start: GameStart, overrides: Mapping[str, Any] | None = None) -> Rules:
    cls = rules_for(start.game)
    options = {**start.options, **(overrides or {})}
    return cls(start.seats, options)


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
