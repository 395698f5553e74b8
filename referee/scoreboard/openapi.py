"""The OpenAPI 3 description of the scoreboard's HTTP API, served at `/api/openapi.json`.

The routes are listed here by hand next to the code they describe (`referee.scoreboard.api`); every
body's schema is generated from its one declaration (`referee.scoreboard.bodies`), the same Structs
the server decodes requests with, so the document cannot drift from what the server accepts. Tests
check that every route appears here, that every `$ref` resolves, and that server and document agree
on every body (tests/test_messages.py).
"""

from __future__ import annotations

from typing import Any

import msgspec

from referee import __version__
from referee.rules.registry import games
from referee.scoreboard import bodies


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


def schemas() -> dict[str, Any]:
    """The JSON Schema of every body, generated from its one declaration in `bodies`."""
    _, found = msgspec.json.schema_components(
        (*bodies.requests(), *bodies.ANSWERS), ref_template="#/components/schemas/{name}")
    # The options a game takes are the game's own: listed from the registry, checked by its rules.
    options = found["NewGame"]["properties"]["options"]
    value = options["additionalProperties"]  # the shape every option value has
    known: dict[str, Any] = {}
    for cls in games().values():
        for option in cls.known_options().values():
            known.setdefault(option.name, {"description": option.help, **value})
    options["properties"] = dict(sorted(known.items()))
    options["description"] = "the game's options (each game takes some of these); see /setup"
    found["NewGame"]["properties"]["game"]["examples"] = list(games())
    for name, extra in bodies.SCHEMA_EXTRAS.items():
        found[name].update(extra)
    return dict(found)


RESPONSES: dict[str, Any] = {
    "BadRequest": _json(_ref("Error"), "bad JSON, a bad value, or an action the referee refuses"),
    "NoPin": _json(_ref("Error"), "the table PIN is missing or wrong"),
    "Locked": {**_json(_ref("Error"), "too many wrong PINs from this address (wait 60 s), or "
                                      "from anywhere (wait your turn: Retry-After)"),
               "headers": {"Retry-After": {"schema": {"type": "integer"}}}},
    "NoGame": _json(_ref("Error"), "no game is running"),
    "NotFound": _json(_ref("Error"), "not found"),
    "NotTheBox": _json(_ref("Error"), "only the box itself may do this"),
    "TooLarge": _json(_ref("Error"), "the body is larger than 64 KB"),
    "Busy": _json(_ref("Error"), "the referee or the server is busy; try again"),
    "StorageFull": _json(_ref("Error"), "the disk is full: nothing was logged, so nothing "
                                        "was done; the table is paused"),
}


def openapi_document() -> dict[str, Any]:
    paths: dict[str, Any] = {
        "/": _page("Live table view"),
        "/judge": _page("Judge panel"),
        "/setup": _page("Set up a game"),
        "/history": _page("Past games, reaction times, ratings"),
        "/box": _page("Virtual button box (mock mode only; 404 otherwise)"),
        "/i18n.js": {"get": {"summary": "The pages' words in the table's language, for their "
                                        "scripts (window.TR_WORDS: msgid → text)",
                             "tags": ["pages"], "responses": {
            "200": {"description": "a script", "content": {"text/javascript": {}}}}}},
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
                               "tags": ["history"],
                               "responses": {"200": _json(_ref("Games"), "the games")}}},
        "/api/games/{game_id}/log": {"get": {
            "summary": "A game's table log (JSON Lines), as `referee export` writes it",
            "tags": ["history"],
            "parameters": [{"name": "game_id", "in": "path", "required": True,
                            "schema": {"type": "integer", "minimum": 1}}],
            "responses": {"200": {"description": "the log",
                                  "content": {"text/plain": {"schema": {"type": "string"}}}},
                          "404": _err("NotFound")}}},
        "/api/stats": {"get": {"summary": "Per-player reaction times and ratings",
                               "tags": ["history"],
                               "responses": {"200": _json(_ref("Stats"), "players, best rating first")}}},
        "/api/pin": {"post": {"summary": "Check the table PIN", "tags": ["judge"],
                              "security": [{"TablePin": []}],
                              "responses": {"204": {"description": "the PIN is right"},
                                            "401": _err("NoPin"), "429": _err("Locked")}}},
        "/api/pair": {
            "post": {"summary": "Ask to judge: a code to show, and a token to keep; the table "
                               "page shows the same code until the judge's YES lets it in",
                     "tags": ["judge"],
                     "requestBody": {"required": False, "content": {
                         "application/json": {"schema": _ref("Empty")}}},
                     "responses": {"201": _json(_ref("Paired"), "waiting for the judge"),
                                   "400": _err("BadRequest"), "429": _err("Locked")}},
            "get": {"summary": "Has the judge let this device in? (header X-Table-Token)",
                    "tags": ["judge"],
                    "parameters": [{"name": "X-Table-Token", "in": "header", "required": False,
                                    "schema": {"type": "string"}}],
                    "responses": {"200": _json(_ref("Paired"), "waiting, paired or unknown")}}},
        "/api/pair/approve": {"post": {
            "summary": "The box's own screen lets the device showing this code in (from the "
                       "box's own addresses only)", "tags": ["judge"],
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": _ref("PairApprove")}}},
            "responses": {"200": _json(_ref("Paired"), "paired"), "400": _err("BadRequest"),
                          "403": _err("NotTheBox"), "404": _err("NotFound")}}},
        "/api/facts": _action("Give or correct a round's facts", body="Facts"),
        "/api/penalty": _action("A judge's penalty with a reason", body="Penalty"),
        "/api/undo": _action("Revert the latest change to the score: the latest judge action "
                             "is withdrawn, or a round ruled from presses alone is voided"),
        "/api/pause": _action("Pause: no new rounds"),
        "/api/resume": _action("Resume after a count-in"),
        "/api/start": _action("Start play from the Ready step (a count-in first)"),
        "/api/end": _action("End the game now: an end line is written (a race open now closes "
                            "now); the leaders are the (co-)champions once no question is open"),
        "/api/next-round": _action("Start the next round now"),
        "/api/standings": _action("Say the standings aloud", ok="StandingsLine"),
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
    for path in ("/api/undo", "/api/pause", "/api/resume", "/api/start", "/api/end",
                 "/api/next-round",
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
            "schemas": schemas(),
            "responses": RESPONSES,
            "securitySchemes": {"TablePin": {"type": "apiKey", "in": "header",
                                             "name": "X-Table-Pin"},
                                "PairedDevice": {"type": "apiKey", "in": "header",
                                                 "name": "X-Table-Token"}},
        },
    }
