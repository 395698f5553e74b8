"""Spank the Pig! on the box.

The rules, in plain words (PRODUCT.md, "Spank the Pig!"; the seed rule sheet):
- The deck (72) is dealt equally; rounds = deck // seats; the last one is announced.
- Each round the referee calls "Spank… the… PIG!"; the cue is the instant "PIG!" sounds. The race
  window runs `window_ms` from the cue, or until every seat has pressed every race button (plus
  `tie_us` to settle), and never past the next cue.
- With p pigs on the table: p = 0, the first slap is a mistake (1 whammy); p = 1 or 2, the last
  slapper takes p whammies; p ≥ 3, the first p slappers each shed one whammy (never below zero).
- A slap in the `early_ms` before the cue is a wrong slap: the round's first wrong slap earns the
  whammy; it does not count as slapping the pig. Earlier presses are ignored.
- Doubles, with the double buttons, race the same way with d doubles (d = 0: first presser takes 1;
  d ≥ 1: last presser takes d). With `doubles = judge` the judge names them as penalties.
- What the box cannot see comes from consensus (all slapped ⇒ 1 pig, none ⇒ 0) or the judge.
- A margin under `tie_us` is too close to call. Judge penalties add to the score.
- Fewest whammies wins; tied leaders play sudden death: whoever takes a whammy is out, unless all
  remaining take some in the same round (then only those above the fewest go out; all equal: on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.events import (
    Awaiting,
    Cue,
    Press,
    Reason,
    Ruling,
    StandingRow,
    Standings,
    places,
)
from referee.rules import race
from referee.rules.base import Phrase, Rules, Shared, Status, register
from referee.rules.declare import Call, Fact, Option, RulesError, Schedule

CHARACTERS = (("pug", "Pugs"), ("walrus", "Walruses"), ("cow", "Cows"),
              ("zebracorn", "Zebracorns"), ("hippo", "Hippos"), ("bean", "Beans"))


class Why(Reason):
    """Spank the Pig!'s reasons (the judge's penalties and photo finishes are `Shared`)."""

    SLAP_EARLY = "slap too early"
    DOUBLE_EARLY = "declare a double too early"
    SLAP_WITH_NO_PIG = "first to slap with no pig"
    DOUBLE_WITH_NO_DOUBLE = "first to declare a double with no double"
    FIRST_TO_A_PIG = "first to spank a pig"
    NO_WHAMMY_TO_SHED = "first to spank a pig, no whammy to shed"
    LAST_TO_THE_PIG = "last to spank the pig"
    LAST_TO_THE_PIGS = "last to spank the pigs"
    LAST_TO_THE_DOUBLE = "last to declare the double"
    LAST_TO_THE_DOUBLES = "last to declare the doubles"


# per race button: (early, first with nothing to press for, last with one, last with several)
RACE_REASONS = {
    "slap": (Why.SLAP_EARLY, Why.SLAP_WITH_NO_PIG, Why.LAST_TO_THE_PIG, Why.LAST_TO_THE_PIGS),
    "double": (Why.DOUBLE_EARLY, Why.DOUBLE_WITH_NO_DOUBLE, Why.LAST_TO_THE_DOUBLE,
               Why.LAST_TO_THE_DOUBLES),
}


@dataclass
class Round:
    number: int
    cue_us: int
    close_us: int  # cue + window, or the next cue, or all-pressed + tie: whichever first
    race: dict[str, dict[str, int]] = field(default_factory=lambda: {"slap": {}, "double": {}})
    early: dict[str, dict[str, int]] = field(default_factory=lambda: {"slap": {}, "double": {}})
    closed: bool = False
    # filled by the fold:
    active: tuple[str, ...] = ()
    outputs: list[Ruling | Awaiting] = field(default_factory=list)
    counted: bool = True  # False for a cue after the game was over
    before: _Fold | None = None  # the table as it stood before this round


@dataclass
class _Fold:
    """The running totals of the fold over rounds."""

    scores: dict[str, int]
    knocked: set[str]  # knocked out in sudden death
    benched: set[str]  # not among the tied leaders: sit out sudden death
    over: bool
    winners: tuple[str, ...]

    def copy(self) -> _Fold:
        return _Fold(dict(self.scores), set(self.knocked), set(self.benched), self.over,
                     self.winners)


@register
class SpankThePig(Rules):
    NAME: ClassVar[str] = "spank-the-pig"
    TITLE: ClassVar[str] = "Spank the Pig!"
    SEATS: ClassVar[tuple[int, int]] = (2, 7)
    UNIT: ClassVar[str] = "whammies"
    UNIT_WORDS: ClassVar[tuple[str, str]] = ("whammy", "whammies")
    BUTTONS: ClassVar[tuple[str, ...]] = ("slap", "double")
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option.number("deck", 72, 2, 1_000_000, unit="cards", label="Deck",
                      help="cards in the deck, dealt equally", practice_per_seat=3),
        Option.number("tempo_ms", 500, 100, 5000, unit="ms", label="Tempo",
                      help="time between the cadence words"),
        Option.number("window_ms", 3000, 100, 60_000, unit="ms", label="Race window",
                      help="race window after the cue"),
        Option.number("early_ms", 1500, 0, 60_000, unit="ms", label="Early window",
                      help="before the cue, a press is early"),
        Option.choice("doubles", None, ("buttons", "judge", "off"), label="Doubles",
                      help="how doubles are refereed",
                      labels=("Double buttons race", "The judge names who was late", "Off")),
    )
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("pigs", "count", "Pigs on the table", "pig or no pig?", "How many pigs?", yes=1, no=0, most=72,
             shown=3, what="pig"),
        Fact("doubles", "names", "Doubles showing (tap each character, then send)",
             "double or no double?", "Which doubles?", yes=["double"], no=[], choices=CHARACTERS,
             what="character", answers=("Send", "No double")),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Why,)

    def __init__(self, seats: Any, options: Any = None) -> None:
        super().__init__(seats, options)
        if self.options["doubles"] is None:
            self.options["doubles"] = "buttons" if len(self.seats) <= 4 else "off"
        self.rounds: list[Round] = []
        self.open: list[Round] = []  # rounds whose race window has not closed
        self.awaiting: dict[int, Awaiting] = {}
        self.pending: list[Press] = []  # presses between rounds: early if a cue follows soon
        self.now_us = 0
        self.state = _Fold(dict.fromkeys(self.seats, 0), set(), set(), False, ())
        self.regular_rounds = self.options["deck"] // len(self.seats)

    # -- what the game declares ---------------------------------------------------------------

    @classmethod
    def box_defaults(cls, seats: int, second_buttons: bool) -> dict[str, Any]:
        """Doubles on the second buttons up to 4 seats, by the judge without them, off from 5
        (the seed's advice)."""
        return {"doubles": "off" if seats >= 5 else ("buttons" if second_buttons else "judge")}

    def panel_facts(self) -> tuple[Fact, ...]:
        """Doubles are the judge's to give only when the buttons race on them."""
        return tuple(f for f in self.facts()
                     if f.name != "doubles" or self.options["doubles"] == "buttons")

    def schedule(self) -> Schedule:
        return Schedule(tempo_ms=int(self.options["tempo_ms"]),
                        pause_ms=int(self.options["pause_ms"]))

    def planned_rounds(self) -> int:
        return int(self.regular_rounds)

    # -- timeline -----------------------------------------------------------------------------

    @property
    def race_buttons(self) -> tuple[str, ...]:
        return ("slap", "double") if self.options["doubles"] == "buttons" else ("slap",)

    def round_count(self) -> int:
        return len(self.rounds)

    def check_cue(self, cue: Cue) -> None:
        if self.rounds and cue.t_us < self.rounds[-1].cue_us:
            raise RulesError(f"cue at {cue.t_us} comes before the previous cue")

    def on_cue(self, cue: Cue) -> None:
        if self.rounds:
            prev = self.rounds[-1]
            if cue.t_us < prev.close_us:
                prev.close_us = cue.t_us
                self._drop_after_close(prev)
        rnd = Round(len(self.rounds) + 1, cue.t_us, cue.t_us + self.options["window_ms"] * 1000)
        self.rounds.append(rnd)
        self.open.append(rnd)
        self.refold(rnd.number)
        pending, self.pending = self.pending, []
        for press in pending:
            self._place(press)
        self.advance(self.now_us)

    def on_press(self, press: Press) -> None:
        self._place(press)
        self.advance(self.now_us)

    def _place(self, press: Press) -> None:
        """Put a press in the round its time belongs to (whatever order presses arrive in)."""
        early_us = self.options["early_ms"] * 1000
        for rnd in reversed(self.rounds):
            if press.t_us >= rnd.cue_us:
                if press.t_us < rnd.close_us:
                    self._record(rnd.race[press.button], press, rnd)
                break  # after its window: between rounds (early, if a cue follows soon)
            if press.t_us >= rnd.cue_us - early_us:
                before = self.rounds[rnd.number - 2] if rnd.number > 1 else None
                if before is None or press.t_us >= before.close_us:
                    self._record(rnd.early[press.button], press, rnd)
                    return
        if press.t_us >= self.now_us - early_us and not self.state.over:
            self.pending.append(press)  # a cue may still come that makes it early

    def _record(self, presses: dict[str, int], press: Press, rnd: Round) -> None:
        if press.seat in presses and presses[press.seat] <= press.t_us:
            return  # one press per button per round: only the first counts
        presses[press.seat] = press.t_us
        self._settle_close(rnd)
        if rnd.closed:
            self.refold(rnd.number)  # a press that reached us late: re-rule its round

    def _settle_close(self, rnd: Round) -> None:
        """Every active seat pressed every race button: the window closes `tie_us` later."""
        if self.stale is not None and self.stale <= rnd.number:
            self.sync()  # who is active in this round depends on the rounds before it
        active = rnd.active
        if not active:
            return  # a cue after the game was over: nobody races
        times = []
        for button in self.race_buttons:
            for seat in active:
                if seat not in rnd.race[button]:
                    return
                times.append(rnd.race[button][seat])
        settle = max(times) + max(self.options["tie_us"], 1)  # the last press is inside
        if settle < rnd.close_us:
            rnd.close_us = settle
            self._drop_after_close(rnd)

    def _drop_after_close(self, rnd: Round) -> None:
        for presses in rnd.race.values():
            for seat in [s for s, t in presses.items() if t >= rnd.close_us]:
                del presses[seat]

    def advance(self, t_us: int) -> None:
        self.now_us = max(self.now_us, t_us)
        early_us = self.options["early_ms"] * 1000
        self.pending = [p for p in self.pending if p.t_us >= self.now_us - early_us]
        if self.open:  # one or two rounds at most
            still = []
            for rnd in self.open:
                if rnd.close_us <= self.now_us:
                    rnd.closed = True
                    self.changed.add(rnd.number)  # ruled, even when nothing happened
                    self.refold(rnd.number)
                else:
                    still.append(rnd)
            self.open = still

    def finish(self) -> None:
        for rnd in self.open:
            rnd.closed = True
            self.changed.add(rnd.number)
            self.refold(rnd.number)
        self.open = []
        self.pending.clear()

    # -- ruling --------------------------------------------------------------------------------

    def _in_sudden_death(self, number: int) -> bool:
        return bool(number > self.regular_rounds)

    def _fold(self, start: int) -> None:
        """Re-rule rounds from `start` on, from the table as it stood before round `start`."""
        if start > len(self.rounds):
            return
        first = self.rounds[start - 1]
        if start == 1:
            state = _Fold(dict.fromkeys(self.seats, 0), set(), set(), False, ())
        elif first.before is None:  # a new round: the fold so far ends where it begins
            state = self.state.copy()
        else:
            state = first.before.copy()
        for rnd in self.rounds[start - 1 :]:
            rnd.before = state.copy()
            if state.over:
                if rnd.counted or rnd.outputs:
                    self.changed.add(rnd.number)
                rnd.counted, rnd.outputs, rnd.active = False, [], ()
                self.awaiting.pop(rnd.number, None)
                continue
            rnd.counted = True
            sudden = self._in_sudden_death(rnd.number)
            rnd.active = (
                tuple(s for s in self.seats if s not in state.knocked and s not in state.benched)
                if sudden
                else self.seats
            )
            outputs = self._rule(rnd, state.scores) if rnd.closed else []
            taken = dict.fromkeys(self.seats, 0)
            for o in outputs:
                if isinstance(o, Ruling) and o.seat is not None:
                    state.scores[o.seat] += o.delta
                    if o.delta > 0:
                        taken[o.seat] += o.delta
            if outputs != rnd.outputs:
                self.changed.add(rnd.number)
            rnd.outputs = outputs
            self.awaiting.pop(rnd.number, None)
            for o in outputs:
                if isinstance(o, Awaiting):
                    self.awaiting[rnd.number] = o
            if not rnd.closed or any(isinstance(o, Awaiting) for o in outputs):
                continue
            if sudden:
                state.knocked |= _knocked_out(rnd.active, taken)
            if rnd.number >= self.regular_rounds:
                alive = [s for s in self.seats if s not in state.knocked and s not in state.benched]
                best = min(state.scores[s] for s in alive)
                leaders = [s for s in alive if state.scores[s] == best]
                if len(leaders) == 1:
                    state.over, state.winners = True, (leaders[0],)
                else:
                    state.benched |= set(alive) - set(leaders)  # only tied leaders play on
        self.state = state

    def _rule(self, rnd: Round, scores: dict[str, int]) -> list[Ruling | Awaiting]:
        tie = self.options["tie_us"]
        facts = self.facts_for(rnd.number)
        active = rnd.active
        outputs: list[Ruling | Awaiting] = []
        need: list[str] = []
        if facts.get("void"):
            return outputs  # voided by the judge (or cut in half by a power loss)

        pigs = facts.get("pigs")
        if pigs is None:
            pigs = _consensus(rnd.race["slap"], active)
        if pigs is None:
            need.append("pigs")
        outputs += self._race(rnd, "slap", pigs, tie)

        if self.options["doubles"] == "buttons":
            d = len(set(facts["doubles"])) if "doubles" in facts else None
            if d is None:
                d = _consensus(rnd.race["double"], active)
            if d is None:
                need.append("doubles")
            outputs += self._race(rnd, "double", d, tie)

        outputs += self.penalty_rulings(rnd.number)
        # a whammy shed (p >= 3) comes off the pile as it stands after this round's whammies
        pile = dict(scores)
        for o in outputs:
            if isinstance(o, Ruling) and o.seat is not None and o.delta > 0:
                pile[o.seat] += o.delta
        for i, o in enumerate(outputs):
            if isinstance(o, Ruling) and o.seat is not None and o.delta < 0:
                if pile[o.seat] > 0:
                    pile[o.seat] -= 1
                else:
                    outputs[i] = Ruling(o.round, o.seat, 0, Why.NO_WHAMMY_TO_SHED, o.margin_us)
        if need:
            outputs.append(Awaiting(rnd.number, tuple(need)))
        return outputs

    def _race(self, rnd: Round, button: str, count: int | None, tie: int) -> list[Ruling]:
        """One race: slaps with `count` pigs, or double presses with `count` doubles."""
        n = rnd.number
        active = rnd.active
        too_early, nothing_there, last_to_one, last_to_several = RACE_REASONS[button]
        early = [(t, s) for s, t in rnd.early[button].items() if s in active]
        pressed = {s: t for s, t in rnd.race[button].items() if s in active}
        # wrong presses: early ones always; every press when there was nothing to press for
        wrong = early + ([(t, s) for s, t in pressed.items()] if count == 0 else [])
        out: list[Ruling] = []
        if wrong:
            first = race.first(wrong, tie)
            if first.too_close:
                out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, first.margin_us))
            elif first.seat is not None:
                was_early = min(wrong)[0] < rnd.cue_us
                reason = too_early if was_early else nothing_there
                out.append(Ruling(n, first.seat, 1, reason, first.margin_us))
        if not count:
            return out
        if button == "slap" and count >= 3:
            named, _ = race.first_n([(t, s) for s, t in pressed.items()], count, tie)
            # each by its own lead over the first seat outside the group (not one margin for all)
            after = sorted(pressed.values())[count] if len(pressed) > count else None
            out += [Ruling(n, seat, -1, Why.FIRST_TO_A_PIG,
                           None if after is None else after - pressed[seat]) for seat in named]
            return out
        result = race.last(pressed, active, rnd.close_us, tie)
        if result.too_close:
            out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, result.margin_us))
        elif result.seat is not None:
            reason = last_to_several if count > 1 else last_to_one
            out.append(Ruling(n, result.seat, count, reason, result.margin_us))
        return out

    # -- reading the table ---------------------------------------------------------------------

    def round_outputs(self, number: int) -> list[Ruling | Awaiting]:
        self.sync()
        return list(self.rounds[number - 1].outputs)

    def standings(self) -> Standings:
        self.sync()
        st = self.state
        if st.over:
            # the champion first, then everyone by whammies
            key = {s: (0 if s in st.winners else 1 + st.scores[s]) for s in self.seats}
        else:
            key = dict(st.scores)
        ranked = places(key, self.seats)
        rows = tuple(
            StandingRow(s, st.scores[s], ranked[s], s in st.knocked)
            for s in sorted(self.seats, key=lambda s: (ranked[s], self.seats.index(s)))
        )
        return Standings(st.over, rows, st.winners if st.over else ())

    def status(self) -> Status:
        self.sync()
        awaiting = self.awaiting[min(self.awaiting)] if self.awaiting else None
        return Status(
            round=sum(1 for r in self.rounds if r.counted),
            race_open=bool(self.open),
            closes_at_us=min((r.close_us for r in self.open), default=None),
            awaiting=awaiting,
            over=self.state.over,
        )

    def next_call(self) -> Call | None:
        st = self.status()
        if st.over or st.race_open or st.awaiting is not None:
            return None
        return Call("spank")

    def reactions(self, number: int) -> dict[str, int]:
        """Each seat's reaction time in round `number` (first slap − cue), µs."""
        rnd = self.rounds[number - 1]
        return {s: t - rnd.cue_us for s, t in rnd.race["slap"].items()}

    NEVER: ClassVar[Mapping[Reason, tuple[str, str]]] = {
        Why.LAST_TO_THE_PIG: ("slap", "slapped"), Why.LAST_TO_THE_PIGS: ("slap", "slapped"),
        Why.LAST_TO_THE_DOUBLE: ("double", "declared the double"),
        Why.LAST_TO_THE_DOUBLES: ("double", "declared the doubles")}
    PRESSED: ClassVar[str] = "slapped"

    def racing(self, number: int) -> tuple[str, ...]:
        """The round's active seats (in sudden death: the tied leaders only)."""
        self.sync()
        return tuple(self.rounds[number - 1].active)

    def pressers(self, number: int, button: str = "slap") -> frozenset[str]:
        self.sync()
        return frozenset(self.rounds[number - 1].race.get(button, {}))

    def announcements(self, number: int) -> list[Phrase]:
        """What to say before round `number` starts (deal at the first, last round...)."""
        self.sync()
        said: list[Phrase] = []
        if number == 1:
            said.append(("deal", {"cards": self.regular_rounds,
                                  "aside_cards": self.options["deck"] % len(self.seats)}))
        if number == self.regular_rounds:
            said.append(("last_round", {}))
        elif number == self.regular_rounds + 1 or (
            number > self.regular_rounds and self.state.knocked
        ):
            said.append(("sudden_death", {"seats": ", ".join(self.active_seats())}))
        return said

    def said_after(self, number: int, new: Sequence[Ruling], first: bool) -> list[Phrase]:
        """A clean round is said; a seat with several whammies in one round is told how many
        face-up cards to take into its whammy pile."""
        if first and not self.round_outputs(number):
            return [("nobody", {})]
        totals: dict[str, list[int]] = {}
        for r in new:
            if r.seat is not None and r.delta > 0:
                totals.setdefault(r.seat, []).append(r.delta)
        return [("take_cards", {"seat": seat, "n": sum(deltas)})
                for seat, deltas in totals.items() if len(deltas) > 1]

    def active_seats(self) -> tuple[str, ...]:
        """Who plays the next round (the tied leaders in sudden death)."""
        self.sync()
        if len(self.rounds) + 1 > self.regular_rounds:
            return tuple(s for s in self.seats
                         if s not in self.state.knocked and s not in self.state.benched)
        return self.seats


def _consensus(presses: dict[str, int], active: tuple[str, ...]) -> int | None:
    pressed = sum(1 for s in active if s in presses)
    if pressed == len(active):
        return 1
    if pressed == 0:
        return 0
    return None


def _knocked_out(active: tuple[str, ...], taken: dict[str, int]) -> set[str]:
    """Sudden death: who goes out after a round in which `taken` whammies were taken."""
    takers = {s for s in active if taken[s] > 0}
    if not takers:
        return set()
    if takers != set(active):
        return takers
    fewest = min(taken[s] for s in active)
    return {s for s in active if taken[s] > fewest}
