"""Shared fixtures: the simulated table's (tests/harness.py: `mock_factory`, `sim`, `sim_table`),
the speech cache of the run, headless Chromium, and the order the files run in."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import QUICK, mock_factory, sim, sim_table

__all__ = ["mock_factory", "sim", "sim_table"]  # fixtures, registered by being here


@pytest.fixture(scope="session")
def speech_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A speech cache for the whole run, shared by every test and every xdist worker: a table
    warms about 400 phrases (~6 s of espeak-ng), and tests that play a table rather than test
    rendering need each phrase rendered once a run, not once a table. It is the cache `referee`
    itself keeps (content-addressed, each clip written whole by rename), so workers that render
    the same phrase at once both write the same clip. Tests of rendering keep their own cache.
    With REFEREE_TEST_SPEECH_CACHE (`make test`, `make test-all`: .cache/test-speech) the clips
    are kept from one run to the next."""
    kept = os.environ.get("REFEREE_TEST_SPEECH_CACHE")  # `make test` keeps it across runs:
    if kept:  # its keys hold the text, the voice and the engine's versions, so nothing goes stale
        path = Path(kept)
        path.mkdir(parents=True, exist_ok=True)
        return path
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
LONGEST_FIRST = ("test_piper.py", "test_benchmarks_startup.py", "test_benchmarks_speech.py",
                 "test_benchmarks.py", "test_speech_memory.py", "test_evening_cards.py",
                 "test_evening_quiz.py",
                 "test_rules_halligalli.py", "test_rules_slapjack.py",
                 "test_benchmarks_hostile.py", "test_evening_game_night.py", "test_screens.py",
                 "test_page_languages.py", "test_languages.py", "test_table_language.py",
                 "test_pi_install.py", "test_evening_pig.py", "test_hostile_flood.py",
                 "test_voice_end_cuts_call.py", "test_power_loss.py", "test_capture_faults.py",
                 "test_hostile_disk.py", "test_api_fuzz.py", "test_browser.py", "test_messages.py",
                 "test_speech.py", "test_hostile_input.py", "test_web.py", "test_hostile_http.py",
                 "test_rules_properties.py", "test_rules_playoff_properties.py",
                 "test_pi_audio.py", "test_dac_clock.py", "test_load.py", "test_watchdog.py",
                 "test_terminal.py", "test_engine_late_delivery.py", "test_input_limits.py",
                 "test_cli.py", "test_buttons_doctor.py", "test_bad_logs.py",
                 "test_engine_games.py", "test_live_busy.py", "test_bad_config.py",
                 "test_engine_live_table.py", "test_capture_outputs.py", "test_declared_pages.py",
                 "test_bad_flags.py", "test_clock_behind.py", "test_game_file.py")


# Known failures found when the session's branches were merged (the closing note lists them as
# open work): each is reported as "xfailed" on every run, never hidden, and turns into a pass
# ("xpassed") the day it is mended. Remove an entry with its fix.
KNOWN_FAILURES: dict[str, str] = {}  # none open now


# The whole suite's slow part: `make test` (the quick tier, under 90 s on this 2-core machine)
# leaves these out with `-m "not slow"`; `make test-all` and CI (.ci/run) run them too. Each is an
# end-to-end run of tens of seconds whose parts the quick tier also reaches one at a time (the
# rules, the engine on the simulated clock, the voice, the store, the HTTP API, the pages in
# Chromium: tests/test_declared_pages.py, one whole evening: tests/test_evening_pig.py).
SLOW_FILES = {
    "test_piper.py": "renders every phrase with the Piper voice (onnxruntime): minutes of CPU",
    "test_pi_install.py": "builds a Debian bookworm root with debootstrap and installs into it",
    "test_evening_game_night.py": "whole evenings of Spank the Pig! and Pig's Tail on real pages",
    "test_evening_cards.py": "whole evenings of the card games on real pages",
    "test_evening_quiz.py": "whole evenings of the quiz and Snap on real pages",
    "test_page_languages.py": "every page in every language in Chromium",
    "test_screens.py": "every game's every phase at phone and TV size in Chromium",
    "test_benchmarks.py": "the benchmarks at a tiny size",
    "test_benchmarks_hostile.py": "the hostile guests' benchmark at a tiny size",
    "test_benchmarks_speech.py": "the speech benchmarks at a tiny size",
    "test_benchmarks_startup.py": "the start-up benchmark at a tiny size",
    "test_speech_memory.py": "renders every game's calls cold and measures the voice's memory",
    "test_power_loss.py": "SIGKILLs real referee processes mid-game and restarts them",
    "test_load.py": "50 scoreboards and 8 seats pressing in real time",
    "test_hostile_disk.py": "full disks, locked and damaged databases: real referee processes",
    "test_hostile_input.py": "bad configs, flags and speech settings: a referee process each",
    "test_bad_config.py": "garbage configs drawn by Hypothesis, a referee process for some",
    "test_bad_flags.py": "bad command lines drawn by Hypothesis, a referee process each",
    "test_hostile_http.py": "slow and greedy clients against the real server, in real time",
    "test_hostile_flood.py": "floods of requests and event streams against the real server",
    "test_pi_audio.py": "a missing or silent speaker, waited for in real time",
    "test_calibrate_save.py": "calibrate run as the service user, real processes",
    "test_browser.py": "rounds played and settled on the real pages in Chromium, in real time",
    "test_pairing.py": "a phone paired at the box, on the real pages in Chromium",
}
SLOW_TESTS = {
    "tests/test_bad_logs.py::test_huge_logs_are_replayed_or_refused_with_bounded_memory":
        "replays logs of hundreds of megabytes",
    "tests/test_capture_faults.py::test_one_seat_mashing_50_times_a_second_for_a_simulated_minute":
        "a simulated minute of presses through the real engine",
    "tests/test_api_fuzz.py::test_every_operation_fuzzed_from_the_openapi_document":
        "500 fuzzed requests against the real server",
    "tests/test_browser.py::test_screenshots": "every page at phone and TV size",
}


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """The quick tier does not even import the slow files (each worker collects every file)."""
    return True if QUICK and collection_path.name in SLOW_FILES else None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: in the whole suite only (make test-all, CI): "
                                       "tests/conftest.py SLOW_FILES and SLOW_TESTS say why")
    # A suite started as a background job of a script (`make test-all &`) inherits SIGINT
    # ignored, as bash does for background jobs without job control, and so does every
    # `referee` a test starts: the Ctrl-C a test sends it was lost (the "lost Ctrl-C" of the
    # overlay-root doctor test). Python resets its own handlers at exec but keeps an ignore.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)  # before pytest's own `-m` selection sees the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole
    for item in items:
        if item.path.name in SLOW_FILES or item.nodeid.split("[")[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        reason = KNOWN_FAILURES.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
