"""A game file's declaration compiled into a `Rules` class, registered like any game.

`compile_game` reads a checked `Declaration` (referee.rules.gamefile) and builds a class over one of
two bases: a turn game with a deck and a centre pile (`referee.rules.filedturns`), or a race called
by a cadence or started by the judge (`referee.rules.filedrace`). Everything the rest of the referee
reads of a game (name, seats, unit, direction, phrases, calls, options, facts, reasons, buttons)
comes from the declaration, so a game from a file plays on every page and in every command as a
module's game does (`referee.rules.registry.learn` compiles a declaration a log's game line
carries and registers it); `DECLARATION` on the class is what that line carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.rules.base import Rules
from referee.rules.declare import UnitWords
from referee.rules.filed import facts_of, options_of, reasons_of
from referee.rules.filedrace import FiledRace
from referee.rules.filedturns import FiledTurns, hands
from referee.rules.gamefile import Declaration
from referee.rules.stacks import StackRules

__all__ = ["compile_game"]


def compile_game(d: Declaration, *, carried: bool = True) -> type[Rules]:
    """The `Rules` class of a declaration. `carried`: a log's game line carries the declaration
    (a game from a file); False for a game that ships inside the package (played by name)."""
    base: type[Rules] = FiledTurns if d.round.start == "turn" else FiledRace
    one, many = d.unit
    phrases: dict[str, Sequence[str]] = {"call": tuple(d.round.call)}
    if d.intro:
        phrases["intro"] = (d.intro,)
    if d.cards is not None:  # what the card stacks say when cards change hands (those it can)
        earns = {d.press.first_right.earns, d.press.last_right.earns, d.press.first_wrong.earns}
        phrases = {**StackRules.PHRASES, **phrases, "deal": (d.cards.deal,),
                   "took": ("{seat} takes the pile: {number} cards.",)}
        if d.cards.first_card_can_match:  # a pile of one card can be taken
            phrases["took_one"] = ("{seat} takes the pile: one card.",)
        if "give-each" not in earns:
            del phrases["gave_each"]
    attrs: dict[str, Any] = {
        "NAME": d.name, "TITLE": d.title, "SEATS": (d.seats[0], d.seats[1]),
        "UNIT": many, "UNIT_WORDS": (one, many), "MORE_WINS": d.more_wins,
        "UNIT_SAID": UnitWords("{n} " + one, "{n} " + many, loss="{count} lost",
                               gain="{count}"),
        "PHRASES": phrases, "CALLS": ("call",), "CALL": "call",
        "OPTIONS": options_of(d), "FACTS": facts_of(d), "BUTTONS": tuple(d.round.buttons),
        "DECL": d, "DECLARATION": d.to_builtins() if carried else None,
        "PENALTY_REASONS": ("judge's penalty",),
        "__doc__": f"{d.title}, a game declared in a game file.",
        "__module__": base.__module__,
    }
    why = reasons_of(d)
    attrs["WHY"] = why
    attrs["REASONS"] = (why,)
    if d.cards is not None:
        attrs["DEAL"] = d.cards.deck
        attrs["HANDS"] = hands({why[k.upper()]: getattr(d.press, k).earns for k in
                                ("first_right", "last_right", "first_wrong")}, why["GIVEN"])
    return type(_class_name(d.name), (base,), attrs)


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-")) + "FromFile"
