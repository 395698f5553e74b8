"""One declaration per message: table-log lines and HTTP bodies are each declared once, as msgspec
Structs, and both the server's checks and `/api/openapi.json` come from those declarations.

What is proved here, so the document cannot drift from what the server accepts:
* for every request body, the document's JSON Schema and the server's decoder give the same answer
  on thousands of bodies built around each schema's edges (lengths, ranges, types, missing and
  unknown fields): what one accepts the other accepts;
* through the real server: a body it accepts always validates against the document, a body the
  document refuses is always a 400, every field the document lists is accepted for some game, and an
  unknown field is refused by both, by name;
* every answer the server sends (the state in every phase of every game, each action's answer,
  history, stats, standings) validates against the document, and every field in it is declared;
* table-log lines round-trip through their declarations, output lines match theirs, extra fields in
  a log line are allowed, and a bad line is one error naming the line and the field.

JSON Schema counts 1.0 as an integer; the server reads the JSON as written and refuses 1.0 where a
whole number is declared, so the schema checks here use JSON's own integer type (no fraction part).
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from flask.testing import FlaskClient
from gpiozero.pins.mock import MockFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cli.table import Table
from referee.config import default_config
from referee.events import (
    AwaitingLine,
    Cue,
    Facts,
    GameStart,
    Penalty,
    Press,
    RulingLine,
    StandingsLine,
    Undo,
)
from referee.rules.registry import games as registered_games
from referee.scoreboard import bodies
from referee.scoreboard.app import create_app
from referee.scoreboard.openapi import openapi_document
from referee.store.tablelog import (
    LogError,
    dumps,
    event_from_json,
    event_from_line,
    event_to_json,
    replay,
)
from tests.harness import close_table, examples

PIN = "2468"
ADDR = "10.0.0.2"
SEATS = ["Blue", "Red", "Green", "Yellow"]
QUIET = {"pause_ms": 600_000}  # every game takes it: no round starts unless a test asks
DOC = json.loads(json.dumps(openapi_document()))  # as served: plain JSON
SHAPES = {cls.__name__: cls for cls in bodies.requests()}

_integer = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, v: isinstance(v, int) and not isinstance(v, bool))
Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_integer)


def schema_of(name: str) -> dict[str, Any]:
    return DOC["components"]["schemas"][name]  # type: ignore[no-any-return]


def validator(ref: dict[str, Any]) -> Any:
    return Validator({"components": DOC["components"], **ref})


def documented(value: Any, ref: dict[str, Any]) -> bool:
    return bool(validator(ref).is_valid(value))


def request_bodies() -> list[tuple[str, str]]:
    """(path, schema name) of every operation whose body the document declares."""
    out = []
    for path, ops in DOC["paths"].items():
        body = ops.get("post", {}).get("requestBody")
        if body is not None:
            out.append((path, body["content"]["application/json"]["schema"]["$ref"].rsplit("/")[-1]))
    return sorted(out)


def decodes(shape: type[msgspec.Struct], value: Any) -> bool:
    try:
        bodies.decode(shape, json.dumps(value).encode())
    except bodies.BodyError:
        return False
    return True


# -- bodies built around the edges of a schema -------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False,
                                                                        allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6)
WRONG = st.sampled_from([None, True, 0, -1, 1.5, 1.0, "", " ", "1", "x", [], {}, ["x"], {"a": 1}])


def edges(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values just inside and just outside what `schema` allows, and values of the wrong type."""
    while "$ref" in schema:
        schema = schema_of(schema["$ref"].rsplit("/")[-1])
    if depth > 3:
        return json_values
    if "anyOf" in schema:
        return st.one_of([edges(s, depth + 1) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.one_of(st.sampled_from(schema["enum"]), st.sampled_from(["bogus", "SLAP"]), WRONG)
    kind = schema.get("type")
    near: st.SearchStrategy[Any]
    if kind == "integer":
        lo, hi = schema.get("minimum", -(2**40)), schema.get("maximum", 2**40)
        near = st.one_of(st.sampled_from([lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 2**64]),
                         st.integers(lo, hi))
    elif kind == "boolean":
        near = st.booleans()
    elif kind == "null":
        near = st.none()
    elif kind == "string":
        lo, hi = schema.get("minLength", 0), schema.get("maxLength", 12)
        sizes = [n for n in {lo - 1, lo, lo + 1, hi, hi + 1} if n >= 0]
        near = st.one_of(st.sampled_from(sizes).map(lambda n: "x" * n),
                         st.sampled_from(sizes).map(lambda n: " " * n),
                         st.text(max_size=hi + 1))
        if "pattern" in schema:
            near = st.one_of(near, st.from_regex(schema["pattern"], fullmatch=True))
    elif kind == "array":
        lo, hi = schema.get("minItems", 0), min(schema.get("maxItems", 4), 9)
        item = edges(schema.get("items", {}), depth + 1)
        near = st.integers(max(0, lo - 1), hi + 1).flatmap(
            lambda n: st.lists(item, min_size=n, max_size=n))
    elif kind == "object":
        near = objects(schema, depth)
    else:
        near = json_values
    return st.one_of(near, near, near, WRONG)


def objects(schema: dict[str, Any], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    props = schema.get("properties", {})
    required = set(schema.get("required", ()))
    fields = {k: edges(v, depth + 1) for k, v in props.items()}
    extra = schema.get("additionalProperties")
    base = st.fixed_dictionaries({k: v for k, v in fields.items() if k in required},
                                 optional={k: v for k, v in fields.items() if k not in required})
    if isinstance(extra, dict):  # a map: keys of every length around the limit
        most = schema.get("propertyNames", {}).get("maxLength", 8)
        keys = st.one_of(st.sampled_from(sorted(props) or ["k"]),
                         st.sampled_from([0, most, most + 1]).map(lambda n: "k" * n))
        base = st.dictionaries(keys, edges(extra, depth + 1), max_size=3)

    @st.composite
    def shaken(draw: st.DrawFn) -> dict[str, Any]:
        value = dict(draw(base))
        if required and draw(st.integers(0, 5)) == 0:
            value.pop(draw(st.sampled_from(sorted(required))), None)
        if draw(st.integers(0, 5)) == 0:
            value[draw(st.sampled_from(["bogus", "Round", "type", " round"]))] = draw(json_values)
        return value

    return shaken()


# -- the document and the decoder --------------------------------------------------------------


def test_every_request_body_in_the_document_is_a_declared_message() -> None:
    named = {name for _, name in request_bodies()}
    assert named <= set(SHAPES), f"bodies with no declaration: {named - set(SHAPES)}"
    assert {"Facts", "Penalty", "Empty", "NewGame", "Press"} <= named
    for name in SHAPES:  # each schema is the one generated from its Struct, nothing added by hand
        generated = msgspec.json.schema_components([SHAPES[name]],
                                                   ref_template="#/components/schemas/{name}")[1]
        served = json.loads(json.dumps(schema_of(name)))
        if name == "NewGame":  # the options the games declare, listed from the registry
            options = served["properties"]["options"]
            assert set(options.pop("properties")) == {
                o for cls in registered_games().values() for o in cls.known_options()}
            options.pop("description")
            assert served["properties"]["game"].pop("examples") == list(registered_games())
        assert served == {**generated[name], **bodies.SCHEMA_EXTRAS.get(name, {})}, name


@pytest.mark.parametrize("name", sorted({n for _, n in request_bodies()}))
def test_the_document_and_the_server_decoder_agree_on_every_body(name: str) -> None:
    shape, ref = SHAPES[name], {"$ref": f"#/components/schemas/{name}"}
    seen = {True: 0, False: 0}

    @settings(max_examples=examples(200, least=100), deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(edges(ref))
    def agree(value: Any) -> None:
        in_document = documented(value, ref)
        assert decodes(shape, value) == in_document, (value, in_document)
        seen[in_document] += 1

    agree()
    assert seen[True] and seen[False], seen  # both sides of the line were tried


# -- the document and the real server ----------------------------------------------------------


@pytest.fixture
def table(mock_factory: MockFactory, tmp_path: Path) -> Iterator[Table]:
    t = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
              pin=PIN, out=io.StringIO(), auto=False)
    t.start("spank-the-pig", {**QUIET, "doubles": "buttons"}, resume=False)
    yield t
    close_table(t, 60_000)  # any game's race window: an open one is ended, not waited out


@pytest.fixture
def client(table: Table) -> FlaskClient:
    return create_app(table).test_client()


NO_BODY = object()


def post(client: FlaskClient, path: str, body: Any = NO_BODY) -> Any:
    return client.post(path, data=b"" if body is NO_BODY else json.dumps(body),
                       headers={"X-Table-Pin": PIN}, content_type="application/json",
                       environ_base={"REMOTE_ADDR": ADDR})


_last_press = [0.0]  # when start() last pressed Blue's button (time.monotonic)


def start(client: FlaskClient, game: str, table: Table | None = None) -> None:
    """A new game of `game` with round 1 begun (by its cue, or, where a claim begins it, a press:
    then `table` is needed, to wait for it)."""
    options = {**QUIET, "doubles": "buttons"} if game == "spank-the-pig" else QUIET
    assert post(client, "/api/new-game", {"game": game, "options": options}).status_code == 200
    if post(client, "/api/next-round").status_code != 200:
        # edges of one button closer than the box's debounce (5 ms) are one press: the last
        # game's claim press may be that recent on a fast machine
        time.sleep(max(0.0, _last_press[0] + 0.02 - time.monotonic()))
        assert post(client, "/api/press", {"seat": "Blue"}).status_code == 204
        _last_press[0] = time.monotonic()
        # the press reaches the engine through the button box's own thread after the answer (a
        # claim is never shown on the pages): the round it begins must be there before a fact
        # about it is sent, or the fact is refused for a round not yet played
        assert table is not None and table.engine is not None
        engine, deadline = table.engine, time.monotonic() + 10
        while engine.rules.round_count() < 1:
            assert time.monotonic() < deadline, f"the claim press never began {game}'s round 1"
            time.sleep(0.005)


def valid_value(schema: dict[str, Any]) -> Any:
    """One value the schema allows (its example, default, enum or lower bound)."""
    while "$ref" in schema:
        schema = schema_of(schema["$ref"].rsplit("/")[-1])
    if "anyOf" in schema:
        return valid_value(schema["anyOf"][0])
    if "examples" in schema:
        return schema["examples"][0]
    if "enum" in schema:
        return schema["enum"][0]
    return {"integer": schema.get("minimum", 1), "boolean": True, "string": "Blue", "null": None,
            "array": [], "object": {}}[schema["type"]]


BASES: dict[str, dict[str, Any]] = {  # the least each body needs
    "/api/facts": {"round": 1, "void": False}, "/api/penalty": {"round": 1, "seat": "Blue"},
    "/api/new-game": {"game": "spank-the-pig", "options": QUIET}, "/api/press": {"seat": "Red"},
}


def test_every_field_the_document_lists_is_accepted_by_the_server(client: FlaskClient,
                                                                   table: Table) -> None:
    games = list(registered_games())
    for path, name in request_bodies():
        for field, schema in schema_of(name).get("properties", {}).items():
            value = valid_value(schema)
            if field == "seats":
                value = [{"name": s} for s in SEATS]
            if field == "options":
                value = QUIET
            accepted = []
            if path == "/api/pair/approve":  # a device waiting, and the box itself approving
                code = client.post("/api/pair", environ_base={"REMOTE_ADDR": ADDR}).get_json()
                body = {field: code["code"]}
                assert documented(body, {"$ref": f"#/components/schemas/{name}"}), body
                resp = client.post(path, data=json.dumps(body), content_type="application/json",
                                   environ_base={"REMOTE_ADDR": "127.0.0.1"})
                assert resp.status_code == 200, resp.get_json()
                continue
            for game in games:  # a game's rules take only its own facts: some game takes each
                start(client, game, table)
                body = {**BASES.get(path, {}), field: value}
                assert documented(body, {"$ref": f"#/components/schemas/{name}"}), body
                resp = post(client, path, body)
                accepted.append(resp.status_code in (200, 204))
                if path == "/api/facts" and field == "pigs":  # count facts: the top is allowed too
                    top = {**body, "pigs": schema["maximum"]}
                    accepted[-1] &= post(client, path, top).status_code == 200 or game != games[-1]
                if any(accepted):
                    break
            assert any(accepted), (path, field, resp.get_json())


def test_an_unknown_field_is_refused_by_both(client: FlaskClient) -> None:
    start(client, "spank-the-pig")
    for path, name in request_bodies():
        body = {**BASES.get(path, {}), "bogus": 1}
        assert not documented(body, {"$ref": f"#/components/schemas/{name}"}), path
        resp = post(client, path, body)
        assert resp.status_code == 400, path
        assert resp.get_json()["error"].startswith("unknown field 'bogus'; "), resp.get_json()
    seat = {"game": "spank-the-pig", "seats": [{"name": s, "elbow": 3} for s in SEATS]}
    assert not documented(seat, {"$ref": "#/components/schemas/NewGame"})
    assert post(client, "/api/new-game", seat).get_json()["error"] == (
        "unknown field 'elbow' in seats[0]; use name, colour, slap or double")


@pytest.mark.parametrize("path", sorted(BASES) + ["/api/pause"])
def test_what_the_server_accepts_the_document_allows(client: FlaskClient, path: str) -> None:
    """Random bodies through the real server: accepted ⇒ documented; not documented ⇒ 400."""
    name = dict(request_bodies())[path]
    ref = {"$ref": f"#/components/schemas/{name}"}
    start(client, "spank-the-pig")
    seen: dict[str, int] = {"accepted": 0, "refused": 0}

    @settings(max_examples=examples(80), deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(edges(ref), st.just(BASES.get(path, {}))))
    def one(body: Any) -> None:
        resp = post(client, path, body)
        assert resp.status_code != 500
        if resp.status_code in (200, 204):
            seen["accepted"] += 1
            assert documented(body, ref), body
        elif not documented(body, ref):
            seen["refused"] += 1
            assert resp.status_code == 400, (body, resp.status_code)
            error = resp.get_json()["error"]
            assert error and "\n" not in error
        if table_over(client):
            start(client, "spank-the-pig")

    one()
    assert seen["accepted"] and seen["refused"], seen


def table_over(client: FlaskClient) -> bool:
    state = client.get("/api/state").get_json()
    return bool(state["phase"] == "over")


def test_half_a_character_is_refused_naming_the_field(client: FlaskClient) -> None:
    """JSON lets a string escape half a UTF-16 pair ("\\ud800"): no text, and SQLite cannot store it."""
    resp = client.post("/api/new-game", headers={"X-Table-Pin": PIN},
                       data=b'{"game": "pig", "seats": [{"name": "X\\ud800"}, {"name": "Red"}]}',
                       content_type="application/json", environ_base={"REMOTE_ADDR": ADDR})
    assert resp.status_code == 400
    assert resp.get_json()["error"] == "seats[0].name holds 'X\\ud800', half of a character; send text"


def test_a_body_the_old_document_allowed_is_now_refused_by_both(client: FlaskClient) -> None:
    """The hand-written document said a reason of spaces was fine; the server refused it."""
    start(client, "spank-the-pig")
    for path, body in [("/api/penalty", {"round": 1, "seat": "Blue", "reason": "   "}),
                       ("/api/press", {"seat": "  "}),
                       ("/api/new-game", {"game": " ", "options": QUIET}),
                       ("/api/new-game", {"game": "pig", "options": {"deck": [36]}})]:
        name = dict(request_bodies())[path]
        assert not documented(body, {"$ref": f"#/components/schemas/{name}"}), body
        assert post(client, path, body).status_code == 400, body


# -- answers ------------------------------------------------------------------------------------


def undeclared(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """Fields in `value` that the schema does not list (an answer must declare all it sends)."""
    while "$ref" in schema:
        schema = schema_of(schema["$ref"].rsplit("/")[-1])
    if "anyOf" in schema:
        options = [undeclared(value, s, where) for s in schema["anyOf"]
                   if documented(value, {"components": DOC["components"], **s})]
        return min(options, key=len) if options else [where]
    out: list[str] = []
    if isinstance(value, dict) and schema.get("type") == "object":
        props, extra = schema.get("properties", {}), schema.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                out += undeclared(item, props[key], f"{where}.{key}")
            elif isinstance(extra, dict):
                out += undeclared(item, extra, f"{where}.{key}")
            elif extra is not True and "properties" in schema:
                out.append(f"{where}.{key}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            out += undeclared(item, schema["items"], f"{where}[{i}]")
    return out


def answer_schema(path: str, method: str = "get", status: str = "200") -> dict[str, Any]:
    content = DOC["paths"][path][method]["responses"][status]["content"]["application/json"]
    return content["schema"]  # type: ignore[no-any-return]


def check_answer(path: str, value: Any, method: str = "get") -> None:
    schema = answer_schema(path, method)
    errors = [e.message for e in validator(schema).iter_errors(value)]
    assert not errors, (path, errors[:3])
    assert not undeclared(value, schema), (path, undeclared(value, schema))


def test_every_answer_is_declared_in_full(client: FlaskClient, table: Table) -> None:
    check_answer("/api/state", client.get("/api/state").get_json())
    for game in list(registered_games()):
        start(client, game, table)
        check_answer("/api/state", client.get("/api/state").get_json())
        # pause and resume while the game can still be paused: a claim answered by every
        # seat may end a game of Pig before the next request arrives
        for path, body in [("/api/pause", {}), ("/api/resume", {})]:
            resp = post(client, path, body)
            assert resp.status_code == 200, (game, path, resp.get_json())
            check_answer(path, resp.get_json(), "post")
        for seat in SEATS:
            post(client, "/api/press", {"seat": seat})
        for path, body in [("/api/penalty", {"round": 1, "seat": "Red", "reason": "peeked"}),
                           ("/api/undo", {}),
                           ("/api/facts", {"round": 1, "void": True}), ("/api/end", {})]:
            resp = post(client, path, body)
            assert resp.status_code == 200, (game, path, resp.get_json())
            check_answer(path, resp.get_json(), "post")
        check_answer("/api/standings", post(client, "/api/standings").get_json(), "post")
        state = client.get("/api/state").get_json()
        assert state["phase"] == "over"
        check_answer("/api/state", state)
    check_answer("/api/games", client.get("/api/games").get_json())
    check_answer("/api/stats", client.get("/api/stats").get_json())
    check_answer("/api/setup", client.get("/api/setup").get_json())
    errors = post(client, "/api/facts", {"round": 1, "bogus": 1}).get_json()
    assert documented(errors, answer_schema("/api/facts", "post", "200")) is False
    assert documented(errors, {"$ref": "#/components/schemas/Error"})


def test_an_answer_that_grew_a_field_is_caught(client: FlaskClient) -> None:
    """The check above can fail: a state with a field nobody declared is reported."""
    state = client.get("/api/state").get_json()
    assert not undeclared(state, answer_schema("/api/state"))
    assert undeclared({**state, "secret": 1}, answer_schema("/api/state")) == ["$.secret"]
    assert not documented({**state, "secret": 1}, answer_schema("/api/state"))


# -- the table log --------------------------------------------------------------------------------

EVENTS = [
    GameStart("spank-the-pig", ("Blue", "Red"), {"deck": 8, "doubles": "buttons"}),
    Cue(1_000_000), Cue(2_000_000, "Red"), Press(1_200_000, "Blue"),
    Press(1_300_000, "Red", "double"), Facts(1, {"pigs": 1, "doubles": ["zebracorn"]}),
    Facts(2, {"void": True}), Penalty(1, "Blue", 2, "slapped the hippo"), Undo(),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_every_log_line_round_trips_through_its_declaration(event: Any) -> None:
    line = dumps(event_to_json(event))
    assert json.loads(line)["type"] == type(event).__struct_config__.tag
    assert event_from_line(line) == event
    assert event_from_line(line.encode()) == event
    assert event_from_json(json.loads(line)) == event


def test_log_lines_are_written_as_the_spec_shows_them() -> None:
    assert dumps(event_to_json(Cue(1_000_000))) == '{"type": "cue", "t_us": 1000000}'
    assert dumps(event_to_json(Press(1_212_000, "Blue"))) == (
        '{"type": "press", "t_us": 1212000, "seat": "Blue", "button": "slap"}')
    assert dumps(event_to_json(Facts(1, {"pigs": 1, "doubles": ["zebracorn"]}))) == (
        '{"type": "facts", "round": 1, "pigs": 1, "doubles": ["zebracorn"]}')
    assert dumps(event_to_json(Undo())) == '{"type": "undo"}'


def test_output_lines_are_their_declarations() -> None:
    log = [dumps(event_to_json(e)) for e in EVENTS[:2]] + [
        dumps({"type": "press", "t_us": 1_200_000, "seat": "Blue"}),
        dumps({"type": "press", "t_us": 1_250_000, "seat": "Red"}),
        dumps({"type": "cue", "t_us": 9_000_000}),
        dumps({"type": "press", "t_us": 9_100_000, "seat": "Red"}),
    ]
    lines = replay(log).lines()
    decoder = msgspec.json.Decoder(RulingLine | AwaitingLine | StandingsLine)
    kinds = set()
    for line in lines:
        decoded = decoder.decode(json.dumps(line))
        assert msgspec.to_builtins(decoded) == line  # nothing more, nothing less
        kinds.add(type(decoded))
    assert kinds == {RulingLine, AwaitingLine, StandingsLine}


def test_extra_fields_in_a_log_line_are_allowed() -> None:
    game = dumps({"type": "game", "game": "spank-the-pig", "seats": ["Blue", "Red"], "by": "me"})
    line = dumps({"type": "press", "t_us": 5, "seat": "Blue", "note": {"why": [1, 2]}})
    facts = dumps({"type": "facts", "round": 1, "pigs": 1, "seen_by": "Ann"})
    assert event_from_line(line) == Press(5, "Blue")
    assert event_from_line(facts) == Facts(1, {"pigs": 1})
    replay([game, dumps({"type": "cue", "t_us": 1}), line, facts])


@pytest.mark.parametrize(("line", "message"), [
    ({"type": "penalty", "round": 1, "seat": "Blue", "count": 1},
     "line 3: missing field 'reason': add it, a non-empty text"),
    ({"type": "penalty", "round": 1, "seat": "Blue", "reason": "peeked"},
     "line 3: missing field 'count': add it, a whole number ≥ 1"),
    ({"type": "penalty", "round": 1, "seat": "Blue", "count": 1, "reason": ""},
     "line 3: reason must be a non-empty text, not ''"),
    ({"type": "press", "t_us": -1, "seat": "Blue"}, "line 3: t_us must be a whole number ≥ 0, not -1"),
    ({"type": "press", "t_us": 5, "seat": "Blue", "button": "foot"},
     "line 3: button must be 'double' or 'slap', not 'foot'"),
    ({"type": "cue", "t_us": True}, "line 3: t_us must be a whole number ≥ 0, not True"),
    ({"type": "Press", "t_us": 5}, "line 3: unknown type 'Press'; use game, cue, press, facts, "
                                   "penalty, undo or end"),
    ({"t_us": 5}, "line 3: missing field 'type': add it, one of game, cue, press, facts, "
                  "penalty, undo or end"),
    (["press"], "line 3: each line must be a JSON object"),
    ('{"type": "press", "t_us": 5, "seat": "Blue\\ud800"}',
     "line 3: seat holds 'Blue\\ud800', half of a character; send text"),
])
def test_a_bad_log_line_is_one_error_naming_the_line_and_the_field(line: Any, message: str) -> None:
    log = [dumps({"type": "game", "game": "spank-the-pig", "seats": ["Blue", "Red"]}),
           dumps({"type": "cue", "t_us": 1}), line if isinstance(line, str) else json.dumps(line)]
    with pytest.raises(LogError) as err:
        replay(log)
    assert str(err.value) == message
