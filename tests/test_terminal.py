"""The terminal as a user meets it (issue 14): every key is echoed, a key that does nothing says why,
and `referee buttons --mock` is played from the keyboard of a laptop.

The end-to-end cases run the real `referee` command on a real pseudo-terminal (the keys reach it as
they would from a person typing); the others drive `handle_key` on a real Table on mocked pins.
"""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from referee.capture.keyboard import handle_key
from referee.cli.table import Table
from referee.config import default_config
from tests.harness import close_table

SEATS = ["Blue", "Red", "Green", "Yellow"]


class Terminal:
    """A command on a pseudo-terminal: read what it prints, type keys."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee", *args], stdin=slave, stdout=slave, stderr=slave,
            env={**os.environ, **(env or {})}, close_fds=True)
        os.close(slave)
        self.text = ""

    def read(self, timeout: float = 0.1) -> str:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.text += os.read(self.master, 65536).decode(errors="replace")
            except OSError:  # the child closed the terminal
                pass
        return self.text

    def expect(self, pattern: str, timeout: float = 15.0) -> re.Match[str]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = re.search(pattern, self.read())
            if found:
                return found
            if self.proc.poll() is not None:
                self.read(0.2)
                found = re.search(pattern, self.text)
                if found:
                    return found
                break
        raise AssertionError(f"{pattern!r} never came; the terminal shows:\n{self.text}")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


def test_referee_buttons_mock_is_played_from_the_keyboard() -> None:
    term = Terminal("buttons", "--mock", "--no-speech", "--seats", "Blue,Red",
                    "--prompt-seconds", "3", "--seconds", "30")
    try:
        asked = 0
        while True:
            found = term.expect(r"→ press (.+?) \(key (.)\)|Summary:")
            if found.group(0) == "Summary:":
                break
            term.text = term.text[found.end():]
            term.type(found.group(2))
            asked += 1
        term.expect(r"All buttons work\.")
    finally:
        code = term.close()
    assert code == 0
    assert asked == 7  # Blue slap, Blue double, Red slap, Red double, judge YES, NO, UNDO


def test_a_button_left_unpressed_on_the_keyboard_names_its_key_not_wires() -> None:
    term = Terminal("buttons", "--mock", "--no-speech", "--no-judge", "--seats", "Blue,Red",
                    "--prompt-seconds", "0.5", "--seconds", "30")
    try:
        term.expect(r"\(key w\)")  # Red double: asked last; no key is typed at all
        term.expect(r"Summary:")
        term.expect(r"problem\(s\) found")
    finally:
        code = term.close()
    assert code == 1
    assert "FIX Red double: never pressed — press key w when it is asked for" in term.text
    assert "check its wires" not in term.text


def test_x_stops_the_button_check_at_once() -> None:
    term = Terminal("buttons", "--mock", "--no-speech", "--seats", "Blue,Red",
                    "--prompt-seconds", "20", "--seconds", "60")
    try:
        term.expect(r"\(key 1\)")
        started = time.monotonic()
        term.type("x")
        term.expect(r"Summary:")
    finally:
        code = term.close()
    assert time.monotonic() - started < 5
    assert code == 1 and "Stopped." in term.text


# -- the play keys ----------------------------------------------------------------------------


@pytest.fixture
def table(mock_factory: Any, tmp_path: Path) -> Any:
    out = io.StringIO()
    t = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
              out=out, auto=False)
    yield t
    close_table(t, 60_000)  # a race left open (a card fed 5 s ahead) is ended, not waited out


def lines(table: Any) -> list[str]:
    return [line for line in table.out.getvalue().splitlines() if "→" in line]


def test_every_key_is_echoed_and_a_useless_key_says_why(table: Any) -> None:
    table.start("spank-the-pig", {"doubles": "off", "deck": 8}, resume=False)
    for ch in "1nzqk":
        assert handle_key(table, ch)
    assert lines(table) == [
        "1 → Blue slap: between rounds, presses are ignored",
        "n → judge NO: pause",  # with nothing asked, the keypad's NO pauses the table
        "z → judge UNDO: nothing changed the score in this round or the last",
        "q → nothing: double buttons are not used with this game's options",
        "k → not a key here; h shows the keys",
    ]
    assert not handle_key(table, "x")
    assert lines(table)[-1] == "x → quit"


def test_a_double_key_in_a_game_without_doubles_says_so(table: Any) -> None:
    table.start("pig", {}, resume=False)
    handle_key(table, "q")
    handle_key(table, "2")
    assert lines(table)[:2] == ["q → nothing: Pig / Spoons / Tongue has no double button",
                                "2 → Red slap: a claim that opens round 1"]


def test_a_press_after_a_pig_claim_says_it_answers_the_claim(table: Any) -> None:
    table.start("pig", {}, resume=False)
    engine = table.engine
    handle_key(table, "1")  # Blue claims
    deadline = time.monotonic() + 5
    while engine.command("snapshot") and not engine.rules.status().race_open:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    handle_key(table, "2")
    handle_key(table, "1")
    assert lines(table)[1] == "2 → Red slap: answers the claim open in round 1"
    assert lines(table)[2] == "1 → Blue slap: Blue already pressed in round 1; only the first " \
                              "press counts"


def test_s_prints_the_standings_in_place_order(table: Any) -> None:
    table.start("pigs-tail", {"take": "flipper"}, resume=False)
    engine = table.engine
    from referee.events import Cue, Press

    t = engine.now() - 20_000_000  # all in the past: every race has closed by now
    engine.command("feed", event=Cue(t, "Blue"))
    engine.command("feed", event=Press(t + 100_000, "Blue", "slap"))  # a claim on the first
    engine.command("feed", event=Cue(t + 4_000_000, "Red"))           # card is refused...
    engine.command("feed", event=Press(t + 4_300_000, "Red", "slap"))  # Red takes two cards
    deadline = time.monotonic() + 5
    while {r["seat"]: r["score"] for r in engine.command("snapshot")["seats"]}["Red"] != 2:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    handle_key(table, "s")
    line = lines(table)[-1]
    assert line.startswith("s → standings: 1. Blue 0, 1. Green 0, 1. Yellow 0, 4. Red")


def test_n_refuses_a_claim_the_box_took_and_says_so(table: Any) -> None:
    table.start("pigs-tail", {"take": "flipper"}, resume=False)
    engine = table.engine
    from referee.events import Cue, Press

    t = engine.now()
    engine.command("feed", event=Cue(t, "Blue"))
    engine.command("feed", event=Cue(t + 4_000_000, "Red"))
    engine.command("feed", event=Press(t + 4_300_000, "Red", "slap"))  # Red claims a match
    deadline = time.monotonic() + 5
    while engine.command("snapshot")["round"] != 2 or engine.rules.status().race_open:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    handle_key(table, "n")
    assert lines(table)[-1] == "n → judge NO to round 2's claim: No match"
    deadline = time.monotonic() + 5
    while engine.rules.facts_for(2) != {"match": False}:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def wait_until(check: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.01)


def test_a_press_between_flips_that_is_a_false_start_is_echoed_as_one(table: Any) -> None:
    """Pig's Tail `slowest`: a tap between flips takes the pile; the echo says it counts, as
    the ruling that follows does (it said "between rounds, presses are ignored")."""
    table.start("pigs-tail", {"take": "slowest"}, resume=False)
    engine = table.engine
    from referee.events import Cue

    engine.command("feed", event=Cue(engine.now() - 10_000_000, "Blue"))  # its race is over
    wait_until(lambda: engine.command("snapshot") and not engine.rules.status().race_open)
    handle_key(table, "2")
    assert lines(table)[-1] == "2 → Red slap: counts in round 1: false start between flips"
    wait_until(lambda: [(r.seat, r.text) for r in engine.rules.round_outputs(1)]
               == [("Red", "false start between flips")])
    handle_key(table, "3")  # the pile is taken: nothing is left to take until the next flip
    assert lines(table)[-1] == "3 → Green slap: between rounds, presses are ignored"


def test_a_press_by_a_seat_whose_turn_it_is_not_says_why_it_does_nothing(table: Any) -> None:
    table.start("pigs-tail", {"take": "flipper"}, resume=False)
    engine = table.engine
    from referee.events import Cue

    engine.command("feed", event=Cue(engine.now(), "Blue"))  # Blue flips: the race is open
    wait_until(lambda: engine.command("snapshot") and engine.rules.status().race_open)
    handle_key(table, "2")
    handle_key(table, "1")
    assert lines(table)[-2:] == ["2 → Red slap: does nothing: only Blue may press in round 1",
                                 "1 → Blue slap"]
    wait_until(lambda: engine.command("snapshot") and "Blue" in engine.rules.reactions(1))
    assert "Red" not in engine.rules.reactions(1)


def test_a_claim_right_after_the_count_in_is_echoed_as_a_claim(mock_factory: Any,
                                                              tmp_path: Path) -> None:
    """Pig: once everyone is ready and the count-in is over, a press opens a round; the echo
    says what the engine does with each press (ignored only while the engine ignores it)."""
    out = io.StringIO()
    t = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
              out=out, count_in_ms=300)
    try:
        t.start("pig", {}, resume=False)
        engine = t.engine
        assert engine is not None
        for key in "1234":
            handle_key(t, key)
        time.sleep(0.05)  # two presses of one button closer than its debounce are one
        handle_key(t, "1")
        wait_until(lambda: engine.command("snapshot")["phase"] != "count-in")
        handle_key(t, "2")
        wait_until(lambda: engine.command("snapshot") and engine.rules.round_count() == 1)
        assert engine.rules.opened_by(1)[1] == "Red"  # type: ignore[index]
        echoed = lines(t)
        assert echoed[:4] == [f"{k} → {s} slap: ready" for k, s in zip("1234", SEATS, strict=True)]
        assert echoed[4] == "1 → Blue slap: play is about to start, presses are ignored"
        assert echoed[5] == "2 → Red slap: a claim that opens round 1"
        assert engine.presses_not_played == 5  # four ready presses and Blue's in the count-in
    finally:
        t.close()


def test_a_press_before_the_go_word_is_echoed_as_what_the_game_makes_of_it(table: Any) -> None:
    """Pig's Tail `slowest`: the call's cue is fed ahead of its go-word; a tap before "flip!" is
    not in that race: before the first card it does nothing, later it is a false start between
    flips of the round before (it was echoed as racing)."""
    table.start("pigs-tail", {"take": "slowest"}, resume=False)
    engine = table.engine
    from referee.events import Cue

    engine.command("feed", event=Cue(engine.now() + 5_000_000, "Blue"))  # "Blue, …" is said
    wait_until(lambda: engine.command("snapshot") and engine.rules.status().race_open)
    handle_key(table, "3")
    assert lines(table)[-1] == "3 → Green slap: too early for round 1's race: it does nothing"
    wait_until(lambda: engine.command("snapshot") and engine.rules.round_count() == 1)
    assert engine.rules.pressers(1) == frozenset()


def test_a_press_in_the_next_call_is_a_false_start_between_flips(table: Any) -> None:
    table.start("pigs-tail", {"take": "slowest"}, resume=False)
    engine = table.engine
    from referee.events import Cue

    now = engine.now()
    engine.command("feed", event=Cue(now - 10_000_000, "Blue"))  # one card on the pile
    engine.command("feed", event=Cue(now + 5_000_000, "Red"))  # "Red, …": not flipped yet
    wait_until(lambda: engine.command("snapshot") and engine.rules.round_count() == 2)
    handle_key(table, "3")
    assert lines(table)[-1] == "3 → Green slap: counts in round 1: false start between flips"
    wait_until(lambda: [(r.seat, r.text) for r in engine.rules.round_outputs(1)]
               == [("Green", "false start between flips")])


def test_a_late_press_in_a_ruled_round_says_it_is_too_late(table: Any) -> None:
    """Pig: a press inside the claim's window belongs to that round even once it is ruled; it
    changes nothing, and the echo says so (it said "answers the claim open in round 1")."""
    table.start("pig", {"lives": 3}, resume=False)
    engine = table.engine
    handle_key(table, "1")  # Blue claims
    wait_until(lambda: engine.command("snapshot") and engine.rules.status().race_open)
    handle_key(table, "2")
    handle_key(table, "3")
    wait_until(lambda: engine.command("snapshot") and engine.rules.round_outputs(1))
    before = engine.rules.round_outputs(1)
    handle_key(table, "4")
    assert lines(table)[-1] == "4 → Yellow slap: late for round 1, already ruled: it changes nothing"
    handle_key(table, "1")  # the claimer again: late too, not a second claim
    assert lines(table)[-1] == "1 → Blue slap: late for round 1, already ruled: it changes nothing"
    wait_until(lambda: engine.command("snapshot") and "Yellow" in engine.rules.reactions(1))
    assert engine.rules.round_outputs(1) == before and engine.rules.round_count() == 1
