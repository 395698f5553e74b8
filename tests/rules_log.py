"""Table-log lines for the rules tests of issue 17, in whole µs, and the replay's lines back."""

from __future__ import annotations

import json
from typing import Any

from referee.store.tablelog import replay

FOUR = ["Blue", "Red", "Green", "Yellow"]
FIVE = [*FOUR, "Purple"]
THREE = ["Blue", "Red", "Green"]
MS = 1000
S = 1_000_000


def game(name: str, seats: list[str], **options: Any) -> dict[str, Any]:
    return {"type": "game", "game": name, "seats": seats, "options": options}


def cue(t_us: int, seat: str | None = None) -> dict[str, Any]:
    return {"type": "cue", "t_us": t_us} | ({"seat": seat} if seat else {})


def press(t_us: int, seat: str, button: str = "slap") -> dict[str, Any]:
    return {"type": "press", "t_us": t_us, "seat": seat, "button": button}


def facts(round: int, **values: Any) -> dict[str, Any]:
    return {"type": "facts", "round": round, **values}


def run(*lines: dict[str, Any]) -> list[dict[str, Any]]:
    return replay([json.dumps(x) for x in lines]).lines()


def rulings(out: list[dict[str, Any]], round: int | None = None) -> list[tuple[Any, ...]]:
    """(round, seat, delta, reason, margin_us) of each ruling, of one round or all."""
    return [(r["round"], r["seat"], r["delta"], r["reason"], r["margin_us"]) for r in out
            if r["type"] == "ruling" and (round is None or r["round"] == round)]
