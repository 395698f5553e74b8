"""Shared fixtures: gpiozero's real MockFactory, with pins whose edges carry ticks the test picks."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPin

_sequence = itertools.count()


class TickPin(MockPin):
    """A MockPin whose edges carry chosen ticks, and which remembers every level change.

    ``drive(state, ticks)`` moves an input's level as the button would, and the callback gets
    ``ticks`` as the edge time, so tests never depend on wall time. ``closed = True`` models a
    button held shut: the input stays low even against the pull-up. ``history`` lists every level
    change as (sequence, level); the sequence is shared by all pins, so histories merge in order.
    """

    def __init__(self, factory: Any, info: Any) -> None:
        self.history: list[tuple[int, bool]] = []
        self.closed = False
        super().__init__(factory, info)

    def _change_state(self, value: Any) -> bool:
        if self.closed and self._function == "input":
            value = False
        changed: bool = super()._change_state(value)
        if changed:
            self.history.append((next(_sequence), bool(value)))
        return changed

    def drive(self, state: bool, ticks: float) -> None:
        assert self._function == "input"
        if self._change_state(state):
            self._last_change = ticks
            if self._when_changed is not None and self._edges in (
                "both",
                "rising" if state else "falling",
            ):
                self._call_when_changed()


@pytest.fixture
def mock_factory() -> Iterator[MockFactory]:
    previous = Device.pin_factory
    factory = MockFactory(pin_class=TickPin)
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.close()
        factory.reset()
        Device.pin_factory = previous


@pytest.fixture
def sim(tmp_path: Any, mock_factory: MockFactory) -> Iterator[Any]:
    """`sim(seats=None, options=None, **kw)` makes a `tests.sim.Sim` (an engine on a simulated
    clock on this test's MockFactory); each is closed at the end of the test."""
    from tests.sim import SIM_OPTIONS, Sim

    made: list[Sim] = []

    def make(seats: list[str] | None = None, options: dict[str, str] | None = None,
             **kw: Any) -> Sim:
        s = Sim(tmp_path / f"sim{len(made)}.db", mock_factory, seats or ["Blue", "Red", "Green"],
                options or SIM_OPTIONS, **kw)
        made.append(s)
        return s

    try:
        yield make
    finally:
        for s in made:
            s.close()



@pytest.fixture(scope="session")
def speech_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A speech cache for the whole run, shared by every test and every xdist worker: a table
    warms about 400 phrases (~6 s of espeak-ng), and tests that play a table rather than test
    rendering need each phrase rendered once a run, not once a table. It is the cache `referee`
    itself keeps (content-addressed, each clip written whole by rename), so workers that render
    the same phrase at once both write the same clip. Tests of rendering keep their own cache."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # pytest-N/popen-gwK
    path = root / "speech-cache"
    path.mkdir(exist_ok=True)
    return path


# Headless Chromium (Debian's), launched once per test process and shared by every browser test
# module: a launch costs a second or more of a busy machine, and each test opens its own pages
# (or its own context) on it, so nothing a page did carries over.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 # pages share a context: the ones not in front must not be slowed down
                 "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                 "--disable-backgrounding-occluded-windows",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    import shutil

    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (apt install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:  # a failed test leaves no Chromium behind
            b.close()


# The longest test files, longest first: `make test` hands whole files to its workers in
# collection order, so these start at once and the short files fill in around them (in name
# order the longest started last and the run ended on one busy worker). Every file over 3 s in a
# five-worker run, by its summed --durations there.
LONGEST_FIRST = ("test_benchmarks.py", "test_game_night.py", "test_screens.py", "test_page_languages.py",
                 "test_pi_install.py", "test_languages.py", "test_table_language.py",
                 "test_evening_pig.py", "test_hostile_flood.py", "test_end_cuts_call.py",
                 "test_power_loss.py", "test_button_faults.py", "test_hostile_disk.py",
                 "test_api_fuzz.py", "test_browser.py", "test_messages.py", "test_speech.py",
                 "test_hostile_input.py", "test_web.py", "test_hostile_http.py",
                 "test_rules_properties.py", "test_rules_playoff_properties.py", "test_pi_audio.py",
                 "test_dac_clock.py", "test_load.py", "test_watchdog.py",
                 "test_terminal.py", "test_delivery.py", "test_input_limits.py", "test_cli.py",
                 "test_buttons_doctor.py", "test_bad_logs.py", "test_engine_games.py",
                 "test_live_busy.py", "test_bad_config.py", "test_engine.py",
                 "test_capture_outputs.py", "test_declared_pages.py", "test_bad_flags.py",
                 "test_clock_behind.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole
