"""The engine's own timing decisions at their thresholds, on a simulated clock (issue 17, point 1).

The real `Engine` with its real rules, log and ButtonBox (tests/harness.py), moved one µs at a time
around each boundary the engine itself decides: the delivery wait past a race's close (a press
still on its way is in the ruling, one stamped at the close is not), the cue's instant, a game's
own turn pace, the quiet-table pause (counted from the first round a table plays, a resumed table
too), hold-to-pause (a slap button, not a double), and the engine's wake-up while a judge key is
held. Nothing here reads the wall clock.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from referee.capture.gpio import HOLD_US
from referee.engine.loop import Engine, resume_game
from referee.events import Awaiting, Ruling
from tests.harness import Sim

DELIVERY_US = 5_000
YES = 16  # the judge's YES key


def open_race(s: Sim) -> tuple[float, int]:
    """Round 1 called on a three-seat Spank table: (cue ms, close µs); Blue and Red slap."""
    engine = s.engine
    assert engine is not None
    engine.delivery_us = DELIVERY_US  # what an lgpio table waits (referee.capture.gpio)
    cue = s.start_round()
    s.run_to(cue + 1)
    s.press("Blue", cue + 200)
    s.press("Red", cue + 300)
    s.pump()
    closes = engine.rules.status().closes_at_us
    assert closes is not None and s.ms(closes) == cue + 1000  # window_ms: nobody else slapped
    return cue, closes


@pytest.mark.parametrize(("late_by", "ruled"), [(DELIVERY_US - 1, False), (DELIVERY_US, True)])
def test_a_race_is_ruled_only_once_the_delivery_wait_past_its_close_is_over(
        sim: Callable[..., Sim], late_by: int, ruled: bool) -> None:
    s = sim(auto=False)
    engine = s.engine
    assert engine is not None
    _, closes = open_race(s)
    assert engine.next_wake() == closes + DELIVERY_US  # when the engine thread wakes for it
    s.pump(s.ms(closes + late_by))
    assert (1 in engine.announced) is ruled
    assert engine.rules.status().race_open is not ruled


@pytest.mark.parametrize(("stamp_from_close", "everyone"), [(-1, True), (0, False)])
def test_a_press_still_on_its_way_when_the_race_closes_is_in_its_ruling(
        sim: Callable[..., Sim], stamp_from_close: int, everyone: bool) -> None:
    """Green's edge is 1 µs before the close (or exactly at it) but reaches the engine 4.999 ms
    later, as an lgpio delivery can: before the close it is in the race (everyone slapped: a pig
    by consensus, Green last takes the whammy); at the close it is not (the judge is asked)."""
    s = sim(auto=False)
    engine = s.engine
    assert engine is not None
    _, closes = open_race(s)
    s.pump(s.ms(closes + DELIVERY_US - 1))
    assert 1 not in engine.announced
    s.edges(27, [(s.ms(closes + stamp_from_close), False), (s.t_ms + 40, True)])  # Green, late
    s.pump(s.ms(closes + DELIVERY_US))
    outputs = engine.announced[1]
    if everyone:
        assert [(o.seat, o.delta) for o in outputs if isinstance(o, Ruling)] == [("Green", 1)]
    else:
        assert [o for o in outputs if isinstance(o, Awaiting)] and not [
            o for o in outputs if isinstance(o, Ruling)]


def test_without_a_delivery_wait_a_race_is_ruled_at_its_close(sim: Callable[..., Sim]) -> None:
    s = sim(auto=False)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.press("Blue", cue + 200)
    closes = engine.rules.status().closes_at_us
    assert closes is not None
    s.pump(s.ms(closes - 1))
    assert 1 not in engine.announced
    s.pump(s.ms(closes))
    assert 1 in engine.announced


@pytest.mark.parametrize(("offset", "cued"), [(-1, False), (0, True)])
def test_the_cue_is_shown_at_exactly_its_instant(sim: Callable[..., Sim], offset: int,
                                                 cued: bool) -> None:
    s = sim(auto=False)
    engine = s.engine
    assert engine is not None
    cue_us = engine.rules.status().closes_at_us  # nothing open yet
    assert cue_us is None
    cue = s.start_round()
    assert engine.next_wake() == s.us(cue)
    s.pump(s.ms(s.us(cue) + offset))
    cues = [d for k, d in s.published if k == "cue"]
    assert bool(cues) is cued and (engine.snapshot()["phase"] == "race") is cued
    if cued:
        assert cues == [{"round": 1, "word": "PIG!", "t_us": s.us(cue)}]


# -- a game's own turn pace: "<seat>, flip!" every turn_ms ---------------------------------------------


TURN_MS, TEMPO_MS = 1000, 60


def turning(sim: Callable[..., Sim]) -> tuple[Sim, Engine, int]:
    """Pig's Tail at two seats, a flip every TURN_MS, run until its first cue; that cue (µs)."""
    s = sim(["Blue", "Red"], {"turn_ms": str(TURN_MS), "tempo_ms": str(TEMPO_MS),
                              "window_ms": "120", "pause_ms": "0"}, game="pigs-tail", auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.last_cue_us is not None, limit_ms=2000, step_ms=5)
    first = engine.last_cue_us
    assert first is not None
    return s, engine, first


def test_a_turn_game_calls_each_turn_exactly_turn_ms_after_the_previous_cue(
        sim: Callable[..., Sim]) -> None:
    turn_ms, tempo_ms = TURN_MS, TEMPO_MS
    s, engine, first = turning(sim)
    # the call comes (turn - tempo - lead) before its cue; the sim's voice leads by 100 ms
    call_at = first + (turn_ms - tempo_ms - 100) * 1000
    s.run_to(s.ms(call_at - 1), step_ms=5)
    assert engine.last_cue_us == first and engine.rules.round_count() == 1
    s.pump(s.ms(call_at))
    assert engine.rules.round_count() == 2
    assert engine.cue_us == first + turn_ms * 1000


# -- the quiet table: exactly quiet_rounds rounds without a press, however the table started --------


def cadences_before_quiet(s: Sim) -> int:
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: any(k == "quiet_table" for k, _, _ in s.voice.said), limit_ms=120_000,
                step_ms=50)
    assert engine.snapshot()["phase"] == "paused"
    said = [k for k, _, _ in s.voice.said]
    return said[:said.index("quiet_table")].count("spank")


QUIET = 13  # three seats of a 72-card deck: the game's quiet threshold (tests/test_games_quiet_odds.py)


def test_a_quiet_table_pauses_after_exactly_its_quiet_rounds_without_a_press(
        sim: Callable[..., Sim]) -> None:
    s = sim(options={"deck": "72", "tempo_ms": "100", "window_ms": "300", "pause_ms": "100",
                     "doubles": "off"}, auto=True)
    assert s.engine is not None and s.engine.rules.schedule().quiet_rounds == QUIET
    assert cadences_before_quiet(s) == QUIET


def test_a_press_in_the_last_quiet_round_keeps_the_table_going(
        sim: Callable[..., Sim]) -> None:
    s = sim(options={"deck": "72", "tempo_ms": "100", "window_ms": "300", "pause_ms": "100",
                     "doubles": "off"}, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.rules.round_count() == QUIET and engine.cue_us is None,
                limit_ms=120_000, step_ms=10)
    for i, seat in enumerate(["Blue", "Red", "Green"]):  # slaps in that round: counted again
        s.press(seat, s.t_ms + 10 + 5 * i)
    assert cadences_before_quiet(s) == 2 * QUIET


def test_a_resumed_table_counts_its_quiet_rounds_from_the_first_it_plays(
        sim: Callable[..., Sim]) -> None:
    """A referee restarted mid-game (resume_game) pauses after its quiet rounds as well (it
    counted the first call after the restart as a quiet round: it paused one round early)."""
    options = {"deck": "72", "tempo_ms": "100", "window_ms": "300", "pause_ms": "100",
               "doubles": "off"}
    s = sim(options=options, auto=False)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    for i, seat in enumerate(["Blue", "Red", "Green"]):
        s.press(seat, cue + 100 + 10 * i)
    s.run_until(lambda: 1 in engine.announced, limit_ms=2000, step_ms=10)
    resumed = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, leds=s.box,
                          auto=True)
    s.engine = resumed
    s.voice.said.clear()
    assert cadences_before_quiet(s) == QUIET


# -- hold-to-pause, and the engine's sleep while a button is held ---------------------------------


@pytest.mark.parametrize(("button", "pauses"), [("slap", True), ("double", False)])
def test_holding_a_slap_button_two_seconds_pauses_a_double_does_not(
        sim: Callable[..., Sim], button: str, pauses: bool) -> None:
    s = sim(["Blue", "Red"], {"deck": "72", "tempo_ms": "100", "window_ms": "300",
                              "pause_ms": "100", "doubles": "buttons"}, auto=True, doubles=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.rules.round_count() == 1 and engine.cue_us is None,
                limit_ms=5000, step_ms=10)
    pin = s.box._mock_pin("Blue", button)
    start = s.t_ms
    pin.drive(False, s.tick(start))
    s.run_to(start + HOLD_US / 1000 - 0.001, step_ms=10)
    assert engine.snapshot()["phase"] not in ("paused",) and not engine.paused
    s.run_to(start + HOLD_US / 1000 + 1, step_ms=10)
    assert engine.paused is pauses


def test_a_held_judge_key_never_wakes_the_engine_in_the_past(sim: Callable[..., Sim]) -> None:
    """A judge key held down has no hold-to-pause: the engine must sleep until its stuck report
    (10 s), not wake at once over and over from 2 s on (a busy loop beside the button path)."""
    s = sim(["Blue", "Red"], auto=False)
    engine = s.engine
    assert engine is not None
    s.edges(YES, [(0, False)])
    for at_ms in (1000, 2000, 3000, 9999):
        s.pump(at_ms)
        wake = engine.next_wake()
        assert wake is not None and wake > engine.now(), at_ms
    s.pump(10_000)
    s.pump()  # the stuck report comes back through the queue
    assert [k for k, _ in s.published if k == "stuck"] == ["stuck"]
