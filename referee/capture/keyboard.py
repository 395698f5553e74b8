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
from referee.config import DOUBLE_KEYS, JUDGE_KEYS, JUDGE_SEAT, SLAP_KEYS
from referee.events import Facts, JudgeKey


def key_map(seats: list[str]) -> dict[str, tuple[str, str]]:
    keys: dict[str, tuple[str, str]] = {}
    for i, seat in enumerate(seats):
        keys[SLAP_KEYS[i]] = (seat, "slap")
        keys[DOUBLE_KEYS[i]] = (seat, "double")
    return keys


def button_keys(seats: list[str], judge: bool = True) -> dict[str, tuple[str, str]]:
    """Every key that stands for a button of the box: seats' slap and double, the judge keypad."""
    keys = key_map(seats)
    if judge:
        keys.update({k: (JUDGE_SEAT, v) for k, v in JUDGE_KEYS.items()})
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


def _say(table: Any, line: str) -> None:
    print(line, file=table.out, flush=True)


def _key_name(ch: str) -> str:
    return repr(ch) if not ch.isprintable() or ch.isspace() else ch


@contextlib.contextmanager
def cbreak(fd: int) -> Iterator[None]:
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def handle_key(table: Any, ch: str) -> bool:
    """Act on one key and say what it did, or why it did nothing; False means quit.

    Every key is echoed on its own line ("1 → Blue slap"), so a key that registered is never in
    doubt; a key that does nothing says why ("n → judge NO: nothing is asked now").
    """
    engine = table.engine
    seats = list(engine.rules.seats)
    keys = key_map(seats)
    if ch in keys:
        seat, button = keys[ch]
        if button not in engine.rules.BUTTONS:
            _say(table, f"{ch} → nothing: {engine.rules.TITLE} has no {button} button")
        elif button not in engine.rules.race_buttons:
            _say(table, f"{ch} → nothing: {button} buttons are not used with this game's options")
        elif button == "double" and not _has_double(table, seat):
            _say(table, f"{ch} → nothing: {seat} has no double button on this box")
        else:
            _say(table, f"{ch} → {seat} {button}{_press_note(engine, seat, button)}")
            table.box.press(seat, button)
    elif ch in "jn":
        name = "YES" if ch == "j" else "NO"
        asked = engine.rules.status().awaiting
        latest = engine.snapshot()["round"]
        refused = engine.rules.refutable(latest) if ch == "n" and latest else None
        if asked is None and refused is not None:
            _say(table, f"{ch} → judge NO to round {latest}'s claim: {refused.answers[1]}")
        elif asked is None:  # with nothing asked, the keypad's keys start, resume and pause
            phase = engine.phase()
            if ch == "j":
                act = {"over": "the next game", "ready": "start play", "paused": "resume"}.get(phase)
            else:
                act = None if phase in ("ready", "count-in", "paused", "over") else "pause"
            _say(table, f"{ch} → judge {name}: " + (act or "nothing is asked now, so it does nothing"))
        else:
            _say(table, f"{ch} → judge {name} to round {asked.round}'s question")
        table.submit(JudgeKey(now_us(), "yes" if ch == "j" else "no"))
    elif ch == "z":
        step = engine.undo_step(keypad=True)
        if step is None:
            _say(table, f"{ch} → judge UNDO: nothing changed the score in this round or the last")
        elif isinstance(step, Facts):
            _say(table, f"{ch} → judge UNDO: round {step.round} is voided")
        else:
            _say(table, f"{ch} → judge UNDO: the judge's latest action is withdrawn")
        table.submit(JudgeKey(now_us(), "undo"))
    elif ch == "p":
        paused = engine.paused  # paused, or pausing once the round in hand is ruled
        _say(table, f"{ch} → {'resume' if paused else 'pause'}")
        try:
            engine.command("resume" if paused else "pause")
        except ValueError as exc:
            _say(table, f"{ch} → {exc}")
    elif ch == "s":
        st = engine.command("standings")
        rows = sorted(st["seats"], key=lambda r: (r["place"], seats.index(r["seat"])))
        _say(table, f"{ch} → standings: " + ", ".join(
            f"{r['place']}. {r['seat']} {r['score']}" for r in rows))
    elif ch == "h":
        _say(table, help_text(seats, "double" in engine.rules.BUTTONS))
    elif ch in ("x", "\x04"):
        _say(table, f"{_key_name(ch)} → quit")
        return False
    elif ch not in ("\n", "\r"):
        _say(table, f"{_key_name(ch)} → not a key here; h shows the keys")
    return True


def _press_note(engine: Any, seat: str, button: str) -> str:
    """What the press will do, or why it will do nothing, as the engine and the game say it: the
    echo asks them (it never guesses from a game's name or its phase)."""
    thread = getattr(engine, "_thread", None)  # asked on the engine thread when it runs
    if thread is not None and thread.is_alive():
        what, note = engine.command("press_note", seat=seat, button=button)
    else:  # a simulated table steps its engine from the caller's thread
        what, note = engine.press_note(seat, button)
    phase = engine.phase()
    if what == "ready":
        if phase == "over":
            return ": ready for the next game (it starts when every seat is ready)"
        return ": ready"
    if what == "resume":
        return ": resumes play after a count-in"
    if what == "ignore":
        if phase in ("ready", "over"):
            return f": {seat} is ready already"
        return ": play is about to start, presses are ignored"
    if note:
        return f": {note}"
    if phase == "over":  # the last race's press, before the next game's deal
        return ": the game is over; the next game's deal comes once the end is said"
    return ""


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
