"""The table's rhythm in small: the state machine, failed starts, resuming, early ends (issue 13)."""

from __future__ import annotations

import io
import socket
from pathlib import Path

from gpiozero.pins.mock import MockFactory

from referee.cli import main as cli
from referee.cli.table import Table, unfinished_game
from referee.config import default_config
from referee.engine.rhythm import Decision, Pace, Phase, Rhythm, View
from referee.events import Press
from referee.store.database import Store, connect, games
from referee.voice.announce import PrintAnnouncer


def view(**kw: object) -> View:
    base = dict(rounds=0, race_open=False, current_awaits=False, over=False, can_call=True,
                quiet_at=0)
    base.update(kw)
    return View(**base)  # type: ignore[arg-type]


def test_ready_presses_are_never_game_presses_and_play_waits_for_every_seat() -> None:
    r = Rhythm(["A", "B"], Pace(count_in_us=1_000_000, pause_us=500_000))
    assert r.press("A", 100) == "ready"
    assert r.tick(10_000_000, view()) is None and r.phase is Phase.READY  # B is not ready
    assert r.press("B", 200) == "ready" and r.all_ready()
    assert r.start(300)
    assert r.press("A", 400) == "ignore"  # during the count-in
    assert r.tick(400, view(quiet_at=500)) is None
    assert r.tick(1_000_499, view(quiet_at=500)) is None
    assert r.tick(1_000_500, view(quiet_at=500)) is Decision.CALL  # 500 + 1 s count-in
    r.called(1_000_500)
    assert r.press("B", 1_000_400) == "ignore"  # an edge from before the call: a ready press
    assert r.press("B", 1_000_600) == "game"


def test_pace_runs_from_the_end_of_speech_and_the_current_question_holds() -> None:
    r = Rhythm(["A"], Pace(pause_us=500_000), ready=False)
    r.called(0)
    assert r.tick(10, view(rounds=1, race_open=True)) is None
    assert r.tick(20, view(rounds=1, current_awaits=True, quiet_at=20)) is None
    assert r.phase is Phase.AWAITING
    assert r.tick(9_000_000, view(rounds=1, current_awaits=True)) is None  # still asked
    assert r.tick(9_000_000, view(rounds=1, quiet_at=None)) is None  # speech length unknown
    assert r.tick(9_000_001, view(rounds=1, quiet_at=12_000_000)) is None
    assert r.tick(12_499_999, view(rounds=1, quiet_at=12_000_000)) is None
    assert r.tick(12_500_000, view(rounds=1, quiet_at=12_000_000)) is Decision.CALL


def test_a_press_while_paused_resumes_after_a_count_in_and_is_not_a_game_press() -> None:
    r = Rhythm(["A"], Pace(count_in_us=100), ready=False)
    assert r.pause(0, in_hand=False) and r.phase is Phase.PAUSED
    assert r.press("A", 10) == "resume" and r.phase is Phase.COUNT_IN


def test_a_failed_start_says_and_writes_nothing_and_play_resumes_the_real_game(
        tmp_path: Path, mock_factory: MockFactory, capsys: object) -> None:
    db = tmp_path / "t.db"
    seats = ("Blue", "Red", "Green")
    table = Table(default_config(list(seats)), db=db, announcer=PrintAnnouncer(io.StringIO()),
                  mock=True, count_in_ms=10)
    engine = table.start("spank-the-pig", {"doubles": "off"})
    engine.command("feed", event=Press(1, "Blue"))  # the real game has begun
    real = engine.game_id
    table.close()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        code = cli.main(["play", "spank-the-pig", "--mock", "--no-speech", "--new", "--db",
                         str(db), "--seats", ",".join(seats), "--port", str(port)])
    finally:
        busy.close()
    assert code == 2
    out = capsys.readouterr()  # type: ignore[attr-defined]
    assert "Deal" not in out.out and "»" not in out.out and "cannot serve" in out.err
    conn = connect(db, readonly=True)
    assert [g["id"] for g in games(conn, include_practice=True)] == [real]  # no row written
    conn.close()
    store = Store(db)
    store.new_game(__import__("referee.events", fromlist=["GameStart"]).GameStart(
        "spank-the-pig", seats, {}))  # an empty row left behind by some failed start
    assert unfinished_game(store, "spank-the-pig", seats) == real
    store.close()


def test_ending_early_with_tied_leaders_names_co_champions(
        tmp_path: Path, mock_factory: MockFactory) -> None:
    out = io.StringIO()
    table = Table(default_config(["Blue", "Red", "Green"]), db=tmp_path / "e.db",
                  announcer=PrintAnnouncer(out), mock=True, count_in_ms=10)
    try:
        engine = table.start("spank-the-pig", {"doubles": "off"})
        snap = engine.command("end")
        assert snap["phase"] == "over" and snap["final"] is True
        assert snap["winners"] == ["Blue", "Red", "Green"]
        said = out.getvalue()
        assert said.count("Game over.") == 1
        assert "Blue and Red and Green are co-champions!" in said
    finally:
        table.close()
