"""The go-word's DAC time on a card whose pointer steps (tests/fakeaudio.py, tests/dacsim.py).

PortAudio's ALSA host API reads ``snd_pcm_status``: the DAC time it hands the callback is
``htstamp + (appl_ptr - hw_ptr) / rate``, and ``hw_ptr`` moves only at the card's period
boundaries (behind dmix: every 1024 frames at 48 kHz), so every reading is late by how long
after the pointer's step PortAudio's thread ran. A table's speaker is simulated for 40 s of
stream time: one wake-up in ten 3-15 ms late (a busy Zero 2 W), the Python callback entered
0.1 ms + an exponential 0.8 ms after PortAudio stamped it, and the thread held up 120 ms (past
the 50 ms queued: an xrun) four times. After every callback, the sink's map is compared with
the instant that frame really reaches the DAC.

Bounds (late is +): with today's kernels' stamps (``htstamp`` at the status call), every cue
within 0 to +0.5 ms, from the first callback on and at once after an xrun; with stamps at
the pointer's last step (older kernels; ``stream.time`` then lags too), within 0 to +1.5 ms
from the 25th callback after a restart (0.1-0.5 s). What is left is the smallest wake-up
delay in the window (about a second of readings): nothing on the callback's side can see how
long before it the pointer stepped.
"""

from __future__ import annotations

import pytest

from tests.dacsim import simulate

XRUNS = (8.0, 16.0, 24.0, 32.0)


def python_entry_us(rng: object) -> int:
    return int(100 + rng.exponential(800))  # type: ignore[attr-defined]


@pytest.mark.parametrize("tstamp, bound_us, settle", [("now", 500, 0), ("step", 1500, 25)])
@pytest.mark.parametrize("block_ms", [5, 10, 21])
def test_a_stepping_pointer_puts_every_cue_within_the_bound_of_the_true_dac_instant(
        tstamp: str, bound_us: float, settle: int, block_ms: int) -> None:
    run = simulate(40, tstamp=tstamp, xruns_at=XRUNS, block_ms=block_ms, entry_us=python_entry_us)
    assert run.xruns == len(XRUNS)
    errors = run.steady(skip_s=0.5, after_xrun=settle)
    assert len(errors) > 1500
    assert -50 <= min(errors) and max(errors) <= bound_us, (min(errors), max(errors))


def test_the_first_callback_after_an_xrun_is_back_within_the_bound() -> None:
    """ALSA stopped the card and PortAudio restarted it: every later frame plays later by the
    gap (70 ms here), and PortAudio flags that callback paOutputUnderflow."""
    run = simulate(30, xruns_at=(10.0, 20.0), entry_us=python_entry_us)
    for k in (0, 1, 3, 10, 50):
        after = run.after_xruns(k)
        assert len(after) == 2 and all(-1 <= e <= 500 for e in after), (k, after)


def test_an_unflagged_shift_is_followed_within_a_third_of_a_second() -> None:
    """A host API that restarts without paOutputUnderflow: the readings, all later than the
    window's best by the same gap, are believed after 0.2 s of frames."""
    run = simulate(30, xruns_at=(10.0, 20.0), flag_xruns=False, block_ms=10)
    assert min(run.after_xruns(0)) < -60_000  # the gap itself, before anything knows of it
    for k in range(32, 200):  # 10 ms blocks: 0.32 s on
        assert all(-1 <= e <= 500 for e in run.after_xruns(k)), (k, run.after_xruns(k))


def test_one_wild_reading_moves_nothing() -> None:
    """A wall-clock step between PortAudio's stamp and the stream.time read (ALSA stamps by
    gettimeofday) gives one reading far off, either way: it is not believed. A pre-empted read
    (a wide bracket around stream.time) counts as late as it may be, never early."""
    from referee.voice.audio import DacClock

    clock = DacClock(48000)
    truth = 7_000_000
    for block in range(200):
        frame = block * 480
        wild = {100: -1_000_000.0, 101: -40_000.0, 150: +250_000.0}.get(block, 0.0)
        bracket = 900 if block == 120 else 0  # read 900 µs apart; stamped at the midpoint
        early = -450 if block == 120 else 0  # ... and the read was at the bracket's start
        clock.update_at(frame, truth + frame / 48 * 1000 + 150 + wild + early, bracket_us=bracket)
        assert truth + 150 <= clock.frame_to_us(0, 0) <= truth + 151, block
