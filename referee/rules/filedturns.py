"""A turn game from a game file, over the card stacks (`referee.rules.stacks`): a deck dealt to the
seats and flipped in turn onto one centre pile.

The rules, in plain words (PRODUCT.md, "More slap games"; Snap is this base's shipped example):
- The deck (`cards.deck`) is dealt face down as evenly as it goes, the first seats taking the extra
  cards. Seats flip in turn, in seat order, onto one centre pile ("<seat>, flip!" every `turn_ms`);
  a seat with no cards is skipped. Each flip takes a card from the flipper's stack.
- Whether the flip was right (a snap) is the declared flag: all seats still in pressed ⇒ yes; none
  ⇒ no; otherwise the judge is asked (`judge.consensus = "judge"`: asked whenever anyone pressed).
  Unless `cards.first_card_can_match`, the first card onto an empty pile is never right.
- Right: the first presser earns `press.first_right` (e.g. takes the pile), the last presser
  (or the one seat that never pressed) `press.last_right`. Not right: the first presser earns
  `press.first_wrong` (e.g. gives the flipper one card: two rulings, −1 and +1; a flipper that is
  the first wrong presser, or a seat with no cards, gives nothing). Too close to call between the
  two deciding presses: nothing moves, the pile stays.
- A seat with no cards stays in and may press back in; it is out when another seat takes the pile.
- The score is the cards a seat holds; the game ends when one seat holds every card
  (`end.one_holds_all`), after `end.rounds` flips (0: no limit), or by the judge; most cards wins,
  ties share a place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from referee.events import Awaiting, Reason, Ruling
from referee.rules import race
from referee.rules.base import Phrase, Shared
from referee.rules.filed import FiledGame
from referee.rules.stacks import NO_LIMIT, StackRules, Stacks
from referee.rules.turns import Pile, Turn

__all__ = ["FiledTurns", "hands"]


def hands(effects: Mapping[Reason, str], given: Reason) -> dict[Reason, Any]:
    """Which reasons move cards, as the card stacks say it aloud: a take, a give, a card got."""
    out: dict[Reason, Any] = {given: "get"}
    for reason, effect in effects.items():
        if effect == "take-pile":
            out[reason] = "take"
        elif effect in ("give-flipper", "give-each"):
            out[reason] = "give"
    return out


class FiledTurns(FiledGame, StackRules):
    """The base of a game file's turn game (its class attributes come from the file)."""

    CALL: ClassVar[str] = "call"

    # -- what the game declares ---------------------------------------------------------------

    def deck(self) -> int:
        limit = self.DECL.end.rounds
        flips = int(self.options[limit]) if isinstance(limit, str) else (limit or 0)
        return flips or NO_LIMIT

    def quiet_flips(self) -> int | None:
        quiet = self.DECL.quiet
        return None if quiet == "none" else quiet

    def announcements(self, number: int) -> list[Phrase]:
        if number != 1:
            return []
        said: list[Phrase] = [("deal", {**self.options, "seat": self.seats[0]})]
        return [*said, ("intro", dict(self.options))] if self.DECL.intro else said

    def decided(self, table: Pile) -> bool:
        """One seat holds every card (`end.one_holds_all`), or nobody has a card to flip."""
        assert isinstance(table, Stacks)
        return (self.DECL.end.one_holds_all and self.DEAL in table.held().values()) or \
            super().decided(table)

    # -- the race -------------------------------------------------------------------------------

    def rule(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        assert isinstance(table, Stacks) and isinstance(turn.before, Stacks)
        assert self.DECL.cards is not None
        n, name = turn.number, self.DECL.judge.fact
        if not self.flipped(turn):
            return []
        if table.pile == 1 and not self.DECL.cards.first_card_can_match:
            right: bool | None = False  # nothing below the first card on an empty pile
        elif self.DECL.judge.consensus == "judge" and name not in self.facts_for(n):
            right = None if turn.taps else False
        else:
            right = self.called(turn, name)
        if right is None:
            return [Awaiting(n, (name,))]
        out: list[Ruling | Awaiting] = []
        tie = int(self.options["tie_us"])
        if right:
            self._earn(out, table, turn, "first_right", race.first(turn.taps, tie))
            if self.amount("last_right")[0] != "nothing":
                self._earn(out, table, turn, "last_right", race.last(
                    turn.taps, self.playing(turn.before), tie))
        elif turn.taps:
            self._earn(out, table, turn, "first_wrong", race.first(turn.taps, tie))
        return out

    def _earn(self, out: list[Ruling | Awaiting], table: Stacks, turn: Turn, which: str,
              won: race.Outcome) -> None:
        kind, _ = self.amount(which)
        if kind == "nothing" or (won.seat is None and not won.too_close):
            return
        if won.too_close or won.seat is None:
            out.append(Ruling(turn.number, None, 0, Shared.TOO_CLOSE, won.margin_us))
            return
        n, seat, why, margin = turn.number, won.seat, self.why(which), won.margin_us
        given = self.why("given")
        if kind == "take-pile":
            self.take_pile(out, table, n, seat, why, margin)
            assert isinstance(turn.before, Stacks)  # the seats with no cards are out now
            table.out |= {s for s in self.playing(turn.before) if table.held()[s] <= 0}
        elif kind == "give-flipper":
            self.give(out, table, n, seat, [turn.flipper], why, given, margin)
        elif kind == "give-each":
            self.give(out, table, n, seat, self.playing(table), why, given, margin)
        elif kind == "to-pile" and table.down[seat] > 0:
            table.down[seat] -= 1
            table.pile += 1
            out.append(Ruling(n, seat, -1, why, margin))
        else:  # nothing to put down: said, and nothing moves
            out.append(Ruling(n, seat, 0, why, margin))
