"""Capture on the real factories' timing, modelled by tests/pinfactories.py (no Pi needed).

lgpio hands over kernel edge times late and in batches; RPi.GPIO hands over none; pigpio's ticks
wrap every 71.6 minutes. A spike of a few microseconds on a long wire must not be a slap, and a
real press keeps the time of its very first edge.
"""

from __future__ import annotations

import io

import pytest

from referee.capture.gpio import ButtonBox, CaptureError, edge_timing
from referee.config import default_config
from referee.events import Press
from tests.pinfactories import LGPIOFactory, PiGPIOFactory, RPiGPIOFactory, pi_clock

BLUE, RED = 4, 17


def box_on(factory, events, **kw):
    return ButtonBox(default_config(["Blue", "Red"], doubles=False), events.append,
                     factory=factory, clock=factory.clock.now, confirmer=False, **kw)


def presses(events):
    return [e for e in events if isinstance(e, Press)]


@pytest.mark.parametrize("width_us", [5, 20, 50, 120, 250, 500])
def test_spikes_of_5_to_500_us_are_not_presses_on_lgpio(width_us):
    factory, events = LGPIOFactory(pi_clock(), poll_phase_us=137), []
    box = box_on(factory, events)
    try:
        t0 = factory.clock.now() + 10_000
        factory.pulse(BLUE, t0, width_us)
        factory.pulse(RED, t0 + 3_000, width_us)
        factory.run_until(t0 + 50_000, box.poll, box.next_deadline)
        assert presses(events) == []
        assert box.noise()["Blue", "slap"][0] == 1  # counted as idle noise
    finally:
        box.close()


def test_without_the_filter_a_50_us_spike_was_a_slap():
    """The defect: accepting the first falling edge with no minimum low time."""
    factory, events = LGPIOFactory(pi_clock()), []
    box = box_on(factory, events, confirm_us=0)
    try:
        t0 = factory.clock.now() + 10_000
        factory.pulse(BLUE, t0, 50)
        factory.run_until(t0 + 20_000, box.poll, box.next_deadline)
        assert presses(events) == [Press(t0, "Blue")]
    finally:
        box.close()


def test_a_bouncing_press_keeps_its_first_edge_time_to_the_microsecond():
    factory, events = LGPIOFactory(pi_clock(), poll_phase_us=311), []
    box = box_on(factory, events)
    try:
        t0 = factory.clock.now() + 7_777
        # contact bounce: open for 150 µs at +300, 90 µs at +900 (across the 1 ms check), 40 at +1600
        factory.press(BLUE, t0, hold_us=60_000, bounces=[(300, 150), (900, 200), (1600, 40)])
        factory.press(RED, t0 + 431, hold_us=45_000)
        factory.run_until(t0 + 100_000, box.poll, box.next_deadline)
        got = presses(events)
        assert sorted(got, key=lambda p: p.t_us) == [Press(t0, "Blue"), Press(t0 + 431, "Red")]
        assert box.noise()["Blue", "slap"] == (0, 6)  # 6 bounce edges
        assert max(factory.batches) >= 2  # lg really delivered several edges at once
    finally:
        box.close()


def test_a_spike_before_a_press_does_not_steal_its_time():
    """A spike a debounce or more before the press is a burst of its own, refused as a glitch:
    the press keeps its own first edge."""
    factory, events = LGPIOFactory(pi_clock()), []
    box = box_on(factory, events)
    try:
        t0 = factory.clock.now() + 10_000
        factory.pulse(BLUE, t0, 80)
        factory.press(BLUE, t0 + 80 + 5_000, hold_us=50_000)
        factory.run_until(t0 + 80_000, box.poll, box.next_deadline)
        assert presses(events) == [Press(t0 + 5_080, "Blue")]
        assert box.noise()["Blue", "slap"][0] == 1
    finally:
        box.close()


def test_a_contact_open_for_a_millisecond_or_more_in_its_make_bounce_keeps_the_first_edge():
    """The contact closes at t0, opens at +200 µs for 1.3 ms (past the 1 ms glitch check, which
    refuses the pending press), closes again and stays: one press, at t0 -- not at the later
    contact, 1.5 ms (more than tie_us) late. Inside the debounce it is one burst; the low
    again must itself last confirm_us, so two glitches never make a press."""
    factory, events = LGPIOFactory(pi_clock(), poll_phase_us=137), []
    box = box_on(factory, events)
    try:
        t0 = factory.clock.now() + 10_000
        factory.press(BLUE, t0, hold_us=60_000, bounces=[(200, 1_300)])
        factory.press(RED, t0 + 900, hold_us=60_000)
        # then two spikes inside one debounce on Blue, let go: no press
        factory.pulse(BLUE, t0 + 80_000, 60)
        factory.pulse(BLUE, t0 + 82_000, 60)
        factory.run_until(t0 + 70_000, box.poll, box.next_deadline)
        assert sorted(presses(events), key=lambda p: p.t_us) == [Press(t0, "Blue"),
                                                                 Press(t0 + 900, "Red")]
        assert box.noise()["Blue", "slap"][0] == 0  # the opening was bounce, not a glitch
        factory.run_until(t0 + 120_000, box.poll, box.next_deadline)
        assert len(presses(events)) == 2
        assert box.noise()["Blue", "slap"][0] == 2  # each refused pulse counted
    finally:
        box.close()


def test_lgpio_presses_arrive_late_and_the_box_says_how_late():
    factory, events = LGPIOFactory(pi_clock()), []
    arrived = {}
    box = ButtonBox(default_config(["Blue", "Red"], doubles=False),
                    lambda e: (events.append(e), arrived.setdefault(e, factory.clock.now())),
                    factory=factory, clock=factory.clock.now, confirmer=False)
    try:
        t0 = factory.clock.now() + 5_000
        factory.press(BLUE, t0, hold_us=40_000)
        factory.run_until(t0 + 60_000, box.poll, box.next_deadline)
        (press,) = presses(events)
        late = arrived[press] - press.t_us
        assert box.confirm_us <= late <= box.delivery_us
        assert box.delivery_us == edge_timing(factory).delivery_us + 1000
    finally:
        box.close()


def test_confirmation_threshold_is_configurable():
    factory, events = LGPIOFactory(pi_clock()), []
    box = box_on(factory, events, confirm_us=3000)
    try:
        t0 = factory.clock.now() + 5_000
        factory.pulse(BLUE, t0, 2_000)  # 2 ms low: a press at the default, not at 3 ms
        factory.run_until(t0 + 30_000, box.poll, box.next_deadline)
        assert presses(events) == []
    finally:
        box.close()


def test_rpi_gpio_without_edge_times_is_refused():
    factory = RPiGPIOFactory(pi_clock())
    with pytest.raises(CaptureError, match="RPiGPIOFactory gives no edge times.*untimed_edges"):
        box_on(factory, [])


def test_rpi_gpio_opted_in_stamps_presses_when_python_ran():
    factory, events = RPiGPIOFactory(pi_clock(), latency_us=900), []
    box = box_on(factory, events, untimed_ok=True)
    try:
        t0 = factory.clock.now() + 5_000
        factory.press(BLUE, t0, hold_us=40_000)
        factory.run_until(t0 + 60_000, box.poll, box.next_deadline)
        (press,) = presses(events)
        assert press.t_us == t0 + 900  # the callback's time, not the edge's: why it is refused
        assert not box.timing.timed
    finally:
        box.close()


def test_pigpio_ticks_wrapping_after_71_6_minutes_keep_press_times_exact():
    clock = pi_clock()
    # The daemon's counter is 5 minutes from wrapping when the box starts.
    factory = PiGPIOFactory(clock, tick_offset=(1 << 32) - 300_000_000 - clock.now())
    events = []
    box = box_on(factory, events)
    try:
        start = clock.now()
        want = []
        for minute in range(0, 150, 7):  # over two whole wraps
            t = start + minute * 60_000_000 + 12_345
            factory.press(RED, t, hold_us=50_000)
            want.append(Press(t, "Red"))
        for step in range(0, 151 * 60, 10):  # the box looks every 10 s, as its thread does
            factory.run_until(start + step * 1_000_000, box.poll, box.next_deadline)
        assert presses(events) == want
    finally:
        box.close()


def test_led_chain_outputs_are_enabled_only_after_the_first_clear_shift(mock_factory):
    from dataclasses import replace

    config = default_config(["Blue", "Red"])
    config = replace(config, leds=replace(config.leds, oe=25), seats=tuple(
        replace(s, double=None) for s in config.seats))
    external = mock_factory.pin(25)
    external.function, external.pull = "input", "up"  # the 10 kΩ pull-up holds OE high at boot
    box = ButtonBox(config, [].append, factory=mock_factory)
    try:
        oe, latch = mock_factory.pin(25), mock_factory.pin(8)
        assert oe.state == 0  # outputs on once the referee runs
        latch_high = [seq for seq, level in latch.history if level]
        oe_low = [seq for seq, level in oe.history if not level]
        assert latch_high and oe_low and oe_low[-1] > latch_high[0]  # zeros latched first
        assert ("LED chain oe", 25, "low") in box.pins()
    finally:
        box.close()


def test_referee_buttons_reports_idle_noise_and_bounce_per_button():
    from referee.cli.buttons import Button, Report

    blue, red = Button("Blue", "slap", BLUE), Button("Red", "slap", RED)
    factory, events = LGPIOFactory(pi_clock()), []
    box = box_on(factory, events)
    try:
        t0 = factory.clock.now() + 5_000
        for k in range(3):
            factory.pulse(BLUE, t0 + k * 20_000, 40)  # three spikes on Blue's wire at rest
        factory.press(RED, t0 + 100_000, hold_us=50_000, bounces=[(200, 100), (700, 60)])
        factory.run_until(t0 + 300_000, box.poll, box.next_deadline)
        report = Report([blue, red], seen=[red], noise=box.noise())
    finally:
        box.close()
    assert report.noise[blue.key] == (3, 3) and report.noise[red.key] == (0, 4)
    (line,) = [p for p in report.problems() if "glitch" in p]
    assert line.startswith("Blue slap (BCM 4, pin 7): 3 glitches ignored")
    assert "4.7 kΩ pull-up, 1 kΩ series, 10 nF" in line
    assert presses(events) == [Press(t0 + 100_000, "Red")]


def test_the_table_refuses_rpi_gpio_unless_allowed_and_then_every_page_says_so(tmp_path):
    import json
    import urllib.request
    from dataclasses import replace

    from gpiozero import Device

    from referee.cli.table import HardwareError, Table
    from referee.config import ButtonOptions
    from referee.scoreboard.app import serve_in_thread
    from referee.voice.announce import PrintAnnouncer

    config = default_config(["Blue", "Red"], doubles=False)
    previous = Device.pin_factory
    Device.pin_factory = factory = RPiGPIOFactory(pi_clock())
    try:
        with pytest.raises(HardwareError, match="RPiGPIOFactory gives no edge times"):
            Table(config, db=tmp_path / "a.db", announcer=PrintAnnouncer(io.StringIO()))
        allowed = replace(config, buttons=ButtonOptions(untimed_edges=True))
        table = Table(allowed, db=tmp_path / "b.db", announcer=PrintAnnouncer(io.StringIO()),
                      auto=False)
        server = serve_in_thread(table, "127.0.0.1", 0)
        try:
            with urllib.request.urlopen(server.url + "api/state", timeout=5) as resp:
                health = json.load(resp)["health"]
            assert health["capture"] == {"factory": "RPiGPIOFactory", "timed": False,
                                         "note": edge_timing(factory).note}
            (warning,) = health["warnings"]
            assert warning.startswith("Edge times are not exact: RPi.GPIO passes no edge time")
        finally:
            server.close()
            table.close()
    finally:
        factory.close()
        Device.pin_factory = previous
