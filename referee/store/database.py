"""The SQLite table log: append-only, the source of truth.

Each game is a row in `games`; every event the engine acts on is first appended to `events` (the
same JSON as a table-log line). Triggers forbid UPDATE and DELETE on events, so a correction is
always a new line. Engine-internal marks (a round ruled, a game ended) live in `marks` and are never
exported.

Durability: WAL journal. Judge actions, cues and game lines commit with `synchronous=FULL` (fsync
before the engine acts on them); presses commit with `synchronous=NORMAL` (in the OS cache at
once, survive a killed process, and at worst the presses of the round in progress are lost to a
pulled plug — and a round cut in half is voided on resume, never half-ruled).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.events import Event, GameStart, Press
from referee.store.tablelog import dumps, event_from_line, event_to_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    seats TEXT NOT NULL,
    options TEXT NOT NULL,
    practice INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_game ON events(game_id, seq);
CREATE TABLE IF NOT EXISTS marks (
    seq INTEGER PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    kind TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS events_append_only_u BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the table log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_d BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the table log is append-only'); END;
"""


class StoreError(RuntimeError):
    pass


def connect(path: str | Path, *, readonly: bool = False) -> sqlite3.Connection:
    path = Path(path)
    try:
        if readonly:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
        conn.execute("PRAGMA busy_timeout=5000")
    except (sqlite3.Error, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise StoreError(f"database {str(path)!r}: {reason}; check the path and its permissions"
                         ) from None
    return conn


class Store:
    """One writer (the engine thread); readers open their own connections with `reader()`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.conn = connect(self.path)
        self._sync = ""
        self._lock = threading.Lock()

    def _write(self, sql: str, args: tuple[Any, ...], *, durable: bool) -> int:
        sync = "FULL" if durable else "NORMAL"
        with self._lock:
            if sync != self._sync:
                self.conn.execute(f"PRAGMA synchronous={sync}")
                self._sync = sync
            cur = self.conn.execute(sql, args)
            return int(cur.lastrowid or 0)

    def new_game(self, start: GameStart, *, practice: bool = False) -> int:
        created = datetime.now(UTC).isoformat(timespec="seconds")
        return self._write(
            "INSERT INTO games (game, seats, options, practice, created) VALUES (?, ?, ?, ?, ?)",
            (start.game, json.dumps(list(start.seats)), json.dumps(dict(start.options)),
             int(practice), created),
            durable=True,
        )

    def append(self, game_id: int, event: Event) -> int:
        return self._write(
            "INSERT INTO events (game_id, body) VALUES (?, ?)",
            (game_id, dumps(event_to_json(event))),
            durable=not isinstance(event, Press),
        )

    def mark(self, game_id: int, kind: str, value: Any, *, durable: bool = True) -> None:
        self._write("INSERT INTO marks (game_id, kind, value) VALUES (?, ?, ?)",
                    (game_id, kind, json.dumps(value)), durable=durable)

    def reader(self) -> sqlite3.Connection:
        return connect(self.path, readonly=True)

    def close(self) -> None:
        with self._lock:
            self.conn.close()


# -- reading (any connection) -------------------------------------------------------------------


def game_row(conn: sqlite3.Connection, game_id: int | None = None) -> dict[str, Any] | None:
    if game_id is None:
        row = conn.execute(
            "SELECT id, game, seats, options, practice, created FROM games ORDER BY id DESC LIMIT 1"
        ).fetchone()
    elif not 0 < game_id < 2**63:
        return None  # no such id can exist (and SQLite cannot even be asked)
    else:
        row = conn.execute(
            "SELECT id, game, seats, options, practice, created FROM games WHERE id = ?", (game_id,)
        ).fetchone()
    if row is None:
        return None
    return {"id": row[0], "game": row[1], "seats": json.loads(row[2]),
            "options": json.loads(row[3]), "practice": bool(row[4]), "created": row[5]}


def games(conn: sqlite3.Connection, *, include_practice: bool = False) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT id FROM games ORDER BY id").fetchall()
    out = [game_row(conn, r[0]) for r in rows]
    return [g for g in out if g is not None and (include_practice or not g["practice"])]


def game_start(row: dict[str, Any]) -> GameStart:
    return GameStart(row["game"], tuple(row["seats"]), row["options"])


def events(conn: sqlite3.Connection, game_id: int) -> Iterator[Event]:
    for (body,) in conn.execute(
        "SELECT body FROM events WHERE game_id = ? ORDER BY seq", (game_id,)
    ):
        yield event_from_line(body)


def marks(conn: sqlite3.Connection, game_id: int, kind: str) -> list[Any]:
    return [json.loads(v) for (v,) in conn.execute(
        "SELECT value FROM marks WHERE game_id = ? AND kind = ? ORDER BY seq", (game_id, kind))]


def export_lines(conn: sqlite3.Connection, game_id: int | None = None) -> Iterator[str]:
    """The game's table log, one JSON line each: the game line (every option) then its events."""
    row = game_row(conn, game_id)
    if row is None:
        raise StoreError("no such game" if game_id is not None else "the database holds no game yet")
    yield dumps(event_to_json(game_start(row)))
    for (body,) in conn.execute(
        "SELECT body FROM events WHERE game_id = ? ORDER BY seq", (row["id"],)
    ):
        yield body
