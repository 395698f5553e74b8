"""Pig's Tail on the box.

The rules, in plain words (PRODUCT.md, "Pig's Tail"; the seed rule sheet):
- 52 cards lie face down in a ring; seats flip in turn, in seat order. The referee calls
  "<seat>, flip!" at `turn_ms` pace; each cue (which names the flipper) is one card onto the centre
  pile and opens a race window of `window_ms`, closed early by the next cue. A match is a card of
  the same suit or rank as the card just below it; only eyes can see it.
- `take = flipper`: the flipper presses to claim a match (or the judge marks {"match": true}) and
  takes the whole pile, this card included. Other seats' presses are ignored. A judge's
  {"match": false} refuses a claim.
- `take = slowest`: a match opens a race: everyone taps; the last tapper (or the one seat that never
  tapped) takes the pile. With no match, a tap is a false start: the first tapper takes the pile on
  the spot. Whether it matched: all tapped ⇒ match; none tapped ⇒ no match; otherwise the judge is
  asked. A tap while no race is open (between flips) is a false start too: the first such tapper
  takes the pile, if there is one; before the first flip there is nothing to take.
- The first card onto an empty pile cannot match (no card below it): a claim on it is refused
  (a ruling naming the flipper, 0 cards) and, in `slowest`, a tap on it is a false start.
- Under `tie_us` between the two deciding taps is too close to call: nobody takes, the pile stays.
- Judge penalties add cards; {"void": true} voids a round's rulings (its card stays on the pile).
- The game is over once the 52nd card's round is closed (cues after it are ignored): fewest cards
  wins, ties share a place (1, 1, 3).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping
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
from referee.rules.base import Phrase, RederivedRules, Shared, Status
from referee.rules.declare import Call, Fact, Option, RulesError, Schedule

CARDS = 52


class Why(Reason):
    """Pig's Tail's reasons."""

    NO_CARD_BELOW = "no card below to match"
    FLIPPED_A_MATCH = "flipped a match"
    NO_MATCH = "no match"
    LAST_TO_TAP = "last to tap"
    FALSE_START = "false start"
    FALSE_START_BETWEEN_FLIPS = "false start between flips"


@dataclass
class _State:
    scores: dict[str, int]  # cards taken
    pile: int = 0  # cards on the centre pile

    def copy(self) -> _State:
        return _State(dict(self.scores), self.pile)


@dataclass
class Round:
    number: int
    cue_us: int
    flipper: str
    before: _State
    window_end_us: int = 0  # cue + window, or the next cue
    close_us: int = 0  # when the race is decided (all tapped + tie, the flipper's claim, the end)
    taps: dict[str, int] = field(default_factory=dict)  # first press per seat in the window
    gap: dict[str, int] = field(default_factory=dict)  # first press per seat until the next cue
    closed: bool = False
    outputs: list[Ruling | Awaiting] = field(default_factory=list)


class PigsTail(RederivedRules):
    NAME: ClassVar[str] = "pigs-tail"
    TITLE: ClassVar[str] = "Pig's Tail"
    SEATS: ClassVar[tuple[int, int]] = (2, 8)
    UNIT: ClassVar[str] = "cards"
    UNIT_WORDS: ClassVar[tuple[str, str]] = ("card", "cards")
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option.choice("take", "flipper", ("flipper", "slowest"), label="Who takes the pile",
                      help="who takes the pile on a match",
                      labels=("The flipper, who claims the match",
                              "The slowest: everyone taps on a match")),
        Option.number("turn_ms", 4000, 200, 60_000, unit="ms", label="Turn pace",
                      help="pace of the turn calls"),
        Option.number("tempo_ms", 400, 50, 5000, unit="ms", label="Tempo",
                      help="time between the words of a turn call"),
        Option.number("window_ms", 3000, 100, 60_000, unit="ms", label="Race window",
                      help="race window after each flip"),
    )
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("match", "flag", "Did the flip match?", "match or no match?",
             "Match or no match?", answers=("Match", "No match")),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Why,)

    def __init__(self, seats: Any, options: Any = None) -> None:
        super().__init__(seats, options)
        self.cues: list[Cue] = []
        # every press as (time, seat position, seat): at one instant, seat order decides
        self.presses: list[tuple[int, int, str]] = []
        self.rounds: list[Round] = []
        self.now_us = 0
        self.finished = False
        self.state = _State(dict.fromkeys(self.seats, 0))
        self.over = False

    # -- what the game declares ---------------------------------------------------------------

    def schedule(self) -> Schedule:
        """"<seat>, flip!" every `turn_ms`, its two words `tempo_ms` apart."""
        return Schedule(tempo_ms=int(self.options["tempo_ms"]),
                        pause_ms=int(self.options["pause_ms"]),
                        turn_ms=int(self.options["turn_ms"]), quiet_rounds=3)

    def words(self, scores: Mapping[str, int]) -> dict[str, Any]:
        """The centre pile, and the flips as "N of 52"."""
        self.sync()
        return {**super().words(scores), "pile": self.state.pile,
                "progress": [len(self.cues), CARDS]}

    def questions(self) -> list[tuple[Fact, ...]]:
        """Only a race (take = slowest) can leave the match in doubt; the flipper's claim is
        taken as it comes, and the judge corrects it unasked."""
        return super().questions() if self.options["take"] == "slowest" else []

    # -- input --------------------------------------------------------------------------------

    def round_count(self) -> int:
        self.sync()
        return len(self.rounds)

    def check_cue(self, cue: Cue) -> None:
        if cue.seat is None:
            raise RulesError('a Pig\'s Tail cue names the flipper: add "seat"')
        if len(self.cues) >= CARDS:
            return  # the ring is empty: cues after the 52nd card are ignored
        if self.cues and cue.t_us < self.cues[-1].t_us:
            raise RulesError(f"cue at {cue.t_us} comes before the previous cue")

    def on_cue(self, cue: Cue) -> None:
        if len(self.cues) >= CARDS:
            return  # the ring is empty: cues after the 52nd card are ignored
        self.cues.append(cue)
        self.refold(len(self.cues) - 1)  # the previous round's window ends at this cue

    def on_press(self, press: Press) -> None:
        insort(self.presses, (press.t_us, self.seats.index(press.seat), press.seat))
        start = None
        for number, cue in enumerate(self.cues, start=1):
            if cue.t_us <= press.t_us:
                start = number
        if start is not None:  # before the first flip there is nothing to take: ignored
            self.refold(start)

    # -- the fold -----------------------------------------------------------------------------

    def _fold(self, start: int) -> None:
        """Re-rule rounds from round `start` on, from the table as it stood before that round."""
        first = min(start, len(self.rounds) + 1) - 1  # its index
        old = {r.number: r.outputs for r in self.rounds}
        kept = self.rounds[:first]
        state = self.rounds[first].before.copy() if first < len(self.rounds) else (
            self.state.copy() if kept else _State(dict.fromkeys(self.seats, 0)))
        slowest = self.options["take"] == "slowest"
        for i in range(first, len(self.cues)):
            cue = self.cues[i]
            assert cue.seat is not None
            rnd = Round(i + 1, cue.t_us, cue.seat, state.copy())
            nxt = self.cues[i + 1].t_us if i + 1 < len(self.cues) else None
            rnd.window_end_us = cue.t_us + self.options["window_ms"] * 1000
            if nxt is not None:
                rnd.window_end_us = min(rnd.window_end_us, nxt)
            rnd.taps = self._firsts(cue.t_us, rnd.window_end_us)
            if not slowest:
                rnd.taps = {s: t for s, t in rnd.taps.items() if s == rnd.flipper}
            rnd.close_us = self._close_at(rnd)
            if slowest and rnd.number < CARDS:
                rnd.gap = self._firsts(rnd.window_end_us, nxt)
            rnd.closed = self.finished or rnd.close_us <= self.now_us
            state.pile += 1  # the card is on the pile, ruled or not
            if rnd.closed:
                rnd.outputs = self._rule(rnd, state)
            kept.append(rnd)
        self.rounds = kept
        self.state = state
        self.over = (len(kept) == CARDS and kept[-1].closed
                     and not any(isinstance(o, Awaiting) for r in kept for o in r.outputs))
        for number in set(old) | {r.number for r in kept}:
            new = kept[number - 1].outputs if number <= len(kept) else []
            if old.get(number, []) != new:
                self.changed.add(number)

    def _firsts(self, lo: int, hi: int | None) -> dict[str, int]:
        """Each seat's first press in [lo, hi)."""
        firsts: dict[str, int] = {}
        i = bisect_left(self.presses, (lo,))
        while i < len(self.presses) and (hi is None or self.presses[i][0] < hi):
            t, _, seat = self.presses[i]
            firsts.setdefault(seat, t)
            i += 1
        return firsts

    def _close_at(self, rnd: Round) -> int:
        if self.options["take"] == "flipper":
            claim = rnd.taps.get(rnd.flipper)
            return rnd.window_end_us if claim is None else claim
        if len(rnd.taps) == len(self.seats):
            settle = race.clear_us(int(self.options["tie_us"]))  # the last tap is inside
            return min(max(rnd.taps.values()) + settle, rnd.window_end_us)
        return rnd.window_end_us

    def _rule(self, rnd: Round, state: _State) -> list[Ruling | Awaiting]:
        """Rule a closed round; `state` (the card already on the pile) is updated in place."""
        n = rnd.number
        facts = self.facts_for(n)
        if facts.get("void"):
            return []
        tie = self.options["tie_us"]
        first_card = state.pile == 1
        out: list[Ruling | Awaiting] = []
        need: tuple[str, ...] = ()

        def take(seat: str | None, reason: Why, margin: int | None, too_close: bool) -> None:
            if too_close or seat is None:
                out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, margin))
                return
            out.append(Ruling(n, seat, state.pile, reason, margin))
            state.scores[seat] += state.pile
            state.pile = 0

        if self.options["take"] == "flipper":
            claimed = rnd.flipper in rnd.taps
            match = facts.get("match", claimed)
            if match and first_card:
                out.append(Ruling(n, rnd.flipper, 0, Why.NO_CARD_BELOW))
            elif match:
                take(rnd.flipper, Why.FLIPPED_A_MATCH, None, False)
            elif claimed:
                out.append(Ruling(n, rnd.flipper, 0, Why.NO_MATCH))
        else:
            taps = rnd.taps
            match = False if first_card else facts.get("match", _consensus(taps, self.seats))
            if match is None:
                need = ("match",)
            elif match:
                last = race.last(taps, self.seats, rnd.close_us, tie)
                take(last.seat, Why.LAST_TO_TAP, last.margin_us, last.too_close)
            elif taps:
                first = race.first(taps, tie)
                take(first.seat, Why.FALSE_START, first.margin_us, first.too_close)
            if rnd.gap and state.pile > 0:
                first = race.first(rnd.gap, tie)
                take(first.seat, Why.FALSE_START_BETWEEN_FLIPS, first.margin_us, first.too_close)
        for penalty in self.penalty_rulings(n):
            out.append(penalty)
            assert penalty.seat is not None
            state.scores[penalty.seat] += penalty.delta
        if need:
            out.append(Awaiting(n, need))
        return out

    # -- reading the table --------------------------------------------------------------------

    def round_outputs(self, number: int) -> list[Ruling | Awaiting]:
        self.sync()
        return list(self.rounds[number - 1].outputs)

    def standings(self) -> Standings:
        self.sync()
        scores = self.state.scores
        ranked = places(scores, self.seats, more_wins=self.MORE_WINS)
        rows = tuple(
            StandingRow(s, scores[s], ranked[s])
            for s in sorted(self.seats, key=lambda s: (ranked[s], self.seats.index(s)))
        )
        winners = tuple(r.seat for r in rows if r.place == 1) if self.over else ()
        return Standings(self.over, rows, winners)

    def status(self) -> Status:
        self.sync()
        open_rounds = [r for r in self.rounds if not r.closed]
        awaiting = next(
            (o for r in self.rounds for o in r.outputs if isinstance(o, Awaiting)), None
        )
        return Status(
            round=len(self.rounds),
            race_open=bool(open_rounds),
            closes_at_us=min((r.close_us for r in open_rounds), default=None),
            awaiting=awaiting,
            over=self.over,
        )

    def next_call(self) -> Call | None:
        """"<seat>, flip!" for the seat after the last flipper, in seat order."""
        st = self.status()
        if st.over or st.race_open or len(self.cues) >= CARDS:
            return None
        if not self.cues:
            return Call("turn", self.seats[0])
        last = self.cues[-1].seat
        i = self.seats.index(last) if last in self.seats else -1
        return Call("turn", self.seats[(i + 1) % len(self.seats)])

    def reactions(self, number: int) -> dict[str, int]:
        """Each seat's time from the flip call to its tap in round `number`, µs."""
        self.sync()
        rnd = self.rounds[number - 1]
        return {s: t - rnd.cue_us for s, t in rnd.taps.items()}

    NEVER: ClassVar[Mapping[Reason, tuple[str, str]]] = {Why.LAST_TO_TAP: ("slap", "tapped")}
    PRESSED: ClassVar[str] = "tapped"

    def refutable(self, number: int) -> Fact | None:
        """`flipper`: the flipper's claim, ruled a match at once, until the judge has said."""
        self.sync()
        rnd = self.rounds[number - 1]
        if (self.options["take"] == "flipper" and rnd.flipper in rnd.taps
                and "match" not in self.facts_for(number)):
            return self.FACTS[0]
        return None

    def racing(self, number: int) -> tuple[str, ...]:
        """`flipper`: only the flipper may claim (nobody races); `slowest`: everyone taps."""
        self.sync()
        if self.options["take"] == "flipper":
            return (self.rounds[number - 1].flipper,)
        return self.seats

    def announcements(self, number: int) -> list[Phrase]:
        """What to say before round `number` starts: laying out the ring before the first flip."""
        return [("deal_ring", {})] if number == 1 else []


def _consensus(taps: dict[str, int], seats: tuple[str, ...]) -> bool | None:
    """All tapped ⇒ a match; none tapped ⇒ no match; anything between ⇒ ask the judge."""
    tapped = sum(1 for s in seats if s in taps)
    if tapped == len(seats):
        return True
    if tapped == 0:
        return False
    return None
