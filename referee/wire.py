"""Messages on the wire: one msgspec declaration per message, decoded strictly, refused in one line.

Table-log lines (`referee.events`) and HTTP bodies (`referee.scoreboard.bodies`) are msgspec Structs;
msgspec decodes and checks them in one C pass, and `msgspec.json.schema_components` turns the same
classes into the JSON Schema of `/api/openapi.json`. msgspec's own errors name a JSON path and a
type ("Expected `int` >= 0 - at `$.t_us`"); `explain` rewrites them as the one line a person at the
table can act on ("t_us must be a whole number ≥ 0, not -5"), reading what is expected from the
very declaration that refused the value, so the message cannot drift from the check either.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import msgspec.inspect as mi

_AT = re.compile(r"^(?P<what>.*?)(?: - at (?P<key>`key` in )?`(?P<path>[^`]*)`)?$", re.S)
_FIELD = re.compile(r"^Object (?P<kind>missing required|contains unknown) field `(?P<name>[^`]*)`$")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def words(names: list[str], last: str = "or") -> str:
    """'a', 'a or b', 'a, b or c'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def short(value: Any) -> str:
    """A bad value as quoted in an error: its repr, cut to 40 characters."""
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def steps(path: str) -> list[str | int]:
    """`$.seats[1].colour` -> ["seats", 1, "colour"] (`[...]`, any value of a dict, is "...")."""
    out: list[str | int] = []
    for name, index in _STEP.findall(path[1:]):
        out.append(name if name else int(index) if index.isdigit() else "...")
    return out


def field_name(path: list[str | int]) -> str:
    """["seats", 1, "colour"] -> "seats[1].colour"; a dict's values and keys are named as such."""
    text = ""
    for step in path:
        if step in ("...", "key"):
            return f"{'a key' if step == 'key' else 'each value'} of {text.lstrip('.') or 'the body'}"
        text += f"[{step}]" if isinstance(step, int) else f".{step}"
    return text.lstrip(".")


def type_at(node: mi.Type, path: list[str | int]) -> mi.Type | None:
    """The declared type a JSON path leads to (None if the declaration has no such place)."""
    for step in path:
        node = _plain(node)
        if isinstance(node, mi.UnionType):
            inner = [t for t in (_plain(t) for t in node.types) if not isinstance(t, mi.NoneType)]
            node = inner[0] if len(inner) == 1 else node
        if isinstance(node, mi.StructType) and isinstance(step, str):
            found = next((f.type for f in node.fields if f.encode_name == step), None)
            if found is None:
                return None
            node = found
        elif isinstance(node, mi.ListType | mi.VarTupleType | mi.SetType) and isinstance(step, int):
            node = node.item_type
        elif isinstance(node, mi.DictType) and step in ("...", "key"):
            node = node.key_type if step == "key" else node.value_type
        else:
            return None
    return node


def _plain(node: mi.Type) -> mi.Type:
    while isinstance(node, mi.Metadata):
        node = node.type
    return node


def expects(node: mi.Type) -> str:
    """What a declared type accepts, in words: 'a whole number from 1 to 20', "'slap' or 'double'"."""
    if isinstance(node, mi.Metadata):
        shown = (node.extra_json_schema or {}).get("examples")
        if not shown:
            return expects(node.type)
        example = json.dumps(shown[0], ensure_ascii=False)
        inner = _plain(node.type)
        if isinstance(inner, mi.StrType) and inner.pattern not in (None, r"\S"):
            return f"a text like {example}"
        return f"{expects(node.type)}, e.g. {example}"
    if isinstance(node, mi.BoolType):
        return "true or false"
    if isinstance(node, mi.IntType):
        lo, hi = node.ge, node.le
        if lo is not None and hi is not None:
            return f"a whole number from {lo} to {hi}"
        return "a whole number" + (f" ≥ {lo}" if lo is not None else f" ≤ {hi}" if hi is not None else "")
    if isinstance(node, mi.StrType):
        text = "a non-empty text" if node.min_length or node.pattern == r"\S" else "a text"
        if node.pattern not in (None, r"\S"):
            text = f"a text matching {node.pattern!r}"
        return text + (f" of at most {node.max_length} characters" if node.max_length else "")
    if isinstance(node, mi.LiteralType):
        return words([repr(v) for v in node.values])
    if isinstance(node, mi.ListType | mi.VarTupleType | mi.SetType):
        lo, hi = node.min_length, node.max_length
        size = (f" of {lo} to {hi} items" if lo and hi is not None else f" of at most {hi} items"
                if hi is not None else f" of at least {lo} items" if lo else "")
        return f"a list{size}, each {expects(node.item_type)}"
    if isinstance(node, mi.DictType | mi.StructType | mi.TypedDictType):
        return "an object"
    if isinstance(node, mi.NoneType):
        return "null"
    if isinstance(node, mi.UnionType):
        return words([expects(t) for t in node.types])
    return "a JSON value"


def explain(exc: msgspec.ValidationError, shape: type, raw: Any) -> str:
    """msgspec's error as one line naming the field, what it must be, and the value given.

    `shape` is the Struct that refused the message; `raw` the message as plain JSON (or None)."""
    found = _AT.match(str(exc))
    assert found is not None  # the pattern matches any text
    path = steps(found["path"] or "$") + (["key"] if found["key"] else [])
    where = field_name(path)
    field = _FIELD.match(found["what"])
    root = mi.type_info(shape)
    if field is not None:
        place = f" in {where}" if where else ""
        if field["kind"] == "missing required":  # the fix: add it, and what it must be
            node = _plain(type_at(root, path) or root)
            missing = next((f.type for f in node.fields if f.encode_name == field["name"]), None) \
                if isinstance(node, mi.StructType) else None
            fix = f": add it, {expects(missing)}" if missing is not None else ": add it"
            return f"missing field {field['name']!r}{place}{fix}"
        node = _plain(type_at(root, path) or root)
        known = [f.encode_name for f in node.fields] if isinstance(node, mi.StructType) else []
        return f"unknown field {field['name']!r}{place}" + (
            f"; use {words(known)}" if known else "; send no fields")
    if not path:
        if not found["what"].startswith("Expected"):  # the declaration's own check said why
            return str(found["what"])
        return f"must be {expects(root)}, not {short(raw)}"
    declared = type_at(root, path)
    value = _at(raw, path)
    given = "" if value is _MISSING else f", not {short(value)}"
    if declared is None:  # msgspec knows better than the walk: keep its words
        return f"{where}: {found['what']}"
    if "out of range" in found["what"]:
        given = ", not a number that large"
    return f"{where} must be {expects(declared)}{given}"


_MISSING = object()


def _at(raw: Any, path: list[str | int]) -> Any:
    node = raw
    for step in path:
        if step in ("...", "key"):
            return _MISSING  # somewhere in a dict: msgspec does not say which key
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


def not_json(raw: bytes | str, exc: msgspec.DecodeError) -> str:
    """Why msgspec could not read a message, in one line. JSON's grammar lets a string escape half
    of a UTF-16 pair ("\\ud800"), which is no text at all and cannot be stored: say where it is."""
    found = _surrogate(plain(raw), [])
    if found is not None:
        where, text = found
        return f"{field_name(where) or 'a key'} holds {ascii(text)}, half of a character; send text"
    return f"not valid JSON: {str(exc).removeprefix('JSON is malformed: ')}"


def _surrogate(node: Any, path: list[str | int]) -> tuple[list[str | int], str] | None:
    if isinstance(node, str):
        return (path, node) if any("\ud800" <= ch <= "\udfff" for ch in node) else None
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if isinstance(key, str) and _surrogate(key, []) is not None:
            return path, key
        found = _surrogate(value, [*path, key])
        if found is not None:
            return found
    return None


def plain(raw: bytes | str) -> Any:
    """The message as plain JSON values, for quoting the bad value (None if it does not parse)."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None
