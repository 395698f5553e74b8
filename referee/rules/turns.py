"""The turn-based framework: seats flip in turn, each flip opens a race (Pig's Tail, Slapjack...).

What the framework owns, as boardgame.io's `turn.order` does:
- Seats flip in turn, in seat order, skipping the seats the game says are out (`is_out`). The
  referee calls "<seat>, flip!" (the game's `CALL` phrase, naming the seat); each cue names the
  flipper and is one card onto the centre pile; cues after the deck's last card are ignored.
- Each cue opens a race window of the option `window_ms`, closed early by the next cue; a seat's
  first press in it counts (`counted`), and the race is decided at `close_at` (by default the
  window's end). A seat's first press from the window's end until the next cue is kept too
  (`Turn.gap`: a press between flips).
- The first card onto an empty pile has no card below it (`table.pile == 1` when it is ruled).
- A closed turn is ruled by the game (`rule`), the judge's penalties after it (cards added), then
  what the judge is asked; {"void": true} voids a turn's rulings (its card stays on the pile).
- The game is over once the last card's turn is closed and no turn waits for the judge; the
  fewest cards win by default (`MORE_WINS` turns it round), ties share a place.

A turn-based game declares its name, seats, options (`turn_options`: `turn_ms` and `tempo_ms`
pace the calls, `window_ms` is the race), facts and reasons, and writes `rule` (and `counted`
or `close_at` if its race is not the whole window).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.events import Awaiting, Cue, Press, Reason, Ruling
from referee.rules.base import RederivedRules, Shared
from referee.rules.declare import Call, Option, RulesError, Schedule

__all__ = ["Pile", "Turn", "TurnRules", "turn_options"]


def turn_options(turn_ms: int, tempo_ms: int, window_ms: int) -> tuple[Option, ...]:
    """The options a turn game paces its calls and its races by, with the game's defaults."""
    return (
        Option.number("turn_ms", turn_ms, 200, 60_000, unit="ms", label="Turn pace",
                      help="pace of the turn calls"),
        Option.number("tempo_ms", tempo_ms, 50, 5000, unit="ms", label="Tempo",
                      help="time between the words of a turn call"),
        Option.number("window_ms", window_ms, 100, 60_000, unit="ms", label="Race window",
                      help="race window after each flip"),
    )


@dataclass
class Pile:
    """The running totals of a turn game: cards each seat holds, cards on the centre pile."""

    scores: dict[str, int]  # cards taken
    pile: int = 0  # cards on the centre pile

    def copy(self) -> Pile:
        return Pile(dict(self.scores), self.pile)


@dataclass
class Turn:
    """One flip and its race."""

    number: int
    cue_us: int
    flipper: str
    before: Pile  # the table as it stood before this card
    window_end_us: int = 0  # cue + window, or the next cue
    close_us: int = 0  # when the race is decided (`TurnRules.close_at`)
    taps: dict[str, int] = field(default_factory=dict)  # first press per seat that counts
    gap: dict[str, int] = field(default_factory=dict)  # first press per seat until the next cue
    closed: bool = False
    outputs: list[Ruling | Awaiting] = field(default_factory=list)


class TurnRules(RederivedRules):
    """A game whose rounds are turns: one flip each, in seat order."""

    CARDS: ClassVar[int] = 52  # one card per turn
    CALL: ClassVar[str] = "turn"  # the phrase that calls a turn: "<seat>, flip!"

    rounds: list[Turn]

    def __init__(self, seats: Iterable[str], options: Mapping[str, Any] | None = None) -> None:
        super().__init__(seats, options)
        self.cues: list[Cue] = []
        self.rounds = []
        self.state = self.new_pile()
        self.over = False

    # -- what a turn game may say differently --------------------------------------------------

    def deck(self) -> int:
        """Cards in the deck: one turn each (the options may decide it)."""
        return self.CARDS

    def new_pile(self) -> Pile:
        return Pile(dict.fromkeys(self.seats, 0))

    def is_out(self, seat: str, table: Pile) -> bool:
        """Whether `seat` has no turn any more (skipped by the turn order)."""
        return False

    def counted(self, turn: Turn, firsts: dict[str, int]) -> dict[str, int]:
        """The presses in the window that race (by default every seat's first)."""
        return firsts

    def close_at(self, turn: Turn) -> int:
        """When the turn's race is decided (by default the window's end)."""
        return turn.window_end_us

    def flip(self, turn: Turn, table: Pile) -> None:
        """The turn's card goes onto the table before the turn is ruled (by default: onto the
        centre pile)."""
        table.pile += 1

    def decided(self, table: Pile) -> bool:
        """Whether the table as it stands ends the game before the deck is used up (one seat
        holds every card...); the turns of cues after it are not played."""
        return False

    def penalize(self, number: int, table: Pile) -> list[Ruling]:
        """The judge's penalties of turn `number`, as rulings, and `table` updated (by default:
        cards added to the seat's score)."""
        penalties = self.penalty_rulings(number)
        for penalty in penalties:
            assert penalty.seat is not None
            table.scores[penalty.seat] += penalty.delta
        return penalties

    @abstractmethod
    def rule(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        """A closed turn's rulings (and what the judge is asked); its card is on `table`'s pile
        already, and `table` is updated in place (`take`)."""

    def schedule(self) -> Schedule:
        """"<seat>, flip!" every `turn_ms`, its two words `tempo_ms` apart."""
        return Schedule(tempo_ms=int(self.options["tempo_ms"]),
                        pause_ms=int(self.options["pause_ms"]),
                        turn_ms=int(self.options["turn_ms"]))

    # -- helpers for `rule` --------------------------------------------------------------------

    @staticmethod
    def take(out: list[Ruling | Awaiting], table: Pile, number: int, seat: str | None,
             reason: Reason, margin: int | None = None, too_close: bool = False) -> None:
        """`seat` takes the whole pile for `reason`; too close to call (or nobody): the pile stays."""
        if too_close or seat is None:
            out.append(Ruling(number, None, 0, Shared.TOO_CLOSE, margin))
            return
        out.append(Ruling(number, seat, table.pile, reason, margin))
        table.scores[seat] += table.pile
        table.pile = 0

    # -- input ---------------------------------------------------------------------------------

    def check_cue(self, cue: Cue) -> None:
        if cue.seat is None:
            raise RulesError(f'a {self.TITLE} cue names the flipper: add "seat"')
        if len(self.cues) >= self.deck():
            return  # the deck is used up: cues after its last card are ignored
        if self.cues and cue.t_us < self.cues[-1].t_us:
            raise RulesError(f"cue at {cue.t_us} comes before the previous cue")

    def on_cue(self, cue: Cue) -> None:
        if len(self.cues) >= self.deck():
            return  # the deck is used up: cues after its last card are ignored
        self.cues.append(cue)
        self.refold(len(self.cues) - 1)  # the previous turn's window ends at this cue

    def on_press(self, press: Press) -> None:
        self._keep(press)
        start = None
        for number, cue in enumerate(self.cues, start=1):
            if cue.t_us <= press.t_us:
                start = number
        if start is not None:  # before the first flip there is nothing to take: ignored
            self.refold(start)

    # -- the fold ------------------------------------------------------------------------------

    def _fold(self, start: int) -> None:
        """Re-rule turns from turn `start` on, from the table as it stood before that turn."""
        first = min(start, len(self.rounds) + 1) - 1  # its index
        kept = self.rounds[:first]
        table = self.rounds[first].before.copy() if first < len(self.rounds) else (
            self.state.copy() if kept else self.new_pile())
        window_us = int(self.options["window_ms"]) * 1000
        for i in range(first, len(self.cues)):
            if kept and kept[-1].closed and self.decided(table):
                break  # the game is over: the cues after it are ignored
            cue = self.cues[i]
            assert cue.seat is not None
            turn = Turn(i + 1, cue.t_us, cue.seat, table.copy())
            nxt = self.cues[i + 1].t_us if i + 1 < len(self.cues) else None
            turn.window_end_us = cue.t_us + window_us
            if nxt is not None:
                turn.window_end_us = min(turn.window_end_us, nxt)
            if self.end_us is not None:  # the game ended: a race open then closes there
                turn.window_end_us = min(turn.window_end_us, self.end_us)
                nxt = self.end_us if nxt is None else min(nxt, self.end_us)
            turn.taps = self.counted(turn, self._firsts(cue.t_us, turn.window_end_us))
            turn.close_us = self.close_at(turn)
            if turn.number < self.deck():
                turn.gap = self._firsts(turn.window_end_us, nxt)
            turn.closed = self.finished or turn.close_us <= self.now_us
            self.flip(turn, table)  # the card is on the table, ruled or not
            if turn.closed:
                turn.outputs = self._ruled(turn, table)
            kept.append(turn)
        self.rounds = kept
        self.state = table
        self.over = (bool(kept) and (len(kept) == self.deck() or self.decided(table))
                     and kept[-1].closed
                     and not any(isinstance(o, Awaiting) for r in kept for o in r.outputs))

    def _ruled(self, turn: Turn, table: Pile) -> list[Ruling | Awaiting]:
        """The game's rulings, the judge's penalties, then what the judge is asked."""
        if self.facts_for(turn.number).get("void"):
            return []
        out = self.rule(turn, table)
        penalties = self.penalize(turn.number, table)
        return [*(o for o in out if isinstance(o, Ruling)), *penalties,
                *(o for o in out if isinstance(o, Awaiting))]

    # -- reading the table ---------------------------------------------------------------------

    def scores(self) -> Mapping[str, int]:
        return self.state.scores

    def next_call(self) -> Call | None:
        """"<seat>, flip!" for the next seat in seat order after the last flipper that is not out."""
        st = self.status()
        if st.over or st.race_open or len(self.cues) >= self.deck():
            return None
        seat = self.next_seat()
        return None if seat is None else Call(self.CALL, seat)

    def next_seat(self) -> str | None:
        last = self.cues[-1].seat if self.cues else None
        i = self.seats.index(last) if last in self.seats else -1
        for step in range(1, len(self.seats) + 1):
            seat = self.seats[(i + step) % len(self.seats)]
            if not self.is_out(seat, self.state):
                return seat
        return None

    def reactions(self, number: int) -> dict[str, int]:
        """Each seat's time from the flip call to its tap in turn `number`, µs."""
        turn = self.rounds[number - 1]
        return {s: t - turn.cue_us for s, t in turn.taps.items()}
