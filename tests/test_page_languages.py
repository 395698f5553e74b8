"""The pages in German and Spanish, on a phone (390×844) and a TV (1920×1080): the screen walk of
tests/test_screens.py with the table's language set, every page looked at in every phase as a
person would (nothing overflowing: German words are long), and no English word left: the page's
text is checked against the English of the pages' catalogue (its msgids) and of every game's
declarations, less the words the language itself uses. The catalogues themselves: complete, and
their compiled .mo files (what a fresh install serves) the same as their .po files.

REFEREE_SCREEN_ARTIFACTS=1 saves each screen under test-artifacts/screens-<language>/.
"""

from __future__ import annotations

import os
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from referee.cli.table import Table
from referee.engine.loop import Engine, open_game
from referee.events import GameStart
from referee.rules import lingo
from referee.rules.registry import games
from referee.scoreboard.app import web_dir
from referee.voice.phrases import ENGLISH, LANGUAGES
from tests.test_screens import CHECK_JS, VIEWPORTS, SimClock, Stage, Walk, open_stage

pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parent.parent
CATALOGUES = ROOT / "web" / "translations"
SEATS = {"de": ["Blau", "Rot", "Grün", "Gelb"], "es": ["Azul", "Rojo", "Verde", "Amarillo"]}
SAVE = bool(os.environ.get("REFEREE_SCREEN_ARTIFACTS"))
PAGES = {"table": "", "judge": "judge", "box": "box"}


def _words(texts: Any) -> set[str]:
    return {w for t in texts
            for w in re.findall(r"[A-Za-zÀ-ÿ]{2,}", re.sub(r"<[^>]*>|\{[^{}]*\}", " ", t).lower())}


def _catalogue(language: str) -> Any:
    with (CATALOGUES / language / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return read_po(f)


def _ids(message: Any) -> list[str]:
    return list(message.id) if isinstance(message.id, tuple | list) else [message.id]


def _strings(message: Any) -> list[str]:
    return list(message.string) if isinstance(message.string, tuple | list) else [message.string]


def english_left(text: str, language: str) -> set[str]:
    """English words in `text`: words of the English the pages and the games are written in
    (the catalogue's msgids, the games' declarations, the voice's English) that the language's
    own words (its catalogue, its games' files, its voice) never use."""
    english, own = [], []
    for m in _catalogue(language):
        if m.id:
            english += _ids(m)
            own += _strings(m)
    for cls in games().values():
        said = lingo.words_of(cls, language)
        english += [*lingo.declared_texts(cls), cls.TITLE, *cls.UNIT_WORDS]
        english += [b for beats in cls.PHRASES.values() for b in beats]
        own += [*said.texts.values(), said.title, *said.unit_words]
        own += [b for beats in said.phrases.values() for b in beats]
        own += [said.unit.one, said.unit.many, said.unit.loss, said.unit.gain, said.zero]
    english += [b for beats in ENGLISH.values() for b in beats]
    own += [b for beats in LANGUAGES[language].phrases.values() for b in beats]
    foreign = _words(english) - _words(own) - {"ms", "utc", "bcm", "elo", "md"}
    return _words([text]) & foreign


# -- the catalogues ---------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["de", "es"])
def test_the_pages_catalogue_is_complete_and_compiled(language: str) -> None:
    """Every msgid the templates, the scoreboard and the scripts use has its translation, and
    the .mo a fresh install serves says the same as the .po (tools/page_words.py makes both)."""
    with (CATALOGUES / "messages.pot").open("rb") as f:
        template = {m.id for m in read_po(f) if m.id}
    catalogue = _catalogue(language)
    assert {m.id for m in catalogue if m.id} >= template
    assert [m.id for m in catalogue if m.id and not all(_strings(m))] == []
    assert not [m.id for m in catalogue if m.id and m.fuzzy]
    with (CATALOGUES / language / "LC_MESSAGES" / "messages.mo").open("rb") as f:
        compiled = {tuple(_ids(m)): tuple(_strings(m)) for m in read_mo(f) if m.id}
    assert compiled == {tuple(_ids(m)): tuple(_strings(m)) for m in catalogue if m.id}


def test_every_string_the_pages_use_is_in_the_catalogue() -> None:
    """No `_()` in the templates or the scripts that the extraction has not collected (a new
    string must be extracted and translated: tools/page_words.py)."""
    with (CATALOGUES / "messages.pot").open("rb") as f:
        known = {i for m in read_po(f) if m.id for i in _ids(m)}
    used: set[str] = set()
    for path in [*(ROOT / "web" / "static").glob("*.js"), *(ROOT / "web" / "templates").glob("*.html")]:
        text = path.read_text(encoding="utf-8")
        used |= set(re.findall(r"""\b_\("((?:[^"\\]|\\.)*)"[,)]""", text))
        used |= set(re.findall(r"""\b_\('((?:[^'\\]|\\.)*)'[,)]""", text))
    used = {u.replace('\\"', '"') for u in used}
    assert used - known == set()


def test_the_installed_package_serves_its_compiled_catalogues() -> None:
    for language in ("de", "es"):
        assert (web_dir() / "translations" / language / "LC_MESSAGES" / "messages.mo").is_file()


# -- the screen walk, per language -------------------------------------------------------------


def new_engine(table: Table, clock: SimClock, game: str, options: dict[str, Any]) -> Engine:
    if table.engine is not None:
        table.engine.stop()
    opts = table.game_options(game, options)
    seats = tuple(s.name for s in table.config.seats)
    engine = open_game(table.store, GameStart(game, seats, opts), table.announcer,
                       leds=table.box, auto=False, clock=clock, language=table.language)
    table.engine = engine
    engine.start()
    return engine


@pytest.fixture(scope="module", params=["de", "es"])
def stage(request: pytest.FixtureRequest, browser: Any,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stage]:
    language = request.param
    yield from open_stage(browser, tmp_path_factory.mktemp("lang"), SEATS[language], language,
                          engine=new_engine)


def look(walk: Walk, phase: str, expect: str | None = None) -> dict[str, str]:
    """Every open page at this phase: nothing broken or overflowing, no English left."""
    language = walk.stage.table.language
    state = walk.poke()
    want = expect or state["phase"]
    texts = {}
    for (name, viewport), page in walk.pages.items():
        page.wait_for_function(
            "([phase, id]) => document.body.dataset.phase === phase && "
            "document.body.dataset.gameId === id", arg=[want, str(state["game_id"])])
        page.wait_for_timeout(30)
        found = page.evaluate(CHECK_JS, viewport == "tv" and name == "table")
        text = page.inner_text("body")
        left = english_left(text, language)
        if left:
            found.append(f"English words {sorted(left)}")
        if SAVE:
            out = ROOT / "test-artifacts" / f"screens-{language}"
            out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out / f"{walk.game}-{name}-{viewport}-{phase}.png"))
        walk.problems += [f"{language} {walk.game} {name} {viewport} {phase}: {p}" for p in found]
        texts[f"{name}-{viewport}"] = text
    return texts


def start(stage: Stage, game: str, options: dict[str, Any]) -> Walk:
    engine = new_engine(stage.table, stage.clock, game, options)
    with urllib.request.urlopen(stage.url + "api/state") as resp:
        assert resp.status == 200
    return Walk(stage, game, engine)


# Six pages a phase, each looked at as a person would: on a machine shared with other busy
# processes a walk has taken over two minutes.
WALK_TIMEOUT = pytest.mark.timeout(360)


@WALK_TIMEOUT
def test_spank_the_pig_in_the_table_s_language(stage: Stage) -> None:
    language = stage.table.language
    seats = SEATS[language]
    walk = start(stage, "spank-the-pig", {"deck": 8, "doubles": "off"})
    try:
        look(walk, "waiting")
        walk.do("next_round")
        look(walk, "cadence", "cadence")
        walk.at(1200)
        for seat, gap in ((seats[2], 180), (seats[0], 40), (seats[1], 60)):  # the 4th never
            walk.press(seat, gap)
        walk.at(3000)
        texts = look(walk, "awaiting", "awaiting")
        question = {"de": "Schwein oder kein Schwein?", "es": "¿Cerdo o no cerdo?"}[language]
        assert question in texts["table-tv"] and question in texts["judge-phone"]
        walk.facts(1, pigs=1)
        texts = look(walk, "ruled", "ruled")
        assert {"de": "Strafkarte", "es": "castigo"}[language] in texts["table-tv"]
        walk.do("pause")
        look(walk, "paused", "paused")
        walk.do("end")
        look(walk, "over", "over")
        assert not walk.problems, "\n".join(walk.problems)
    finally:
        walk.engine.stop()


@WALK_TIMEOUT
def test_pig_and_pigs_tail_in_the_table_s_language(stage: Stage) -> None:
    seats = SEATS[stage.table.language]
    walk = start(stage, "pig", {"variant": "spoons", "lives": 3})
    try:
        walk.press(seats[0], 5000)  # a claim
        walk.press(seats[1], 900)
        walk.press(seats[2], 400)
        walk.at(50)
        look(walk, "ruled", "ruled")
        walk.do("end")
        look(walk, "over", "over")
    finally:
        walk.engine.stop()
    tail = start(stage, "pigs-tail", {"take": "slowest"})
    try:
        tail.do("next_round")
        tail.at(1000)
        look(tail, "turn")
        tail.at(3500)
        tail.do("next_round")
        tail.at(1500)
        tail.press(seats[2], 200)
        tail.press(seats[0], 100)
        tail.at(3500)
        look(tail, "awaiting", "awaiting")
        tail.facts(2, match=True)
        look(tail, "ruled", "ruled")
    finally:
        tail.engine.stop()
    problems = walk.problems + tail.problems
    assert not problems, "\n".join(problems)


@WALK_TIMEOUT
def test_setup_and_history_in_the_table_s_language(stage: Stage) -> None:
    language = stage.table.language
    walk = start(stage, "spank-the-pig", {"deck": 4, "doubles": "off"})
    problems = []
    try:
        for viewport in VIEWPORTS:
            page = stage.pages[("box", viewport)]
            try:
                for path in ("setup", "history"):
                    page.goto(stage.url + path)
                    for game in (sorted(games()) if path == "setup" else [path]):
                        if path == "setup":
                            page.select_option("#game", game)
                            assert page.input_value("#language") == language
                        found = page.evaluate(CHECK_JS, False)
                        left = english_left(page.inner_text("body"), language)
                        if left:
                            found.append(f"English words {sorted(left)}")
                        if SAVE:
                            out = ROOT / "test-artifacts" / f"screens-{language}"
                            out.mkdir(parents=True, exist_ok=True)
                            page.screenshot(path=str(out / f"{path}-{game}-{viewport}.png"),
                                            full_page=True)
                        problems += [f"{language} {path} {game} {viewport}: {p}" for p in found]
            finally:
                page.goto(stage.url + "box")
    finally:
        walk.engine.stop()
    assert not problems, "\n".join(problems)


def test_the_english_word_check_sees_english() -> None:
    """The check itself: English left on a German page is found, German is not."""
    assert english_left("Runde 3: Waiting for the judge", "de") >= {"waiting", "judge"}
    assert english_left("Runde 3 von 8 · Schwein oder kein Schwein?", "de") == set()
    assert english_left("Ronda 3: Last ruling", "es") >= {"last", "ruling"}
