"""History counts only real reactions and only real games (issue 14).

A real SQLite file, games written as the live table writes them, read back as /history reads them.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from referee.cli.table import Table
from referee.config import default_config
from referee.events import Cue, GameStart, Press
from referee.scoreboard.history import past_games, player_stats
from referee.store.database import Store, connect

SEATS = ("Blue", "Red", "Green")


def pig_game(store: Store) -> int:
    """Blue claims; Red reacts after 420 ms, Green after 900 ms (Green loses, lives 1)."""
    game = store.new_game(GameStart("pig", SEATS, {"lives": 1}))
    for t, seat in ((1_000_000, "Blue"), (1_420_000, "Red"), (1_900_000, "Green")):
        store.append(game, Press(t, seat, "slap"))
    return game


def spank_round(store: Store, game: int, cue: int, after: dict[str, int]) -> None:
    store.append(game, Cue(cue))
    for seat, ms in after.items():
        store.append(game, Press(cue + ms * 1000, seat, "slap"))


def stats(path: Path) -> dict[str, Any]:
    conn = connect(path, readonly=True)
    try:
        return {p.name: p.to_json() for p in player_stats(past_games(conn, str(path)))}
    finally:
        conn.close()


def test_a_pig_claim_is_not_a_0_ms_reaction(tmp_path: Path) -> None:
    store = Store(tmp_path / "referee.db")
    try:
        pig_game(store)
    finally:
        store.close()
    players = stats(tmp_path / "referee.db")
    assert players["Red"]["reactions"] == {"count": 1, "median_ms": 420.0, "best_ms": 420.0}
    assert players["Green"]["reactions"]["best_ms"] == 900.0
    # Blue only claimed: no reaction at all, certainly not "Best 0 ms"
    assert players["Blue"]["reactions"] == {"count": 0, "median_ms": None, "best_ms": None}


def test_a_demo_game_is_listed_but_neither_rated_nor_timed(tmp_path: Path) -> None:
    store = Store(tmp_path / "referee.db")
    try:
        real = store.new_game(GameStart("spank-the-pig", SEATS, {"deck": 3, "doubles": "off"}))
        spank_round(store, real, 1_000_000, {"Blue": 300, "Red": 350, "Green": 500})
        store.mark(real, "ended", True)
        demo = store.new_game(GameStart("spank-the-pig", SEATS, {"deck": 3, "doubles": "off"}))
        spank_round(store, demo, 1_000_000, {"Green": 100, "Red": 150, "Blue": 900})
        store.mark(demo, "demo", True)
        store.mark(demo, "ended", True)
    finally:
        store.close()
    conn = connect(tmp_path / "referee.db", readonly=True)
    try:
        listed = past_games(conn, "demo-test")
    finally:
        conn.close()
    assert [(g.id, g.demo, g.rated) for g in listed] == [(real, False, True), (demo, True, False)]
    players = {p.name: p for p in player_stats(listed)}
    assert players["Blue"].reactions_us == [300_000]  # the demo's 900 ms is not Blue's
    assert players["Blue"].games == 1 and players["Green"].games == 1


def test_referee_demo_marks_its_games(tmp_path: Path, mock_factory: Any) -> None:
    table = Table(default_config(list(SEATS)), db=tmp_path / "referee.db", mock=True,
                  no_speech=True, out=io.StringIO(), auto=False, demo=True)
    try:
        engine = table.start("pig", {}, resume=False)
        first = engine.game_id
        second = table.start("pigs-tail", {}, resume=False).game_id  # the panel's next game
    finally:
        table.close()
    conn = connect(tmp_path / "referee.db", readonly=True)
    try:
        assert {g.id: g.demo for g in past_games(conn, "marks")} == {first: True, second: True}
    finally:
        conn.close()


def test_the_history_page_tags_a_demo_game(tmp_path: Path, mock_factory: Any) -> None:
    from referee.scoreboard.app import create_app

    table = Table(default_config(list(SEATS)), db=tmp_path / "referee.db", mock=True,
                  no_speech=True, out=io.StringIO(), auto=False, demo=True)
    try:
        table.start("spank-the-pig", {"deck": 3, "doubles": "off"}, resume=False)
        html = create_app(table).test_client().get("/history").get_data(as_text=True)
    finally:
        table.close()
    assert "demo: not rated" in html


def test_every_game_a_demo_table_plays_is_a_demo_game(tmp_path: Path, mock_factory: Any) -> None:
    """Demo games are kept out of the ratings, all of them: the game the demo opens, the real game
    after its practice, and the next game the judge or the keypad starts after the end."""
    table = Table(default_config(list(SEATS)), db=tmp_path / "referee.db", mock=True,
                  no_speech=True, out=io.StringIO(), auto=False, demo=True)
    try:
        engine = table.start("spank-the-pig", {"deck": 3, "doubles": "off"}, resume=False)
        first_id = engine.game_id
        engine.command("end")
        engine.command("next_game")  # the engine's own next game: same game, same seats
        second_id = int(engine.command("snapshot")["game_id"])
    finally:
        table.close()
    conn = connect(tmp_path / "referee.db", readonly=True)
    try:
        listed = {g.id: (g.demo, g.rated) for g in past_games(conn, "demo-next")}
    finally:
        conn.close()
    assert second_id != first_id
    assert listed == {first_id: (True, False), second_id: (True, False)}


def test_history_never_says_no_finished_games_above_a_finished_one(
        tmp_path: Path, mock_factory: Any) -> None:
    from referee.scoreboard.app import create_app

    table = Table(default_config(list(SEATS)), db=tmp_path / "referee.db", mock=True,
                  no_speech=True, out=io.StringIO(), auto=False, demo=True)
    try:
        engine = table.start("spank-the-pig", {"deck": 3, "doubles": "off"}, resume=False)
        engine.command("end")  # a finished demo game: listed, and not rated
        html = create_app(table).test_client().get("/history").get_data(as_text=True)
    finally:
        table.close()
    assert "demo: not rated" in html
    assert "No finished games yet" not in html
    assert "No rated games yet" in html and "never demo" in html


def test_history_names_the_variant_played(tmp_path: Path) -> None:
    store = Store(tmp_path / "referee.db")
    try:
        game = store.new_game(GameStart("pig", SEATS, {"variant": "spoons"}))
        store.append(game, Press(1_000_000, "Blue", "slap"))
    finally:
        store.close()
    conn = connect(tmp_path / "referee.db", readonly=True)
    try:
        (listed,) = past_games(conn, "variant")
    finally:
        conn.close()
    assert listed.id == game and listed.title == "Spoons"
