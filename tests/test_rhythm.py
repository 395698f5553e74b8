"""The table's rhythm in small: the state machine, failed starts, resuming, early ends (issue 13)."""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Callable
from pathlib import Path

from gpiozero.pins.mock import MockFactory

from referee.cli import main as cli
from referee.cli.table import Table, unfinished_game
from referee.clock import now_us
from referee.config import default_config
from referee.engine.rhythm import Decision, Pace, Phase, Rhythm, View
from referee.events import JudgeKey, Press, Undo
from referee.store.database import Store, connect, export_lines, games
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
                  mock=True)
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


# -- the defects of issue 13, each as a user meets it (real clock, mocked pins) -------------------

FAST = {"tempo_ms": "100", "pause_ms": "50", "window_ms": "300", "doubles": "off"}


def live_table(tmp_path: Path, seats: list[str]) -> tuple[Table, io.StringIO, PrintAnnouncer]:
    out = io.StringIO()
    voice = PrintAnnouncer(out, lead_ms=10)
    return Table(default_config(seats), db=tmp_path / "live.db", announcer=voice,
                 mock=True), out, voice


def wait(pred: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def cadences(voice: PrintAnnouncer) -> list[int]:
    return [t for key, _, t in list(voice.said) if key == "spank"]


def play_round(table: Table, voice: PrintAnnouncer, order: list[str]) -> None:
    engine = table.engine
    assert engine is not None
    before = len(cadences(voice))
    wait(lambda: len(cadences(voice)) > before and engine.snapshot()["phase"] == "race")
    for seat in order:
        table.box.press(seat)
        time.sleep(0.004)
    number = engine.rules.round_count()
    wait(lambda: engine.snapshot()["phase"] != "race" and number in engine.announced)


def test_nothing_is_called_before_every_seat_is_ready(
        tmp_path: Path, mock_factory: MockFactory) -> None:
    table, out, voice = live_table(tmp_path, ["Blue", "Red"])
    try:
        table.start("spank-the-pig", FAST)
        time.sleep(1.0)
        assert cadences(voice) == []  # before: "Spank… the… PIG!" 0.3 s after launch
        table.box.press("Blue")
        time.sleep(0.5)
        assert cadences(voice) == []
        table.box.press("Red")
        ready_at = now_us()
        wait(lambda: bool(cadences(voice)))
        assert cadences(voice)[0] - ready_at >= 1_500_000  # the count-in
        said = out.getvalue()
        assert said.index("Deal") < said.index("when you're ready") < said.index("PIG!")
        assert table.engine is not None and table.engine.rules.round_count() == 1
        assert not any('"press"' in line for line in export_lines(
            connect(tmp_path / "live.db", readonly=True)))  # ready presses are not game presses
    finally:
        table.close()


def test_the_end_is_said_once_and_stays_shown(tmp_path: Path, mock_factory: MockFactory) -> None:
    table, out, voice = live_table(tmp_path, ["Blue", "Red"])
    try:
        engine = table.start("spank-the-pig", {**FAST, "deck": "2"})
        table.submit(JudgeKey(0, "yes"))  # the judge starts play from the keypad
        play_round(table, voice, ["Blue", "Red"])  # Red last: Blue is the champion
        wait(lambda: engine.snapshot()["phase"] == "over")
        time.sleep(1.5)  # before: "Blue is the champion!" again every step
        said = out.getvalue()
        assert said.count("Blue is the champion!") == 1 and said.count("Game over.") == 1
        snap = engine.snapshot()
        assert snap["phase"] == "over" and snap["winners"] == ["Blue"]
        assert len(cadences(voice)) == 1  # and nothing starts on its own
    finally:
        table.close()


def test_an_older_question_does_not_hold_play_and_keypad_undo_stops_at_the_previous_round(
        tmp_path: Path, mock_factory: MockFactory) -> None:
    table, out, voice = live_table(tmp_path, ["Blue", "Red"])
    try:
        engine = table.start("spank-the-pig", {**FAST, "deck": "12"})
        table.submit(JudgeKey(0, "yes"))
        play_round(table, voice, ["Blue"])  # round 1: only Blue: the judge is asked
        assert engine.snapshot()["phase"] == "awaiting"
        time.sleep(0.4)
        assert len(cadences(voice)) == 1  # the current round's question holds the next round
        table.submit(JudgeKey(0, "yes"))
        play_round(table, voice, ["Blue", "Red"])  # round 2
        play_round(table, voice, ["Red", "Blue"])  # round 3
        table.submit(JudgeKey(0, "undo"))  # round 1's answer is too old for the keypad
        wait(lambda: "Nothing to undo." in out.getvalue())
        assert len(engine.rules.judge_log) == 1
        engine.command("feed", event=Undo())  # the judge panel can: round 1 asks again
        assert engine.snapshot()["awaiting"]["round"] == 1
        play_round(table, voice, ["Blue", "Red"])  # … and play goes on meanwhile
        assert engine.rules.round_count() == 4
    finally:
        table.close()


def test_ending_early_with_tied_leaders_names_co_champions(
        tmp_path: Path, mock_factory: MockFactory) -> None:
    out = io.StringIO()
    table = Table(default_config(["Blue", "Red", "Green"]), db=tmp_path / "e.db",
                  announcer=PrintAnnouncer(out), mock=True)
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
