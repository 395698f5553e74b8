"""A game file's declaration compiled into a `Rules` class, registered like any game.

`compile_game` reads a checked `Declaration` (referee.rules.gamefile) and builds a class over one of
two bases: a turn game with a deck and a centre pile (`referee.rules.filedturns`), or a race called
by a cadence or started by the judge (`referee.rules.filedrace`). Everything the rest of the referee
reads of a game (name, seats, unit, direction, phrases, calls, options, facts, reasons, buttons)
comes from the declaration, so a game from a file plays on every page and in every command as a
module's game does. `learn` compiles a declaration a log's game line carries and registers it
directly; `DECLARATION` on the class is what that line carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from referee.events import Reason
from referee.rules import registry
from referee.rules.base import Rules
from referee.rules.declare import Fact, Option, UnitWords
from referee.rules.gamefile import Declaration, GameFileError, from_builtins, parse_effect

__all__ = ["FiledGame", "compile_game", "game_class", "learn"]


class FiledGame:
    """What both bases of a filed game share: its declaration, and what a press earns."""

    DECL: ClassVar[Declaration]
    DECLARATION: ClassVar[dict[str, Any] | None] = None
    ZERO_SAID: ClassVar[bool] = False  # "Bob: buzzed first.", not "... Zero points."
    WHY: ClassVar[type[Reason]]
    options: dict[str, Any]

    def amount(self, which: str) -> tuple[str, int]:
        """What `which` ("first_right"...) earns: the effect and its count with these options."""
        kind, amount = parse_effect(getattr(self.DECL.press, which).earns)
        return kind, int(self.options[amount]) if isinstance(amount, str) else amount

    def why(self, which: str) -> Reason:
        return self.WHY[which.upper()]


def _reasons(d: Declaration) -> type[Reason]:
    members = [("FIRST_RIGHT", d.press.first_right.says), ("LAST_RIGHT", d.press.last_right.says),
               ("FIRST_WRONG", d.press.first_wrong.says), ("EARLY", d.round.early_says),
               ("NAMED", d.judge.named), ("NAMED_NEXT", d.judge.named_next),
               ("GIVEN", "given a card")]
    return Reason("FiledWhy", members)  # type: ignore[return-value]


def _options(d: Declaration) -> tuple[Option, ...]:
    out: list[Option] = [
        Option.number("window_ms", d.round.window_ms, 100, 60_000, unit="ms",
                      label="Race window", help="how long after the go-word a press counts"),
        Option.number("tempo_ms", d.round.tempo_ms, 50, 10_000, unit="ms", label="Tempo",
                      help="time between the words of the call"),
        Option.number("pause_ms", d.round.pause_ms, 0, 600_000, unit="ms",
                      label="Pause between rounds", help="pause between rounds at a live table"),
    ]
    if d.round.start == "turn":
        out.append(Option.number("turn_ms", d.round.pace_ms, 200, 60_000, unit="ms",
                                 label="Turn pace", help="pace of the turn calls"))
    if d.round.early != "ignore":
        early = d.round.tempo_ms * (len(d.round.call) - 1)
        out.append(Option.number("early_ms", early, 0, 60_000, unit="ms", label="Early window",
                                 help="before the go-word, a press is early"))
    for name, spec in d.options.items():
        out.append(Option.number(name, spec.default, spec.min, spec.max, unit=spec.unit,
                                 label=spec.label, help=spec.help))
    return tuple(out)


def _facts(d: Declaration) -> tuple[Fact, ...]:
    j = d.judge
    asked = j.question[:1].lower() + j.question[1:]
    if j.mode == "flag":
        return (Fact(j.fact, "flag", j.label, asked, j.question, answers=(j.answers[0],
                                                                           j.answers[1])),)
    return (Fact(j.fact, "seat", j.label, asked, j.question, yes=None, no=None,
                 answers=(j.answers[0], j.answers[1])),
            Fact("wrong", "names", "Answered wrong", "who answered wrong?", "Who answered wrong?",
                 yes=[], no=[], answers=("Wrong", "Nobody"), what="seat", asked=False))


def compile_game(d: Declaration, *, carried: bool = True) -> type[Rules]:
    """The `Rules` class of a declaration. `carried`: a log's game line carries the declaration
    (a game from a file); False for a game that ships inside the package (played by name)."""
    from referee.rules.filedrace import FiledRace
    from referee.rules.filedturns import FiledTurns

    base: type[Rules] = FiledTurns if d.round.start == "turn" else FiledRace
    one, many = d.unit
    phrases: dict[str, Sequence[str]] = {"call": tuple(d.round.call)}
    if d.intro:
        phrases["intro"] = (d.intro,)
    if d.cards is not None:
        phrases["deal"] = (d.cards.deal,)
    attrs: dict[str, Any] = {
        "NAME": d.name, "TITLE": d.title, "SEATS": (d.seats[0], d.seats[1]),
        "UNIT": many, "UNIT_WORDS": (one, many), "MORE_WINS": d.more_wins,
        "UNIT_SAID": UnitWords("{n} " + one, "{n} " + many, loss="{count} lost",
                               gain="{count}"),
        "PHRASES": phrases, "CALLS": ("call",), "CALL": "call",
        "OPTIONS": _options(d), "FACTS": _facts(d), "BUTTONS": tuple(d.round.buttons),
        "DECL": d, "DECLARATION": d.to_builtins() if carried else None,
        "PENALTY_REASONS": ("judge's penalty",),
        "__doc__": f"{d.title}, a game declared in a game file.",
        "__module__": base.__module__,
    }
    why = _reasons(d)
    attrs["WHY"] = why
    attrs["REASONS"] = (why,)
    return type(_class_name(d.name), (base,), attrs)


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-")) + "FromFile"


def game_class(name: str, declared: Mapping[str, Any] | None) -> type[Rules]:
    """The class of a game line or record: a declaration it carries is learnt, else the name is
    looked up (RulesError naming the game, or the declaration's key)."""
    if declared is None:
        return registry.rules_for(name)
    cls = learn(declared)
    if cls.NAME != name:
        raise GameFileError(f"the game line names {name!r} but its declaration is {cls.NAME!r}; "
                            f"make them the same")
    return cls


def learn(declared: Mapping[str, Any]) -> type[Rules]:
    """Compile the declaration a log's game line (or a game's record) carries and register it, so
    the rest of the referee finds the game by its name; GameFileError if it is not a game."""
    cls = compile_game(from_builtins(dict(declared)))
    known = registry.games().get(cls.NAME)
    if known is not None and getattr(known, "DECLARATION", None) is None:
        raise GameFileError(f"name = {cls.NAME!r} is a game the referee knows already; "
                            f"give the game file another name")
    registry.register(cls)
    return cls
