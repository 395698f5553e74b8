"""The scoreboard: a Flask app served from the Pi to phones, tablets and a TV, entirely offline.

`create_app(table)` builds the app for one running `Table`: the pages (table view, judge panel,
setup, history, virtual button box), the JSON API (`referee.scoreboard.api`) and its live feed
(`referee.scoreboard.live`). `serve_in_thread(table, host, port)` serves it with waitress, a production
WSGI server, in a daemon thread; `close()` stops it. Never debug mode: errors are one JSON line,
never a traceback. Templates and static files ship in `web/` (inside the wheel: `referee/web/`).
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask, Response, abort, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

import referee
from referee.config import DOUBLE_KEYS, JUDGE_KEYS, SLAP_KEYS
from referee.rules.registry import games
from referee.scoreboard import i18n
from referee.scoreboard.api import ApiError, Context, register
from referee.scoreboard.guard import ConnectionGuard, host_allowed, server_settings
from referee.scoreboard.history import chart, player_stats, table_games
from referee.scoreboard.live import Hub
from referee.scoreboard.openapi import openapi_document
from referee.scoreboard.pairing import Pairing
from referee.scoreboard.pin import PinGuard
from referee.scoreboard.ports import TablePort
from referee.store.database import StoreError, http_status
from referee.voice.phrases import LANGUAGES

log = logging.getLogger(__name__)

STREAM_LIMIT = 64  # guests' open event streams; each holds one server thread
KEPT_STREAMS = 8  # more streams for the box itself and paired devices, whatever guests hold
THREADS = STREAM_LIMIT + KEPT_STREAMS + 8  # the rest answer pages and API calls
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")


def web_dir() -> Path:
    """`referee/web` in an installed wheel, else the repository's `web/` (editable install)."""
    packaged = Path(referee.__file__).parent / "web"
    return packaged if packaged.is_dir() else Path(referee.__file__).parent.parent / "web"


def games_catalogue(language: str = "en") -> list[dict[str, Any]]:
    """Every game as the setup page offers it, from what each game declares, in `language`."""
    return [i18n.game_catalogue(cls, language) for cls in games().values()]


def make_decorate(table: TablePort, guard: PinGuard | None = None,
                  pairing: Pairing | None = None
                  ) -> Callable[[dict[str, Any] | None], dict[str, Any]]:
    """The engine's snapshot plus what the pages need: colours, the box, the PIN's state."""

    def decorate(shot: dict[str, Any] | None) -> dict[str, Any]:
        config = table.config
        colours = {s.name: s.colour for s in config.seats}
        doubles_pins = [s.name for s in config.seats if s.double is not None]
        if shot is None:
            shot = {"game": None, "title": None, "game_id": None, "practice": False,
                    "phase": "setup", "round": 0, "rounds": None, "unit": None, "seats": [],
                    "seat_order": [], "rulings": [], "reactions_us": {}, "awaiting": None,
                    "final": False, "winners": [], "options": {}, "said": "", "stuck": [],
                    "facts": [], "fact_info": {}, "quiet": False, "buttons": []}
        view = dict(shot)
        view["colours"] = {s: colours.get(s, "#8b949e") for s in shot.get("seat_order", [])}
        view["mock"] = bool(table.mock)
        health = getattr(table, "health", None)
        view["health"] = health() if health is not None else {"warnings": []}
        view.setdefault("storage_full", "")
        view["pin_alert"] = guard.alert() if guard is not None else ""
        view["pairing"] = pairing.waiting() if pairing is not None else []
        view["box"] = {
            "double": [s for s in doubles_pins if "double" in shot.get("buttons", [])],
            "judge_keys": config.judge is not None,
        }
        return view

    return decorate


def create_app(table: TablePort, *, clock: Any = None) -> Flask:
    web = web_dir()
    app = Flask(__name__, static_folder=str(web / "static"), static_url_path="/static",
                template_folder=str(web / "templates"))
    app.debug = False
    app.config.update(MAX_CONTENT_LENGTH=64 * 1024, PROPAGATE_EXCEPTIONS=False,
                      JSON_SORT_KEYS=False, SEND_FILE_MAX_AGE_DEFAULT=300)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    guard = PinGuard(lambda: str(table.pin), **({"clock": clock} if clock else {}))
    pairing = getattr(table, "pairing", None) or Pairing()  # the Table's: its keypad approves
    hub = Hub(table, make_decorate(table, guard, pairing), max_streams=STREAM_LIMIT,
              kept=pairing.paired_addresses, kept_streams=KEPT_STREAMS)
    register(app, Context(table, hub, guard, threading.Lock(), pairing))
    i18n.init(app, table, web)
    hub.attach()

    @app.before_request
    def own_host() -> tuple[Response, int] | None:
        """Only our own names: a DNS-rebinding page must not read the state or try PINs."""
        served = app.config.get("TABLE_HOST") or str(getattr(table.config, "host", ""))
        if host_allowed(request.headers.get("Host"), served):
            return None
        return jsonify(error="unknown Host; open the scoreboard by the table's own address, "
                             "e.g. http://raspberrypi.local:8000/"), 421

    @app.get("/")
    def table_view() -> str:
        return render_template("table.html", page="table", mock=table.mock)

    @app.get("/judge")
    def judge() -> str:
        return render_template("judge.html", page="judge", mock=table.mock)

    def setup_data() -> dict[str, Any]:
        seats = [{"name": s.name, "colour": s.colour, "slap": s.slap, "double": s.double}
                 for s in table.config.seats]
        engine = table.engine
        current = engine.rules.NAME if engine is not None else table.config.game
        return {"games": games_catalogue(table.language), "seats": seats, "game": current,
                "language": table.language,
                "languages": [[code, lang.name] for code, lang in sorted(LANGUAGES.items())]}

    @app.get("/setup")
    def setup() -> str:
        return render_template("setup.html", page="setup", mock=table.mock, setup=setup_data())

    @app.get("/api/setup")
    def setup_catalogue() -> Response:
        return jsonify(setup_data())

    @app.get("/history")
    def history() -> str:
        found = table_games(table.store)
        players = player_stats(found)
        titles = {g.id: i18n.game_title(g.game, g.title, table.language) for g in found}
        return render_template("history.html", page="history", mock=table.mock,
                               games=list(reversed(found)), titles=titles,
                               players=[p.to_json() for p in players],
                               chart=chart(players))

    @app.get("/box")
    def box() -> str:
        if not table.mock:
            abort(404)
        keys = {"slap": SLAP_KEYS, "double": DOUBLE_KEYS, "judge": JUDGE_KEYS}
        return render_template("box.html", page="box", mock=True, keys=keys)

    @app.get("/api/openapi.json")
    def openapi() -> Response:
        return jsonify(openapi_document())

    @app.after_request
    def headers(resp: Response) -> Response:
        h = resp.headers
        h["X-Content-Type-Options"] = "nosniff"
        h["Referrer-Policy"] = "no-referrer"
        h["X-Frame-Options"] = "DENY"
        h.setdefault("Content-Security-Policy", CSP)
        if request.path.startswith("/api/"):
            h["Cache-Control"] = "no-store"
        elif not request.path.startswith("/static/"):
            h["Cache-Control"] = "no-cache"
        return resp

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> tuple[Response, int]:
        return jsonify(error=exc.message), exc.status

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response | str, int]:
        code = exc.code or 500
        if request.path.startswith("/api/") or code != 404:
            message = {404: "no such endpoint; see /api/openapi.json",
                       405: "method not allowed here; see /api/openapi.json",
                       413: "the body is too large (64 KB at most)"}.get(code, exc.name)
            resp = jsonify(error=message)
            if code == 405 and exc.get_response().headers.get("Allow"):
                resp.headers["Allow"] = exc.get_response().headers["Allow"]
            return resp, (400 if code == 400 else code)
        return render_template("missing.html", page="", mock=table.mock), 404

    @app.errorhandler(queue.Empty)
    def busy(exc: queue.Empty) -> tuple[Response, int]:
        """The engine thread did not answer in time (a machine overloaded for seconds): the page
        tries again shortly; nothing was changed, so nothing is lost."""
        resp = jsonify(error="the referee is busy; try again in a moment")
        resp.headers["Retry-After"] = "1"
        return resp, 503

    @app.errorhandler(StoreError)
    def store_error(exc: StoreError) -> tuple[Response, int]:
        """The table log could not be written (507: a full disk) or read (503: a damaged file):
        one line naming the file and the fix, whatever handler met it."""
        log.error("%s", exc)
        return jsonify(error=str(exc).strip().splitlines()[0]), http_status(exc)

    @app.errorhandler(Exception)
    def crash(exc: Exception) -> tuple[Response, int]:
        log.exception("scoreboard error on %s %s", request.method, request.path)
        return jsonify(error="internal error; the referee logged it"), 500

    return app


class WebServer:
    """waitress in a daemon thread; `close()` ends the event streams and stops it.

    `host` "::" (or "0.0.0.0"/"") serves every address; "::" is dual-stack (one IPv6 socket
    that takes IPv4 too), as a guest would expect of "every address"."""

    def __init__(self, table: TablePort, host: str, port: int, *, threads: int = THREADS,
                 sock: socket.socket | None = None) -> None:
        from waitress import create_server

        self.app = create_app(table)
        self.app.config["TABLE_HOST"] = host
        self.map: dict[Any, Any] = {}
        settings = server_settings(threads)
        if sock is None and host in ("::", "[::]"):
            sock = listen_on(host, port)  # dual-stack: every address, IPv4 too
        try:
            if sock is not None:
                self.server: Any = create_server(self.app, map=self.map, sockets=[sock],
                                                 **settings)
            else:
                self.server = create_server(self.app, map=self.map, host=host, port=port,
                                            **settings)
        except BaseException:  # a port in use: leave nothing open behind the one-line error
            from waitress import wasyncore

            wasyncore.close_all(self.map)
            raise
        self.guard = ConnectionGuard(kept=self.app.extensions["referee"].pairing.paired_addresses)
        self.guard.install(self.server)
        listen = getattr(self.server, "effective_listen", None)
        self.port: int = int(getattr(self.server, "effective_port", 0) or (listen or [(0, port)])[0][1])
        self.host = host
        self.thread = threading.Thread(target=self.server.run, name="scoreboard", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        """The address to open: for a wildcard host, this machine's name (every address works)."""
        host = self.host.strip("[]")
        if host in ("", "0.0.0.0", "::"):
            host = socket.gethostname() or "localhost"
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    def close(self) -> None:
        from waitress import wasyncore

        self.app.extensions["referee"].hub.close()
        self.server.task_dispatcher.shutdown(timeout=2)
        wasyncore.close_all(self.map)
        self.thread.join(timeout=2)


def listen_on(host: str, port: int) -> socket.socket:
    """Bind and listen before anything else is made: a busy port or a bad host is found before
    the referee says a word or writes a line (OSError / ValueError with the reason)."""
    dual = host in ("::", "[::]")  # every address: one IPv6 socket that takes IPv4 too
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(
            "::" if dual else (host or "0.0.0.0"), port, type=socket.SOCK_STREAM,
            flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise ValueError(f"no such address ({exc})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if dual:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(addr)
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    return sock


def serve_in_thread(table: TablePort, host: str = "127.0.0.1", port: int = 8000, *,
                    sock: socket.socket | None = None) -> WebServer:
    return WebServer(table, host, port, sock=sock)
