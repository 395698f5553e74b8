"""What a seat name is (PRODUCT.md, "Table log"), one rule wherever a name arrives: a replayed or
resumed log's game line, `--seats`, the config file, the setup page.

Seat names are distinct, 1–24 code points after NFC, with no leading or trailing space, compared
case-insensitively, with no control or invisible formatting characters (zero-width, bidi
overrides); a line's `seat` matches a name of the game line exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from referee.config import ConfigError, parse_seats
from referee.events import GameStart
from referee.store.database import Store
from referee.store.tablelog import LogError, replay
from tests.support import run_referee

BAD = [
    (["Blue", "Blue\u200b"], "invisible character '\\u200b'"),  # looks like Blue
    (["Blue", "\u202eeulB"], "invisible character '\\u202e'"),  # a right-to-left override
    (["Blue", "Re\u2066d"], "invisible character '\\u2066'"),  # a bidi isolate
    (["Blue", "\ufeffRed"], "invisible character '\\ufeff'"),  # a BOM
    (["Blue", "Blue"], "appears twice"),
    (["Blue", "BLUE"], "are the same name"),  # compared case-insensitively
    (["Zo\u00eb", "Zoe\u0308"], "are the same name"),  # one name, composed or not
    (["Blue", " Red"], "starts or ends with a space"),
    (["Blue", "Red "], "starts or ends with a space"),
    (["Blue", "x" * 25], "longer than 24 characters"),
    (["Blue", "Re\x07d"], "control character '\\x07'"),
    (["Blue", ""], "empty"),
    (["Blue", "   "], "empty"),
]
IDS = ["zero-width", "rtl-override", "isolate", "bom", "twice", "case", "nfc", "leading",
       "trailing", "long", "control", "empty", "blank"]


def game_line(seats: list[str], game: str = "spank-the-pig") -> str:
    return json.dumps({"type": "game", "game": game, "seats": seats, "options": {}})


@pytest.mark.parametrize(("seats", "problem"), BAD, ids=IDS)
def test_a_logs_game_line_with_a_bad_seat_name_is_refused_on_line_1(
        seats: list[str], problem: str) -> None:
    with pytest.raises(LogError) as err:
        replay([game_line(seats)])
    assert str(err.value).startswith("line 1: ") and problem in str(err.value)
    assert "\n" not in str(err.value)


TYPED = [(seats, problem) for seats, problem in BAD if "space" not in problem]


@pytest.mark.parametrize(("seats", "problem"), TYPED,
                         ids=[i for i, (_, p) in zip(IDS, BAD, strict=True) if "space" not in p])
def test_seats_refuses_what_a_log_refuses(seats: list[str], problem: str) -> None:
    """`--seats` trims what is typed around the commas (so it has no leading-space case); the
    rest is refused as the log refuses it, in the same words (empty: its own)."""
    with pytest.raises(ConfigError) as err:
        parse_seats(",".join(seats))
    if "empty" not in problem:  # (typed text is NFC'd first: one name, twice)
        assert problem in str(err.value) or "same" in problem and "twice" in str(err.value)


def test_names_of_24_code_points_after_nfc_and_emoji_sequences_are_names() -> None:
    composed_24 = "a" * 23 + "e\u0301"  # 25 code points typed, 24 after NFC
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one picture, joined
    out = replay([game_line([composed_24, family, "Blue"]),
                  json.dumps({"type": "cue", "t_us": 1_000_000}),
                  json.dumps({"type": "press", "t_us": 1_100_000, "seat": family})]).lines()
    assert {r["seat"] for r in out[-1]["seats"]} == {composed_24, family, "Blue"}


def test_a_lines_seat_matches_a_name_of_the_game_line_exactly() -> None:
    head = [game_line(["Blue", "Red"]), json.dumps({"type": "cue", "t_us": 1_000_000})]
    for other in ("blue", "Blue ", "Blue\u200b"):
        with pytest.raises(LogError, match="line 3: seat .* is not at this table"):
            replay([*head, json.dumps({"type": "press", "t_us": 1_100_000, "seat": other})])
    replay([*head, json.dumps({"type": "press", "t_us": 1_100_000, "seat": "Blue"})])


def test_a_resumed_game_with_a_bad_seat_name_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A database written by an older referee (before the rule) holds look-alike seats: resuming
    or exporting and replaying it is one line, never a table with two Blues."""
    db = tmp_path / "old.db"
    store = Store(db)
    store.new_game(GameStart("spank-the-pig", ("Blue", "Blue\u200b"), {}))
    store.close()
    exported = run_referee("export", "--db", str(db))
    assert exported.returncode == 0, exported.stderr
    replayed = run_referee("replay", "-", stdin=exported.stdout)
    assert replayed.returncode == 2 and "Traceback" not in replayed.stderr
    assert "line 1: " in replayed.stderr and "invisible character" in replayed.stderr


def test_the_config_file_uses_the_same_rule(tmp_path: Path) -> None:
    from referee.config import load_config

    path = tmp_path / "config.toml"
    seats: list[dict[str, Any]] = [{"name": "Blue"}, {"name": "blue"}]
    path.write_text("".join(f'[[seats]]\nname = "{s["name"]}"\nslap = {5 + i}\n\n'
                            for i, s in enumerate(seats)))
    with pytest.raises(ConfigError, match="are the same name"):
        load_config(path)
