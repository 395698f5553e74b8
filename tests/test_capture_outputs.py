"""The button box beyond the edge timing (issue 17, points 3 and 4): the confirmer thread's
schedule, deadlines with a late-delivering pin library, the seat LEDs, the cue light, the chain
blink, the doctor's pin table, the virtual box, and the one-line messages a user reads.

The confirmer loop and the chain blink are run in the test's own thread against a fake sleep and
a fake event on a simulated clock, so their schedule is checked exactly, without the wall clock.
Where gpiozero's own background threads do the timing (an LED pin's blink, the cue light's
timer, a virtual press held for a while), the test waits for the outcome and never bounds it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

import referee.capture.gpio as gpio
from referee.capture.gpio import ButtonBox, CaptureError
from referee.config import SeatConfig, TableConfig, default_config
from referee.events import ButtonHeld, Press
from tests.harness import SimClock
from tests.pinfactories import LGPIOFactory, RPiGPIOFactory, pi_clock
from tests.test_capture_gpio import BLUE, CLOCK, DATA, LATCH, RED, latched_bytes, wait_for


@pytest.fixture
def boxes(mock_factory: MockFactory) -> Iterator[Callable[..., ButtonBox]]:
    made: list[ButtonBox] = []

    def make(config: TableConfig | None = None, sink: Callable[[object], None] | None = None,
             **kw: Any) -> ButtonBox:
        box = ButtonBox(config or default_config(["Blue", "Red"]), sink or (lambda e: None),
                        factory=mock_factory, **kw)
        made.append(box)
        return box

    try:
        yield make
    finally:
        for box in made:
            box.close()


# -- the confirmer thread's schedule (run here, on a simulated clock) --------------------------------


class FakeTime:
    """`time` for the confirmer loop: sleeping moves the simulated clock; a runaway loop ends."""

    def __init__(self, clock: SimClock, box: ButtonBox) -> None:
        self.clock, self.box, self.slept = clock, box, []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.clock.advance_to(self.clock.now() + round(seconds * 1_000_000))
        if len(self.slept) > 50:
            self.box._closed = True


class FakeWake:
    """The confirmer's wake-up event: each wait is recorded; `on_wait` may press a button."""

    def __init__(self, box: ButtonBox, on_wait: Callable[[], None] | None = None) -> None:
        self.box, self.on_wait, self.waits, self._set = box, on_wait, [], False

    def set(self) -> None:
        self._set = True

    def clear(self) -> None:
        self._set = False

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        if self.on_wait is not None:
            self.on_wait()
            self.on_wait = None
        elif len(self.waits) > 3:
            self.box._closed = True
        return self._set


def confirming(mock_factory: MockFactory, confirm_us: int, monkeypatch: pytest.MonkeyPatch
               ) -> tuple[ButtonBox, SimClock, FakeTime, list[object]]:
    clock = pi_clock()
    got: list[object] = []
    box = ButtonBox(default_config(["Blue", "Red"]), got.append, factory=mock_factory,
                    clock=clock.now, confirm_us=confirm_us, confirmer=False)
    fake = FakeTime(clock, box)
    monkeypatch.setattr(gpio, "time", fake)

    def stop_at_first_press(event: object) -> None:
        got.append(event)
        box._closed = True  # the loop ends after the press it confirmed

    box.sink = stop_at_first_press
    return box, clock, fake, got


@pytest.mark.parametrize(("confirm_us", "slept"), [
    (1000, [0.001, 0.0002]),  # to the deadline, then a short look again
    (120_000, [0.05, 0.05, 0.02, 0.0002]),  # never more than 50 ms at a time
])
def test_the_confirmer_sleeps_until_the_deadline_and_confirms_there(
        mock_factory: MockFactory, monkeypatch: pytest.MonkeyPatch, confirm_us: int,
        slept: list[float]) -> None:
    box, clock, fake, got = confirming(mock_factory, confirm_us, monkeypatch)
    try:
        start = clock.now()
        mock_factory.pin(BLUE).drive(False, box.ref_ticks)  # held from the reference instant
        box._wake = FakeWake(box)  # type: ignore[assignment]
        box._confirm_loop()
        assert got == [Press(start, "Blue")]
        assert fake.slept == pytest.approx(slept)
        assert clock.now() == start + confirm_us + 200
    finally:
        box.close()


def test_an_idle_confirmer_waits_for_an_edge_then_confirms_it(
        mock_factory: MockFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    box, clock, fake, got = confirming(mock_factory, 1000, monkeypatch)
    try:
        start = clock.now()
        pin = mock_factory.pin(RED)
        wake = FakeWake(box, on_wait=lambda: pin.drive(False, box.ref_ticks))
        box._wake = wake  # type: ignore[assignment]
        box._confirm_loop()
        assert wake.waits == [1.0]  # nothing pending: it waits (at most a second) for an edge
        assert got == [Press(start, "Red")]
        assert fake.slept == pytest.approx([0.001, 0.0002])
    finally:
        box.close()


def test_a_closed_box_stops_its_confirmer(mock_factory: MockFactory) -> None:
    box = ButtonBox(default_config(["Blue", "Red"]), lambda e: None, factory=mock_factory,
                    confirm_us=1000)
    thread = box._confirmer
    assert thread is not None and thread.is_alive()
    box.close()
    thread.join(5)
    assert not thread.is_alive()


# -- deadlines and polls with more than one button ----------------------------------------------------


def test_deadlines_include_the_pin_librarys_delivery_delay() -> None:
    clock = pi_clock()
    factory = LGPIOFactory(clock)
    box = ButtonBox(default_config(["Blue", "Red"]), lambda e: None, factory=factory,
                    clock=clock.now, confirm_us=1000, confirmer=False)
    try:
        delivery = box.timing.delivery_us
        assert delivery == gpio.LGPIO_DELIVERY_US
        start = clock.now() + 1000
        factory.pulse(RED, at_us=start, width_us=300)  # a spike on Red
        factory.run_until(start + 1100)  # both of its edges delivered
        assert box.next_deadline() == start + 300 + 1000 + delivery  # rejected then, if still high
        factory.edge(RED, start + 600, False)  # low again within confirm_us: the same press
        factory.run_until(start + 1800)
        assert box.next_deadline() == start + 1000 + delivery
    finally:
        box.close()


def test_the_deadline_of_a_press_low_again_after_its_confirm_time_is_that_edge(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    clock = pi_clock()
    box = boxes(clock=clock.now, confirm_us=1000, confirmer=False)
    pin = mock_factory.pin(BLUE)
    pin.drive(False, box.ref_ticks)
    pin.drive(True, box.ref_ticks + 500e-6)
    pin.drive(False, box.ref_ticks + 1200e-6)  # high for 700 µs: not a glitch yet
    assert box.next_deadline() == box.ref_us + 1200


def test_the_next_deadline_is_the_earliest_of_every_pending_button(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    clock = pi_clock()
    got: list[object] = []
    box = boxes(sink=got.append, clock=clock.now, confirm_us=1000, confirmer=False)
    assert box.next_deadline() is None
    mock_factory.pin(RED).drive(False, box.ref_ticks + 300e-6)  # Blue (first) is not pending
    assert box.next_deadline() == box.ref_us + 1300
    mock_factory.pin(BLUE).drive(False, box.ref_ticks + 100e-6)
    assert box.next_deadline() == box.ref_us + 1100
    box.poll(box.ref_us + 1300)  # one poll confirms both
    assert sorted((e.seat, e.t_us - box.ref_us) for e in got if isinstance(e, Press)) == [
        ("Blue", 100), ("Red", 300)]
    assert box.next_deadline() is None


def test_poll_without_a_time_reads_the_boxs_clock(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    clock = pi_clock()
    got: list[object] = []
    box = boxes(sink=got.append, clock=clock.now, confirm_us=1000, confirmer=False)
    mock_factory.pin(BLUE).drive(False, box.ref_ticks)
    box.poll()
    assert got == []
    clock.advance_to(box.ref_us + 1000)
    box.poll()
    assert got == [Press(box.ref_us, "Blue")]
    box.poll(box.ref_us + 999_999)  # an explicit time is used as given
    assert len(got) == 1


def test_a_glitch_leaves_no_trace_on_the_next_press_and_its_hold(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    clock = pi_clock()
    got: list[object] = []
    box = boxes(sink=got.append, clock=clock.now, confirm_us=1000, confirmer=False)
    pin = mock_factory.pin(BLUE)
    pin.drive(False, box.ref_ticks)
    pin.drive(True, box.ref_ticks + 200e-6)
    box.poll(box.ref_us + 1200)  # rejected: a glitch
    pin.drive(False, box.ref_ticks + 0.1)  # a real press 100 ms later, held
    box.poll(box.ref_us + 101_000)
    box.check_stuck(box.ref_us + 100_000 + gpio.HOLD_US)
    assert got == [Press(box.ref_us + 100_000, "Blue"),
                   ButtonHeld("Blue", "slap", box.ref_us + 100_000 + gpio.HOLD_US)]


# -- LEDs: pins, the chain, blinking, the cue light ------------------------------------------------


def seats_with_led_pins() -> TableConfig:
    return TableConfig(seats=(SeatConfig("Blue", "#1f6feb", 4, led=23),
                              SeatConfig("Red", "#d1242f", 17, led=24)))


def test_the_doctors_pin_table_says_each_led_and_chain_pin_as_it_is(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    box = boxes(seats_with_led_pins())
    box.led("Red", True)
    assert box.pins() == [("Blue slap", 4, "released"), ("Red slap", 17, "released"),
                          ("Blue LED", 23, "off"), ("Red LED", 24, "on")]
    box.close()  # its pins are free again for a box with an LED chain
    config = default_config(["Blue", "Red"])
    chained = boxes(replace(config, leds=replace(config.leds, oe=25), seats=tuple(
        replace(s, double=None) for s in config.seats)))
    rows = [r for r in chained.pins() if r[0].startswith("LED chain")]
    assert rows == [("LED chain data", DATA, "low"), ("LED chain clock", CLOCK, "low"),
                    ("LED chain latch", LATCH, "low"), ("LED chain oe", 25, "low")]
    chained._chain["data"].on()
    assert ("LED chain data", DATA, "high") in chained.pins()


def test_an_led_pin_blinks_three_times_by_default_in_the_background(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    box = boxes(seats_with_led_pins())
    asked: list[dict[str, Any]] = []
    box._leds["Red"].blink = lambda **kw: asked.append(kw)  # what gpiozero is asked to do
    box.blink("Red")
    box.blink("Red", times=5, on_ms=40)
    assert asked == [dict(on_time=0.15, off_time=0.15, n=3, background=True),
                     dict(on_time=0.04, off_time=0.04, n=5, background=True)]
    # and for real: gpiozero blinks the pin twice and leaves it off
    red = mock_factory.pin(24)
    start = len(red.history)
    box2 = boxes(TableConfig(seats=(SeatConfig("Green", "#2da44e", 27, led=22),)))
    green = mock_factory.pin(22)
    box2.blink("Green", times=2, on_ms=10)
    wait_for(lambda: [s for _, s in green.history] == [True, False, True, False], timeout=10.0)
    assert len(red.history) == start


def chain_box(boxes: Callable[..., ButtonBox]) -> ButtonBox:
    return boxes(default_config(["Blue", "Red", "Green"]))


class FakeStop:
    """A blink's stop event: waits are recorded. At the `stop_after`-th wait it is set, the way
    `led()` sets it, but that wait still reports a timeout: the LED was set just as the blink's
    wait ran out, the one moment the blink must look again before it writes."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.waits: list[float] = []
        self.stop_after = stop_after
        self._set = False

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        was = self._set
        if self.stop_after is not None and len(self.waits) >= self.stop_after:
            self._set = True
        return was


def test_a_chain_blink_is_on_and_off_for_its_time_each(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    box = chain_box(boxes)
    box.led("Blue", True)
    stop = FakeStop()
    box._chain_blink(2, 2, 0.15, stop)  # type: ignore[arg-type]
    assert latched_bytes(mock_factory)[2:] == [0b101, 0b001, 0b101, 0b001]
    assert stop.waits == [0.15] * 4


@pytest.mark.parametrize("stop_after", [1, 2, 3])
def test_a_stopped_chain_blink_never_touches_the_led_again(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory, stop_after: int) -> None:
    """Setting an LED stops its blink: whatever the blink was about to do next, it does not
    (it would undo the new setting)."""
    box = chain_box(boxes)
    stop = FakeStop(stop_after)
    box._chain_blink(1, 3, 0.15, stop)  # type: ignore[arg-type]
    written = latched_bytes(mock_factory)[1:]
    assert written == [0b010, 0b000, 0b010][:stop_after]
    assert stop.waits == [0.15] * stop_after


def test_a_new_blink_of_a_seat_ends_the_one_before(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    box = chain_box(boxes)
    before = set(threading.enumerate())
    box.blink("Red", times=50, on_ms=200)  # 20 s of blinking, on its own thread
    (first,) = set(threading.enumerate()) - before
    box.blink("Red", times=1, on_ms=10)
    first.join(5)
    assert not first.is_alive()


def test_a_chain_blink_after_close_writes_nothing(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    box = chain_box(boxes)
    box.close()
    before = latched_bytes(mock_factory)
    stop = FakeStop()
    box._chain_blink(0, 2, 0.15, stop)  # type: ignore[arg-type]
    assert latched_bytes(mock_factory) == before and stop.waits == []


def test_the_cue_light_lights_every_seat_at_once_then_goes_out(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    box = chain_box(boxes)
    box.cue_light(on_ms=1000)  # (a flash long enough that a loaded machine still sees it)
    assert latched_bytes(mock_factory)[-1] == 0b111  # at the go-word's instant
    wait_for(lambda: latched_bytes(mock_factory)[-1] == 0, timeout=10.0)
    before = len(latched_bytes(mock_factory))
    box.cue_light()  # the default flash lights every seat and goes out on its own too
    wait_for(lambda: 0b111 in (got := latched_bytes(mock_factory))[before:] and got[-1] == 0,
             timeout=10.0)


def test_unknown_seats_are_named_with_the_seats_there_are(
        boxes: Callable[..., ButtonBox]) -> None:
    box = chain_box(boxes)
    with pytest.raises(ValueError) as caught:
        box.blink("Mauve")
    assert str(caught.value) == "unknown seat 'Mauve'; seats: Blue, Red, Green"


# -- the virtual box (mock mode) --------------------------------------------------------------------


def test_a_virtual_press_is_a_press_and_a_release_at_once_by_default(
        boxes: Callable[..., ButtonBox]) -> None:
    got: list[object] = []
    box = boxes(sink=got.append)
    box.press("Blue")
    assert ("Blue slap", BLUE, "released") in box.pins()
    assert [type(e) for e in got] == [Press]


def test_a_virtual_press_held_for_a_while_is_released_by_itself(
        boxes: Callable[..., ButtonBox]) -> None:
    box = boxes()
    before = set(threading.enumerate())
    box.press("Red", hold_ms=1000)  # (long enough that a loaded machine still sees it held)
    assert ("Red slap", RED, "pressed") in box.pins()  # held now ...
    wait_for(lambda: ("Red slap", RED, "released") in box.pins(), timeout=10.0)  # ... let go
    # the level reads released before the release's edge has reached the box: the timer thread
    # must be done before the box closes (once, closing under it failed in gpiozero's mock pin)
    for timer in set(threading.enumerate()) - before:
        timer.join(10.0)


def test_hold_and_release_press_the_slap_button_unless_told(
        boxes: Callable[..., ButtonBox]) -> None:
    box = boxes()
    box.hold("Blue")
    assert ("Blue slap", BLUE, "pressed") in box.pins()
    box.release("Blue")
    assert ("Blue slap", BLUE, "released") in box.pins()


def test_virtual_presses_on_real_pins_say_how_to_get_mock_pins() -> None:
    class LGPIOFactory:  # stands in for lgpio: the box opens no pin for a seat without a button
        def ticks(self) -> float:
            return 0.0

    box = ButtonBox(TableConfig(seats=(SeatConfig("Blue", "#1f6feb", None),)), lambda e: None,
                    factory=LGPIOFactory(), confirmer=False)
    try:
        with pytest.raises(RuntimeError) as caught:
            box.press("Blue")
        assert str(caught.value) == ("simulated presses need mock pins; run with "
                                     "GPIOZERO_PIN_FACTORY=mock (or --mock)")
    finally:
        box.close()


def test_the_virtual_box_is_for_software_pins_whatever_class_models_the_hardware() -> None:
    """Whether software may press the buttons is the factory's declared timing (`software`), never
    a check for gpiozero's MockFactory: the lgpio double (a MockFactory underneath, as every pin
    double here) stands for real wired buttons, which no page may press (before: allowed, since
    it is a MockFactory); and its presses still go through the glitch filter a wire needs."""
    box = ButtonBox(default_config(["Blue", "Red"]), lambda e: None, factory=LGPIOFactory(),
                    confirmer=False)
    try:
        with pytest.raises(RuntimeError, match="simulated presses need mock pins"):
            box.press("Blue")
        assert box.confirm_us > 0 and not gpio.edge_timing(box.factory).software
    finally:
        box.close()


def test_no_production_code_asks_whether_the_factory_is_a_mockfactory() -> None:
    import re
    from pathlib import Path

    package = Path(gpio.__file__).resolve().parent.parent
    check = re.compile(r"isinstance\([^)]*MockFactory|==\s*[\"']MockFactory|MockFactory[\"']\s*==")
    hits = [f"{path}:{n}" for path in package.rglob("*.py")
            for n, line in enumerate(path.read_text().splitlines(), 1) if check.search(line)]
    assert not hits, hits


def test_a_factory_without_edge_times_is_refused_with_the_fix() -> None:
    with pytest.raises(CaptureError) as caught:
        ButtonBox(default_config(["Blue", "Red"]), lambda e: None, factory=RPiGPIOFactory(),
                  untimed_ok=False)
    assert str(caught.value) == (
        "the pin factory RPiGPIOFactory gives no edge times (RPi.GPIO passes no edge time: "
        "gpiozero stamps it when the Python callback runs (late by up to milliseconds under "
        "load)), so close races would be ruled on when Python ran, not when hands landed: "
        "install lgpio (sudo apt install python3-lgpio) and set GPIOZERO_PIN_FACTORY=lgpio, or "
        "set untimed_edges = true in [buttons] to referee anyway")


# -- a pin that will not open, and the mock pins' bounded history ---------------------------------


@pytest.mark.parametrize(("cause", "said"), [(OSError("GPIO busy"), "GPIO busy"),
                                             (PermissionError(), "PermissionError")])
def test_a_pin_that_will_not_open_is_named_with_its_role_and_cause(
        mock_factory: MockFactory, cause: BaseException, said: str) -> None:
    real = mock_factory.pin

    def pin(spec: Any, **kw: Any) -> Any:
        if spec == RED:
            raise cause
        return real(spec, **kw)

    mock_factory.pin = pin  # type: ignore[method-assign]
    with pytest.raises(gpio.PinOpenError) as caught:
        ButtonBox(default_config(["Blue", "Red"]), lambda e: None, factory=mock_factory)
    err = caught.value
    assert str(err) == f"BCM {RED} (Red slap): {said}"
    assert (err.bcm, err.role, err.cause) == (RED, "Red slap", cause)
    assert real(BLUE).when_changed is None  # the pins opened before it were let go


def test_mock_pins_keep_only_their_latest_level_changes() -> None:
    factory = MockFactory(pin_class=gpio.BoundedMockPin)
    try:
        pin = factory.pin(BLUE)
        pin.input_with_pull("up")
        for i in range(200):
            pin.drive_low() if i % 2 == 0 else pin.drive_high()
        states = [s.state for s in pin.states]
        assert len(states) == gpio.BoundedMockPin.KEEP
        assert states[-2:] == [False, True]  # the latest changes are the ones kept
        pin.clear_states()
        assert len(pin.states) == 1 and pin.states[0].state is True
    finally:
        factory.close()


# -- what is left of the edge path: waking the confirmer, release bounces, pigpio's wrap --------------


def test_a_pending_press_wakes_the_confirmer(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    box = boxes(confirm_us=1000, confirmer=False)
    wake = FakeWake(box)
    box._wake = wake  # type: ignore[assignment]
    mock_factory.pin(BLUE).drive(False, box.ref_ticks)
    assert wake._set  # else the confirmer would sleep on for up to a second


def test_with_a_one_microsecond_confirm_time_a_zero_width_pulse_is_a_glitch(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    clock = pi_clock()
    got: list[object] = []
    box = boxes(sink=got.append, clock=clock.now, confirm_us=1, confirmer=False)
    pin = mock_factory.pin(BLUE)
    pin.drive(False, box.ref_ticks)
    pin.drive(True, box.ref_ticks)
    box.poll(box.ref_us + 10)
    assert got == [] and box.noise()["Blue", "slap"][0] == 1


def test_a_hold_after_a_release_bounce_counts_from_its_last_falling_edge(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    """Released at 100 ms and down again 300 µs later (inside the debounce: no new press), then
    held: the hold is timed from the falling edge that started it, not from the release."""
    got: list[object] = []
    box = boxes(sink=got.append)
    pin = mock_factory.pin(BLUE)
    pin.drive(False, box.ref_ticks)
    pin.drive(True, box.ref_ticks + 0.1)
    pin.drive(False, box.ref_ticks + 0.1003)
    down = box.ref_us + 100_300
    assert box.next_hold_us() == down + gpio.HOLD_US
    box.check_stuck(down + gpio.HOLD_US)
    assert got == [Press(box.ref_us, "Blue"), ButtonHeld("Blue", "slap", down + gpio.HOLD_US)]


def test_every_dropped_event_is_counted(mock_factory: MockFactory) -> None:
    def full(event: object) -> None:
        raise RuntimeError("queue full")

    box = ButtonBox(default_config(["Blue", "Red"]), full, factory=mock_factory)
    try:
        for i in range(3):
            mock_factory.pin(BLUE).drive(False, box.ref_ticks + i * 0.1)
            mock_factory.pin(BLUE).drive(True, box.ref_ticks + i * 0.1 + 0.05)
        assert box.dropped == 3
    finally:
        box.close()


def pigpio_box(tick_offset: int) -> tuple[ButtonBox, Any, SimClock, list[object]]:
    from tests.pinfactories import PiGPIOFactory

    clock = pi_clock()
    factory = PiGPIOFactory(clock, tick_offset=tick_offset)
    got: list[object] = []
    box = ButtonBox(default_config(["Blue", "Red"]), got.append, factory=factory,
                    clock=clock.now, confirmer=False)
    return box, factory, clock, got


def test_a_pigpio_edge_older_than_a_fresh_reference_keeps_its_time() -> None:
    """pigpio's ticks are 32-bit µs: an edge from just before the reference pair was renewed,
    delivered after it, comes out of the modulo as nearly a whole period and is folded back."""
    from tests.pinfactories import WRAP

    box, factory, clock, got = pigpio_box(tick_offset=WRAP - 30_000_000)  # wraps in 30 s
    try:
        renew = box.ref_us + gpio.REFERENCE_RENEW_US
        factory.edge(BLUE, renew - 500, False)  # the edge, 0.5 ms before the renewal ...
        clock.advance_to(renew)
        box.renew_reference(renew)
        assert box.ref_us == renew
        factory.run_until(renew + 10_000, box.poll)  # ... reaches the box after it; confirmed
        assert got == [Press(renew - 500, "Blue")]
    finally:
        box.close()


@pytest.mark.parametrize("how", ["renew", "poll", "check_stuck"])
def test_the_reference_is_renewed_as_of_the_time_given_or_the_boxs_clock(how: str) -> None:
    box, factory, clock, got = pigpio_box(tick_offset=0)
    try:
        start = box.ref_us
        clock.advance_to(start + 30_000_000)  # the box's own clock: half a minute on
        call = {"renew": box.renew_reference, "poll": box.poll, "check_stuck": box.check_stuck}
        call[how](start + gpio.REFERENCE_RENEW_US - 1)
        assert box.ref_us == start  # not a minute old yet, as of the time given
        call[how](start + gpio.REFERENCE_RENEW_US)
        assert box.ref_us == start + 30_000_000  # renewed: a pair read together, now
        clock.advance_to(start + 30_000_000 + gpio.REFERENCE_RENEW_US)
        box.renew_reference()  # no time given: the box's clock says a minute has passed
        assert box.ref_us == start + 30_000_000 + gpio.REFERENCE_RENEW_US
    finally:
        box.close()


def test_the_cue_light_on_led_pins_goes_out_too(
        boxes: Callable[..., ButtonBox], mock_factory: MockFactory) -> None:
    box = boxes(seats_with_led_pins())
    box.cue_light(on_ms=1000)
    assert mock_factory.pin(23).state and mock_factory.pin(24).state
    wait_for(lambda: not mock_factory.pin(23).state and not mock_factory.pin(24).state,
             timeout=10.0)


# -- what the engine is told to wait, unknown factories, LEDs on the box's own factory ---------------


@pytest.mark.parametrize(("confirm_us", "confirmer", "settled"), [
    (0, True, 0),  # mock pins: no confirmation, no thread, nothing to wait past a close
    (1, True, 1 + gpio.CONFIRMER_WAKE_US),  # a confirmer thread decides: its lateness too
    (1000, False, 1000),  # polled by the test itself: no thread
])
def test_the_engine_waits_the_confirmation_and_the_confirmers_lateness_only_with_one(
        boxes: Callable[..., ButtonBox], confirm_us: int, confirmer: bool, settled: int) -> None:
    box = boxes(confirm_us=confirm_us, confirmer=confirmer)
    assert box.settled_us == settled
    assert (box._confirmer is not None) is (settled > confirm_us)


def test_an_unknown_pin_factory_counts_as_untimed() -> None:
    class HomeMadeFactory:
        pass

    timing = gpio.edge_timing(HomeMadeFactory())
    assert timing == gpio.EdgeTiming("HomeMadeFactory", False, 0,
                                     "HomeMadeFactory: edge timing unknown")


def test_leds_are_opened_on_the_boxs_own_factory() -> None:
    """Not on gpiozero's default factory: a box given its pins drives its LEDs there too."""
    from tests.harness import TickPin

    own = MockFactory(pin_class=TickPin)
    try:
        config = default_config(["Blue", "Red"])
        config = replace(config, leds=replace(config.leds, oe=25), seats=(
            replace(config.seats[0], led=23, double=None), replace(config.seats[1], double=None)))
        box = ButtonBox(config, lambda e: None, factory=own)
        try:
            box.led("Blue", True)
            assert own.pin(23).state  # the LED pin of this factory
            assert own.pin(25).state == 0  # the chain's outputs enabled on it
            box.led("Red", True)
            assert latched_bytes(own)[-1] == 0b10
        finally:
            box.close()
        assert latched_bytes(own)[-1] == 0  # closing puts every chain LED out
    finally:
        own.close()
