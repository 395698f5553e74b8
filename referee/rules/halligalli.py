"""Halli Galli on the box (the slap button is the bell).

The rules, in plain words (PRODUCT.md, "More slap games"):
- 56 fruit cards are dealt face down as evenly as they go (the first seats get the extra cards).
  In turn each seat flips its top card onto its own face-up pile ("<seat>, flip!" at `turn_ms`);
  each cue names the flipper.
- When exactly five of one fruit show on the top cards, everyone rings and the first ringer takes
  every face-up card (under its face-down cards). Whether five showed: all seats still in rang ⇒
  five; none ⇒ not five; otherwise the judge ("Five or not five?").
- A wrong ring: the first wrong ringer gives one card from its face-down cards to each other seat
  still in, in seat order after it, as many as it has (a card given is two rulings, −1 and +1).
  Only the first wrong ringer pays.
- Too close to call between the first two ringers: the cards stay (and nobody pays).
- A seat is out when its turn comes and it has no face-down cards: its face-up cards stay until
  taken, its presses are ignored, and it is skipped in the calls.
- The game ends when one seat is left (it wins), or by the judge (most cards wins). A standings
  score is the cards a seat holds, face down and face up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, ClassVar

from referee.events import Awaiting, Reason, Ruling
from referee.rules import odds, race
from referee.rules.base import Shared
from referee.rules.declare import Fact, Option, UnitWords
from referee.rules.stacks import StackRules, Stacks
from referee.rules.turns import Pile, Turn, turn_options

FRUITS = 4
# each fruit on 14 cards: five cards of 1, three of 2, three of 3, two of 4, one of 5
COUNTS: Mapping[int, int] = {1: 5, 2: 3, 3: 3, 4: 2, 5: 1}
CARDS = FRUITS * sum(COUNTS.values())  # 56


class Why(Reason):
    """Halli Galli's reasons."""

    FIRST_TO_RING = "first to ring on five"
    RANG_WRONGLY = "rang with no five"
    NOTHING_TO_PAY = "rang with no five and no card to pay"
    PAID = "given a card for a wrong ring"


class HalliGalli(StackRules):
    NAME: ClassVar[str] = "halli-galli"
    TITLE: ClassVar[str] = "Halli Galli"
    SEATS: ClassVar[tuple[int, int]] = (2, 6)
    UNIT_SAID: ClassVar[UnitWords] = UnitWords("{n} card", "{n} cards", loss="{count} paid",
                                               gain="{count}")
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {
        **StackRules.PHRASES,
        "turn": ("{seat},", "flip!"),  # the call: the cue is "flip!"
        "deal": ("Deal all fifty-six cards face down, one at a time, starting with {seat}. "
                 "Ring the bell on exactly five of a fruit.",),
        "took": ("{seat} takes the face-up cards: {number} cards.",),
        "took_one": ("{seat} takes the face-up cards: one card.",),
    }
    CALLS: ClassVar[tuple[str, ...]] = ("turn",)
    OPTIONS: ClassVar[tuple[Option, ...]] = turn_options(turn_ms=3000, tempo_ms=400,
                                                         window_ms=2500)
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("five", "flag", "Did five of a fruit show?", "five or not five?",
             "Five or not five?", answers=("Five", "Not five")),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Why,)
    PENALTY_REASONS: ClassVar[tuple[str, ...]] = ("rang out of turn", "judge's penalty")
    HANDS: ClassVar[Mapping[Reason, Any]] = {
        Why.FIRST_TO_RING: "take", Why.RANG_WRONGLY: "give", Why.PAID: "get"}
    PRESSED: ClassVar[str] = "rang"
    DEAL: ClassVar[int] = CARDS
    FACE_UP: ClassVar[bool] = True

    def quiet_flips(self) -> int:
        """A table quiet for longer than an honest deck allows pauses itself."""
        return quiet_flips(len(self.seats))

    # -- the race -------------------------------------------------------------------------------

    def rule(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        assert isinstance(table, Stacks) and isinstance(turn.before, Stacks)
        n, taps, tie = turn.number, turn.taps, self.options["tie_us"]
        out: list[Ruling | Awaiting] = []
        if not self.flipped(turn):
            return out
        five = self.called(turn, "five")
        if five is None:
            return [Awaiting(n, ("five",))]
        if not taps:
            return out
        first = race.first(taps, tie)
        if five:
            self.take_pile(out, table, n, first.seat, Why.FIRST_TO_RING, first.margin_us,
                           first.too_close)
        elif first.too_close or first.seat is None:
            out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, first.margin_us))  # nobody gives
        elif table.down[first.seat] <= 0:
            out.append(Ruling(n, first.seat, 0, Why.NOTHING_TO_PAY, first.margin_us))
        else:
            i = self.seats.index(first.seat)
            after = [self.seats[(i + k) % len(self.seats)] for k in range(1, len(self.seats))]
            self.give(out, table, n, first.seat, [s for s in after if s not in table.out],
                      Why.RANG_WRONGLY, Why.PAID, first.margin_us)
        return out

    def settle(self, turn: Turn, table: Stacks) -> None:
        """The seats whose turn comes next with no face-down cards are out (the calls pass
        them on to the next seat with cards)."""
        i = self.seats.index(turn.flipper)
        for k in range(1, len(self.seats) + 1):
            seat = self.seats[(i + k) % len(self.seats)]
            if seat in table.out:
                continue
            if table.down[seat] > 0:
                return
            table.out.add(seat)

    def decided(self, table: Pile) -> bool:
        """One seat is left."""
        assert isinstance(table, Stacks)
        return len(self.playing(table)) <= 1 or super().decided(table)

    def rank(self, table: Stacks) -> Mapping[str, int] | None:
        """The seat left wins, whatever the cards still face up elsewhere."""
        left = self.playing(table)
        if len(left) != 1:
            return None
        held = table.held()
        return {s: CARDS + 1 if s in left else held[s] for s in self.seats}


# -- the quiet table ------------------------------------------------------------------------------
#
# An honest table rings only on five, so a quiet flip is one after which no fruit shows exactly
# five on the top cards. With every seat's face-up pile showing a card, the tops are `seats` cards
# of the deck: `quiet_chance(seats)` is the chance that no fruit sums to exactly five on them
# (the cards drawn independently from the deck's make-up: a chain over each fruit's running
# sum, capped above five). Flips `seats` apart renew every top card, so the
# flips of one seat's turns are independent full states (the first `seats − 1` flips after a take,
# piles still empty, count as quiet for sure). A run of k quiet flips thus holds a run of
# m = ⌊(k − seats) / seats⌋ + 1 quiet states among one seat's turns, and an honest game of F flips
# reaches k with a chance of at most `odds.run_chance(q, F // seats, m)`: the threshold is the
# smallest k that keeps it under one game in a hundred, for an evening's `EVENING` flips (an
# honest game is far shorter: a few hundred).
EVENING = 2000


@cache  # one chain per table size
def quiet_chance(seats: int) -> float:
    """The chance that `seats` top cards show no fruit exactly five times."""
    total = sum(COUNTS.values()) * FRUITS
    at: dict[tuple[int, ...], float] = {(0,) * FRUITS: 1.0}
    for _ in range(seats):
        nxt: dict[tuple[int, ...], float] = {}
        for sums, p in at.items():
            for fruit in range(FRUITS):
                for count, cards in COUNTS.items():
                    new = list(sums)
                    new[fruit] = min(new[fruit] + count, 6)  # over five: never five again
                    key = tuple(sorted(new))  # the fruits are alike: only the sums matter
                    nxt[key] = nxt.get(key, 0.0) + p * cards / total
        at = nxt
    return sum(p for sums, p in at.items() if 5 not in sums)


def run_bound(seats: int, k: int, flips: int = EVENING) -> float:
    """At most this chance that an honest game of `flips` flips holds `k` quiet flips in a row."""
    m = max(k - seats, 0) // seats + 1
    return odds.run_chance(quiet_chance(seats), flips // seats, m)


@cache  # read at every engine step; the answer never changes
def quiet_flips(seats: int, miss: float = odds.MISS) -> int:
    """The quiet-table threshold for `seats` seats: the smallest k whose m (see above) is the
    run of quiet states that one seat's turns reach in under 1 game in 100."""
    m = odds.quiet_threshold(quiet_chance(seats), EVENING // seats, miss)
    return seats * m
