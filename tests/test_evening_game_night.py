"""A scripted game night (issue 13): setup → practice → Ready → a whole Spank the Pig! game with an
early slap, a judge question, a correction of an older round, keypad UNDO, hold-to-pause and
resume, sudden death → champion; shorter evenings for Pig and Pig's Tail.

It runs on mocked pins (gpiozero MockFactory, edges at chosen ticks), real espeak-ng speech played
by the recording sink, a real SQLite file and — for the Spank evening — the real scoreboard in
headless Chromium following the table through its event stream. Time is simulated
(`tests/harness.py`), so the same script gives the same table log, and the test asserts what the
recording sink was given to say, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from referee.events import Facts, Penalty
from tests.harness import SimTable

SEATS = ["Blue", "Red", "Green"]
SPANK = {"deck": "15", "tempo_ms": "200", "pause_ms": "300", "window_ms": "800",
         "early_ms": "400", "doubles": "off", "stragglers": "no-one"}
CADENCE = "Spank … the … PIG!"
PIN = "4321"


@pytest.fixture
def cache(speech_cache: Path) -> Path:
    return speech_cache


@pytest.fixture
def sim(tmp_path: Path, sim_table: Callable[..., SimTable], cache: Path) -> Iterator[SimTable]:
    table = sim_table(SEATS, cache)
    yield table


class Page:
    """The table page in headless Chromium, checked by waiting for what it shows (no sleeps)."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def shows(self, selector: str, text: str) -> None:
        self.page.wait_for_function(
            "([sel, text]) => [...document.querySelectorAll(sel)].some("
            "e => !e.closest('[hidden]') && e.textContent.includes(text))",
            arg=[selector, text], timeout=10_000)


def slap_all(sim: SimTable, order: list[str], after_ms: int = 150, gap_ms: int = 30) -> None:
    """Everyone slaps after the cue of the current round, in this order (the last is last)."""
    before = sim.engine.rules.round_count()
    sim.until(lambda s: s["phase"] == "race" and sim.engine.rules.round_count() > before)
    cue = sim.engine.last_cue_us
    assert cue is not None
    for i, seat in enumerate(order):
        sim.press(seat, cue + (after_ms + i * gap_ms) * 1000)


def held(sim: SimTable, page: Page | None, phase: str, where: str, shown: str,
         ms: int) -> tuple[int, int]:
    """Run until the table holds in `phase` (the page showing it), then `ms` more: how many
    phrases had been said at both ends (nothing may be called in between)."""
    sim.until(lambda s: s["phase"] == phase)
    if page:
        page.shows(where, shown)
    first = len(sim.said())
    sim.wait(ms)
    return first, len(sim.said())


def spank_evening(sim: SimTable, page: Page | None = None,
                  start: Any = None) -> dict[str, Any]:
    """The script. Returns checkpoints (indexes into what was said) for the assertions."""
    marks: dict[str, Any] = {}
    said = sim.said
    if start is not None:
        start()  # the setup page's "practice" button
        sim.settle()
    else:
        sim.start("spank-the-pig", SPANK, practice=True)
    if page:
        page.shows("#phase", "Ready? 0 of 3")
    # practice: every seat ready, three rounds, then the real game's Ready step
    for seat in SEATS:
        sim.press(seat)
    for _ in range(3):
        slap_all(sim, ["Blue", "Red", "Green"])
    sim.until(lambda s: not s["practice"] and s["phase"] == "ready")
    marks["practice_end"] = len(said())
    if page:
        page.shows("#phase", "Ready? 0 of 3")
    # Ready: two seats, then a long wait: nothing is called before the last seat is ready
    sim.press("Blue")
    sim.press("Red")
    if page:
        page.shows("[data-seat=Red] .flag.ready", "ready")
        page.shows("#phase", "Ready? 2 of 3")
    sim.wait(8000)
    marks["before_last_ready"] = len(said())
    ready_at = sim.clock.t
    sim.press("Green")
    # round 1: Red slaps early (during the cadence), then everyone; Green is last
    sim.until(lambda s: s["phase"] == "cadence")
    cue = sim.engine.cue_us
    assert cue is not None
    marks["ready_to_cue_us"] = cue - ready_at
    sim.press("Red", cue - 150_000)
    sim.until(lambda s: s["phase"] == "race")
    for i, seat in enumerate(["Blue", "Red", "Green"]):
        sim.press(seat, cue + (150 + i * 30) * 1000)
    sim.until(lambda s: s["phase"] == "ruled")
    if page:
        page.shows("#ruling-lines", "Green")
    # round 2: only Blue slaps: the judge is asked, and the next round waits for the answer
    slap_all(sim, ["Blue"])
    marks["asked"], marks["answered"] = held(sim, page, "awaiting", "#banner",
                                             "Round 2 waits for the judge", 6000)
    sim.key("yes")  # keypad YES: there was a pig
    # round 3: Red last; then the judge corrects round 1 (two pigs): play goes on
    for order, judged in ((["Green", "Blue", "Red"], Facts(1, {"pigs": 2})),
                          # round 4: Blue last; the keypad cannot reach round 1 any more
                          (["Red", "Green", "Blue"], None)):
        slap_all(sim, order)
        number = sim.engine.rules.round_count()
        sim.until(lambda s, number=number: s["phase"] == "ruled" and s["round"] == number)
        if judged is not None:
            sim.engine.command("feed", event=judged)
    sim.key("undo")  # round 4, ruled from the presses alone, is the latest change: voided
    sim.settle()
    sim.key("undo")  # that void was a judge action: UNDO again restores round 4
    sim.settle()
    sim.engine.command("feed", event=Penalty(4, "Blue", 1, "slapped the hippo"))
    sim.settle()
    sim.key("undo")  # the penalty is the latest change now: withdrawn
    # hold-to-pause: Green holds the slap button 2 s; nothing is called while paused
    sim.press("Green", hold_ms=2100)
    marks["paused"], marks["still_paused"] = held(sim, page, "paused", "#phase", "Paused", 10_000)
    sim.press("Blue")  # a press while paused resumes (after a count-in); not a game press
    # round 5 (the last): Blue last → everyone on 2 whammies: sudden death for all three
    slap_all(sim, ["Green", "Red", "Blue"])
    # sudden death: Green last (out), then Red last (out): Blue is the champion
    slap_all(sim, ["Blue", "Red", "Green"])
    slap_all(sim, ["Blue", "Red"])
    sim.until(lambda s: s["phase"] == "over")
    if page:
        page.shows("#winner", "Champion: Blue!")
    sim.wait(20_000)  # the end is said once, and stays shown
    if page:
        page.shows("#winner", "Champion: Blue!")
    marks["log"] = sim.log()
    rate = sim.sink.samplerate
    marks["played"] = [(r.label, r.kind, r.t_us, r.t_us + round(len(r.samples) * 1e6 / rate))
                       for r in sim.sink.records]
    marks["cues"] = [c.cue_us for c in sim.voice.cues]
    marks["latch"] = list(sim.latch_up)
    return marks


R30 = "last to spank the pig by 30 milliseconds. One whammy."
EXPECTED = [
    # the practice's own short deck (3 cards a seat), never the real game's
    "Practice round.", "Deal 3 cards to each player.", "Press your slap button when you're ready.",
    "Here we go.",
    CADENCE, f"Green: {R30}", CADENCE, f"Green: {R30}", "Last round!", CADENCE, f"Green: {R30}",
    "Practice over. Now for real.",  # no sudden death, no champion: the real game's Ready step
    "Deal 5 cards to each player.", "Press your slap button when you're ready.",
    "Here we go.",  # after the last seat's ready press
    CADENCE, "Red: slap too early. One whammy.", f"Green: {R30}",
    CADENCE, "Judge: Pig or no pig?",  # held until the keypad YES: both late seats tie
    "Red and Green never slapped. Nobody loses.",  # stragglers = no-one: nobody takes it
    CADENCE, f"Red: {R30}",
    # an older round corrected (two pigs): what changed, then the round's new ruling; play goes on
    "Correction, round 1: Green, one whammy.",
    "Green: last to spank the pigs by 30 milliseconds. Two whammies.",
    CADENCE, f"Blue: {R30}", "Last round!",
    # keypad UNDO: round 4 was ruled from the presses alone, so it is voided; UNDO again restores
    "Round 4 voided.", f"Blue: {R30}",
    # the judge's penalty in the current round is said as a ruling; the keypad UNDO takes it back
    "Blue: slapped the hippo. One whammy.", "Correction, round 4: Blue, one off the whammy pile.",
    "Paused. Press your slap button to go on.",  # Green held the slap button for 2 s
    "Here we go.",  # Blue's press resumed
    CADENCE, f"Blue: {R30}", "Sudden death: Blue, Red and Green.",
    CADENCE, f"Green: {R30}", "Sudden death: Blue and Red.",
    CADENCE, f"Red: {R30}",
    "Game over. Blue, two whammies. Red, three whammies. Green, three whammies.",
    "Blue is the champion!",
    # once the end is said: the next game's deal and its one Ready step
    "Deal 5 cards to each player.", "Press your slap button when you're ready.",
]


def test_the_spank_evening_from_setup_to_champion(sim: SimTable, browser: Any) -> None:
    from referee.scoreboard.app import serve_in_thread

    sim.table.pin = PIN
    server = serve_in_thread(sim.table, "127.0.0.1", 0)
    page = browser.new_page()
    try:
        page.set_default_timeout(10_000)
        page.goto(server.url + "setup")

        def start() -> None:  # the setup page: a practice game of Spank the Pig!
            page.select_option("#game", "spank-the-pig")
            page.check("#practice")
            for name, value in SPANK.items():
                if name in ("doubles", "stragglers"):  # the choices
                    page.select_option(f"#opt-{name}", value)
                else:
                    page.fill(f"#opt-{name}", value)
            page.click("#start")
            page.locator("#pin-dialog").wait_for(state="visible")
            page.fill("#pin-input", PIN)
            page.click("#pin-form button[type=submit]")
            page.wait_for_url(server.url)  # on to the table page
            page.evaluate("""() => { window.flashes = [];
              const cue = document.getElementById("cue");
              new MutationObserver(() => { if (!cue.hidden) window.flashes.push(cue.textContent); })
                .observe(cue, {attributes: true, childList: true}); }""")

        marks = spank_evening(sim, Page(page), start=start)
        cadences = sim.said().count(CADENCE)
        page.wait_for_function(f"window.flashes.length >= {cadences}")
        assert set(page.evaluate("window.flashes")) == {"PIG!"}  # the page flashed the word
    finally:
        page.close()
        server.close()
    said = sim.said()
    print("\nFIGURE spank evening phrases:\n  " + "\n  ".join(said))
    print(f"FIGURE ready → first cue: {marks['ready_to_cue_us'] / 1000:.0f} ms (simulated clock)")
    check_evening(said, marks)


def check_evening(said: list[str], marks: dict[str, Any]) -> None:
    assert said == EXPECTED
    # pace: each cadence starts the pause (300 ms, here also the count-in) after the end of the
    # last phrase said before it — after the spoken ruling, not after the decision
    gaps = []
    spoken_until = 0
    for _label, kind, start, end in marks["played"]:
        if kind == "cadence" and spoken_until:
            gaps.append(start - spoken_until)
        spoken_until = max(spoken_until, end)
    assert gaps and all(300_000 <= gap <= 320_000 for gap in gaps), gaps
    # the cue light: the seat LEDs latch on at each go-word's instant, on the audio clock
    assert len(marks["cues"]) == said.count(CADENCE)
    assert set(marks["cues"]) <= set(marks["latch"])
    cadences = [i for i, s in enumerate(said) if s == CADENCE]
    # no cadence before every seat is ready (practice: before the three presses; real game)
    assert said.index("Here we go.") < cadences[0]
    real_ready = said.index("Press your slap button when you're ready.", marks["practice_end"] - 2)
    assert CADENCE not in said[real_ready:marks["before_last_ready"]]
    # the practice: three rounds, no sudden death and no champion, then the real Ready step
    practice = said[:marks["practice_end"]]
    assert practice.count(CADENCE) == 3 and "Practice over. Now for real." in practice
    assert not any("Sudden death" in s or "champion" in s for s in practice)
    # no cadence while the current round awaits the judge, nor while paused
    assert CADENCE not in said[marks["asked"]:marks["answered"]]
    assert CADENCE not in said[marks["paused"]:marks["still_paused"]]
    assert "Paused. Press your slap button to go on." in said
    # the correction of round 1 is said; the keypad UNDO voided round 4, restored it, then took
    # the round-4 penalty back
    assert any(s.startswith("Correction, round 1:") for s in said)
    assert said.index("Round 4 voided.") < said.index("Correction, round 4: Blue, one off the whammy pile.")
    # the end: each end-of-game phrase exactly once, after sudden death
    assert [s for s in said if s.startswith("Game over.")] == [said[-4]]
    assert said[-3] == "Blue is the champion!" and said.count("Blue is the champion!") == 1
    assert any(s.startswith("Sudden death: Blue, Red and Green") for s in said)
    # the early slap was ruled at once
    first = said.index(CADENCE, marks["before_last_ready"])
    assert said[first + 1] == "Red: slap too early. One whammy."
    assert 0 < marks["ready_to_cue_us"] < 5_000_000


def test_the_same_evening_twice_gives_the_same_table_log(
        tmp_path: Path, mock_factory: MockFactory, cache: Path) -> None:
    logs = []
    for run in ("first", "second"):
        sim = SimTable(tmp_path / f"{run}.db", mock_factory, SEATS, cache)
        try:
            marks = spank_evening(sim)
            check_evening(sim.said(), marks)
            logs.append(marks["log"])
        finally:
            sim.close()
        mock_factory.reset()
    assert logs[0] == logs[1]
    assert any('"type": "press"' in line for line in logs[0])


# -- shorter evenings: Pig (lives 3, co-winners) and Pig's Tail (both take modes) ------------------


def ready_all(sim: SimTable, seats: list[str]) -> None:
    sim.until(lambda s: s["phase"] == "ready")
    for seat in seats:
        sim.press(seat)


def test_a_pig_evening_with_three_lives_ends_with_co_winners(
        tmp_path: Path, sim_table: Callable[..., SimTable], cache: Path) -> None:
    sim = sim_table(SEATS, cache)
    sim.start("pig", {"lives": "3", "window_ms": "2000", "pause_ms": "300"})
    ready_all(sim, SEATS)
    sim.until(lambda s: "Pass!" in sim.said())  # ready opens the passing
    for i in range(3):  # Blue claims, Red follows, Green is caught napping: P, I, G
        sim.wait(1000)
        sim.press("Blue")
        sim.wait(100)
        sim.press("Red")
        sim.wait(2500)
        if i == 0:  # a break from the judge panel; Green's press resumes the passing
            sim.engine.command("pause")
            sim.wait(5000)
            sim.press("Green")
            sim.until(lambda s: sim.said().count("Pass!") == 2)  # after the count-in
    sim.until(lambda s: s["phase"] == "over")
    sim.wait(20_000)
    said = sim.said()
    print("\nFIGURE pig evening phrases:\n  " + "\n  ".join(said))
    lost = "Green: last to touch the nose. One life lost."
    assert said == [
        "Use the aces, twos and threes: one set of four per player. Deal four cards to each "
        "player.", "Four of a kind? Quietly touch your nose.",
        "Press your slap button when you're ready.", "Here we go.",
        "Pass!",  # ready opens the passing; no cadence after it
        lost, "Green takes the letter P.",
        "Paused. Press your slap button to go on.", "Here we go.", "Pass!",
        lost, "Green takes the letter I.", lost,  # the third life ends the game
        "Game over. Blue, zero lives lost. Red, zero lives lost. Green, three lives lost.",
        "Blue and Red are co-champions!",  # said once, however long the table waits
        # then the next game's deal and its one Ready step
        "Use the aces, twos and threes: one set of four per player. Deal four cards to each "
        "player.", "Four of a kind? Quietly touch your nose.",
        "Press your slap button when you're ready."]
    snap = sim.engine.command("snapshot")
    assert snap["winners"] == ["Blue", "Red"] and snap["phase"] == "over"
    presses = [line for line in sim.log() if '"type": "press"' in line]
    assert len(presses) == 6 and "Green" not in "".join(presses)  # ready, resume: no claims


@pytest.mark.parametrize("take", ["flipper", "slowest"])
def test_a_pigs_tail_evening_flips_a_real_ring_to_the_end_and_never_pauses_itself(
        tmp_path: Path, sim_table: Callable[..., SimTable], cache: Path, take: str) -> None:
    """52 flips of a shuffled ring, the table pressing exactly on the matches it sees: most flips
    are no match, and the table never pauses itself (before: after any 3 flips without a press,
    three times in one game)."""
    import random

    from tests.test_games_quiet_odds import pigs_tail_game

    quiet = pigs_tail_game(random.Random(7))
    assert max(len(r) for r in "".join("q" if q else " " for q in quiet).split()) >= 5
    seats = ["Blue", "Red"]
    sim = sim_table(seats, cache)
    sim.start("pigs-tail", {"take": take, "turn_ms": "600", "tempo_ms": "100",
                            "window_ms": "300", "pause_ms": "200"})
    ready_all(sim, seats)
    for turn in range(1, 53):
        before = sim.engine.rules.round_count()
        sim.until(lambda s, before=before: s["phase"] in ("race", "paused")
                  and (s["phase"] == "paused" or sim.engine.rules.round_count() > before))
        assert sim.engine.command("snapshot")["phase"] == "race", turn
        cue = sim.engine.last_cue_us
        assert cue is not None
        if not quiet[turn - 1]:  # a match: the table presses
            if take == "flipper":
                sim.press(seats[(turn - 1) % 2], cue + 150_000)  # the flipper claims
            else:
                sim.press("Blue", cue + 150_000)
                sim.press("Red", cue + 200_000)  # Red is slowest: takes the pile
    sim.until(lambda s: s["phase"] == "over")
    sim.wait(10_000)
    said = sim.said()
    assert not any("Paused" in s for s in said)
    assert said[:3] == ["Shuffle all fifty-two cards and lay them face down in a ring.",
                        "Press your slap button when you're ready.", "Here we go."]
    assert said[3] == "Blue, … flip!"  # ready leads to the first flip call
    assert sum(1 for s in said if s.endswith("flip!")) == 52
    assert len([s for s in said if s.startswith("Game over.")]) == 1
    end = said.index(next(s for s in said if s.startswith("Game over.")))
    assert said[end + 1].endswith("the champion!") or said[end + 1].endswith("co-champions!")
    # then the next game's deal and its Ready step, nothing else
    assert said[end + 2:] == ["Shuffle all fifty-two cards and lay them face down in a ring.",
                              "Press your slap button when you're ready."]
    takes = [s for s in said if "flipped a match" in s or "last to tap" in s]
    assert len(takes) == quiet.count(False)


def test_ready_to_the_first_cue_at_the_default_pace(
        tmp_path: Path, sim_table: Callable[..., SimTable], cache: Path) -> None:
    """The closing figure: from the last seat's ready press to "PIG!" with every default."""
    sim = sim_table(SEATS, cache, count_in_ms=1500)
    sim.start("spank-the-pig", {"doubles": "off"})
    sim.wait(30_000)  # the cards are dealt (and the deal said) before anyone presses
    for seat in SEATS:
        sim.press(seat)
    ready_at = sim.clock.t - 40_000  # the last press's edge (it was held 40 ms)
    sim.until(lambda s: s["phase"] == "cadence")
    cue = sim.engine.cue_us
    assert cue is not None
    rate = sim.sink.samplerate
    count_in = next(r for r in sim.sink.records if r.label == "Here we go.")
    cadence = next(r for r in sim.sink.records if r.label == CADENCE)
    said_until = count_in.t_us + round(len(count_in.samples) * 1e6 / rate)
    assert 1_500_000 <= cadence.t_us - said_until <= 1_510_000  # the count-in, after speech
    print(f"\nFIGURE ready → first cue (defaults: count-in 1500 ms, tempo 500 ms): "
          f"{(cue - ready_at) / 1000:.0f} ms = 'Here we go.' "
          f"{(said_until - count_in.t_us) / 1000:.0f} ms + count-in 1500 ms + cadence to "
          f"'PIG!' {(cue - cadence.t_us) / 1000:.0f} ms")
    assert 2_500_000 <= cue - ready_at <= 4_500_000
