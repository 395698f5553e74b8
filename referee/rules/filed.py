"""What every game from a file shares: its declaration read into options, facts and reasons,
and what a press earns (`FiledGame`, the mixin of both bases: `referee.rules.filedturns` and
`referee.rules.filedrace`; `referee.rules.fromfile` compiles a declaration into a class)."""

from __future__ import annotations

from typing import Any, ClassVar

from referee.events import Reason
from referee.rules.declare import Fact, Option
from referee.rules.gamefile import Declaration, parse_effect

__all__ = ["FiledGame", "facts_of", "options_of", "reasons_of"]


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


def reasons_of(d: Declaration) -> type[Reason]:
    members = [("FIRST_RIGHT", d.press.first_right.says), ("LAST_RIGHT", d.press.last_right.says),
               ("FIRST_WRONG", d.press.first_wrong.says), ("EARLY", d.round.early_says),
               ("NAMED", d.judge.named), ("NAMED_NEXT", d.judge.named_next),
               ("GIVEN", "given a card")]
    return Reason("FiledWhy", members)  # type: ignore[arg-type,return-value]


def options_of(d: Declaration) -> tuple[Option, ...]:
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


def facts_of(d: Declaration) -> tuple[Fact, ...]:
    j = d.judge
    asked = j.question[:1].lower() + j.question[1:]
    if j.mode == "flag":
        return (Fact(j.fact, "flag", j.label, asked, j.question, answers=(j.answers[0],
                                                                           j.answers[1])),)
    return (Fact(j.fact, "seat", j.label, asked, j.question, yes=None, no=None,
                 answers=(j.answers[0], j.answers[1])),
            Fact("wrong", "names", "Answered wrong", "who answered wrong?", "Who answered wrong?",
                 yes=[], no=[], answers=("Wrong", "Nobody"), what="seat", asked=False))
