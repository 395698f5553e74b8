"""The judge's End while a call is being said cuts the call off: nothing of the old game is said
after the champion (before: "flip!" came after "Blue is the champion!")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.harness import SimTable


def test_the_end_cuts_off_the_call_being_said(
        tmp_path: Path, sim_table: Callable[..., SimTable], speech_cache: Path) -> None:
    seats = ["Blue", "Red"]
    sim = sim_table(seats, speech_cache)
    sim.start("pigs-tail", {"turn_ms": "3000", "tempo_ms": "400", "window_ms": "1000",
                            "pause_ms": "200"})
    sim.until(lambda s: s["phase"] == "ready")
    for seat in seats:
        sim.press(seat)
    sim.until(lambda s: s["phase"] == "cadence")
    call = next(r for r in sim.sink.records if r.kind == "cadence")
    go_frame = call.item.frame + round((sim.engine.cue_us - call.t_us)  # type: ignore[operator]
                                       * sim.sink.samplerate / 1e6)
    sim.sink.play_until(sim.clock.t)
    assert sim.sink.mixer.next_frame < go_frame  # "Blue," is being said, "flip!" is to come
    sim.engine.command("end")
    # the call is dropped, or fades out before its go-word
    assert all(i.end < go_frame for i in sim.sink.mixer._items if i is call.item)
    assert call.item.end < go_frame or call.item not in sim.sink.mixer._items
    sim.wait(15_000)
    said = sim.said()
    champion = said.index(next(s for s in said if "champion" in s))
    assert [s for s in said[champion:] if "flip" in s] == []
    assert sim.engine.command("snapshot")["phase"] == "over"
