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
* Glitches are not presses. A spike of a few microseconds to half a millisecond on a metre of
  wire next to LED leads is an edge pair like any other; a press is only *confirmed* once the
  line is still (or again) low ``confirm_us`` after the burst's first edge (default 1 ms). It is
  *rejected* once the line has stayed high for ``confirm_us`` before that. A confirmed press is
  still stamped with its first edge. The check runs on every edge and in ``poll(now)``, which a
  small confirmer thread calls at each pending deadline (tests on a simulated clock call it
  themselves). Pins a program drives never glitch, so on a factory whose timing says
  ``software`` (gpiozero's MockFactory) the default is no
  confirmation (presses are emitted at their first edge, as before).
* Which factory times the edges matters (``edge_timing``): lgpio passes the kernel's timestamp
  of each edge; pigpio its daemon's 32-bit microsecond tick (wrapping every 71.6 minutes, so the
  reference pair is renewed every minute); RPi.GPIO and the native factory pass none, and
  gpiozero stamps the edge when its Python callback runs, milliseconds late under load. The box
  refuses such a factory unless ``untimed_ok`` (config ``[buttons] untimed_edges = true``).
* The callback thread only converts, debounces and calls ``sink(event)`` (``queue.put_nowait``
  in the engine): no blocking, no logging, no disk. A sink that raises (a full queue) counts the
  event in ``dropped`` instead of killing the callback thread.
* gpiozero keeps only a weak reference to a pin's callback, so each callback is a bound method
  of a small ``_Input`` object the box keeps for as long as it lives.
* Stuck buttons: one held down when the box starts is reported at once (``ButtonStuck``) and
  its presses are ignored until it is released (``ButtonReleased``). One held longer than
  ``stuck_after_us`` is reported when it is released, or earlier by ``check_stuck(now_us)``,
  which the engine calls from its own loop (there is no polling thread here).
* Lost edges: a hold or stuck report re-reads the line first; a line that reads high lost its
  release edge and is released there and then. A falling edge that starts a burst while the
  box still thinks the button is down (no rising edge between) is a press too.

LEDs are either one pin per seat (gpiozero ``LED``) or a 74HC595 chain (seat i = output Qi),
shifted MSB first then latched; with an ``oe`` pin the outputs are enabled only after the first
(all-off) shift, so boot shows no random LEDs. With no LEDs configured the LED methods do nothing.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from gpiozero import LED, Device, DigitalOutputDevice
from gpiozero.pins.mock import MockPin

from referee.clock import now_us
from referee.config import JUDGE_SEAT, TableConfig
from referee.events import Button, ButtonHeld, ButtonReleased, ButtonStuck, JudgeKey, Press

Sink = Callable[[object], None]
STUCK_AFTER_US = 10_000_000
HOLD_US = 2_000_000  # a seat button held this long pauses the table
REFERENCE_RENEW_US = 60_000_000  # renew the ticks ↔ engine-clock pair this often (pigpio wraps)
PAIR_TIGHT_US = 50  # a (ticks, clock) pair read within this is taken as one instant
PAIR_TRIES = 8  # … or the tightest of this many tries


class CaptureError(RuntimeError):
    """The pins cannot be used as configured: one line with the fix."""


class PinOpenError(CaptureError):
    """One pin would not open (busy, no permission...): which pin, for what, and why."""

    def __init__(self, bcm: int, role: str, cause: BaseException) -> None:
        self.bcm, self.role, self.cause = bcm, role, cause
        super().__init__(f"BCM {bcm} ({role}): {str(cause) or type(cause).__name__}")


@dataclass(frozen=True)
class EdgeTiming:
    """How a pin factory times edges, as the scoreboard and ``referee doctor`` show it."""

    factory: str  # gpiozero's class name
    timed: bool  # the callback carries the edge's own time
    delivery_us: int  # worst edge → callback delay (the engine waits this long past a close)
    note: str
    wraps: bool = False  # ticks wrap (pigpio: 32-bit µs): the reference pair must be renewed
    # its pins are levels a program sets (no wires): they never glitch, and the virtual box
    # (`press`, `hold`, `release`: the scoreboard's mock-mode buttons, the keyboard) may drive them
    software: bool = False


# How late an edge can reach the sink after its own (kernel) timestamp with lgpio, in µs. From lg's
# source (lgPthAlerts.c): one alert thread ppoll()s every claimed line with a 0.5 ms timeout, reads
# what is ready, sorts the batch by timestamp and emits only the edges at least 0.5 ms old (so that
# they leave in time order across lines), the rest on a later turn: 0.5-1 ms in the library. Then
# the lgpio module's Python thread reads the notification pipe and calls gpiozero's callback, which
# needs the GIL: one or two hand-overs, each up to the 0.5 ms switch interval the engine sets, more
# when the machine is busy (benchmarks/bench_delivery.py measures this part). 5 ms covers the
# library's 1 ms and a few hand-overs with room; the cost is that a ruling is said 5 ms after its
# close, far under anything a table can hear. A table can set its own: delivery_us in [table].
# The engine waits this, the glitch confirmation and the confirmer's own waking past a close.
LGPIO_DELIVERY_US = 5_000
# The confirmer thread wakes at a press's deadline a little late: its sleep overshoots, then it
# waits for the GIL (0.5 ms hand-overs; benchmarks/bench_delivery.py --busy, with a thread
# serialising state the way the scoreboard does: about 1 ms late at the median on a loaded machine).
CONFIRMER_WAKE_US = 2_000

_TIMINGS: dict[str, EdgeTiming] = {
    "LGPIOFactory": EdgeTiming("LGPIOFactory", True, LGPIO_DELIVERY_US, "kernel edge "
                               "timestamps (lgpio); edges delivered in batches 0.5-1 ms late, "
                               "then Python's threads take their turn"),
    "PiGPIOFactory": EdgeTiming("PiGPIOFactory", True, 2000, "pigpio daemon ticks (32-bit µs, "
                                "wrap every 71.6 min: renewed every minute)", wraps=True),
    "MockFactory": EdgeTiming("MockFactory", True, 0, "mocked pins (no hardware)",
                              software=True),
    "RPiGPIOFactory": EdgeTiming("RPiGPIOFactory", False, 0, "RPi.GPIO passes no edge time: "
                                 "gpiozero stamps it when the Python callback runs (late "
                                 "by up to milliseconds under load)"),
    "NativeFactory": EdgeTiming("NativeFactory", False, 0, "gpiozero's native factory polls "
                                "in Python: no edge times"),
}


def edge_timing(factory: Any) -> EdgeTiming:
    """How `factory` times edges; an unknown factory counts as untimed."""
    name = type(factory).__name__
    return _TIMINGS.get(name, EdgeTiming(name, False, 0, f"{name}: edge timing unknown"))


def untimed_message(timing: EdgeTiming) -> str:
    return (f"the pin factory {timing.factory} gives no edge times ({timing.note}), so close "
            "races would be ruled on when Python ran, not when hands landed: install lgpio "
            "(sudo apt install python3-lgpio) and set GPIOZERO_PIN_FACTORY=lgpio, or set "
            "untimed_edges = true in [buttons] to referee anyway")

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
        self.held = False  # this hold has been reported (hold-to-pause)
        self.pending_us: int | None = None  # first edge of a press not yet confirmed
        self.confirm_at_us = 0  # while pending: the line low at or after this confirms it
        self.high_since_us: int | None = None  # while pending: the line went high here
        self.rejected = False  # this burst's pending press was refused as a glitch
        self.rejoined = False  # … and the line is low again inside it (a long make-bounce?)
        self.glitches = 0  # rejected low pulses (idle noise)
        self.bounces = 0  # edges inside a burst (contact bounce)

    def event(self, t_us: int) -> object:
        if self.seat == JUDGE_SEAT:
            return JudgeKey(t_us, self.button)
        return Press(t_us, self.seat, cast(Button, self.button))  # a seat's: slap or double

    def on_edge(self, ticks: Any, state: Any) -> None:
        if state not in (0, 1):  # lgpio reports watchdog timeouts as level 2: not an edge
            return
        box = self.box
        t_us = box.ticks_to_us(ticks)
        with box._lock:
            events = self.edge(t_us, not state)
        for event in events:
            box._emit(event)
        if self.pending_us is not None:
            box._wake_confirmer()

    def settle(self, until: int) -> list[object]:
        """Decide a pending press from the edges known up to `until` (every edge before it has
        been delivered): confirmed if the line was low at or after the deadline, rejected if it
        stayed high for ``confirm_us`` first."""
        start = self.pending_us
        if start is None:
            return []
        box = self.box
        if self.low and until >= self.confirm_at_us:
            return self.confirm()
        if not self.low and self.high_since_us is not None:
            if until - self.high_since_us >= box.confirm_us:
                # a glitch, or a contact open for confirm_us or more in its make-bounce: the
                # burst goes on, so a low again inside the debounce is that press at its
                # first edge (never re-stamped at a later contact); after it, a new burst
                self.pending_us = self.high_since_us = None
                self.glitches += 1
                self.rejected, self.burst_done = True, False
                self.down_since_us = None
        return []

    def confirm(self) -> list[object]:
        start, self.pending_us, self.high_since_us = self.pending_us, None, None
        assert start is not None
        if self.rejoined:  # what was refused was this press's bounce, not a glitch
            self.rejoined, self.glitches = False, self.glitches - 1
        last = self.last_press_us
        if not self.stuck and (last is None or start - last >= self.box.rearm_us):
            self.last_press_us = start
            return [self.event(start)]
        return []

    def edge(self, t: int, low: bool) -> list[object]:
        box = self.box
        out: list[object] = []
        if self.pending_us is not None:
            out += self.settle(t)  # the level held until this edge decides first
        if self.last_edge_us is None or t - self.last_edge_us >= box.debounce_us:
            # low again with no rising edge between: the release was lost (lg's queue, a
            # missed interrupt), so the line was high before this edge, which is a press
            was_low = self.low and not (low and self.low)
            self.burst_from_low, self.burst_start_us, self.burst_done = was_low, t, False
            self.rejected = self.rejoined = False
            if not self.burst_from_low:
                self.down_since_us = None
        else:
            self.bounces += 1
        self.last_edge_us, self.low = t, low
        if self.pending_us is not None:
            self.high_since_us = None if low else t
            return out
        if low:
            if self.down_since_us is None:
                self.down_since_us = t if self.burst_from_low else self.burst_start_us
                self.held = False
            if not self.burst_from_low and not self.burst_done:
                self.burst_done = True
                self.pending_us = self.burst_start_us
                # confirmed once low confirm_us from here (after a refused opening: from this
                # contact, so two glitches never make a press), stamped at the first edge
                self.confirm_at_us = (t if self.rejected else self.burst_start_us) + box.confirm_us
                self.rejoined, self.rejected = self.rejected, False
                if box.confirm_us <= 0:
                    out += self.confirm()
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
        hold_us: int = HOLD_US,
        confirm_us: int | None = None,
        untimed_ok: bool | None = None,
        clock: Callable[[], int] = now_us,
        confirmer: bool = True,
    ) -> None:
        if factory is None:
            Device.ensure_pin_factory()
            factory = Device.pin_factory
        self.timing = edge_timing(factory)
        if untimed_ok is None:
            untimed_ok = config.buttons.untimed_edges
        if not self.timing.timed and not untimed_ok:
            raise CaptureError(untimed_message(self.timing))
        self.config, self.sink, self.factory = config, sink, factory
        self.debounce_us, self.rearm_us = debounce_us, rearm_us or 0
        self.stuck_after_us = stuck_after_us
        self.hold_us = hold_us
        if confirm_us is None:  # software-driven pins never glitch (see the docstring)
            confirm_us = 0 if self.timing.software else config.buttons.confirm_us
        self.confirm_us = confirm_us
        self.clock = clock
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
        self._ref: tuple[Any, int] = self._pair()  # (ticks, engine µs) taken together
        self._wake = threading.Event()
        self._confirmer: threading.Thread | None = None
        try:
            self._open_inputs()
            self._open_leds()
        except BaseException:
            self.close()
            raise
        if confirmer and self.confirm_us > 0:
            self._confirmer = threading.Thread(target=self._confirm_loop, name="button-confirm",
                                               daemon=True)
            self._confirmer.start()

    @property
    def delivery_us(self) -> int:
        """How long after an edge its event may still reach the sink: the factory's delivery
        delay plus the glitch confirmation. A race must not be ruled before close + this."""
        return self.timing.delivery_us + self.confirm_us

    @property
    def settled_us(self) -> int:
        """How long the engine waits past a race's close before ruling it: `delivery_us`, plus
        the confirmer thread's own lateness when one decides the presses (0 for mock pins)."""
        return self.delivery_us + (CONFIRMER_WAKE_US if self._confirmer is not None else 0)

    @property
    def ref_ticks(self) -> Any:
        return self._ref[0]

    @property
    def ref_us(self) -> int:
        return self._ref[1]

    def ticks_to_us(self, ticks: Any) -> int:
        """An edge's tick on the engine clock, from the latest reference pair. The pair is
        renewed every minute (`renew_reference`), so a wrapping tick (pigpio: 32 bits of µs)
        never runs a whole period past it; an edge a little older than the pair comes out
        negative from plain subtraction, and from pigpio's modulo as nearly a whole period,
        which is folded back."""
        ref_ticks, ref_us = self._ref
        diff = self.factory.ticks_diff(ticks, ref_ticks)
        if self.timing.wraps and diff > 2147.483648:  # half of 2**32 µs
            diff -= 4294.967296
        return int(ref_us + round(diff * 1_000_000))

    def renew_reference(self, now: int | None = None) -> None:
        """Take a fresh (ticks, engine µs) pair when the current one is a minute old, for a
        factory whose ticks wrap. Others (lgpio: CLOCK_MONOTONIC seconds, the engine's own
        clock) keep the pair taken at start."""
        if not self.timing.wraps:
            return
        now = self.clock() if now is None else now
        if now - self._ref[1] >= REFERENCE_RENEW_US:
            self._ref = self._pair()

    def _pair(self) -> tuple[Any, int]:
        """A (ticks, engine µs) pair read as one instant: the tick read between two clock
        reads, their midpoint taken, the tightest of a few tries kept. A thread preempted
        between two plain reads would shift every later stamp against the cues by as long
        as it waited (milliseconds on a busy Pi)."""
        best: tuple[int, Any, int] | None = None
        for _ in range(PAIR_TRIES):
            before = self.clock()
            ticks = self.factory.ticks()
            after = self.clock()
            if best is None or after - before < best[0]:
                best = (after - before, ticks, (before + after) // 2)
            if after - before <= PAIR_TIGHT_US:
                break
        assert best is not None
        return best[1], best[2]

    # ------------------------------------------------------------------------------ confirming

    def poll(self, now: int | None = None) -> None:
        """Confirm or reject pending presses as of `now` (engine clock), from the edges known
        up to ``now - delivery`` (every edge older than the factory's delivery delay has been
        delivered). Reading the line instead would be quicker but cannot tell a press that
        is still low from a new press after a spike whose end is still on its way."""
        now = self.clock() if now is None else now
        self.renew_reference(now)
        out: list[object] = []
        with self._lock:
            for inp in self._inputs.values():
                if inp.pending_us is not None:
                    out += inp.settle(now - self.timing.delivery_us)
        for event in out:
            self._emit(event)

    def next_deadline(self) -> int | None:
        """When `poll` can next decide something (None: nothing pending)."""
        delivery = self.timing.delivery_us
        with self._lock:
            times: list[int] = []
            for inp in self._inputs.values():
                if inp.pending_us is None:
                    continue
                if inp.high_since_us is not None:  # high now: rejected then, unless an edge
                    times.append(inp.high_since_us + self.confirm_us + delivery)
                else:
                    times.append(max(inp.confirm_at_us, (inp.last_edge_us or 0)) + delivery)
            return min(times, default=None)

    def _wake_confirmer(self) -> None:
        self._wake.set()

    def _confirm_loop(self) -> None:
        while not self._closed:
            due = self.next_deadline()
            if due is None:
                self._wake.wait(1.0)
                self._wake.clear()
                self.renew_reference()
                continue
            wait = (due - self.clock()) / 1_000_000
            if wait > 0:
                time.sleep(min(wait, 0.05))
                continue
            self.poll()
            time.sleep(0.0002)  # a deadline moved by a bounce: look again shortly

    def noise(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(seat, button) → (glitches rejected, bounce edges seen), for ``referee buttons``."""
        with self._lock:
            return {key: (inp.glitches, inp.bounces) for key, inp in self._inputs.items()}

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
            try:
                pin = self.factory.pin(bcm)
                inp = _Input(self, seat_name, button, bcm, pin)
                self._inputs[seat_name, button] = inp
                pin.input_with_pull("up")
                pin.bounce = None
                pin.edges = "both"
            except Exception as exc:
                raise PinOpenError(bcm, f"{seat_name} {button}", exc) from exc
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
        """Report (to the sink) every seat button held for ``hold_us`` (``ButtonHeld``: pause
        the table) and every button held for ``stuck_after_us`` or more by ``now``."""
        self.renew_reference(now)
        found: list[object] = []
        with self._lock:
            for inp in self._inputs.values():
                since = inp.down_since_us
                if inp.low and not inp.stuck and since is not None:
                    due = (not inp.held and inp.seat != JUDGE_SEAT and now - since >= self.hold_us
                           ) or now - since >= self.stuck_after_us
                    if due and self._released(inp):
                        continue
                    if not inp.held and inp.seat != JUDGE_SEAT and now - since >= self.hold_us:
                        inp.held = True
                        found.append(ButtonHeld(inp.seat, inp.button, since + self.hold_us))
                    if now - since >= self.stuck_after_us:
                        inp.stuck = True
                        found.append(ButtonStuck(inp.seat, inp.button, now, since))
        for event in found:
            self._emit(event)

    def _released(self, inp: _Input) -> bool:
        """Before a hold or a stuck button is reported: is the line really still low? Its
        release edge may have been lost (lg drops alerts when its queue is full; a missed
        interrupt); then it is released now, and its next falling edge is a press. Hold _lock."""
        try:
            high = bool(inp.pin.state)
        except Exception:  # noqa: BLE001 - a pin that cannot be read: trust its edges
            return False
        if high:
            inp.low, inp.down_since_us, inp.held = False, None, False
            inp.last_edge_us = None  # the next edge starts a burst of its own
        return high

    def next_hold_us(self) -> int | None:
        """When the next hold (or stuck button) is due to be reported, for the engine's sleep."""
        # a judge key never holds-to-pause: only its stuck report is due (a hold time already
        # past would be a wake-up in the past, and the engine would spin until the stuck time)
        with self._lock:
            due = [since + (self.stuck_after_us if inp.held or inp.seat == JUDGE_SEAT
                            else self.hold_us)
                   for inp in self._inputs.values()
                   if inp.low and not inp.stuck and (since := inp.down_since_us) is not None]
        return min(due, default=None)

    # ----------------------------------------------------------------------------- mock mode

    def _mock_pin(self, seat: str, button: str) -> Any:
        if not self.timing.software:
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
            if chain.oe is not None:
                # OE is pulled high (outputs off) by 10 kΩ through boot; enable the outputs only
                # now that the register holds zeros instead of power-on noise.
                self._chain["oe"] = DigitalOutputDevice(chain.oe, initial_value=False,
                                                        pin_factory=self.factory)

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

    def cue_light(self, on_ms: int = 200) -> None:
        """The cue light: every seat LED on now (the go-word's instant), off after ``on_ms``.
        The engine calls it when the cue's time comes, on the clock the cue was given on."""
        self.all_leds(True)
        timer = threading.Timer(on_ms / 1000, self._cue_light_off)
        timer.daemon = True
        timer.start()

    def _cue_light_off(self) -> None:
        if not self._closed:
            self.all_leds(False)

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
            roles = [("data", chain.data), ("clock", chain.clock), ("latch", chain.latch)]
            if chain.oe is not None and "oe" in self._chain:
                roles.append(("oe", chain.oe))
            for role, bcm in roles:
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
        self._wake.set()
        with self._led_lock:
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
