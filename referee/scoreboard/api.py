"""The HTTP API (`/api/...`): the table as JSON, its live feed, and the judge's and setup's actions.

Reading is open to anyone on the network; every POST that changes the game needs the table PIN
(`X-Table-Pin`, see `referee.scoreboard.pin`). Bodies are checked here, field by field, before anything
reaches the engine; a bad body, a bad value or an action the engine refuses is HTTP 400 with
{"error": "one line"}. Nothing in a request is ever used as a file path: a game's log is found by
its integer id in the database.
"""

from __future__ import annotations

import dataclasses
import json
import math
import queue
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial, wraps
from typing import Any, TypeVar, cast

from flask import Blueprint, Flask, Response, current_app, jsonify, request

from referee.config import ConfigError, SeatConfig, build_seats, clean_text
from referee.engine.ports import EnginePort, TablePort
from referee.events import Facts, Penalty, Undo
from referee.rules.base import all_facts, games, rules_for
from referee.rules.declare import Fact, RulesError
from referee.scoreboard.history import player_stats, table_games
from referee.scoreboard.live import Hub
from referee.scoreboard.pin import PinGuard
from referee.store.database import StoreError, export_lines

api = Blueprint("api", __name__, url_prefix="/api")

MAX_TEXT = 200
MAX_NAMES = 12  # names in one fact (doubles showing...)
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
F = TypeVar("F", bound=Callable[..., Any])


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Context:
    table: TablePort
    hub: Hub
    guard: PinGuard
    lock: threading.Lock


def ctx() -> Context:
    return cast(Context, current_app.extensions["referee"])


# -- guards and readers ---------------------------------------------------------------------------


def needs_pin(view: F) -> F:
    @wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        c = ctx()
        alerted = bool(c.guard.alert())
        status, wait = c.guard.check(request.remote_addr or "?", request.headers.get("X-Table-Pin"))
        if status and not alerted and c.guard.alert():  # someone started guessing: pages say so
            try:
                c.hub.broadcast(c.hub.message("state", c.hub.state(timeout=0.5)))
            except queue.Empty:
                pass
        if status == 429:
            seconds = max(1, math.ceil(wait))
            resp = jsonify(error=f"too many wrong PINs; try again in {seconds} seconds")
            resp.status_code = 429
            resp.headers["Retry-After"] = str(seconds)
            return resp
        if status == 401:
            given = request.headers.get("X-Table-Pin")
            raise ApiError(401, "wrong table PIN" if given else
                           "this needs the table PIN (header X-Table-Pin); it is printed at start")
        return view(*args, **kwargs)

    return cast(F, guarded)


def body() -> dict[str, Any]:
    """The JSON object sent; an empty body is an empty object."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError):  # bad UTF-8, bad JSON, NaN, nesting too deep
        raise ApiError(400, "the body is not valid JSON; send a JSON object") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object, e.g. {\"round\": 1, \"void\": true}")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def only(data: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key in data:
        if key not in allowed:
            raise ApiError(400, f"unknown field {key!r}; use {', '.join(allowed)}")


def whole(data: dict[str, Any], key: str, lo: int, hi: int, default: int | None = None) -> int:
    if key not in data:
        if default is None:
            raise ApiError(400, f"missing field {key!r}")
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ApiError(400, f"{key} must be a whole number from {lo} to {hi}, not {value!r}")
    return value


def text(data: dict[str, Any], key: str, default: str | None = None, limit: int = MAX_TEXT) -> str:
    if key not in data:
        if default is None:
            raise ApiError(400, f"missing field {key!r}")
        return default
    value = data[key]
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ApiError(400, f"{key} must be a non-empty text of at most {limit} characters, "
                            f"not {_short(value)}")
    return clean(value, key, limit)


def clean(value: str, what: str, limit: int = MAX_TEXT) -> str:
    """User text at the edge: NFC, no control characters or lone surrogates, `limit` long."""
    try:
        return clean_text(value, what, limit)
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from None


def flag(data: dict[str, Any], key: str, default: bool = False) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise ApiError(400, f"{key} must be true or false, not {_short(value)}")
    return value


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def engine() -> EnginePort:
    c = ctx()
    c.hub.attach()
    eng = c.table.engine
    if eng is None:
        raise ApiError(409, "no game is running; start one from the setup page")
    return eng


def command(name: str, **args: Any) -> Any:
    try:
        return engine().command(name, **args)
    except ValueError as exc:
        raise ApiError(400, _one_line(exc)) from None
    except queue.Empty:
        raise ApiError(503, "the referee did not answer in time; try again") from None
    except StoreError as exc:  # a full disk: nothing was logged, so nothing was done
        raise ApiError(507, _one_line(exc)) from None


def _one_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]


def state_response() -> Response:
    resp = jsonify(ctx().hub.state())
    return resp


# -- reading --------------------------------------------------------------------------------------


@api.get("/state")
def get_state() -> Response:
    ctx().hub.attach()
    try:
        return state_response()
    except queue.Empty:
        raise ApiError(503, "the referee did not answer in time; try again") from None


@api.get("/events")
def events() -> Response:
    hub = ctx().hub
    hub.attach()
    client = hub.join(request.remote_addr or "?")
    if client is None:  # the pages then poll /api/state instead
        resp = jsonify(error="too many open scoreboards; try again shortly")
        resp.status_code = 503
        resp.headers["Retry-After"] = "5"
        return resp
    try:
        first = hub.message("state", hub.state())
        resp = Response(hub.stream(client, first), mimetype="text/event-stream")
        # the slot is freed when the response is closed, however it ends: a HEAD never starts
        # the stream's body (so its `finally` would never run), a client may vanish first
        resp.call_on_close(partial(hub.leave, client))
    except BaseException:
        hub.leave(client)
        raise
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


@api.get("/games")
def list_games() -> Response:
    found = table_games(ctx().table.store)
    return jsonify(games=[g.to_json() for g in reversed(found)])


@api.get("/games/<int:game_id>/log")
def game_log(game_id: int) -> Response:
    conn = ctx().table.store.reader()
    try:
        lines = list(export_lines(conn, game_id))
    except StoreError:
        raise ApiError(404, f"no game {game_id}; see /api/games") from None
    finally:
        conn.close()
    resp = Response("\n".join(lines) + "\n", mimetype="text/plain")
    resp.headers["Content-Disposition"] = f'attachment; filename="game-{game_id}.jsonl"'
    return resp


@api.get("/stats")
def stats() -> Response:
    found = table_games(ctx().table.store)
    players = player_stats(found)
    return jsonify(games=sum(1 for g in found if g.rated), players=[p.to_json() for p in players])


# -- the judge -------------------------------------------------------------------------------------


@api.post("/pin")
@needs_pin
def check_pin() -> Response:
    return Response(status=204)


@api.post("/facts")
@needs_pin
def facts() -> Response:
    data = body()
    known = all_facts()  # the facts the games declare; the game running checks its own
    only(data, ("round", *known))
    number = whole(data, "round", 1, 1_000_000)
    values = {name: fact_value(fact, data) for name, fact in known.items() if name in data}
    if not values:
        raise ApiError(400, f"name at least one fact: {', '.join(known)}")
    return jsonify(command("feed", event=Facts(number, values)))


def fact_value(fact: Fact, data: dict[str, Any]) -> Any:
    """One fact's value from a request body, as its declaration says it must be."""
    if fact.kind == "count":
        return whole(data, fact.name, 0, fact.most)
    if fact.kind == "flag":
        return flag(data, fact.name)
    names = data[fact.name]
    if not isinstance(names, list) or len(names) > MAX_NAMES or not all(
        isinstance(n, str) and n.strip() and len(n) <= 40 for n in names
    ):
        example = f'["{fact.choices[0][0]}"]' if fact.choices else '["name"]'
        raise ApiError(400, f"{fact.name} must be a list of {fact.what or 'name'} names, "
                            f"e.g. {example}, not {_short(names)}")
    try:
        fact.check(names)
    except RulesError as exc:
        raise ApiError(400, _one_line(exc)) from None
    return [clean(n, f"{fact.what or 'name'} name", 40) for n in names]


@api.post("/penalty")
@needs_pin
def penalty() -> Response:
    data = body()
    only(data, ("round", "seat", "count", "reason"))
    event = Penalty(whole(data, "round", 1, 1_000_000), text(data, "seat", limit=40),
                    whole(data, "count", 1, 20, default=1),
                    text(data, "reason", default="judge's penalty"))
    return jsonify(command("feed", event=event))


def _simple(name: str, action: Callable[[], Any]) -> None:
    def view() -> Response:
        only(body(), ())
        return jsonify(action())

    view.__name__ = name.replace("-", "_")
    api.add_url_rule(f"/{name}", view_func=needs_pin(view), methods=["POST"])


_simple("undo", lambda: command("feed", event=Undo()))
_simple("pause", lambda: command("pause"))
_simple("resume", lambda: command("resume"))
_simple("end", lambda: command("end"))
_simple("next-round", lambda: command("next_round"))
_simple("standings", lambda: command("standings"))


# -- setup and the virtual box ------------------------------------------------------------------


def _seat_configs(raw: Any, current: Any) -> tuple[list[dict[str, Any]], tuple[SeatConfig, ...]]:
    """The seats sent by the setup page, as `Table.reseat` takes them and as they will be built."""
    if not isinstance(raw, list) or not 2 <= len(raw) <= 8:
        raise ApiError(400, "seats must be a list of 2 to 8 seats, e.g. [{\"name\": \"Blue\"}, ...]")
    given: list[dict[str, Any]] = []
    for i, seat in enumerate(raw, start=1):
        if not isinstance(seat, dict):
            raise ApiError(400, f"seat {i} must be an object with name, colour, slap, double")
        only(seat, ("name", "colour", "slap", "double"))
        item: dict[str, Any] = {"name": text(seat, "name", limit=24)}
        if seat.get("colour") is not None:
            colour = seat["colour"]
            if not isinstance(colour, str) or not _COLOUR.fullmatch(colour):
                raise ApiError(400, f"colour of seat {i} must be #rrggbb, not {_short(colour)}")
            item["colour"] = colour
        for key in ("slap", "double"):
            if key in seat:
                pin = seat[key]
                if pin is not None and (isinstance(pin, bool) or not isinstance(pin, int)
                                        or not 0 <= pin <= 27):
                    raise ApiError(400, f"{key} pin of seat {i} must be a BCM number 0-27 or "
                                        f"null, not {_short(pin)}")
                item[key] = pin
        given.append(item)
    try:
        seats = build_seats(given)
        dataclasses.replace(current, seats=seats)  # checks names, colours and pin clashes
    except ConfigError as exc:
        raise ApiError(400, _one_line(exc)) from None
    return given, seats


@api.post("/new-game")
@needs_pin
def new_game() -> Response:
    c = ctx()
    data = body()
    only(data, ("game", "seats", "options", "practice"))
    game = text(data, "game", limit=40)
    if game not in games():
        raise ApiError(400, f"unknown game {game!r}; choose one of {', '.join(games())}")
    options = data.get("options", {})
    if not isinstance(options, dict) or not all(
        isinstance(v, str | int | bool) and len(str(v)) <= 40 for v in options.values()
    ):
        raise ApiError(400, "options must be an object of short values, e.g. {\"deck\": 36}")
    options = {k: v for k, v in options.items() if v != ""}
    practice = flag(data, "practice")
    current = c.table.config
    given: list[dict[str, Any]] | None = None
    seats = current.seats  # no seats sent: the same seats again ("next game")
    if "seats" in data:
        given, seats = _seat_configs(data["seats"], current)
    candidate = dataclasses.replace(current, seats=seats)
    try:
        rules_for(game)([s.name for s in seats], c.table.game_options(game, options, candidate))
    except (RulesError, ConfigError) as exc:
        raise ApiError(400, _one_line(exc)) from None
    with c.lock:
        try:
            if given is not None:
                c.table.reseat(given)
            c.table.start(game, options, practice=practice, resume=False)
        except (RulesError, ConfigError, ValueError) as exc:
            raise ApiError(400, _one_line(exc)) from None
    c.hub.attach()
    return state_response()


@api.post("/press")
def press() -> Response:
    c = ctx()
    if not c.table.mock:
        raise ApiError(404, "the virtual button box exists in mock mode only")
    return _press(c)


@needs_pin
def _press(c: Context) -> Response:
    data = body()
    only(data, ("seat", "button"))
    seat = text(data, "seat", limit=40)
    button = data.get("button", "slap")
    buttons = ("yes", "no", "undo") if seat == "judge" else ("slap", "double")
    if button not in buttons:
        raise ApiError(400, f"button must be {' or '.join(buttons)}, not {_short(button)}")
    try:
        c.table.press(seat, button)
    except LookupError as exc:
        raise ApiError(409, _one_line(exc)) from None
    except ValueError as exc:
        raise ApiError(400, _one_line(exc)) from None
    except RuntimeError as exc:
        raise ApiError(404, _one_line(exc)) from None
    # the press is in the engine's queue: a snapshot asked after it answers once it is logged,
    # so a press the log could not take is refused here, never answered 204 and dropped
    full = command("snapshot").get("storage_full")
    if full:
        raise ApiError(507, full)
    return Response(status=204)


def register(app: Flask, context: Context) -> None:
    app.extensions["referee"] = context
    app.register_blueprint(api)
