"""The games' pure rules: one module per game, found through entry points (`registry`)."""

from referee.rules.base import Rules
from referee.rules.declare import Call, Fact, Option, RulesError, Schedule
from referee.rules.registry import facts_by_game, games, register, rules_for, unregister

__all__ = ["Call", "Fact", "Option", "Rules", "RulesError", "Schedule", "facts_by_game", "games",
           "register", "rules_for", "unregister"]
