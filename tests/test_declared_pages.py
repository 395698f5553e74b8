"""The pages build themselves from what the games declare, in a real browser: the setup page's
option fields (kind, choices, label, unit, the practice suggestion) and the judge panel's fact
buttons (a count, a list of names, a flag), with no game named in the scripts.

Headless Chromium (Debian's package) driven by Playwright against a real waitress server.
"""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.cli.table import Table
from referee.config import default_config
from referee.scoreboard.app import serve_in_thread, web_dir

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
if not shutil.which(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (apt install chromium)", allow_module_level=True)

PIN = "2468"
SEATS = ["Blue", "Red", "Green", "Yellow"]


def test_the_pages_name_no_game() -> None:
    """The scripts, the style sheet and the templates: a game's words come from its declaration."""
    names = re.compile(r"spank|\bpigs?\b|whamm|spoon|nose|tongue|pigs-tail|zebracorn|hippo|P-I-G",
                       re.IGNORECASE)
    web = web_dir()
    files = [*(web / "static").glob("*.js"), *(web / "static").glob("*.css"),
             *(web / "templates").glob("*.html")]
    for script in sorted(files):
        for number, line in enumerate(script.read_text().splitlines(), start=1):
            assert not names.search(line), f"{script.name}:{number}: {line.strip()}"


@pytest.fixture
def page(mock_factory: Any, tmp_path: Path, browser: Any) -> Iterator[tuple[Any, str, Table]]:
    table = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
                  pin=PIN, out=io.StringIO(), auto=False)
    table.start("spank-the-pig", {"doubles": "buttons"}, resume=False)
    server = serve_in_thread(table, "127.0.0.1", 0)
    try:
        context = browser.new_context()  # a fresh profile per test, on the shared browser
        try:
            tab = context.new_page()
            tab.set_default_timeout(15_000)
            yield tab, server.url, table
        finally:
            context.close()
    finally:
        server.close()
        table.close()


def test_setup_fields_come_from_the_option_declarations(page: tuple[Any, str, Table]) -> None:
    tab, url, _ = page
    tab.goto(url + "setup")
    deck = tab.locator('[data-option="deck"]')
    assert deck.get_attribute("type") == "number"
    assert (deck.get_attribute("min"), deck.get_attribute("max")) == ("2", "1000000")
    assert "Deck" in tab.locator('label[for="opt-deck"]').inner_text()
    assert "default 72 cards" in tab.locator('label[for="opt-deck"]').inner_text()
    # practice first: the deck chosen stays the real game's (the practice deals its own 3 a seat)
    tab.check("#practice")
    assert deck.input_value() == "72"
    tab.select_option("#game", "pig")
    lives = tab.locator('[data-option="lives"]')
    assert lives.evaluate("e => e.tagName") == "SELECT"  # a choice of numbers, not a free field
    assert lives.locator("option").evaluate_all("os => os.map((o) => o.value)") == ["1", "3"]
    assert lives.locator("option").all_inner_texts() == ["1: out at the first loss",
                                                         "3: the letters P, I, G"]  # in words
    assert "Lives" in tab.locator('label[for="opt-lives"]').inner_text()


def test_judge_buttons_come_from_the_fact_declarations(page: tuple[Any, str, Table]) -> None:
    tab, url, table = page
    tab.goto(url + "judge")
    box = tab.locator("#correct-facts")
    box.locator('[data-fact="pigs"][data-value="3"]').wait_for()
    assert box.locator('[data-fact="pigs"]').all_inner_texts() == ["0", "1", "2", "3+"]
    assert box.locator('[data-fact="pigs"][data-value="3"]').get_attribute(
        "aria-label") == "Pigs on the table: 3 or more"
    chips = box.locator('[data-fact="doubles-item"]').all_inner_texts()
    assert chips[:2] == ["Pugs", "Walruses"] and "Zebracorns" in chips
    assert box.locator('[data-fact="doubles-none"]').inner_text() == "No double"
    assert box.locator('[data-fact="void"]').inner_text() == "Void this round"
    assert "Pigs on the table" in box.inner_text()
