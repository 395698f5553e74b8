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

import errno
import fcntl
import json
import os
import sqlite3
import sys
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


class StorageFull(StoreError):
    """A write failed because the disk (or the database's room on it) is full."""


class DatabaseBusy(StoreError):
    """Another referee holds the database."""


FULL_MESSAGE = ("storage is full: the table log cannot grow; free space on the SD card, then "
                "restart the referee (nothing already logged is lost)")


def storage_error(path: Path, exc: BaseException) -> StoreError:
    """A write error as one line: a full disk is `StorageFull`, anything else a `StoreError`."""
    text = str(exc)
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "disk is full" in text:
        return StorageFull(f"database {str(path)!r}: {FULL_MESSAGE}")
    return StoreError(f"database {str(path)!r}: {text}; check the disk and its permissions")


MIN_FREE_BYTES = 256 * 1024  # room for a few thousand events and SQLite's shared-memory file


def free_bytes(folder: Path) -> int:
    try:
        st = os.statvfs(folder)
    except OSError:
        return MIN_FREE_BYTES  # cannot tell: let the first write say
    return st.f_bavail * st.f_frsize


class WriterLock:
    """An exclusive lock on a database, held by the one process that writes it.

    A lock file next to the database (`referee.db.lock`) holds an `flock` for as long as the
    process lives (the kernel drops it when the process dies, even by kill -9) and names the
    holder (pid and command) so a second referee can say who it is.
    """

    def __init__(self, path: Path) -> None:
        self.path = path.with_name(path.name + ".lock")
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot create the lock file {str(self.path)!r}: {exc.strerror}; "
                             f"check the directory's permissions") from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(self.fd, 512, 0).decode("utf-8", "replace").strip() or "unknown"
            os.close(self.fd)
            raise DatabaseBusy(f"database {str(path)!r} is in use by another referee "
                               f"({printable(holder)}); stop it first, or give another --db"
                               ) from None
        command = " ".join(sys.argv) or sys.executable
        try:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"pid {os.getpid()}: {command}\n".encode(errors="replace"), 0)
        except OSError:
            pass  # a full disk: the lock holds all the same, only the holder goes unnamed

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the flock
            self.fd = -1


def printable(text: str) -> str:
    """Text safe to print on one console line: control characters shown as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def connect(path: str | Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection to a Table Referee database; anything else is a one-line `StoreError`.

    The file is checked before anything is written to it: another program's SQLite file is
    refused, not given our tables, and random bytes are refused, not turned into WAL mode.
    """
    path = Path(path)
    try:
        if readonly:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=5000")
    except (sqlite3.Error, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise StoreError(f"database {str(path)!r}: {reason}; check the path and its permissions"
                         ) from None
    try:
        tables = {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and not {"games", "events"} <= tables:
            raise StoreError(f"{str(path)!r} is not a Table Referee database (it holds other "
                             f"tables); give another --db")
        if readonly and not tables:
            raise StoreError(f"database {str(path)!r} holds no game yet; play a game first")
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
    except sqlite3.Error as exc:
        conn.close()
        if "disk is full" in str(exc):
            raise StorageFull(f"database {str(path)!r}: {FULL_MESSAGE}") from None
        hint = {"file is not a database": "it is not an SQLite file; give another --db",
                "unable to open database file": "it cannot be opened here (a read-only disk "
                "holding a WAL database?); copy it somewhere writable",
                "attempt to write a readonly database": "it is read-only; check its "
                "permissions"}.get(str(exc), "check the file")
        raise StoreError(f"database {str(path)!r}: {exc}; {hint}") from None
    except StoreError:
        conn.close()
        raise
    return conn


class Store:
    """One writer (the engine thread); readers open their own connections with `reader()`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.demo = False  # `referee demo`'s store: every game it opens is marked a demo game
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"database {str(self.path)!r}: {exc.strerror}; check the path and "
                             f"its permissions") from None
        self.writer = WriterLock(self.path)  # before anything is written
        if free_bytes(self.path.parent) < MIN_FREE_BYTES:  # say so now, not mid-round
            self.writer.release()
            raise StorageFull(f"database {str(self.path)!r}: {FULL_MESSAGE}")
        try:
            self.conn = connect(self.path)
        except BaseException:
            self.writer.release()
            raise
        self._sync = ""
        self._lock = threading.Lock()

    def _write(self, sql: str, args: tuple[Any, ...], *, durable: bool) -> int:
        sync = "FULL" if durable else "NORMAL"
        with self._lock:
            try:
                if sync != self._sync:
                    self.conn.execute(f"PRAGMA synchronous={sync}")
                    self._sync = sync
                cur = self.conn.execute(sql, args)
            except (sqlite3.OperationalError, OSError) as exc:
                raise storage_error(self.path, exc) from None
            return int(cur.lastrowid or 0)

    def new_game(self, start: GameStart, *, practice: bool = False) -> int:
        created = datetime.now(UTC).isoformat(timespec="seconds")
        game_id = self._write(
            "INSERT INTO games (game, seats, options, practice, created) VALUES (?, ?, ?, ?, ?)",
            (start.game, json.dumps(list(start.seats)), json.dumps(dict(start.options)),
             int(practice), created),
            durable=True,
        )
        if self.demo:
            self.mark(game_id, "demo", True)
        return game_id

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

    def checkpoint(self) -> None:
        """Fold the WAL into the database file (on a clean stop)."""
        with self._lock:
            try:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass  # a full disk or a reader in the way: the WAL stays, and is replayed on open

    def close(self) -> None:
        with self._lock:
            self.conn.close()
            self.writer.release()


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
    """A game's logged events; its facts lines are read as its own game declares them."""
    row = conn.execute("SELECT game FROM games WHERE id = ?", (game_id,)).fetchone()
    game = None if row is None else str(row[0])
    for (body,) in conn.execute(
        "SELECT body FROM events WHERE game_id = ? ORDER BY seq", (game_id,)
    ):
        yield event_from_line(body, game)


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
