"""A quiz-buzzer evening and a Snap evening on a simulated clock: real espeak-ng speech played by the
recording sink, a real SQLite file, mocked pins, and the real pages in headless Chromium at phone
and TV size, from the deal to the winner and on to the next game (issue 26).

With REFEREE_SCREEN_ARTIFACTS=1 the pages' screenshots are kept under test-artifacts/evenings/ for
a person to look at."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from referee.store.tablelog import replay
from tests.harness import SimTable

SEATS = ["Ann", "Bob", "Cy"]
PIN = "4321"
PIN_KEY = "tableReferee.pin"  # where the pages keep the PIN for the tab (common.js)
VIEWPORTS = {"phone": (390, 844), "tv": (1920, 1080)}
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "evenings"


@pytest.fixture
def sim(tmp_path: Path, mock_factory: MockFactory, speech_cache: Path) -> Iterator[SimTable]:
    table = SimTable(tmp_path / "evening.db", mock_factory, SEATS, speech_cache)
    try:
        yield table
    finally:
        table.close()


class Pages:
    """The table page at phone and TV size and the judge panel on a phone, following the table
    through its event stream."""

    def __init__(self, browser: Any, url: str, game: str) -> None:
        self.game = game
        self.contexts = []
        self.pages: dict[str, Any] = {}
        for name, path, viewport in (("table-phone", "", "phone"), ("table-tv", "", "tv"),
                                     ("judge-phone", "judge", "phone")):
            width, height = VIEWPORTS[viewport]
            context = browser.new_context(viewport={"width": width, "height": height})
            context.add_init_script(f"sessionStorage.setItem('{PIN_KEY}', '{PIN}')")
            self.contexts.append(context)
            page = context.new_page()
            page.set_default_timeout(10_000)
            page.goto(url + path)
            self.pages[name] = page

    def shows(self, name: str, selector: str, text: str) -> None:
        self.pages[name].wait_for_function(
            "([sel, text]) => [...document.querySelectorAll(sel)].some("
            "e => !e.closest('[hidden]') && e.textContent.includes(text))",
            arg=[selector, text], timeout=10_000)

    def shot(self, moment: str, tmp: Path) -> None:
        keep = os.environ.get("REFEREE_SCREEN_ARTIFACTS") == "1"
        out = ARTIFACTS if keep else tmp
        out.mkdir(parents=True, exist_ok=True)
        for name, page in self.pages.items():
            page.screenshot(path=str(out / f"{self.game}-{name}-{moment}.png"))

    def close(self) -> None:
        for context in self.contexts:
            context.close()


def lit(sim: SimTable) -> set[str]:
    """The seats whose LEDs are lit, once the cue light's flash is over (a real 200 ms timer of
    the box: the only wall-clock wait here)."""
    box = sim.table.box
    time.sleep(0.4)
    chained = {s for s, bit in box._chain_bit.items() if box._chain_bits >> bit & 1}
    return chained | {s for s, led in box._leds.items() if led.value}


def ready_all(sim: SimTable) -> None:
    sim.until(lambda s: s["phase"] == "ready")
    for seat in SEATS:
        sim.press(seat)


def question(sim: SimTable, before: int | None = None) -> int:
    """Run until the next round's go-word has sounded (after round `before`, by default the
    latest); returns its cue time."""
    before = sim.engine.rules.round_count() if before is None else before
    sim.until(lambda s: s["phase"] == "race" and sim.engine.rules.round_count() > before)
    cue = sim.engine.last_cue_us
    assert cue is not None
    return cue


QUIZ_SAID = [
    "2 questions. Buzz when you know the answer, once the referee says Buzzers.",
    "Press your slap button when you're ready.",
    "Here we go.",
    "Next question. … Buzzers!",
    "Ann: buzzed early: locked out.",
    "Bob: buzzed first.",
    "Judge: Right or wrong?",
    "Bob: answered wrong.",
    "Cy: answers next.",
    "Judge: Right or wrong?",
    "Cy: answered right. One point.",
    "Next question. … Buzzers!",
    "Cy: buzzed first.",
    "Judge: Right or wrong?",
    "Cy: answered right. One point.",
    "Game over. Cy, two points. Ann, zero points. Bob, zero points.",
    "Cy is the champion!",
    "2 questions. Buzz when you know the answer, once the referee says Buzzers.",
    "Press your slap button when you're ready.",
    "Here we go.",
]


def test_a_quiz_evening_from_the_first_question_to_the_champion_and_the_next_game(
        sim: SimTable, browser: Any, tmp_path: Path) -> None:
    from referee.scoreboard.app import serve_in_thread

    sim.table.pin = PIN
    sim.start("quiz", {"questions": "2", "pause_ms": "300"})
    server = serve_in_thread(sim.table, "127.0.0.1", 0)
    pages = Pages(browser, server.url, "quiz")
    try:
        ready_all(sim)
        # the rounds are the judge's: after the count-in nothing is called, however long
        sim.until(lambda s: "Here we go." in sim.said())
        sim.wait(20_000)
        assert sim.said()[-1] == "Here we go." and sim.engine.rules.round_count() == 0
        pages.shows("judge-phone", "#next-round", "Next question")
        pages.shows("table-phone", "#phase", "Judge: Next question")
        pages.shot("waiting-for-the-judge", tmp_path)

        sim.key("yes")  # the keypad's YES: the next question
        sim.until(lambda s: s["phase"] == "cadence")
        call_at = sim.clock.t
        sim.press("Ann", call_at + 600_000)  # in the moment before "Buzzers!": early
        cue = question(sim, 0)
        assert 1_400_000 <= cue - call_at <= 1_700_000  # "Buzzers!" a moment after the judge
        sim.press("Bob", cue + 300_000)
        sim.press("Ann", cue + 350_000)  # locked out: counts for nothing
        sim.press("Cy", cue + 520_000)
        sim.until(lambda s: s["awaiting"] is not None)
        assert lit(sim) == {"Bob"}  # the named seat's LED
        pages.shows("judge-phone", "#question-facts", "Wrong: Bob")
        pages.shows("table-tv", "main", "buzzed first")
        pages.shot("bob-named", tmp_path)
        sim.key("no")  # Bob answered wrong: Cy is named next
        sim.until(lambda s: (s["words"] or {}).get("named") == "Cy")
        assert lit(sim) == {"Cy"}
        pages.shows("judge-phone", "#question-facts", "Right: Cy")
        pages.shows("table-tv", "main", "answers next")
        for name in ("table-tv", "table-phone"):  # named, not scored: as said, no "±0 points"
            shown = pages.pages[name].inner_text("main")
            assert "answered wrong" in shown and "±0" not in shown, shown
        pages.shot("cy-named", tmp_path)
        sim.key("yes")  # right
        sim.until(lambda s: s["awaiting"] is None and s["phase"] != "race")
        assert lit(sim) == set()

        # the second question from the judge panel's button
        sim.wait(2000)
        pages.pages["judge-phone"].click("#next-round")
        cue = question(sim, 1)
        sim.press("Cy", cue + 250_000)
        sim.press("Bob", cue + 600_000)
        sim.until(lambda s: s["awaiting"] is not None)
        pages.shows("judge-phone", "#question-facts", "Right: Cy")
        pages.pages["judge-phone"].click("#question-facts button[data-value=right]")
        sim.until(lambda s: s["phase"] == "over")
        pages.shows("table-tv", "main", "Cy")
        pages.shot("over", tmp_path)

        sim.wait(20_000)  # the end said: the next game's first words, then its ready step
        for seat in SEATS:
            sim.press(seat)
        sim.until(lambda s: s["game_id"] == 2 and sim.said().count("Here we go.") == 2)
        sim.wait(10_000)
        pages.shot("next-game", tmp_path)
    finally:
        pages.close()
        server.close()
    said = sim.said()
    print("\nFIGURE quiz evening phrases:\n  " + "\n  ".join(said))
    assert said == QUIZ_SAID
    log = sim.log()
    starts = [i for i, line in enumerate(log) if json.loads(line)["type"] == "game"]
    assert json.loads(log[0]).get("declared") is None  # a shipped game is found by name
    out = replay(log[:starts[1]])  # the first game's log replays to the same champion
    assert out.standings.winners == ("Cy",)


SNAP_SAID_START = [
    "Deal all fifty-two cards face down, as evenly as they go, and keep your stack face down.",
    "Press your slap button when you're ready.",
    "Here we go.",
    "Ann, … flip!",
    "Bob: wrong snap by 100 milliseconds. One card lost.",  # the first card: it cannot match
    "Ann: given a card. One card.",
    "Bob gives Ann one card.",  # what changed hands, as the card stacks say it
    "Bob, … flip!",
    "Ann: first to snap by 80 milliseconds. Two cards.",
    "Ann takes the pile: two cards.",
    "Cy, … flip!",  # onto the empty pile: nobody presses
    "Ann, … flip!",
    "Judge: Snap or no snap?",  # only Bob pressed
    "Bob: wrong snap. One card lost.",
    "Ann: given a card. One card.",
    "Bob gives Ann one card.",
]


def test_a_snap_evening_from_the_deal_to_the_winner_and_the_next_game(
        sim: SimTable, browser: Any, tmp_path: Path) -> None:
    from referee.scoreboard.app import serve_in_thread

    sim.table.pin = PIN
    sim.start("snap", {"flips": "6", "pause_ms": "300", "turn_ms": "2500", "tempo_ms": "300",
                       "window_ms": "1500"})
    server = serve_in_thread(sim.table, "127.0.0.1", 0)
    pages = Pages(browser, server.url, "snap")
    try:
        ready_all(sim)
        cue = question(sim)  # flip 1, Ann's: the first card onto the empty pile
        sim.press("Bob", cue + 300_000)
        sim.press("Ann", cue + 400_000)
        sim.press("Cy", cue + 450_000)
        cue = question(sim)  # flip 2, Bob's: a snap everyone presses, Ann first
        sim.press("Ann", cue + 250_000)
        sim.press("Cy", cue + 330_000)
        sim.press("Bob", cue + 400_000)
        sim.until(lambda s: any(r["delta"] == 2 for r in s["rulings"]))
        pages.shows("table-tv", "main", "first to snap")
        pages.shot("ann-takes-the-pile", tmp_path)
        question(sim)  # flip 3, Cy's, onto the empty pile: nobody presses
        cue = question(sim)  # flip 4, Ann's: only Bob presses: the judge is asked
        sim.press("Bob", cue + 300_000)
        sim.until(lambda s: s["awaiting"] is not None)
        pages.shows("judge-phone", "#question-title", "Snap or no snap?")
        sim.wait(3000)  # the question is said
        pages.shot("judge-asked", tmp_path)
        pages.pages["judge-phone"].click("#question-facts button[data-value=false]")
        sim.until(lambda s: s["phase"] == "over", limit_ms=120_000)  # flips 5 and 6: quiet
        pages.shows("table-tv", "main", "Game over")
        pages.shot("over", tmp_path)
        sim.wait(20_000)
        for seat in SEATS:
            sim.press(seat)
        sim.until(lambda s: s["game_id"] == 2 and sim.said().count("Here we go.") == 2)
        sim.wait(1000)
        pages.shot("next-game", tmp_path)
    finally:
        pages.close()
        server.close()
    said = sim.said()
    print("\nFIGURE snap evening phrases:\n  " + "\n  ".join(said))
    assert said[:len(SNAP_SAID_START)] == SNAP_SAID_START
    end = said.index("Ann is the champion!")
    assert said[end - 3:end] == ["Bob, … flip!", "Cy, … flip!",  # two quiet flips
                                 "Game over. Ann, 20 cards. Cy, 15 cards. Bob, 13 cards."]
    assert said[end + 1:end + 4] == [SNAP_SAID_START[0], SNAP_SAID_START[1], "Here we go."]
