"""Failing disks and a second process (issue 16): the table log loses nothing, errors are one line.

Real SQLite files throughout. A full disk is made two ways: in-process, SQLite's own page limit
(`PRAGMA max_page_count`) makes the real "database or disk is full" error mid-game; for a restart,
the referee runs on a real tiny tmpfs (a private mount namespace from `unshare`, so no root is
needed) that is full before it starts. Read-only media are a read-only bind mount the same way.
"""

from __future__ import annotations

import io
import json
import logging
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.cli.table import Table
from referee.config import default_config
from referee.events import GameStart
from referee.scoreboard.app import WebServer, serve_in_thread
from referee.store.database import Store, connect
from tests.hostile_support import PIN, REFEREE, SEATS, free_port, one_line_error, wait_for


def http(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"X-Table-Pin": PIN, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def counts(db: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return tuple(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # type: ignore[return-value]
                     for t in ("games", "events", "marks"))
    finally:
        conn.close()


def can_unshare() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True)
    return probe.returncode == 0


NEEDS_UNSHARE = pytest.mark.skipif(
    not can_unshare(), reason="no private mount namespace here (unshare --user --mount); the "
                              "in-process full-disk test covers the engine's side")


def in_namespace(script: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


# -- High 2: one referee per database -------------------------------------------------------------


def start_referee(db: Path, port: int, *extra: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [*REFEREE, "play", "spank-the-pig", "--mock", "--no-speech", "--db", str(db),
         "--port", str(port), "--pin", PIN, "--seats", "Blue,Red,Green,Yellow",
         "--option", "pause_ms=300", "--option", "tempo_ms=100", "--option", "window_ms=1500",
         *extra],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc


def wait_serving(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    end = time.monotonic() + 30
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if line.startswith("Scoreboard:"):
            return
        if not line and proc.poll() is not None:
            raise AssertionError(f"the referee stopped: {proc.stderr.read() if proc.stderr else ''}")
    raise AssertionError("the referee did not start")


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=10)


def test_a_second_referee_on_the_same_database_writes_nothing_and_exits_2(tmp_path: Path) -> None:
    db = tmp_path / "referee.db"
    port_a, port_b = free_port(), free_port()
    first = start_referee(db, port_a)
    try:
        wait_serving(first)
        assert http(port_a, "POST", "/api/start", {})[0] == 200  # the judge starts play
        # mid-round, as the issue found it: the race is open when the second one starts
        wait_for(lambda: http(port_a, "GET", "/api/state")[1]["phase"] == "race")
        before = counts(db)
        second = subprocess.run(
            [*REFEREE, "play", "spank-the-pig", "--mock", "--no-speech", "--db", str(db),
             "--port", str(port_b), "--seats", "Blue,Red,Green,Yellow", "--exit-when-over"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        line = one_line_error(second)
        assert "in use by another referee" in line and f"pid {first.pid}" in line, line
        assert "play" in line  # the holder's command
        # nothing from the second process: no void for the running round, no new game
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            voids = [b for (b,) in conn.execute("SELECT body FROM events") if '"void"' in b]
        finally:
            conn.close()
        assert not voids
        assert counts(db)[0] == before[0]
        assert first.poll() is None  # the first table plays on
    finally:
        stop(first)


def test_the_lock_is_released_when_the_referee_is_killed(tmp_path: Path) -> None:
    db = tmp_path / "referee.db"
    proc = start_referee(db, free_port())
    try:
        wait_serving(proc)
    finally:
        proc.kill()  # kill -9: the kernel drops the flock
        proc.communicate(timeout=10)
    store = Store(db)  # a restart takes it
    store.close()


# -- Medium 10: bad databases -----------------------------------------------------------------------


def make_bad(kind: str, path: Path) -> None:
    if kind == "random bytes":
        path.write_bytes(random.Random(16).randbytes(8192))
    elif kind == "empty file":
        path.write_bytes(b"")
    elif kind == "another program's SQLite file":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        conn.execute("INSERT INTO contacts VALUES ('Ann', '555')")
        conn.commit()
        conn.close()


@pytest.mark.parametrize("kind", ["random bytes", "empty file", "another program's SQLite file"])
def test_export_of_a_bad_database_is_one_line(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "bad.db"
    make_bad(kind, db)
    proc = subprocess.run([*REFEREE, "export", "--db", str(db)], capture_output=True, text=True,
                          timeout=30)
    line = one_line_error(proc)
    assert str(db) in line


@pytest.mark.parametrize("kind", ["random bytes", "another program's SQLite file"])
def test_play_on_a_bad_database_is_one_line_and_changes_nothing(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "bad.db"
    make_bad(kind, db)
    before = db.read_bytes()
    proc = subprocess.run([*REFEREE, "play", "--mock", "--no-speech", "--no-web", "--db", str(db),
                           "--exit-when-over"], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=30)
    line = one_line_error(proc)
    assert str(db) in line
    assert db.read_bytes() == before  # not turned into WAL mode, no tables of ours added


@NEEDS_UNSHARE
def test_export_from_a_read_only_mount_in_wal_mode_is_one_line(tmp_path: Path) -> None:
    src, ro = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    ro.mkdir()
    store = Store(src / "referee.db")
    store.new_game(GameStart("spank-the-pig", ("Blue", "Red"), {}))
    store.close()
    (src / "referee.db.lock").unlink()
    assert not (src / "referee.db-wal").exists()  # a clean close leaves no WAL: it must be made
    proc = in_namespace(
        f"mount --bind {src} {ro} && mount -o remount,bind,ro {ro} && "
        f"exec {sys.executable} -m referee.cli.main export --db {ro}/referee.db")
    line = one_line_error(proc)
    assert "referee.db" in line


# -- Medium 7: a full disk --------------------------------------------------------------------------


@pytest.fixture
def full_soon(mock_factory: Any, tmp_path: Path) -> Iterator[tuple[Table, WebServer, io.StringIO]]:
    out = io.StringIO()
    table = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
                  pin=PIN, out=out, auto=False)
    table.start("spank-the-pig", {"tempo_ms": 100, "window_ms": 300, "pause_ms": 100,
                                  "tie_us": 1, "doubles": "off"}, resume=False)
    # the database may not grow past the pages it has: SQLite's real "database or disk is full"
    (pages,) = table.store.conn.execute("PRAGMA page_count").fetchone()
    table.store.conn.execute(f"PRAGMA max_page_count = {pages + 1}")
    server = serve_in_thread(table, "127.0.0.1", 0)
    try:
        yield table, server, out
    finally:
        server.close()
        table.close()


def test_a_full_disk_pauses_the_table_says_so_once_and_refuses_presses(
        full_soon: tuple[Table, WebServer, io.StringIO], caplog: pytest.LogCaptureFixture) -> None:
    table, server, out = full_soon
    port = server.port
    accepted = refused = 0
    caplog.set_level(logging.INFO)
    for _ in range(400):
        status, _ = http(port, "POST", "/api/next-round")
        if status == 507:
            refused += 1
            break
        if status != 200:  # a round is still open: press into it
            pass
        for seat in SEATS:
            status, _ = http(port, "POST", "/api/press", {"seat": seat})
            assert status in (204, 507), status
            if status == 204:
                accepted += 1
            else:
                refused += 1
                break
        if refused:
            break
        time.sleep(0.35)  # the race closes
    assert refused, "the disk never filled"
    engine = table.engine
    assert engine is not None
    state = http(port, "GET", "/api/state")[1]
    assert "storage is full" in state["storage_full"]  # the page says so
    assert state["phase"] == "paused"  # the table pauses
    assert "Storage is full" in out.getvalue()  # the voice says so (printed announcer)
    for _ in range(20):  # later presses: refused, never 204
        assert http(port, "POST", "/api/press", {"seat": "Blue"})[0] == 507
    assert http(port, "POST", "/api/next-round")[0] in (400, 507)
    assert http(port, "POST", "/api/facts", {"round": 1, "void": True})[0] in (400, 507)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and not errors[0].exc_info, [r.getMessage() for r in errors]
    assert "storage is full" in errors[0].getMessage()
    # nothing answered 204 was lost
    conn = connect(table.store.path, readonly=True)
    try:
        bodies = [json.loads(b) for (b,) in conn.execute("SELECT body FROM events")]
    finally:
        conn.close()
    assert sum(1 for b in bodies if b.get("type") == "press") == accepted


@NEEDS_UNSHARE
def test_a_restart_on_a_full_disk_is_one_line_and_exit_2(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    store = Store(src / "referee.db")
    store.new_game(GameStart("spank-the-pig", ("Blue", "Red"), {}))
    store.close()
    (src / "referee.db.lock").unlink()
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = in_namespace(
        f"mount -t tmpfs -o size=512k tmpfs {disk} && cp {src}/referee.db {disk}/ && "
        f"(dd if=/dev/zero of={disk}/filler bs=4k 2>/dev/null; true) && "
        f"exec {sys.executable} -m referee.cli.main play --mock --no-speech --no-web "
        f"--seats Blue,Red --db {disk}/referee.db --exit-when-over")
    line = one_line_error(proc)
    assert "storage is full" in line


@NEEDS_UNSHARE
@pytest.mark.parametrize(("free_kib", "opens"), [(100, False), (700, True)])
def test_too_little_room_for_the_database_is_refused_up_front(
        tmp_path: Path, free_kib: int, opens: bool) -> None:
    """With 100 KiB free the referee refuses at the start (say so now, not mid-round) and writes
    nothing; with 700 KiB it opens."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import sys\n"
        "from referee.store.database import StorageFull, Store\n"
        "import os\n"
        "try:\n"
        "    Store(sys.argv[1]).close()\n"
        "    print('opened')\n"
        "except StorageFull as exc:\n"
        "    print('refused:', exc)\n"
        "print(sorted(os.listdir(os.path.dirname(sys.argv[1]))))\n")
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = in_namespace(
        f"mount -t tmpfs -o size=2m tmpfs {disk} && "
        f"dd if=/dev/zero of={disk}/filler bs=4k count={(2048 - free_kib) // 4} 2>/dev/null && "
        f"exec {sys.executable} {probe} {disk}/referee.db")
    assert proc.returncode == 0, proc.stderr
    said, files = proc.stdout.strip().splitlines()
    if opens:
        assert said == "opened", said
    else:
        assert said.startswith("refused:") and "storage is full" in said, said
        assert files == "['filler']"  # nothing written: no database, no lock file


# -- Medium 12: SIGTERM ---------------------------------------------------------------------------


def test_sigterm_finishes_the_round_checkpoints_and_exits_0(tmp_path: Path) -> None:
    db = tmp_path / "referee.db"
    port = free_port()
    proc = start_referee(db, port)
    try:
        wait_serving(proc)
        assert http(port, "POST", "/api/start", {})[0] == 200  # the judge starts play
        wait_for(lambda: http(port, "GET", "/api/state")[1]["phase"] == "race")
        proc.send_signal(signal.SIGTERM)  # systemctl stop, mid-round
        _, err = proc.communicate(timeout=20)
    finally:
        stop(proc)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    wal = Path(f"{db}-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        bodies = [json.loads(b) for (b,) in conn.execute("SELECT body FROM events")]
        ruled = [json.loads(v)["round"] for (v,) in conn.execute(
            "SELECT value FROM marks WHERE kind = 'ruled'")]
    finally:
        conn.close()
    cues = sum(1 for b in bodies if b.get("type") == "cue")
    assert cues and cues in ruled  # the round in play was finished and ruled before the exit
    assert not any(b.get("void") for b in bodies)  # and nothing is left to void at restart


def test_the_service_does_not_restart_in_a_loop_on_a_one_line_error() -> None:
    unit = (Path(__file__).resolve().parent.parent / "hardware" / "table-referee.service").read_text()
    assert "RestartPreventExitStatus=2" in unit  # a full disk exits 2: systemd must not loop
    stop_s = int(unit.split("TimeoutStopSec=")[1].split()[0])
    assert stop_s > 5 + 5  # the finishing round (5 s at most) and the checkpoint fit in


def test_the_storage_full_phrase_is_rendered_before_the_disk_fills() -> None:
    from referee.voice.phrases import table_lines, text

    said = text("storage_full", {})
    assert "Storage is full" in said
    # rendered at start with the table's other phrases: saying it needs no room on the disk
    assert said in [line.text for line in table_lines(SEATS)]


# -- Issue 24: a new game on a full disk ----------------------------------------------------------


@NEEDS_UNSHARE
def test_a_new_game_on_a_full_disk_is_507_and_the_old_table_plays_on(tmp_path: Path) -> None:
    """A real tmpfs in a private mount namespace: the referee's database lives on it, the disk is
    filled from outside (through /proc/PID/root), a new game is asked for, then room is made."""
    disk, port = tmp_path / "disk", free_port()
    disk.mkdir()
    proc = subprocess.Popen(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
         f"mount -t tmpfs -o size=2m tmpfs {disk} && exec {sys.executable} -m referee.cli.main "
         f"play spank-the-pig --mock --no-speech --db {disk}/referee.db --port {port} "
         f"--pin {PIN} --seats Blue,Red,Green,Yellow"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        wait_serving(proc)
        inside = Path(f"/proc/{proc.pid}/root") / str(disk).lstrip("/")
        before = http(port, "GET", "/api/state")[1]["game_id"]
        with open(inside / "filler", "wb") as filler:  # the disk fills up
            try:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            except OSError:
                pass
        status, body = http(port, "POST", "/api/new-game", {"game": "pig"})
        assert status == 507, (status, body)
        assert "storage is full" in body["error"] and len(body["error"].splitlines()) == 1
        (inside / "filler").unlink()  # room again: the old game is still the table's
        state = http(port, "GET", "/api/state")[1]
        assert state["game_id"] == before and state["game"] == "spank-the-pig"
        for seat in SEATS:  # its presses still go in (each seat's ready press)
            assert http(port, "POST", "/api/press", {"seat": seat})[0] == 204
        wait_for(lambda: http(port, "GET", "/api/state")[1]["phase"] != "setup", timeout=10)
        assert http(port, "POST", "/api/pause", {})[0] in (200, 400)  # the engine answers
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err


# -- Issue 24: one referee per database file, whatever name reaches it ---------------------------


def events_and_games(db: Path) -> tuple[int, int, list[str]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        bodies = [b for (b,) in conn.execute("SELECT body FROM events")]
        (games,) = conn.execute("SELECT COUNT(*) FROM games").fetchone()
    finally:
        conn.close()
    return len(bodies), games, [b for b in bodies if '"void"' in b]


@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_another_name_for_a_live_database_is_refused_and_writes_nothing(
        tmp_path: Path, link: str) -> None:
    db = tmp_path / "b.db"
    port_a = free_port()
    first = start_referee(db, port_a)
    try:
        wait_serving(first)
        assert http(port_a, "POST", "/api/start", {})[0] == 200
        wait_for(lambda: http(port_a, "GET", "/api/state")[1]["phase"] == "race")
        other = tmp_path / "bl.db"
        if link == "symlink":
            other.symlink_to(db.name)
        else:
            os.link(db, other)
        before = events_and_games(db)
        second = subprocess.run(
            [*REFEREE, "play", "spank-the-pig", "--mock", "--no-speech", "--db", str(other),
             "--port", str(free_port()), "--seats", "Blue,Red,Green,Yellow", "--exit-when-over"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        line = one_line_error(second)
        assert "bl.db" in line
        assert ("in use by another referee" in line if link == "symlink"
                else "hard links" in line), line
        after = events_and_games(db)
        assert after[1] == before[1] and not after[2]  # no new game, no void written
        assert not (tmp_path / "bl.db.lock").exists() and not (tmp_path / "bl.db-wal").exists()
        assert first.poll() is None
    finally:
        stop(first)


def test_a_second_store_in_the_same_process_through_a_symlink_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "b.db")
    try:
        (tmp_path / "bl.db").symlink_to("b.db")
        with pytest.raises(Exception, match="in use by another referee"):
            Store(tmp_path / "bl.db")
        store.new_game(GameStart("pig", ("A", "B", "C"), {}))  # the first one's locks still hold
    finally:
        store.close()
    Store(tmp_path / "bl.db").close()  # once it is closed, any name takes it


# -- Issue 24: damaged, foreign and newer databases ----------------------------------------------


def played_db(path: Path, presses: int = 3000) -> None:
    from referee.events import Press

    store = Store(path)
    game = store.new_game(GameStart("spank-the-pig", ("Blue", "Red"), {}))
    for i in range(presses):
        store.append(game, Press(i * 1000, "Blue" if i % 2 else "Red", "slap"))
    store.close()
    (path.parent / f"{path.name}.lock").unlink()


def damage(kind: str, db: Path) -> None:
    played_db(db)
    if kind == "a garbage page":
        with open(db, "r+b") as f:
            f.seek(4096 * 5)
            f.write(random.Random(24).randbytes(4096))
    elif kind == "schema 99":
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 99")
        conn.close()
    elif kind == "a renamed column":
        conn = sqlite3.connect(db)
        conn.execute("ALTER TABLE events RENAME COLUMN body TO line")
        conn.close()
    elif kind == "an unknown event type":
        conn = sqlite3.connect(db)
        conn.execute("INSERT INTO events (game_id, body) VALUES (1, '{\"type\": \"teleport\"}')")
        conn.commit()
        conn.close()
    elif kind == "a truncated WAL":  # a referee killed mid-game, then its journal cut in half
        src = db.with_name("live.db")
        played_db(src, 10)
        store = Store(src)
        from referee.events import Press

        for i in range(400):
            store.append(1, Press(10**8 + i, "Blue", "slap"))
        for suffix in ("", "-wal", "-shm"):  # what a kill -9 leaves behind
            shutil.copy(f"{src}{suffix}", f"{db}{suffix}")
        store.close()
        wal = Path(f"{db}-wal")
        os.truncate(wal, wal.stat().st_size // 2)


DAMAGES = ["a garbage page", "a truncated WAL", "schema 99", "a renamed column",
           "an unknown event type"]


@pytest.mark.parametrize("kind", DAMAGES)
def test_export_of_a_damaged_or_newer_database_is_one_line(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "referee.db"
    damage(kind, db)
    proc = subprocess.run([*REFEREE, "export", "--db", str(db)], capture_output=True, text=True,
                          timeout=30)
    line = one_line_error(proc)
    assert str(db) in line
    assert "newer Table Referee" in line if kind == "schema 99" else "--db" in line


@pytest.mark.parametrize("kind", DAMAGES)
def test_play_on_a_damaged_or_newer_database_is_one_line_and_writes_nothing(
        tmp_path: Path, kind: str) -> None:
    db = tmp_path / "referee.db"
    damage(kind, db)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("referee")}
    proc = subprocess.run([*REFEREE, "play", "spank-the-pig", "--mock", "--no-speech", "--no-web",
                           "--seats", "Blue,Red", "--db", str(db), "--exit-when-over"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    line = one_line_error(proc)
    assert str(db) in line
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("referee")
             and not p.name.endswith(".lock")}
    assert after == {k: v for k, v in before.items() if not k.endswith(".lock")}


def test_doctor_names_a_damaged_database_and_its_fix(tmp_path: Path) -> None:
    db = tmp_path / "referee.db"
    damage("a garbage page", db)
    proc = subprocess.run([*REFEREE, "doctor", "--mock", "--db", str(db)], capture_output=True,
                          text=True, timeout=120)
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "damaged" in ln]
    assert len(lines) == 1 and ".recover" in lines[0], proc.stdout[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr


def test_an_older_database_is_brought_to_the_current_schema(tmp_path: Path) -> None:
    from referee.store.database import SCHEMA_VERSION

    db = tmp_path / "referee.db"
    played_db(db, 5)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 0")  # as every database before versions were kept
    conn.close()
    proc = subprocess.run([*REFEREE, "export", "--db", str(db)], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 6, proc.stderr
    Store(db).close()  # a referee opens it for writing: migrated
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
