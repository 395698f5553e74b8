"""The games' pure rules: one module per game, each registered by its log name."""

from referee.rules import (
    pig,  # noqa: F401
    pigstail,  # noqa: F401
    spank,  # noqa: F401
)
from referee.rules.base import REGISTRY, Rules, all_facts, games, rules_for
from referee.rules.declare import Call, Fact, Option, RulesError, Schedule

__all__ = ["REGISTRY", "Call", "Fact", "Option", "Rules", "RulesError", "Schedule", "all_facts",
           "games", "rules_for"]
