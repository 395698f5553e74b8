"""A Slapjack evening and a Halli Galli evening on a simulated clock (real espeak-ng speech played
by the recording sink, a real SQLite file, mocked pins) with the real table page at phone and TV
size in headless Chromium: from the deal to the winner and on to the next game's deal. What the
voice said is asserted in order; the pages are checked for every seat's cards and the centre pile
(Halli Galli: each seat's face-up pile), and screenshots are written for a person to look at."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from tests.harness import SimTable

SEATS = ["Ann", "Bob", "Cy"]
READY = "Press your slap button when you're ready."
SIZES = {"phone": (390, 844), "tv": (1920, 1080)}
SHOTS = Path(os.environ.get("EVENING_SHOTS", "")) if os.environ.get("EVENING_SHOTS") else None


class Pages:
    """The table page at phone and TV size, following the table through its event stream."""

    def __init__(self, browser: Any, url: str) -> None:
        self.pages = {}
        for name, (w, h) in SIZES.items():
            page = browser.new_page(viewport={"width": w, "height": h})
            page.set_default_timeout(10_000)
            page.goto(url)
            self.pages[name] = page

    def shows(self, selector: str, text: str) -> None:
        for page in self.pages.values():
            page.wait_for_function(
                "([sel, text]) => [...document.querySelectorAll(sel)].some("
                "e => !e.closest('[hidden]') && e.textContent.includes(text))",
                arg=[selector, text], timeout=10_000)

    def seat_text(self, seat: str) -> list[str]:
        return [p.locator(f"[data-seat={seat}]").inner_text() for p in self.pages.values()]

    def fits(self) -> None:
        """Nothing spills sideways on either screen, and the TV page is one screen."""
        for name, page in self.pages.items():
            w, h = SIZES[name]
            assert page.evaluate("document.documentElement.scrollWidth") <= w, name
            clipped = page.evaluate("""() => [...document.querySelectorAll('.seat, .seat *')]
              .filter((e) => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0
                      && !e.classList.contains('name'))
              .map((e) => e.className + ': ' + e.textContent)""")
            assert clipped == [], (name, clipped)  # every seat's cards in full
            if name == "tv":
                assert page.evaluate("document.documentElement.scrollHeight") <= h, name

    def shot(self, label: str) -> None:
        if SHOTS is not None:
            SHOTS.mkdir(parents=True, exist_ok=True)
            for name, page in self.pages.items():
                page.screenshot(path=str(SHOTS / f"{label}-{name}.png"))

    def close(self) -> None:
        for page in self.pages.values():
            page.close()


@pytest.fixture
def table(tmp_path: Path, mock_factory: MockFactory, speech_cache: Path,
          browser: Any) -> Iterator[tuple[SimTable, Pages]]:
    from referee.scoreboard.app import serve_in_thread

    sim = SimTable(tmp_path / "cards.db", mock_factory, SEATS, speech_cache)
    server = serve_in_thread(sim.table, "127.0.0.1", 0)
    pages = Pages(browser, server.url)
    try:
        yield sim, pages
    finally:
        pages.close()
        server.close()
        sim.close()


def next_flip(sim: SimTable) -> int:
    """Run to the next flip's race; its cue time."""
    before = sim.engine.rules.round_count()
    sim.until(lambda s: s["phase"] == "race" and sim.engine.rules.round_count() > before)
    cue = sim.engine.last_cue_us
    assert cue is not None
    return cue


def ready_all(sim: SimTable) -> None:
    sim.until(lambda s: s["phase"] == "ready")
    for seat in SEATS:
        sim.press(seat)


SLAPJACK = {"flips": "6", "turn_ms": "1500", "tempo_ms": "200", "window_ms": "1000",
            "pause_ms": "300"}
SLAPJACK_DEAL = ("Deal all fifty-two cards face down, one at a time, starting with Ann. "
                 "Slap the jacks.")


def test_a_slapjack_evening_from_the_deal_to_the_winner(table: tuple[SimTable, Pages]) -> None:
    sim, pages = table
    sim.start("slapjack", SLAPJACK)
    pages.shows("#phase", "Ready? 0 of 3")
    pages.shows("[data-seat=Ann] .num", "18")  # the deal: the first seat gets the extra card
    pages.shows("[data-seat=Cy] .num", "17")
    pages.shows("#round", "Flip 0 of 6 · pile 0 cards")
    ready_all(sim)
    next_flip(sim)  # 1, Ann's: nobody slaps
    cue = next_flip(sim)  # 2, Bob's: a Jack, everyone slaps, Cy first
    for i, seat in enumerate(["Cy", "Ann", "Bob"]):
        sim.press(seat, cue + (200 + 40 * i) * 1000)
    sim.until(lambda s: s["phase"] == "ruled")
    pages.shows("#ruling-lines", "first to slap the jack")
    pages.shows("[data-seat=Cy] .num", "19")
    pages.shows("#round", "Flip 2 of 6 · pile 0 cards")
    pages.shot("slapjack-take")
    cue = next_flip(sim)  # 3, Cy's: Ann alone slaps: the judge is asked, the keypad says no
    sim.press("Ann", cue + 300_000)
    sim.until(lambda s: s["phase"] == "awaiting")
    pages.shows("#banner", "Jack or no jack?")
    pages.shot("slapjack-judge")
    sim.key("no")
    sim.until(lambda s: s["phase"] == "ruled")
    pages.shows("[data-seat=Ann] .num", "16")  # flipped one, gave Cy one
    pages.shows("#round", "Flip 3 of 6 · pile 1 card")
    for _ in range(3):  # 4, 5, 6: nobody slaps
        next_flip(sim)
    sim.until(lambda s: s["phase"] == "over")
    pages.shows("#winner", "Champion: Cy!")
    pages.shows("#round", "Flip 6 of 6 · pile 4 cards")
    assert [t.split("\n")[0] for t in pages.seat_text("Cy")] == ["Cy", "Cy"]
    pages.fits()
    pages.shot("slapjack-over")
    sim.wait(20_000)  # the end is said once; then the next game's deal and its Ready step
    said = sim.said()
    print("\nFIGURE slapjack evening phrases:\n  " + "\n  ".join(said))
    flip = "{}, … flip!".format
    assert said == [
        SLAPJACK_DEAL, READY, "Here we go.",
        flip("Ann"), flip("Bob"),
        "Cy: first to slap the jack by 40 milliseconds. Two cards.",
        "Cy takes the pile: two cards.",
        flip("Cy"), "Judge: Jack or no jack?",
        "Ann: slapped no jack. One card given.",
        "Cy: given a card for a wrong slap. One card.",
        "Ann gives Cy one card.",
        flip("Ann"), flip("Bob"), flip("Cy"),
        "Game over. Cy, 18 cards. Ann, 15 cards. Bob, 15 cards.",
        "Cy is the champion!",
        SLAPJACK_DEAL, READY]
    for seat in SEATS:  # the next game: each seat ready once, a new deal on the page
        sim.press(seat)
    sim.until(lambda s: s["game_id"] == 2)
    pages.shows("[data-seat=Bob] .num", "17")
    pages.shows("[data-seat=Cy] .num", "17")
    pages.shot("slapjack-next")


HALLI = {"turn_ms": "1500", "tempo_ms": "200", "window_ms": "1000", "pause_ms": "300"}
HALLI_DEAL = ("Deal all fifty-six cards face down, one at a time, starting with Ann. "
              "Ring the bell on exactly five of a fruit.")


def test_a_halli_galli_evening_from_the_deal_to_the_winner(
        table: tuple[SimTable, Pages]) -> None:
    sim, pages = table
    sim.start("halli-galli", HALLI)
    pages.shows("#phase", "Ready? 0 of 3")
    pages.shows("[data-seat=Ann] .stack", "19 face down · 0 face up")
    pages.shows("[data-seat=Cy] .stack", "18 face down · 0 face up")
    ready_all(sim)
    for _ in range(3):  # Ann, Bob, Cy flip: nobody rings
        next_flip(sim)
    pages.shows("[data-seat=Bob] .stack", "18 face down · 1 face up")
    cue = next_flip(sim)  # Ann's second: five bananas; everyone rings, Bob first
    for i, seat in enumerate(["Bob", "Cy", "Ann"]):
        sim.press(seat, cue + (250 + 30 * i) * 1000)
    sim.until(lambda s: s["phase"] == "ruled")
    pages.shows("#ruling-lines", "first to ring on five")
    pages.shows("[data-seat=Bob] .stack", "22 face down · 0 face up")
    pages.shot("halli-take")
    cue = next_flip(sim)  # Bob's: Cy rings alone, wrongly (the judge: not five)
    sim.press("Cy", cue + 200_000)
    sim.until(lambda s: s["phase"] == "awaiting")
    pages.shows("#banner", "Five or not five?")
    sim.key("no")
    sim.until(lambda s: s["phase"] == "ruled")
    pages.shows("[data-seat=Cy] .stack", "15 face down · 0 face up")
    pages.fits()
    pages.shot("halli-paid")
    next_flip(sim)  # Cy's
    sim.until(lambda s: s["phase"] == "ruled" or s["phase"] == "cadence")
    sim.engine.command("end")  # the judge ends the evening's game: the most cards wins
    sim.until(lambda s: s["phase"] == "over")
    pages.shows("#winner", "Champion: Bob!")
    pages.fits()
    pages.shot("halli-over")
    sim.wait(20_000)
    said = sim.said()
    print("\nFIGURE halli galli evening phrases:\n  " + "\n  ".join(said))
    flip = "{}, … flip!".format
    assert said == [
        HALLI_DEAL, READY, "Here we go.",
        flip("Ann"), flip("Bob"), flip("Cy"), flip("Ann"),
        "Bob: first to ring on five by 30 milliseconds. Three cards.",
        "Bob takes the face-up cards: three cards.",
        flip("Bob"), "Judge: Five or not five?",
        "Cy: rang with no five. Two cards paid.",
        "Ann: given a card for a wrong ring. One card.",
        "Bob: given a card for a wrong ring. One card.",
        "Cy gives Ann and Bob one card each.",
        flip("Cy"),
        "Game over. Bob, 23 cards. Ann, 18 cards. Cy, 15 cards.",
        "Bob is the champion!",
        HALLI_DEAL, READY]
