"""A box that booted offline with its clock behind: Trixie has no fake-hwclock, a Pi before the
5 has no battery clock, so until network time comes the clock may read the image's build date
(or, with systemd-timesyncd, its last saved minute). The referee keeps its own last-known time,
the last game's date in its database: it warns at start and never dates a new game before it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from referee.events import GameStart
from referee.scoreboard.history import past_games
from referee.store.database import Store, connect
from tests.support import ROOT

SEATS = ("Blue", "Red")
FUTURE = "2999-06-01T20:15:00+00:00"  # "the last game": later than any clock this test meets


def a_database_whose_last_game_is_ahead_of_the_clock(path: Path) -> None:
    store = Store(path)
    try:
        store.new_game(GameStart("spank-the-pig", SEATS, {"doubles": "off"}))
    finally:
        store.close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE games SET created = ?", (FUTURE,))
    conn.close()


def test_a_new_game_is_never_dated_before_the_last_one_and_history_says_approximate(
        tmp_path: Path) -> None:
    path = tmp_path / "referee.db"
    a_database_whose_last_game_is_ahead_of_the_clock(path)
    store = Store(path)
    try:
        behind = store.clock_behind()
        assert behind is not None and "before the last game in the database" in behind
        assert "(2999-06-01 20:15 UTC)" in behind and "connect the Pi to a network" in behind
        store.new_game(GameStart("spank-the-pig", SEATS, {"doubles": "off"}))
    finally:
        store.close()
    conn = connect(path, readonly=True)
    try:
        games = {g.id: g.to_json() for g in past_games(conn, str(path))}
    finally:
        conn.close()
    assert games[2]["created"] == FUTURE  # not the clock's earlier date
    assert games[2]["date_approximate"] and not games[1]["date_approximate"]


def test_a_clock_ahead_of_the_last_game_dates_as_before(tmp_path: Path) -> None:
    store = Store(tmp_path / "referee.db")
    try:
        store.new_game(GameStart("spank-the-pig", SEATS, {"doubles": "off"}))
        assert store.clock_behind() is None
        second = store.new_game(GameStart("spank-the-pig", SEATS, {"doubles": "off"}))
        last = store.last_known_time()
        assert last is not None and abs((datetime.now(UTC) - last).total_seconds()) < 5
    finally:
        store.close()
    conn = connect(tmp_path / "referee.db", readonly=True)
    try:
        games = past_games(conn, str(tmp_path / "referee.db"))
        assert not next(g for g in games if g.id == second).date_approximate
    finally:
        conn.close()


def test_play_warns_at_start_when_the_clock_is_behind(tmp_path: Path) -> None:
    path = tmp_path / "referee.db"
    a_database_whose_last_game_is_ahead_of_the_clock(path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli.main", "play", "spank-the-pig", "--mock", "--no-speech",
         "--no-web", "--db", str(path), "--new", "--seats", "Blue,Red"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60  # a loaded machine starts a referee slowly
        while time.monotonic() < deadline and not any("the clock says" in x for x in lines):
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
        reader.join(timeout=5)
    warning = [line for line in lines if "the clock says" in line]
    assert len(warning) == 1 and warning[0].startswith("Warning: the clock says"), lines
