"""Which games the referee knows: installed ones through entry points, others registered directly.

A game is a package's entry point in the group `table_referee.games` (name: the game's log name,
value: its `Rules` class), as gpiozero finds its pin factories; installing a package is how a
game joins. A test, or a program that builds a game at run time, registers a class directly with
`register` (as gpiozero's `Device.pin_factory` takes a factory) and takes it back with
`unregister`; a direct registration wins over an installed game of the same name.
Nothing outside a game's own module names it.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points

from referee.events import GameStart
from referee.rules.base import Rules
from referee.rules.declare import Fact, RulesError

__all__ = ["GROUP", "facts_by_game", "games", "new_rules", "register", "rules_for", "unregister"]

GROUP = "table_referee.games"

log = logging.getLogger(__name__)

_direct: dict[str, type[Rules]] = {}
_installed: dict[str, type[Rules]] | None = None


def _load_installed() -> dict[str, type[Rules]]:
    global _installed
    if _installed is None:
        found: dict[str, type[Rules]] = {}
        for ep in entry_points(group=GROUP):
            try:
                cls = ep.load()
            except Exception as exc:  # a broken game package must not stop the others
                log.warning("game %r (%s) cannot be loaded: %s", ep.name, ep.value, exc)
                continue
            if not (isinstance(cls, type) and issubclass(cls, Rules)):
                log.warning("game %r (%s) is not a Rules class", ep.name, ep.value)
                continue
            if cls.NAME != ep.name:
                log.warning("game entry point %r names a game called %r", ep.name, cls.NAME)
                continue
            found[cls.NAME] = cls
        _installed = found
    return _installed


def register(cls: type[Rules]) -> type[Rules]:
    """Register a game class directly (tests, games built at run time); usable as a decorator."""
    _direct[cls.NAME] = cls
    return cls


def unregister(name: str) -> None:
    """Take back a game registered directly (an installed game stays)."""
    _direct.pop(name, None)


def games() -> dict[str, type[Rules]]:
    """Every game by its log name, in name order."""
    return dict(sorted({**_load_installed(), **_direct}.items()))


def facts_by_game() -> dict[str, tuple[Fact, ...]]:
    """Each game's facts in its own namespace: one name may be a count in one game and a flag in
    another (a facts line or body is read against its own game's)."""
    return {name: cls.facts() for name, cls in games().items()}


def rules_for(game: str) -> type[Rules]:
    try:
        return games()[game]
    except KeyError:
        raise RulesError(
            f"unknown game {game!r}; choose one of {', '.join(games())}"
        ) from None


def new_rules(start: GameStart) -> Rules:
    """The rules of a `game` line: its game's class with its seats and its (typed) options; a
    practice game's have no sudden death and no champion."""
    rules = rules_for(start.game)(start.seats, start.options)
    rules.practice = start.practice
    return rules
