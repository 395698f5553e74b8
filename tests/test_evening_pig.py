"""Pig evenings on a simulated clock (real espeak-ng speech played by the recording sink, a real
SQLite file, mocked pins): the end, the one ready step between games, quitting after the end, and
the keypad's NO on an open claim. Each pins a defect an evening found (issue 22)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

from gpiozero.pins.mock import MockFactory

from referee.store.tablelog import replay
from tests.harness import SimTable

SEATS = ["Blue", "Red", "Green"]
DEAL = ("Use the aces, twos and threes: one set of four per player. Deal four cards to each "
        "player.")
RULE = "Four of a kind? Quietly touch your nose."
READY = "Press your slap button when you're ready."


def ready_all(sim: SimTable) -> None:
    sim.until(lambda s: s["phase"] == "ready")
    for seat in SEATS:
        sim.press(seat)
    sim.until(lambda s: "Pass!" in sim.said())


def printed_pig(tmp_path: Path, mock_factory: MockFactory) -> SimTable:
    """A three-life Pig table with printed phrases (its rhythm, not its sound), every seat
    ready and the passing begun."""
    sim = SimTable(tmp_path / "pig.db", mock_factory, SEATS, None, out=io.StringIO())
    sim.start("pig", {"lives": "3", "window_ms": "15000", "pause_ms": "300"})
    sim.until(lambda s: s["phase"] == "ready")
    for seat in SEATS:
        sim.press(seat)
    sim.wait(3000)
    return sim


def lines(sim: SimTable, game_id: int | None = None) -> list[dict[str, object]]:
    out = [json.loads(line) for line in sim.log()]
    games = [i for i, line in enumerate(out) if line["type"] == "game"]
    if game_id is None:
        return out
    start = games[game_id - 1]
    end = games[game_id] if game_id < len(games) else len(out)
    return out[start:end]


def test_the_losers_late_press_is_the_races_and_the_next_game_has_one_ready_step(
        tmp_path: Path, sim_table: Callable[..., SimTable], speech_cache: Path) -> None:
    sim = sim_table(SEATS, speech_cache)
    sim.start("pig", {"lives": "1", "window_ms": "15000", "pause_ms": "300"})
    ready_all(sim)
    sim.wait(5000)
    claim = sim.clock.t
    sim.press("Blue", claim)
    sim.press("Red", claim + 300_000)  # the deciding press: Green is the loser
    sim.press("Green", claim + 320_000)  # the loser's own press, 20 ms later
    sim.until(lambda s: s["phase"] == "over")
    snap = sim.engine.command("snapshot")
    assert snap["ready"] == [] and snap["winners"] == ["Blue", "Red"]  # no "ready ✓"
    # the late press is the race's: in the log, changing nothing
    assert [(e["seat"], e["t_us"]) for e in lines(sim, 1) if e["type"] == "press"] == [
        ("Blue", claim), ("Red", claim + 300_000), ("Green", claim + 320_000)]
    sim.wait(20_000)  # the end is said, the claim's window closes: the next game's deal
    for seat in SEATS:  # each seat presses ready once
        sim.press(seat)
    sim.until(lambda s: s["game_id"] == 2 and sim.said().count("Pass!") == 2)
    sim.wait(3000)
    assert sim.said() == [
        DEAL, RULE, READY, "Here we go.", "Pass!",
        "Green: last to touch the nose. One life lost.",
        "Game over. Blue, zero lives lost. Red, zero lives lost. Green, one life lost.",
        "Blue and Red are co-champions!",
        DEAL, RULE, READY,  # once, after the end was said
        "Here we go.", "Pass!"]  # nothing but the count-in after the last ready press
    assert not [e for e in lines(sim, 2) if e["type"] == "press"]  # ready presses: no claims


def test_quitting_right_after_the_end_keeps_the_game_finished(
        tmp_path: Path, sim_table: Callable[..., SimTable], speech_cache: Path) -> None:
    """Quit 5 s after the end, inside the claim's 15 s window: no void nobody entered, and the
    exported log replays to the champions the table announced."""
    sim = sim_table(SEATS, speech_cache)
    sim.start("pig", {"lives": "1", "window_ms": "15000", "pause_ms": "300"})
    ready_all(sim)
    claim = sim.clock.t + 1_000_000
    sim.press("Blue", claim)
    sim.press("Red", claim + 300_000)
    sim.until(lambda s: s["phase"] == "over")
    sim.wait(5000)
    logged = lines(sim)
    assert not [e for e in logged if e["type"] == "facts"]
    final = replay([json.dumps(e) for e in logged]).lines()[-1]
    assert final["final"] is True and final["winners"] == ["Blue", "Red"]


def test_the_keypads_no_rejects_the_open_claim_not_the_one_before(
        tmp_path: Path, sim_table: Callable[..., SimTable], speech_cache: Path) -> None:
    sim = sim_table(SEATS, speech_cache)
    sim.start("pig", {"lives": "3", "window_ms": "15000", "pause_ms": "300"})
    ready_all(sim)
    # the first claim of the game, silent and still open: NO rejects it (no pause)
    sim.press("Blue", sim.clock.t + 1_000_000)
    sim.key("no")
    assert sim.engine.command("snapshot")["phase"] != "paused"
    sim.wait(16_000)
    # the second claim, ruled from the presses; then a third, open: NO rejects the third
    t = sim.clock.t + 1_000_000
    sim.press("Red", t)
    sim.press("Blue", t + 200_000)
    sim.press("Green", t + 400_000)
    sim.wait(16_000)
    sim.press("Green", sim.clock.t + 1_000_000)
    sim.key("no")
    sim.wait(16_000)
    judged = [(e["round"], e.get("claim")) for e in lines(sim) if e["type"] == "facts"]
    assert judged == [(1, False), (3, False)]
    rulings = replay(sim.log()).lines()
    lost = {(r["round"], r["seat"]): r["delta"] for r in rulings if r["type"] == "ruling"}
    assert lost[(1, "Blue")] == 1 and lost[(3, "Green")] == 1  # false claims: a letter each
    assert lost[(2, "Green")] == 1  # the ruled claim stands


def test_presses_after_too_close_to_call_are_shown_late_never_swallowed(
        tmp_path: Path, mock_factory: MockFactory) -> None:
    """After "Too close to call", presses in the rest of the claim's window belong to it and
    change nothing: the pages get them as late for that round (before: nothing at all)."""
    from referee.capture.keyboard import _press_note

    sim = printed_pig(tmp_path, mock_factory)
    try:
        claim = sim.clock.t + 1_000_000
        sim.press("Blue", claim)
        sim.press("Red", claim + 300_000)
        sim.press("Green", claim + 300_400)  # 0.4 ms: too close to call
        sim.wait(2000)
        assert sim.engine.command("snapshot")["rulings"][0]["reason"] == "too close to call"
        before = len(sim.events)
        sim.press("Red", claim + 4_000_000)  # another four of a kind? inside the old window
        shown = [d for k, d in sim.events[before:] if k == "state"]
        assert shown and shown[-1]["late_us"] == {"Red": 4_000_000}
        note = _press_note(sim.engine, "Blue", "slap")
        assert note == ": late for round 1, already ruled: it changes nothing"
        assert sim.engine.rules.round_count() == 1  # no new claim
    finally:
        sim.close()


def test_a_pause_after_a_claim_is_ruled_pauses_at_once_not_when_its_window_ends(
        tmp_path: Path, mock_factory: MockFactory) -> None:
    """The judge pauses once the claim is ruled: "Paused." at once, and the rest of the claim's
    window does not run on as play (before: the table paused only when the 15 s window ended)."""
    sim = printed_pig(tmp_path, mock_factory)
    try:
        claim = sim.clock.t + 1_000_000
        for i, seat in enumerate(SEATS):
            sim.press(seat, claim + 200_000 * i)  # Green last: ruled at once
        sim.wait(500)
        assert sim.engine.rules.status().race_open  # the claim's window runs on
        sim.engine.command("pause")
        sim.wait(200)
        assert sim.engine.command("snapshot")["phase"] == "paused"
        said = [k for k, _, _ in sim.voice.said]  # type: ignore[union-attr]
        assert said[-1] == "paused"
        sim.press("Blue")  # a press while paused resumes: it is not a claim
        sim.wait(20_000)
        assert sim.engine.rules.round_count() == 1
    finally:
        sim.close()


def test_a_pause_during_an_open_claim_waits_for_its_ruling(
        tmp_path: Path, mock_factory: MockFactory) -> None:
    """Paused while a claim is undecided: the presses still answer it, and the table pauses once
    it is ruled."""
    sim = printed_pig(tmp_path, mock_factory)
    try:
        claim = sim.clock.t + 1_000_000
        sim.press("Blue", claim)
        sim.engine.command("pause")
        sim.press("Red", claim + 300_000)  # still the claim's: Green is last
        sim.wait(2000)
        out = [o.to_json() for o in sim.engine.rules.round_outputs(1)]
        assert [(o["seat"], o["delta"]) for o in out] == [("Green", 1)]
        assert sim.engine.command("snapshot")["phase"] == "paused"
    finally:
        sim.close()
