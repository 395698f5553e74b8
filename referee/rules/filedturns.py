"""A turn game from a game file: a deck dealt to the seats, flipped in turn onto a centre pile.

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
  (`end.one_holds_all`), after `end.rounds` flips (0: no limit), or by the judge; most cards wins
  (as the file says), ties share a place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.events import Awaiting, Cue, Ruling, Standings
from referee.rules import race
from referee.rules.base import Phrase, Shared
from referee.rules.declare import Schedule
from referee.rules.filed import FiledGame
from referee.rules.turns import Pile, Turn, TurnRules

NO_LIMIT = 1_000_000  # flips: a deck game without a flip limit ends when one seat holds all


@dataclass
class Stacks(Pile):
    """Each seat's face-down cards (`scores`), the centre pile, and the seats that are out."""

    out: set[str] = field(default_factory=set)

    def copy(self) -> Stacks:
        return Stacks(dict(self.scores), self.pile, set(self.out))


class FiledTurns(FiledGame, TurnRules):
    """The base of a game file's turn game (its class attributes come from the file)."""

    rounds: list[Turn]
    state: Stacks
    CALL: ClassVar[str] = "call"

    # -- what the game declares ---------------------------------------------------------------

    def deck(self) -> int:
        limit = self.DECL.end.rounds
        flips = int(self.options[limit]) if isinstance(limit, str) else (limit or 0)
        return flips or NO_LIMIT

    def cards(self) -> int:
        assert self.DECL.cards is not None
        return self.DECL.cards.deck

    def planned_rounds(self) -> int | None:
        return None if self.deck() == NO_LIMIT else self.deck()

    def new_pile(self) -> Stacks:
        each, extra = divmod(self.cards(), len(self.seats))
        return Stacks({s: each + (1 if i < extra else 0) for i, s in enumerate(self.seats)})

    def schedule(self) -> Schedule:
        quiet = self.DECL.quiet
        return Schedule(tempo_ms=int(self.options["tempo_ms"]),
                        pause_ms=int(self.options["pause_ms"]),
                        turn_ms=int(self.options["turn_ms"]),
                        quiet_rounds=None if quiet == "none" else quiet)

    def words(self, scores: Mapping[str, int]) -> dict[str, Any]:
        return {**super().words(scores), "pile": self.state.pile}

    def announcements(self, number: int) -> list[Phrase]:
        if number != 1:
            return []
        said: list[Phrase] = [("deal", dict(self.options))]
        return [*said, ("intro", dict(self.options))] if self.DECL.intro else said

    # -- the turn ------------------------------------------------------------------------------

    def is_out(self, seat: str, table: Pile) -> bool:
        """Skipped by the turn calls: out, or no cards to flip."""
        assert isinstance(table, Stacks)
        return seat in table.out or table.scores[seat] == 0

    def racing(self, number: int) -> tuple[str, ...]:
        before = self.rounds[number - 1].before
        assert isinstance(before, Stacks)
        return tuple(s for s in self.seats if s not in before.out)

    def counted(self, turn: Turn, firsts: dict[str, int]) -> dict[str, int]:
        assert isinstance(turn.before, Stacks)
        return {s: t for s, t in firsts.items() if s not in turn.before.out}

    def close_at(self, turn: Turn) -> int:
        if len(turn.taps) == len(self.racing_before(turn)):  # everyone pressed: settle, rule
            settle = race.clear_us(int(self.options["tie_us"]))
            return min(max(turn.taps.values()) + settle, turn.window_end_us)
        return turn.window_end_us

    def racing_before(self, turn: Turn) -> tuple[str, ...]:
        assert isinstance(turn.before, Stacks)
        return tuple(s for s in self.seats if s not in turn.before.out)

    def flip(self, turn: Turn, table: Pile) -> None:
        if table.scores.get(turn.flipper, 0) > 0:  # a seat with no cards has nothing to flip
            table.scores[turn.flipper] -= 1
            table.pile += 1

    def check_cue(self, cue: Cue) -> None:
        if not self.over:
            super().check_cue(cue)

    def on_cue(self, cue: Cue) -> None:
        if not self.over:  # cues after the game is over are ignored
            super().on_cue(cue)

    def rule(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        assert isinstance(table, Stacks) and self.DECL.cards is not None
        n, name = turn.number, self.DECL.judge.fact
        racing = self.racing_before(turn)
        if table.pile == 1 and not self.DECL.cards.first_card_can_match:
            right: bool | None = False  # nothing below the first card on an empty pile
        else:
            right = self.facts_for(n).get(name, self._consensus(turn.taps, racing))
        if right is None:
            return [Awaiting(n, (name,))]
        out: list[Ruling | Awaiting] = []
        tie = int(self.options["tie_us"])
        if right:
            self._earn(out, table, turn, "first_right", race.first(turn.taps, tie))
            if self.amount("last_right")[0] != "nothing":
                self._earn(out, table, turn, "last_right",
                           race.last(turn.taps, racing, turn.close_us, tie))
        elif turn.taps:
            self._earn(out, table, turn, "first_wrong", race.first(turn.taps, tie))
        return out

    def _consensus(self, taps: Mapping[str, int], racing: tuple[str, ...]) -> bool | None:
        pressed = sum(1 for s in racing if s in taps)
        if pressed == 0:
            return False
        if pressed == len(racing) and self.DECL.judge.consensus == "all-or-none":
            return True
        return None

    def _earn(self, out: list[Ruling | Awaiting], table: Stacks, turn: Turn, which: str,
              won: race.Outcome) -> None:
        kind, _ = self.amount(which)
        if kind == "nothing" or (won.seat is None and not won.too_close):
            return
        if won.too_close or won.seat is None:
            out.append(Ruling(turn.number, None, 0, Shared.TOO_CLOSE, won.margin_us))
            return
        n, seat, why, margin = turn.number, won.seat, self.why(which), won.margin_us
        if kind == "take-pile":
            self.take(out, table, n, seat, why, margin)
            table.out.update(s for s in self.seats if s != seat and table.scores[s] == 0)
        elif kind == "give-flipper" and seat != turn.flipper and table.scores[seat] > 0:
            table.scores[seat] -= 1
            table.scores[turn.flipper] += 1
            out += [Ruling(n, seat, -1, why, margin), Ruling(n, turn.flipper, 1, self.why("given"))]
        elif kind == "give-each":
            others = [s for s in self.seats if s != seat and s not in table.out]
            given = others[:table.scores[seat]]
            table.scores[seat] -= len(given)
            out.append(Ruling(n, seat, -len(given), why, margin))
            for other in given:
                table.scores[other] += 1
                out.append(Ruling(n, other, 1, self.why("given")))
        elif kind == "to-pile" and table.scores[seat] > 0:
            table.scores[seat] -= 1
            table.pile += 1
            out.append(Ruling(n, seat, -1, why, margin))
        else:  # nothing to give: said, and nothing moves
            out.append(Ruling(n, seat, 0, why, margin))

    def _ruled(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        """The rulings, then the judge's penalties (cards from the seat onto the pile, as many as
        it has, where more cards win; cards added where fewer win), then the question."""
        if self.facts_for(turn.number).get("void"):
            return []
        out = self.rule(turn, table)
        penalties: list[Ruling] = []
        for p in self.penalties_for(turn.number):
            delta = -min(p.count, table.scores[p.seat]) if self.MORE_WINS else p.count
            table.scores[p.seat] += delta
            table.pile -= delta if self.MORE_WINS else 0
            penalties.append(Ruling(turn.number, p.seat, delta, Shared.PENALTY, None,
                                    (("said", p.reason),)))
        return [*(o for o in out if isinstance(o, Ruling)), *penalties,
                *(o for o in out if isinstance(o, Awaiting))]

    # -- the end -------------------------------------------------------------------------------

    def _fold(self, start: int) -> None:
        super()._fold(start)
        if self.over or not self.rounds:
            return
        settled = all(r.closed for r in self.rounds) and not any(
            isinstance(o, Awaiting) for r in self.rounds for o in r.outputs)
        table = self.state
        holds_all = self.DECL.end.one_holds_all and any(
            v == self.cards() for v in table.scores.values())
        stuck = all(self.is_out(s, table) for s in self.seats)  # nobody left to flip
        self.over = settled and (holds_all or stuck)

    def next_call(self) -> Any:
        return None if self.over else super().next_call()

    def standings(self) -> Standings:
        rows = self.rows(self.state.scores, out=self.state.out)
        winners = tuple(r.seat for r in rows if r.place == 1) if self.over else ()
        return Standings(self.over, rows, winners)
