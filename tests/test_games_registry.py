"""Games are found through entry points; a test registers its own directly, for itself only."""

from __future__ import annotations

import re
from importlib.metadata import entry_points

import pytest

from referee.rules import registry
from referee.rules.declare import RulesError
from tests.harness import register_game
from tests.made_up_game import FirstAfterTheBeep


def test_the_installed_games_are_the_packages_entry_points() -> None:
    declared = {ep.name: ep.value for ep in entry_points(group=registry.GROUP)}
    assert {"spank-the-pig", "pig", "pigs-tail"} <= set(declared)
    games = registry.games()
    for name in declared:
        assert games[name].NAME == name


def test_a_game_registered_directly_plays_by_name_and_is_gone_after_the_test(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        register_game(m, FirstAfterTheBeep)
        assert registry.rules_for("beep-race") is FirstAfterTheBeep
    known = ", ".join(registry.games())  # the installed games, in name order
    with pytest.raises(RulesError, match=re.escape(f"unknown game 'beep-race'; choose one of {known}")):
        registry.rules_for("beep-race")


def test_a_broken_game_package_is_left_out_and_the_others_still_play(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from importlib.metadata import EntryPoint

    broken = EntryPoint("broken-game", "no_such_module_here:Game", registry.GROUP)
    wrong = EntryPoint("not-a-game", "referee.events:Press", registry.GROUP)
    real = list(entry_points(group=registry.GROUP))
    monkeypatch.setattr(registry, "entry_points", lambda group: [*real, broken, wrong])
    monkeypatch.setattr(registry, "_installed", None)
    games = registry.games()
    assert "broken-game" not in games and "not-a-game" not in games
    assert "spank-the-pig" in games
    assert "cannot be loaded" in caplog.text and "is not a Rules class" in caplog.text


def test_every_registered_game_has_each_scenario_the_suite_plays_by_hand() -> None:
    """Most cross-game tests build what they play from what a game declares (the property tests,
    input limits, the rules framework, the engine's turns). A few play a scenario written for each
    game (a whole game on lgpio-like pins with photo finishes at every close, the screen walks'
    gallery, a bad log of each game): a registered game without one fails here, by name, rather
    than being left out unseen."""
    from tests.test_bad_logs import LOGS
    from tests.test_engine_late_delivery import GAMES as DELIVERY
    from tests.test_screens import GALLERY

    bad_logs = {log[0]["game"] for log in LOGS.values()}
    for game in registry.games():
        missing = [name for name, table in (("test_engine_late_delivery.GAMES", DELIVERY),
                                            ("test_screens.GALLERY", GALLERY),
                                            ("test_bad_logs.LOGS", bad_logs)) if game not in table]
        assert not missing, f"{game}: no scenario in {', '.join(missing)}"
