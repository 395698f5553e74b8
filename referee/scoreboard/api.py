"""The HTTP API (`/api/...`): the table as JSON, its live feed, and the judge's and setup's actions.

Reading is open to anyone on the network; every POST that changes the game needs the table PIN
(`X-Table-Pin`, see `referee.scoreboard.pin`). Bodies are decoded as the messages declared in
`referee.scoreboard.bodies` (the same declarations `/api/openapi.json` is made from) before anything
reaches the engine; a bad body, a bad value or an action the engine refuses is HTTP 400 with
{"error": "one line"}. Nothing in a request is ever used as a file path: a game's log is found by
its integer id in the database.
"""

from __future__ import annotations

import dataclasses
import math
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial, wraps
from typing import Any, TypeVar, cast

from flask import Blueprint, Flask, Response, current_app, jsonify, request
from msgspec import UNSET, Struct

from referee.config import ConfigError, SeatConfig, build_seats, clean_text
from referee.events import Facts, Penalty
from referee.rules.declare import RulesError
from referee.rules.registry import games, rules_for
from referee.scoreboard import bodies
from referee.scoreboard.history import player_stats, table_games
from referee.scoreboard.live import Hub, is_box
from referee.scoreboard.pairing import Pairing
from referee.scoreboard.pin import PinGuard
from referee.scoreboard.ports import EnginePort, TablePort
from referee.store.database import StoreError, export_lines, http_status
from referee.voice.phrases import LANGUAGES

api = Blueprint("api", __name__, url_prefix="/api")

F = TypeVar("F", bound=Callable[..., Any])
B = TypeVar("B", bound=Struct)


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
    pairing: Pairing


def ctx() -> Context:
    return cast(Context, current_app.extensions["referee"])


# -- guards and readers ---------------------------------------------------------------------------


def needs_pin(view: F) -> F:
    @wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        c = ctx()
        if c.pairing.paired(request.headers.get("X-Table-Token")):  # paired at the box
            return view(*args, **kwargs)
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


def parse(shape: type[B]) -> B:
    """The request body as its declared message (`referee.scoreboard.bodies`); 400 if it is not."""
    try:
        return bodies.decode(shape, request.get_data(cache=True))
    except bodies.BodyError as exc:
        raise ApiError(400, str(exc)) from None


def clean(value: str, what: str, limit: int = bodies.MAX_TEXT) -> str:
    """User text at the edge: NFC, no control characters or lone surrogates, `limit` long."""
    try:
        return clean_text(value, what, limit)
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from None


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
        raise ApiError(http_status(exc), _one_line(exc)) from None


def table_after(name: str, **args: Any) -> Response:
    """An action's answer: the whole table after it, as `GET /api/state` shows it."""
    return jsonify(ctx().hub.decorate(command(name, **args)))


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
        gone = request.environ.get("waitress.client_disconnected")
        resp = Response(hub.stream(client, first, gone), mimetype="text/event-stream")
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
    playing = ctx().table.engine  # the body is read as the game in play declares its facts
    data = parse(bodies.facts_body(None if playing is None else playing.rules.facts()))
    values = {k: [clean(n, f"{k} name", 40) for n in v] if isinstance(v, list) else v
              for k, v in bodies.fact_values(data).items()}
    event = Facts(data.round, values)  # type: ignore[attr-defined]
    return table_after("feed", event=event)


@api.post("/penalty")
@needs_pin
def penalty() -> Response:
    data = parse(bodies.Penalty)
    event = Penalty(data.round, clean(data.seat, "seat", 40), data.count,
                    clean(data.reason, "reason"))
    return table_after("feed", event=event)


def _simple(name: str, action: Callable[[], Response]) -> None:
    def view() -> Response:
        parse(bodies.Empty)
        return action()

    view.__name__ = name.replace("-", "_")
    api.add_url_rule(f"/{name}", view_func=needs_pin(view), methods=["POST"])


_simple("undo", lambda: table_after("undo"))
_simple("pause", lambda: table_after("pause"))
_simple("resume", lambda: table_after("resume"))
_simple("start", lambda: table_after("start"))
_simple("end", lambda: table_after("end"))
_simple("next-round", lambda: table_after("next_round"))
_simple("standings", lambda: jsonify(command("standings")))


# -- pairing at the box ---------------------------------------------------------------------------


def _show_codes() -> None:
    """The table page shows the waiting codes at once (a state message to every stream)."""
    hub = ctx().hub
    try:
        hub.broadcast(hub.message("state", hub.state(timeout=0.5)))
    except queue.Empty:
        pass


@api.post("/pair")
def pair_ask() -> tuple[Response, int]:
    """A device asks to judge: its code (shown on it and on the table page) and its token."""
    parse(bodies.Empty)
    asked = ctx().pairing.ask(request.remote_addr or "?")
    if asked is None:
        resp = jsonify(error="too many devices are waiting to pair; try again in a minute")
        resp.headers["Retry-After"] = "30"
        return resp, 429
    code, token = asked
    _show_codes()
    return jsonify(code=code, token=token), 201


@api.get("/pair")
def pair_status() -> Response:
    """Has the judge let this device in? (its token in `X-Table-Token`)."""
    return jsonify(state=ctx().pairing.status(request.headers.get("X-Table-Token")))


@api.post("/pair/approve")
def pair_approve() -> Response:
    """The box's own screen lets the device showing `code` in (from the box's addresses only)."""
    data = parse(bodies.PairApprove)
    if not is_box(request.remote_addr or ""):
        raise ApiError(403, "only the box itself approves a device: press YES on the keypad")
    if not ctx().pairing.approve(data.code):
        raise ApiError(404, f"no device is waiting with code {data.code!r}; ask again")
    _show_codes()
    return jsonify(state="paired", code=data.code)


# -- setup and the virtual box ------------------------------------------------------------------


def _seat_configs(raw: list[bodies.SeatSetup], current: Any
                  ) -> tuple[list[dict[str, Any]], tuple[SeatConfig, ...]]:
    """The seats sent by the setup page, as `Table.reseat` takes them and as they will be built."""
    given: list[dict[str, Any]] = []
    for seat in raw:
        item: dict[str, Any] = {"name": clean(seat.name, "name", 24)}
        if seat.colour is not None:
            item["colour"] = seat.colour
        for key in ("slap", "double"):
            pin = getattr(seat, key)
            if pin is not UNSET:
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
    data = parse(bodies.NewGame)
    game = clean(data.game, "game", 40)
    if game not in games():
        raise ApiError(400, f"unknown game {game!r}; choose one of {', '.join(games())}")
    options = {k: v for k, v in data.options.items() if v != ""}
    current = c.table.config
    given: list[dict[str, Any]] | None = None
    seats = current.seats  # no seats sent: the same seats again ("next game")
    if data.seats is not UNSET:
        given, seats = _seat_configs(data.seats, current)
    candidate = dataclasses.replace(current, seats=seats)
    language = None if data.language is UNSET else data.language
    if language is not None and language not in LANGUAGES:
        raise ApiError(400, f"language {language!r} is not shipped; use one of "
                            f"{', '.join(sorted(LANGUAGES))}")
    try:
        rules_for(game)([s.name for s in seats], c.table.game_options(game, options, candidate))
    except (RulesError, ConfigError) as exc:
        raise ApiError(400, _one_line(exc)) from None
    with c.lock:
        before = [{"name": s.name, "colour": s.colour, "slap": s.slap, "double": s.double}
                  for s in current.seats]
        try:
            if given is not None:
                c.table.reseat(given)
            c.table.start(game, options, practice=data.practice, resume=False,
                          language=language)
        except (RulesError, ConfigError, ValueError) as exc:
            raise ApiError(400, _one_line(exc)) from None
        except StoreError as exc:  # a full disk: the game in play goes on, with its own seats
            if given is not None:
                c.table.reseat(before)
            raise ApiError(http_status(exc), _one_line(exc)) from None
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
    data = parse(bodies.Press)
    seat, button = clean(data.seat, "seat", 40), data.button
    buttons = ("yes", "no", "undo") if seat == "judge" else ("slap", "double")
    if button not in buttons:
        raise ApiError(400, f"button must be {' or '.join(buttons)}, not {button!r}")
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
