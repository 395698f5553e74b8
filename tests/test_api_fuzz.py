"""The HTTP API fuzzed from its own OpenAPI document, and the scoreboard's security promises.

* Fuzzing: the document served at /api/openapi.json is turned into hypothesis strategies (one per
  operation: bodies from the request schema, then broken on purpose: wrong types, unknown fields,
  out-of-range numbers, bad JSON, bad UTF-8, deep nesting, huge bodies; random query strings and
  path parameters; right, wrong and missing PINs). Every request goes through Flask's test client to
  one long-lived table whose game evolves as accepted requests change it. Checked on every answer:
  never a 500, never a traceback or debugger page, only documented status codes, one-line JSON
  errors, successful JSON answers match their schema, and a rejected request changes nothing
  (the table log, the game, pause and the judge's actions are as they were).
* Security: the PIN on every state-changing POST (401), the wrong-PIN limit (429), no debug mode,
  loopback by default, no request path reaching the filesystem (checked with an audit hook on
  every file the process opens), exports that read only the table log.

Figures are printed as lines starting with "FIGURE" (run `pytest -s tests/test_api_fuzz.py`).
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from gpiozero.pins.mock import MockFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cli import main as cli
from referee.cli.table import Table
from referee.config import default_config
from referee.rules.registry import games
from referee.scoreboard.app import create_app, serve_in_thread, web_dir
from referee.scoreboard.openapi import openapi_document
from referee.scoreboard.pin import LOCK_S, MAX_TRIES, PinGuard
from referee.store.database import connect, export_lines
from tests.harness import SimClock, examples, mocked_pins

ROOT = Path(__file__).resolve().parent.parent
PIN = "2468"
GOOD_ADDR = "10.0.0.2"  # this address only ever sends the right PIN: it is never locked out
SEATS = ["Blue", "Red", "Green", "Yellow"]
FAST = {"tempo_ms": 100, "window_ms": 300, "pause_ms": 100}


def figure(name: str, value: str) -> None:
    sys.__stdout__.write(f"\nFIGURE {name}: {value}\n")
    sys.__stdout__.flush()


# -- files opened while a request is served ------------------------------------------------------

_opened: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; it records only while _opened is a list


class Opened:
    """Records the files this process opens inside the `with` block."""

    def __enter__(self) -> list[str]:
        global _opened
        _opened = []
        return _opened

    def __exit__(self, *exc: object) -> None:
        global _opened
        _opened = None


def allowed_file(path: str, db: Path) -> bool:
    """Files a request may open: the web assets, the table's database, Python's own modules."""
    real = os.path.realpath(path)
    roots = [os.path.realpath(web_dir()), os.path.realpath(db.parent), sys.prefix,
             sys.base_prefix, os.path.realpath(ROOT / "referee")]
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


# -- one table for the whole module ----------------------------------------------------------------


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    pins = mocked_pins()  # the suite's MockFactory, for the whole module
    pins.__enter__()
    db = tmp_path_factory.mktemp("fuzz") / "referee.db"
    table = Table(default_config(SEATS), db=db, mock=True, no_speech=True, pin=PIN,
                  out=io.StringIO(), auto=False)
    table.start("spank-the-pig", FAST, resume=False)
    clock = SimClock.in_seconds()
    app = create_app(table, clock=clock)
    try:
        yield {"table": table, "app": app, "client": app.test_client(), "clock": clock, "db": db}
    finally:
        table.close()
        pins.__exit__(None, None, None)


def fingerprint(table: Table) -> tuple[Any, ...]:
    """What a rejected request must not change: the log, the game, pause, the judge's actions."""
    engine = table.engine
    assert engine is not None
    engine.command("snapshot")  # everything queued before now (e.g. a press) has been logged
    conn = connect(table.store.path, readonly=True)
    try:
        events = conn.execute("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM events").fetchone()
        games = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        # "ruled" marks record a race closing as time passes, not anything a request did
        marks = conn.execute("SELECT COUNT(*) FROM marks WHERE kind != 'ruled'").fetchone()[0]
    finally:
        conn.close()
    return (engine.game_id, tuple(events), games, marks, engine.paused, engine.ended,
            len(engine.rules.judge_log), table.pin, tuple(s.name for s in table.config.seats))


# -- from the OpenAPI document to strategies -------------------------------------------------------

def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = doc
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=10))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10)

# Values that reach deeper than random text: real seats, games, option names, rounds.
HINTS: dict[str, st.SearchStrategy[Any]] = {
    "seat": st.sampled_from([*SEATS, "judge", "Purple", "blue", " Blue ", ""]),
    "name": st.sampled_from(["Blue", "Red", "Green", "Yellow", "Purple", "judge", "A", "A,B", " "]),
    "game": st.sampled_from([*list(games()), "chess", "", "../pig"]),
    "round": st.one_of(st.integers(1, 2), st.integers(-2, 6)),
    "button": st.sampled_from(["slap", "double", "yes", "no", "undo", "foot"]),
    "reason": st.sampled_from(["slapped the hippo", "x" * 201, ""]),
}
OPTION_NAMES = sorted({o.name for cls in games().values() for o in cls.known_options().values()})


def from_schema(doc: dict[str, Any], schema: dict[str, Any], key: str = "",
                depth: int = 0) -> st.SearchStrategy[Any]:
    """Values the schema allows (roughly; the server is the judge of that)."""
    schema = resolve(doc, schema)
    if depth > 4:
        return json_scalars
    hint = HINTS.get(key)
    for combo in ("oneOf", "anyOf"):
        if combo in schema:
            return st.one_of([from_schema(doc, s, key, depth + 1) for s in schema[combo]])
    if "enum" in schema:
        base: st.SearchStrategy[Any] = st.sampled_from(schema["enum"])
        return hinted(hint, base)
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return st.one_of([from_schema(doc, {**schema, "type": k}, key, depth) for k in kinds])
    if kinds == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        fields = {k: from_schema(doc, s, k, depth + 1) for k, s in props.items()}
        base = st.fixed_dictionaries({k: v for k, v in fields.items() if k in required},
                                     optional={k: v for k, v in fields.items() if k not in required})
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            if key == "options" or not props:
                keys = st.sampled_from(OPTION_NAMES) if key == "options" else st.text(max_size=8)
                return st.dictionaries(keys, from_schema(doc, extra, "", depth + 1), max_size=4)
        return base
    if kinds == "array":
        items = schema.get("items", {})
        return st.lists(from_schema(doc, items, key, depth + 1),
                        min_size=schema.get("minItems", 0),
                        max_size=min(schema.get("maxItems", 5), 9))
    if kinds == "integer":
        lo, hi = schema.get("minimum", -(2**31)), schema.get("maximum", 2**31)
        base = st.integers(lo, hi)
    elif kinds == "number":
        base = st.floats(allow_nan=False, allow_infinity=False)
    elif kinds == "boolean":
        base = st.booleans()
    elif kinds == "null":
        base = st.none()
    elif kinds == "string":
        if "pattern" in schema:
            base = st.from_regex(schema["pattern"], fullmatch=True)
        else:
            base = st.text(min_size=schema.get("minLength", 0),
                           max_size=min(schema.get("maxLength", 20), 50))
    else:
        base = json_values
    return hinted(hint, base)


def hinted(hint: st.SearchStrategy[Any] | None, base: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the hint (values that reach the rules), sometimes anything the schema allows."""
    if hint is None:
        return base
    return st.integers(0, 3).flatmap(lambda i: base if i == 0 else hint)


@st.composite
def broken(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """A value from the schema, then broken: wrong types, unknown fields, edges of ranges."""
    value = copy.deepcopy(draw(valid))  # examples are shared: never break the original
    if isinstance(value, dict):
        for _ in range(draw(st.integers(1, 3))):
            action = draw(st.sampled_from(["set", "drop", "add", "type"]))
            keys = sorted(value)
            if action == "set" and keys:
                value[draw(st.sampled_from(keys))] = draw(st.one_of(
                    json_values, st.sampled_from([0, -1, 2**63, 10**30, 1.5, True, "", "1", [], {},
                                                  "\x00", "é" * 300, None])))
            elif action == "drop" and keys:
                value.pop(draw(st.sampled_from(keys)))
            elif action == "add":
                value[draw(st.text(max_size=8))] = draw(json_values)
            else:
                return draw(json_values)
        return value
    return draw(json_values)


JUDGE_ACTIONS = ("/api/facts", "/api/penalty", "/api/undo", "/api/next-round")
EXAMPLES: dict[str, list[dict[str, Any]]] = {
    "/api/facts": [{"round": 1, "pigs": 1}, {"round": 1, "pigs": 0, "doubles": []},
                   {"round": 1, "doubles": ["hippo"]}, {"round": 2, "void": True}],
    "/api/penalty": [{"round": 1, "seat": "Red", "count": 2, "reason": "slapped the hippo"}],
    "/api/press": [{"seat": "Blue"}, {"seat": "Red", "button": "double"},
                   {"seat": "judge", "button": "yes"}],
    "/api/new-game": [{"game": "pig", "seats": [{"name": s} for s in SEATS]},
                      {"game": "spank-the-pig", "options": {"deck": 8, "tie_us": 0},
                       "seats": [{"name": s} for s in SEATS]}],
}
RAW_BODIES = [b"", b"{", b"[]", b"null", b"1", b'"x"', b"\xff\xfe", b'{"round": NaN}',
              b'{"round": Infinity}', b"[" * 10_000, b'{"a":' * 5000, b"\x00" * 10,
              b'{"round": 1, "round": 2}', b" " * 100, b'{"pigs": 1e400, "round": 1}',
              b'{"seat": "\\ud800"}', b"x" * (64 * 1024 + 1)]

queries = st.one_of(
    st.just(""),
    st.dictionaries(st.text(max_size=6), st.text(max_size=12), max_size=3).map(urlencode),
    st.sampled_from(["%00", "%ff%fe", "a=1&a=2", "a[]=1", "x=" + "y" * 10_000, "=&=&&",
                     "pin=2468", "debug=1", "__debugger__=yes&cmd=resource&f=style.css",
                     "path=../../etc/passwd", "file=/etc/passwd", "round=1%0d%0aX-Bad: 1"]))
content_types = st.sampled_from(["application/json", "application/json; charset=latin-1",
                                 "text/plain", "multipart/form-data; boundary=x",
                                 "application/x-www-form-urlencoded", None])


@st.composite
def requests_for(draw: st.DrawFn, doc: dict[str, Any], path: str, method: str,
                 op: dict[str, Any]) -> dict[str, Any]:
    real_path = path
    for param in op.get("parameters", []):
        if param.get("in") == "path":
            value = draw(st.one_of(st.integers(1, 3).map(str), st.integers(-3, 5).map(str),
                                   st.integers(2**31, 2**80).map(str),
                                   st.sampled_from(["0", "1e3", "abc", "..", "%2e%2e", "1;DROP",
                                                    "..%2f..%2fetc%2fpasswd", "1.0", " 1"]),
                                   st.text(max_size=8).map(lambda s: quote(s, safe=""))))
            real_path = real_path.replace("{" + param["name"] + "}", value)
    query = draw(queries)
    request: dict[str, Any] = {"method": method, "path": real_path, "query": query,
                               "template": path, "content_type": "application/json"}
    if method == "post":
        pin = draw(st.one_of(st.just(PIN), st.just(PIN), st.just(PIN), st.sampled_from(
            [None, "", "0000", PIN + " ", "２４６８", "x" * 1000, "2468\x00"])))
        request["pin"] = pin
        request["addr"] = GOOD_ADDR if pin == PIN else f"10.9.{draw(st.integers(0, 255))}." \
                                                        f"{draw(st.integers(1, 254))}"
        schema = op.get("requestBody", {}).get("content", {}).get("application/json", {})
        valid = from_schema(doc, schema.get("schema", {"type": "object"}))
        if path in EXAMPLES:  # bodies the table accepts, so accepted requests get fuzzed too
            valid = st.one_of(valid, st.sampled_from(EXAMPLES[path]))
        kind = draw(st.sampled_from(["valid", "valid", "valid", "broken", "broken", "any", "raw"]))
        if kind == "raw":
            request["data"] = draw(st.sampled_from(RAW_BODIES))
        else:
            value = draw(valid if kind == "valid" else broken(valid) if kind == "broken"
                         else json_values)
            request["data"] = json.dumps(value).encode()
        request["content_type"] = draw(st.one_of(st.just("application/json"), content_types))
    return request


def documented(op: dict[str, Any]) -> set[int]:
    return {int(code) for code in op.get("responses", {}) if code.isdigit()}


def validate(doc: dict[str, Any], schema: dict[str, Any], value: Any, where: str = "$") -> None:
    """A small JSON-schema check (types, required, enum, items, properties) of a response."""
    schema = resolve(doc, schema)
    if "oneOf" in schema or "anyOf" in schema:
        errors = []
        for s in schema.get("oneOf", schema.get("anyOf")):
            try:
                validate(doc, s, value, where)
                return
            except AssertionError as exc:
                errors.append(str(exc))
        raise AssertionError(f"{where}: matches none of {errors}")
    kinds = schema.get("type")
    if kinds is not None:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
                 "integer": int, "number": int | float}
        ok = any(isinstance(value, types[k]) and not (k in ("integer", "number")
                                                      and isinstance(value, bool)) for k in kinds)
        assert ok, f"{where}: {value!r} is not {kinds}"
    if "enum" in schema:
        assert value in schema["enum"], f"{where}: {value!r} not in {schema['enum']}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            assert key in value, f"{where}: missing {key!r}"
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                validate(doc, sub, value[key], f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(doc, schema["items"], item, f"{where}[{i}]")


TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|"
                       r"Werkzeug Debugger|__debugger__|werkzeug\.debug", re.I)


def send(client: FlaskClient, req: dict[str, Any]) -> Any:
    url = req["path"] + ("?" + req["query"] if req["query"] else "")
    headers = {}
    if req.get("pin") is not None:
        headers["X-Table-Pin"] = req["pin"]
    environ = {"REMOTE_ADDR": req.get("addr", GOOD_ADDR)}
    if req["method"] == "get":
        if req["template"] == "/api/events":
            resp = client.get(url, environ_base=environ, buffered=False)
            first = next(iter(resp.response), b"") if resp.status_code == 200 else resp.get_data()
            resp.close()
            return resp.status_code, first, resp.headers
        resp = client.get(url, headers=headers, environ_base=environ)
    else:
        kwargs: dict[str, Any] = {"data": req["data"]}
        if req["content_type"] is not None:
            kwargs["content_type"] = req["content_type"]
        resp = client.post(url, headers=headers, environ_base=environ, **kwargs)
    return resp.status_code, resp.get_data(), resp.headers


def test_the_served_document_is_the_one_fuzzed(live: dict[str, Any]) -> None:
    resp = live["client"].get("/api/openapi.json")
    assert resp.status_code == 200
    assert resp.get_json() == json.loads(json.dumps(openapi_document()))
    posts = {p for p, ops in openapi_document()["paths"].items() if "post" in ops}
    routes = {r.rule for r in live["app"].url_map.iter_rules() if "POST" in (r.methods or ())}
    assert routes == posts, "a POST route is missing from the OpenAPI document (or the reverse)"


def check_answer(doc: dict[str, Any], op: dict[str, Any], table: Table, before: tuple[Any, ...],
                 status: int, body: bytes, headers: Any) -> None:
    """What every answer must be: never a 500, a traceback or a debugger page; only documented
    status codes; one-line JSON errors; a rejected request changes nothing; a successful JSON
    answer matches its schema."""
    text = body.decode("utf-8", "replace")
    assert status != 500, text[:500]
    assert not TRACEBACK.search(text), text[:2000]
    allowed = documented(op) | {404, 405, 413, 400}
    assert status in allowed, (status, text[:300])
    kind = headers.get("Content-Type", "")
    if status >= 400:
        assert kind.startswith(("application/json", "text/html")), kind
        if kind.startswith("application/json"):
            error = json.loads(body)["error"]
            assert isinstance(error, str) and error and "\n" not in error
        assert fingerprint(table) == before, f"a rejected request ({status}) changed the game"
    elif status == 200 and kind.startswith("application/json"):
        schema = op["responses"]["200"]["content"]["application/json"].get("schema", {})
        validate(doc, schema, json.loads(body))


# One accepted request for every operation, in an order a table allows (the judge's actions in a
# round, undo after one of them, end before the next game): "every operation is accepted as the
# document says" holds by construction, not by the luck of a fuzzer's draw.
ACCEPTED_WALK: list[tuple[str, str, Any]] = [
    ("get", "/", None), ("get", "/judge", None), ("get", "/setup", None),
    ("get", "/history", None), ("get", "/box", None), ("get", "/i18n.js", None),
    ("get", "/api/openapi.json", None),
    ("get", "/api/setup", None), ("get", "/api/state", None), ("get", "/api/events", None),
    ("post", "/api/pin", {}), ("post", "/api/next-round", {}),
    ("post", "/api/press", {"seat": "Blue"}), ("post", "/api/facts", {"round": 1, "pigs": 1}),
    ("post", "/api/penalty", {"round": 1, "seat": "Red"}), ("post", "/api/undo", {}),
    ("post", "/api/pause", {}), ("post", "/api/resume", {}), ("post", "/api/start", {}),
    ("post", "/api/standings", {}), ("post", "/api/end", {}),
    ("get", "/api/games", None), ("get", "/api/games/{game_id}/log", None),
    ("get", "/api/stats", None), ("post", "/api/pair", {}), ("get", "/api/pair", None),
    ("post", "/api/pair/approve", {"code": "asked"}),  # the code /api/pair gave, from the box
    ("post", "/api/new-game", {"game": "pig"}),
]


def test_every_operation_is_accepted_as_the_document_says(mock_factory: MockFactory,
                                                          tmp_path: Path) -> None:
    doc = json.loads(json.dumps(openapi_document()))
    operations = {(m, p) for p, ops in doc["paths"].items() for m in ops}
    assert {(m, p) for m, p, _ in ACCEPTED_WALK} == operations, "an operation has no accepted walk"
    table = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
                  pin=PIN, out=io.StringIO(), auto=False)
    try:
        table.start("spank-the-pig", FAST, resume=False)
        client = create_app(table, clock=SimClock.in_seconds()).test_client()
        asked = ""
        for method, path, body in ACCEPTED_WALK:
            req: dict[str, Any] = {"method": method, "path": path.replace("{game_id}", "1"),
                                   "query": "", "template": path,
                                   "content_type": "application/json"}
            if method == "post":
                addr = "127.0.0.1" if path == "/api/pair/approve" else GOOD_ADDR
                body = {"code": asked} if path == "/api/pair/approve" else body
                req.update(pin=PIN, addr=addr, data=json.dumps(body).encode())
            status, answer, headers = send(client, req)
            if path == "/api/pair" and method == "post":
                asked = json.loads(answer)["code"]
            assert 200 <= status < 300, (method, path, status, answer[:300])
            check_answer(doc, doc["paths"][path][method], table, (), status, answer, headers)
        assert table.engine is not None and table.engine.rules.NAME == "pig"  # the walk's end
    finally:
        table.close()


# Derandomized: the same requests every run, so a failure is the code's, never one run's draw.
# 500 requests reach every operation (asserted) with right, wrong and missing PINs, broken and
# valid bodies; REFEREE_FUZZ_EXAMPLES=4000 explores further (docs/reliability.md).
FUZZ_EXAMPLES = int(os.environ.get("REFEREE_FUZZ_EXAMPLES", examples(500)))


@pytest.mark.timeout(400)
def test_every_operation_fuzzed_from_the_openapi_document(live: dict[str, Any]) -> None:
    doc = json.loads(json.dumps(openapi_document()))
    table: Table = live["table"]
    operations = [(p, m, op) for p, ops in doc["paths"].items() for m, op in ops.items()]
    stats: Counter[tuple[str, int]] = Counter()
    # the judge's actions need a round (and undo a judge action) first: drawn more often
    weighted = [o for o in operations for _ in range(4 if o[0] in JUDGE_ACTIONS else 1)]

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
              database=None, derandomize=True)
    @given(data=st.data())
    def one_request(data: st.DataObject) -> None:
        path, method, op = data.draw(st.sampled_from(weighted), label="operation")
        req = data.draw(requests_for(doc, path, method, op), label="request")
        before = fingerprint(table)
        with Opened() as opened:
            status, body, headers = send(live["client"], req)
        stats[(f"{method.upper()} {path}", status)] += 1
        assert all(allowed_file(p, live["db"]) for p in opened), opened
        check_answer(doc, op, table, before, status, body, headers)
        engine = table.engine
        if engine is not None and (engine.rules.status().over or engine.ended):
            # keep a game going for the next requests
            post(live["client"], "/api/new-game", {"game": "spank-the-pig", "options": FAST})

    started = time.monotonic()
    one_request()
    seconds = time.monotonic() - started
    by_op: dict[str, Counter[int]] = {}
    for (name, status), n in stats.items():
        by_op.setdefault(name, Counter())[status] += n
    total = sum(stats.values())
    lines = "; ".join(f"{name} {dict(sorted(c.items()))}" for name, c in sorted(by_op.items()))
    figure("API fuzz", f"{total} requests in {seconds:.1f} s over {len(by_op)} operations, "
                       f"none answered 500. Statuses: {lines}")
    assert len(by_op) == len(operations), sorted(by_op)
    accepted = {name for name, c in by_op.items() if any(200 <= s < 300 for s in c)}
    assert len(accepted) >= len(operations) // 2, f"the fuzz rarely got past the checks: {accepted}"


# ================================================================================================
# Security
# ================================================================================================

STATE_CHANGING = ["/api/facts", "/api/penalty", "/api/undo", "/api/pause", "/api/resume",
                  "/api/start",
                  "/api/end", "/api/next-round", "/api/standings", "/api/new-game", "/api/press",
                  "/api/pin"]
SAMPLE_BODIES: dict[str, Any] = {
    "/api/facts": {"round": 1, "pigs": 1}, "/api/penalty": {"round": 1, "seat": "Blue"},
    "/api/new-game": {"game": "pig"}, "/api/press": {"seat": "Blue"},
}


@pytest.fixture
def fresh(tmp_path: Path, mock_factory: MockFactory) -> Iterator[dict[str, Any]]:
    table = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
                  pin=PIN, out=io.StringIO(), auto=False)
    table.start("spank-the-pig", FAST, resume=False)
    table.engine.command("next_round")  # type: ignore[union-attr]
    clock = SimClock.in_seconds()
    app = create_app(table, clock=clock)
    yield {"table": table, "app": app, "client": app.test_client(), "clock": clock,
           "db": tmp_path / "referee.db"}
    table.close()


def post(client: FlaskClient, path: str, body: Any = None, *, pin: str | None = PIN,
         addr: str = GOOD_ADDR) -> Any:
    headers = {"X-Table-Pin": pin} if pin is not None else {}
    return client.post(path, data=json.dumps(body if body is not None else {}), headers=headers,
                       content_type="application/json", environ_base={"REMOTE_ADDR": addr})


# Pairing changes no game: asking gives a code the judge must approve at the box, and approving is
# taken from the box's own addresses only (tests/test_pairing.py)
PAIRING = ["/api/pair", "/api/pair/approve"]


def test_every_state_changing_post_needs_the_pin(fresh: dict[str, Any]) -> None:
    client, table, app = fresh["client"], fresh["table"], fresh["app"]
    posts = sorted(r.rule for r in app.url_map.iter_rules() if "POST" in (r.methods or ())
                   and r.rule not in PAIRING)
    assert posts == sorted(STATE_CHANGING)
    assert post(client, "/api/pair/approve", {"code": "0000"}, addr="10.1.0.99").status_code == 403
    doc = openapi_document()
    before = fingerprint(table)
    for i, path in enumerate(posts):
        assert doc["paths"][path]["post"]["security"] == [{"TablePin": []}]
        body = SAMPLE_BODIES.get(path, {})
        missing = post(client, path, body, pin=None, addr=f"10.1.0.{i + 1}")
        wrong = post(client, path, body, pin="1357", addr=f"10.1.0.{i + 1}")
        # 429 once the wrong PINs of the earlier paths have spent the table-wide budget
        assert missing.status_code == 401 and wrong.status_code in (401, 429), path
        assert "PIN" in missing.get_json()["error"]
    # no GET (or HEAD, OPTIONS) changes anything either
    for rule in app.url_map.iter_rules():
        if "<" not in rule.rule and rule.rule != "/api/events" and "GET" in (rule.methods or ()):
            assert client.get(rule.rule).status_code in (200, 404), rule.rule
            client.head(rule.rule)
            client.options(rule.rule)
    assert fingerprint(table) == before
    fresh["clock"].advance(s=60)  # the wrong PINs above spent the table-wide budget: let it refill
    assert post(client, "/api/pause").status_code == 200  # the right PIN works
    assert table.engine is not None and table.engine.paused


def test_wrong_pins_are_limited_per_address(fresh: dict[str, Any]) -> None:
    client, clock, table = fresh["client"], fresh["clock"], fresh["table"]
    before = fingerprint(table)
    for _ in range(MAX_TRIES):
        assert post(client, "/api/pause", pin="0000", addr="10.2.0.7").status_code == 401
    locked = post(client, "/api/pause", pin=PIN, addr="10.2.0.7")  # even the right PIN
    assert locked.status_code == 429 and int(locked.headers["Retry-After"]) > 0
    assert post(client, "/api/pin", addr="10.2.0.8").status_code == 204  # others are not locked
    assert fingerprint(table) == before
    clock.advance(s=LOCK_S + 1)
    assert post(client, "/api/pin", addr="10.2.0.7").status_code == 204
    # 10 000 guesses from one address take 2000 lock periods: over 33 hours at 60 s each
    guard = PinGuard(lambda: PIN, clock=clock)
    tries = sum(1 for _ in range(10_000) if guard.check("10.3.0.1", "9999")[0] == 401)
    assert tries == MAX_TRIES
    figure("PIN limit", f"{MAX_TRIES} wrong tries then 429 for {LOCK_S:.0f} s per address: "
                        f"all 10 000 PINs take >= {10_000 / MAX_TRIES * LOCK_S / 3600:.0f} h")


def test_the_pin_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every PIN check, right or wrong, of any length, is decided by hmac.compare_digest (whose
    time does not depend on where the first wrong digit is), never by `==`."""
    import hmac

    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    guard = PinGuard(lambda: "1357")
    assert guard.check("10.4.0.1", "1357") == (0, 0.0)
    assert guard.check("10.4.0.1", "1358")[0] == 401
    assert guard.check("10.4.0.1", "13")[0] == 401
    assert guard.check("10.4.0.1", "é")[0] == 401
    assert compared == [(b"1357", b"1357"), (b"1358", b"1357"), (b"13", b"1357"),
                        ("é".encode(), b"1357")]
    # the comparator's answer is the decision: one that says "equal" lets a wrong PIN in
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: True)
    assert guard.check("10.4.0.2", "0000") == (0, 0.0)


def test_no_debug_mode_even_if_the_environment_asks(fresh: dict[str, Any], monkeypatch: Any) -> None:
    monkeypatch.setenv("FLASK_DEBUG", "1")
    monkeypatch.setenv("FLASK_ENV", "development")
    app: Flask = create_app(fresh["table"], clock=fresh["clock"])
    assert app.debug is False and app.config["DEBUG"] is False
    assert app.config["PROPAGATE_EXCEPTIONS"] is False and not app.testing
    client = app.test_client()
    for url in ("/console", "/?__debugger__=yes&cmd=resource&f=style.css",
                "/api/state?__debugger__=yes&cmd=printpin&s=x"):
        resp = client.get(url)
        assert b"Werkzeug" not in resp.get_data() and b"debugger" not in resp.get_data().lower()
    # an unexpected error is one JSON line, not a traceback
    def boom() -> None:
        raise RuntimeError("secret detail /etc/passwd")

    app.view_functions["api.get_state"] = boom
    resp = client.get("/api/state")
    assert resp.status_code == 500 and resp.get_json() == {"error": "internal error; "
                                                           "the referee logged it"}


TRAVERSALS = [
    "/api/games/../../etc/passwd", "/api/games/..%2f..%2fetc%2fpasswd", "/api/games/1/../../../etc/passwd",
    "/api/games/%2e%2e/%2e%2e/etc/passwd/log", "/api/games/1%2f..%2f..%2fpyproject.toml/log",
    "/static/../pyproject.toml", "/static/%2e%2e/pyproject.toml", "/static/..%2fpyproject.toml",
    "/static/..%5cpyproject.toml", "/static//etc/passwd", "/static/%2fetc%2fpasswd",
    "/static/....//....//pyproject.toml", "/static/%252e%252e/pyproject.toml",
    "/static/../../referee/scoreboard/app.py", "/../pyproject.toml", "//etc/passwd",
    "/api/games/-1/log", "/api/games/0/log", "/api/games/99999999999999999999/log",
    "/api/games/1.0/log", "/api/games/%201/log", "/api/games/1;ATTACH/log",
    "/api/games/../referee.db", "/history/../pyproject.toml", "/box/../../etc/passwd",
]
SECRETS = (b"root:", b"[project]", b"SQLite format", b"import ", b"table-referee")


def raw_get(port: int, target: str) -> tuple[int, bytes]:
    """A request line sent as it is (clients normalise '..'; an attacker does not)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


def test_no_request_path_reaches_the_filesystem(fresh: dict[str, Any]) -> None:
    client, db = fresh["client"], fresh["db"]
    for url in TRAVERSALS:
        with Opened() as opened:
            resp = client.get(url)
            if resp.status_code in (301, 308):  # "//" merged: the redirect stays on the site
                location = urlsplit(resp.headers["Location"])
                assert location.netloc in ("", "localhost") and ".." not in location.path
                resp = client.get(location.path)
        body = resp.get_data()
        assert resp.status_code in (400, 404, 421), (url, resp.status_code)  # 421: not our Host
        assert not any(s in body for s in SECRETS if s != b"table-referee"), url
        assert all(allowed_file(p, db) for p in opened), (url, opened)
        assert not any("passwd" in p or "pyproject" in p for p in opened), (url, opened)
    server = serve_in_thread(fresh["table"], "127.0.0.1", 0)
    try:
        for target in TRAVERSALS + ["/static/../../../../../../etc/passwd",
                                    "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
                                    "http://127.0.0.1/static/../pyproject.toml"]:
            with Opened() as opened:
                status, body = raw_get(server.port, target)
            assert status in (308, 400, 404), (target, status)
            assert not any(s in body for s in SECRETS if s != b"table-referee"), target
            assert not any("passwd" in p or "pyproject" in p for p in opened), (target, opened)
        status, body = raw_get(server.port, "/static/app.css")
        assert status in (200, 404)
    finally:
        server.close()


def test_exports_read_only_the_table_log(fresh: dict[str, Any]) -> None:
    client, table, db = fresh["client"], fresh["table"], fresh["db"]
    game_id = table.engine.game_id  # type: ignore[union-attr]
    with Opened() as opened:
        resp = client.get(f"/api/games/{game_id}/log")
    assert resp.status_code == 200
    conn = connect(db, readonly=True)
    try:
        expected = "\n".join(export_lines(conn, game_id)) + "\n"
    finally:
        conn.close()
    assert resp.get_data(as_text=True) == expected
    assert resp.headers["Content-Disposition"] == f'attachment; filename="game-{game_id}.jsonl"'
    assert all(os.path.realpath(p).startswith(os.path.realpath(db)) or allowed_file(p, db)
               for p in opened), opened
    for query in ("?path=/etc/passwd", "?file=../../pyproject.toml", "?db=/etc/passwd",
                  "?game=../../etc/passwd"):
        again = client.get(f"/api/games/{game_id}/log{query}")
        assert again.get_data(as_text=True) == expected  # the query string is not read at all


def test_the_laptop_default_listens_on_127_0_0_1(tmp_path: Path) -> None:
    """`referee play --mock` with no config and no --host serves on loopback only."""
    args = cli.build_parser().parse_args(["play", "spank-the-pig", "--mock"])
    assert args.host is None and cli.table_config(args).host == "127.0.0.1"
    assert serve_in_thread.__defaults__ == ("127.0.0.1", 8000)  # type: ignore[attr-defined]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli.main", "play", "spank-the-pig", "--mock", "--no-speech",
         "--db", str(tmp_path / "t.db"), "--port", str(port), "--option", "pause_ms=600000"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 20
        listening: set[str] = set()
        while time.monotonic() < deadline and not listening:
            for name in ("/proc/net/tcp", "/proc/net/tcp6"):
                for line in Path(name).read_text().splitlines()[1:]:
                    local, state = line.split()[1], line.split()[3]
                    if state == "0A" and int(local.split(":")[1], 16) == port:
                        listening.add(local.split(":")[0])
            time.sleep(0.1)
        assert listening == {"0100007F"}, f"listening on {listening} (hex), not only 127.0.0.1"
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def test_the_pi_service_listens_on_the_lan_only_as_configured() -> None:
    service = (ROOT / "hardware" / "table-referee.service").read_text()
    exec_start = next(line for line in service.splitlines() if line.startswith("ExecStart="))
    assert "--config" in exec_start and "--host" not in exec_start
    example = (ROOT / "hardware" / "config.example.toml").read_text()
    assert re.search(r'^host = "0\.0\.0\.0"', example, re.M), "the Pi's config opens the LAN"
    assert re.search(r'^pin = "\d{4}"', example, re.M)

