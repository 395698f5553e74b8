"""A game made up inside the tests plays through every part: the engine on a simulated clock,
the real voice into a recording sink, the scoreboard's API, and `referee replay`.

Nothing outside `tests/` knows the game: it is registered here and its words are added to the
phrase table here, as a new game module and its translation would be.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.cli.main import main as cli_main
from referee.cli.table import Table
from referee.config import default_config
from referee.engine.loop import Engine, open_game
from referee.events import GameStart, JudgeKey, Press
from referee.scoreboard.app import create_app
from referee.store.database import export_lines
from referee.voice.audio import RecordingSink, speech_rms_db
from referee.voice.speech import Renderer, SpeechAnnouncer, SpeechOptions
from tests.harness import SimClock, register_game, settle
from tests.made_up_game import FirstAfterTheBeep

SEATS = ("Ann", "Bob", "Cy")
PIN = "2468"
RATE = 22050
MS = 1000  # µs


@pytest.fixture
def beep_game(monkeypatch: pytest.MonkeyPatch) -> type[FirstAfterTheBeep]:
    register_game(monkeypatch, FirstAfterTheBeep)  # its phrases come with it: nothing to add
    return FirstAfterTheBeep


class Run:
    """The table of one test: the engine thread on the simulated clock, the voice, the app."""

    def __init__(self, tmp_path: Path, cache: Path) -> None:
        self.clock = SimClock(5_000_000)
        self.sink = RecordingSink(RATE, clock=self.clock)
        self.sink.start()
        self.voice = SpeechAnnouncer(Renderer(SpeechOptions(cache_dir=cache)),
                                     self.sink, out=io.StringIO())
        self.table = Table(default_config(list(SEATS)), db=tmp_path / "table.db",
                           announcer=self.voice, box=False, pin=PIN, mock=True)
        options = self.table.game_options(FirstAfterTheBeep.NAME, {
            "rounds": 3, "tempo_ms": 200, "pause_ms": 400, "window_ms": 1000})
        self.engine: Engine = open_game(self.table.store,
                                        GameStart(FirstAfterTheBeep.NAME, SEATS, options),
                                        self.voice, clock=self.clock)
        self.table.engine = self.engine  # the composition root, with the simulated clock
        self.voice.warm([*FirstAfterTheBeep.PHRASES["beep"]], wait=True)  # ready before a cue
        self.engine.start()
        self.engine.command("start")  # the judge starts play from the Ready step
        self.client = create_app(self.table).test_client()

    def at(self, t_us: int) -> dict[str, Any]:
        """Move time to `t_us`, let the voice play up to it and the engine act on it."""
        self.clock.to(t_us)
        deadline = time.monotonic() + 10
        while self.sink.frame_to_us(self.sink.mixer.next_frame) < self.clock() - 20 * MS:
            assert time.monotonic() < deadline, "the recording sink did not keep up"
            time.sleep(0.001)
        # the engine acts on the new time before answering (a second "snapshot" could be taken
        # from the queue in the same turn as the first, before that turn's step), and until it
        # has nothing more to do now: one step is one decision (a cue, then a window's close)
        return settle(self.engine, self.clock)

    def call(self) -> int:
        """Let time run until the next call's go-word has sounded; its cue time."""
        for _ in range(200):
            snap = self.at(self.clock() + 100 * MS)
            cue = self.engine.last_cue_us
            if snap["phase"] == "race" and cue is not None and cue <= self.clock():
                return cue
        raise AssertionError(f"no call came: {self.engine.snapshot()}")

    def press(self, seat: str, t_us: int) -> None:
        self.engine.submit(Press(t_us, seat))

    def said(self) -> list[str]:
        assert self.voice.idle(timeout=60)
        return [r.label for r in self.sink.records]

    def close(self) -> None:
        self.table.close()  # stops the engine, closes the voice and the store
        self.sink.close()


@pytest.fixture
def run(beep_game: type[FirstAfterTheBeep], tmp_path: Path, speech_cache: Path) -> Iterator[Run]:
    table = Run(tmp_path, speech_cache)
    try:
        yield table
    finally:
        table.close()


def test_the_made_up_game_plays_through_every_part(run: Run, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # -- round 1: Ann first by 110 ms
    cue = run.call()
    assert run.voice.cues[-1].beats == ("Ready,", "BEEP!")  # the call the game declared
    assert run.voice.cues[-1].cue_us == cue  # the logged cue is when the go-word sounds
    run.press("Ann", cue + 150 * MS)
    run.press("Bob", cue + 260 * MS)
    snap = run.at(cue + 300 * MS)
    assert snap["rulings"] == [{"type": "ruling", "round": 1, "seat": "Ann", "delta": 1,
                                "reason": "first after the beep", "margin_us": 110_000}]
    assert snap["rulings_said"] == [{
        "said": "Ann: first after the beep by 110 milliseconds. One point.",
        "what": "first after the beep by 110 milliseconds"}]
    assert snap["words"] == {"unit": ["point", "points"], "pressed": "pressed", "more_wins": True,
                             "zero_said": True,
                             "title": "First after the Beep", "penalties": ["judge's penalty"],
                             "next": "Next round now", "judge_starts": False}
    assert snap["rounds"] == 3

    # -- round 2: nobody presses; the judge is asked the game's own question
    cue = run.call()
    snap = run.at(cue + 1100 * MS)
    assert snap["phase"] == "awaiting" and snap["awaiting"] == {
        "type": "awaiting", "round": 2, "need": ["heard"]}
    assert snap["question"] == "Did everyone hear the beep?"  # the pages ask what the voice asks
    state = run.client.get("/api/state").get_json()
    assert state["facts"] == ["heard", "void"]
    assert state["fact_info"]["heard"]["answers"] == ["Heard", "Not heard"]
    refused = run.client.post("/api/facts", json={"round": 2, "heard": "yes"},
                              headers={"X-Table-Pin": PIN})
    assert refused.status_code == 400 and "heard must be true or false" in refused.get_json()["error"]
    answered = run.client.post("/api/facts", json={"round": 2, "heard": True},
                               headers={"X-Table-Pin": PIN})
    assert answered.status_code == 200, answered.get_json()
    assert run.at(run.clock() + 10 * MS)["awaiting"] is None

    # -- round 3: Bob jumps the gun (no point to lose), Cy is first
    run.at(run.clock() + 100 * MS)
    assert run.engine.rules.next_call() is not None
    cue = run.call()
    run.press("Bob", cue - 100 * MS)
    run.press("Cy", cue + 200 * MS)
    snap = run.at(cue + 300 * MS)
    assert [(r["seat"], r["delta"], r["reason"]) for r in snap["rulings"]] == [
        ("Bob", 0, "pressed before the beep"), ("Cy", 1, "first after the beep")]
    assert snap["phase"] == "over" and snap["final"] and snap["winners"] == ["Ann", "Cy"]
    assert [(r["seat"], r["score"], r["place"]) for r in snap["seats"]] == [
        ("Ann", 1, 1), ("Cy", 1, 1), ("Bob", 0, 3)]

    # -- the voice said it all, in the game's words, as real speech
    said = run.said()
    for phrase in ("3 beeps. First to press wins.", "Ready, … BEEP!",
                   "Ann: first after the beep by 110 milliseconds. One point.",  # the number, whole
                   "Judge: Did everyone hear the beep?",
                   "Cy: first after the beep. One point.",  # uncontested: no margin
                   "Ann and Cy are co-champions!"):  # said once, with the standings
        assert phrase in said, (phrase, said)
    call = next(r for r in run.sink.records if r.label == "Ready, … BEEP!")
    assert speech_rms_db(call.samples, RATE) > -35.0

    # -- the scoreboard's setup catalogue shows its options with their labels
    catalogue = run.client.get("/api/setup").get_json()
    beep = next(g for g in catalogue["games"] if g["name"] == "beep-race")
    assert beep["title"] == "First after the Beep" and beep["unit_words"] == ["point", "points"]
    options = {o["name"]: o for o in beep["options"]}
    assert options["early_ms"]["label"] == "Jumping the gun"
    assert (options["early_ms"]["kind"], options["early_ms"]["unit"]) == ("number", "ms")
    assert (options["early_ms"]["min"], options["early_ms"]["max"]) == (0, 5000)
    assert options["tempo_ms"]["kind"] == "choice" and options["tempo_ms"]["choices"] == [
        200, 300, 400]
    assert options["tie_us"]["label"] == "Too close to call"  # every game's own options too
    assert [f["name"] for f in beep["facts"]] == ["heard", "void"]
    assert "Jumping the gun" in run.client.get("/setup").get_data(as_text=True)

    # -- `referee replay` re-rules its exported log to the same rulings
    log = tmp_path / "beep.jsonl"
    conn = run.table.store.reader()
    try:
        log.write_text("\n".join(export_lines(conn, run.engine.game_id)) + "\n")
    finally:
        conn.close()
    capsys.readouterr()
    assert cli_main(["replay", str(log)]) == 0
    replayed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    live = [o.to_json() for o in run.engine.rules.outputs()]
    assert replayed[:-1] == live and len(live) == 3
    assert replayed[-1] == {"type": "standings", "final": True, "winners": ["Ann", "Cy"], "seats": [
        {"seat": "Ann", "score": 1, "place": 1, "out": False},
        {"seat": "Cy", "score": 1, "place": 1, "out": False},
        {"seat": "Bob", "score": 0, "place": 3, "out": False}]}


def test_the_judge_keypad_answers_with_the_game_s_own_yes_and_no(run: Run) -> None:
    cue = run.call()
    snap = run.at(cue + 1100 * MS)  # nobody pressed: the judge is asked
    assert snap["awaiting"]["need"] == ["heard"]
    run.engine.submit(JudgeKey(run.clock(), "no"))
    snap = run.at(run.clock() + 10 * MS)
    assert snap["awaiting"] is None
    assert run.engine.rules.facts_for(1) == {"heard": False}  # the declared NO
