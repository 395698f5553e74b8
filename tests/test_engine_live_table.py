"""The live table on mocked pins: a game played through the engine, exported, replayed."""

from __future__ import annotations

import io
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from referee.cli.table import Table
from referee.config import default_config
from referee.engine.loop import Engine
from referee.events import Facts, Penalty, Undo
from referee.store.database import connect, export_lines
from referee.store.tablelog import replay
from referee.voice.announce import PrintAnnouncer
from referee.voice.phrases import text
from tests.harness import Sim, close_table, typed


class Watcher:
    """Records what the engine publishes and lets the test wait for it."""

    def __init__(self, engine: Engine) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.cond = threading.Condition()
        engine.subscribe(self.on_event)

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        with self.cond:
            self.events.append((kind, data))
            self.cond.notify_all()

    def wait(self, pred: Any, timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for kind, data in self.events:
                    if pred(kind, data):
                        return data
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out; saw {[k for k, _ in self.events][-10:]}")
                self.cond.wait(left)

    def rulings(self, number: int) -> dict[str, Any]:
        return self.wait(lambda k, d: k == "ruling" and d["round"] == number)


def play_from_ready(engine: Engine, timeout: float = 10.0) -> None:
    """The judge starts play (the Ready step); returns once the count-in is over."""
    engine.command("start")
    deadline = time.monotonic() + timeout
    while engine.snapshot()["phase"] in ("ready", "count-in"):
        assert time.monotonic() < deadline, "play never started"
        time.sleep(0.002)


def wait_for_race(engine: Engine, number: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snap = engine.snapshot()
        if snap["round"] == number and snap["phase"] == "race":
            return
        time.sleep(0.002)
    raise AssertionError(f"round {number} never opened: {engine.snapshot()['phase']}")


@pytest.fixture
def table(tmp_path: Path, mock_factory: MockFactory) -> Any:
    t = Table(default_config(["Blue", "Red", "Green"]), db=tmp_path / "table.db",
              announcer=PrintAnnouncer(io.StringIO(), lead_ms=20), mock=True, count_in_ms=20)
    yield t
    t.close()


def slap_in_order(table: Table, seats: list[str], gap_s: float = 0.004,
                  button: str = "slap") -> None:
    for seat in seats:
        table.box.press(seat, button)
        time.sleep(gap_s)


OPTIONS = {"deck": "9", "tempo_ms": "100", "pause_ms": "60", "window_ms": "600", "doubles": "off"}


def test_a_whole_game_live_then_replayed_gives_the_same_rulings(sim: Callable[..., Sim]) -> None:
    """Three rounds on the simulated clock (tests/harness.py), the judge at the keypad and the panel."""
    s = sim(options=OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None

    def race(number: int) -> float:
        s.run_until(lambda: (x := engine.snapshot())["round"] == number and x["phase"] == "race",
                    limit_ms=5000, step_ms=10)
        return s.t_ms

    def ruled(number: int, kind: str) -> dict[str, Any]:
        s.run_until(lambda: any(k == "ruling" and d["round"] == number
                                and d["rulings"][-1]["type"] == kind for k, d in s.published),
                    limit_ms=5000, step_ms=10)
        return [d for k, d in s.published if k == "ruling" and d["round"] == number][-1]

    # round 1: everyone slaps, Green last
    at = race(1)
    for i, seat in enumerate(["Blue", "Red", "Green"]):
        s.press(seat, at + 4 * i)
    r1 = ruled(1, "ruling")
    assert [(r["seat"], r["delta"]) for r in r1["rulings"]] == [("Green", 1)]
    # round 2: a split round: the judge is asked, then says "no pig" from the keypad
    s.press("Red", race(2))
    ruled(2, "awaiting")
    assert engine.snapshot()["phase"] == "awaiting"
    s.press("judge", s.t_ms, button="no")
    answered = ruled(2, "ruling")
    assert answered["correction"] is False  # an answer to the judge's question, not a correction
    # round 3: Green is last again; then a judge penalty, undone, and a correction of round 1
    at = race(3)
    for i, seat in enumerate(["Red", "Blue", "Green"]):
        s.press(seat, at + 4 * i)
    s.run_until(lambda: any(k == "over" for k, _ in s.published), limit_ms=5000)
    s.command("feed", event=Penalty(3, "Blue", 1, "slapped the cow"))
    s.command("feed", event=Undo())
    s.command("feed", event=Facts(1, {"pigs": 2}))
    live_outputs = s.outputs()
    live_standings = engine.rules.standings().to_json()
    assert live_standings["final"] is True and live_standings["winners"] == ["Blue"]

    result = replay(s.exported())
    assert result.lines() == live_outputs + [live_standings]
    assert [r["seat"] for r in live_outputs if r["round"] == 2] == ["Red"]
    assert {r["seat"]: r["score"] for r in live_standings["seats"]} == {
        "Blue": 0, "Red": 1, "Green": 3}


def test_presses_are_ruled_by_edge_time_while_the_voice_is_busy(
        table: Table, mock_factory: MockFactory) -> None:
    """A slow announcer (every phrase takes 200 ms to 'say' on its thread) never delays rulings:
    the presses carry their edge times (chosen here), and the margin is theirs to the microsecond."""

    class SlowVoice(PrintAnnouncer):
        def say(self, key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
            threading.Thread(target=time.sleep, args=(0.2,), daemon=True).start()
            super().say(key, params, interrupt=interrupt)

    table.announcer = SlowVoice(io.StringIO(), lead_ms=20)
    # a long window: the race closes when all three have slapped, however loaded the machine is
    engine = table.start("spank-the-pig", typed("spank-the-pig", {**OPTIONS, "window_ms": "60000"}))
    play_from_ready(engine)
    watch = Watcher(engine)
    wait_for_race(engine, 1)
    cue_us = engine.rules.rounds[0].cue_us
    box = table.box
    for seat, after_ms in (("Green", 10.0), ("Blue", 13.0), ("Red", 17.7)):
        pin = box._mock_pin(seat, "slap")
        ticks = box.ref_ticks + (cue_us + after_ms * 1000 - box.ref_us) / 1e6
        pin.drive(False, ticks)
        pin.drive(True, ticks + 0.03)
    ruled = watch.rulings(1)
    assert [(r["seat"], r["delta"]) for r in ruled["rulings"]] == [("Red", 1)]
    assert abs(ruled["rulings"][0]["margin_us"] - 4_700) <= 2  # 17.7 - 13.0 ms, from the edges


def test_deciding_press_to_ruling_delay_is_reported(table: Table, capsys: Any) -> None:
    """Measures (prints, does not assert a speed) the delay from the deciding press to the ruling."""
    opts = {**OPTIONS, "deck": "30", "window_ms": "60000"}  # closes when all three slapped
    engine = table.start("spank-the-pig", typed("spank-the-pig", opts))
    play_from_ready(engine)
    watch = Watcher(engine)
    delays = []
    for number in range(1, 6):
        wait_for_race(engine, number)
        slap_in_order(table, ["Blue", "Red", "Green"], gap_s=0.002)
        watch.rulings(number)
        rnd = engine.rules.rounds[number - 1]
        deciding = max(rnd.race["slap"].values())
        delays.append(engine.ruled_at[number] - deciding - engine.rules.options["tie_us"])
    with capsys.disabled():
        print(f"\n  deciding press → ruling beyond the tie settle: median "
              f"{statistics.median(delays) / 1000:.2f} ms over {len(delays)} rounds")
    assert all(d >= 0 for d in delays)  # never ruled before the settle time


def test_a_stopped_game_resumes_and_a_cut_round_is_voided(tmp_path: Path,
                                                         mock_factory: MockFactory) -> None:
    config = default_config(["Blue", "Red", "Green"])
    db = tmp_path / "t.db"
    first = Table(config, db=db, announcer=PrintAnnouncer(io.StringIO(), lead_ms=20), mock=True,
                  count_in_ms=20)
    # a long window: round 2 is still open when the plug is pulled, however loaded the machine
    engine = first.start("spank-the-pig", typed("spank-the-pig", {**OPTIONS, "window_ms": "60000"}))
    play_from_ready(engine)
    watch = Watcher(engine)
    wait_for_race(engine, 1)
    slap_in_order(first, ["Blue", "Red", "Green"])
    watch.rulings(1)
    wait_for_race(engine, 2)
    slap_in_order(first, ["Blue"])  # the plug is pulled mid-round: the engine stops dead
    engine.stop()
    first.close()

    second = Table(config, db=db, announcer=PrintAnnouncer(io.StringIO(), lead_ms=20),
                   mock=True, auto=False)
    resumed = second.start("spank-the-pig", typed("spank-the-pig", OPTIONS))
    assert resumed.game_id == engine.game_id
    outputs = [o.to_json() for o in resumed.rules.outputs()]
    assert [(o["round"], o["seat"]) for o in outputs] == [(1, "Green")]  # round 2: void
    lines = list(export_lines(connect(db, readonly=True)))
    assert '"void": true' in lines[-1]
    assert replay(lines).lines()[:-1] == outputs
    close_table(second, 60_000)


def test_a_practice_game_stops_after_a_few_rounds_and_stays_out_of_history(
        sim: Callable[..., Sim]) -> None:
    from referee.engine.loop import PRACTICE_ROUNDS
    from referee.store.database import games

    s = sim(["Blue", "Red"], {**OPTIONS, "pause_ms": "20", "window_ms": "150"}, auto=True,
            practice=True)
    engine = s.engine
    assert engine is not None
    practice_id = engine.game_id
    s.run_until(lambda: engine.game_id != practice_id, limit_ms=10_000)
    assert [number for k, d in s.published if k == "ruling" for number in [d["round"]]] == list(
        range(1, PRACTICE_ROUNDS + 1))
    s.run_to(s.t_ms + 5000)  # the real game waits at its Ready step: no round on its own
    snap = engine.snapshot()
    assert snap["phase"] == "ready" and snap["practice"] is False and snap["round"] == 0
    said = [key for key, _, _ in s.voice.said]
    assert "practice" in said and "practice_over" in said
    assert "sudden_death" not in said and "champion" not in said  # a practice has neither
    assert said[said.index("practice_over"):][-2:] == ["deal", "ready"]  # the real deal
    assert "Practice round." in text("practice") and "Practice over." in text("practice_over")
    conn = connect(s.store.path, readonly=True)
    assert [g["id"] for g in games(conn)] == [engine.game_id]
    assert len(games(conn, include_practice=True)) == 2
