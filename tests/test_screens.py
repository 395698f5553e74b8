"""Every page of every game in every phase, on a phone (390×844) and on a TV (1920×1080).

One real engine per game on a simulated clock (nothing waits out a real race window), a real
waitress server, the real pages in headless Chromium (one browser per test process: conftest). At
each phase of each game every open page is checked as a person would look at it:
- the page never scrolls sideways, and nothing sticks out of the screen or of its box;
- on the TV the table view fits 1920×1080: every element inside the viewport;
- no "undefined", "null", "NaN" or "[object" text; no raw option key ("tie_us", "pause ms");
and, with REFEREE_SCREEN_ARTIFACTS=1, a screenshot of it is saved under test-artifacts/screens/
(REFEREE_SCREENSHOTS=docs/screenshots saves them too and refreshes the README's gallery there).
The screenshots are for a person to look at, not checks: taking them is more than half of this
module's time (26 s of 46 s here), so a plain `make test` does not.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import shutil
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from referee.cli.table import Table
from referee.config import default_config
from referee.engine.loop import Engine, open_game
from referee.events import Facts, GameStart, JudgeKey, Press
from referee.rules.registry import games, rules_for
from referee.scoreboard.app import WebServer, serve_in_thread
from referee.voice.announce import PrintAnnouncer
from tests.harness import SimClock, mocked_pins, settle

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
if not shutil.which(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (apt install chromium)", allow_module_level=True)

PIN = "1357"
SEATS = ["Blue", "Red", "Green", "Yellow"]
ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "screens"
VIEWPORTS = {"phone": (390, 844), "tv": (1920, 1080)}
PAGES = {"table": "", "judge": "judge", "box": "box"}
# the README's gallery: one row per game (the file names the phase shown)
GALLERY = {"spank-the-pig": ("table-tv-awaiting", "table-phone-ruled", "judge-phone-awaiting"),
           "pig": ("table-tv-ruled", "table-phone-ruled", "judge-phone-ruled"),
           "pigs-tail": ("table-tv-turn", "table-phone-ruled", "judge-phone-ruled")}

# every phase of the table view is saved; the judge panel and the box at these phases (time)
SHOTS = ("awaiting", "ruled", "turn", "slowest-awaiting")

# Checked in the page itself: what a person would see as broken.
CHECK_JS = (Path(__file__).parent / "page_check.js").read_text(encoding="utf-8")
SAVE_SHOTS = bool(os.environ.get("REFEREE_SCREEN_ARTIFACTS") or os.environ.get("REFEREE_SCREENSHOTS"))


@dataclass
class Stage:
    """One table, its scoreboard and the pages watching it, for the whole module: each walk is a
    new game (a new engine) on it, as the judge panel's "next game" gives (opening a browser page
    costs a second; a new game costs nothing)."""

    table: Table
    server: WebServer
    clock: SimClock
    pages: dict[tuple[str, str], Any]  # (page, viewport) → page

    @property
    def url(self) -> str:
        return self.server.url


@dataclass
class Walk:
    """One game on the stage, moved phase by phase on the simulated clock."""

    stage: Stage
    game: str
    engine: Engine
    seen: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # every page and phase, reported at the end

    @property
    def pages(self) -> dict[tuple[str, str], Any]:
        return self.stage.pages

    @property
    def clock(self) -> SimClock:
        return self.stage.clock

    def poke(self) -> dict[str, Any]:
        """Let the engine act at the simulated time until it has nothing more to do now."""
        return settle(self.engine, self.clock)

    def at(self, dt_ms: int) -> dict[str, Any]:
        self.clock.t += dt_ms * 1000
        return self.poke()

    def press(self, seat: str, after_ms: int = 0, button: str = "slap") -> None:
        self.clock.t += after_ms * 1000
        self.engine.submit(Press(self.clock.t, seat, button))
        self.poke()

    def do(self, name: str, **args: Any) -> dict[str, Any]:
        return dict(self.engine.command(name, **args))

    def facts(self, number: int, **values: Any) -> dict[str, Any]:
        self.engine.command("feed", event=Facts(number, values))
        return self.poke()


def open_page(context: Any, url: str, viewport: str) -> Any:
    """A page of the viewport's browser context (a context per page costs a renderer each)."""
    width, height = VIEWPORTS[viewport]
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.set_default_timeout(10_000)
    page.goto(url)
    return page


@pytest.fixture(scope="module")
def out_dir() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def stage(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stage]:
    yield from open_stage(browser, tmp_path_factory.mktemp("screens"), SEATS)


def open_stage(browser: Any, folder: Path, seats: list[str], language: str = "en",
               engine: Any = None) -> Iterator[Stage]:
    """A table of `seats` speaking `language`, its scoreboard, and every page open on a phone
    and a TV (`engine`: how its first game is opened)."""
    pins = mocked_pins()  # the suite's MockFactory, for the whole module
    pins.__enter__()
    clock = SimClock(10_000_000)
    announcer = PrintAnnouncer(io.StringIO(), clock=clock, quiet=True)
    config = dataclasses.replace(default_config(seats), language=language)
    table = Table(config, db=folder / "referee.db", mock=True, no_speech=True, pin=PIN,
                  out=io.StringIO(), announcer=announcer, auto=False)
    server = None
    pages: dict[tuple[str, str], Any] = {}
    # one context per viewport: a browser opens at most 6 connections to one server per
    # context, and every page holds one for its event stream
    contexts = {v: browser.new_context() for v in VIEWPORTS}
    for context in contexts.values():
        context.add_init_script(f"sessionStorage.setItem('tableReferee.pin', '{PIN}')")
    try:
        (engine or new_engine)(table, clock, "spank-the-pig", {})
        server = serve_in_thread(table, "127.0.0.1", 0)
        for page, path in PAGES.items():
            for viewport, context in contexts.items():
                pages[(page, viewport)] = open_page(context, server.url + path, viewport)
        yield Stage(table, server, clock, pages)
    finally:
        for context in contexts.values():
            context.close()
        if server is not None:
            server.close()
        table.close()
        pins.__exit__(None, None, None)


def new_engine(table: Table, clock: SimClock, game: str, options: dict[str, Any],
               auto: bool = False) -> Engine:
    """The walks move each round by hand (`auto=False`: no Ready step, no rhythm); `auto`: the
    engine's own rhythm, from the Ready step."""
    if table.engine is not None:
        table.engine.stop()
    opts = table.game_options(game, options)
    engine = open_game(table.store, GameStart(game, tuple(SEATS), opts), table.announcer,
                       leds=table.box, auto=auto, clock=clock)
    table.engine = engine
    engine.start()
    return engine


def start_walk(stage: Stage, game: str, options: dict[str, Any]) -> Walk:
    engine = new_engine(stage.table, stage.clock, game, options)
    walk = Walk(stage, game, engine)
    with urllib.request.urlopen(stage.url + "api/state") as resp:  # the pages follow it now
        assert resp.status == 200
    return walk


def pause_and_end(walk: Walk, out: Path) -> None:
    """The judge pauses, resumes and ends the game: each phase looked at; the walk's verdict."""
    walk.do("pause")
    # a race still in hand (Pig's claim window stays open to its end) is played out first
    for _ in range(120):
        if walk.poke()["phase"] == "paused":
            break
        walk.at(500)
    look(walk, "paused", out, "paused")
    walk.do("resume")
    walk.do("end")
    look(walk, "over", out, "over")
    finish(walk, out)


def finish(walk: Walk, out: Path) -> None:
    """Every phase was seen; nothing looked broken on any page in any of them."""
    gallery(out)
    assert not walk.problems, "\n".join(walk.problems)


def raw_keys(game: str) -> list[str]:
    """An option's key or a choice's value as a person must never read them: "tie_us", "tie us",
    "lose-life" (a key that reads as words, like "false claim" for its label, is fine)."""
    keys = []
    for name, opt in rules_for(game).known_options().items():
        if "_" in name:
            keys.append(name)
            if name.replace("_", " ").lower() != opt.label.lower():
                keys.append(name.replace("_", " "))
        keys += [str(c) for c in opt.choices if "-" in str(c) or "_" in str(c)]
    return keys


def look(walk: Walk, phase: str, out: Path, expect_phase: str | None = None,
         pages: tuple[str, ...] = tuple(PAGES)) -> dict[str, str]:
    """Check every open page at this phase; save its screenshot. Returns each page's text."""
    state = walk.poke()
    want = expect_phase or state["phase"]
    texts: dict[str, str] = {}
    problems: list[str] = []
    for (page_name, viewport), page in walk.pages.items():
        if page_name not in pages:
            continue
        page.wait_for_function(
            "([phase, id]) => document.body.dataset.phase === phase && "
            "document.body.dataset.gameId === id", arg=[want, str(state["game_id"])])
        page.wait_for_timeout(30)  # the last state's render
        tv = viewport == "tv" and page_name == "table"
        found = page.evaluate(CHECK_JS, tv)
        text = page.inner_text("body")
        for key in raw_keys(walk.game):
            if re.search(rf"(?i)\b{re.escape(key)}\b", text):
                found.append(f"raw option key {key!r} on the page")
        if SAVE_SHOTS and (page_name == "table" or phase in SHOTS):
            page.screenshot(path=str(out / f"{walk.game}-{page_name}-{viewport}-{phase}.png"))
        problems += [f"{walk.game} {page_name} {viewport} {phase}: {p}" for p in found]
        texts[f"{page_name}-{viewport}"] = text
    walk.seen.append(phase)
    walk.problems += problems
    return texts


def voice(walk: Walk) -> list[str]:
    """Everything the referee said in this walk's table, as text."""
    from referee.voice.phrases import text

    return [text(k, p) for k, p, _ in walk.stage.table.announcer.said]  # type: ignore[attr-defined]


def tv_table(walk: Walk) -> Any:
    return walk.pages[("table", "tv")]


def reaction_rows(walk: Walk) -> list[str]:
    """The seats in the table view's reaction list, in order."""
    rows: list[str] = tv_table(walk).eval_on_selector_all(
        "#reactions li .who", "xs => xs.map((x) => x.textContent.trim())")
    return rows


def gallery(out: Path) -> None:
    target = os.environ.get("REFEREE_SCREENSHOTS")
    if not target:
        return
    dest = Path(target)
    dest.mkdir(parents=True, exist_ok=True)
    for game, shots in GALLERY.items():
        for shot in shots:
            page, viewport, phase = shot.split("-", 2)
            src = out / f"{game}-{page}-{viewport}-{phase}.png"
            if src.exists():
                shutil.copy(src, dest / f"{game}-{shot}.png")


# -- the walks ---------------------------------------------------------------------------------


def test_spank_the_pig_every_phase(stage: Stage, out_dir: Path) -> None:
    walk = start_walk(stage, "spank-the-pig", {"deck": 8, "doubles": "off", "tempo_ms": 500, "tie_us": 1000})
    try:
        look(walk, "waiting", out_dir)
        walk.do("next_round")
        look(walk, "cadence", out_dir, "cadence")
        walk.at(1200)
        look(walk, "race", out_dir, "race")
        for seat, gap in (("Green", 180), ("Blue", 40), ("Red", 60)):  # Yellow never slaps
            walk.press(seat, gap)
        walk.at(3000)
        texts = look(walk, "awaiting", out_dir, "awaiting")
        # the banner and the judge panel ask what the voice asks, word for word
        said = walk.poke()["said"]
        assert said == "Judge: Pig or no pig?"
        assert tv_table(walk).inner_text("#banner").startswith(said)
        assert walk.pages[("judge", "phone")].inner_text("#question-title") == \
            "Round 1: Pig or no pig?"
        walk.facts(1, pigs=1)
        texts = look(walk, "ruled", out_dir, "ruled")
        # Yellow never slapped: said and shown so, with no margin to the window's end
        assert "Yellow never slapped: last to spank the pig. One whammy." in voice(walk)
        assert "never slapped: last to spank the pig" in texts["table-tv"]
        assert "milliseconds" not in tv_table(walk).inner_text("#ruling-lines")
        walk.do("pause")
        look(walk, "paused", out_dir, "paused")
        walk.do("resume")
        walk.do("next_round")
        walk.at(1200)
        for seat, gap in (("Blue", 150), ("Green", 30), ("Red", 30), ("Yellow", 300)):
            walk.press(seat, gap)
        walk.at(100)
        look(walk, "ruled-2", out_dir, "ruled")
        walk.do("next_round")  # sudden death: Blue, Red and Green play on
        walk.at(1200)
        look(walk, "sudden-death", out_dir, "race")
        assert walk.poke()["racing"] == ["Blue", "Red", "Green"]
        walk.do("end")
        look(walk, "over", out_dir, "over")
        finish(walk, out_dir)
    finally:
        walk.engine.stop()


def test_pig_every_phase(stage: Stage, out_dir: Path) -> None:
    walk = start_walk(stage, "pig", {"variant": "spoons", "lives": 3})
    try:
        first = walk.poke()["phase"]
        texts = look(walk, "waiting", out_dir, first)
        assert "First round coming" not in texts["table-tv"]  # a claim opens a round
        walk.press("Blue", 5000)  # a claim: nothing shows
        look(walk, "claim", out_dir, first)
        walk.press("Red", 900)
        walk.press("Green", 400)  # Yellow is last: a letter
        walk.at(50)
        texts = look(walk, "ruled", out_dir, "ruled")
        # each seat shows its letters (none yet: 0), never a dash labelled "spoon game"
        nums = tv_table(walk).eval_on_selector_all(
            "#seats .num", "xs => xs.map((x) => x.textContent)")
        assert nums == ["0", "0", "0", "P"]
        assert "spoon game" not in texts["table-tv"] and "–" not in nums
        pause_and_end(walk, out_dir)
    finally:
        walk.engine.stop()


def test_pigs_tail_every_phase(stage: Stage, out_dir: Path) -> None:
    walk = start_walk(stage, "pigs-tail", {"take": "flipper"})
    try:
        look(walk, "waiting", out_dir)
        walk.do("next_round")
        look(walk, "turn", out_dir, "cadence")
        # whose turn it is to flip: said, and shown on the phase and on that seat's tile
        table = tv_table(walk)
        assert table.inner_text("#phase") == "Blue, flip!"
        assert table.eval_on_selector_all("#seats .turn", "xs => xs.map((x) => x.dataset.seat)") \
            == ["Blue"]
        walk.at(1500)
        look(walk, "race", out_dir, "race")
        assert table.inner_text("#phase") == "Blue's flip"  # nobody races in flipper mode
        walk.at(4000)
        look(walk, "ruled-first", out_dir, "ruled")
        walk.do("next_round")
        walk.at(1500)
        walk.press("Red", 300)  # Red flips and claims a match
        walk.at(3000)
        look(walk, "ruled", out_dir, "ruled")
        assert reaction_rows(walk) == ["Red"]  # only the flipper: no "no slap" for the rest
        pause_and_end(walk, out_dir)
    finally:
        walk.engine.stop()


def test_the_ready_step_and_the_count_in(stage: Stage, out_dir: Path) -> None:
    """Every game now opens on its Ready step: shown on every page at both sizes, then the
    count-in once every seat has pressed (the engine's own rhythm, on the simulated clock)."""
    engine = new_engine(stage.table, stage.clock, "spank-the-pig", {}, auto=True)
    walk = Walk(stage, "spank-the-pig", engine)
    try:
        look(walk, "ready", out_dir, "ready")
        assert walk.poke()["said"] == "Press your slap button when you're ready."
        for seat in SEATS:
            walk.press(seat, 200)
        look(walk, "count-in", out_dir, "count-in")
        assert walk.poke()["said"] == "Here we go."  # every seat pressed: the count-in
        finish(walk, out_dir)
    finally:
        walk.engine.stop()


def test_pigs_tail_slowest_asks_the_judge(stage: Stage, out_dir: Path) -> None:
    walk = start_walk(stage, "pigs-tail", {"take": "slowest"})
    try:
        walk.do("next_round")  # the first card cannot match: the second may
        walk.at(4500)
        walk.do("next_round")
        walk.at(1500)
        walk.press("Green", 200)
        walk.press("Blue", 100)  # Red never taps: match or no match?
        walk.at(3500)
        look(walk, "slowest-awaiting", out_dir, "awaiting")
        finish(walk, out_dir)
    finally:
        walk.engine.stop()


def test_setup_and_history_on_a_phone_and_a_tv(stage: Stage, out_dir: Path) -> None:
    walk = start_walk(stage, "spank-the-pig", {"deck": 4, "doubles": "off"})
    try:
        walk.do("next_round")
        walk.at(1200)
        for seat in SEATS:
            walk.press(seat, 120)
        walk.at(100)
        problems = []
        for viewport in VIEWPORTS:
            page = stage.pages[("box", viewport)]
            try:
                for path in ("setup", "history"):
                    page.goto(stage.url + path)
                    for game in ([path] if path == "history" else sorted(games())):
                        if path == "setup":
                            page.select_option("#game", game)
                        found = page.evaluate(CHECK_JS, False)
                        text = page.inner_text("body")
                        for key in (raw_keys(game) if path == "setup" else []):
                            if re.search(rf"(?i)\b{re.escape(key)}\b", text):
                                found.append(f"raw option key {key!r}")
                        if SAVE_SHOTS:
                            page.screenshot(path=str(out_dir / f"{path}-{game}-{viewport}.png"),
                                            full_page=True)
                        problems += [f"{path} {game} {viewport}: {p}" for p in found]
            finally:
                page.goto(stage.url + "box")
        assert not problems, "\n".join(problems)
    finally:
        walk.engine.stop()


def test_the_virtual_box_takes_the_terminals_keys_and_fits_a_phone(stage: Stage) -> None:
    from referee.config import DOUBLE_KEYS, SLAP_KEYS
    from referee.store.database import events

    walk = start_walk(stage, "spank-the-pig", {"doubles": "buttons"})
    try:
        phone = stage.pages[("box", "phone")]
        phone.wait_for_function("id => document.body.dataset.gameId === id",
                                arg=str(walk.engine.game_id))
        # the whole box on one phone screen: every seat's slap button and its double
        bottoms = phone.eval_on_selector_all(
            ".slap, .double-btn", "bs => bs.map((b) => b.getBoundingClientRect().bottom)")
        assert len(bottoms) == 8 and max(bottoms) <= VIEWPORTS["phone"][1]
        hint = phone.inner_text(".hint")
        assert f"{SLAP_KEYS[0]}–{SLAP_KEYS[-1]} slap" in hint
        assert f"{DOUBLE_KEYS[0]}–{DOUBLE_KEYS[-1]} double" in hint and "Shift" not in hint
        phone.keyboard.press(SLAP_KEYS[1])
        phone.keyboard.press(DOUBLE_KEYS[2])

        def pressed() -> list[tuple[str, str]]:
            walk.poke()
            return [(e.seat, e.button) for e in events(stage.table.store.conn, walk.engine.game_id)
                    if isinstance(e, Press)]

        deadline = time.monotonic() + 10
        while len(pressed()) < 2:
            assert time.monotonic() < deadline, pressed()
            time.sleep(0.05)
        assert sorted(pressed()) == [("Green", "double"), ("Red", "slap")]
    finally:
        walk.engine.stop()


def test_setup_keeps_seat_colours_distinct(stage: Stage) -> None:
    page = stage.pages[("box", "phone")]
    try:
        page.goto(stage.url + "setup")
        page.select_option("#game", "pig")
        page.fill("#seat-rows tr:nth-child(1) .seat-name", "Ann")  # Blue's colour, a new name
        page.click("#add-seat")
        colours = page.eval_on_selector_all(".seat-colour", "xs => xs.map((x) => x.value)")
        names = page.eval_on_selector_all(".seat-name", "xs => xs.map((x) => x.value)")
        assert len(colours) == 5 and len(set(colours)) == 5, colours
        assert len(set(names)) == 5, names
        page.fill("#seat-rows tr:nth-child(2) .seat-colour", colours[0])  # Red takes Ann's
        before = stage.table.engine
        page.click("#start")
        assert page.inner_text("#setup-error") == \
            "Ann and Red have the same colour: give each seat its own."
        assert stage.table.engine is before  # no game was started
    finally:
        page.goto(stage.url + "box")


def test_the_page_check_sees_what_a_person_would(stage: Stage) -> None:
    """The walk's eyes: a too-wide box, text below a TV screen and "undefined" are all caught."""
    page = stage.pages[("table", "tv")]
    assert page.evaluate(CHECK_JS, True) == []
    page.evaluate("""() => {
      const main = document.getElementById("main");
      main.append(Object.assign(document.createElement("p"), {id: "probe-wide",
        textContent: "undefined", style: "width: 2400px"}));
      main.append(Object.assign(document.createElement("p"), {id: "probe-low",
        textContent: "low", style: "position: absolute; top: 1200px"}));
    }""")
    try:
        found = "\n".join(page.evaluate(CHECK_JS, True))
    finally:
        page.evaluate("() => { for (const id of ['probe-wide', 'probe-low']) "
                      "document.getElementById(id).remove(); }")
    assert "the page scrolls sideways" in found
    assert 'p#probe-wide "undefined" sticks out sideways' in found
    assert 'the text says "undefined"' in found
    assert 'p#probe-low "low" is below the screen' in found


# -- the defects of issue 22, each seen on the pages -----------------------------------------

LINES_JS = """() => [...document.querySelectorAll('.lines .margin')].map((m) => {
  // the text before the margin, and whether the margin starts on that text's last line
  const before = m.parentElement.classList.contains('what') ? m.parentElement.firstChild
    : m.previousElementSibling;
  const range = document.createRange();
  range.selectNodeContents(before);
  const rects = [...range.getClientRects()];
  const last = rects[rects.length - 1];
  return {margin: m.textContent, ok: !!last && m.getClientRects()[0].top < last.bottom - 2};
})"""


def test_spank_the_pig_game_over_fits_a_tv_after_a_whole_game(stage: Stage, out_dir: Path) -> None:
    """A whole game played to its end: the game-over view fits 1920×1080 with no scroll (it was
    1110 px tall), the standings under the champion are large on the TV, and a ruling's "by N
    milliseconds" stays on its ruling's line."""
    walk = start_walk(stage, "spank-the-pig", {"deck": 28, "doubles": "off", "tempo_ms": 500,
                                               "tie_us": 1000})
    lasts = ["Yellow", "Red", "Green", "Yellow", "Red", "Yellow", "Green"]  # Blue: champion
    try:
        for last in lasts:
            walk.do("next_round")
            walk.at(1200)
            order = [s for s in SEATS if s != last] + [last]
            for seat, gap in zip(order, (180, 40, 60, 451), strict=True):
                walk.press(seat, gap)
            walk.at(100)
        state = walk.poke()
        assert state["final"] and state["winners"] == ["Blue"]
        look(walk, "over-whole-game", out_dir, "over")
        table = tv_table(walk)
        height = table.evaluate("() => document.documentElement.scrollHeight")
        assert height <= VIEWPORTS["tv"][1], f"the game-over view is {height} px tall"
        size = table.eval_on_selector("#winner .standings",
                                      "e => parseFloat(getComputedStyle(e).fontSize)")
        assert size >= 28, f"the standings line is {size} px: too small across a room"
        assert "Champion: Blue!" in table.inner_text("#winner")
        for page in (table, walk.pages[("table", "phone")]):
            lines = page.evaluate(LINES_JS)
            assert lines and all(x["ok"] for x in lines), lines
        finish(walk, out_dir)
    finally:
        walk.engine.stop()


def test_co_champions_read_as_a_list(stage: Stage) -> None:
    walk = start_walk(stage, "spank-the-pig", {"deck": 8, "doubles": "off"})
    try:
        walk.do("end")  # nobody has a whammy: all four lead
        look(walk, "over-co", ARTIFACTS, "over")
        assert tv_table(walk).inner_text("#winner .champion") == \
            "Champions: Blue, Red, Green and Yellow!"
    finally:
        walk.engine.stop()


def test_a_gain_is_red_only_where_fewer_wins(stage: Stage, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game where more wins (made up in the tests): its point is a gain, shown green; Spank's
    whammy is a loss, shown red."""
    from tests.harness import register_game
    from tests.made_up_game import FirstAfterTheBeep

    register_game(monkeypatch, FirstAfterTheBeep)  # its words come with it
    walk = start_walk(stage, "beep-race", {"rounds": 3})
    try:
        walk.do("next_round")
        walk.at(400)
        walk.press("Red", 200)  # first after the beep: +1 point
        walk.at(1500)
        look(walk, "more-wins", ARTIFACTS, "ruled", pages=("table",))
        table = tv_table(walk)
        assert table.eval_on_selector_all(".delta", "xs => xs.map((x) => x.className)") == \
            ["delta gain", "delta gain"]  # the tile's and the ruling's
        green = table.eval_on_selector(".delta", "e => getComputedStyle(e).backgroundColor")
        assert green == "rgb(74, 222, 128)"
    finally:
        walk.engine.stop()
    walk = start_walk(stage, "spank-the-pig", {"deck": 8, "doubles": "off", "tempo_ms": 500})
    try:
        walk.do("next_round")
        walk.at(1200)
        for seat, gap in (("Blue", 100), ("Red", 40), ("Green", 60), ("Yellow", 300)):
            walk.press(seat, gap)
        walk.at(100)
        look(walk, "fewer-wins", ARTIFACTS, "ruled", pages=("table",))
        assert tv_table(walk).eval_on_selector_all(
            ".delta", "xs => xs.map((x) => x.className)") == ["delta loss", "delta loss"]
    finally:
        walk.engine.stop()


@pytest.mark.parametrize("lives", [1, 3])
def test_pig_speaks_of_losing_with_one_life_and_of_letters_with_three(
        stage: Stage, out_dir: Path, lives: int) -> None:
    walk = start_walk(stage, "pig", {"variant": "tongue", "lives": lives})
    try:
        for _ in range(3):
            walk.press("Blue", 16_000)  # a claim after the last window; Yellow is last
            walk.press("Red", 300)
            walk.press("Green", 300)
            walk.at(50)
            if lives == 1:
                break
        texts = look(walk, f"lives-{lives}", out_dir, None, pages=("table",))
        table = tv_table(walk)
        assert table.inner_text("#title").startswith("Tongue")  # the variant played
        assert walk.pages[("table", "phone")].inner_text("#title").startswith("Tongue")
        ruling = table.inner_text("#ruling-lines")
        if lives == 1:
            assert "+1 life lost" in ruling and "letter" not in texts["table-tv"]
        else:
            assert "+1 letter" in ruling
            for page in (table, walk.pages[("table", "phone")]):
                num = page.locator('#seats [data-seat="Yellow"] .num')
                assert num.inner_text() == "P\u2011I\u2011G"
                lines = num.evaluate("e => e.getClientRects().length === 1 && "
                                     "e.getBoundingClientRect().height < 1.6 * "
                                     "parseFloat(getComputedStyle(e).fontSize)")
                assert lines, "P-I-G breaks over two lines"
        finish(walk, out_dir)
    finally:
        walk.engine.stop()


def test_pigs_tail_shows_the_pile_and_the_flips_of_52(stage: Stage, out_dir: Path) -> None:
    walk = start_walk(stage, "pigs-tail", {"take": "flipper"})
    try:
        for _ in range(3):  # three flips, nobody claims: three cards on the pile
            walk.do("next_round")
            walk.at(4500)
        look(walk, "pile", out_dir, "ruled", pages=("table",))
        for viewport in VIEWPORTS:
            assert walk.pages[("table", viewport)].inner_text("#round") == \
                "Flip 3 of 52 · pile 3 cards"
            # a flip with no claim: nobody raced, so nobody "never tapped"
            assert "never" not in walk.pages[("table", viewport)].inner_text("#reactions")
        finish(walk, out_dir)
    finally:
        walk.engine.stop()


def test_the_judge_suggests_the_game_s_own_penalty_reasons(stage: Stage) -> None:
    walk = start_walk(stage, "pig", {})
    try:
        judge = walk.pages[("judge", "phone")]
        look(walk, "reasons", ARTIFACTS, None, pages=("judge",))
        options = judge.eval_on_selector_all("#reasons option", "os => os.map((o) => o.value)")
        assert options == list(rules_for("pig").PENALTY_REASONS)
        assert "slapped the hippo" not in options
    finally:
        walk.engine.stop()
    walk = start_walk(stage, "spank-the-pig", {})
    try:
        judge = walk.pages[("judge", "phone")]
        look(walk, "reasons", ARTIFACTS, None, pages=("judge",))
        options = judge.eval_on_selector_all("#reasons option", "os => os.map((o) => o.value)")
        assert "slapped the hippo" in options
    finally:
        walk.engine.stop()


def test_a_turn_game_made_up_in_the_tests_plays_on_every_page(
        stage: Stage, out_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: the made-up turn game ("Snap Grab", defined only in tests/, more wins, its own
    call, question and count fact) plays on the real pages at phone and TV size with nothing
    outside tests/ naming it: its title, its call, its question, its gains in green, its champion."""
    from tests.harness import register_game
    from tests.made_up_game import SnapGrab

    register_game(monkeypatch, SnapGrab)  # its words come with it, as an installed game's would
    walk = start_walk(stage, "snap-grab", {"cards": 3, "strikes": 2, "window_ms": 1000,
                                           "tempo_ms": 200})
    try:
        look(walk, "waiting", out_dir)
        table = tv_table(walk)
        assert "Snap Grab" in table.inner_text("body")
        walk.do("next_round")
        look(walk, "turn", out_dir, "cadence")
        assert table.inner_text("#phase") == "Blue, snap!"  # its own call, naming the flipper
        walk.at(400)
        walk.press("Red", 100)  # a grab on the first card: a strike (nothing to put back)
        walk.at(1500)
        look(walk, "ruled-first", out_dir, "ruled")
        walk.do("next_round")
        walk.at(400)
        walk.press("Green", 100)
        walk.press("Blue", 100)
        walk.at(1500)
        texts = look(walk, "awaiting", out_dir, "awaiting")
        assert "How many cards match?" in texts["judge-phone"]  # its own question, its own words
        walk.facts(2, match=2)
        look(walk, "ruled", out_dir, "ruled")
        assert table.eval_on_selector_all(".delta", "xs => xs.map((x) => x.className)")[0] == \
            "delta gain"  # more wins: a take is good news
        walk.do("next_round")
        walk.at(3000)
        look(walk, "over", out_dir, "over")
        assert "Green" in table.inner_text("#winner .champion")  # 2 cards: the most wins
        finish(walk, out_dir)
    finally:
        walk.engine.stop()


WALKED = ("spank-the-pig", "pig", "pigs-tail")  # walked phase by phase above


@pytest.mark.parametrize("game", sorted(set(games()) - set(WALKED)))
def test_every_other_registered_game_plays_on_every_page(
        stage: Stage, out_dir: Path, game: str) -> None:
    """Issue 26: a game registered by an entry point, from a module or a game file, plays on the
    real pages at phone and TV size because it is registered: waiting, a call, a round everyone
    presses in, a round one seat presses in (the judge's NO when asked), the end."""
    seats = list(SEATS)  # the stage's four seats
    walk = start_walk(stage, game, {})
    try:
        look(walk, "waiting", out_dir)
        for number, pressing in ((1, seats), (2, seats), (3, seats[:1])):
            walk.do("next_round")
            for _ in range(100):  # the call's words, up to the go-word
                if walk.at(100)["phase"] != "cadence":
                    break
            if number == 1:
                look(walk, "race", out_dir, "race")
            for i, seat in enumerate(pressing):
                walk.press(seat, 150 + 20 * i)
            for _ in range(200):  # the race closes (the window, or every seat pressed)
                if walk.at(100)["phase"] != "race":
                    break
            state = walk.poke()
            if state["awaiting"] is not None:
                look(walk, f"awaiting-{number}", out_dir, "awaiting")
                for _ in range(len(SEATS) + 1):  # NO, and to each seat named next
                    walk.engine.submit(JudgeKey(walk.clock.now, "no"))
                    if walk.at(50)["awaiting"] is None:
                        break
                for _ in range(200):
                    if walk.at(100)["phase"] not in ("race", "awaiting"):
                        break
            look(walk, f"ruled-{number}", out_dir)
        walk.do("end")
        look(walk, "over", out_dir, "over")
        finish(walk, out_dir)
    finally:
        walk.engine.stop()
