"""Button capture at each of its thresholds, on both sides (issue 17, point 1).

Every threshold of `referee.capture.gpio` is met exactly, one µs short of it and one µs past it,
and each test asserts what the table would notice: a press counted or not, the time it is stamped
with, a stuck button said or not. Edges carry ticks the test picks (gpiozero's MockFactory with
tests/conftest.py's TickPin), so nothing here depends on the wall clock.

Times are µs after the box's reference instant: ``tick(box, t)`` is the tick of such an edge,
``t_us(box, t)`` the engine time the event must carry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from referee.capture.gpio import HOLD_US, STUCK_AFTER_US, ButtonBox
from referee.config import default_config
from referee.events import ButtonHeld, ButtonReleased, ButtonStuck, JudgeKey, Press

BLUE, RED, YES = 4, 17, 16  # default pins: Blue's and Red's slap, the judge's YES
DEBOUNCE = 5000  # the box's default debounce_us
CONFIRM = 1000  # the glitch filter's confirm_us used here (the Pi's default)


def tick(box: ButtonBox, t: int) -> float:
    return float(box.ref_ticks + t / 1_000_000)


def t_us(box: ButtonBox, t: int) -> int:
    return box.ref_us + t


def drive(box: ButtonBox, pin: Any, edges: list[tuple[int, bool]]) -> None:
    """(µs, level) edges on one pin; level False = pressed (low)."""
    for t, level in edges:
        pin.drive(level, tick(box, t))


def presses(got: list[object]) -> list[int]:
    """The times of the presses seen, in µs after the reference instant."""
    return [e.t_us - BOX_REF[0] for e in got if isinstance(e, Press)]


BOX_REF = [0]


@pytest.fixture
def box_of(mock_factory: MockFactory) -> Iterator[Callable[..., tuple[ButtonBox, list[object]]]]:
    boxes: list[ButtonBox] = []

    def make(**kw: Any) -> tuple[ButtonBox, list[object]]:
        got: list[object] = []
        box = ButtonBox(default_config(["Blue", "Red"]), got.append, factory=mock_factory,
                        confirmer=False, **kw)
        boxes.append(box)
        BOX_REF[0] = box.ref_us
        return box, got

    try:
        yield make
    finally:
        for box in boxes:
            box.close()


# -- debounce: edges closer than debounce_us are one burst ----------------------------------------


@pytest.mark.parametrize(("gap", "counted"), [(DEBOUNCE - 1, False), (DEBOUNCE, True),
                                              (DEBOUNCE + 1, True)])
def test_a_second_press_after_a_release_is_new_from_exactly_the_debounce(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        gap: int, counted: bool) -> None:
    """Press, release at 20 ms, press again `gap` µs after the release: a player's quick second
    slap counts once the line has been still for the debounce, never before (then it is the
    release's own bounce)."""
    box, got = box_of()
    again = 20_000 + gap
    drive(box, mock_factory.pin(BLUE), [(0, False), (20_000, True), (again, False),
                                        (again + 30_000, True)])
    assert presses(got) == ([0, again] if counted else [0])
    assert not any(isinstance(e, ButtonStuck | ButtonReleased) for e in got)


@pytest.mark.parametrize(("gap", "counted"), [(DEBOUNCE - 1, False), (DEBOUNCE, True)])
def test_the_debounce_is_the_boxs_own_setting(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        gap: int, counted: bool) -> None:
    """A table that sets debounce_us = 2 ms gets 2 ms, not the default 5 ms."""
    box, got = box_of(debounce_us=2000)
    again = 20_000 + gap - DEBOUNCE + 2000
    drive(box, mock_factory.pin(BLUE), [(0, False), (20_000, True), (again, False),
                                        (again + 30_000, True)])
    assert presses(got) == ([0, again] if counted else [0])


@pytest.mark.parametrize(("gap", "second"), [(DEBOUNCE - 1, False), (DEBOUNCE, True)])
def test_a_bounce_inside_the_burst_is_swallowed_and_the_press_keeps_its_first_edge(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        gap: int, second: bool) -> None:
    """Low at 0, a 1 ms open bounce, low again `gap` µs after the bounce opened: inside the
    debounce it is the same press (stamped at 0, never at the bounce); from the debounce on it
    is a press of its own."""
    box, got = box_of()
    drive(box, mock_factory.pin(BLUE), [(0, False), (1000, True), (1000 + gap, False),
                                        (90_000, True)])
    assert presses(got) == ([0, 1000 + gap] if second else [0])


def test_the_first_edge_of_a_burst_is_the_press_even_when_the_burst_ends_high(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    """Without the glitch filter (mock pins), a burst that starts low is one press at its first
    edge, wherever its bounces end; the next burst starting high again (release) is no press."""
    box, got = box_of()
    pin = mock_factory.pin(BLUE)
    drive(box, pin, [(100, False), (400, True), (900, False), (1500, True)])
    assert presses(got) == [100]
    drive(box, pin, [(1500 + DEBOUNCE, False), (1500 + DEBOUNCE + 40_000, True)])
    assert presses(got) == [100, 1500 + DEBOUNCE]


# -- re-arm: the least time between two accepted presses of one button ---------------------------


@pytest.mark.parametrize(("second", "counted"), [(99_999, False), (100_000, True),
                                                 (100_001, True)])
def test_rearm_accepts_a_press_exactly_rearm_after_the_last_one(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        second: int, counted: bool) -> None:
    box, got = box_of(rearm_us=100_000)
    pin = mock_factory.pin(BLUE)
    drive(box, pin, [(0, False), (20_000, True), (second, False), (second + 20_000, True)])
    assert presses(got) == ([0, second] if counted else [0])


def test_rearm_counts_from_the_last_accepted_press_not_a_refused_one(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    box, got = box_of(rearm_us=100_000)
    pin = mock_factory.pin(BLUE)
    for down in (0, 60_000, 100_000, 150_000, 200_000):
        drive(box, pin, [(down, False), (down + 20_000, True)])
    # 60 ms: refused (too soon after 0); 100 ms: accepted (0 + re-arm), though 40 ms after the
    # refused one; 150 ms: too soon after 100 ms; 200 ms: accepted, 50 ms after a refused one
    assert presses(got) == [0, 100_000, 200_000]


def test_rearm_is_per_button(box_of: Callable[..., tuple[ButtonBox, list[object]]],
                             mock_factory: MockFactory) -> None:
    box, got = box_of(rearm_us=100_000)
    drive(box, mock_factory.pin(BLUE), [(0, False), (20_000, True)])
    drive(box, mock_factory.pin(RED), [(1, False), (20_000, True)])
    assert [(e.seat, e.t_us - box.ref_us) for e in got if isinstance(e, Press)] == [
        ("Blue", 0), ("Red", 1)]


def test_no_rearm_by_default(box_of: Callable[..., tuple[ButtonBox, list[object]]],
                             mock_factory: MockFactory) -> None:
    box, got = box_of()
    drive(box, mock_factory.pin(BLUE), [(0, False), (1000, True), (1000 + DEBOUNCE, False),
                                        (2000 + DEBOUNCE, True)])
    assert presses(got) == [0, 1000 + DEBOUNCE]


# -- the glitch filter: a press is confirmed once still low confirm_us after its first edge --------


@pytest.mark.parametrize(("width", "press"), [(CONFIRM - 1, False), (CONFIRM, True),
                                              (CONFIRM + 1, True)])
def test_a_low_pulse_is_a_press_from_exactly_confirm_us(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        width: int, press: bool) -> None:
    box, got = box_of(confirm_us=CONFIRM)
    drive(box, mock_factory.pin(BLUE), [(10_000, False), (10_000 + width, True)])
    box.poll(t_us(box, 10_000 + width + 10 * CONFIRM))
    assert presses(got) == ([10_000] if press else [])
    assert box.noise()["Blue", "slap"][0] == (0 if press else 1)  # a rejected glitch is counted


@pytest.mark.parametrize(("now", "decided"), [(CONFIRM - 1, False), (CONFIRM, True)])
def test_a_held_press_is_confirmed_at_exactly_confirm_us_stamped_at_its_first_edge(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        now: int, decided: bool) -> None:
    box, got = box_of(confirm_us=CONFIRM)
    drive(box, mock_factory.pin(BLUE), [(0, False)])
    assert box.next_deadline() == t_us(box, CONFIRM)  # when the confirmer thread would look
    box.poll(t_us(box, now))
    assert presses(got) == ([0] if decided else [])
    assert (box.next_deadline() is None) is decided


@pytest.mark.parametrize(("now", "rejected"), [(500 + CONFIRM - 1, False), (500 + CONFIRM, True)])
def test_a_spike_is_rejected_once_high_for_exactly_confirm_us(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        now: int, rejected: bool) -> None:
    box, got = box_of(confirm_us=CONFIRM)
    drive(box, mock_factory.pin(BLUE), [(0, False), (500, True)])
    assert box.next_deadline() == t_us(box, 500 + CONFIRM)
    box.poll(t_us(box, now))
    assert box.noise()["Blue", "slap"][0] == (1 if rejected else 0)
    assert (box.next_deadline() is None) is rejected
    assert presses(got) == []


@pytest.mark.parametrize(("high_for", "stamp"), [(CONFIRM - 1, 0), (CONFIRM, 0),
                                                 (DEBOUNCE - 1, 0), (DEBOUNCE, 500 + DEBOUNCE)])
def test_a_press_after_an_opening_is_stamped_at_the_first_edge_inside_the_debounce(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        high_for: int, stamp: int) -> None:
    """Low at 0, high at 500 µs, low again `high_for` later and held: inside the debounce it is
    one burst, the same press at its first edge, 0, however long the opening (for confirm_us
    or more the pending press was refused, and the low again is re-checked from its own edge:
    a make-bounce, never re-stamped at the later contact); from the debounce on, the first
    pulse was a glitch and the press is the new edge's."""
    box, got = box_of(confirm_us=CONFIRM)
    down = 500 + high_for
    drive(box, mock_factory.pin(BLUE), [(0, False), (500, True)])
    if high_for >= CONFIRM:
        box.poll(t_us(box, 500 + CONFIRM))  # the confirmer looked while the line was open
        assert box.noise()["Blue", "slap"][0] == 1  # refused, for now
    drive(box, mock_factory.pin(BLUE), [(down, False)])
    box.poll(t_us(box, down + CONFIRM - 1))
    assert presses(got) == ([] if high_for >= CONFIRM else [0])  # the new contact is re-checked
    box.poll(t_us(box, down + CONFIRM))
    assert presses(got) == [stamp]
    assert box.noise()["Blue", "slap"][0] == (0 if stamp == 0 else 1)


def test_the_glitch_filter_waits_for_the_factorys_delivery(
        mock_factory: MockFactory) -> None:
    """A poll decides only from edges at least the factory's delivery delay old (an lgpio box
    polled at edge + confirm_us + 4.999 ms must not confirm: the end of the spike may still be on
    its way)."""
    from tests.pinfactories import LGPIOFactory, pi_clock

    clock = pi_clock()
    factory = LGPIOFactory(clock)
    got: list[object] = []
    box = ButtonBox(default_config(["Blue", "Red"]), got.append, factory=factory,
                    clock=clock.now, confirm_us=CONFIRM, confirmer=False)
    try:
        start = clock.now() + 1000
        factory.edge(BLUE, start, False)  # held
        delivery = box.timing.delivery_us
        factory.run_until(start + CONFIRM + delivery - 1, box.poll)
        assert [e for e in got if isinstance(e, Press)] == []
        factory.run_until(start + CONFIRM + delivery, box.poll)
        assert [e for e in got if isinstance(e, Press)] == [Press(start, "Blue")]
    finally:
        box.close()


# -- stuck buttons: held stuck_after_us (10 s) or more; held at start ------------------------------


@pytest.mark.parametrize(("held", "stuck"), [(STUCK_AFTER_US - 1, False), (STUCK_AFTER_US, True),
                                             (STUCK_AFTER_US + 1, True)])
def test_a_button_held_ten_seconds_is_reported_stuck_when_released(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        held: int, stuck: bool) -> None:
    box, got = box_of()
    drive(box, mock_factory.pin(YES), [(0, False), (held, True)])
    expected: list[object] = [JudgeKey(t_us(box, 0), "yes")]
    if stuck:
        expected += [ButtonStuck("judge", "yes", t_us(box, held), t_us(box, 0)),
                     ButtonReleased("judge", "yes", t_us(box, held))]
    assert got == expected


@pytest.mark.parametrize(("now", "stuck"), [(STUCK_AFTER_US - 1, False), (STUCK_AFTER_US, True)])
def test_a_button_held_ten_seconds_is_reported_stuck_while_held(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        now: int, stuck: bool) -> None:
    box, got = box_of()
    pin = mock_factory.pin(YES)
    drive(box, pin, [(0, False)])
    # judge keys never hold-to-pause: the next thing due is the stuck report (an engine that
    # slept until a past time would spin until then)
    assert box.next_hold_us() == t_us(box, STUCK_AFTER_US)
    box.check_stuck(t_us(box, now))
    found = [e for e in got if isinstance(e, ButtonStuck)]
    assert found == ([ButtonStuck("judge", "yes", t_us(box, now), t_us(box, 0))] if stuck else [])
    if stuck:  # said once; its release is said too
        box.check_stuck(t_us(box, now + 1))
        drive(box, pin, [(now + 2, True)])
        assert got[1:] == [ButtonStuck("judge", "yes", t_us(box, now), t_us(box, 0)),
                           ButtonReleased("judge", "yes", t_us(box, now + 2))]


def test_the_stuck_time_is_the_boxs_own_setting(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    box, got = box_of(stuck_after_us=3_000_000)
    drive(box, mock_factory.pin(YES), [(0, False)])
    box.check_stuck(t_us(box, 2_999_999))
    assert not any(isinstance(e, ButtonStuck) for e in got)
    box.check_stuck(t_us(box, 3_000_000))
    assert [e for e in got if isinstance(e, ButtonStuck)] == [
        ButtonStuck("judge", "yes", t_us(box, 3_000_000), t_us(box, 0))]


def test_a_stuck_button_gives_no_press_until_released_then_presses_again(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    """Held 10 s: reported stuck; its bounce while still leaning on it is no press; once let go,
    the next press counts."""
    box, got = box_of()
    pin = mock_factory.pin(BLUE)
    drive(box, pin, [(0, False)])
    box.check_stuck(t_us(box, STUCK_AFTER_US))
    later = STUCK_AFTER_US + 100_000
    drive(box, pin, [(later, True), (later + 200, False), (later + 400, True)])
    drive(box, pin, [(later + 100_000, False), (later + 140_000, True)])
    assert presses(got) == [0, later + 100_000]
    assert [type(e) for e in got] == [Press, ButtonHeld, ButtonStuck, ButtonReleased, Press]


def test_a_button_held_at_start_is_stuck_at_once_and_its_release_gives_no_press(
        mock_factory: MockFactory) -> None:
    pin = mock_factory.pin(RED)
    pin.closed = True  # leaning on Red's button as the referee starts
    pin.drive_low()
    got: list[object] = []
    box = ButtonBox(default_config(["Blue", "Red"]), got.append, factory=mock_factory)
    try:
        assert got == [ButtonStuck("Red", "slap", box.ref_us, None)]
        assert box.next_hold_us() is None  # already said: not again, and no hold-to-pause
        box.check_stuck(box.ref_us + STUCK_AFTER_US)
        assert len(got) == 1
        pin.closed = False
        drive(box, pin, [(50_000, True)])
        drive(box, pin, [(50_000 + DEBOUNCE, False), (90_000, True)])
        assert got[1:] == [ButtonReleased("Red", "slap", t_us(box, 50_000)),
                           Press(t_us(box, 50_000 + DEBOUNCE), "Red")]
    finally:
        box.close()


# -- hold-to-pause: 2 s of a seat button --------------------------------------------------------


@pytest.mark.parametrize(("now", "held"), [(999_999, False), (1_000_000, True)])
def test_hold_to_pause_uses_the_boxs_own_hold_time(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory,
        now: int, held: bool) -> None:
    """(The 2 s default at its boundary: tests/test_rhythm.py.) A box told 1 s pauses at 1 s."""
    box, got = box_of(hold_us=1_000_000)
    drive(box, mock_factory.pin(BLUE), [(0, False)])
    assert box.next_hold_us() == t_us(box, 1_000_000)
    box.check_stuck(t_us(box, now))
    assert [e for e in got if isinstance(e, ButtonHeld)] == (
        [ButtonHeld("Blue", "slap", t_us(box, 1_000_000))] if held else [])


def test_a_hold_is_reported_once_per_hold_and_again_on_the_next_one(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    box, got = box_of()
    pin = mock_factory.pin(BLUE)
    drive(box, pin, [(0, False)])
    box.check_stuck(t_us(box, HOLD_US))
    box.check_stuck(t_us(box, HOLD_US + 500_000))
    drive(box, pin, [(3_000_000, True), (4_000_000, False)])
    box.check_stuck(t_us(box, 4_000_000 + HOLD_US - 1))
    box.check_stuck(t_us(box, 4_000_000 + HOLD_US))
    assert [e for e in got if isinstance(e, ButtonHeld)] == [
        ButtonHeld("Blue", "slap", t_us(box, HOLD_US)),
        ButtonHeld("Blue", "slap", t_us(box, 4_000_000 + HOLD_US))]


# -- lost edges: a hold or stuck report re-reads the line ---------------------------------------


def lose_edge(pin: Any, high: bool) -> None:
    """The line changes but its edge never reaches the box: the kernel's per-line event FIFO
    (gpiolib-cdev's kfifo of 16 events a line) was full, or lg dropped the alert. The level is
    still what `pin.state` reads (lgpio: gpio_read)."""
    pin._change_state(high)


def test_a_lost_release_edge_neither_pauses_the_table_nor_swallows_the_next_press(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    box, got = box_of()
    pin = mock_factory.pin(BLUE)
    drive(box, pin, [(0, False)])
    lose_edge(pin, True)  # let go at 80 ms: no edge came
    box.check_stuck(t_us(box, HOLD_US))
    assert not [e for e in got if isinstance(e, (ButtonHeld, ButtonStuck))]
    assert box.next_hold_us() is None  # nothing held any more
    drive(box, pin, [(3_000_000, False), (3_080_000, True)])
    assert presses(got) == [0, 3_000_000]


def test_the_next_press_counts_even_before_the_lost_release_is_noticed(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    """Low, then low again a second later with no rising edge between: the release was lost,
    and the second falling edge is a press (the line cannot fall without having risen)."""
    box, got = box_of()
    pin = mock_factory.pin(BLUE)
    drive(box, pin, [(0, False)])
    lose_edge(pin, True)
    drive(box, pin, [(1_000_000, False), (1_080_000, True)])
    assert presses(got) == [0, 1_000_000]


def test_a_button_really_held_is_still_reported_held_and_stuck(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    box, got = box_of()
    pin = mock_factory.pin(BLUE)
    drive(box, pin, [(0, False)])  # and it reads low: really held
    box.check_stuck(t_us(box, HOLD_US))
    box.check_stuck(t_us(box, STUCK_AFTER_US))
    assert [type(e) for e in got if isinstance(e, (ButtonHeld, ButtonStuck))] == [
        ButtonHeld, ButtonStuck]


# -- issue 23's hand-made mutants that survived: each is something a table would notice ---------

PLAY_36_MIN = 36 * 60 * 1_000_000  # past half of pigpio's 71.6-minute tick period


def test_a_press_36_minutes_in_on_pins_that_do_not_wrap_is_stamped_36_minutes_in(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    """Only pigpio's 32-bit ticks wrap: folding a large tick gap back on mock (or lgpio) pins
    would stamp a press 36 minutes into play before the box had started."""
    box, got = box_of()
    assert not box.timing.wraps
    drive(box, mock_factory.pin(BLUE), [(PLAY_36_MIN, False), (PLAY_36_MIN + 80_000, True)])
    assert presses(got) == [PLAY_36_MIN]


def test_a_press_36_minutes_in_on_lgpio_is_stamped_at_its_kernel_time() -> None:
    from tests.pinfactories import LGPIOFactory, SimClock

    clock = SimClock()
    factory = LGPIOFactory(clock)
    got: list[object] = []
    box = ButtonBox(default_config(["Blue", "Red"]), got.append, factory=factory,
                    clock=clock.now, confirm_us=CONFIRM, confirmer=False)
    try:
        at = clock.now() + PLAY_36_MIN
        factory.press(BLUE, at)
        factory.run_until(at + 100_000, box.poll)
        assert [e.t_us for e in got if isinstance(e, Press)] == [at]
    finally:
        box.close()


def test_a_burst_that_begins_with_a_rising_edge_is_stamped_at_that_edge(
        box_of: Callable[..., tuple[ButtonBox, list[object]]], mock_factory: MockFactory) -> None:
    """The press's falling edge was lost (the line went low unseen); the first edge the box
    gets is the contact opening in its make-bounce, then it closes again 3 ms later, inside the
    debounce. The press is the burst's first edge, not the later falling one (3 ms late)."""
    box, got = box_of()
    pin = mock_factory.pin(BLUE)
    lose_edge(pin, False)  # pressed, unseen
    drive(box, pin, [(10_000, True), (13_000, False), (93_000, True)])
    assert presses(got) == [10_000]


def test_a_level_2_watchdog_report_while_a_press_is_confirmed_keeps_the_press() -> None:
    """lgpio reports a line watchdog's timeout as level 2: no edge, the line is as it was. One
    arriving inside the glitch filter's 1 ms must not read as the line going high (which would
    throw a real press away as a glitch)."""
    from tests.pinfactories import LGPIOFactory, SimClock

    clock = SimClock()
    factory = LGPIOFactory(clock)
    got: list[object] = []
    box = ButtonBox(default_config(["Blue", "Red"]), got.append, factory=factory,
                    clock=clock.now, confirm_us=CONFIRM, confirmer=False)
    try:
        start = clock.now() + 1000
        factory.press(BLUE, start)
        factory.run_until(start + 600, box.poll)  # the falling edge is delivered; pending
        assert box._inputs["Blue", "slap"].pending_us == start
        factory._pin(BLUE).deliver((start + 600) / 1_000_000, 2)  # lg's watchdog report
        factory.run_until(start + CONFIRM + box.timing.delivery_us + 10, box.poll)
        assert [e.t_us for e in got if isinstance(e, Press)] == [start]
        assert box.noise()["Blue", "slap"][0] == 0  # no glitch counted either
    finally:
        box.close()
