"""Bad input, config files: garbage, structured nonsense and deep nesting are one-line
`ConfigError`s, and `referee play --config BAD` exits 2 with one line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.config import ConfigError, load_config
from tests.harness import examples
from tests.support import assert_refused_in_one_line, one_line, run_referee


def check_config_text(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    try:
        load_config(path)
    except ConfigError as exc:
        assert one_line(str(exc)), repr(str(exc))


toml_alphabet = st.sampled_from(list('[]{}=".,#\'\n -_abcxyz0123456789tf+:TZ\\') + ["\x00", "é"])


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(toml_alphabet, max_size=200), st.binary(max_size=200)))
def test_config_garbage_is_a_one_line_config_error(tmp_path: Path, data: str | bytes) -> None:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    check_config_text(tmp_path / "garbage.toml", raw)


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def toml_doc(doc: dict[str, Any]) -> str:
    out = []
    for key, value in doc.items():
        if key == "seats" and isinstance(value, list) and all(isinstance(x, dict) for x in value):
            for seat in value:
                out.append("[[seats]]")
                out += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in seat.items()]
        elif isinstance(value, dict):
            out.append(f"[{json.dumps(key)}]")
            out += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()]
        else:
            out.insert(0, f"{json.dumps(key)} = {toml_value(value)}")
    return "\n".join(out) + "\n"


scalars = st.one_of(st.integers(-10, 70_000), st.booleans(), st.floats(allow_nan=False, width=32),
                    st.sampled_from(["", " ", "Blue", "blue", "judge", "#1f6feb", "#xyz", "a,b",
                                     "127.0.0.1", "0.0.0.0", "spank-the-pig", "chess", "4321"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=4), inner,
                                                                       max_size=3)), max_leaves=6)
seat_tables = st.dictionaries(
    st.sampled_from(["name", "colour", "slap", "double", "led", "pin", "Name"]),
    st.one_of(values, st.integers(0, 30)), max_size=5)
structured = st.fixed_dictionaries(
    {},
    optional={
        "table": st.dictionaries(st.sampled_from(["game", "host", "port", "db", "pin", "debug"]),
                                 values, max_size=4),
        "seats": st.one_of(st.lists(seat_tables, max_size=10), values),
        "judge": st.one_of(st.dictionaries(st.sampled_from(["yes", "no", "undo", "maybe"]),
                                           st.one_of(values, st.integers(0, 30)), max_size=4),
                           values),
        "leds": st.one_of(st.dictionaries(st.sampled_from(["data", "clock", "latch"]),
                                          st.one_of(values, st.integers(0, 30)), max_size=3),
                          values),
        "options": st.one_of(st.dictionaries(st.sampled_from(["tie_us", "deck", "warp", "doubles"]),
                                             values, max_size=3), values),
        "speech": st.one_of(st.dictionaries(st.sampled_from(["voice", "rate", "volume", "pitch"]),
                                            values, max_size=3), values),
        "extra": values,
    })


@settings(max_examples=examples(200), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(structured)
def test_structured_bad_config_values_are_one_line_config_errors(tmp_path: Path,
                                                                  doc: dict[str, Any]) -> None:
    path = tmp_path / "structured.toml"
    path.write_text(toml_doc(doc))
    try:
        config = load_config(path)
    except ConfigError as exc:
        assert one_line(str(exc)), repr(str(exc))
        return
    # what load_config accepts is a config the table can use as it is
    assert 1 <= len(config.seats) <= 8
    assert isinstance(config.host, str) and 1 <= config.port <= 65535


def test_deeply_nested_config_is_a_config_error_not_a_crash(tmp_path: Path) -> None:
    """tomllib recurses per nesting level: 5000 '[' raise RecursionError, not TOMLDecodeError."""
    path = tmp_path / "deep.toml"
    for text in ("a = " + "[" * 5000, "a = " + "{b = " * 3000):
        path.write_text(text)
        with pytest.raises(ConfigError) as refused:  # not a crash, and not accepted either
            load_config(path)
        assert one_line(str(refused.value)), repr(str(refused.value))


BAD_CONFIGS = {
    "not toml": "[table\ngame = 1",
    "binary": "\x00\x01\x02\xff",
    "unknown key": '[table]\ncolour = "red"\n[[seats]]\nname = "Blue"\nslap = 4\n',
    "reserved pin": '[[seats]]\nname = "Blue"\nslap = 2\n[[seats]]\nname = "Red"\nslap = 17\n',
    "pin twice": '[[seats]]\nname = "Blue"\nslap = 4\n[[seats]]\nname = "Red"\nslap = 4\n',
    "port text": '[table]\nport = "eighty"\n[[seats]]\nname = "Blue"\nslap = 4\n',
    "nine seats": "".join(f'[[seats]]\nname = "S{i}"\n' for i in range(9)),
    "unknown game": '[table]\ngame = "chess"\n[[seats]]\nname = "A"\nslap = 4\n'
                    '[[seats]]\nname = "B"\nslap = 17\n',
    "bad option": '[options]\ntie_us = -4\n[[seats]]\nname = "A"\nslap = 4\n'
                  '[[seats]]\nname = "B"\nslap = 17\n',
    "deep nesting": "a = " + "[" * 5000,
    "db in /proc": '[table]\ndb = "/proc/no/such/dir/x.db"\n[[seats]]\nname = "A"\nslap = 4\n'
                   '[[seats]]\nname = "B"\nslap = 17\n',
}


@pytest.fixture(scope="module")
def bad_config_runs() -> Iterator[dict[str, subprocess.CompletedProcess[str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        def one(item: tuple[str, str]) -> tuple[str, subprocess.CompletedProcess[str]]:
            name, text = item
            slug = "".join(c if c.isalnum() else "_" for c in name)
            path = Path(tmp) / f"{slug}.toml"
            path.write_bytes(text.encode("latin-1"))
            return name, run_referee("play", "--config", str(path), "--mock", "--no-web",
                                     "--no-speech", env={"REFEREE_DB": str(Path(tmp) / f"{slug}.db")},
                                     timeout=20)

        with ThreadPoolExecutor(6) as pool:
            yield dict(pool.map(one, BAD_CONFIGS.items()))


@pytest.mark.parametrize("name", list(BAD_CONFIGS))
def test_referee_play_with_a_bad_config_exits_2_with_one_line(
        bad_config_runs: dict[str, subprocess.CompletedProcess[str]], name: str) -> None:
    result = bad_config_runs[name]
    assert_refused_in_one_line(result)


