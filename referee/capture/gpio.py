"""The button box: seat buttons and judge keys in, timed events out; seat LEDs on request.

How a press becomes an event, in plain words:

* Every configured button is one input pin, pulled up, wired to ground through the button (so
  pressed = low). Nothing else is opened: an unconfigured pin is never touched.
* gpiozero calls us on every edge with an opaque *tick*. With lgpio that tick is the kernel's
  own timestamp of the edge, so callbacks that run late or out of order still carry the true
  time. We turn ticks into microseconds on the engine clock (``referee.clock.now_us``) from one
  reference pair (``factory.ticks()``, ``now_us()``) taken together when the box starts.
* We do our own debouncing from those edge times, never gpiozero's ``bounce_time`` (which drops
  or delays the first edge). Edges closer together than ``debounce_us`` form one *burst*. A
  burst that starts while the button is released and shows the pin low is one press, stamped
  with the burst's FIRST edge; the rest of the burst is swallowed. A burst that starts while the
  button is held is its release (and its bounce). ``rearm_us`` optionally sets a minimum time
  between two accepted presses of the same button.
* The callback thread only converts, debounces and calls ``sink(event)`` (``queue.put_nowait``
  in the engine): no blocking, no logging, no disk. A sink that raises (a full queue) counts the
  event in ``dropped`` instead of killing the callback thread.
* gpiozero keeps only a weak reference to a pin's callback, so each callback is a bound method
  of a small ``_Input`` object the box keeps for as long as it lives.
* Stuck buttons: one held down when the box starts is reported at once (``ButtonStuck``) and
  its presses are ignored until it is released (``ButtonReleased``). One held longer than
  ``stuck_after_us`` is reported when it is released, or earlier by ``check_stuck(now_us)``,
  which the engine calls from its own loop (there is no polling thread here).

LEDs are either one pin per seat (gpiozero ``LED``) or a 74HC595 chain (seat i = output Qi),
shifted MSB first then latched. With no LEDs configured the LED methods do nothing.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from gpiozero import LED, Device, DigitalOutputDevice
from gpiozero.pins.mock import MockFactory, MockPin

from referee.clock import now_us
from referee.config import JUDGE_SEAT, TableConfig
from referee.events import ButtonReleased, ButtonStuck, JudgeKey, Press

Sink = Callable[[object], None]
STUCK_AFTER_US = 10_000_000

# How late an edge can reach the sink after its own (kernel) timestamp with lgpio, in µs. From lg's
# source (lgPthAlerts.c): one alert thread ppoll()s every claimed line with a 0.5 ms timeout, reads
# what is ready, sorts the batch by timestamp and emits only the edges at least 0.5 ms old (so that
# they leave in time order across lines), the rest on a later turn: 0.5-1 ms in the library. Then
# the lgpio module's Python thread reads the notification pipe and calls gpiozero's callback, which
# needs the GIL: one or two hand-overs, each up to the 0.5 ms switch interval the engine sets, more
# when the machine is busy (benchmarks/bench_delivery.py measures this part). 5 ms covers the
# library's 1 ms and a few hand-overs with room; the cost is that a ruling is said 5 ms after its
# close, far under anything a table can hear. A table can set its own: delivery_us in [table].
LGPIO_DELIVERY_US = 5_000


def delivery_bound_us(factory: Any) -> int:
    """How late a press may reach the engine after its edge time with this pin factory: mock pins
    call back at once, in the pressing thread (0); a factory may declare its own `delivery_us`;
    every real pin library is given lgpio's bound."""
    declared = getattr(factory, "delivery_us", None)
    if isinstance(declared, int) and not isinstance(declared, bool):
        return declared
    if isinstance(factory, MockFactory):
        return 0
    return LGPIO_DELIVERY_US


class _Input:
    """One button pin and its debounce state. ``on_edge`` is the pin's (weakly held) callback."""

    def __init__(self, box: ButtonBox, seat: str, button: str, bcm: int, pin: Any) -> None:
        self.box, self.seat, self.button, self.bcm, self.pin = box, seat, button, bcm, pin
        self.low = False  # level reported by the latest edge (low = pressed)
        self.last_edge_us: int | None = None
        self.burst_start_us = 0
        self.burst_from_low = False  # level the previous burst settled at
        self.burst_done = False  # this burst has already given (or been refused) its press
        self.down_since_us: int | None = None
        self.last_press_us: int | None = None
        self.stuck = False

    def event(self, t_us: int) -> object:
        if self.seat == JUDGE_SEAT:
            return JudgeKey(t_us, self.button)
        return Press(t_us, self.seat, self.button)

    def on_edge(self, ticks: Any, state: Any) -> None:
        if state not in (0, 1):  # lgpio reports watchdog timeouts as level 2: not an edge
            return
        box = self.box
        t_us = box.ref_us + round(box.factory.ticks_diff(ticks, box.ref_ticks) * 1_000_000)
        with box._lock:
            events = self.edge(t_us, not state)
        for event in events:
            box._emit(event)

    def edge(self, t: int, low: bool) -> list[object]:
        box = self.box
        out: list[object] = []
        if self.last_edge_us is None or t - self.last_edge_us >= box.debounce_us:
            self.burst_from_low, self.burst_start_us, self.burst_done = self.low, t, False
            if not self.low:
                self.down_since_us = None
        self.last_edge_us, self.low = t, low
        if low:
            if self.down_since_us is None:
                self.down_since_us = t if self.burst_from_low else self.burst_start_us
            if not self.burst_from_low and not self.burst_done:
                self.burst_done = True
                start, last = self.burst_start_us, self.last_press_us
                if not self.stuck and (last is None or start - last >= box.rearm_us):
                    self.last_press_us = start
                    out.append(self.event(start))
        elif self.burst_from_low:  # the release, or the bounce of it
            if self.stuck:
                self.stuck = False
                out.append(ButtonReleased(self.seat, self.button, t))
            elif self.down_since_us is not None and t - self.down_since_us >= box.stuck_after_us:
                out.append(ButtonStuck(self.seat, self.button, t, self.down_since_us))
                out.append(ButtonReleased(self.seat, self.button, t))
            self.down_since_us = None
        return out


class ButtonBox:
    """The GPIO side of the table: see the module docstring for how presses are timed."""

    def __init__(
        self,
        config: TableConfig,
        sink: Sink,
        *,
        factory: Any = None,
        debounce_us: int = 5000,
        rearm_us: int | None = None,
        stuck_after_us: int = STUCK_AFTER_US,
    ) -> None:
        if factory is None:
            Device.ensure_pin_factory()
            factory = Device.pin_factory
        self.config, self.sink, self.factory = config, sink, factory
        self.debounce_us, self.rearm_us = debounce_us, rearm_us or 0
        self.stuck_after_us = stuck_after_us
        self.delivery_us = delivery_bound_us(factory)
        self.dropped = 0
        self._lock = threading.RLock()
        self._led_lock = threading.Lock()
        self._inputs: dict[tuple[str, str], _Input] = {}
        self._leds: dict[str, Any] = {}  # seat -> gpiozero LED
        self._chain: dict[str, Any] = {}  # "data"/"clock"/"latch" -> DigitalOutputDevice
        self._chain_bit: dict[str, int] = {}  # seat -> Qi
        self._chain_bits = 0
        self._blinks: dict[str, threading.Event] = {}
        self._closed = False
        self.ref_ticks = factory.ticks()
        self.ref_us = now_us()
        try:
            self._open_inputs()
            self._open_leds()
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------------------------- inputs

    def _open_inputs(self) -> None:
        wanted: list[tuple[str, str, int | None]] = []
        for seat in self.config.seats:
            wanted += [(seat.name, "slap", seat.slap), (seat.name, "double", seat.double)]
        judge = self.config.judge
        if judge is not None:
            wanted += [(JUDGE_SEAT, key, getattr(judge, key)) for key in ("yes", "no", "undo")]
        for seat_name, button, bcm in wanted:
            if bcm is None:
                continue
            pin = self.factory.pin(bcm)
            inp = _Input(self, seat_name, button, bcm, pin)
            self._inputs[seat_name, button] = inp
            pin.input_with_pull("up")
            pin.bounce = None
            pin.edges = "both"
            with self._lock:
                pin.when_changed = inp.on_edge
                if not pin.state:  # already held as we start
                    inp.low, inp.stuck, inp.down_since_us = True, True, self.ref_us
                    self._emit(ButtonStuck(seat_name, button, self.ref_us, None))

    def _emit(self, event: object) -> None:
        try:
            self.sink(event)
        except Exception:  # a full queue must not kill the callback thread
            self.dropped += 1

    def check_stuck(self, now: int) -> None:
        """Report (to the sink) every button held down for ``stuck_after_us`` or more by ``now``."""
        found: list[object] = []
        with self._lock:
            for inp in self._inputs.values():
                since = inp.down_since_us
                if inp.low and not inp.stuck and since is not None:
                    if now - since >= self.stuck_after_us:
                        inp.stuck = True
                        found.append(ButtonStuck(inp.seat, inp.button, now, since))
        for event in found:
            self._emit(event)

    # ----------------------------------------------------------------------------- mock mode

    def _mock_pin(self, seat: str, button: str) -> Any:
        if not isinstance(self.factory, MockFactory):
            raise RuntimeError(
                "simulated presses need mock pins; run with GPIOZERO_PIN_FACTORY=mock (or --mock)"
            )
        try:
            return self._inputs[seat, button].pin
        except KeyError:
            raise ValueError(f"no {button} button configured for {seat!r}") from None

    def press(self, seat: str, button: str = "slap", hold_ms: int = 0) -> None:
        """Mock mode: press a button (low, then high after ``hold_ms``, without blocking).

        ``seat`` is a seat name, or "judge" with ``button`` = "yes", "no" or "undo".
        """
        pin = self._mock_pin(seat, button)
        pin.drive_low()
        if hold_ms <= 0:
            pin.drive_high()
        else:
            timer = threading.Timer(hold_ms / 1000, pin.drive_high)
            timer.daemon = True
            timer.start()

    def hold(self, seat: str, button: str = "slap") -> None:
        """Mock mode: push a button down and keep it down (the virtual box's pointer-down)."""
        self._mock_pin(seat, button).drive_low()

    def release(self, seat: str, button: str = "slap") -> None:
        """Mock mode: let a held button go (the virtual box's pointer-up)."""
        self._mock_pin(seat, button).drive_high()

    # ------------------------------------------------------------------------------------ LEDs

    def _open_leds(self) -> None:
        for i, seat in enumerate(self.config.seats):
            if seat.led is not None:
                self._leds[seat.name] = LED(seat.led, pin_factory=self.factory)
            elif self.config.leds is not None:
                self._chain_bit[seat.name] = i
        chain = self.config.leds
        if chain is not None:
            for role, bcm in (("data", chain.data), ("clock", chain.clock), ("latch", chain.latch)):
                self._chain[role] = DigitalOutputDevice(bcm, pin_factory=self.factory)
            with self._led_lock:
                self._shift_out()

    def _shift_out(self) -> None:
        """Clock the 8 chain bits into the 74HC595 (Q7 first) and latch them. Hold _led_lock."""
        data, clock, latch = self._chain["data"], self._chain["clock"], self._chain["latch"]
        for i in range(7, -1, -1):
            data.value = (self._chain_bits >> i) & 1
            clock.on()
            clock.off()
        latch.on()
        latch.off()

    def _set_bit(self, bit: int, on: bool, blink: threading.Event | None = None) -> bool:
        with self._led_lock:
            if self._closed or (blink is not None and blink.is_set()):
                return False
            mask = 1 << bit
            self._chain_bits = self._chain_bits | mask if on else self._chain_bits & ~mask
            self._shift_out()
            return True

    def _check_seat(self, seat: str) -> None:
        if not any(s.name == seat for s in self.config.seats):
            names = ", ".join(s.name for s in self.config.seats)
            raise ValueError(f"unknown seat {seat!r}; seats: {names}")

    def _stop_blink(self, seat: str) -> None:
        stop = self._blinks.pop(seat, None)
        if stop is not None:
            stop.set()

    def led(self, seat: str, on: bool) -> None:
        """Light (or put out) a seat's LED; stops any blink on it."""
        self._check_seat(seat)
        self._stop_blink(seat)
        if seat in self._leds:
            self._leds[seat].value = on
        elif seat in self._chain_bit:
            self._set_bit(self._chain_bit[seat], on)

    def blink(self, seat: str, times: int = 3, on_ms: int = 150) -> None:
        """Blink a seat's LED ``times`` times (on and off for ``on_ms`` each); returns at once."""
        self._check_seat(seat)
        self._stop_blink(seat)
        if seat in self._leds:
            secs = on_ms / 1000
            self._leds[seat].blink(on_time=secs, off_time=secs, n=times, background=True)
        elif seat in self._chain_bit:
            stop = self._blinks[seat] = threading.Event()
            args = (self._chain_bit[seat], times, on_ms / 1000, stop)
            threading.Thread(target=self._chain_blink, args=args, daemon=True).start()

    def _chain_blink(self, bit: int, times: int, secs: float, stop: threading.Event) -> None:
        for _ in range(times):
            if not self._set_bit(bit, True, stop) or stop.wait(secs):
                return
            if not self._set_bit(bit, False, stop) or stop.wait(secs):
                return

    def all_leds(self, on: bool) -> None:
        for seat in self.config.seats:
            self.led(seat.name, on)

    # ------------------------------------------------------------------------------- lifecycle

    def pins(self) -> list[tuple[str, int, str]]:
        """(role, BCM, state) for every configured pin, for ``referee doctor``."""
        rows: list[tuple[str, int, str]] = []
        for inp in self._inputs.values():
            state = "stuck" if inp.stuck else ("released" if inp.pin.state else "pressed")
            rows.append((f"{inp.seat} {inp.button}", inp.bcm, state))
        for seat in self.config.seats:
            if seat.name in self._leds and seat.led is not None:
                lit = self._leds[seat.name].is_lit
                rows.append((f"{seat.name} LED", seat.led, "on" if lit else "off"))
        chain = self.config.leds
        if chain is not None and self._chain:
            for role, bcm in (("data", chain.data), ("clock", chain.clock), ("latch", chain.latch)):
                rows.append((f"LED chain {role}", bcm, "high" if self._chain[role].value else "low"))
        return rows

    def close(self) -> None:
        """Put the LEDs out and release every pin. Safe to call twice."""
        for seat in list(self._blinks):
            self._stop_blink(seat)
        with self._led_lock:
            if self._closed:
                return
            self._closed = True
            if self._chain:
                self._chain_bits = 0
                self._shift_out()
            for dev in [*self._leds.values(), *self._chain.values()]:
                dev.close()
        with self._lock:
            for inp in self._inputs.values():
                inp.pin.when_changed = None
                inp.pin.close()
            self._inputs.clear()

    def __enter__(self) -> ButtonBox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BoundedMockPin(MockPin):  # type: ignore[misc]
    """gpiozero's MockPin keeps every level change in `states` for its own test assertions: in
    a mock-mode table that runs for hours it grows without end (about 9 MB per 40k presses).
    This one keeps the latest `KEEP` changes."""

    KEEP = 64

    def clear_states(self) -> None:
        super().clear_states()
        self.states: deque[Any] = deque(self.states, maxlen=self.KEEP)
