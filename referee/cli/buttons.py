"""`referee buttons`: the button check for a freshly built box.

The check opens the button box, lights each seat LED in turn (saying which), then asks for one
button at a time, on the screen and by voice at the same step ("→ press Blue slap", "Press Blue
slap."). Every press is printed and said ("Blue: slap", "Blue, slap button.") and flashes that
seat's LED. A prompt stays open until it is answered:

* the asked button answers: it works and is wired where the config says; the next one is asked;
* another button answers: "you pressed Red slap when Blue slap was asked: swapped or miswired?",
  once for that pair, and the same button is asked again (its time starts over). When the asked
  button then answers, the wrong press was a slip of the hand, not the wiring: it is no problem
  in the summary. When both halves of a swap are seen, the two are one swapped pair;
* nothing answers within ``prompt_s``: the check moves on, and the button is reported silent.

A button held down as the check starts is reported stuck and asked for only once it is released;
one held longer than ``stuck_after_s`` is reported stuck too. The check ends when every button has
been asked for (or is held down), after ``seconds``, or on Ctrl-C, with a summary: the buttons
seen, the silent ones, the stuck ones, the swapped ones, each problem with its fix in physical pin
numbers. Exit status 0 when all is well, 1 when anything needs fixing.

Tests drive it through gpiozero's MockFactory: ``on_prompt`` is called with each asked button,
from the check's own thread, and may press pins (or not) in answer.

``HEADER_PIN`` (BCM -> physical pin of the 40-pin header) is kept here; `referee doctor` uses it too.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import queue
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from referee.capture.header import box_error, header_pin, nearest_ground, where
from referee.config import JUDGE_SEAT, TableConfig
from referee.engine.ports import Announcer
from referee.events import Press


@dataclass(frozen=True)
class Button:
    """One configured button: a seat's slap/double, or a judge key (seat "judge", yes/no/undo)."""

    seat: str
    button: str
    bcm: int

    @property
    def key(self) -> tuple[str, str]:
        return self.seat, self.button

    @property
    def label(self) -> str:
        if self.seat == JUDGE_SEAT:
            return f"Judge {self.button.upper()}"
        return f"{self.seat} {self.button}"

    @property
    def where(self) -> str:
        return where(self.bcm)

    @property
    def pin(self) -> int | None:
        return header_pin(self.bcm)


def configured_buttons(config: TableConfig) -> list[Button]:
    """Every button of the box in the order the check asks for them: seat by seat, then judge."""
    found: list[Button] = []
    for seat in config.seats:
        for role in ("slap", "double"):
            bcm = getattr(seat, role)
            if bcm is not None:
                found.append(Button(seat.name, role, bcm))
    if config.judge is not None:
        found += [Button(JUDGE_SEAT, k, getattr(config.judge, k)) for k in ("yes", "no", "undo")]
    return found


def _wire_fix(b: Button) -> str:
    if b.pin is None:
        return f"check its wires: BCM {b.bcm} to the button, the button to ground"
    return f"check its wires: pin {b.pin} to the button, the button to ground (e.g. pin " \
           f"{nearest_ground(b.pin)})"


@dataclass
class Report:
    """What the check found. ``problems()`` gives one line with its fix per problem."""

    buttons: list[Button]
    seen: list[Button] = field(default_factory=list)  # in the order first pressed
    stuck_at_start: list[Button] = field(default_factory=list)
    held_long: list[Button] = field(default_factory=list)
    swaps: list[tuple[Button, Button]] = field(default_factory=list)  # (asked, answered)
    answered: list[Button] = field(default_factory=list)  # answered their own prompt
    leds: list[str] = field(default_factory=list)  # seats whose LED was lit, in order
    timed_out: bool = False
    held_long_s: float = 3.0
    keys: dict[Button, str] = field(default_factory=dict)  # mock mode: the key for each button
    noise: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (glitches, bounces)

    @property
    def silent(self) -> list[Button]:
        stuck = set(self.stuck_at_start) | set(self.held_long)
        return [b for b in self.buttons if b not in self.seen and b not in stuck]

    def problems(self) -> list[str]:
        out: list[str] = []
        for b in self.silent:
            if b in self.keys:  # mocked pins: there are no wires, only the key
                out.append(f"{b.label}: never pressed — press key {self.keys[b]} when it is "
                           "asked for")
                continue
            out.append(f"{b.label} ({b.where}): never pressed — {_wire_fix(b)}; or the button "
                       "is dead")
        for b in self.stuck_at_start:
            pin = f"pin {b.pin}" if b.pin is not None else f"BCM {b.bcm}"
            out.append(f"{b.label} ({b.where}): held down when the check started — free the "
                       f"button; if nobody touched it, {pin} is wired straight to ground: it "
                       "must go through the button")
        for b in self.held_long:
            if b not in self.stuck_at_start:
                out.append(f"{b.label} ({b.where}): held down for more than "
                           f"{self.held_long_s:g} s — free the button or replace it")
        for b in self.buttons:
            glitches = self.noise.get(b.key, (0, 0))[0]
            if glitches:
                out.append(f"{b.label} ({b.where}): {glitches} glitch{'es' * (glitches != 1)} "
                           "ignored (spikes too short to be a press) — electrical noise on its "
                           "wire: twist it with its ground wire, keep it away from the LED leads, "
                           "and fit the filter in wiring.md (\"Glitches\": 4.7 kΩ pull-up, 1 kΩ "
                           "series, 10 nF)")
        done: set[tuple[Button, Button]] = set()
        for asked, got in self.swaps:
            if (asked, got) in done or asked in self.answered:
                continue  # (answered after all: the wrong press was a slip, not the wiring)
            if (got, asked) in self.swaps:
                done.add((got, asked))
                out.append(f"{asked.label} ({asked.where}) and {got.label} ({got.where}) are "
                           f"swapped — swap their two wires at the header (or their pin numbers "
                           "in the config)")
            else:
                out.append(f"you pressed {got.label} when {asked.label} was asked: swapped or "
                           f"miswired? — the button you pressed is wired to {got.where}; "
                           f"{asked.label} belongs on {asked.where}")
        return out

    @property
    def ok(self) -> bool:
        return not self.problems()


_STOP = object()  # put on the check's queue to end it


class BoxError(RuntimeError):
    """The button box cannot be opened; the message names the cause and the fix."""


class ButtonCheck:
    """One run of the button check on an open-able box (see the module docstring)."""

    def __init__(
        self,
        config: TableConfig,
        *,
        announcer: Announcer,
        out: TextIO | None = None,
        factory: Any = None,
        seconds: float = 60.0,
        prompt_s: float = 10.0,
        led_s: float = 0.3,
        stuck_after_s: float = 3.0,
        linger_s: float = 0.5,
        on_prompt: Callable[[Button], None] | None = None,
        keys: dict[tuple[str, str], str] | None = None,
    ) -> None:
        self.config = config
        self.announcer = announcer
        self.out = out if out is not None else sys.stdout
        self.factory = factory
        self.seconds = seconds
        self.prompt_s = prompt_s
        self.led_s = led_s
        self.stuck_after_s = stuck_after_s
        self.linger_s = linger_s  # let the last press's flash finish before the LEDs go out
        self.on_prompt = on_prompt
        self.keys = dict(keys or {})  # mock mode from a keyboard: (seat, button) → its key
        self.buttons = configured_buttons(config)
        self._by_key = {b.key: b for b in self.buttons}
        self.events: queue.Queue[object] = queue.Queue()
        self.report = Report(self.buttons, held_long_s=stuck_after_s,
                             keys={b: self.keys[b.key] for b in self.buttons if b.key in self.keys})
        self.box: Any = None
        self._pending: list[Button] = list(self.buttons)  # not yet asked for
        self._current: Button | None = None
        self._asked_at = 0.0
        self._correct: set[Button] = set()  # answered their own prompt
        self._stuck_now: set[Button] = set()
        self._stopping = False  # `stop()` was asked (the keyboard's x)

    # ------------------------------------------------------------------------------- output

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def _say_text(self, text: str) -> None:
        say_text = getattr(self.announcer, "say_text", None)
        if callable(say_text):
            try:
                say_text(text)
            except Exception:  # noqa: BLE001 - the voice never stops the check
                pass

    def _say(self, key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
        try:
            self.announcer.say(key, params, interrupt=interrupt)
        except Exception:  # noqa: BLE001 - the voice never stops the check
            pass

    def _speak_button(self, key: str, b: Button, *, interrupt: bool = False) -> None:
        seat = "Judge" if b.seat == JUDGE_SEAT else b.seat
        self._say(key, {"seat": seat, "button": b.button}, interrupt=interrupt)

    # ---------------------------------------------------------------------------------- run

    def run(self) -> Report:
        from referee.capture.gpio import ButtonBox

        with warnings.catch_warnings(record=True):  # gpiozero's fallbacks: doctor reports them
            warnings.simplefilter("always")
            try:
                self.box = ButtonBox(self.config, self.events.put, factory=self.factory,
                                     stuck_after_us=round(self.stuck_after_s * 1_000_000))
            except Exception as exc:  # noqa: BLE001 - one line, never a traceback
                raise BoxError(box_error(exc)) from None
        try:
            self._intro()
            self._led_walk()
            self._drain()
            self._loop()
            if self.report.seen and self.linger_s > 0:
                time.sleep(self.linger_s)
        except KeyboardInterrupt:
            self._print("Stopped.")
        finally:
            self.report.noise = self.box.noise()
            self.box.close()
        self._summary()
        return self.report

    def _intro(self) -> None:
        if not self.buttons:
            self._print("No buttons are configured.")
            return
        names = ", ".join(b.label for b in self.buttons)
        self._print(f"Button check: {len(self.buttons)} buttons. Press each button in turn when "
                    f"asked: {names}.")
        self._print(f"Each press is said and flashes its seat's LED; the check ends when every "
                    f"button has been asked for, or after {self.seconds:g} s (Ctrl-C stops it).")
        if self.keys:
            self._print("Mocked pins: the keyboard is the box (" + ", ".join(
                f"{k} = {'Judge ' + b.upper() if seat == JUDGE_SEAT else seat + ' ' + b}"
                for (seat, b), k in self.keys.items()) + "; x stops).")
        self._say_text("Button check. Press each button in turn when asked.")

    def _led_walk(self) -> None:
        chain = self.config.leds
        without: list[str] = []
        for i, seat in enumerate(self.config.seats):
            if seat.led is not None:
                how = f"LED on {where(seat.led)}"
            elif chain is not None:
                how = f"74HC595 output Q{i}"
            else:
                without.append(seat.name)
                continue
            self._print(f"LED: {seat.name} lit ({how}) — is it the {seat.name} seat's light?")
            self.box.led(seat.name, True)
            self.report.leds.append(seat.name)
            time.sleep(self.led_s)
            self.box.led(seat.name, False)
        if without:
            self._print(f"No LED configured for {', '.join(without)}.")

    def _drain(self) -> None:
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            if event is _STOP:  # kept for the loop, which ends the check
                self._stopping = True
                continue
            self._handle(event)

    def _next_prompt(self) -> Button | None:
        for b in self._pending:
            if b not in self._stuck_now:
                return b
        return None

    def _ask(self, b: Button) -> None:
        self._pending.remove(b)
        self._current = b
        self._prompt(b)
        if self.on_prompt is not None:
            self.on_prompt(b)

    def _prompt(self, b: Button) -> None:
        """Ask for `b` on the screen and by voice at once (its time starts now)."""
        self._asked_at = time.monotonic()
        key = f" (key {self.keys[b.key]})" if b.key in self.keys else ""
        self._print(f"→ press {b.label}{key}")
        self._speak_button("button_ask", b)

    def _loop(self) -> None:
        from referee.clock import now_us

        deadline = time.monotonic() + self.seconds
        while True:
            if self._stopping:
                self._print("Stopped.")
                return
            if self._current is None:
                b = self._next_prompt()
                if b is None:  # everything asked, or only held-down buttons are left
                    return
                self._ask(b)
                self._drain()  # a hook may have answered at once
                continue
            now = time.monotonic()
            if now >= deadline:
                self.report.timed_out = True
                self._print(f"Time is up ({self.seconds:g} s).")
                return
            if now >= self._asked_at + self.prompt_s:
                self._print(f"   no answer from {self._current.label}; moving on")
                self._current = None
                continue
            wait = min(0.1, deadline - now, self._asked_at + self.prompt_s - now)
            try:
                event = self.events.get(timeout=max(wait, 0.001))
            except queue.Empty:
                self.box.check_stuck(now_us())
                continue
            if event is _STOP:
                self._stopping = True
                continue
            self._handle(event)

    def stop(self) -> None:
        """End the check early (from another thread: the keyboard's x), as Ctrl-C does."""
        self.events.put(_STOP)

    def _button_of(self, event: object) -> Button | None:
        from referee.events import JudgeKey

        if isinstance(event, Press):
            return self._by_key.get((event.seat, event.button))
        if isinstance(event, JudgeKey):
            return self._by_key.get((JUDGE_SEAT, event.key))
        seat, button = getattr(event, "seat", None), getattr(event, "button", None)
        return self._by_key.get((str(seat), str(button)))

    def _handle(self, event: object) -> None:
        from referee.events import ButtonReleased, ButtonStuck, JudgeKey

        b = self._button_of(event)
        if b is None:
            return
        if isinstance(event, Press | JudgeKey):
            self._pressed(b)
        elif isinstance(event, ButtonStuck):
            self._stuck_now.add(b)
            if event.since_us is None:
                self.report.stuck_at_start.append(b)
                self._print(f"{b.label} ({b.where}) is held down as the check starts: stuck? "
                            "(it is asked for once it is released)")
            else:
                if b not in self.report.held_long:
                    self.report.held_long.append(b)
                self._print(f"{b.label} ({b.where}) has been held down for more than "
                            f"{self.stuck_after_s:g} s: stuck?")
            self._speak_button("stuck", b)
        elif isinstance(event, ButtonReleased):
            self._stuck_now.discard(b)
            self._print(f"{b.label} released")

    def _pressed(self, b: Button) -> None:
        again = b in self.report.seen
        if not again:
            self.report.seen.append(b)
        seat = "Judge" if b.seat == JUDGE_SEAT else b.seat
        self._print(f"{seat}: {b.button} ({b.where})" + (" again" if again else ""))
        # said at once: what is still waiting to be said (an older prompt) is stale now
        self._speak_button("button_check", b, interrupt=True)
        if b.seat != JUDGE_SEAT:
            try:
                self.box.blink(b.seat, times=2, on_ms=120)
            except Exception:  # noqa: BLE001 - a LED problem never stops the check
                pass
        asked = self._current
        if asked is None:
            return  # no question open: just an echo
        if b == asked:
            self._correct.add(b)
            self.report.answered.append(b)
            self._print(f"   ok: {b.label}")
            self._current = None
            return
        if b in self._correct:
            self._print(f"   {b.label} works already (checked above)")
        elif (asked, b) not in self.report.swaps:  # one line per wrong pair, however often
            self.report.swaps.append((asked, b))
            self._print(f"   you pressed {b.label} when {asked.label} was asked: swapped or "
                        "miswired?")
        self._prompt(asked)  # the check stays on the asked button

    def _summary(self) -> None:
        r = self.report
        self._print("")
        self._print(f"Summary: {len(r.seen)} of {len(r.buttons)} buttons seen.")
        if r.seen:
            self._print("ok  seen: " + ", ".join(f"{b.label} ({b.where})" for b in r.seen))
        if r.leds:
            self._print("ok  LEDs lit in turn: " + ", ".join(r.leds) + " (check each lit at "
                        "its own seat)")
        bouncy = [f"{b.label} {r.noise[b.key][1]}" for b in r.buttons
                  if r.noise.get(b.key, (0, 0))[1]]
        if bouncy:
            self._print("ok  contact bounce (edges inside a press, debounced in software): "
                        + ", ".join(bouncy))
        problems = r.problems()
        for line in problems:
            self._print(f"FIX {line}")
        if problems:
            self._print(f"{len(problems)} problem(s) found; fix them and run referee buttons again.")
            self._say_text("Some buttons need fixing.")
        else:
            self._print("All buttons work.")
            self._say_text("All buttons work.")


def _wait_quiet(announcer: Announcer) -> None:
    wait = getattr(announcer, "wait_quiet", None)
    if callable(wait):
        try:
            wait(5.0)
        except Exception:  # noqa: BLE001
            pass


def run_buttons(args: argparse.Namespace, *, out: TextIO | None = None,
                on_prompt: Callable[[Button], None] | None = None, **options: Any) -> int:
    """`referee buttons`: 0 when every button works, 1 when something needs fixing.

    ``on_prompt`` and ``options`` (prompt_s, led_s, stuck_after_s) are for tests.
    """
    from referee.cli.common import UsageError, table_config
    from referee.cli.table import make_announcer, use_mock_pins

    out = out if out is not None else sys.stdout
    config = table_config(args)
    if getattr(args, "no_judge", False):
        config = dataclasses.replace(config, judge=None)
    if getattr(args, "prompt_seconds", None) is not None and "prompt_s" not in options:
        options["prompt_s"] = float(args.prompt_seconds)
    if getattr(args, "mock", False):
        use_mock_pins()
    seconds = getattr(args, "seconds", None)
    announcer = make_announcer(config, no_speech=bool(getattr(args, "no_speech", False)), out=out)
    keyboard = bool(getattr(args, "mock", False)) and sys.stdin.isatty()
    if keyboard and "keys" not in options:
        options["keys"] = _keys_for(config)
    try:
        check = ButtonCheck(config, announcer=announcer, out=out,
                            seconds=60.0 if seconds is None else float(seconds),
                            on_prompt=on_prompt, **options)
        try:
            if keyboard:
                with _keyboard_box(check):
                    report = check.run()
            else:
                report = check.run()
        except BoxError as exc:
            raise UsageError(str(exc)) from None
        _wait_quiet(announcer)
    finally:
        announcer.close()
    return 0 if report.ok else 1


def _keys_for(config: TableConfig) -> dict[tuple[str, str], str]:
    """The play keys (1–8 slap, q–i double, j/n/z judge) for the buttons this box has."""
    from referee.capture.keyboard import button_keys

    keys = button_keys([s.name for s in config.seats], judge=config.judge is not None)
    have = {b.key for b in configured_buttons(config)}
    return {button: key for key, button in keys.items() if button in have}


@contextlib.contextmanager
def _keyboard_box(check: ButtonCheck) -> Iterator[None]:
    """Mock mode on a terminal: each key presses its mocked button; x (or Ctrl-D) stops."""
    from referee.capture.keyboard import cbreak

    by_key = {key: button for button, key in check.keys.items()}
    fd = sys.stdin.fileno()

    def read() -> None:
        while True:
            data = os.read(fd, 1)
            ch = data.decode(errors="ignore").lower() if data else "\x04"
            if ch in ("x", "\x04"):
                check.stop()
                return
            button = by_key.get(ch)
            box = check.box
            if button is not None and box is not None:
                box.press(*button)
            elif ch not in ("\n", "\r"):
                check._print(f"{ch!r} is not a button key; the keys are listed above")

    with cbreak(fd):
        threading.Thread(target=read, name="buttons-keyboard", daemon=True).start()
        yield
