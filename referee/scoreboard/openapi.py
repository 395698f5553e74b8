"""The OpenAPI 3 description of the scoreboard's HTTP API, served at `/api/openapi.json`.

Written by hand next to the code it describes (`referee.scoreboard.api`); a test checks that every route of
the app appears here and that every `$ref` resolves.
"""

from __future__ import annotations

from typing import Any

from referee import __version__
from referee.rules.base import all_facts
from referee.rules.declare import Fact


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _err(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/responses/{name}"}


def _page(summary: str) -> dict[str, Any]:
    return {"get": {"summary": summary, "tags": ["pages"], "responses": {
        "200": {"description": "an HTML page", "content": {"text/html": {}}}}}}


def _action(summary: str, *, body: str | None = None, ok: str = "State",
            extra: dict[str, Any] | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "tags": ["judge"],
        "security": [{"TablePin": []}],
        "responses": {
            "200": _json(_ref(ok), "the table after the action"),
            "400": _err("BadRequest"), "401": _err("NoPin"), "409": _err("NoGame"),
            "413": _err("TooLarge"), "429": _err("Locked"), "503": _err("Busy"),
            "507": _err("StorageFull"),
        },
    }
    if body is not None:
        op["requestBody"] = {"required": True,
                             "content": {"application/json": {"schema": _ref(body)}}}
    if extra:
        op["responses"].update(extra)
    return {"post": op}


SCHEMAS: dict[str, Any] = {
    "Error": {"type": "object", "required": ["error"],
              "properties": {"error": {"type": "string", "description": "one line"}}},
    "Ruling": {"type": "object", "required": ["type", "round", "seat", "delta", "reason"],
               "properties": {"type": {"type": "string", "enum": ["ruling"]},
                              "round": {"type": "integer", "minimum": 1},
                              "seat": {"type": ["string", "null"]},
                              "delta": {"type": "integer"},
                              "reason": {"type": "string"},
                              "margin_us": {"type": ["integer", "null"]}}},
    "Awaiting": {"type": "object", "required": ["type", "round", "need"],
                 "properties": {"type": {"type": "string", "enum": ["awaiting"]},
                                "round": {"type": "integer", "minimum": 1},
                                "need": {"type": "array", "items": {
                                    "type": "string",
                                    "description": "the facts asked (see Facts)"}}}},
    "SeatScore": {"type": "object", "required": ["seat", "score", "place", "out"],
                  "properties": {"seat": {"type": "string"}, "score": {"type": "integer"},
                                 "place": {"type": "integer", "minimum": 1},
                                 "out": {"type": "boolean"}}},
    "Standings": {"type": "object", "required": ["type", "final", "seats", "winners"],
                  "properties": {"type": {"type": "string", "enum": ["standings"]},
                                 "final": {"type": "boolean"},
                                 "seats": {"type": "array", "items": _ref("SeatScore")},
                                 "winners": {"type": "array", "items": {"type": "string"}}}},
    "State": {
        "type": "object",
        "description": "The whole table; the same object every `state` event carries.",
        "required": ["game", "game_id", "phase", "round", "seats", "rulings", "awaiting"],
        "properties": {
            "game": {"type": ["string", "null"], "description": "the game's log name"},
            "title": {"type": ["string", "null"]},
            "game_id": {"type": ["integer", "null"]},
            "practice": {"type": "boolean"},
            "phase": {"type": "string", "enum": ["setup", "cadence", "race", "awaiting", "ruled",
                                                 "paused", "over"]},
            "round": {"type": "integer", "minimum": 0},
            "rounds": {"type": ["integer", "null"], "description": "regular rounds, if known"},
            "unit": {"type": ["string", "null"], "description": "the score's unit"},
            "seats": {"type": "array", "items": _ref("SeatScore"),
                      "description": "standings order"},
            "seat_order": {"type": "array", "items": {"type": "string"}},
            "rulings": {"type": "array", "items": _ref("Ruling"),
                        "description": "the latest round's rulings"},
            "reactions_us": {"type": "object", "additionalProperties": {"type": "integer"},
                             "description": "seat → reaction time in the latest round, µs"},
            "awaiting": {"oneOf": [_ref("Awaiting"), {"type": "null"}]},
            "final": {"type": "boolean"},
            "winners": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "object"},
            "said": {"type": "string", "description": "the last phrase said aloud"},
            "stuck": {"type": "array", "items": {"type": "string"}},
            "colours": {"type": "object", "additionalProperties": {"type": "string"}},
            "facts": {"type": "array", "items": {"type": "string"},
                      "description": "facts the judge may give in this game"},
            "fact_info": {"type": "object", "description": "fact name → its declaration: "
                                                           "kind, label, question, answers"},
            "quiet": {"type": "boolean", "description": "the game hides its races"},
            "call": {"type": "string", "description": "the words of the latest call"},
            "buttons": {"type": "array", "items": {"type": "string"},
                        "description": "the buttons the game's races read"},
            "words": {"type": "object", "description": "the game's own words: unit, ..."},
            "mock": {"type": "boolean"},
            "box": {"type": "object"},
        },
    },
    "Penalty": {
        "type": "object", "required": ["round", "seat"], "additionalProperties": False,
        "properties": {"round": {"type": "integer", "minimum": 1},
                       "seat": {"type": "string", "minLength": 1, "maxLength": 40},
                       "count": {"type": "integer", "minimum": 1, "maximum": 20, "default": 1},
                       "reason": {"type": "string", "minLength": 1, "maxLength": 200}},
    },
    "Setup": {
        "type": "object", "required": ["games", "seats", "game"],
        "properties": {
            "games": {"type": "array", "items": {"type": "object", "description": (
                "name, title, seats [fewest, most], unit, unit_words [one, many], buttons, "
                "options (name, label, help, kind number|choice, default, unit, min/max or "
                "choices) and facts (name, kind count|names|flag, label, question, ask, "
                "answers)")}},
            "seats": {"type": "array", "items": {"type": "object"}},
            "game": {"type": "string", "description": "the game set up now"}},
    },
    "Empty": {"type": "object", "additionalProperties": False,
              "description": "no body, or an empty object"},
    "SeatSetup": {
        "type": "object", "required": ["name"], "additionalProperties": False,
        "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 24},
                       "colour": {"type": ["string", "null"], "pattern": "^#[0-9a-fA-F]{6}$"},
                       "slap": {"type": ["integer", "null"], "minimum": 0, "maximum": 27,
                                "description": "BCM pin of the slap button"},
                       "double": {"type": ["integer", "null"], "minimum": 0, "maximum": 27,
                                  "description": "BCM pin of the double button (null: none)"}},
    },
    "NewGame": {
        "type": "object", "required": ["game"], "additionalProperties": False,
        "properties": {"game": {"type": "string", "description": "a game's log name"},
                       "seats": {"type": "array", "minItems": 2, "maxItems": 8,
                                 "items": _ref("SeatSetup"),
                                 "description": "in seat order; leave out to keep the seats"},
                       "options": {"type": "object",
                                   "additionalProperties": {"type": ["string", "integer",
                                                                     "boolean"]}},
                       "practice": {"type": "boolean", "default": False,
                                    "description": "ruled and announced, kept out of history"}},
    },
    "Press": {
        "type": "object", "required": ["seat"], "additionalProperties": False,
        "properties": {"seat": {"type": "string", "description": "a seat, or judge"},
                       "button": {"type": "string", "enum": ["slap", "double", "yes", "no", "undo"],
                                  "default": "slap"}},
    },
    "GameSummary": {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "game": {"type": "string"},
                       "title": {"type": "string"},
                       "seats": {"type": "array", "items": {"type": "string"}},
                       "created": {"type": "string", "format": "date-time"},
                       "rounds": {"type": "integer"}, "final": {"type": "boolean"},
                       "ended": {"type": "boolean"},
                       "standings": {"type": "array", "items": _ref("SeatScore")},
                       "winners": {"type": "array", "items": {"type": "string"}},
                       "error": {"type": ["string", "null"]}},
    },
    "PlayerStats": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "rating": {"type": "integer"},
                       "games": {"type": "integer"}, "wins": {"type": "number"},
                       "reactions": {"type": "object", "properties": {
                           "count": {"type": "integer"},
                           "median_ms": {"type": ["number", "null"]},
                           "best_ms": {"type": ["number", "null"]}}}},
    },
}

RESPONSES: dict[str, Any] = {
    "BadRequest": _json(_ref("Error"), "bad JSON, a bad value, or an action the referee refuses"),
    "NoPin": _json(_ref("Error"), "the table PIN is missing or wrong"),
    "Locked": {**_json(_ref("Error"), "too many wrong PINs from this address (wait 60 s), or "
                                      "from anywhere (wait your turn: Retry-After)"),
               "headers": {"Retry-After": {"schema": {"type": "integer"}}}},
    "NoGame": _json(_ref("Error"), "no game is running"),
    "NotFound": _json(_ref("Error"), "not found"),
    "TooLarge": _json(_ref("Error"), "the body is larger than 64 KB"),
    "Busy": _json(_ref("Error"), "the referee or the server is busy; try again"),
    "StorageFull": _json(_ref("Error"), "the disk is full: nothing was logged, so nothing "
                                        "was done; the table is paused"),
}


def _fact_schema(fact: Fact) -> dict[str, Any]:
    if fact.kind == "count":
        return {"type": "integer", "minimum": 0, "maximum": fact.most, "description": fact.label}
    if fact.kind == "names":
        return {"type": "array", "maxItems": 12, "description": fact.label,
                "items": {"type": "string", "minLength": 1, "maxLength": 40}}
    return {"type": "boolean", "description": fact.label}


def facts_schema() -> dict[str, Any]:
    """The facts body, from the facts the games declare."""
    return {
        "type": "object", "required": ["round"], "additionalProperties": False,
        "description": "What the judge saw in a round; give at least one fact. A later one corrects.",
        "properties": {"round": {"type": "integer", "minimum": 1},
                       **{name: _fact_schema(f) for name, f in all_facts().items()}},
    }


def openapi_document() -> dict[str, Any]:
    paths: dict[str, Any] = {
        "/": _page("Live table view"),
        "/judge": _page("Judge panel"),
        "/setup": _page("Set up a game"),
        "/history": _page("Past games, reaction times, ratings"),
        "/box": _page("Virtual button box (mock mode only; 404 otherwise)"),
        "/api/openapi.json": {"get": {"summary": "This document", "tags": ["api"], "responses": {
            "200": {"description": "OpenAPI 3.1", "content": {"application/json": {}}}}}},
        "/api/state": {"get": {"summary": "The whole table", "tags": ["api"], "responses": {
            "200": _json(_ref("State"), "the table now"), "503": _err("Busy")}}},
        "/api/events": {"get": {
            "summary": "Server-Sent Events: every state change and ruling as it happens",
            "description": "The full state on connect (`event: state`), then `state`, `ruling`, "
                           "`judge`, `over` and `stuck` events, each `data:` one JSON object; a "
                           "`: keep-alive` comment every 15 s.",
            "tags": ["api"],
            "responses": {"200": {"description": "an event stream",
                                  "content": {"text/event-stream": {}}},
                          "503": _err("Busy")}}},
        "/api/setup": {"get": {
            "summary": "What a game can be set up with: every game's seats, options and facts, "
                       "as the games declare them, and this table's seats",
            "tags": ["api"], "responses": {"200": _json(_ref("Setup"), "the catalogue")}}},
        "/api/games": {"get": {"summary": "Past games (practice games excluded), newest first",
                               "tags": ["history"], "responses": {"200": _json(
                                   {"type": "object", "properties": {"games": {
                                       "type": "array", "items": _ref("GameSummary")}}},
                                   "the games")}}},
        "/api/games/{game_id}/log": {"get": {
            "summary": "A game's table log (JSON Lines), as `referee export` writes it",
            "tags": ["history"],
            "parameters": [{"name": "game_id", "in": "path", "required": True,
                            "schema": {"type": "integer", "minimum": 1}}],
            "responses": {"200": {"description": "the log",
                                  "content": {"text/plain": {"schema": {"type": "string"}}}},
                          "404": _err("NotFound")}}},
        "/api/stats": {"get": {"summary": "Per-player reaction times and ratings",
                               "tags": ["history"], "responses": {"200": _json(
                                   {"type": "object", "properties": {
                                       "games": {"type": "integer"},
                                       "players": {"type": "array",
                                                   "items": _ref("PlayerStats")}}},
                                   "players, best rating first")}}},
        "/api/pin": {"post": {"summary": "Check the table PIN", "tags": ["judge"],
                              "security": [{"TablePin": []}],
                              "responses": {"204": {"description": "the PIN is right"},
                                            "401": _err("NoPin"), "429": _err("Locked")}}},
        "/api/facts": _action("Give or correct a round's facts", body="Facts"),
        "/api/penalty": _action("A judge's penalty with a reason", body="Penalty"),
        "/api/undo": _action("Revert the latest judge action"),
        "/api/pause": _action("Pause: no new rounds"),
        "/api/resume": _action("Resume"),
        "/api/end": _action("End the game now"),
        "/api/next-round": _action("Start the next round now"),
        "/api/standings": _action("Say the standings aloud", ok="Standings"),
        "/api/new-game": _action("Start a new game with these seats and options", body="NewGame"),
        "/api/press": {"post": {
            "summary": "Press a virtual button (mock mode only)", "tags": ["box"],
            "security": [{"TablePin": []}],
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": _ref("Press")}}},
            "responses": {"204": {"description": "pressed"}, "400": _err("BadRequest"),
                          "401": _err("NoPin"), "404": _err("NotFound"),
                          "429": _err("Locked"), "507": _err("StorageFull")}}},
    }
    for path in ("/api/undo", "/api/pause", "/api/resume", "/api/end", "/api/next-round",
                 "/api/standings"):
        paths[path]["post"]["requestBody"] = {
            "required": False, "content": {"application/json": {"schema": _ref("Empty")}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Table Referee scoreboard", "version": __version__,
                 "description": "Read the table, follow it live, and (with the table PIN) judge "
                                "and set up games. Errors are {\"error\": \"one line\"}."},
        "paths": paths,
        "components": {
            "schemas": {**SCHEMAS, "Facts": facts_schema()},
            "responses": RESPONSES,
            "securitySchemes": {"TablePin": {"type": "apiKey", "in": "header",
                                             "name": "X-Table-Pin"}},
        },
    }
