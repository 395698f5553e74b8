"""The button box on gpiozero's MockFactory, with edge ticks injected by the test.

Times are written in milliseconds after the box's reference instant: ``at(box, ms)`` is the tick
of such an edge, ``us(box, ms)`` the t_us the event must carry.
"""

from __future__ import annotations

import gc
import queue
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from gpiozero.pins.mock import MockFactory

from referee.capture.gpio import ButtonBox
from referee.clock import now_us
from referee.config import SeatConfig, TableConfig, default_config
from referee.events import ButtonHeld, ButtonReleased, ButtonStuck, JudgeKey, Press

BLUE, RED = 4, 17  # default slap pins of seats 1 and 2
YES, NO, UNDO = 16, 9, 7
DATA, CLOCK, LATCH = 10, 11, 8


def at(box: ButtonBox, ms: float) -> float:
    return box.ref_ticks + ms / 1000


def us(box: ButtonBox, ms: float) -> int:
    return box.ref_us + round(ms * 1000)


def events(q: queue.Queue[object]) -> list[object]:
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out


def tap(box: ButtonBox, pin: object, down_ms: float, up_ms: float) -> None:
    pin.drive(False, at(box, down_ms))  # type: ignore[attr-defined]
    pin.drive(True, at(box, up_ms))  # type: ignore[attr-defined]


def wait_for(check: Callable[[], bool], timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@pytest.fixture
def q() -> queue.Queue[object]:
    return queue.Queue()


@pytest.fixture
def make_box(mock_factory: MockFactory, q: queue.Queue[object]) -> Iterator[Callable[..., ButtonBox]]:
    boxes: list[ButtonBox] = []

    def make(config: TableConfig | None = None, **kwargs: int) -> ButtonBox:
        box = ButtonBox(config or default_config(["Blue", "Red"]), q.put_nowait, **kwargs)
        boxes.append(box)
        return box

    yield make
    for box in boxes:
        box.close()


def test_presses_delivered_out_of_order_keep_their_edge_times(make_box, mock_factory, q):
    box = make_box()
    # Red's callback runs first, but Blue's edge happened 2 ms earlier.
    tap(box, mock_factory.pin(RED), 12, 60)
    tap(box, mock_factory.pin(BLUE), 10, 70)
    got = events(q)
    assert got == [Press(us(box, 12), "Red"), Press(us(box, 10), "Blue")]
    assert [p.seat for p in sorted(got, key=lambda p: p.t_us)] == ["Blue", "Red"]


def test_bounce_burst_gives_one_press_stamped_at_its_first_edge(make_box, mock_factory, q):
    box = make_box()
    pin = mock_factory.pin(BLUE)
    for i, ms in enumerate([100.0, 100.4, 100.9, 101.5, 102.2, 102.6, 103.0]):
        pin.drive(i % 2 == 1, at(box, ms))  # low, high, low, ... ends low (held)
    for i, ms in enumerate([180.0, 180.3, 180.8, 181.6]):
        pin.drive(i % 2 == 0, at(box, ms))  # release, with its own bounce
    assert events(q) == [Press(us(box, 100), "Blue")]


def test_two_presses_50_ms_apart_both_count(make_box, mock_factory, q):
    box = make_box()
    pin = mock_factory.pin(BLUE)
    tap(box, pin, 0, 20)
    tap(box, pin, 50, 70)
    assert events(q) == [Press(us(box, 0), "Blue"), Press(us(box, 50), "Blue")]


def test_rearm_window_refuses_a_second_press_too_soon(make_box, mock_factory, q):
    box = make_box(rearm_us=100_000)
    pin = mock_factory.pin(BLUE)
    for down in (0, 50, 150):
        tap(box, pin, down, down + 20)
    assert events(q) == [Press(us(box, 0), "Blue"), Press(us(box, 150), "Blue")]


def test_double_button_and_judge_keys(make_box, mock_factory, q):
    box = make_box()
    tap(box, mock_factory.pin(24), 5, 40)  # Red's double
    tap(box, mock_factory.pin(YES), 10, 40)
    tap(box, mock_factory.pin(NO), 20, 40)
    tap(box, mock_factory.pin(UNDO), 30, 40)
    assert events(q) == [
        Press(us(box, 5), "Red", "double"),
        JudgeKey(us(box, 10), "yes"),
        JudgeKey(us(box, 20), "no"),
        JudgeKey(us(box, 30), "undo"),
    ]


def test_button_held_at_start_is_stuck_and_ignored_until_released(make_box, mock_factory, q):
    pin = mock_factory.pin(BLUE)
    pin.closed = True  # someone leans on Blue's button while the referee starts
    pin.drive_low()
    box = make_box()
    assert events(q) == [ButtonStuck("Blue", "slap", box.ref_us, None)]
    assert ("Blue slap", BLUE, "stuck") in box.pins()
    box.check_stuck(us(box, 60_000))
    assert events(q) == []  # reported once
    pin.closed = False
    pin.drive(True, at(box, 500))
    pin.drive(False, at(box, 500.6))  # release bounce: not a press
    pin.drive(True, at(box, 501.2))
    tap(box, pin, 600, 650)
    assert events(q) == [ButtonReleased("Blue", "slap", us(box, 500)), Press(us(box, 600), "Blue")]


def test_long_hold_is_reported_by_check_stuck(make_box, mock_factory, q):
    box = make_box()
    pin = mock_factory.pin(BLUE)
    pin.drive(False, at(box, 0))
    box.check_stuck(us(box, 9_999))  # held 2 s and more: hold-to-pause (issue 13)
    assert events(q) == [Press(us(box, 0), "Blue"), ButtonHeld("Blue", "slap", us(box, 2_000))]
    box.check_stuck(us(box, 10_000))
    box.check_stuck(us(box, 10_500))
    assert events(q) == [ButtonStuck("Blue", "slap", us(box, 10_000), us(box, 0))]
    pin.drive(True, at(box, 12_000))
    tap(box, pin, 12_100, 12_200)
    assert events(q) == [ButtonReleased("Blue", "slap", us(box, 12_000)), Press(us(box, 12_100), "Blue")]


def test_long_hold_is_reported_when_released(make_box, mock_factory, q):
    box = make_box()
    tap(box, mock_factory.pin(YES), 0, 11_000)
    assert events(q) == [
        JudgeKey(us(box, 0), "yes"),
        ButtonStuck("judge", "yes", us(box, 11_000), us(box, 0)),
        ButtonReleased("judge", "yes", us(box, 11_000)),
    ]


def test_presses_still_arrive_after_garbage_collection(mock_factory, q):
    box = ButtonBox(default_config(["Blue", "Red"]), q.put_nowait)
    gc.collect()
    tap(box, mock_factory.pin(RED), 1, 30)
    assert events(q) == [Press(us(box, 1), "Red")]
    box.close()


def test_simulated_press_is_stamped_on_the_engine_clock(make_box, q):
    box = make_box()
    before = now_us()
    box.press("Blue")
    box.press("judge", "undo")
    after = now_us()
    got = events(q)
    assert [type(e) for e in got] == [Press, JudgeKey]
    assert all(before <= e.t_us <= after for e in got)  # type: ignore[attr-defined]


def test_virtual_box_hold_and_release(make_box, mock_factory, q):
    box = make_box()
    box.hold("Red", "double")
    assert ("Red double", 24, "pressed") in box.pins()
    box.release("Red", "double")
    assert [(e.seat, e.button) for e in events(q)] == [("Red", "double")]  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="no double button configured for 'Green'"):
        box.hold("Green", "double")


def test_simulated_press_needs_mock_pins(q):
    class LGPIOFactory:  # stands in for lgpio: the box opens no pin for a seat without a button
        def ticks(self) -> float:
            return 0.0

    config = TableConfig(seats=(SeatConfig("Blue", "#1f6feb", None),))
    box = ButtonBox(config, q.put_nowait, factory=LGPIOFactory())
    with pytest.raises(RuntimeError, match="mock pins"):
        box.press("Blue")
    box.close()


def test_only_configured_pins_are_opened_and_close_releases_them(make_box, mock_factory, q):
    box = make_box(TableConfig(seats=default_config(["Blue", "Red", "Green"], doubles=False).seats))
    assert {int(info.name[4:]) for info in mock_factory.pins} == {4, 17, 27}
    assert [row[:2] for row in box.pins()] == [("Blue slap", 4), ("Red slap", 17), ("Green slap", 27)]
    box.close()
    box.close()
    pin = mock_factory.pin(BLUE)
    assert pin.when_changed is None
    tap(box, pin, 0, 30)
    assert events(q) == []


def test_a_full_queue_drops_events_without_breaking_the_callback(mock_factory):
    full: queue.Queue[object] = queue.Queue(maxsize=1)
    box = ButtonBox(default_config(["Blue", "Red"]), full.put_nowait)
    tap(box, mock_factory.pin(BLUE), 0, 30)
    tap(box, mock_factory.pin(RED), 10, 30)
    assert box.dropped == 1 and full.get_nowait() == Press(us(box, 0), "Blue")
    box.close()


# ---------------------------------------------------------------------------------------- LEDs


def seats_with_led_pins() -> TableConfig:
    return TableConfig(
        seats=(SeatConfig("Blue", "#1f6feb", 4, led=23), SeatConfig("Red", "#d1242f", 17, led=24))
    )


def test_seat_led_on_off_and_blink(make_box, mock_factory):
    box = make_box(seats_with_led_pins())
    blue, red = mock_factory.pin(23), mock_factory.pin(24)
    box.led("Blue", True)
    assert blue.state and not red.state
    assert ("Blue LED", 23, "on") in box.pins()
    box.all_leds(False)
    assert not blue.state
    start = len(red.history)
    box.blink("Red", times=2, on_ms=10)
    wait_for(lambda: [s for _, s in red.history[start:]] == [True, False, True, False])
    with pytest.raises(ValueError, match="unknown seat 'Mauve'"):
        box.led("Mauve", True)


def latched_bytes(factory: MockFactory) -> list[int]:
    """Replay the data/clock/latch pin histories as a 74HC595 would see them."""
    merged = sorted(
        (seq, bcm, level) for bcm in (DATA, CLOCK, LATCH) for seq, level in factory.pin(bcm).history
    )
    data, register, latched = False, 0, []
    for _, bcm, level in merged:
        if bcm == DATA:
            data = level
        elif bcm == CLOCK and level:
            register = ((register << 1) | data) & 0xFF
        elif bcm == LATCH and level:
            latched.append(register)
    return latched


def test_led_chain_shifts_one_bit_per_seat(make_box, mock_factory):
    box = make_box(default_config(["Blue", "Red", "Green"]))
    assert latched_bytes(mock_factory) == [0]  # all off at start
    box.led("Red", True)
    box.led("Green", True)
    box.led("Red", False)
    box.led("Blue", True)
    assert latched_bytes(mock_factory)[1:] == [0b010, 0b110, 0b100, 0b101]


def test_led_chain_blink_runs_in_the_background_and_ends_off(make_box, mock_factory):
    box = make_box(default_config(["Blue", "Red", "Green"]))
    box.led("Blue", True)
    box.blink("Green", times=2, on_ms=20)
    wait_for(lambda: latched_bytes(mock_factory)[2:] == [0b101, 0b001, 0b101, 0b001])


def test_setting_an_led_stops_its_blink(make_box, mock_factory):
    box = make_box(default_config(["Blue", "Red"]))
    before = set(threading.enumerate())
    box.blink("Red", times=50, on_ms=200)  # 20 s of blinking: it returns at once, on a thread
    blinker = set(threading.enumerate()) - before
    assert len(blinker) == 1
    box.led("Red", True)
    (thread,) = blinker
    thread.join(5)  # the blink ends as soon as the LED is set
    assert not thread.is_alive()
    assert latched_bytes(mock_factory)[-1] == 0b10  # the blink did not put it out again


def test_no_leds_configured_means_led_calls_do_nothing(make_box):
    box = make_box(TableConfig(seats=(SeatConfig("Blue", "#1f6feb", 4),)))
    box.led("Blue", True)
    box.blink("Blue")
    box.all_leds(False)
    assert box.pins() == [("Blue slap", 4, "released")]
