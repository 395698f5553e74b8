"""Pig and Pig's Tail played whole through the engine on mocked pins, then replayed from export."""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from referee.cli.table import Table
from referee.config import default_config
from referee.events import Facts, JudgeKey
from referee.store.database import connect, export_lines
from referee.store.tablelog import replay
from referee.voice.announce import PrintAnnouncer
from tests.test_engine import Watcher, play_from_ready


def make_table(tmp_path: Path, seats: list[str]) -> tuple[Table, io.StringIO]:
    out = io.StringIO()
    table = Table(default_config(seats, doubles=False), db=tmp_path / "t.db",
                  announcer=PrintAnnouncer(out, lead_ms=10), mock=True,
                  count_in_ms=20)
    return table, out


def same_as_replay(table: Table) -> dict[str, Any]:
    engine = table.engine
    assert engine is not None
    live = [o.to_json() for o in engine.rules.outputs()] + [engine.rules.standings().to_json()]
    replayed = replay(list(export_lines(connect(table.store.path, readonly=True)))).lines()
    assert replayed == live
    return live[-1]


def test_pig_whole_game_is_silent_at_claims_and_replays(tmp_path: Path,
                                                        mock_factory: MockFactory) -> None:
    table, out = make_table(tmp_path, ["Blue", "Red", "Green", "Yellow"])
    engine = table.start("pig", {"window_ms": "1000", "lives": "1"})
    play_from_ready(engine)
    watch = Watcher(engine)
    time.sleep(0.1)
    said_before = out.getvalue()
    assert "Deal" in said_before or "deal" in said_before
    # round 1: Blue claims; the scoreboard and the voice give nothing away
    table.box.press("Blue")
    time.sleep(0.05)
    snap = engine.snapshot()
    assert snap["phase"] in ("setup", "ruled") and snap["round"] == 0
    assert out.getvalue() == said_before
    table.box.press("Red")
    time.sleep(0.01)
    table.box.press("Green")
    ruled = watch.rulings(1)
    assert [(r["seat"], r["delta"]) for r in ruled["rulings"]] == [("Yellow", 1)]
    time.sleep(1.1)  # round 1's window (1 s from the claim) runs out
    # round 2: Red claims, Green follows; Blue is last
    table.box.press("Red")
    time.sleep(0.01)
    table.box.press("Green")
    watch.wait(lambda k, d: k == "over")
    final = same_as_replay(table)
    assert final["final"] is True and sorted(final["winners"]) == ["Green", "Red"]
    assert {r["seat"]: r["out"] for r in final["seats"]} == {
        "Red": False, "Green": False, "Blue": True, "Yellow": True}
    table.close()


def test_pig_false_claim_is_judged(tmp_path: Path, mock_factory: MockFactory) -> None:
    table, _ = make_table(tmp_path, ["Blue", "Red", "Green"])
    engine = table.start("pig", {"window_ms": "1000", "lives": "3"})
    play_from_ready(engine)
    watch = Watcher(engine)
    table.box.press("Blue")  # a claim nobody follows
    watch.wait(lambda k, d: k == "ruling" and d["round"] == 1)
    engine.command("feed", event=Facts(1, {"claim": False}))
    ruled = watch.wait(lambda k, d: k == "ruling" and d["round"] == 1 and d["correction"])
    assert [(r["seat"], r["delta"]) for r in ruled["rulings"] if r["type"] == "ruling"] == [
        ("Blue", 1)]
    same_as_replay(table)
    table.close()


@pytest.mark.parametrize("take", ["flipper", "slowest"])
def test_pigs_tail_whole_game_of_52_flips_replays(tmp_path: Path, mock_factory: MockFactory,
                                                 take: str) -> None:
    table, out = make_table(tmp_path, ["Blue", "Red"])
    engine = table.start("pigs-tail", {"take": take, "turn_ms": "200", "tempo_ms": "60",
                                       "window_ms": "120", "tie_us": "1000", "pause_ms": "20"})
    play_from_ready(engine)
    watch = Watcher(engine)
    flips = 0
    seen_round = 0
    breaks = 0
    answered: set[int] = set()
    deadline = time.monotonic() + 60
    while not engine.rules.status().over and time.monotonic() < deadline:
        snap = engine.snapshot()
        if snap["phase"] == "paused" and engine.rhythm.phase == "paused":
            breaks += 1  # three quiet turns (a slow machine missed a match): paused by itself
            engine.command("resume")
        if snap["phase"] == "awaiting" and snap["awaiting"]["round"] not in answered:
            # a slow machine let a tap miss its window: the judge answers, play goes on
            answered.add(snap["awaiting"]["round"])
            table.submit(JudgeKey(0, "yes"))
        if snap["phase"] == "race" and snap["round"] != seen_round:
            seen_round = snap["round"]
            flips += 1
            if flips % 3 == 0:  # a match: the flipper claims it / everyone taps, Red last
                if take == "flipper":
                    flipper = engine.rules.seats[(seen_round - 1) % 2]
                    table.box.press(flipper)
                else:
                    table.box.press("Blue")
                    time.sleep(0.01)
                    table.box.press("Red")
        time.sleep(0.002)
    assert engine.rules.status().over, (engine.rhythm.phase, engine.snapshot()["phase"],
                                        engine.rules.round_count(), out.getvalue()[-400:])
    watch.wait(lambda k, d: k == "over", timeout=10)
    assert breaks == out.getvalue().count("Nobody is pressing. Paused.")
    assert "Blue, … flip!" in out.getvalue() or "Blue," in out.getvalue()
    final = same_as_replay(table)
    assert final["final"] is True
    cues = [line for line in export_lines(connect(table.store.path, readonly=True))
            if '"type": "cue"' in line]
    assert len(cues) >= 52
    assert sum(r["score"] for r in final["seats"]) > 0
    table.close()
