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
  Two or more seats that never tapped a match take nothing either: only one seat can take the
  pile, so it stays (never "too close to call": that is only ever between seats that tapped).
- Judge penalties add cards; {"void": true} voids a round's rulings (its card stays on the pile).
- The game is over once the 52nd card's round is closed (cues after it are ignored): fewest cards
  wins, ties share a place (1, 1, 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from referee.events import Awaiting, Reason, Ruling
from referee.rules import odds, race
from referee.rules.base import Phrase
from referee.rules.declare import Fact, Option, Schedule, UnitWords
from referee.rules.turns import Pile, Turn, TurnRules, turn_options

CARDS = 52


class Why(Reason):
    """Pig's Tail's reasons."""

    NO_CARD_BELOW = "no card below to match"
    FLIPPED_A_MATCH = "flipped a match"
    NO_MATCH = "no match"
    LAST_TO_TAP = "last to tap"
    FALSE_START = "false start"
    FALSE_START_BETWEEN_FLIPS = "false start between flips"
    NEVER_TAPPED = "unclear: {n} never tapped", "pile_stays"  # two or more: the pile stays


class PigsTail(TurnRules):
    NAME: ClassVar[str] = "pigs-tail"
    TITLE: ClassVar[str] = "Pig's Tail"
    SEATS: ClassVar[tuple[int, int]] = (2, 8)
    UNIT: ClassVar[str] = "cards"
    UNIT_WORDS: ClassVar[tuple[str, str]] = ("card", "cards")
    UNIT_SAID: ClassVar[UnitWords] = UnitWords("{n} card", "{n} cards", gain="{count} back")
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {
        "turn": ("{seat},", "flip!"),  # the call: the cue is "flip!"
        "deal_ring": ("Shuffle all fifty-two cards and lay them face down in a ring.",),
        # two or more never tapped a match: nobody takes the pile
        "pile_stays": ("{seats} never {pressed}. The pile stays.",),
    }
    CALLS: ClassVar[tuple[str, ...]] = ("turn",)
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option.choice("take", "flipper", ("flipper", "slowest"), label="Who takes the pile",
                      help="who takes the pile on a match",
                      labels=("The flipper, who claims the match",
                              "The slowest: everyone taps on a match")),
        *turn_options(turn_ms=4000, tempo_ms=400, window_ms=3000),
    )
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("match", "flag", "Did the flip match?", "match or no match?",
             "Match or no match?", answers=("Match", "No match")),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Why,)
    CARDS: ClassVar[int] = CARDS

    # -- what the game declares ---------------------------------------------------------------

    def schedule(self) -> Schedule:
        """"<seat>, flip!" every `turn_ms`, its two words `tempo_ms` apart."""
        return Schedule(tempo_ms=int(self.options["tempo_ms"]),
                        pause_ms=int(self.options["pause_ms"]),
                        turn_ms=int(self.options["turn_ms"]), quiet_rounds=quiet_flips())

    def words(self, scores: Mapping[str, int]) -> dict[str, Any]:
        """The centre pile, and the flips as "N of 52"."""
        return {**super().words(scores), "pile": self.state.pile,
                "progress": [len(self.cues), CARDS]}

    def questions(self) -> list[tuple[Fact, ...]]:
        """Only a race (take = slowest) can leave the match in doubt; the flipper's claim is
        taken as it comes, and the judge corrects it unasked."""
        return super().questions() if self.options["take"] == "slowest" else []

    # -- the race -----------------------------------------------------------------------------

    def counted(self, turn: Turn, firsts: dict[str, int]) -> dict[str, int]:
        """`flipper`: only the flipper's claim counts; `slowest`: everyone's tap."""
        if self.options["take"] == "slowest":
            return firsts
        return {s: t for s, t in firsts.items() if s == turn.flipper}

    def close_at(self, rnd: Turn) -> int:
        if self.options["take"] == "flipper":
            claim = rnd.taps.get(rnd.flipper)
            return rnd.window_end_us if claim is None else claim
        if len(rnd.taps) == len(self.seats):
            settle = race.clear_us(int(self.options["tie_us"]))  # the last tap is inside
            return min(max(rnd.taps.values()) + settle, rnd.window_end_us)
        return rnd.window_end_us

    def rule(self, rnd: Turn, state: Pile) -> list[Ruling | Awaiting]:
        """Rule a closed round; `state` (the card already on the pile) is updated in place."""
        n = rnd.number
        facts = self.facts_for(n)
        tie = self.options["tie_us"]
        first_card = state.pile == 1
        out: list[Ruling | Awaiting] = []
        need: tuple[str, ...] = ()

        if self.options["take"] == "flipper":
            claimed = rnd.flipper in rnd.taps
            match = facts.get("match", claimed)
            if match and first_card:
                out.append(Ruling(n, rnd.flipper, 0, Why.NO_CARD_BELOW))
            elif match:
                self.take(out, state, n, rnd.flipper, Why.FLIPPED_A_MATCH)
            elif claimed:
                out.append(Ruling(n, rnd.flipper, 0, Why.NO_MATCH))
        else:
            taps = rnd.taps
            match = False if first_card else facts.get("match", _consensus(taps, self.seats))
            if match is None:
                need = ("match",)
            elif match:
                last = race.last(taps, self.seats, tie)
                if last.stragglers:  # only one seat can take the pile: it stays
                    out.append(Ruling(n, None, 0, Why.NEVER_TAPPED, None,
                                      (("n", str(len(last.stragglers))),)))
                else:
                    self.take(out, state, n, last.seat, Why.LAST_TO_TAP, last.margin_us,
                              last.too_close)
            elif taps:
                first = race.first(taps, tie)
                self.take(out, state, n, first.seat, Why.FALSE_START, first.margin_us, first.too_close)
            if rnd.gap and state.pile > 0:
                first = race.first(rnd.gap, tie)
                self.take(out, state, n, first.seat, Why.FALSE_START_BETWEEN_FLIPS,
                          first.margin_us, first.too_close)
        if need:
            out.append(Awaiting(n, need))
        return out

    # -- reading the table --------------------------------------------------------------------

    NEVER: ClassVar[Mapping[Reason, tuple[str, str]]] = {Why.LAST_TO_TAP: ("slap", "tapped")}
    PRESSED: ClassVar[str] = "tapped"

    def refutable(self, number: int) -> Fact | None:
        """`flipper`: the flipper's claim, ruled a match at once, until the judge has said."""
        rnd = self.rounds[number - 1]
        if (self.options["take"] == "flipper" and rnd.flipper in rnd.taps
                and "match" not in self.facts_for(number)):
            return self.FACTS[0]
        return None

    def racing(self, number: int) -> tuple[str, ...]:
        """`flipper`: only the flipper may claim (nobody races); `slowest`: everyone taps."""
        if self.options["take"] == "flipper":
            return (self.rounds[number - 1].flipper,)
        return self.seats

    def announcements(self, number: int) -> list[Phrase]:
        """What to say before round `number` starts: laying out the ring before the first flip."""
        return [("deal_ring", {})] if number == 1 else []


# A card matches the one below it (same suit or rank) with 15 chances in 51.
MATCH = 15 / 51


def quiet_chance(k: int, flips: int = CARDS) -> float:
    """The chance that an honest table's ring of `flips` cards holds a run of `k` flips in a row
    with no match, so with no press: a flip with a card below matches with `MATCH`; the first
    card onto an empty pile (the first flip, and the flip after a take) cannot match."""
    # at[(run, empty)]: no run of k yet, `run` quiet flips in a row, the pile empty or not
    at: dict[tuple[int, bool], float] = {(0, True): 1.0}
    reached = 0.0
    for _ in range(flips):
        nxt: dict[tuple[int, bool], float] = {}
        for (run, empty), p in at.items():
            outcomes = [(run + 1, False, p)] if empty else [
                (0, True, p * MATCH), (run + 1, False, p * (1 - MATCH))]
            for r, e, q in outcomes:
                if r >= k:
                    reached += q
                else:
                    nxt[r, e] = nxt.get((r, e), 0.0) + q
        at = nxt
    return reached


@cache  # read at every engine step; the answer never changes
def quiet_flips(miss: float = odds.MISS) -> int:
    """The quiet-table threshold: the run of flips without a press that an honest table reaches
    in under 1 game in 100 (most flips are simply no match)."""
    k = odds.FEWEST
    while quiet_chance(k) >= miss:
        k += 1
    return k


def _consensus(taps: dict[str, int], seats: tuple[str, ...]) -> bool | None:
    """All tapped ⇒ a match; none tapped ⇒ no match; anything between ⇒ ask the judge."""
    tapped = sum(1 for s in seats if s in taps)
    if tapped == len(seats):
        return True
    if tapped == 0:
        return False
    return None
