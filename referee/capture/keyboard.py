"""The keyboard as a button box (mocked pins): each key drives a MockPin, so a key press takes the
same path as a real slap — edge, first-edge debounce, queue, engine."""

from __future__ import annotations

import contextlib
import os
import sys
import termios
import tty
from collections.abc import Iterator
from typing import Any

from referee.clock import now_us
from referee.events import JudgeKey

SLAP_KEYS = "12345678"
DOUBLE_KEYS = "qwertyui"


def key_map(seats: list[str]) -> dict[str, tuple[str, str]]:
    keys: dict[str, tuple[str, str]] = {}
    for i, seat in enumerate(seats):
        keys[SLAP_KEYS[i]] = (seat, "slap")
        keys[DOUBLE_KEYS[i]] = (seat, "double")
    return keys


def help_text(seats: list[str], doubles: bool) -> str:
    lines = ["Keys:"]
    for i, seat in enumerate(seats):
        extra = f", {DOUBLE_KEYS[i]} = double" if doubles else ""
        lines.append(f"  {SLAP_KEYS[i]} = {seat} slap{extra}")
    lines.append("  j = judge YES (answers; starts, resumes, next game), n = judge NO (answers;"
                 " pauses), z = UNDO,")
    lines.append("  p = pause/resume, s = standings, h = help, x = quit."
                 " Press your slap key when you're ready.")
    return "\n".join(lines)


@contextlib.contextmanager
def cbreak(fd: int) -> Iterator[None]:
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def handle_key(table: Any, ch: str) -> bool:
    """Act on one key; False means quit."""
    engine = table.engine
    seats = list(engine.rules.seats)
    keys = key_map(seats)
    if ch in keys:
        seat, button = keys[ch]
        if button in engine.rules.BUTTONS and (button == "slap" or _has_double(table, seat)):
            table.box.press(seat, button)
    elif ch in "jn":
        table.submit(JudgeKey(now_us(), "yes" if ch == "j" else "no"))
    elif ch == "z":
        table.submit(JudgeKey(now_us(), "undo"))
    elif ch == "p":
        try:
            # paused, or pausing once the round in hand is ruled: p takes it back
            engine.command("resume" if engine.paused else "pause")
        except ValueError as exc:
            print(exc, file=table.out, flush=True)
    elif ch == "s":
        engine.command("standings")
    elif ch == "h":
        print(help_text(seats, "double" in engine.rules.BUTTONS), file=table.out, flush=True)
    elif ch in ("x", "\x04"):
        return False
    return True


def _has_double(table: Any, seat: str) -> bool:
    return any(s.name == seat and s.double is not None for s in table.config.seats)


def run_keyboard(table: Any) -> None:
    engine = table.engine
    doubles = engine.rules.options.get("doubles") == "buttons"
    fd = sys.stdin.fileno()
    with cbreak(fd):  # keys typed once the help shows are never flushed away
        print(help_text(list(engine.rules.seats), doubles), file=table.out, flush=True)
        while True:
            data = os.read(fd, 1)
            if not data or not handle_key(table, data.decode(errors="ignore").lower()):
                break
