"""The table log's SQLite file as a builder and a group meet it: a path that cannot hold it, a
file that is not one, a game from a file kept with its declaration, the clock behind the last
game, each said in one line that names the file and the fix. A real SQLite file each time."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from referee.events import Cue, GameStart, Press
from referee.store.database import (
    StorageDamaged,
    StorageFull,
    Store,
    StoreError,
    connect,
    export_lines,
    game_row,
    http_status,
    printable,
)

SEATS = ("Blue", "Red")
DECLARED = {"name": "Our Slap", "unit": "points", "direction": "more"}  # kept as given


def test_a_database_under_a_file_is_one_line_naming_the_path_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a folder")
    path = tmp_path / "notes.txt" / "referee.db"
    for opening in (connect, Store):
        with pytest.raises(StoreError) as caught:
            opening(path)
        assert str(caught.value) == (  # before: "File exists", naming no file
            f"database {str(path)!r}: {str(path.parent)!r} is a file, not a folder; check the "
            "path and its permissions")


def test_a_file_that_is_not_sqlite_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "photo.db"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    with pytest.raises(StoreError) as caught:
        Store(path)
    assert str(caught.value) == (
        f"database {str(path)!r}: file is not a database; it is not an SQLite file; give "
        "another --db")
    assert path.read_bytes()[:4] == b"\x89PNG"  # refused, never written to


def test_a_new_database_in_folders_that_do_not_exist_yet_makes_them(tmp_path: Path) -> None:
    path = tmp_path / "table-referee" / "evenings" / "referee.db"
    store = Store(path)
    try:
        store.new_game(GameStart("pig", SEATS, {"lives": 3}))
    finally:
        store.close()
    assert path.is_file()


def test_exporting_from_an_empty_database_or_an_unknown_game_says_which(tmp_path: Path) -> None:
    store = Store(tmp_path / "referee.db")
    try:
        with pytest.raises(StoreError, match="^the database holds no game yet$"):
            list(export_lines(store.conn))
        game_id = store.new_game(GameStart("pig", SEATS, {"lives": 3}))
        with pytest.raises(StoreError, match="^no such game$"):
            list(export_lines(store.conn, game_id + 1))
        assert json.loads(next(export_lines(store.conn, game_id)))["game"] == "pig"
    finally:
        store.close()


def test_a_game_from_a_file_keeps_its_declaration_for_replay_and_history(tmp_path: Path) -> None:
    store = Store(tmp_path / "referee.db")
    try:
        plain = store.new_game(GameStart("pig", SEATS, {"lives": 3}))
        filed = store.new_game(GameStart("our-slap", SEATS, {}, declared=DECLARED))
        store.append(filed, Cue(1_000_000))
        store.append(filed, Press(1_200_000, "Red"))
        first = json.loads(next(export_lines(store.conn, filed)))
        assert first["declared"] == DECLARED  # the exported log replays on its own
        assert "declared" not in json.loads(next(export_lines(store.conn, plain)))
        row = game_row(store.conn, filed)
        assert row is not None and row["declared"] == DECLARED
        found = store.game(filed)
        assert found is not None and found[0].declared == DECLARED  # a resumed table knows it
    finally:
        store.close()


def test_the_clock_is_behind_only_when_it_is_before_the_last_game(tmp_path: Path) -> None:
    store = Store(tmp_path / "referee.db")
    try:
        store.new_game(GameStart("pig", SEATS, {"lives": 3}))
        last = store.last_known_time()
        assert last is not None
        assert store.clock_behind(last) is None  # the very same second: not behind
        said = store.clock_behind(last - timedelta(minutes=1))
        assert said is not None and said.startswith("the clock says ")
        assert "connect the Pi to a network once" in said
    finally:
        store.close()


def test_control_characters_are_printed_as_escapes_on_one_line() -> None:
    assert printable("Blue\x00\x1b[2Jred\nline") == "Blue\\x00\\x1b[2Jred\\nline"
    assert printable("Zoë") == "Zoë"


def test_a_folder_given_as_the_database_is_one_line_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "evenings"
    folder.mkdir()
    with pytest.raises(StoreError) as caught:
        connect(folder)
    assert str(caught.value) == (
        f"database {str(folder)!r}: unable to open database file; check the path and its "
        "permissions")


def test_a_symlink_loop_as_the_database_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "a.db").symlink_to(tmp_path / "b.db")
    (tmp_path / "b.db").symlink_to(tmp_path / "a.db")
    with pytest.raises(StoreError) as caught:
        Store(tmp_path / "a.db")
    assert str(caught.value) == (
        f"database {str(tmp_path / 'a.db')!r}: Too many levels of symbolic links; check the "
        "path and its permissions")


def test_a_full_disk_is_507_and_a_damaged_or_busy_database_503() -> None:
    """507 Insufficient Storage tells the page to try again once there is room; a damaged or
    locked database is 503, the referee's own trouble."""
    assert http_status(StorageFull("database 'r.db': the disk is full")) == 507
    assert http_status(StorageDamaged("database 'r.db' is damaged")) == 503
    assert http_status(StoreError("database 'r.db': busy")) == 503
