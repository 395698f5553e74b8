"""The table's rhythm at each of its thresholds, on both sides (issue 17, point 1).

`referee.engine.rhythm.Rhythm` is driven with explicit engine times (µs), so each boundary is met
exactly and one µs either side: the count-in, the pause after speech, a game's own turn pace, the
quiet-table auto-pause, a practice game's round limit, a pause waiting for the voice, and which
presses are game presses. Each test asserts what the table does: call a round or not, pause or not.
"""

from __future__ import annotations

import pytest

from referee.engine.rhythm import POLL_US, Decision, Pace, Phase, Rhythm, View


def view(**kw: object) -> View:
    base = dict(rounds=0, race_open=False, current_awaits=False, over=False, can_call=True,
                quiet_at=0)
    base.update(kw)
    return View(**base)  # type: ignore[arg-type]


def counting_in(pace: Pace) -> Rhythm:
    r = Rhythm(["A", "B"], pace)
    r.press("A", 10)
    r.press("B", 20)
    assert r.start(30) and r.phase is Phase.COUNT_IN
    return r


# -- the count-in: from "go on" (or the end of the voice, if later) ---------------------------------


@pytest.mark.parametrize(("quiet_at", "start"), [(5_000, 5_000), (100, 2_000)])
def test_the_count_in_runs_from_the_later_of_now_and_the_end_of_speech(
        quiet_at: int, start: int) -> None:
    r = counting_in(Pace(count_in_us=1_000_000))
    assert r.tick(2_000, view(quiet_at=quiet_at)) is None
    assert r.wake(2_000) == start + 1_000_000
    assert r.tick(start + 999_999, view(quiet_at=quiet_at)) is None
    assert r.phase is Phase.COUNT_IN
    assert r.tick(start + 1_000_000, view(quiet_at=quiet_at)) is Decision.CALL


def test_the_count_in_waits_while_the_end_of_speech_is_unknown() -> None:
    r = counting_in(Pace(count_in_us=1_000_000))
    assert r.tick(9_000_000, view(quiet_at=None)) is None
    assert r.wake(9_000_000) == 9_000_000 + POLL_US  # asks again soon
    assert r.tick(9_000_001, view(quiet_at=9_000_000)) is None  # now counted from here
    assert r.tick(10_000_000, view(quiet_at=9_000_000)) is None
    assert r.tick(10_000_001, view(quiet_at=9_000_000)) is Decision.CALL


def test_the_count_in_length_is_the_tables_own() -> None:
    r = counting_in(Pace(count_in_us=250_000))
    assert r.tick(0, view(quiet_at=0)) is None
    assert r.tick(249_999, view(quiet_at=0)) is None
    assert r.tick(250_000, view(quiet_at=0)) is Decision.CALL


@pytest.mark.parametrize(("t", "what"), [(1_000_499, "ignore"), (1_000_500, "game"),
                                         (1_000_501, "game")])
def test_presses_are_game_presses_from_the_first_calls_instant_on(t: int, what: str) -> None:
    r = counting_in(Pace(count_in_us=1_000_000))
    assert r.press("A", 500) == "ignore"  # in the count-in
    assert r.tick(500, view(quiet_at=500)) is None
    assert r.tick(1_000_500, view(quiet_at=500)) is Decision.CALL
    r.called(1_000_500)
    assert r.press("A", t) == what


@pytest.mark.parametrize(("t", "what"), [(2_999_999, "ignore"), (3_000_000, "game")])
def test_a_game_without_calls_takes_presses_from_the_go_on(t: int, what: str) -> None:
    """Pig: the count-in ends in GO; presses from that instant on open its rounds."""
    r = counting_in(Pace(count_in_us=1_000_000))
    assert r.tick(2_000_000, view(quiet_at=2_000_000, can_call=False)) is None
    assert r.tick(3_000_000, view(quiet_at=2_000_000, can_call=False)) is Decision.GO
    assert r.phase is Phase.PLAYING
    assert r.press("A", t) == what


# -- the pace: pause_us after the end of the spoken ruling, or the game's own turn pace --------------


def ruled(pace: Pace) -> Rhythm:
    """A table whose round 1 was called at 0 and has just been ruled."""
    r = Rhythm(["A"], pace, ready=False)
    assert r.tick(pace.pause_us, view()) is Decision.CALL
    r.called(0)
    r.press("A", 10)
    assert r.tick(10, view(rounds=1, race_open=True)) is None
    return r


@pytest.mark.parametrize(("now", "call"), [(7_499_999, False), (7_500_000, True),
                                           (7_500_001, True)])
def test_the_next_round_is_called_pause_after_the_end_of_speech(now: int, call: bool) -> None:
    r = ruled(Pace(pause_us=500_000))
    assert r.tick(now, view(rounds=1, quiet_at=7_000_000)) is (Decision.CALL if call else None)


def test_the_pause_follows_speech_that_grows_after_the_ruling() -> None:
    """A correction said meanwhile moves the end of speech, and the next call with it."""
    r = ruled(Pace(pause_us=500_000))
    assert r.tick(1_000_000, view(rounds=1, quiet_at=1_000_000)) is None
    assert r.wake(1_000_000) == 1_500_000
    assert r.tick(1_499_999, view(rounds=1, quiet_at=3_000_000)) is None
    assert r.wake(1_499_999) == 3_500_000
    assert r.tick(3_499_999, view(rounds=1, quiet_at=3_000_000)) is None
    assert r.tick(3_500_000, view(rounds=1, quiet_at=3_000_000)) is Decision.CALL


@pytest.mark.parametrize(("now", "call"), [(5_999_999, False), (6_000_000, True)])
def test_a_turn_pace_later_than_the_pause_wins(now: int, call: bool) -> None:
    r = ruled(Pace(pause_us=500_000))
    v = view(rounds=1, quiet_at=1_000_000, earliest_call=6_000_000)
    assert r.tick(now, v) is (Decision.CALL if call else None)


@pytest.mark.parametrize(("now", "call"), [(1_499_999, False), (1_500_000, True)])
def test_a_pause_later_than_the_turn_pace_wins(now: int, call: bool) -> None:
    r = ruled(Pace(pause_us=500_000))
    v = view(rounds=1, quiet_at=1_000_000, earliest_call=1_200_000)
    assert r.tick(now, v) is (Decision.CALL if call else None)


def test_the_current_round_asking_the_judge_holds_the_next_call() -> None:
    r = ruled(Pace(pause_us=0))
    assert r.tick(5_000_000, view(rounds=1, current_awaits=True, quiet_at=0)) is None
    assert r.phase is Phase.AWAITING and r.wake(5_000_000) is None
    assert r.tick(5_000_001, view(rounds=1, quiet_at=0)) is Decision.CALL  # answered


def test_no_call_while_the_race_is_open_however_late() -> None:
    r = ruled(Pace(pause_us=0))
    assert r.tick(60_000_000, view(rounds=1, race_open=True, quiet_at=0)) is None
    assert r.phase is Phase.CALLING


# -- the quiet table: quiet_rounds rounds in a row without a press ----------------------------------


def quiet_table(rounds: int, pressed_in: set[int] = frozenset()) -> list[Decision | None]:  # type: ignore[assignment]
    """Rounds called from a count-in, each closed and ruled; returns the decision after each."""
    r = counting_in(Pace(count_in_us=0, pause_us=0, quiet_rounds=3))
    t = 1_000
    assert r.tick(t, view(quiet_at=t)) is Decision.CALL
    got: list[Decision | None] = []
    for n in range(1, rounds + 1):
        r.called(t)
        if n in pressed_in:
            assert r.press("A", t + 1) == "game"
        t += 1_000
        got.append(r.tick(t, view(rounds=n, quiet_at=t)))
        if got[-1] is not Decision.CALL:
            break
    return got


def test_a_quiet_table_pauses_itself_after_exactly_quiet_rounds_rounds() -> None:
    assert quiet_table(5) == [Decision.CALL, Decision.CALL, Decision.AUTO_PAUSED]


def test_a_press_in_any_round_starts_the_quiet_count_again() -> None:
    got = quiet_table(6, pressed_in={2})
    assert got == [Decision.CALL, Decision.CALL, Decision.CALL, Decision.CALL,
                   Decision.AUTO_PAUSED]  # quiet again from round 3: rounds 3, 4, 5


def test_a_table_paused_by_itself_resumes_after_a_count_in_with_the_count_reset() -> None:
    r = counting_in(Pace(count_in_us=0, pause_us=0, quiet_rounds=1))
    assert r.tick(0, view()) is Decision.CALL
    r.called(0)
    assert r.tick(1, view(rounds=1, quiet_at=1)) is Decision.AUTO_PAUSED
    assert r.phase is Phase.PAUSED and r.auto_paused and r.holding
    assert r.press("A", 2) == "resume" and r.phase is Phase.COUNT_IN
    assert r.quiet == 0 and not r.auto_paused


def test_no_quiet_rounds_means_no_auto_pause() -> None:
    r = counting_in(Pace(count_in_us=0, pause_us=0))
    assert r.tick(0, view()) is Decision.CALL
    for n in range(1, 50):
        r.called(n * 10)
        assert r.tick(n * 10 + 5, view(rounds=n, quiet_at=0)) is Decision.CALL


# -- a practice game's round limit -------------------------------------------------------------


@pytest.mark.parametrize(("rounds", "decision"), [(2, Decision.CALL), (3, Decision.DONE)])
def test_a_practice_game_stops_after_exactly_its_round_limit(
        rounds: int, decision: Decision) -> None:
    r = ruled(Pace(pause_us=1000, round_limit=3))
    assert r.tick(1999, view(rounds=rounds, quiet_at=1000)) is None  # not before the pause
    assert r.tick(2000, view(rounds=rounds, quiet_at=1000)) is decision
    assert (r.phase is Phase.OVER) is (decision is Decision.DONE)


@pytest.mark.parametrize(("now", "done"), [(4_999_999, False), (5_000_000, True)])
def test_a_practice_game_without_calls_stops_once_the_voice_is_quiet(now: int, done: bool) -> None:
    r = counting_in(Pace(count_in_us=0, round_limit=3))
    assert r.tick(0, view(can_call=False)) is Decision.GO
    assert r.tick(now, view(rounds=3, can_call=False, quiet_at=5_000_000)) is (
        Decision.DONE if done else None)
    assert (r.phase is Phase.OVER) is done


def test_a_practice_game_without_calls_plays_on_below_its_limit_or_with_a_race_open() -> None:
    r = counting_in(Pace(count_in_us=0, round_limit=3))
    assert r.tick(0, view(can_call=False)) is Decision.GO
    assert r.tick(9_000_000, view(rounds=2, can_call=False, quiet_at=0)) is None
    assert r.tick(9_000_000, view(rounds=3, can_call=False, race_open=True, quiet_at=0)) is None
    assert r.tick(9_000_000, view(rounds=3, can_call=False, quiet_at=None)) is None
    assert r.phase is Phase.PLAYING
    assert r.tick(9_000_000, view(rounds=3, can_call=False, quiet_at=0)) is Decision.DONE


# -- pausing: a pause asked with a round in hand takes effect once it is done and said ------------------


@pytest.mark.parametrize(("now", "paused"), [(2_999_999, False), (3_000_000, True)])
def test_a_pause_takes_effect_when_the_ruling_has_been_said(now: int, paused: bool) -> None:
    r = ruled(Pace(pause_us=0))
    assert r.pause(20, in_hand=True) and r.phase is Phase.PAUSING
    assert r.tick(30, view(rounds=1, race_open=True, quiet_at=0)) is None
    assert r.tick(now, view(rounds=1, quiet_at=3_000_000)) is (
        Decision.PAUSED if paused else None)
    assert (r.phase is Phase.PAUSED) is paused


def test_a_pause_waits_for_the_judge_to_answer_the_round_in_hand() -> None:
    r = ruled(Pace(pause_us=0))
    assert r.pause(20, in_hand=True)
    assert r.tick(9_000_000, view(rounds=1, current_awaits=True, quiet_at=0)) is None
    assert r.tick(9_000_000, view(rounds=1, quiet_at=None)) is None
    assert r.tick(9_000_000, view(rounds=1, quiet_at=0)) is Decision.PAUSED


def test_a_pause_with_nothing_in_hand_is_at_once_and_a_count_in_pause_too() -> None:
    r = ruled(Pace(pause_us=0))
    assert r.tick(20, view(rounds=1, quiet_at=10_000)) is None  # ruled, waiting for the pace
    assert r.pause(30, in_hand=False) and r.phase is Phase.PAUSED
    assert r.tick(60_000_000, view(rounds=1)) is None  # and it stays paused
    c = counting_in(Pace())
    assert c.pause(40, in_hand=True) and c.phase is Phase.PAUSED


def test_a_pause_called_off_goes_back_to_the_round_it_left() -> None:
    r = ruled(Pace(pause_us=0))
    assert r.pause(20, in_hand=True)
    assert r.resume(30) and r.phase is Phase.RULING
    assert r.tick(40, view(rounds=1, quiet_at=0)) is Decision.CALL
    p = counting_in(Pace(count_in_us=0))
    assert p.tick(0, view(can_call=False)) is Decision.GO
    assert p.pause(10, in_hand=True) and p.resume(20) and p.phase is Phase.PLAYING


def test_a_table_started_mid_game_counts_quiet_rounds_from_its_first_call() -> None:
    """A resumed game starts its rhythm after a ruling (no Ready step): its first call is no
    quiet round yet, so it pauses after exactly quiet_rounds rounds as well."""
    r = Rhythm(["A"], Pace(pause_us=0, quiet_rounds=3), ready=False)
    got = [r.tick(0, view())]
    for n in range(1, 6):
        r.called(n * 1000)
        got.append(r.tick(n * 1000 + 500, view(rounds=n)))
        if got[-1] is not Decision.CALL:
            break
    assert got == [Decision.CALL, Decision.CALL, Decision.CALL, Decision.AUTO_PAUSED]


# -- which presses are game presses, around a pause and without a Ready step -------------------------


def paused_and_resumed(can_call: bool) -> tuple[Rhythm, int]:
    """A table that played, paused, and was resumed by a press at 20 s; returns it with the
    instant its count-in ends (the next call, or GO for a game without calls)."""
    r = counting_in(Pace(count_in_us=1_000_000, pause_us=0))
    assert r.tick(0, view(can_call=can_call)) is None
    assert r.tick(1_000_000, view(can_call=can_call)) is (Decision.CALL if can_call else
                                                           Decision.GO)
    if can_call:
        r.called(1_000_000)
    assert r.pause(10_000_000, in_hand=False) and r.phase is Phase.PAUSED
    assert r.press("A", 20_000_000) == "resume" and r.phase is Phase.COUNT_IN
    assert r.press("B", 20_500_000) == "ignore"  # in the count-in: nobody's game press
    assert r.tick(20_000_000, view(quiet_at=0, can_call=can_call)) is None
    return r, 21_000_000


def test_after_a_resume_presses_count_from_the_next_call_not_the_first() -> None:
    r, call = paused_and_resumed(can_call=True)
    assert r.tick(call, view(rounds=1, quiet_at=0)) is Decision.CALL
    r.called(call)
    assert r.press("A", call - 1) == "ignore"  # stamped in the count-in, however late it comes
    assert r.press("A", call) == "game"


def test_after_a_resume_a_game_without_calls_counts_presses_from_its_go() -> None:
    r, go = paused_and_resumed(can_call=False)
    assert r.tick(go, view(rounds=1, quiet_at=0, can_call=False)) is Decision.GO
    assert r.press("A", go - 1) == "ignore"
    assert r.press("A", go) == "game"


def test_presses_between_rounds_are_still_the_rules_to_judge() -> None:
    """Only a call out of a count-in moves the start of play: a press stamped before round 2's
    call (round 1's, delivered late) is a game press, for the rules to place."""
    r = counting_in(Pace(count_in_us=0, pause_us=0))
    assert r.tick(0, view()) is Decision.CALL
    r.called(1_000)
    assert r.tick(2_000, view(rounds=1, quiet_at=2_000)) is Decision.CALL
    r.called(5_000)
    assert r.press("A", 4_000) == "game"


def test_a_table_without_a_ready_step_takes_every_press_as_a_game_press() -> None:
    """A resumed game starts without a Ready step: its presses go to the rules from the start
    (a press stamped before its first call too: it may belong to the round in hand)."""
    r = Rhythm(["A"], Pace(pause_us=0), ready=False)
    assert r.wake(7) == 7 + POLL_US  # nothing known yet: it asks again soon
    assert r.press("A", 0) == "game"
    assert r.tick(0, view()) is Decision.CALL
    r.called(1_000)
    assert r.press("A", 500) == "game"


def test_a_resumed_game_without_calls_goes_straight_to_play() -> None:
    r = Rhythm(["A"], Pace(), ready=False)
    assert r.tick(0, view(can_call=False)) is None
    assert r.phase is Phase.PLAYING and not r.holding


def test_the_race_closing_moves_the_table_to_ruling() -> None:
    r = ruled(Pace(pause_us=1_000))
    assert r.phase is Phase.CALLING
    assert r.tick(20, view(rounds=1, quiet_at=20)) is None
    assert r.phase is Phase.RULING and r.wake(20) == 1_020


@pytest.mark.parametrize("phase", ["ready", "paused", "pausing", "over"])
def test_a_pause_is_refused_where_there_is_nothing_to_pause(phase: str) -> None:
    r = Rhythm(["A"], Pace(), ready=(phase == "ready"))
    if phase in ("paused", "pausing"):
        assert r.pause(0, in_hand=(phase == "pausing"))
    elif phase == "over":
        r.end()
    before = r.phase
    assert r.pause(10, in_hand=False) is False and r.phase is before


def test_start_is_refused_while_the_table_plays() -> None:
    r = ruled(Pace())
    assert r.start(10) is False and r.phase is Phase.CALLING
    assert r.resume(10) is False and r.phase is Phase.CALLING


def test_a_pause_asked_during_the_call_asks_again_soon_until_the_round_is_done() -> None:
    r = ruled(Pace())
    assert r.pause(20, in_hand=True) and r.phase is Phase.PAUSING
    assert r.wake(30) == 30 + POLL_US  # (an engine sleeping until then looks again)


def test_a_second_ready_press_of_a_seat_is_nobodys_press() -> None:
    r = Rhythm(["A", "B"], Pace())
    assert r.press("A", 10) == "ready"
    assert r.press("A", 20) == "ignore"
    assert not r.all_ready()
