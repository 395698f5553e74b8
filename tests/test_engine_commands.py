"""The engine's commands and keypad as a person at the table meets them, on the simulated clock.

What the panel, the CLI and the keypad ask of the engine (pause, resume, start, end, next game,
next round, standings, feed, undo) and each refusal, read as the one line the caller shows; a full
disk (SQLite's real "database or disk is full", from `PRAGMA max_page_count`) and the room coming
back; a game rebuilt from its log by `resume_game`. Every test checks what is said, the phase the
scoreboard shows, what is logged or the standings, and each refusal has its sibling that is
accepted, so an engine that refused (or allowed) the wrong thing is seen.
"""

from __future__ import annotations

import io
import logging
import queue
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.engine.commands import Request, parse
from referee.engine.loop import Engine, open_game, resume_game
from referee.events import Facts, GameStart, Penalty, Press
from referee.rules.replay import ReplayError
from referee.store.database import StorageFull, Store, events, marks
from referee.voice.announce import PrintAnnouncer
from tests.harness import Sim, SimClock, register_game, typed
from tests.test_engine_keypad import key, play_round, said  # the keypad tests' own steps

SEATS = ["Blue", "Red", "Green"]
OPTIONS = {"deck": "72", "tempo_ms": "100", "window_ms": "1000", "doubles": "off",
           "pause_ms": "100"}
NOT_NOW = "a round cannot start now (race open, judge asked or game over)"


def scores(engine: Engine) -> dict[str, int]:
    return {r.seat: r.score for r in engine.rules.standings().seats}


# -- an engine at its Ready step (the Sim starts from the first round) ------------------------


def ask(engine: Engine, name: str, **args: Any) -> Any:
    """A command as the panel sends it, answered on this (the engine's) thread."""
    reply: queue.SimpleQueue[Any] = queue.SimpleQueue()
    engine.run_items(Request(parse(name, args), reply))
    result = reply.get_nowait()
    if isinstance(result, Exception):
        raise result
    return result


@pytest.fixture
def ready_table(tmp_path: Path) -> Any:
    clock = SimClock(1_000_000)
    store = Store(tmp_path / "ready.db")
    voice = PrintAnnouncer(io.StringIO(), lead_ms=10, clock=clock, quiet=True)
    start = GameStart("spank-the-pig", tuple(SEATS), typed("spank-the-pig", OPTIONS))
    engine = open_game(store, start, voice, clock=clock, auto=True, ready=True)
    engine.open()
    try:
        yield engine, voice, clock
    finally:
        store.close()


def test_pause_at_the_ready_step_is_refused_and_start_counts_in(ready_table: Any) -> None:
    engine, voice, clock = ready_table
    assert engine.snapshot()["phase"] == "ready"
    with pytest.raises(ValueError) as refused:
        ask(engine, "pause")
    assert str(refused.value) == "nothing to pause yet: the table waits for every seat to be ready"
    assert engine.snapshot()["phase"] == "ready"
    shown = ask(engine, "start")
    assert shown["phase"] == "count-in"
    assert [k for k, _, _ in voice.said][-1] == "count_in"
    # a pause in the count-in stops it at once
    assert ask(engine, "pause")["phase"] == "paused"
    assert [k for k, _, _ in voice.said][-1] == "paused"
    with pytest.raises(ValueError) as again:
        ask(engine, "pause")
    assert str(again.value) == "the table is already paused; resume to play on"
    assert ask(engine, "resume")["phase"] == "count-in"
    assert [k for k, _, _ in voice.said][-1] == "count_in"


def test_the_keypad_yes_at_the_ready_step_starts_and_no_pauses_the_count_in(
        ready_table: Any) -> None:
    from referee.events import JudgeKey

    engine, voice, clock = ready_table
    shown: list[str] = []
    engine.subscribe(lambda kind, data: shown.append(data["phase"]) if kind == "state" else None)
    engine.run_items(JudgeKey(clock.t, "no"))  # nothing to pause yet: nothing changes
    assert engine.snapshot()["phase"] == "ready" and shown == []
    engine.run_items(JudgeKey(clock.t, "yes"))
    assert shown[-1] == "count-in" and [k for k, _, _ in voice.said][-1] == "count_in"
    engine.run_items(JudgeKey(clock.t, "no"))
    assert shown[-1] == "paused" and [k for k, _, _ in voice.said][-1] == "paused"
    engine.run_items(JudgeKey(clock.t, "yes"))
    assert shown[-1] == "count-in"
    count = len(shown)
    engine.run_items(JudgeKey(clock.t, "yes"))  # counting in already: nothing to start
    assert len(shown) == count and engine.snapshot()["phase"] == "count-in"


# -- pause, resume and start during play -------------------------------------------------------


def racing(sim: Callable[..., Sim]) -> tuple[Sim, Engine]:
    """A table that plays on its own, run until its first race is open (the go-word sounded)."""
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.rules.status().race_open and engine.cue_us is None,
                limit_ms=5000, step_ms=10)
    return s, engine


def test_pause_during_a_race_waits_for_its_ruling_and_resume_takes_it_back(
        sim: Callable[..., Sim]) -> None:
    s, engine = racing(sim)
    rounds = engine.rules.round_count()
    shown = s.command("pause")
    assert shown["phase"] == "race" and "paused" not in said(s)  # the race in hand goes on
    with pytest.raises(ValueError) as again:
        s.command("pause")
    assert str(again.value) == ("the table pauses as soon as this round is ruled; resume to "
                                "take it back")
    assert s.command("resume")["phase"] == "race"  # called off: play goes on
    assert "count_in" not in said(s)
    s.run_until(lambda: engine.rules.round_count() == rounds + 1, limit_ms=10_000, step_ms=10)
    assert "paused" not in said(s)


def test_pause_between_rounds_is_said_and_resume_counts_in(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.rules.round_count() == 1 and not engine.rules.status().race_open
                and 1 in engine.announced, limit_ms=5000, step_ms=10)
    shown = s.command("pause")
    assert shown["phase"] == "paused" and said(s)[-1] == "paused"
    rounds = engine.rules.round_count()
    s.run_to(s.t_ms + 5000)
    assert engine.rules.round_count() == rounds  # nothing is called while paused
    assert s.command("start")["phase"] == "count-in" and said(s)[-1] == "count_in"
    s.run_until(lambda: engine.rules.round_count() == rounds + 1, limit_ms=10_000)


def test_resume_and_start_while_playing_change_nothing(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.rules.round_count() == 1, limit_ms=5000, step_ms=10)
    before = list(said(s))
    phase = engine.snapshot()["phase"]
    assert s.command("resume")["phase"] == phase
    assert s.command("start")["phase"] == phase
    assert said(s) == before and not engine.paused


# -- next round, standings, feed, unknown ---------------------------------------------------------


def test_next_round_is_refused_while_a_race_is_open_or_the_judge_is_asked(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    shown = s.command("next_round")  # nothing in hand: a round starts
    assert engine.rules.round_count() == 1 and engine.rules.status().race_open
    assert shown["round"] == 1 and engine.cue_us is not None
    with pytest.raises(ValueError) as open_race:
        s.command("next_round")
    assert str(open_race.value) == NOT_NOW
    assert engine.rules.round_count() == 1
    s.press("Blue", s.ms(engine.cue_us) + 100)
    s.press("Red", s.ms(engine.cue_us) + 110)
    s.run_until(lambda: engine.rules.status().awaiting is not None, limit_ms=3000, step_ms=10)
    with pytest.raises(ValueError) as asked:
        s.command("next_round")
    assert str(asked.value) == NOT_NOW
    assert engine.rules.round_count() == 1
    key(s, "yes")  # answered: the next round may start
    s.command("next_round")
    assert engine.rules.round_count() == 2


def test_next_round_after_the_end_is_refused(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    s.command("end")
    with pytest.raises(ValueError) as refused:
        s.command("next_round")
    assert str(refused.value) == NOT_NOW
    assert engine.rules.round_count() == 1


def test_standings_are_said_and_returned(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])  # Green slapped last: one whammy
    shown = s.command("standings")
    assert {r["seat"]: r["score"] for r in shown["seats"]} == {"Blue": 0, "Red": 0, "Green": 1}
    assert "phase" not in shown and shown["final"] is False  # the standings line itself
    key_, params, _ = s.voice.said[-1]
    assert key_ == "standings"
    assert params["text"] == "Blue, zero whammies. Red, zero whammies. Green, one whammy."


def test_feed_logs_the_judges_event_and_an_unknown_command_is_named(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    number = play_round(s, ["Blue", "Red", "Green"])
    shown = s.command("feed", event=Penalty(number, "Red", 1, "slapped the hippo"))
    assert {r["seat"]: r["score"] for r in shown["seats"]}["Red"] == 1
    assert [e.__class__.__name__ for e in events(s.store.conn, engine.game_id)][-1] == "Penalty"
    assert ("judge", {"event": "penalty"}) in s.published
    with pytest.raises(ValueError) as unknown:
        s.command("shuffle")
    assert str(unknown.value) == "unknown command 'shuffle'"


# -- end and next game ---------------------------------------------------------------------------


def test_end_names_the_leaders_champions_and_a_second_end_is_refused(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])  # Green: 1
    play_round(s, ["Blue", "Green", "Red"])  # Red: 1; Blue leads alone
    shown = s.command("end")
    assert shown["phase"] == "over" and shown["final"] is True and shown["winners"] == ["Blue"]
    assert said(s)[-2:] == ["game_over", "champion"]
    assert s.voice.said[-1][1]["seats"] == "Blue"
    assert marks(s.store.conn, engine.game_id, "ended") == [True]
    with pytest.raises(ValueError) as again:
        s.command("end")
    assert str(again.value) == "the game is already over"
    with pytest.raises(ValueError) as pause:
        s.command("pause")
    assert str(pause.value) == "nothing to pause: the game is over"
    # a press after the end is not logged
    before = len(s.logged_presses())
    s.press("Blue", s.t_ms + 10)
    s.pump(s.t_ms + 100)
    assert len(s.logged_presses()) == before


def test_end_with_a_tie_at_the_top_names_co_champions(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])  # Green: 1; Blue and Red lead
    shown = s.command("end")
    assert shown["winners"] == ["Blue", "Red"]
    assert said(s)[-1] == "co_champions"
    assert s.voice.text(*s.voice.said[-1][:2]) == "Blue and Red are co-champions!"


def test_ending_a_practice_game_crowns_nobody_and_hands_over_to_the_real_game(
        sim: Callable[..., Sim]) -> None:
    """The judge's End in a practice: "Practice over", no game-over line, no champion, and the
    real game with the options chosen for it (not the practice's short deck)."""
    s = sim(SEATS, {**OPTIONS, "deck": "36"}, practice=True)
    engine = s.engine
    assert engine is not None
    first = engine.game_id
    assert engine.rules.options["deck"] == 9  # the practice's own: 3 cards a seat
    play_round(s, ["Blue", "Red", "Green"])
    before = list(said(s))
    shown = s.command("end")
    # no game-over line, no champion: the real game's deal and Ready step
    assert said(s)[len(before):] == ["practice_over", "deal", "ready"]
    assert marks(s.store.conn, first, "ended") == [True]
    assert shown["game_id"] != first and shown["practice"] is False
    assert shown["winners"] == [] and shown["options"]["deck"] == 36


def test_next_game_only_after_the_end_and_from_a_clean_slate(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: engine.rules.round_count() == 1, limit_ms=5000, step_ms=10)
    with pytest.raises(ValueError) as early:
        s.command("next_game")
    assert str(early.value) == "the game is not over; end it first"
    first = engine.game_id
    s.run_until(lambda: 1 in engine.announced, limit_ms=5000, step_ms=10)
    s.command("end")
    shown = s.command("next_game")  # the judge starts it: its deal, then the count-in
    assert shown["game_id"] != first and shown["phase"] == "count-in" and shown["round"] == 0
    assert all(r["score"] == 0 for r in shown["seats"]) and not shown["practice"]
    assert said(s)[-3:] == ["deal", "ready", "count_in"]  # the deal once, after the end
    assert marks(s.store.conn, first, "ended") == [True]  # marked once, by the end


def test_keypad_yes_after_the_game_is_over_starts_the_next_game(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: 1 in engine.announced, limit_ms=5000, step_ms=10)
    s.command("end")
    first = engine.game_id
    key(s, "yes")  # the judge's start: the count-in of the next game
    assert engine.game_id != first and engine.snapshot()["phase"] == "count-in"
    assert said(s)[-1] == "count_in"


# -- the keypad's NO with nothing asked -------------------------------------------------------------


def test_keypad_no_refutes_a_claim_the_box_took_at_its_word(sim: Callable[..., Sim]) -> None:
    """Pig: Blue claims four of a kind and nobody follows; the claim stands unless the judge says
    NO, and NO then is a fact of that round (logged; Blue takes the letter), not a pause."""
    s = sim(SEATS, {"window_ms": "1000", "lives": "3"}, game="pig")
    engine = s.engine
    assert engine is not None
    s.press("Blue", 100)
    s.run_to(1200)
    assert scores(engine)["Blue"] == 0
    key(s, "no")
    logged = [e for e in events(s.store.conn, engine.game_id)
              if isinstance(e, Facts)]
    assert [(e.round, e.values) for e in logged] == [(1, {"claim": False})]
    assert scores(engine)["Blue"] == 1
    assert not engine.paused and "paused" not in said(s)


# -- a full disk -------------------------------------------------------------------------------------


def fill(s: Sim) -> None:
    """The database may not grow past the pages it has: SQLite's real "disk is full"."""
    (pages,) = s.store.conn.execute("PRAGMA page_count").fetchone()
    s.store.conn.execute(f"PRAGMA max_page_count = {pages}")


def room(s: Sim) -> None:
    s.store.conn.execute("PRAGMA max_page_count = 1073741823")


def test_a_full_disk_is_said_once_pauses_and_refuses_until_resumed_with_room(
        sim: Callable[..., Sim], caplog: pytest.LogCaptureFixture) -> None:
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: 1 in engine.announced, limit_ms=5000, step_ms=10)
    s.run_until(lambda: engine.rules.status().race_open and engine.cue_us is None,
                limit_ms=5000, step_ms=10)
    cut_in: list[str] = []  # the phrases said over whatever was being said
    plain_say = s.voice.say

    def say(key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
        if interrupt:
            cut_in.append(key)
        plain_say(key, params, interrupt=interrupt)

    s.voice.say = say  # type: ignore[method-assign]
    fill(s)
    caplog.set_level(logging.ERROR, logger="referee.engine.loop")
    cue = engine.last_cue_us
    assert cue is not None
    for i in range(200):  # fill the last page
        engine.run_items(Press(cue + 1000 * (i + 1), SEATS[i % 3], "slap"))
        if engine.storage_full:
            break
    assert engine.storage_full and "storage is full" in engine.storage_full
    full_lines = [r.getMessage() for r in caplog.records if "storage is full" in r.getMessage()]
    assert full_lines == [engine.storage_full]  # one line, logged once
    assert said(s).count("storage_full") == 1 and cut_in == ["storage_full"]
    shown = engine.snapshot()
    assert shown["phase"] == "paused" and shown["storage_full"] == engine.storage_full
    pages = [data for kind, data in s.published if kind == "state"]
    assert pages[-1]["storage_full"] == engine.storage_full  # the pages were told at once
    # more presses are refused, and nothing more is said or logged
    engine.run_items(Press(cue + 500_000, "Blue", "slap"))
    assert said(s).count("storage_full") == 1 and len(full_lines) == 1
    with pytest.raises(ValueError) as refused:
        ask(engine, "next_round")
    assert str(refused.value) == engine.storage_full
    # resuming on a disk still full is refused with the same line (the last bytes taken)
    with pytest.raises(StorageFull):
        for _ in range(1000):
            s.store.mark(engine.game_id, "filler", 0)
    with pytest.raises(StorageFull):
        ask(engine, "resume")
    assert engine.snapshot()["phase"] == "paused" and engine.storage_full
    room(s)
    shown = ask(engine, "resume")
    assert shown["phase"] == "count-in" and shown["storage_full"] == ""
    assert said(s)[-1] == "count_in"
    assert marks(s.store.conn, engine.game_id, "resumed") == [True]


def test_a_race_that_closes_while_the_disk_is_full_says_and_logs_the_full_disk_once(
        sim: Callable[..., Sim], caplog: pytest.LogCaptureFixture) -> None:
    """The disk fills during a race (a press cannot be logged); time passes, the race closes,
    and its "ruled" mark finds the disk full too: "storage full" is still said and logged once."""
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    s.run_to(cue + 50, step_ms=10)
    fill(s)
    caplog.set_level(logging.ERROR, logger="referee.engine.loop")
    for i in range(200):  # fill the last page
        engine.run_items(Press(s.us(cue + 60 + i / 10), SEATS[i % 2], "slap"))
        if engine.storage_full:
            break
    assert engine.storage_full and said(s).count("storage_full") == 1
    with pytest.raises(StorageFull):  # the last bytes taken: the race's mark cannot be written
        for _ in range(1000):
            s.store.mark(engine.game_id, "filler", 0)
    number = engine.rules.round_count()
    while number not in engine.announced:  # (the engine logs the line: not with `s.run_until`)
        assert s.t_ms < cue + 3000, "the race never closed"
        s.t_ms += 10
        engine.run_items(None)
    full_lines = [r.getMessage() for r in caplog.records if "storage is full" in r.getMessage()]
    assert full_lines == [engine.storage_full]
    assert said(s).count("storage_full") == 1


def test_after_a_full_disk_the_keypad_yes_starts_play_again_once_there_is_room(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, auto=True)
    engine = s.engine
    assert engine is not None
    s.run_until(lambda: 1 in engine.announced, limit_ms=5000, step_ms=10)
    engine._full(StorageFull("storage is full: free space on the SD card, then resume"))
    assert engine.snapshot()["phase"] == "paused" and said(s)[-1] == "storage_full"
    assert s.command("start")["phase"] == "count-in"
    assert engine.storage_full == "" and said(s)[-1] == "count_in"
    assert marks(s.store.conn, engine.game_id, "resumed") == [True]


# -- a game rebuilt from its log -------------------------------------------------------------------


def test_resume_game_names_a_missing_game(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    with pytest.raises(ValueError) as missing:
        resume_game(s.store, 99, s.voice, clock=s.clock)
    assert str(missing.value) == "no game 99 in the database"


def test_a_resumed_game_keeps_its_standings_and_voids_the_round_cut_in_half(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])  # Green: 1
    cue = s.start_round()
    s.press("Blue", cue + 100)  # round 2 is cut by the stop, one slap in
    s.pump(cue + 150)
    last = s.logged_presses()[-1][0]
    resumed = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, auto=False)
    assert scores(resumed) == {"Blue": 0, "Red": 0, "Green": 1}
    assert resumed.now() >= last + 1_000_000  # its clock runs on after the logged times
    assert not resumed.rules.status().race_open
    assert resumed.rules.round_count() == 2
    facts = [e for e in events(s.store.conn, engine.game_id) if isinstance(e, Facts)]
    assert [(e.round, e.values) for e in facts] == [(2, {"void": True})]
    assert sorted(resumed.announced) == [1, 2]  # nothing ruled before is said again
    assert resumed.rules.take_changed() == []
    assert resumed.snapshot()["phase"] != "ready"  # dealt already: no Ready step


def test_a_resumed_practice_game_stays_practice_and_an_undealt_game_is_at_ready(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS, practice=True)
    engine = s.engine
    assert engine is not None
    resumed = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, auto=True)
    assert resumed.practice and resumed.snapshot()["practice"] is True
    assert resumed.snapshot()["phase"] == "ready"  # never dealt: every seat readies again
    assert not [e for e in events(s.store.conn, engine.game_id)]
    again = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, auto=True, ready=False)
    assert again.snapshot()["phase"] != "ready"


# -- more siblings: the keypad, the question in hand, the engine's own commands -----------------


def test_keypad_undo_takes_back_the_latest_judge_action_not_the_first(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    first = play_round(s, ["Blue", "Red", "Green"])
    s.command("feed", event=Penalty(first, "Blue", 1, "slapped the hippo"))
    play_round(s, ["Blue", "Red", "Green"])
    third = play_round(s, ["Blue", "Red", "Green"])
    s.command("feed", event=Penalty(third, "Red", 1, "slapped the hippo"))
    key(s, "undo")
    assert "nothing_to_undo" not in said(s)
    assert scores(engine)["Red"] == 0 and scores(engine)["Blue"] == 1  # Blue's stands


def test_keypad_yes_with_nothing_asked_refutes_no_claim(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {"window_ms": "1000", "lives": "3"}, game="pig")
    engine = s.engine
    assert engine is not None
    s.press("Blue", 100)
    s.run_to(1200)
    key(s, "yes")
    assert not [e for e in events(s.store.conn, engine.game_id)
                if isinstance(e, Facts)]
    assert scores(engine)["Blue"] == 0


def test_pause_while_the_judge_is_asked_waits_for_the_answer(sim: Callable[..., Sim]) -> None:
    s, engine = racing(sim)
    cue = s.ms(engine.last_cue_us or 0)
    s.press("Blue", cue + 100)
    s.press("Red", cue + 110)  # Green never slaps: pig or no pig?
    s.run_until(lambda: engine.rules.status().awaiting is not None, limit_ms=3000, step_ms=10)
    shown = s.command("pause")
    assert shown["phase"] == "awaiting" and "paused" not in said(s)
    with pytest.raises(ValueError, match="^the table pauses as soon as this round is ruled"):
        s.command("pause")
    key(s, "yes")
    s.run_until(lambda: engine.snapshot()["phase"] == "paused", limit_ms=3000, step_ms=10)
    assert said(s)[-1] == "paused"


def test_the_engine_answers_wake_step_and_snapshot_and_stops_on_stop(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    cue = s.start_round()
    assert s.command("wake") == engine.next_wake() == s.us(cue)
    assert s.command("step") is None
    assert s.command("snapshot")["phase"] == "cadence"
    engine.start()
    try:
        engine.command("stop")
        assert engine._thread is not None
        engine._thread.join(5)
        assert not engine._thread.is_alive()
    finally:
        engine.stop()


def test_a_game_over_by_its_rules_is_marked_ended_when_the_next_one_starts(
        sim: Callable[..., Sim]) -> None:
    """Pig, one life: Green never follows Blue's claim and is out; Blue and Red, the two left, are
    co-champions. The next game marks the finished one ended (once) and starts at the Ready
    step."""
    s = sim(SEATS, {"window_ms": "1000", "lives": "1"}, game="pig", auto=True)
    engine = s.engine
    assert engine is not None
    s.run_to(100)
    s.press("Blue", 100)
    s.press("Red", 160)
    s.run_until(lambda: any(k == "over" for k, _ in s.published), limit_ms=5000)
    assert said(s)[-2:] == ["game_over", "co_champions"]
    assert s.voice.text(*s.voice.said[-1][:2]) == "Blue and Red are co-champions!"
    first = engine.game_id
    assert marks(s.store.conn, first, "ended") == []
    with pytest.raises(ValueError, match="^nothing to pause: the game is over$"):
        s.command("pause")
    shown = s.command("next_game")
    assert shown["phase"] == "count-in" and shown["game_id"] != first
    assert marks(s.store.conn, first, "ended") == [True]


def test_a_resumed_game_whose_last_round_was_ruled_voids_nothing(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])  # Green: 1
    play_round(s, ["Green", "Red", "Blue"])  # Blue: 1
    s.voice.said.clear()
    resumed = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, auto=False)
    assert scores(resumed) == {"Blue": 1, "Red": 0, "Green": 1}
    assert not [e for e in events(s.store.conn, engine.game_id)
                if isinstance(e, Facts)]
    resumed.run_items(None)
    assert list(s.voice.said) == []  # nothing ruled before is said again
    assert resumed.snapshot()["round"] == 2 and resumed.snapshot()["phase"] == "ruled"


def test_standings_are_said_in_the_games_own_words(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {"window_ms": "1000", "lives": "3"}, game="pig")
    s.press("Blue", 100)
    s.press("Red", 160)
    s.run_to(1200)  # Green never followed: a life lost
    s.command("standings")
    key_, params, _ = s.voice.said[-1]
    assert key_ == "standings"
    assert params["text"] == "Blue, zero lives lost. Red, zero lives lost. Green, one life lost."


def test_keypad_no_refutes_a_claim_once_then_pauses(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, {"window_ms": "1000", "lives": "3"}, game="pig")
    engine = s.engine
    assert engine is not None
    s.press("Blue", 100)
    s.run_to(1200)
    key(s, "no")
    key(s, "no")  # refuted already: this NO pauses
    logged = [e for e in events(s.store.conn, engine.game_id) if isinstance(e, Facts)]
    assert len(logged) == 1 and scores(engine)["Blue"] == 1
    assert engine.snapshot()["phase"] == "paused" and said(s)[-1] == "paused"


def test_the_end_is_shown_to_the_pages_at_once(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    play_round(s, ["Blue", "Red", "Green"])
    s.command("end")
    pages = [data for kind, data in s.published if kind == "state"]
    assert pages[-1]["phase"] == "over" and pages[-1]["winners"] == ["Blue", "Red"]


def test_a_resumed_clock_runs_on_one_second_after_the_last_logged_press(
        sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    last = s.logged_presses()[-1][0]
    assert s.clock() < last + 1_000_000
    resumed = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, auto=False)
    assert resumed.now() == last + 1_000_000
    # restarted long after: the clock as it is
    s.t_ms += 60_000
    later = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, auto=False)
    assert later.now() == s.clock()
    # no clock given: the wall clock, still after every logged time
    wall = resume_game(s.store, engine.game_id, s.voice, auto=False)
    assert wall.now() >= last + 1_000_000


def test_a_resumed_game_says_a_correction_of_an_earlier_round(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])  # Green: 1
    resumed = resume_game(s.store, engine.game_id, s.voice, clock=s.clock, auto=False)
    s.voice.said.clear()
    ask(resumed, "feed", event=Penalty(1, "Red", 1, "slapped the hippo"))
    assert [(k, p.get("seat")) for k, p, _ in s.voice.said] == [("ruling", "Red")]  # only it
    assert scores(resumed) == {"Blue": 0, "Red": 1, "Green": 1}


def test_resuming_a_damaged_log_names_its_line(sim: Callable[..., Sim]) -> None:
    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    play_round(s, ["Blue", "Red", "Green"])
    count = len(list(events(s.store.conn, engine.game_id)))
    s.store.append(engine.game_id, Press(s.clock(), "Purple", "slap"))
    with pytest.raises(ReplayError) as bad:  # the game line is line 1 of the exported log
        resume_game(s.store, engine.game_id, s.voice, clock=s.clock, auto=False)
    assert str(bad.value) == (f"line {count + 2}: seat 'Purple' is not at this table "
                              "(Blue, Red, Green)")


def test_standings_of_a_game_with_its_own_unit_use_its_words(
        sim: Callable[..., Sim], monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit the voice has no words for ("points" of the made-up game) is said with the game's
    own one and many."""
    from tests.made_up_game import FirstAfterTheBeep

    register_game(monkeypatch, FirstAfterTheBeep)
    s = sim(SEATS, {"window_ms": "1000"}, game=FirstAfterTheBeep.NAME)
    engine = s.engine
    assert engine is not None
    s.start_round()
    s.run_to(3000)
    s.command("feed", event=Penalty(1, "Red", 1, "slapped the hippo"))
    s.command("standings")
    assert s.voice.said[-1][1]["text"] == "Red, one point. Blue, zero points. Green, zero points."


def test_commands_are_typed_and_a_name_with_a_field_it_does_not_take_is_refused(
        sim: Callable[..., Sim]) -> None:
    from referee.engine.commands import COMMANDS, Feed, SayStandings

    s = sim(SEATS, OPTIONS)
    engine = s.engine
    assert engine is not None
    number = play_round(s, ["Blue", "Red", "Green"])
    shown = engine._command(Feed(Penalty(number, "Red", 1, "slapped the hippo")))
    assert {r["seat"]: r["score"] for r in shown["seats"]}["Red"] == 1
    assert engine._command(SayStandings())["type"] == "standings"
    with pytest.raises(ValueError, match="^command 'pause' takes no seat$"):
        s.command("pause", seat="Blue")
    assert sorted(COMMANDS) == ["end", "feed", "next_game", "next_round", "pause", "press_note",
                                "resume", "snapshot", "standings", "start", "step", "stop",
                                "undo", "wake"]


def test_end_in_a_sudden_death_race_asks_the_judge_then_places_the_play_off(
        sim: Callable[..., Sim]) -> None:
    """Round 1 (deck 4) leaves Blue, Red and Green tied, Yellow last; in their sudden death Blue
    slaps and the judge ends the game. The race closes at the end, ruled from Blue's slap alone:
    the judge is asked and nothing more is said. No pig: Blue slapped first with none and is
    out; "Game over", then Red and Green, still in, are co-champions; Blue is placed ahead of
    Yellow, who sat the sudden death out; the exported log replays to what was said."""
    seats = ["Blue", "Red", "Green", "Yellow"]
    s = sim(seats, {**OPTIONS, "deck": "4", "tie_us": "1"})
    engine = s.engine
    assert engine is not None
    play_round(s, seats)  # Yellow last
    cue = s.start_round()
    assert engine.rules.racing(2) == ("Blue", "Red", "Green")
    s.press("Blue", cue + 200)
    s.run_to(cue + 300, step_ms=10)
    before = len(s.voice.said)
    shown = s.command("end")
    assert shown["phase"] == "awaiting" and shown["final"] is False
    assert shown["awaiting"] == {"type": "awaiting", "round": 2, "need": ["pigs"]}
    assert shown["reactions_us"] == {"Blue": 200_000}
    s.run_to(s.t_ms + 500, step_ms=10)
    assert said(s)[before:] == ["awaiting"]
    assert s.voice.text(*s.voice.said[-1][:2]) == "Judge: Pig or no pig?"
    s.command("feed", event=Facts(2, {"pigs": 0}))
    s.run_to(s.t_ms + 500, step_ms=10)
    texts = [s.voice.text(k, p) for k, p, _ in list(s.voice.said)[before + 1:]]
    assert texts == ["Blue: first to slap with no pig. One whammy.",
                     "Game over. Red, zero whammies. Green, zero whammies. Blue, one whammy. "
                     "Yellow, one whammy.",
                     "Red and Green are co-champions!"]
    shown = engine.snapshot()
    assert shown["phase"] == "over" and shown["winners"] == ["Red", "Green"]
    assert [(r["seat"], r["place"], r["out"]) for r in shown["seats"]] == [
        ("Red", 1, False), ("Green", 1, False), ("Blue", 3, True), ("Yellow", 4, False)]
    assert s.check_log_replays_to_live()["winners"] == ["Red", "Green"]


def test_a_slap_on_its_way_when_the_judge_ends_is_ruled_by_its_edge_not_its_arrival(
        sim: Callable[..., Sim]) -> None:
    """Presses are ordered by edge time, never by the order callbacks arrive (PRODUCT.md, the
    principle). On a Pi an edge reaches the engine up to `delivery_us` after it happened: Blue
    slaps 3 ms before the judge's End, and its press arrives just before the End on one table,
    just after it on the other. Both tables rule the race the End cut the same way: the end
    stands where every press before it is in (`delivery_us` before the judge's action), so
    Blue's slap is after it and counts for nothing, two of three slapped and the judge is asked;
    each exported log replays to what its table said."""
    outcomes = []
    for arrives_first in (True, False):
        s = sim(SEATS, OPTIONS)
        engine = s.engine
        assert engine is not None
        engine.delivery_us = 5_000  # lgpio's, with room (referee.capture.gpio)
        cue = s.start_round()
        s.press("Red", cue + 100)
        s.press("Green", cue + 110)
        s.run_to(cue + 200, step_ms=10)
        if arrives_first:
            s.press("Blue", cue + 300)
            s.pump(cue + 303)
            s.command("end")
        else:
            s.pump(cue + 303)
            s.command("end")
            s.press("Blue", cue + 300)  # its edge 3 ms before the End; delivered after it
            s.pump(cue + 304)
        s.run_to(s.t_ms + 200, step_ms=10)
        s.check_log_replays_to_live()
        outcomes.append(s.outputs())
        s.close()  # (its pins free for the other table)
    assert outcomes[0] == outcomes[1] == [{"type": "awaiting", "round": 1, "need": ["pigs"]}]
