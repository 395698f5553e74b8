"""The games' pure rules: one module per game, found through entry points (`registry`)."""

from referee.rules.base import Rules
from referee.rules.declare import Call, Fact, Option, RulesError, Schedule
from referee.rules.registry import all_facts, games, register, rules_for, unregister

__all__ = ["Call", "Fact", "Option", "Rules", "RulesError", "Schedule", "all_facts", "games",
           "register", "rules_for", "unregister"]
