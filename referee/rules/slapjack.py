"""Slapjack on the box.

The rules, in plain words (PRODUCT.md, "More slap games"):
- The 52 cards are dealt face down as evenly as they go (the first seats get the extra cards).
  Seats flip in turn onto one centre pile ("<seat>, flip!" at `turn_ms`); each cue names the
  flipper. Turns go round the seats in seat order from the first seat, skipping seats with no
  cards; a take does not change the order.
- A Jack: everyone slaps, and the first slapper takes the whole centre pile under its cards.
  Whether it was a Jack: all seats still in slapped ⇒ a Jack; none ⇒ none; otherwise the judge
  ("Jack or no jack?"). The consensus counts every seat not out, seats with no cards included.
- A slap on a non-Jack: the first wrong slapper gives one card to the seat that flipped it (nothing
  if it has none; a flipper that is the first wrong slapper gives nothing). A card given is two
  rulings, −1 and +1.
- Too close to call between the first two slappers: on a Jack the pile stays for the next Jack; on
  a non-Jack nobody gives.
- A seat with no cards stays in and can slap back in at the next Jack; it is out when another seat
  takes that Jack's pile (a too-close Jack keeps it in).
- The game ends when one seat holds every card, after option `flips` cues (0: no limit), or by
  the judge; most cards wins, ties share a place. A standings score is the cards a seat holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from math import comb
from typing import Any, ClassVar

from referee.events import Awaiting, Reason, Ruling
from referee.rules import odds, race
from referee.rules.base import Shared
from referee.rules.declare import Fact, Option, UnitWords
from referee.rules.stacks import StackRules, Stacks
from referee.rules.turns import Pile, Turn, turn_options

CARDS = 52
JACKS = 4


class Why(Reason):
    """Slapjack's reasons."""

    FIRST_ON_THE_JACK = "first to slap the jack"
    SLAPPED_NO_JACK = "slapped no jack"
    OWN_CARD = "slapped no jack on its own card"
    NOTHING_TO_GIVE = "slapped no jack with no card to give"
    GIVEN = "given a card for a wrong slap"


class Slapjack(StackRules):
    NAME: ClassVar[str] = "slapjack"
    TITLE: ClassVar[str] = "Slapjack"
    SEATS: ClassVar[tuple[int, int]] = (2, 8)
    UNIT_SAID: ClassVar[UnitWords] = UnitWords("{n} card", "{n} cards", loss="{count} given",
                                               gain="{count}")
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {
        **StackRules.PHRASES,
        "turn": ("{seat},", "flip!"),  # the call: the cue is "flip!"
        "deal": ("Deal all fifty-two cards face down, one at a time, starting with {seat}. "
                 "Slap the jacks.",),
        "took": ("{seat} takes the pile: {number} cards.",),
        "took_one": ("{seat} takes the pile: one card.",),
    }
    CALLS: ClassVar[tuple[str, ...]] = ("turn",)
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option.number("flips", 0, 0, 100_000, unit="flips", label="Flips",
                      help="the game ends after this many flips (0: when one seat holds every "
                           "card)", practice_per_seat=4),
        *turn_options(turn_ms=2500, tempo_ms=400, window_ms=2000),
    )
    FACTS: ClassVar[tuple[Fact, ...]] = (
        Fact("jack", "flag", "Was the card a jack?", "jack or no jack?", "Jack or no jack?",
             answers=("Jack", "No jack")),
    )
    REASONS: ClassVar[tuple[type[Reason], ...]] = (Why,)
    PENALTY_REASONS: ClassVar[tuple[str, ...]] = ("slapped out of turn", "judge's penalty")
    HANDS: ClassVar[Mapping[Reason, Any]] = {
        Why.FIRST_ON_THE_JACK: "take", Why.SLAPPED_NO_JACK: "give", Why.GIVEN: "get"}
    NEVER: ClassVar[Mapping[Reason, tuple[str, str]]] = {}
    PRESSED: ClassVar[str] = "slapped"
    DEAL: ClassVar[int] = CARDS

    def quiet_flips(self) -> int:
        """A table quiet for longer than an honest deck allows pauses itself."""
        return quiet_flips(int(self.options["flips"]))

    def decided(self, table: Pile) -> bool:
        """One seat holds every card (or nobody has a card to flip)."""
        assert isinstance(table, Stacks)
        return CARDS in table.down.values() or super().decided(table)

    # -- the race -------------------------------------------------------------------------------

    def rule(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        assert isinstance(table, Stacks) and isinstance(turn.before, Stacks)
        n, taps, tie = turn.number, turn.taps, self.options["tie_us"]
        out: list[Ruling | Awaiting] = []
        if not self.flipped(turn):
            return out
        jack = self.called(turn, "jack")
        if jack is None:
            return [Awaiting(n, ("jack",))]
        if not taps:
            return out
        first = race.first(taps, tie)
        if jack:
            self.take_pile(out, table, n, first.seat, Why.FIRST_ON_THE_JACK, first.margin_us,
                           first.too_close)
            if first.seat is not None and not first.too_close:  # the seats with no cards are out
                table.out |= {s for s in self.playing(turn.before) if table.down[s] <= 0}
        elif first.too_close or first.seat is None:
            out.append(Ruling(n, None, 0, Shared.TOO_CLOSE, first.margin_us))  # nobody gives
        elif first.seat == turn.flipper:
            out.append(Ruling(n, first.seat, 0, Why.OWN_CARD, first.margin_us))
        elif table.down[first.seat] <= 0:
            out.append(Ruling(n, first.seat, 0, Why.NOTHING_TO_GIVE, first.margin_us))
        else:
            self.give(out, table, n, first.seat, [turn.flipper], Why.SLAPPED_NO_JACK, Why.GIVEN,
                      first.margin_us)
        return out


# -- the quiet table ------------------------------------------------------------------------------
#
# An honest table slaps only on a Jack, so a quiet flip is a card that is not a Jack. Between two
# Jacks every flipped card stays on the centre pile (only a Jack's take empties it), so a run of
# quiet flips is a run of distinct non-Jacks: at most 48 in any honest game. Within one pass of a
# shuffled deck the four Jacks cut the 48 other cards into five runs, each composition of 48 into
# five parts being equally likely; the chance that one pass holds a run of at least k is, by
# inclusion and exclusion over the runs that reach k:
#     p(k) = Σ_{j≥1} (−1)^(j+1) C(5, j) C(48 − j·k + 4, 4) / C(52, 4).
# A game of F flips holds ⌈F / 52⌉ + 1 passes at most (a run may straddle two), so the chance
# that an honest game reaches k quiet flips is at most (⌈F / 52⌉ + 1) · p(k), and the threshold is
# the smallest k that keeps it under one game in a hundred. Without a flips limit a game is taken
# as an evening's `EVENING` flips (an honest table's games are far shorter: the test over
# simulated decks plays them out).
EVENING = 2000


def pass_chance(k: int, cards: int = CARDS, jacks: int = JACKS) -> float:
    """The chance that one shuffled pass holds a run of at least `k` non-Jacks in a row."""
    others, runs = cards - jacks, jacks + 1
    total = comb(others + runs - 1, runs - 1)
    reached = 0
    for j in range(1, runs + 1):
        left = others - j * k
        if left < 0:
            break
        reached += (-1) ** (j + 1) * comb(runs, j) * comb(left + runs - 1, runs - 1)
    return reached / total


@cache  # read at every engine step; the answer never changes
def quiet_flips(flips: int = 0, miss: float = odds.MISS) -> int:
    """The quiet-table threshold: the run of flips without a slap an honest table reaches in
    under 1 game in 100."""
    passes = -(-(flips or EVENING) // CARDS) + 1
    k = odds.FEWEST
    while passes * pass_chance(k) >= miss:
        k += 1
    return k

