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
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from referee.events import Event, GameStart, LogFull, Press
from referee.store.tablelog import dumps, event_from_line, event_to_json

T = TypeVar("T")

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


class StorageFull(StoreError, LogFull):
    """A write failed because the disk (or the database's room on it) is full (the engine knows
    it as `LogFull`, the vocabulary's word for a log that cannot grow)."""


class StorageDamaged(StorageFull):
    """A write failed because the database file is damaged: like a full disk, the log cannot
    grow, so the table pauses and refuses what it cannot log (nothing already written is lost)."""


class BadDatabase(StoreError):
    """The file is damaged, another program's, or from a newer version: its line says the fix."""


class DatabaseBusy(StoreError):
    """Another referee holds the database."""


FULL_MESSAGE = ("storage is full: the table log cannot grow; free space on the SD card, then "
                "restart the referee (nothing already logged is lost)")


def storage_error(path: Path, exc: BaseException) -> StoreError:
    """A write error as one line: a full disk is `StorageFull`, anything else a `StoreError`."""
    text = str(exc)
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "disk is full" in text:
        return StorageFull(f"database {str(path)!r}: {FULL_MESSAGE}")
    return StorageDamaged(f"database {str(path)!r}: {text}; check the disk and its permissions")


def http_status(exc: StoreError) -> int:
    """507 for a full disk (the client may try again once there is room), else 503."""
    return 507 if isinstance(exc, StorageFull) and not isinstance(exc, StorageDamaged) else 503


MIN_FREE_BYTES = 256 * 1024  # room for a few thousand events and SQLite's shared-memory file


def free_bytes(folder: Path) -> int:
    try:
        st = os.statvfs(folder)
    except OSError:
        return MIN_FREE_BYTES  # cannot tell: let the first write say
    return st.f_bavail * st.f_frsize


class WriterLock:
    """An exclusive lock on a database, held by the one process that writes it.

    The lock is on the database file itself (an `flock` on its inode, so every name that reaches
    the file — a symlink, a relative path — meets the same lock); the kernel drops it when the
    process dies, even by kill -9. A second name made by a hard link is refused outright: SQLite
    keeps its journal (`-wal`) beside the name it was given, so two names would be two journals
    for one file. A file next to the real path (`referee.db.lock`) names the holder (pid and
    command) so a second referee can say who it is.

    SQLite's own locks are POSIX record locks, which a process loses on *every* descriptor of the
    file when it closes *any* of them: so this descriptor is closed only after the database's
    connection, and a second lock in the same process is refused before any descriptor is opened.
    """

    _held: set[tuple[int, int]] = set()  # (device, inode) of the databases this process writes
    _held_lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        real = Path(os.path.realpath(path))
        self.path = real.with_name(real.name + ".lock")
        self.key: tuple[int, int] | None = None
        self.fd = -1
        try:
            st = os.stat(real)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise StoreError(f"database {str(path)!r}: {exc.strerror}; check the path and its "
                             f"permissions") from None
        if st is not None and st.st_nlink > 1:
            raise StoreError(f"database {str(path)!r} has {st.st_nlink} names (hard links), and "
                             f"SQLite keeps one journal per name; remove the other names, or "
                             f"copy the file (cp) and give the copy as --db")
        if st is not None and (st.st_dev, st.st_ino) in WriterLock._held:
            raise self._busy(path)
        try:
            self.fd = os.open(real, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError(f"database {str(path)!r}: {exc.strerror}; check the file's and its "
                             f"folder's permissions") from None
        st = os.fstat(self.fd)
        with WriterLock._held_lock:
            key = (st.st_dev, st.st_ino)
            if key in WriterLock._held:  # another thread of this process took it meanwhile
                os.close(self.fd)
                self.fd = -1
                raise self._busy(path)
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(self.fd)  # no connection of this process to it: nothing else drops
                self.fd = -1
                raise self._busy(path) from None
            WriterLock._held.add(key)
            self.key = key
        command = " ".join(sys.argv) or sys.executable
        try:
            named = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                os.ftruncate(named, 0)
                os.pwrite(named, f"pid {os.getpid()}: {command}\n".encode(errors="replace"), 0)
            finally:
                os.close(named)
        except OSError:
            pass  # a full disk or a read-only folder: the lock holds, only the holder goes unnamed

    def _busy(self, path: Path) -> DatabaseBusy:
        try:
            with open(self.path, "rb") as f:
                holder = f.read(512).decode("utf-8", "replace").strip()
        except OSError:
            holder = ""
        return DatabaseBusy(f"database {str(path)!r} is in use by another referee "
                            f"({printable(holder or 'unknown')}); stop it first, or give "
                            f"another --db")

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the flock
            self.fd = -1
        if self.key is not None:
            with WriterLock._held_lock:
                WriterLock._held.discard(self.key)
            self.key = None


def folder_problem(path: Path, exc: OSError) -> str:
    """Why the folder of `path` cannot be made, in words: a file standing where a folder must
    be is named ("File exists" said nothing of which)."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{str(parent)!r} is a file, not a folder"
            break
    return exc.strerror or str(exc)


def printable(text: str) -> str:
    """Text safe to print on one console line: control characters shown as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


SCHEMA_VERSION = 1  # PRAGMA user_version: 0 is a database from before versions were kept
COLUMNS = {"games": {"id", "game", "seats", "options", "practice", "created"},
           "events": {"seq", "game_id", "body"}, "marks": {"seq", "game_id", "kind", "value"}}
DAMAGED = ("keep a copy of it and its -wal file, then rescue what is readable with "
           "`sqlite3 {path} .recover | sqlite3 rescued.db` and give --db rescued.db, or give "
           "another --db")


class Connection(sqlite3.Connection):
    """A connection that knows its database's path, so a read error can name the file."""

    path = ""


def damaged(path: str | Path, exc: BaseException) -> StoreError:
    """A read or write error of a damaged (or foreign) database as one line with the fix."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    if "disk is full" in reason:
        return StorageFull(f"database {str(path)!r}: {FULL_MESSAGE}")
    return BadDatabase(f"database {str(path)!r} is damaged ({printable(reason)}); "
                       + DAMAGED.format(path=path))


def wal_cut_short(path: Path) -> str:
    """Why the journal beside `path` has lost changes it had saved ("" if it has not).

    The shared-memory index (`-shm`, left by a referee that stopped without closing) records how
    many frames of the journal (`-wal`) are saved changes; a journal with fewer whole frames was
    cut short (a half-written frame after them is a change that was never saved, and is normal).
    """
    import struct

    try:
        with open(f"{path}-shm", "rb") as f:
            index = f.read(48)
        wal_size = os.path.getsize(f"{path}-wal")
        with open(f"{path}-wal", "rb") as f:
            header = f.read(32)
    except OSError:
        return ""
    if len(index) < 48 or not index[12] or len(header) < 32:
        return ""
    size = struct.unpack("=H", index[14:16])[0]
    page = 65536 if size == 1 else size
    saved = struct.unpack("=I", index[16:20])[0]
    if header[16:24] != index[32:40] or page < 512:  # another generation of the journal
        return ""
    frames = max(0, wal_size - 32) // (page + 24)
    if frames >= saved:
        return ""
    return f"its journal {path}-wal is cut short ({frames} of its {saved} saved frames are there)"


def connect(path: str | Path, *, readonly: bool = False, check: bool = True) -> sqlite3.Connection:
    """A connection to a Table Referee database; anything else is a one-line `StoreError`.

    The file is checked before anything is written to it: another program's SQLite file is
    refused, not given our tables, and random bytes are refused, not turned into WAL mode. With
    `check`, the whole file is read once (`PRAGMA quick_check`): a damaged page is found at the
    start, not in the middle of a game. A database from a newer version (`PRAGMA user_version`
    above ours) is refused; an older one is brought up to date.
    """
    path = Path(path)
    cut = wal_cut_short(path)
    if cut:
        raise BadDatabase(f"database {str(path)!r}: {cut}; " + DAMAGED.format(path=path))
    try:
        if readonly:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False,
                                   factory=Connection)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                   factory=Connection)
        conn.path = str(path)
        conn.execute("PRAGMA busy_timeout=5000")
    except (sqlite3.Error, OSError) as exc:
        reason = folder_problem(path, exc) if isinstance(exc, OSError) else exc
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
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise BadDatabase(f"database {str(path)!r} was written by a newer Table Referee "
                             f"(schema {version}; this one reads up to {SCHEMA_VERSION}); "
                             f"upgrade the referee, or give another --db")
        for table in tables & COLUMNS.keys():
            have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            missing = sorted(COLUMNS[table] - have)
            if missing:
                raise BadDatabase(f"{str(path)!r} is not a Table Referee database this version "
                                 f"reads (table {table} has no column {missing[0]!r}); give "
                                 f"another --db")
        if check and tables:
            problems = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                raise damaged(path, sqlite3.DatabaseError(problems[0]))
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
            if version < SCHEMA_VERSION:  # 0: before versions; its tables are today's
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except sqlite3.Error as exc:
        conn.close()
        if "disk is full" in str(exc):
            raise StorageFull(f"database {str(path)!r}: {FULL_MESSAGE}") from None
        hint = {"file is not a database": "it is not an SQLite file; give another --db",
                "unable to open database file": "it cannot be opened here (a read-only disk "
                "holding a WAL database?); copy it somewhere writable",
                "attempt to write a readonly database": "it is read-only; check its "
                "permissions"}.get(str(exc))
        if hint is None:
            raise damaged(path, exc) from None
        raise StoreError(f"database {str(path)!r}: {exc}; {hint}") from None
    except StoreError:
        conn.close()
        raise
    return conn


def reading(conn: sqlite3.Connection, what: Callable[[], T]) -> T:
    """`what()` with a damaged database (or an event this version cannot read) as one line."""
    path = getattr(conn, "path", "") or "the table log"
    try:
        return what()
    except sqlite3.DatabaseError as exc:
        raise damaged(path, exc) from None
    except ValueError as exc:  # a line or a value this version does not know
        reason = printable(str(exc).strip().splitlines()[0] if str(exc).strip() else "bad value")
        raise BadDatabase(f"database {str(path)!r} holds a line this version cannot read "
                         f"({reason}); upgrade the referee, or give another --db") from None


def rows(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...] = ()) -> Iterator[Any]:
    """The rows of a query, read one by one; a damaged page met on the way is one line."""
    cur = reading(conn, lambda: conn.execute(sql, args))
    while True:
        row = reading(conn, cur.fetchone)
        if row is None:
            return
        yield row


class Store:
    """One writer (the engine thread); readers open their own connections with `reader()`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.demo = False  # `referee demo`'s store: every game it opens is marked a demo game
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"database {str(self.path)!r}: {folder_problem(self.path, exc)}; "
                             f"check the path and its permissions") from None
        if free_bytes(self.path.parent) < MIN_FREE_BYTES:  # say so now, not mid-round, and
            raise StorageFull(f"database {str(self.path)!r}: {FULL_MESSAGE}")  # write nothing
        self.writer = WriterLock(self.path)  # before anything is written
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
            except sqlite3.Error as exc:  # a damaged page met by the write
                error = damaged(self.path, exc)
                raise (error if isinstance(error, StorageFull)
                       else StorageDamaged(str(error))) from None
            return int(cur.lastrowid or 0)

    def last_known_time(self) -> datetime | None:
        """The latest game's date: the box's own last-known time (a Pi has no clock that runs
        while it is off, and Trixie no fake-hwclock to carry the time across a reboot)."""
        with self._lock:
            try:
                row = self.conn.execute("SELECT max(created) FROM games").fetchone()
            except sqlite3.Error:
                return None
        try:
            return datetime.fromisoformat(row[0]) if row and row[0] else None
        except ValueError:
            return None

    def clock_behind(self, now: datetime | None = None) -> str | None:
        """One line when the wall clock is behind the last game's date (booted offline, no
        hardware clock), else None."""
        now = now or datetime.now(UTC)
        last = self.last_known_time()
        if last is None or now >= last:
            return None
        return (f"the clock says {now:%Y-%m-%d %H:%M} UTC, before the last game in the database "
                f"({last:%Y-%m-%d %H:%M} UTC): the box started without network time and has no "
                "hardware clock. New games are dated from the last game's date (History keeps "
                "them in order, marked 'date approximate') until the clock is set: connect the "
                "Pi to a network once, or fit a real-time clock (a Pi 5's battery)")

    def new_game(self, start: GameStart, *, practice: bool = False) -> int:
        now = datetime.now(UTC)
        last = self.last_known_time()
        behind = last is not None and now < last
        created = (last if behind and last is not None else now).isoformat(timespec="seconds")
        game_id = self._write(
            "INSERT INTO games (game, seats, options, practice, created) VALUES (?, ?, ?, ?, ?)",
            (start.game, json.dumps(list(start.seats)), json.dumps(dict(start.options)),
             int(practice or start.practice), created),
            durable=True,
        )
        if start.declared is not None:  # a game from a file: its record keeps its declaration
            self.mark(game_id, "declared", start.declared)
        if self.demo:
            self.mark(game_id, "demo", True)
        if behind:  # the clock was behind the last game's date: this date is a lower bound
            self.mark(game_id, "date_approximate", now.isoformat(timespec="seconds"))
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

    # -- what the engine reads back when it resumes a game (its `TableLog` port) ------------------

    def game(self, game_id: int) -> tuple[GameStart, bool] | None:
        """A game's `game` line and whether it was a practice game; None: no such game."""
        row = game_row(self.conn, game_id)
        return None if row is None else (game_start(row), bool(row["practice"]))

    def events(self, game_id: int) -> Iterator[Event]:
        return events(self.conn, game_id)

    def marks(self, game_id: int, kind: str) -> list[Any]:
        return marks(self.conn, game_id, kind)

    def reader(self) -> sqlite3.Connection:
        return connect(self.path, readonly=True, check=False)  # checked whole at the start

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
        found = rows(conn, "SELECT id, game, seats, options, practice, created FROM games "
                           "ORDER BY id DESC LIMIT 1")
    elif not 0 < game_id < 2**63:
        return None  # no such id can exist (and SQLite cannot even be asked)
    else:
        found = rows(conn, "SELECT id, game, seats, options, practice, created FROM games "
                           "WHERE id = ?", (game_id,))
    row = next(found, None)
    if row is None:
        return None
    out = reading(conn, lambda: {
        "id": row[0], "game": row[1], "seats": json.loads(row[2]),
        "options": json.loads(row[3]), "practice": bool(row[4]), "created": row[5]})
    declared = marks(conn, row[0], "declared")
    out["declared"] = declared[-1] if declared else None
    return out


def games(conn: sqlite3.Connection, *, include_practice: bool = False) -> list[dict[str, Any]]:
    out = [game_row(conn, r[0]) for r in list(rows(conn, "SELECT id FROM games ORDER BY id"))]
    return [g for g in out if g is not None and (include_practice or not g["practice"])]


def game_start(row: dict[str, Any]) -> GameStart:
    return GameStart(row["game"], tuple(row["seats"]), row["options"], bool(row["practice"]),
                     row.get("declared"))


def events(conn: sqlite3.Connection, game_id: int) -> Iterator[Event]:
    """A game's logged events; its facts lines are read as its own game declares them."""
    row = reading(conn, lambda: conn.execute("SELECT game FROM games WHERE id = ?",
                                             (game_id,)).fetchone())
    game = None if row is None else str(row[0])
    for (body,) in rows(conn, "SELECT body FROM events WHERE game_id = ? ORDER BY seq",
                        (game_id,)):
        yield reading(conn, lambda b=body: event_from_line(b, game))  # type: ignore[misc]


def marks(conn: sqlite3.Connection, game_id: int, kind: str) -> list[Any]:
    return [reading(conn, lambda v=v: json.loads(v))  # type: ignore[misc]
            for (v,) in rows(conn, "SELECT value FROM marks WHERE game_id = ? AND kind = ? "
                                   "ORDER BY seq", (game_id, kind))]


def export_lines(conn: sqlite3.Connection, game_id: int | None = None) -> Iterator[str]:
    """The game's table log, one JSON line each: the game line (every option) then its events."""
    row = game_row(conn, game_id)
    if row is None:
        raise StoreError("no such game" if game_id is not None else "the database holds no game yet")
    yield dumps(event_to_json(game_start(row)))
    for (body,) in rows(conn, "SELECT body FROM events WHERE game_id = ? ORDER BY seq",
                        (row["id"],)):
        reading(conn, lambda b=body: event_from_line(b))  # type: ignore[misc]  # readable here
        yield body
