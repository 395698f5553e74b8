"""The scoreboard's HTTP side: every endpoint through Flask's test client, plus a real waitress server
for the event stream (does each message leave at once?). A real `Table` on mocked pins and a
temporary SQLite file; no browser here (see test_browser.py)."""

from __future__ import annotations

import io
import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cli.table import Table
from referee.config import default_config
from referee.scoreboard import live as web_live
from referee.scoreboard.app import create_app, serve_in_thread
from referee.scoreboard.history import GameSummary, player_stats
from tests.harness import SimClock, close_table, end_window, examples

PIN = "2468"
SEATS = ["Blue", "Red", "Green", "Yellow"]
# A long window, so a loaded machine cannot close a race before the test's presses land; the
# test ends it when they have (`end_window`: doubles are on, so a race runs to its window's end).
WINDOW_MS = 60_000
FAST = {"tempo_ms": 100, "window_ms": WINDOW_MS, "pause_ms": 100, "tie_us": 1}
POSTS = ["/api/facts", "/api/penalty", "/api/undo", "/api/pause", "/api/resume", "/api/end",
         "/api/next-round", "/api/standings", "/api/new-game", "/api/press", "/api/pin"]


def wait_for(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


@pytest.fixture
def table(mock_factory: Any, tmp_path: Any) -> Iterator[Table]:
    t = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
              pin=PIN, out=io.StringIO(), auto=False)
    t.start("spank-the-pig", FAST, resume=False)
    yield t
    close_table(t, WINDOW_MS)


@pytest.fixture
def clock() -> SimClock:
    return SimClock.in_seconds()


@pytest.fixture
def app(table: Table, clock: SimClock) -> Flask:
    return create_app(table, clock=clock)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def post(client: FlaskClient, path: str, body: Any = None, *, pin: str | None = PIN,
         addr: str = "10.0.0.2") -> Any:
    headers = {"X-Table-Pin": pin} if pin is not None else {}
    data = body if isinstance(body, bytes | str) else json.dumps(body if body is not None else {})
    return client.post(path, data=data, headers=headers, content_type="application/json",
                       environ_base={"REMOTE_ADDR": addr})


def state(client: FlaskClient) -> dict[str, Any]:
    resp = client.get("/api/state")
    assert resp.status_code == 200
    return dict(resp.get_json())


def split_round(client: FlaskClient, table: Table, pressing: tuple[str, ...]) -> int:
    """Start a round, let `pressing` slap after the cue, end its window; returns its number."""
    assert post(client, "/api/next-round").status_code == 200
    wait_for(lambda: state(client)["phase"] == "race")
    for seat in pressing:
        assert post(client, "/api/press", {"seat": seat}).status_code == 204
    assert table.engine is not None
    end_window(table.engine, WINDOW_MS)
    return int(state(client)["round"])


# -- pages and headers ------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/judge", "/setup", "/history", "/box"])
def test_pages_render_with_their_own_assets_only(client: FlaskClient, path: str) -> None:
    resp = client.get(path)
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    assert "<main" in html and "http://" not in html and "https://" not in html  # no CDN
    assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_static_assets_are_served_and_paths_cannot_escape(client: FlaskClient) -> None:
    for name in ("app.css", "common.js", "table.js", "judge.js", "setup.js", "box.js", "favicon.svg"):
        with client.get(f"/static/{name}") as resp:
            assert resp.status_code == 200
    for path in ("/static/../referee/scoreboard/app.py", "/static/%2e%2e/pyproject.toml",
                 "/static/..%2f..%2fpyproject.toml", "/api/games/..%2f..%2fetc%2fpasswd/log",
                 "/api/games/1.5/log", "/api/games/-1/log", "/api/games/abc/log"):
        assert client.get(path).status_code == 404, path


def test_api_answers_are_not_cached_and_never_debug(app: Flask, client: FlaskClient) -> None:
    assert not app.debug
    resp = client.get("/api/state")
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


def test_box_is_mock_mode_only(client: FlaskClient, table: Table) -> None:
    table.mock = False
    assert client.get("/box").status_code == 404
    resp = post(client, "/api/press", {"seat": "Blue"})
    assert resp.status_code == 404 and "mock mode" in resp.get_json()["error"]


def test_unknown_api_path_and_wrong_method_are_json(client: FlaskClient) -> None:
    resp = client.get("/api/nothing")
    assert resp.status_code == 404 and "error" in resp.get_json()
    resp = client.get("/api/facts")
    assert resp.status_code == 405 and "error" in resp.get_json()
    assert client.get("/no-such-page").status_code == 404


# -- state and OpenAPI --------------------------------------------------------------------------


def test_state_has_what_the_spec_promises(client: FlaskClient) -> None:
    s = state(client)
    for key in ("game", "game_id", "phase", "round", "seats", "rulings", "awaiting"):
        assert key in s
    assert s["game"] == "spank-the-pig" and s["phase"] in ("setup", "ruled")
    assert {r["seat"] for r in s["seats"]} == set(SEATS)
    assert all({"seat", "score", "out", "place"} <= set(r) for r in s["seats"])
    assert s["colours"]["Blue"] == "#1f6feb" and s["facts"] == ["pigs", "doubles", "void"]


def test_state_without_a_game(mock_factory: Any, tmp_path: Any) -> None:
    t = Table(default_config(SEATS), db=tmp_path / "r.db", mock=True, no_speech=True, pin=PIN,
              out=io.StringIO())
    try:
        c = create_app(t).test_client()
        s = c.get("/api/state").get_json()
        assert s["phase"] == "setup" and s["game"] is None and s["seats"] == []
        resp = post(c, "/api/pause")
        assert resp.status_code == 409 and "setup" in resp.get_json()["error"]
        assert c.get("/").status_code == 200
    finally:
        t.close()


def _resolve(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/")
    node: Any = doc
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def test_openapi_describes_every_route(app: Flask, client: FlaskClient) -> None:
    doc = client.get("/api/openapi.json").get_json()
    assert doc["openapi"].startswith("3.") and doc["info"]["title"] and doc["info"]["version"]
    documented = {(path, method.upper()) for path, ops in doc["paths"].items() for method in ops}
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = rule.rule.replace("<int:game_id>", "{game_id}")
        for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}:
            assert (path, method) in documented, (path, method)
    refs: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref":
                    refs.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(doc)
    assert refs
    for ref in refs:
        _resolve(doc, ref)
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert op["responses"], (path, method)
            if method == "post" and path not in ("/api/press", "/api/pair", "/api/pair/approve"):
                assert op.get("security") == [{"TablePin": []}], path  # pairing needs no PIN
    for path in POSTS:
        assert "post" in doc["paths"][path]


# -- the PIN --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", POSTS)
def test_every_change_needs_the_pin(client: FlaskClient, path: str) -> None:
    before = state(client)
    resp = post(client, path, {}, pin=None)
    assert resp.status_code == 401 and "PIN" in resp.get_json()["error"]
    resp = post(client, path, {}, pin="0000")
    assert resp.status_code == 401 and resp.get_json()["error"] == "wrong table PIN"
    after = state(client)
    assert (after["game_id"], after["round"], after["phase"]) == (
        before["game_id"], before["round"], before["phase"])


def test_five_wrong_pins_lock_the_address_for_a_minute(client: FlaskClient, clock: SimClock) -> None:
    for _ in range(5):
        assert post(client, "/api/pin", pin="1111").status_code == 401
    resp = post(client, "/api/pin")  # even the right PIN, from that address
    assert resp.status_code == 429 and int(resp.headers["Retry-After"]) == 60
    assert post(client, "/api/pin", addr="10.0.0.3").status_code == 204  # others are not locked
    clock.advance(s=59)
    assert post(client, "/api/pin").status_code == 429
    clock.advance(s=2)
    assert post(client, "/api/pin").status_code == 204
    for _ in range(4):  # the count starts again after a right PIN
        assert post(client, "/api/pin", pin="1111").status_code == 401
    assert post(client, "/api/pin").status_code == 204


def test_a_missing_pin_is_not_a_wrong_try(client: FlaskClient) -> None:
    for _ in range(10):
        assert post(client, "/api/pin", pin=None).status_code == 401
    assert post(client, "/api/pin").status_code == 204


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("path,body", [
    ("/api/facts", b"{not json"),
    ("/api/facts", b"\xff\xfe"),
    ("/api/facts", b"[" * 20000 + b"]" * 20000),
    ("/api/facts", b'{"round": NaN, "pigs": 1}'),
    ("/api/facts", []),
    ("/api/facts", {"pigs": 1}),
    ("/api/facts", {"round": 1}),
    ("/api/facts", {"round": "1", "pigs": 1}),
    ("/api/facts", {"round": True, "pigs": 1}),
    ("/api/facts", {"round": 1, "pigs": -1}),
    ("/api/facts", {"round": 1, "pigs": 10**40}),
    ("/api/facts", {"round": 1, "doubles": "hippo"}),
    ("/api/facts", {"round": 1, "match": "yes"}),
    ("/api/facts", {"round": 1, "pigs": 1, "colour": "red"}),
    ("/api/facts", {"round": 99, "pigs": 1}),
    ("/api/penalty", {"round": 1, "seat": "Purple", "count": 1, "reason": "x"}),
    ("/api/penalty", {"round": 1, "seat": "Blue", "count": 0, "reason": "x"}),
    ("/api/penalty", {"round": 1, "seat": "Blue", "reason": ""}),
    ("/api/undo", {}),
    ("/api/next-round", "[1]"),
    ("/api/new-game", {"game": "chess", "seats": [{"name": "A"}, {"name": "B"}]}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A"}]}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A"}, {"name": "a"}]}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A", "colour": "red"},
                                                          {"name": "B"}]}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A", "slap": 4},
                                                          {"name": "B", "slap": 4}]}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A", "slap": 2},
                                                          {"name": "B"}]}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A"}, {"name": "B"}],
                       "options": {"deck": "lots"}}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A"}, {"name": "B"}],
                       "options": {"speed": 3}}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": f"S{i}"} for i in range(8)]}),
    ("/api/new-game", {"game": "spank-the-pig", "seats": [{"name": "A"}, {"name": "B"}],
                       "practice": "yes"}),
    ("/api/press", {"seat": "Purple"}),
    ("/api/press", {"seat": "Blue", "button": "elbow"}),
    ("/api/press", {"seat": ["Blue"]}),
])
def test_bad_bodies_are_400_with_one_line_and_change_nothing(
    client: FlaskClient, table: Table, path: str, body: Any
) -> None:
    before = state(client)
    resp = post(client, path, body)
    assert resp.status_code == 400, resp.get_data(as_text=True)
    error = resp.get_json()["error"]
    assert error and "\n" not in error and "Traceback" not in error
    after = state(client)
    assert (after["game_id"], after["round"], after["seats"], after["seat_order"]) == (
        before["game_id"], before["round"], before["seats"], before["seat_order"])
    assert [s.name for s in table.config.seats] == SEATS


def test_a_body_too_large_is_refused(client: FlaskClient) -> None:
    resp = post(client, "/api/facts", b"{" + b" " * 70_000 + b"}")
    assert resp.status_code == 413 and "error" in resp.get_json()


def test_an_unexpected_error_is_json_without_traceback(app: Flask, client: FlaskClient) -> None:
    def broken() -> Any:
        raise RuntimeError("secret detail\nTraceback (most recent call last)")

    app.view_functions["api.get_state"] = broken
    resp = client.get("/api/state")
    assert resp.status_code == 500
    assert resp.get_json() == {"error": "internal error; the referee logged it"}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
field_values = st.fixed_dictionaries({}, optional={
    k: json_values | st.integers(-2, 5) | st.sampled_from(SEATS)
    for k in ("round", "pigs", "doubles", "match", "claim", "void", "seat", "count", "reason",
              "button", "game", "seats", "options", "practice")})


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from([p for p in POSTS if p != "/api/new-game"]),
       body=json_values | field_values)
def test_fuzzed_bodies_never_500(client: FlaskClient, path: str, body: Any) -> None:
    resp = post(client, path, body)
    assert resp.status_code in (200, 204, 400, 409), (path, body, resp.get_data(as_text=True))
    assert resp.status_code in (200, 204) or "error" in resp.get_json()


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=json_values | field_values)
def test_fuzzed_new_game_bodies_never_500(client: FlaskClient, body: Any) -> None:
    resp = post(client, "/api/new-game", body)
    assert resp.status_code in (200, 400), (body, resp.get_data(as_text=True))


# -- the judge --------------------------------------------------------------------------------


def test_a_split_round_waits_for_the_judge_and_the_judge_settles_it(
    client: FlaskClient, table: Table
) -> None:
    n = split_round(client, table, ("Blue", "Red", "Green"))
    s = wait_for(lambda: (x := state(client))["phase"] == "awaiting" and x)
    assert s["awaiting"] == {"type": "awaiting", "round": n, "need": ["pigs"]}
    assert set(s["reactions_us"]) == {"Blue", "Red", "Green"}
    resp = post(client, "/api/facts", {"round": n, "pigs": 1})
    assert resp.status_code == 200
    s = wait_for(lambda: (x := state(client))["phase"] == "ruled" and x)
    assert s["awaiting"] is None
    assert [(r["seat"], r["delta"], r["reason"]) for r in s["rulings"]] == [
        ("Yellow", 1, "last to spank the pig")]
    # a correction of the same round: there were two pigs
    assert post(client, "/api/facts", {"round": n, "pigs": 2}).status_code == 200
    s = wait_for(lambda: (x := state(client))["rulings"][0]["delta"] == 2 and x)
    # undo the correction, then a penalty, then end the game
    assert post(client, "/api/undo").status_code == 200
    wait_for(lambda: state(client)["rulings"][0]["delta"] == 1)
    resp = post(client, "/api/penalty", {"round": n, "seat": "Blue", "count": 2,
                                         "reason": "slapped the hippo"})
    assert resp.status_code == 200
    s = wait_for(lambda: (x := state(client))["rulings"][-1]["seat"] == "Blue" and x)
    assert s["rulings"][-1] == {"type": "ruling", "round": n, "seat": "Blue", "delta": 2,
                                "reason": "slapped the hippo", "margin_us": None}
    assert {r["seat"]: r["score"] for r in s["seats"]} == {"Blue": 2, "Red": 0, "Green": 0,
                                                          "Yellow": 1}
    standings = post(client, "/api/standings").get_json()
    assert standings["type"] == "standings" and standings["final"] is False
    assert post(client, "/api/end").get_json()["phase"] == "over"


def test_pause_resume_and_next_round_refusals(client: FlaskClient) -> None:
    assert post(client, "/api/pause").get_json()["phase"] == "paused"
    assert post(client, "/api/resume").get_json()["phase"] != "paused"
    assert post(client, "/api/next-round").status_code == 200
    resp = post(client, "/api/next-round")  # the race is still open
    assert resp.status_code == 400 and "cannot start" in resp.get_json()["error"]


def test_undo_with_nothing_to_undo_is_400(client: FlaskClient) -> None:
    resp = post(client, "/api/undo")
    assert resp.status_code == 400 and "undo" in resp.get_json()["error"]


def test_undo_with_an_unknown_field_is_400_for_the_field(client: FlaskClient) -> None:
    """There is a judge action to undo, so the 400 can only come from the field it names."""
    assert post(client, "/api/next-round").status_code == 200
    penalty = {"round": 1, "seat": "Blue", "count": 1, "reason": "slapped the hippo"}
    assert post(client, "/api/penalty", penalty).status_code == 200
    before = state(client)
    resp = post(client, "/api/undo", {"x": 1})
    assert resp.status_code == 400
    error = resp.get_json()["error"]
    assert "'x'" in error and "\n" not in error, error
    assert state(client)["seats"] == before["seats"]  # the penalty stands
    assert post(client, "/api/undo", {}).status_code == 200  # the same undo, without the field
    wait_for(lambda: {r["seat"]: r["score"] for r in state(client)["seats"]}["Blue"] == 0)


def test_virtual_box_press_reaches_the_engine(client: FlaskClient, table: Table) -> None:
    split_round(client, table, ("Blue", "Red", "Green", "Yellow"))
    s = wait_for(lambda: (x := state(client))["phase"] == "ruled" and x)
    assert len(s["reactions_us"]) == 4 and s["rulings"][0]["reason"] == "last to spank the pig"
    assert post(client, "/api/press", {"seat": "judge", "button": "undo"}).status_code == 204
    assert post(client, "/api/press", {"seat": "judge", "button": "slap"}).status_code == 400


# -- setup --------------------------------------------------------------------------------------


def test_new_game_with_chosen_seats(client: FlaskClient, table: Table) -> None:
    old = state(client)["game_id"]
    body = {"game": "spank-the-pig", "practice": True, "options": {"deck": 9, "pause_ms": 100},
            "seats": [{"name": "Ann", "colour": "#ff00ff", "slap": 4, "double": None},
                      {"name": "Bob", "slap": 17, "double": 24}, {"name": "Cy"}]}
    resp = post(client, "/api/new-game", body)
    assert resp.status_code == 200, resp.get_json()
    s = resp.get_json()
    assert s["game_id"] != old and s["seat_order"] == ["Ann", "Bob", "Cy"] and s["practice"]
    assert s["colours"]["Ann"] == "#ff00ff" and s["options"]["deck"] == 9
    assert [(x.name, x.slap, x.double) for x in table.config.seats] == [
        ("Ann", 4, None), ("Bob", 17, 24), ("Cy", 27, 25)]
    assert s["box"]["double"] == []  # doubles are off without a double button for Ann
    # next game, same seats
    resp = post(client, "/api/new-game", {"game": "spank-the-pig"})
    assert resp.status_code == 200 and resp.get_json()["seat_order"] == ["Ann", "Bob", "Cy"]
    assert not resp.get_json()["practice"]


def test_every_registered_game_can_be_started_and_judged(client: FlaskClient) -> None:
    from referee.rules.registry import games

    for name, cls in games().items():
        lo = cls.SEATS[0]
        seats = [{"name": n} for n in SEATS[:lo]] + [{"name": f"P{i}"} for i in range(lo - 4)]
        resp = post(client, "/api/new-game", {"game": name, "seats": seats})
        assert resp.status_code == 200, (name, resp.get_json())
        s = resp.get_json()
        assert s["game"] == name and s["facts"] and len(s["seat_order"]) == lo
        assert s["quiet"] == (not cls.ROUNDS_FROM_CUES)
        resp = post(client, "/api/facts", {"round": 1, "void": True})
        assert resp.status_code == 400  # no round yet: refused, one line
        assert "round 1" in resp.get_json()["error"]


def test_setup_page_lists_every_game_and_option(client: FlaskClient) -> None:
    from referee.rules.registry import games

    html = client.get("/setup").get_data(as_text=True)
    for name, cls in games().items():
        assert f'"name": "{name}"' in html
        for option in cls.known_options():
            assert f'"name": "{option}"' in html
    assert '"kind": "choice"' in html  # spank's doubles: buttons, judge, off


# -- history ------------------------------------------------------------------------------------


def test_games_log_and_stats(client: FlaskClient, table: Table) -> None:
    split_round(client, table, ("Blue", "Red", "Green", "Yellow"))
    wait_for(lambda: state(client)["phase"] == "ruled")
    post(client, "/api/end")
    games = client.get("/api/games").get_json()["games"]
    assert len(games) == 1 and games[0]["rounds"] == 1 and games[0]["ended"]
    game_id = games[0]["id"]
    resp = client.get(f"/api/games/{game_id}/log")
    assert resp.status_code == 200 and resp.mimetype == "text/plain"
    assert "attachment" in resp.headers["Content-Disposition"]
    lines = [json.loads(x) for x in resp.get_data(as_text=True).splitlines()]
    assert lines[0]["type"] == "game" and lines[0]["seats"] == SEATS
    assert sum(1 for x in lines if x["type"] == "press") == 4
    assert client.get("/api/games/999/log").status_code == 404
    stats = client.get("/api/stats").get_json()
    assert stats["games"] == 1
    players = {p["name"]: p for p in stats["players"]}
    assert players["Blue"]["reactions"]["count"] == 1 and players["Blue"]["games"] == 1
    assert players["Blue"]["reactions"]["median_ms"] > 0
    html = client.get("/history").get_data(as_text=True)
    assert "<svg" in html and "Blue" in html and f"/api/games/{game_id}/log" in html


def test_practice_games_stay_out_of_history(client: FlaskClient) -> None:
    post(client, "/api/new-game", {"game": "spank-the-pig", "practice": True,
                                   "seats": [{"name": "Ann"}, {"name": "Bob"}]})
    games = client.get("/api/games").get_json()["games"]
    assert all("Ann" not in g["seats"] for g in games)


def _summary(gid: int, places: dict[str, int]) -> GameSummary:
    rows = tuple({"seat": s, "score": p, "place": p, "out": False} for s, p in places.items())
    return GameSummary(gid, "spank-the-pig", "Spank the Pig!", tuple(places), "", 5, True, False,
                       rows, tuple(s for s, p in places.items() if p == 1))


def test_rating_counts_a_shared_place_as_half_a_win() -> None:
    tie = player_stats([_summary(1, {"A": 1, "B": 1})])
    assert [round(p.rating) for p in tie] == [1000, 1000]
    assert [p.wins for p in tie] == [0.5, 0.5]
    won = {p.name: p for p in player_stats([_summary(1, {"A": 1, "B": 2, "C": 2})])}
    assert won["A"].rating == pytest.approx(1016) and won["A"].wins == 1
    assert won["B"].rating == pytest.approx(992) == won["C"].rating
    total = sum(p.rating for p in player_stats(
        [_summary(i, {"A": 1, "B": 2, "C": 3}) for i in range(5)]))
    assert total == pytest.approx(3000)  # Elo only moves points between players


# -- the live feed on a real server -------------------------------------------------------------


def _open_stream(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    return sock


def _read_until(sock: socket.socket, marker: bytes, buf: bytearray, timeout: float = 5.0) -> None:
    sock.settimeout(timeout)
    while marker not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"stream closed before {marker!r}")
        buf += chunk


def test_event_stream_flushes_each_message_at_once(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_live, "HEARTBEAT_S", 0.3)
    server = serve_in_thread(table, "127.0.0.1", 0)
    try:
        sock = _open_stream(server.port)
        buf = bytearray()
        _read_until(sock, b"event: state", buf)
        head = bytes(buf).split(b"\r\n\r\n")[0].decode()
        assert "200" in head.splitlines()[0] and "text/event-stream" in head
        assert "no-store" in head
        _read_until(sock, b": keep-alive", buf)
        buf.clear()
        hub = server.app.extensions["referee"].hub
        t0 = time.perf_counter()
        assert table.engine is not None
        table.engine.command("pause")  # the engine publishes a state: it must arrive at once
        _read_until(sock, b'"phase":"paused"', buf, timeout=2)
        assert time.perf_counter() - t0 < 1.0  # at once, not at a later heartbeat or poll
        assert len(hub.clients) == 1
        sock.close()
        wait_for(lambda: not hub.clients, timeout=3)  # the heartbeat notices the closed socket
    finally:
        server.close()


def test_server_close_ends_open_streams(table: Table) -> None:
    server = serve_in_thread(table, "127.0.0.1", 0)
    socks = [_open_stream(server.port) for _ in range(3)]
    for sock in socks:
        _read_until(sock, b"event: state", bytearray())
    t0 = time.monotonic()
    server.close()
    assert time.monotonic() - t0 < 4
    assert not server.thread.is_alive()
    for sock in socks:
        sock.close()
