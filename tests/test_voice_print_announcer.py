"""With no speech (`--no-speech`), the cadence is printed as it would sound: a player who reads the
screen sees the go-word at the cue, not a whole cadence early."""

from __future__ import annotations

import io
import time

from referee.clock import now_us
from referee.engine.loop import phrasebook
from referee.rules.spank import SpankThePig
from referee.voice.announce import PrintAnnouncer


class Stamped(io.StringIO):
    """A text stream that notes when each piece was written (engine clock, µs)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[int, str]] = []

    def write(self, s: str) -> int:
        self.writes.append((now_us(), s))
        return super().write(s)


def test_the_go_word_is_printed_at_the_cue_not_a_cadence_early() -> None:
    out = Stamped()
    voice = PrintAnnouncer(out, lead_ms=50)
    voice.learn(phrasebook(SpankThePig))  # the engine hands over the game's words first
    cue = voice.cadence("spank", {}, 200)
    deadline = time.monotonic() + 5
    while "PIG!" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.005)
    printed = {s.strip(): t for t, s in out.writes if s.strip()}
    assert list(printed) == ["» Spank …", "» the …", "» PIG!"]
    # each beat is shown when it sounds, never before (a timer may wake a hair early: 1 ms),
    # so the go-word is not on the screen a cadence ahead of the cue
    for beat, tempos_before_cue in (("» Spank …", 2), ("» the …", 1), ("» PIG!", 0)):
        assert printed[beat] >= cue - tempos_before_cue * 200_000 - 1000, beat
    assert printed["» PIG!"] - printed["» Spank …"] >= 300_000  # not all at once

def test_a_simulated_clock_prints_the_whole_cadence_at_once() -> None:
    out = io.StringIO()
    now = [5_000_000]
    voice = PrintAnnouncer(out, lead_ms=100, clock=lambda: now[0])
    voice.learn(phrasebook(SpankThePig))
    cue = voice.cadence("spank", {}, 500)
    assert cue == 5_000_000 + 100_000 + 2 * 500_000
    assert out.getvalue() == "  » Spank … the … PIG!\n"
