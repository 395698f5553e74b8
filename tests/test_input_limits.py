"""Size limits, option ranges and unknown fields at their boundaries (issue 17, point 1).

- HTTP bodies: 64 KiB is the most any endpoint takes, in Flask (`MAX_CONTENT_LENGTH`) and in the
  real waitress server on loopback (`max_request_body_size`): exactly 64 KiB is served, one byte
  more is 413.
- A table-log line: exactly `MAX_LINE` characters is read, one more is refused naming the line.
- Every numeric game option through the setup API (`POST /api/new-game`) and the command line
  (`referee replay --option`): its least and greatest values are taken, one beyond is HTTP 400 or
  exit 2 with one line naming the option and its range.
- Unknown fields: each POST with a body that is valid but for one unknown field is 400 *for that
  field* (the same request without it succeeds), and nothing changes.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from gpiozero.pins.mock import MockFactory

from referee.cli import main as cli
from referee.cli.table import Table
from referee.config import default_config
from referee.rules.declare import Option, RulesError
from referee.rules.registry import games, rules_for
from referee.scoreboard.app import create_app, serve_in_thread
from referee.scoreboard.guard import MAX_BODY
from referee.store.tablelog import MAX_LINE, LogError, read_lines
from tests.harness import close_table
from tests.test_bad_logs import LOGS, log_text
from tests.test_hostile_http import guest, request

PIN = "2468"
SEATS = ["Blue", "Red", "Green", "Yellow"]
WINDOW_MS = 60_000  # no race closes on its own while a test looks (closed at the end)
FAST = {"tempo_ms": 100, "window_ms": WINDOW_MS, "pause_ms": 100, "tie_us": 1}
PENALTY = {"round": 1, "seat": "Blue", "count": 1, "reason": "slapped the hippo"}


@pytest.fixture
def table(mock_factory: MockFactory, tmp_path: Path) -> Iterator[Table]:
    t = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
              pin=PIN, out=io.StringIO(), auto=False)
    try:
        t.start("spank-the-pig", FAST, resume=False)
        assert t.engine is not None
        t.engine.command("next_round")  # round 1 is open: the judge's actions have a round
        yield t
    finally:
        close_table(t, WINDOW_MS)


@pytest.fixture
def client(table: Table) -> FlaskClient:
    return create_app(table).test_client()


def post(client: FlaskClient, path: str, body: Any = None, *, raw: bytes | None = None) -> Any:
    data = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
    return client.post(path, data=data, headers={"X-Table-Pin": PIN},
                       content_type="application/json")


def padded(body: dict[str, Any], size: int) -> bytes:
    """`body` as JSON, padded with whitespace (still the same JSON) to exactly `size` bytes."""
    text = json.dumps(body).encode()
    assert len(text) <= size
    return text + b" " * (size - len(text))


def blue_score(table: Table) -> int:
    """Penalties the judge has given so far (they count once the round is ruled)."""
    assert table.engine is not None
    return len(table.engine.rules.judge_log)


# -- body size --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "status"), [(MAX_BODY - 1, 200), (MAX_BODY, 200),
                                              (MAX_BODY + 1, 413)])
def test_flask_takes_a_body_of_exactly_64_kib_and_refuses_one_byte_more(
        client: FlaskClient, table: Table, size: int, status: int) -> None:
    assert MAX_BODY == 64 * 1024
    resp = post(client, "/api/penalty", raw=padded(PENALTY, size))
    assert resp.status_code == status, resp.get_data(as_text=True)[:200]
    assert blue_score(table) == (1 if status == 200 else 0)  # the penalty counted, or nothing did
    if status == 413:
        error = resp.get_json()["error"]
        assert error and "\n" not in error


def test_the_real_server_takes_a_body_of_exactly_64_kib(table: Table) -> None:
    """(waitress refuses a Content-Length of its max_request_body_size *or more*: set to 64 KiB
    it refused the 64 KiB body Flask takes.)"""
    server = serve_in_thread(table, "127.0.0.1", 0)
    try:
        got, body = request(server.port, "POST", "/api/penalty", body=padded(PENALTY, MAX_BODY),
                            headers={"X-Table-Pin": PIN, "Content-Type": "application/json"})
    finally:
        server.close()
    assert got == 200, body[:200]
    assert blue_score(table) == 1


def test_the_real_server_refuses_one_byte_more_before_it_is_sent(table: Table) -> None:
    server = serve_in_thread(table, "127.0.0.1", 0)
    try:
        sock = guest(server.port, "127.0.6.1")
        try:
            sock.sendall(b"POST /api/penalty HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Table-Pin: "
                         + PIN.encode() + b"\r\nContent-Type: application/json\r\n"
                         + f"Content-Length: {MAX_BODY + 1}\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data and (chunk := sock.recv(4096)):
                data += chunk  # answered at the headers: the body is never waited for
        finally:
            sock.close()
    finally:
        server.close()
    assert data.startswith(b"HTTP/1.1 413"), data[:80]
    assert blue_score(table) == 0


# -- table-log line size ----------------------------------------------------------------------------


def log_line(size: int) -> str:
    """A valid press line of exactly `size` characters (the seat's name padded after the JSON)."""
    line = json.dumps({"type": "press", "t_us": 1_150_000, "seat": "Green", "button": "slap"})
    return line + " " * (size - len(line))


@pytest.mark.parametrize(("size", "read"), [(MAX_LINE - 1, True), (MAX_LINE, True),
                                            (MAX_LINE + 1, False)])
def test_a_log_line_of_exactly_max_line_characters_is_read_and_one_more_is_refused(
        size: int, read: bool) -> None:
    head = [json.dumps(o) for o in LOGS["spank"][:2]]
    lines = [*head, log_line(size)]
    if read:
        got = list(read_lines(lines))
        assert [e.line for e in got] == [1, 2, 3] and got[-1].event.seat == "Green"  # type: ignore[attr-defined]
    else:
        with pytest.raises(LogError) as caught:
            list(read_lines(lines))
        assert caught.value.line == 3 and f"longer than {MAX_LINE} characters" in str(caught.value)


def test_the_line_limit_counts_characters_not_bytes() -> None:
    """A seat named in a script of three bytes a character: MAX_LINE characters are still one
    line the table itself may have written."""
    line = json.dumps({"type": "press", "t_us": 1, "seat": "Zoë", "button": "slap"},
                      ensure_ascii=False)
    line += " " * (MAX_LINE - len(line))
    assert len(line.encode()) > MAX_LINE
    head = [json.dumps(o, ensure_ascii=False) for o in LOGS["spank"][:2]]
    assert len(list(read_lines([*head, line]))) == 3


# -- option ranges ------------------------------------------------------------------------------


def numeric_options() -> list[tuple[str, Option]]:
    return [(game, opt) for game in games() for opt in rules_for(game).known_options().values()
            if opt.kind == "number"]


def least(game: str, opt: Option, seats: int) -> int:
    """The least value a table of `seats` seats takes, as the game itself rules it: from the
    option's `lo` up (a deck, say, may need a card per seat)."""
    cls = rules_for(game)
    value = opt.lo or 0
    while value < opt.hi:
        try:
            cls([f"S{i}" for i in range(seats)], {opt.name: value})
            return value
        except RulesError:
            value += 1
    return value


def game_line(game: str) -> dict[str, Any]:
    """A log's game line for the game at its fewest seats (three where it may)."""
    lo, hi = rules_for(game).SEATS
    return {"type": "game", "game": game, "seats": ["Ann", "Bob", "Cy", "Dee"][:max(lo, min(3, hi))],
            "options": {}}


NUMERIC = numeric_options()
IDS = [f"{g}-{o.name}" for g, o in NUMERIC]


def test_every_game_has_numeric_options_to_check() -> None:
    assert {g for g, _ in NUMERIC} == set(games()) and len(NUMERIC) >= 8


@pytest.mark.parametrize(("game", "opt"), NUMERIC, ids=IDS)
def test_the_setup_api_takes_each_options_least_and_greatest_value_and_refuses_beyond(
        client: FlaskClient, table: Table, game: str, opt: Option) -> None:
    lo, hi = least(game, opt, len(SEATS)), opt.hi
    assert hi is not None
    for value, ok in ((lo, True), (hi, True), (lo - 1, False), (hi + 1, False)):
        before = table.engine.game_id if table.engine else None
        resp = post(client, "/api/new-game", {"game": game, "options": {opt.name: value}})
        if ok:
            assert resp.status_code == 200, (value, resp.get_json())
            assert table.engine is not None and table.engine.rules.options[opt.name] == value
        else:
            assert resp.status_code == 400, (value, resp.get_json())
            error = resp.get_json()["error"]
            assert opt.name in error and "\n" not in error, error
            if value < opt.lo or value > hi:  # (between them: the game's own refusal)
                assert f"from {opt.lo} to {opt.hi}" in error, error
            assert table.engine is not None and table.engine.game_id == before  # nothing started


def game_line(game: str) -> dict[str, Any]:
    """The game line of a registered game: four seats, or as near as its range allows."""
    lo, hi = rules_for(game).SEATS
    return {"type": "game", "game": game, "seats": [
        f"Seat {i + 1}" for i in range(min(max(len(SEATS), lo), hi))]}


def replay_with(game: str, option: str, tmp_path: Path) -> tuple[int, str, str]:
    """`referee replay --option` on a log of the game's line alone (an option at an extreme of
    its range may make a whole game's events mean something else: only the range is checked)."""
    path = tmp_path / f"{game}.jsonl"
    path.write_text(log_text([game_line(game)]))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(["replay", str(path), "--option", option])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("game", "opt"), NUMERIC, ids=IDS)
def test_the_command_line_takes_each_options_least_and_greatest_value_and_refuses_beyond(
        tmp_path: Path, game: str, opt: Option) -> None:
    seats = len(game_line(game)["seats"])
    lo, hi = least(game, opt, seats), opt.hi
    assert hi is not None
    for value, ok in ((lo, True), (hi, True), (lo - 1, False), (hi + 1, False)):
        rc, out, err = replay_with(game, f"{opt.name}={value}", tmp_path)
        if ok:
            assert rc == 0, (value, err)
            assert out.strip().splitlines()[-1].startswith('{"type": "standings"'), out[-300:]
        else:
            assert rc == 2 and "Traceback" not in err, (value, err)
            assert len(err.strip().splitlines()) == 1 and opt.name in err, err


# -- unknown fields: refused for the field, not for anything else --------------------------------------


def prepared(table: Table, client: FlaskClient, path: str) -> None:
    """Make `path`'s plain request succeed now (undo needs a judge action to undo)."""
    if path == "/api/undo":
        assert post(client, "/api/penalty", PENALTY).status_code == 200


VALID: dict[str, dict[str, Any]] = {
    "/api/facts": {"round": 1, "pigs": 1},
    "/api/penalty": PENALTY,
    "/api/undo": {},
    "/api/pause": {},
    "/api/resume": {},
    "/api/start": {},
    "/api/end": {},
    "/api/standings": {},
    "/api/new-game": {"game": "pig"},
    "/api/press": {"seat": "Blue"},
}


def test_every_post_with_a_body_is_checked_here(client: FlaskClient) -> None:
    app = client.application
    posts = {r.rule for r in app.url_map.iter_rules() if "POST" in (r.methods or ())}
    # /api/pin declares no body (it checks the header only); /api/next-round: below; pairing's
    # bodies (no game is changed by them): tests/test_pairing.py
    assert posts - {"/api/pin", "/api/next-round", "/api/pair", "/api/pair/approve"} == set(VALID)


@pytest.mark.parametrize("path", [*VALID, "/api/next-round"])
def test_an_unknown_field_is_refused_for_that_field_alone(
        client: FlaskClient, table: Table, path: str) -> None:
    engine = table.engine
    assert engine is not None
    if path == "/api/next-round":
        engine.command("end")
        assert post(client, "/api/new-game", {"game": "spank-the-pig", "options": FAST}
                    ).status_code == 200  # a fresh game with no round open yet
        engine = table.engine
        assert engine is not None
    prepared(table, client, path)
    body = VALID.get(path, {})
    # a round being called turns from "cadence" to "race" when its go-word sounds, whatever
    # any request does: look once the call is over (the race then stays open: WINDOW_MS)
    deadline = time.monotonic() + 10
    while engine.snapshot()["phase"] == "cadence":
        assert time.monotonic() < deadline, "the call never ended"
        time.sleep(0.01)
    before = (table.engine.game_id if table.engine else None, engine.snapshot()["seats"],
              engine.snapshot()["phase"], engine.snapshot()["round"])
    resp = post(client, path, {**body, "zzz_unknown": 1})
    assert resp.status_code == 400, resp.get_data(as_text=True)
    error = resp.get_json()["error"]
    assert "zzz_unknown" in error and "\n" not in error, error
    now = table.engine
    assert now is not None
    assert (now.game_id, now.snapshot()["seats"], now.snapshot()["phase"],
            now.snapshot()["round"]) == before
    ok = post(client, path, body)  # the very same request without the field is taken
    assert ok.status_code in (200, 204), (path, ok.get_data(as_text=True))


def test_an_unknown_field_inside_a_seat_is_refused_for_that_field(
        client: FlaskClient, table: Table) -> None:
    seats = [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}]
    bad = post(client, "/api/new-game", {"game": "pig", "seats": [
        seats[0], {**seats[1], "led_pin": 5}, seats[2]]})
    assert bad.status_code == 400 and "led_pin" in bad.get_json()["error"]
    assert [s.name for s in table.config.seats] == SEATS
    good = post(client, "/api/new-game", {"game": "pig", "seats": seats})
    assert good.status_code == 200 and [s.name for s in table.config.seats] == ["Ann", "Bob", "Cy"]


def test_an_unknown_option_is_refused_by_name(client: FlaskClient, table: Table) -> None:
    engine = table.engine
    assert engine is not None
    before = engine.game_id
    bad = post(client, "/api/new-game", {"game": "pig", "options": {"zzz_speed": 3}})
    assert bad.status_code == 400 and "zzz_speed" in bad.get_json()["error"]
    assert table.engine is not None and table.engine.game_id == before
    assert post(client, "/api/new-game", {"game": "pig", "options": {"lives": 3}}
                ).status_code == 200
