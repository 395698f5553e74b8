"""Card stacks: a turn game in which the box knows every seat's cards (Slapjack, Halli Galli, Snap).

The box knows the deal, every flip (a cue), every take and every card given, so the pages show each
seat's cards and the centre pile, and the voice says what changed hands. A game builds on
`StackRules` (itself a `referee.rules.turns.TurnRules`) and declares:

- `DEAL`: the cards dealt face down, as evenly as they go (the first seats get the extra cards);
- `FACE_UP`: False, each flip goes onto the one centre pile (Slapjack, Snap); True, onto the
  flipper's own face-up pile (Halli Galli);
- `STACK_WORDS`: how the pages label a seat's face-down and face-up cards ("face down", "face up");
- `HANDS`: which of its reasons move cards, each `"take"` (the seat takes the centre pile and every
  face-up pile), `"give"` (the seat gives cards) or `"get"` (the seat is given one);
- in its `PHRASES`, what the voice says when cards change hands: `took` / `took_one` ("{seat} takes
  the pile: {number} cards.", {n} the count), `gave` / `gave_each` ("{seat} gives {to} one card.",
  {to} the seats given one each), `out` ("{seat} is out.") and `deal` (said before the first
  flip; {seat} the first seat dealt to);
and writes `rule(turn, table)` (see `TurnRules`) and `quiet_flips()` (its quiet-table threshold),
with these helpers on the `Stacks` table:

- `self.flipped(turn)`: whether the turn put a card down; `self.called(turn, fact)`: whether its
  card called for a press (the judge's fact, else the consensus; None: ask the judge);
- `self.take_pile(out, table, n, seat, reason, margin, too_close)`: `seat` takes the centre pile and
  every face-up pile (one ruling: the cards it gains); too close to call, or nobody: they stay;
- `self.give(out, table, n, giver, receivers, reason, got)`: one card from `giver`'s face-down cards
  to each of `receivers` in turn, as many as it has: a ruling of −k for the giver and one of +1 for
  each seat given one (a card given is two rulings); a giver with no cards gives nothing (a ruling
  of 0);
- `table.down[seat]`, `table.up[seat]`, `table.pile` (the centre), `table.out` (seats out of the
  game: shown out, skipped in the calls, their presses not counted, not in the consensus).

What the layer does for every such game: the deal (`new_pile`); each flip moves the flipper's top
face-down card (a cue naming a seat with none flips nothing, and its turn has no race); a seat with
no face-down cards is skipped in the calls (`is_out`); the score is the cards a seat holds, face down
and face up, the most wins (`held`, the standings, with `out` rows); a judge's penalty puts `count`
cards (as many as the seat has) from its face-down cards onto the centre pile; the pages get
`words()["stacks"]`; the voice says what changed hands after each ruling (`said_after`). A game may
also override `decided` (the table ends the game), `settle` (after a turn is ruled: who is out
now) and `rank` (the places, when the cards alone do not decide them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from referee.events import Awaiting, Reason, Ruling, Standings
from referee.rules.base import Phrase, Shared
from referee.rules.declare import Schedule
from referee.rules.turns import Pile, Turn, TurnRules

__all__ = ["NO_LIMIT", "StackRules", "Stacks", "deal"]

NO_LIMIT = 10**9  # turns in a game without a flips limit

Hand = Literal["take", "give", "get"]


def deal(cards: int, seats: Sequence[str]) -> dict[str, int]:
    """`cards` dealt one at a time from the first seat: as evenly as they go, the first seats
    get the extra cards."""
    each, extra = divmod(cards, len(seats))
    return {s: each + (1 if i < extra else 0) for i, s in enumerate(seats)}


@dataclass
class Stacks(Pile):
    """The table of a stacks game. `scores` is each seat's face-down cards (also `down`); `up`
    each seat's face-up pile; `pile` the centre pile; `out` the seats out of the game."""

    up: dict[str, int] = field(default_factory=dict)
    out: set[str] = field(default_factory=set)

    @property
    def down(self) -> dict[str, int]:
        return self.scores

    def held(self) -> dict[str, int]:
        """Each seat's cards, face down and face up."""
        return {s: n + self.up.get(s, 0) for s, n in self.scores.items()}

    def copy(self) -> Stacks:
        return Stacks(dict(self.scores), self.pile, dict(self.up), set(self.out))


class StackRules(TurnRules):
    """A turn game whose table is every seat's cards (see the module docstring)."""

    DEAL: ClassVar[int] = 52
    FACE_UP: ClassVar[bool] = False
    MORE_WINS: ClassVar[bool] = True
    UNIT: ClassVar[str] = "cards"
    UNIT_WORDS: ClassVar[tuple[str, str]] = ("card", "cards")
    STACK_WORDS: ClassVar[tuple[str, str]] = ("face down", "face up")
    TEXTS: ClassVar[tuple[str, ...]] = STACK_WORDS  # English the pages show, for translations
    HANDS: ClassVar[Mapping[Reason, Hand]] = {}
    # what the voice says when cards change hands (a game spreads these into its PHRASES and
    # adds its own `took`, `took_one` and `deal`)
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {
        "gave": ("{seat} gives {to} one card.",),
        "gave_each": ("{seat} gives {to} one card each.",),
        "out": ("{seat} is out.",),
    }

    state: Stacks

    # -- the table ------------------------------------------------------------------------------

    def new_pile(self) -> Stacks:
        """The deal."""
        return Stacks(deal(self.DEAL, self.seats), 0, dict.fromkeys(self.seats, 0))

    def deck(self) -> int:
        """Turns in a game: the option `flips` if the game has it (0: no limit)."""
        return int(self.options.get("flips") or NO_LIMIT)

    def planned_rounds(self) -> int | None:
        return self.deck() if self.deck() < NO_LIMIT else None

    def flip(self, turn: Turn, table: Pile) -> None:
        """The flipper's top face-down card onto the centre pile, or its own face-up pile."""
        assert isinstance(table, Stacks)
        if table.down[turn.flipper] <= 0:
            return  # nothing to flip: the turn has no card
        table.down[turn.flipper] -= 1
        if self.FACE_UP:
            table.up[turn.flipper] += 1
        else:
            table.pile += 1

    @staticmethod
    def flipped(turn: Turn) -> bool:
        """Whether the turn put a card down (its flipper had one)."""
        assert isinstance(turn.before, Stacks)
        return turn.before.down[turn.flipper] > 0

    def is_out(self, seat: str, table: Pile) -> bool:
        """Skipped in the calls: out of the game, or no face-down card to flip."""
        assert isinstance(table, Stacks)
        return seat in table.out or table.down[seat] <= 0

    def playing(self, table: Stacks) -> tuple[str, ...]:
        """The seats not out of the game (the consensus counts them all, cards or none)."""
        return tuple(s for s in self.seats if s not in table.out)

    def called(self, turn: Turn, fact: str) -> bool | None:
        """Whether the turn's card called for a press (a Jack, five of a fruit): the judge's
        `fact` if given, else the consensus of the seats still in, cards or none: all pressed ⇒
        yes, none ⇒ no, otherwise None (the judge is asked)."""
        assert isinstance(turn.before, Stacks)
        if fact in self.facts_for(turn.number):
            return bool(self.facts_for(turn.number)[fact])
        playing = self.playing(turn.before)
        pressed = sum(1 for s in playing if s in turn.taps)
        if pressed == len(playing):
            return True
        return False if pressed == 0 else None

    def counted(self, turn: Turn, firsts: dict[str, int]) -> dict[str, int]:
        """A seat out of the game does not race; a turn without a card has no race."""
        assert isinstance(turn.before, Stacks)
        if not self.flipped(turn):
            return {}
        return {s: t for s, t in firsts.items() if s not in turn.before.out}

    def close_at(self, turn: Turn) -> int:
        """Once every seat still in has pressed, the race is decided at once."""
        assert isinstance(turn.before, Stacks)
        if turn.taps and len(turn.taps) == len(self.playing(turn.before)):
            settle = max(int(self.options["tie_us"]), 1)
            return min(max(turn.taps.values()) + settle, turn.window_end_us)
        return turn.window_end_us

    def settle(self, turn: Turn, table: Stacks) -> None:
        """After a turn is ruled (its penalties too): a game marks who is out now."""

    def rank(self, table: Stacks) -> Mapping[str, int] | None:
        """The places' order, best highest, when the cards alone do not decide (None: they do)."""
        return None

    def _ruled(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        out = super()._ruled(turn, table)
        assert isinstance(table, Stacks)
        self.settle(turn, table)
        return out

    def decided(self, table: Pile) -> bool:
        """Nobody has a face-down card left to flip: the game cannot go on."""
        assert isinstance(table, Stacks)
        return not any(table.down[s] > 0 for s in self.playing(table))

    def quiet_flips(self) -> int | None:
        """The game's quiet-table threshold for these seats and options (None: none)."""
        return None

    def schedule(self) -> Schedule:
        """"<seat>, flip!" every `turn_ms`, its words `tempo_ms` apart; the quiet threshold."""
        return Schedule(tempo_ms=int(self.options["tempo_ms"]),
                        pause_ms=int(self.options["pause_ms"]),
                        turn_ms=int(self.options["turn_ms"]), quiet_rounds=self.quiet_flips())

    def announcements(self, number: int) -> list[Phrase]:
        """The game's `deal` phrase before the first flip ({seat}: the first seat dealt to)."""
        return [("deal", {"seat": self.seats[0]})] if number == 1 and "deal" in self.PHRASES \
            else []

    # -- cards changing hands -------------------------------------------------------------------

    def take_pile(self, out: list[Ruling | Awaiting], table: Stacks, number: int,
                  seat: str | None, reason: Reason, margin: int | None = None,
                  too_close: bool = False) -> None:
        """`seat` takes the centre pile and every face-up pile under its face-down cards: one
        ruling, the cards it gains. Too close to call (or nobody): the cards stay."""
        if too_close or seat is None:
            out.append(Ruling(number, None, 0, Shared.TOO_CLOSE, margin))
            return
        gained = table.pile + sum(n for s, n in table.up.items() if s != seat)
        table.down[seat] += table.pile + sum(table.up.values())
        table.pile = 0
        table.up = dict.fromkeys(table.up, 0)
        out.append(Ruling(number, seat, gained, reason, margin))

    def give(self, out: list[Ruling | Awaiting], table: Stacks, number: int, giver: str,
             receivers: Iterable[str], reason: Reason, got: Reason,
             margin: int | None = None) -> None:
        """One card from `giver`'s face-down cards to each of `receivers`, in order, as many as
        it has: −k for the giver, +1 for each seat given one (nothing to give: a ruling of 0)."""
        given = [s for s in receivers if s != giver][:max(table.down[giver], 0)]
        out.append(Ruling(number, giver, -len(given), reason, margin))
        for seat in given:
            table.down[giver] -= 1
            table.down[seat] += 1
            out.append(Ruling(number, seat, 1, got))

    def penalize(self, number: int, table: Pile) -> list[Ruling]:
        """A penalty: `count` of the seat's face-down cards (as many as it has) onto the centre
        pile."""
        assert isinstance(table, Stacks)
        out = []
        for p in self.penalties_for(number):
            paid = min(p.count, max(table.down[p.seat], 0))
            table.down[p.seat] -= paid
            table.pile += paid
            out.append(Ruling(number, p.seat, -paid, Shared.PENALTY, None, (("said", p.reason),)))
        return out

    # -- reading the table ----------------------------------------------------------------------

    def scores(self) -> Mapping[str, int]:
        """The cards each seat holds, face down and face up."""
        return self.state.held()

    def table_standings(self) -> Standings:
        """By cards held (or `rank`), seats out marked; the end line's champions are the
        framework's (`Rules.standings`: the judge's End crowns the most cards)."""
        rows = self.rows(self.scores(), self.rank(self.state), out=self.state.out)
        winners = tuple(r.seat for r in rows if r.place == 1) if self.over else ()
        return Standings(self.over, rows, winners)

    def racing(self, number: int) -> tuple[str, ...]:
        turn = self.rounds[number - 1]
        assert isinstance(turn.before, Stacks)
        return self.playing(turn.before) if self.flipped(turn) else ()

    def words(self, scores: Mapping[str, int]) -> dict[str, Any]:
        """Each seat's face-down cards (and face-up pile), who is out, and the centre pile."""
        st = self.state
        stacks: dict[str, Any] = {"down": dict(st.down), "out": [s for s in self.seats
                                                                 if s in st.out],
                                  "labels": list(self.STACK_WORDS)}
        if self.FACE_UP:
            stacks["up"] = dict(st.up)
        words = {**super().words(scores), "stacks": stacks}
        if not self.FACE_UP or st.pile:
            words["pile"] = st.pile
        if self.deck() < NO_LIMIT:
            words["progress"] = [len(self.rounds), self.deck()]
        return words

    def said_after(self, number: int, new: Sequence[Ruling], first: bool) -> list[Phrase]:
        """What changed hands ("Ann takes the pile: seven cards.", "Ann gives Bob one card."),
        then who is out now."""
        said: list[Phrase] = []
        for i, r in enumerate(new):
            hand = self.HANDS.get(r.reason) if isinstance(r, Ruling) else None
            if hand is None or r.seat is None:
                continue
            if hand == "take" and r.delta > 0:
                said.append(("took_one" if r.delta == 1 else "took", {"seat": r.seat,
                                                                       "n": r.delta}))
            elif hand == "give" and r.delta < 0:
                to = []
                for g in new[i + 1:i + 1 - r.delta]:
                    to.append(g.seat)
                said.append(("gave" if len(to) == 1 else "gave_each",
                             {"seat": r.seat, "to": to, "n": len(to)}))
        if first:
            turn = self.rounds[number - 1]
            after = (self.rounds[number].before if number < len(self.rounds) else self.state)
            assert isinstance(turn.before, Stacks) and isinstance(after, Stacks)
            said += [("out", {"seat": s}) for s in self.seats
                     if s in after.out and s not in turn.before.out]
        return said

    def said_ahead(self) -> list[Phrase]:
        """Each seat out, and one card given to one seat, ready before they are said."""
        return [*(("out", {"seat": s}) for s in self.seats),
                *(("gave", {"seat": s, "to": [t], "n": 1}) for s in self.seats
                  for t in self.seats if s != t)]
