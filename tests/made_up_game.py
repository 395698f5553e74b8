"""A game that exists only in the tests: "first after the beep".

The referee calls "Ready… BEEP!"; the first seat to press after the beep scores a point, a press
under `tie_us` behind it makes it too close to call. A seat that presses before the beep (in the
`early_ms` before it) loses a point it has. When nobody presses, the judge is asked whether the
beep was heard at all. Most points after `rounds` beeps wins.

It is written the way a new game module would be, against the declarations alone: if the engine,
the voice, the scoreboard or the command line named a game, or probed one, this game would not
play there.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.events import Awaiting, Cue, Press, Reason, Ruling, StandingRow, Standings, places
from referee.rules import race
from referee.rules.base import Phrase, RederivedRules, Shared, Status
from referee.rules.declare import Call, Fact, Option, Schedule, UnitWords


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
        self.presses: list[tuple[int, str]] = []
        self.rounds: list[BeepRound] = []
        self.now_us = 0
        self.finished = False
        self.scores = dict.fromkeys(self.seats, 0)

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
        insort(self.presses, (press.t_us, press.seat))
        self.now_us = max(self.now_us, press.t_us)
        number = sum(1 for t in self.cues if t - self.options["early_ms"] * 1000 <= press.t_us)
        self.refold(number)

    def _firsts(self, lo: int, hi: int) -> dict[str, int]:
        firsts: dict[str, int] = {}
        i = bisect_left(self.presses, (lo, ""))
        while i < len(self.presses) and self.presses[i][0] < hi:
            firsts.setdefault(self.presses[i][1], self.presses[i][0])
            i += 1
        return firsts

    def _fold(self, start: int) -> None:
        old = {r.number: r.outputs for r in self.rounds}
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
        self.rounds, self.scores = kept, scores
        for number in set(old) | {r.number for r in kept}:
            if old.get(number, []) != (kept[number - 1].outputs if number <= len(kept) else []):
                self.changed.add(number)

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

    def round_count(self) -> int:
        self.sync()
        return len(self.rounds)

    def round_outputs(self, number: int) -> list[Ruling | Awaiting]:
        self.sync()
        return list(self.rounds[number - 1].outputs)

    def _over(self) -> bool:
        return (len(self.rounds) == self.options["rounds"] and self.rounds[-1].closed
                and not any(isinstance(o, Awaiting) for r in self.rounds for o in r.outputs))

    def standings(self) -> Standings:
        self.sync()
        over = self._over()
        ranked = places(self.scores, self.seats, more_wins=self.MORE_WINS)
        rows = tuple(StandingRow(s, self.scores[s], ranked[s])
                     for s in sorted(self.seats, key=lambda s: (ranked[s], self.seats.index(s))))
        return Standings(over, rows, tuple(r.seat for r in rows if r.place == 1) if over else ())

    def status(self) -> Status:
        self.sync()
        waiting = [r for r in self.rounds if not r.closed]
        asked = next((o for r in self.rounds for o in r.outputs if isinstance(o, Awaiting)), None)
        return Status(len(self.rounds), bool(waiting),
                      min((r.close_us for r in waiting), default=None), asked, self._over())

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

