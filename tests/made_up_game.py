"""Two games that exist only in the tests: "first after the beep", and "Snap Grab" (turn-based).

The referee calls "Ready… BEEP!"; the first seat to press after the beep scores a point, a press
under `tie_us` behind it makes it too close to call. A seat that presses before the beep (in the
`early_ms` before it) loses a point it has. When nobody presses, the judge is asked whether the
beep was heard at all. Most points after `rounds` beeps wins.

It is written the way a new game module would be, against the declarations alone: if the engine,
the voice, the scoreboard or the command line named a game, or probed one, this game would not
play there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.events import Awaiting, Cue, Press, Reason, Ruling
from referee.rules import race
from referee.rules.base import Phrase, RederivedRules, Shared
from referee.rules.declare import Call, Fact, Option, Schedule, UnitWords
from referee.rules.turns import Pile, Turn, TurnRules, turn_options


class Beep(Reason):
    FIRST = "first after the beep"
    EARLY = "pressed before the beep"


@dataclass
class BeepRound:
    number: int
    cue_us: int
    window_end_us: int
    close_us: int
    firsts: dict[str, int]
    early: dict[str, int]
    closed: bool = False
    outputs: list[Ruling | Awaiting] = field(default_factory=list)


class FirstAfterTheBeep(RederivedRules):
    NAME: ClassVar[str] = "beep-race"
    TITLE: ClassVar[str] = "First after the Beep"
    SEATS: ClassVar[tuple[int, int]] = (2, 4)
    UNIT: ClassVar[str] = "points"
    UNIT_WORDS: ClassVar[tuple[str, str]] = ("point", "points")
    UNIT_SAID: ClassVar[UnitWords] = UnitWords("{n} point", "{n} points", loss="{count} lost",
                                               gain="{count}")
    MORE_WINS: ClassVar[bool] = True
    # its own words, beside its rules, as any game's: the voice has none of them
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {
        "beep": ("Ready,", "BEEP!"), "beep_rules": ("{rounds} beeps. First to press wins.",)}
    CALLS: ClassVar[tuple[str, ...]] = ("beep",)
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option.number("rounds", 3, 1, 20, unit="beeps", label="Beeps",
                      help="how many beeps a game has"),
        Option.number("window_ms", 1000, 100, 10_000, unit="ms", label="Race window",
                      help="how long after the beep a press counts"),
        Option.number("early_ms", 300, 0, 5000, unit="ms", label="Jumping the gun",
                      help="before the beep, a press costs a point"),
        Option.choice("tempo_ms", 300, (200, 300, 400), label="Call tempo",
                      help="between the two words of the call"),
    )
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("heard", "flag", "Did everyone hear the beep?", "did everyone hear the beep?",
             "Was the beep heard?", answers=("Heard", "Not heard")),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Beep,)

    def __init__(self, seats: Any, options: Any = None) -> None:
        super().__init__(seats, options)
        self.cues: list[int] = []
        self.rounds: list[BeepRound] = []
        self.points = dict.fromkeys(self.seats, 0)
        self.over = False

    def schedule(self) -> Schedule:
        return Schedule(tempo_ms=int(self.options["tempo_ms"]),
                        pause_ms=int(self.options["pause_ms"]))

    def planned_rounds(self) -> int:
        return int(self.options["rounds"])

    def on_cue(self, cue: Cue) -> None:
        if len(self.cues) < self.options["rounds"]:
            self.cues.append(cue.t_us)
            self.refold(len(self.cues) - 1)

    def on_press(self, press: Press) -> None:
        self._keep(press)
        self.now_us = max(self.now_us, press.t_us)
        number = sum(1 for t in self.cues if t - self.options["early_ms"] * 1000 <= press.t_us)
        self.refold(number)

    def _fold(self, start: int) -> None:
        kept = self.rounds[:start - 1]
        scores = dict.fromkeys(self.seats, 0)
        for r in kept:
            _add(scores, r.outputs)
        tie = max(int(self.options["tie_us"]), 1)
        for i in range(start - 1, len(self.cues)):
            cue = self.cues[i]
            end = cue + self.options["window_ms"] * 1000
            if i + 1 < len(self.cues):
                end = min(end, self.cues[i + 1] - self.options["early_ms"] * 1000)
            firsts = self._firsts(cue, end)
            early = self._firsts(cue - self.options["early_ms"] * 1000, cue)
            close = min(end, min(firsts.values()) + tie) if firsts else end
            rnd = BeepRound(i + 1, cue, end, close, firsts, early)
            rnd.closed = self.finished or close <= self.now_us
            if rnd.closed:
                rnd.outputs = self._rule(rnd, scores)
                _add(scores, rnd.outputs)
            kept.append(rnd)
        self.rounds, self.points = kept, scores
        self.over = (len(kept) == self.options["rounds"] and kept[-1].closed
                     and not any(isinstance(o, Awaiting) for r in kept for o in r.outputs))

    def _rule(self, rnd: BeepRound, scores: dict[str, int]) -> list[Ruling | Awaiting]:
        n, facts = rnd.number, self.facts_for(rnd.number)
        if facts.get("void"):
            return []
        out: list[Ruling | Awaiting] = [Ruling(n, s, -1 if scores[s] else 0, Beep.EARLY)
                                        for s in rnd.early]
        if rnd.firsts:
            first = race.first([(t, s) for s, t in rnd.firsts.items()], self.options["tie_us"])
            if first.too_close:
                out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, first.margin_us))
            elif first.seat is not None:
                out.append(Ruling(n, first.seat, 1, Beep.FIRST, first.margin_us))
        elif "heard" not in facts:
            out.append(Awaiting(n, ("heard",)))
        return [*out, *self.penalty_rulings(n)]

    def scores(self) -> Mapping[str, int]:
        return self.points

    def next_call(self) -> Call | None:
        st = self.status()
        if st.over or st.race_open or st.awaiting or len(self.cues) >= self.options["rounds"]:
            return None
        return Call("beep")

    def reactions(self, number: int) -> dict[str, int]:
        rnd = self.rounds[number - 1]
        return {s: t - rnd.cue_us for s, t in rnd.firsts.items()}

    def announcements(self, number: int) -> list[Phrase]:
        return [("beep_rules", {"rounds": self.options["rounds"]})] if number == 1 else []


def _add(scores: dict[str, int], outputs: list[Ruling | Awaiting]) -> None:
    for o in outputs:
        if isinstance(o, Ruling) and o.seat is not None:
            scores[o.seat] = max(0, scores[o.seat] + o.delta)



# --------------------------------------------------------------------------------------------
# A second made-up game, turn-based, over the framework's turn base


class Grab(Reason):
    GRABBED = "grabbed the match"
    FALSE_GRAB = "grabbed with no match"
    FIRST_CARD = "grabbed the first card"


@dataclass
class GrabTable(Pile):
    """The pile and the cards held, and each seat's false grabs (strikes)."""

    strikes: dict[str, int] = field(default_factory=dict)

    def copy(self) -> GrabTable:
        return GrabTable(dict(self.scores), self.pile, dict(self.strikes))


class SnapGrab(TurnRules):
    """"Snap Grab": seats flip in turn ("<seat>, snap!") from a deck of `cards`. The judge says
    how many cards of the pile the flip matches (a count, `match`; asked whenever someone
    grabbed). On a match the first to grab takes the pile; with no match the first grabber puts
    a card back on the pile (a strike); on the first card (nothing below) a grab is a strike too.
    At `strikes` strikes a seat is out: its turns are skipped, its grabs ignored. Most cards wins.
    """

    NAME: ClassVar[str] = "snap-grab"  # sorts after "pigs-tail": the flat API facts keep its flag
    TITLE: ClassVar[str] = "Snap Grab"
    SEATS: ClassVar[tuple[int, int]] = (2, 5)
    UNIT: ClassVar[str] = "cards"
    UNIT_WORDS: ClassVar[tuple[str, str]] = ("card", "cards")
    MORE_WINS: ClassVar[bool] = True
    CALL: ClassVar[str] = "snap_turn"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option.number("cards", 6, 2, 40, unit="cards", label="Deck", help="cards to flip"),
        Option.number("strikes", 2, 1, 9, unit="strikes", label="Strikes",
                      help="false grabs that put a seat out"),
        *turn_options(turn_ms=1500, tempo_ms=200, window_ms=1000),
    )
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("match", "count", "Cards the flip matches", "how many cards match?",
             "How many cards match?", yes=1, no=0, most=40, shown=3, what="card",
             answers=("Match", "No match")),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Grab,)
    UNIT_SAID: ClassVar[UnitWords] = UnitWords("{n} card", "{n} cards", loss="{count} put back",
                                               gain="{count}")
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {
        "snap_turn": ("{seat},", "snap!"),
        "snap_rules": ("{cards} cards. Grab the pile on a match.",),
    }
    CALLS: ClassVar[tuple[str, ...]] = ("snap_turn",)

    def deck(self) -> int:
        return int(self.options["cards"])

    def planned_rounds(self) -> int:
        return self.deck()

    def new_pile(self) -> GrabTable:
        return GrabTable(dict.fromkeys(self.seats, 0))

    def is_out(self, seat: str, table: Pile) -> bool:
        assert isinstance(table, GrabTable)
        return bool(table.strikes.get(seat, 0) >= self.options["strikes"])

    def counted(self, turn: Turn, firsts: dict[str, int]) -> dict[str, int]:
        return {s: t for s, t in firsts.items() if not self.is_out(s, turn.before)}

    def rule(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        assert isinstance(table, GrabTable)
        n, tie = turn.number, self.options["tie_us"]
        if not turn.taps:
            return []
        first = race.first(turn.taps, tie)
        match = 0 if table.pile == 1 else self.facts_for(n).get("match")
        if match is None:
            return [Awaiting(n, ("match",))]
        if match:
            out: list[Ruling | Awaiting] = []
            self.take(out, table, n, first.seat, Grab.GRABBED, first.margin_us, first.too_close)
            return out
        if first.seat is None or first.too_close:
            return [Ruling(n, None, 0, Shared.TOO_CLOSE, first.margin_us)]
        seat = first.seat
        lost = 1 if table.scores[seat] else 0
        table.scores[seat] -= lost
        table.pile += lost
        table.strikes[seat] = table.strikes.get(seat, 0) + 1
        why = Grab.FIRST_CARD if turn.before.pile == 0 else Grab.FALSE_GRAB
        return [Ruling(n, seat, -lost, why, first.margin_us)]

    def racing(self, number: int) -> tuple[str, ...]:
        before = self.rounds[number - 1].before
        return tuple(s for s in self.seats if not self.is_out(s, before))

    def announcements(self, number: int) -> list[Phrase]:
        return [("snap_rules", {"cards": self.deck()})] if number == 1 else []
