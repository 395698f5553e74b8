"""The games' pure rules: one module per game, each registered by its log name."""

from referee.rules import (
    pig,  # noqa: F401
    pigstail,  # noqa: F401
    spank,  # noqa: F401
)
from referee.rules.base import REGISTRY, Rules, RulesError, rules_for

__all__ = ["REGISTRY", "Rules", "RulesError", "rules_for"]
