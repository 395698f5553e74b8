"""With no speech (`--no-speech`), the cadence is printed as it would sound: a player who reads the
screen sees the go-word at the cue, not a whole cadence early."""

from __future__ import annotations

import io
import time

from referee.clock import now_us
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
    cue = voice.cadence("spank", {}, 200)
    deadline = time.monotonic() + 5
    while "PIG!" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.005)
    printed = {s.strip(): t for t, s in out.writes if s.strip()}
    assert list(printed) == ["» Spank …", "» the …", "» PIG!"]
    # the go-word is never shown before it sounds (a timer may wake a hair early: 1 ms)
    assert printed["» PIG!"] >= cue - 1000
    # and the beats are a tempo apart, not all at once
    assert printed["» the …"] - printed["» Spank …"] >= 199_000
    assert printed["» PIG!"] - printed["» the …"] >= 199_000


def test_a_simulated_clock_prints_the_whole_cadence_at_once() -> None:
    out = io.StringIO()
    now = [5_000_000]
    voice = PrintAnnouncer(out, lead_ms=100, clock=lambda: now[0])
    cue = voice.cadence("spank", {}, 500)
    assert cue == 5_000_000 + 100_000 + 2 * 500_000
    assert out.getvalue() == "  » Spank … the … PIG!\n"
