"""Spank the Pig! on the box.

The rules, in plain words (PRODUCT.md, "Spank the Pig!"; the seed rule sheet):
- The deck (72) is dealt equally; rounds = deck // seats; the last one is announced.
- Each round the referee calls "Spank… the… PIG!"; the cue is the instant "PIG!" sounds. The race
  window closes at the first of: cue + `window_ms`; every active seat having pressed every raced
  button, plus `tie_us` to settle; the start of the next round's early window.
- With p pigs on the table: p = 0, the first slap is a mistake (1 whammy); p = 1 or 2, the last
  slapper takes p whammies; p ≥ 3, the first p slappers (by clear membership, `race.group`) each
  shed one whammy.
- A press in the `early_ms` before the cue (default: the cadence, 2 × `tempo_ms`) is early: the
  round's first early slapper earns the whammy, ruled from the early presses alone whatever the
  judge says about the pigs; it does not count as slapping the pig (the seat's next slap does).
  Presses outside every race window and early window are ignored; in each window only a seat's
  first press of each button counts.
- Doubles, with the double buttons, race the same way with d doubles (d = 0: first presser takes 1;
  d ≥ 1: last presser takes d). With `doubles = judge` the judge names them as penalties; with
  `judge` or `off` a double press is kept in the log and ignored.
- What the box cannot see comes from consensus (all slapped ⇒ 1 pig, none ⇒ 0) or the judge.
- Where every seat had to press (p = 1 or 2, d ≥ 1), a seat that never pressed is last; two or
  more that never pressed each take what the last would (`stragglers = all-lose`, the default) or
  nobody does (`no-one`). Margins and "too close to call" are only between seats that pressed.
- Margins are between different seats; under `tie_us` (or 0 µs) is too close to call.
- Within a round rulings apply in the time order of the presses that earned them, judge penalties
  after: a whammy taken early can be shed later; a shed on an empty pile does nothing.
- Fewest whammies wins; tied leaders play sudden death: whoever takes a whammy is out, unless all
  remaining take some in the same round (then only those above the fewest go out; all equal: on).
  Shedding knocks nobody out and wins nothing: the last one standing wins. A round awaiting the
  judge knocks nobody out. The game is not over while any round awaits the judge.
- Places after a sudden death are a play-off's: the champion, then the other seats of the sudden
  death (knocked out later ahead of earlier; the same round shares a place), then the seats that
  sat it out, by whammies. The judge's End in a sudden death places the seats so too, with the
  leaders still in it as its (co-)champions.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from referee.events import (
    Awaiting,
    Cue,
    Press,
    Reason,
    Ruling,
    Standings,
)
from referee.rules import odds, race
from referee.rules.base import Phrase, Rules, Shared, Status
from referee.rules.declare import Call, Fact, Option, RulesError, Schedule, UnitWords

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
    after_over: bool = False  # its cue came once the game was over: it closes nothing
    early_from_us: int = 0  # the early window: [early_from_us, early_to_us)
    early_to_us: int = 0
    limit_us: int = 0  # cue + window, or the next round's early window: the latest close
    close_us: int = 0  # the limit, or every raced button pressed + tie: whichever first
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
    knocked: dict[str, int]  # knocked out in sudden death → the round it went out in
    benched: set[str]  # not among the tied leaders: sit out sudden death
    over: bool
    winners: tuple[str, ...]

    def copy(self) -> _Fold:
        return _Fold(dict(self.scores), dict(self.knocked), set(self.benched), self.over,
                     self.winners)


class SpankThePig(Rules):
    NAME: ClassVar[str] = "spank-the-pig"
    TITLE: ClassVar[str] = "Spank the Pig!"
    SEATS: ClassVar[tuple[int, int]] = (2, 7)
    UNIT: ClassVar[str] = "whammies"
    UNIT_WORDS: ClassVar[tuple[str, str]] = ("whammy", "whammies")
    UNIT_SAID: ClassVar[UnitWords] = UnitWords("{n} whammy", "{n} whammies",
                                               gain="{n} off the whammy pile")
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {
        "spank": ("Spank", "the", "PIG!"),  # the call: the cue is "PIG!"
        "deal": ("Deal {cards_said} to each player. {aside}",),
        "take_cards": ("{seat}, take {number} face-up cards into your whammy pile.",),
    }
    CALLS: ClassVar[tuple[str, ...]] = ("spank",)
    PENALTY_REASONS: ClassVar[tuple[str, ...]] = (
        "slapped the hippo", "slapped the wrong card", "last to shout the double",
        "shouted a double wrongly")
    BUTTONS: ClassVar[tuple[str, ...]] = ("slap", "double")
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option.number("deck", 72, 2, 1_000_000, unit="cards", label="Deck",
                      help="cards in the deck, dealt equally", practice_per_seat=3),
        Option.number("tempo_ms", 500, 100, 5000, unit="ms", label="Tempo",
                      help="time between the cadence words"),
        Option.number("window_ms", 3000, 100, 60_000, unit="ms", label="Race window",
                      help="race window after the cue"),
        Option.number("early_ms", 1000, 0, 60_000, unit="ms", label="Early window",
                      help="before the cue, a press is early (the cadence's length: "
                           "twice the tempo)"),
        Option.choice("stragglers", "all-lose", ("all-lose", "no-one"), label="Stragglers",
                      help="two or more never pressed where every seat had to: each takes "
                           "what the last would, or nobody does",
                      labels=("Each of them takes it", "Nobody takes it")),
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
        if "early_ms" not in (options or {}):  # the cadence's own length, whatever its tempo
            self.options["early_ms"] = 2 * self.options["tempo_ms"]
        deck, n = self.options["deck"], len(self.seats)
        if deck < n:
            raise RulesError(f"option deck={deck!r}: fewer cards than the {n} seats, so no round "
                             f"to play; use a deck of at least {n}")
        self.rounds: list[Round] = []
        # the presses that may count, as (time, seat position, button, seat): at one instant seat
        # order decides, never the order presses arrived in, nor the seats' names
        self.presses: list[tuple[int, int, str, str]] = []
        self._pruned_us = 0  # presses before this have been pruned (see `_prune`)
        self._first_open = 0  # rounds before this index are closed or not counted
        self._counted = 0  # rounds counted (a prefix: the rest came after the game was over)
        self.awaiting: dict[int, Awaiting] = {}
        self.now_us = 0
        self.finished = False
        self.state = _Fold(dict.fromkeys(self.seats, 0), {}, set(), False, ())
        self.regular_rounds = deck // n

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
                        pause_ms=int(self.options["pause_ms"]), quiet_rounds=self.quiet_rounds())

    # A sudden death's rounds, beyond the regular ones, that the quiet-table odds allow for.
    SUDDEN_DEATH_ROUNDS: ClassVar[int] = 10

    def quiet_rounds(self) -> int:
        """A round is quiet (nobody has a reason to press) when no pig is flipped: with a sixth
        of the deck pigs (12 of 72), the chance no pig is among the seats' cards; a double with
        buttons gives a reason to press too, so counting pigs alone errs on the quiet side.
        The threshold: the run of quiet rounds an honest table reaches in under 1 game in 100."""
        deck = int(self.options["deck"])
        quiet = odds.none_of(deck // 6, deck, len(self.seats))
        return odds.quiet_threshold(quiet, self.regular_rounds + self.SUDDEN_DEATH_ROUNDS)

    def planned_rounds(self) -> int:
        return int(self.regular_rounds)

    # -- timeline -----------------------------------------------------------------------------

    @property
    def race_buttons(self) -> tuple[str, ...]:
        return ("slap", "double") if self.options["doubles"] == "buttons" else ("slap",)

    def check_cue(self, cue: Cue) -> None:
        if self.rounds and cue.t_us < self.rounds[-1].cue_us:
            raise RulesError(f"cue at {cue.t_us} comes before the previous cue")

    def on_cue(self, cue: Cue) -> None:
        self.sync()
        # a cue once the game is over is ignored: it must not cut the last round's window short
        over = self.state.over and not self._open_rounds()
        self.rounds.append(Round(len(self.rounds) + 1, cue.t_us, after_over=over))
        cut = cue.t_us - self.options["early_ms"] * 1000  # the new round's early window
        prev = self.rounds[-2] if len(self.rounds) > 1 else None
        if prev is not None and (cut < prev.limit_us or cut < prev.early_to_us):
            self.refold(prev.number)  # its windows end sooner now: re-derive it
        else:
            self.refold(len(self.rounds))
        self.advance(self.now_us)
        self._prune()

    def on_press(self, press: Press) -> None:
        insort(self.presses,
               (press.t_us, self.seats.index(press.seat), press.button, press.seat))
        self.sync()  # every round's windows as they stand
        t = press.t_us
        # the latest counted round whose windows can hold it (after the game is over a press
        # only waits in the list, in case a correction makes its round count after all)
        for i in range(self._counted - 1, -1, -1):
            rnd = self.rounds[i]
            if rnd.early_from_us <= t:
                if not rnd.closed:
                    self._add(rnd, press)
                elif t < rnd.early_to_us or rnd.cue_us <= t < rnd.limit_us:
                    self.refold(rnd.number)  # it reached us after the close: re-derive
                break
        self.advance(self.now_us)

    def _add(self, rnd: Round, press: Press) -> None:
        """A press in an open round: what `_place` would find, without placing them all again."""
        t, seat = press.t_us, press.seat
        if rnd.early_from_us <= t < rnd.early_to_us:
            presses = rnd.early[press.button]
        elif rnd.cue_us <= t < rnd.close_us:
            presses = rnd.race[press.button]
        else:
            return  # between the windows, or after this round's close: ignored
        if seat in presses and presses[seat] <= t:
            return  # one press per button per window: only the first counts
        presses[seat] = t
        if presses is rnd.race[press.button]:
            self._settle(rnd, rnd.race)

    def _settle(self, rnd: Round, found: dict[str, dict[str, int]]) -> None:
        """Every active seat has pressed every raced button: the window closes `tie_us` later."""
        times = [found[b].get(s) for b in self.race_buttons for s in rnd.active]
        if rnd.active and None not in times:
            settle = max(t for t in times if t is not None) + race.clear_us(self.options["tie_us"])
            rnd.close_us = min(rnd.close_us, settle)  # the last press is inside the window
        rnd.race = {b: {s: t for s, t in p.items() if t < rnd.close_us} for b, p in found.items()}

    def _place(self, rnd: Round) -> None:
        """The round's windows and the presses in them (one per seat and button in each window).

        Early window: the `early_ms` before the cue. Race window: from the cue until the first of
        cue + `window_ms`, the start of the next round's early window, and every active seat
        having pressed every raced button plus `tie_us` to settle. Outside both: ignored.
        """
        early_us = self.options["early_ms"] * 1000
        nxt = self.rounds[rnd.number] if rnd.number < len(self.rounds) else None
        cut = nxt.cue_us - early_us if nxt is not None and not nxt.after_over else None
        rnd.early_from_us = rnd.cue_us - early_us
        rnd.early_to_us = rnd.cue_us if cut is None else min(rnd.cue_us, cut)
        rnd.limit_us = rnd.cue_us + self.options["window_ms"] * 1000
        if cut is not None:
            rnd.limit_us = min(rnd.limit_us, cut)
        if self.end_us is not None:  # the game ended: a race open then closes there
            rnd.early_to_us = min(rnd.early_to_us, self.end_us)
            rnd.limit_us = max(rnd.cue_us, min(rnd.limit_us, self.end_us))
        rnd.early, found = self._firsts(rnd)
        rnd.close_us = rnd.limit_us
        self._settle(rnd, found)

    def _prune(self) -> None:
        """Forget the presses that can never count again, so memory grows with rounds, not with
        presses. Once a round's next cue is known its windows are final: of the presses before
        the newest round's early window, only each seat's first press of each button in an early
        or race window can count (a press that arrives later still takes its place)."""
        newest = self.rounds[-1]
        lo = bisect_left(self.presses, (self._pruned_us,))
        self._pruned_us = max(self._pruned_us, newest.cue_us - self.options["early_ms"] * 1000)
        hi = bisect_left(self.presses, (self._pruned_us,))
        final = self.rounds[-3:-1]  # the rounds whose windows lie there (or overlap it)
        keep: list[tuple[int, int, str, str]] = []
        seen: set[tuple[int, str, str, str]] = set()
        for press in self.presses[lo:hi]:
            t, _, button, seat = press
            for rnd in reversed(final):
                window = ("early" if rnd.early_from_us <= t < rnd.early_to_us else
                          "race" if rnd.cue_us <= t < rnd.limit_us else None)
                if window is not None:
                    if (rnd.number, window, seat, button) not in seen:
                        seen.add((rnd.number, window, seat, button))
                        keep.append(press)
                    break
        self.presses[lo:hi] = keep

    def _firsts(self, rnd: Round) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
        """Each seat's first press of each button in the round's early window and in
        [cue, limit), in one pass over the presses."""
        early: dict[str, dict[str, int]] = {"slap": {}, "double": {}}
        found: dict[str, dict[str, int]] = {"slap": {}, "double": {}}
        i = bisect_left(self.presses, (rnd.early_from_us,))
        while i < len(self.presses) and self.presses[i][0] < rnd.limit_us:
            t, _, button, seat = self.presses[i]
            if t < rnd.early_to_us:
                early[button].setdefault(seat, t)
            elif t >= rnd.cue_us:
                found[button].setdefault(seat, t)
            i += 1
        return early, found

    def _open_rounds(self, *, reading: bool = False) -> list[Round]:
        """The counted rounds whose race has not closed (one or two; all later than the rest).
        Input moves the index of the first of them on; a read (`reading`) leaves it."""
        i = self._first_open
        while i < len(self.rounds) and (self.rounds[i].closed or not self.rounds[i].counted):
            i += 1
        if not reading:
            self._first_open = i
        return [r for r in self.rounds[i:] if r.counted and not r.closed]

    def advance(self, t_us: int) -> None:
        self.now_us = max(self.now_us, t_us)
        self.sync()
        for rnd in self._open_rounds():
            if rnd.close_us <= self.now_us:
                self.refold(rnd.number)
                self.sync()
                return

    def finish(self) -> None:
        self.finished = True
        still = self._open_rounds()
        if still:
            self.refold(still[0].number)
        self.sync()

    # -- ruling --------------------------------------------------------------------------------

    def _in_sudden_death(self, number: int) -> bool:
        return bool(number > self.regular_rounds)

    def _fold(self, start: int) -> None:
        """Re-rule rounds from `start` on, from the table as it stood before round `start`."""
        if start > len(self.rounds):
            return
        first = self.rounds[start - 1]
        if start == 1:
            state = _Fold(dict.fromkeys(self.seats, 0), {}, set(), False, ())
        elif first.before is None:  # a new round: the fold so far ends where it begins
            state = self.state.copy()
        else:
            state = first.before.copy()
        self._counted = min(self._counted, start - 1)
        for rnd in self.rounds[start - 1 :]:
            rnd.before = state.copy()
            nxt = self.rounds[rnd.number] if rnd.number < len(self.rounds) else None
            if state.over:
                rnd.counted, rnd.outputs, rnd.active = False, [], ()
                self.awaiting.pop(rnd.number, None)
                if nxt is not None:
                    nxt.after_over = True  # the game was over at its cue too
                self._place(rnd)
                continue
            rnd.counted = True
            self._counted = rnd.number
            if nxt is not None and self._may_end(rnd):
                # The next cue is ignored if the game was over when it came: this round ruled
                # with its window as it stood then (not cut by that cue), closed before it, and
                # the game over. Otherwise the next round counts and cuts this one's window.
                nxt.after_over = True
                trial = state.copy()
                self._rule_round(rnd, trial)
                if trial.over and rnd.closed and rnd.close_us <= nxt.cue_us:
                    state = trial
                    continue
            if nxt is not None:
                nxt.after_over = False
            self._rule_round(rnd, state)
        self.state = state

    def _may_end(self, rnd: Round) -> bool:
        """Whether ruling round `rnd` can end the game (the last regular round, sudden death)."""
        return bool(rnd.number >= self.regular_rounds)

    def _rule_round(self, rnd: Round, state: _Fold) -> None:
        """Place and rule one counted round; `state` (the table before it) is updated in place:
        scores, seats knocked out in sudden death, the end."""
        sudden = self._in_sudden_death(rnd.number)
        rnd.active = (
            tuple(s for s in self.seats if s not in state.knocked and s not in state.benched)
            if sudden
            else self.seats
        )
        self._place(rnd)
        if not rnd.closed and (self.finished or rnd.close_us <= self.now_us):
            rnd.closed = True  # ruled, even when nothing happened: news (`_news`)
        if not rnd.closed:
            self._first_open = min(self._first_open, rnd.number - 1)
        outputs = self._rule(rnd, state.scores) if rnd.closed else []
        taken = dict.fromkeys(self.seats, 0)
        for o in outputs:
            if isinstance(o, Ruling) and o.seat is not None:
                state.scores[o.seat] += o.delta
                if o.delta > 0:
                    taken[o.seat] += o.delta
        rnd.outputs = outputs
        self.awaiting.pop(rnd.number, None)
        for o in outputs:
            if isinstance(o, Awaiting):
                self.awaiting[rnd.number] = o
        if not rnd.closed or any(isinstance(o, Awaiting) for o in outputs):
            return  # a round awaiting the judge knocks nobody out and ends nothing
        if sudden:
            # only taking a whammy is out; shedding one knocks nobody out and wins nothing
            for seat in _knocked_out(rnd.active, taken):
                state.knocked[seat] = rnd.number
            alive = [s for s in rnd.active if s not in state.knocked]
            if len(alive) == 1:
                state.over, state.winners = True, (alive[0],)
        elif rnd.number == self.regular_rounds:
            best = min(state.scores.values())
            leaders = [s for s in self.seats if state.scores[s] == best]
            if len(leaders) == 1 or self.practice:  # a practice has no sudden death
                state.over, state.winners = True, tuple(leaders)
            else:
                state.benched |= set(self.seats) - set(leaders)  # only tied leaders play on

    def _news(self, rnd: Round) -> object:
        """A round ruled is news even when nothing happened (a clean round is said), and so is
        a round no longer counted (after the game was over)."""
        return rnd.counted, rnd.closed, tuple(rnd.outputs)

    def _rule(self, rnd: Round, scores: dict[str, int]) -> list[Ruling | Awaiting]:
        """A closed round's rulings, in the time order of the presses that earned them (that is
        the order they apply in: a whammy shed comes off the pile as it stands at that press),
        then the judge's penalties, then what the judge is asked."""
        tie = self.options["tie_us"]
        facts = self.facts_for(rnd.number)
        if facts.get("void"):
            return []  # voided by the judge (or cut in half by a power loss)
        earned: list[tuple[int, Ruling]] = []
        need: list[str] = []

        pigs = facts.get("pigs")
        if pigs is None:
            pigs = _consensus(rnd.race["slap"], rnd.active)
        if pigs is None:
            need.append("pigs")
        earned += self._race(rnd, "slap", pigs, tie)

        if self.options["doubles"] == "buttons":
            d = len(set(facts["doubles"])) if "doubles" in facts else None
            if d is None:
                d = _consensus(rnd.race["double"], rnd.active)
            if d is None:
                need.append("doubles")
            earned += self._race(rnd, "double", d, tie)

        earned.sort(key=lambda e: e[0])  # stable: at equal times, slaps before doubles
        pile = dict(scores)
        outputs: list[Ruling | Awaiting] = []
        for _, o in earned:
            if o.seat is not None and o.delta < 0:
                if pile[o.seat] > 0:
                    pile[o.seat] -= 1
                else:  # a shed on an empty pile does nothing
                    o = Ruling(o.round, o.seat, 0, Why.NO_WHAMMY_TO_SHED, o.margin_us)
            elif o.seat is not None:
                pile[o.seat] += o.delta
            outputs.append(o)
        outputs += self.penalty_rulings(rnd.number)
        if need:
            outputs.append(Awaiting(rnd.number, tuple(need)))
        return outputs

    def _race(self, rnd: Round, button: str, count: int | None,
              tie: int) -> list[tuple[int, Ruling]]:
        """One race: slaps with `count` pigs, or double presses with `count` doubles. Each ruling
        comes with the time of the press that earned it."""
        n = rnd.number
        active = rnd.active
        too_early, nothing_there, last_to_one, last_to_several = RACE_REASONS[button]
        early = {s: t for s, t in rnd.early[button].items() if s in active}
        pressed = {s: t for s, t in rnd.race[button].items() if s in active}
        out: list[tuple[int, Ruling]] = []

        def too_close(at: int, margin: int | None) -> None:
            out.append((at, Ruling(n, None, 0, Shared.TOO_CLOSE, margin, (("button", button),))))

        if early:
            # an early press is the round's first mistake: ruled from the early presses alone,
            # whatever the judge later says about the pigs; it competes only with other early
            # presses, and carries no margin against the race's
            result = race.first(early, tie)
            t0 = min(early.values())
            if result.too_close:
                too_close(t0 + (result.margin_us or 0), result.margin_us)
            elif result.seat is not None:
                out.append((t0, Ruling(n, result.seat, 1, too_early, result.margin_us)))
        elif count == 0 and pressed:
            result = race.first(pressed, tie)
            t0 = min(pressed.values())
            if result.too_close:
                too_close(t0 + (result.margin_us or 0), result.margin_us)
            elif result.seat is not None:
                out.append((t0, Ruling(n, result.seat, 1, nothing_there, result.margin_us)))
        if not count:
            return out
        if button == "slap" and count >= 3:
            group = race.group(pressed, count, tie)
            for seat, margin in group.named:
                out.append((pressed[seat], Ruling(n, seat, -1, Why.FIRST_TO_A_PIG, margin)))
            if group.unclear:
                too_close(min(pressed[s] for s in group.unclear), group.margin_us)
            return out
        result = race.last(pressed, active, tie)
        reason = last_to_several if count > 1 else last_to_one
        if result.stragglers:
            # never pressing is never a way out: each straggler takes what the last presser
            # would (`stragglers = all-lose`), or nobody does (`no-one`); never a photo finish
            if self.options["stragglers"] == "all-lose":
                out += [(rnd.close_us, Ruling(n, s, count, reason)) for s in result.stragglers]
            else:
                out.append((rnd.close_us, Ruling(
                    n, None, 0, Shared.STRAGGLERS, None,
                    (("n", str(len(result.stragglers))), ("pressed", self.NEVER[reason][1]),
                     ("button", button)))))
        elif result.too_close:
            too_close(max(pressed.values(), default=rnd.close_us), result.margin_us)
        elif result.seat is not None:
            out.append((pressed.get(result.seat, rnd.close_us),
                        Ruling(n, result.seat, count, reason, result.margin_us)))
        return out

    # -- reading the table ---------------------------------------------------------------------

    def table_standings(self) -> Standings:
        st = self.state
        key = self.playoff(st.winners) if self.over else dict(st.scores)
        rows = self.rows(st.scores, key, st.knocked)
        return Standings(self.over, rows, st.winners if self.over else ())

    def playoff(self, champions: Sequence[str]) -> dict[str, int]:
        """The places' order, lower first: the champion(s); the seats still in play, by
        whammies; after a sudden death, a play-off's places: the other seats of the sudden
        death (knocked out later ahead of earlier, the same round sharing a place), then the
        seats that sat it out, by whammies."""
        st = self.state
        later = sorted(set(st.knocked.values()), reverse=True)
        key = {s: ((0, 0) if s in champions else
                   (2, later.index(st.knocked[s])) if s in st.knocked else
                   (3, st.scores[s]) if s in st.benched else
                   (1, st.scores[s])) for s in self.seats}
        order = sorted(set(key.values()))
        return {s: order.index(k) for s, k in key.items()}

    def ended_places(self, st: Standings, leaders: Sequence[str]) -> dict[str, int]:
        """Ended by the judge in a sudden death: the play-off's places, its leaders first."""
        return self.playoff(leaders)

    def table_status(self) -> Status:
        awaiting = self.awaiting[min(self.awaiting)] if self.awaiting else None
        open_rounds = self._open_rounds(reading=True)
        return Status(
            round=self._counted,
            race_open=bool(open_rounds),
            closes_at_us=min((r.close_us for r in open_rounds), default=None),
            awaiting=awaiting,
            over=self.over,
        )

    def contenders(self, st: Standings) -> list[str]:
        """Ended in sudden death: the seats still in it (the others were out of the running)."""
        if len(self.rounds) >= self.regular_rounds and self.state.benched:
            return [s for s in self.seats
                    if s not in self.state.knocked and s not in self.state.benched]
        return super().contenders(st)

    @property
    def over(self) -> bool:
        """The game is over once its end is ruled and no round, however early, awaits the judge."""
        return self.state.over and not self.awaiting

    def next_call(self) -> Call | None:
        st = self.status()
        if st.over or st.race_open:
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
        return tuple(self.rounds[number - 1].active)

    def pressers(self, number: int, button: str = "slap") -> frozenset[str]:
        return frozenset(self.rounds[number - 1].race.get(button, {}))

    def early(self, number: int) -> dict[str, int]:
        """Each seat's first early slap in round `number`, µs before the cue."""
        rnd = self.rounds[number - 1]
        return {s: rnd.cue_us - t for s, t in rnd.early["slap"].items() if s in rnd.active}

    def announcements(self, number: int) -> list[Phrase]:
        """What to say before round `number` starts (deal at the first, last round...)."""
        said: list[Phrase] = []
        if number == 1:
            aside = self.options["deck"] % len(self.seats)
            said.append(("deal", {"cards": self.regular_rounds, "aside_cards": aside,
                                  "cards_said": _cards(self.regular_rounds),
                                  "aside": f"Set {_cards(aside)} aside." if aside else ""}))
        if number == self.regular_rounds:
            said.append(("last_round", {}))
        elif number == self.regular_rounds + 1 or (
            number > self.regular_rounds and self.state.knocked
        ):
            said.append(("sudden_death", {"seats": list(self.active_seats())}))
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
        if len(self.rounds) + 1 > self.regular_rounds:
            return tuple(s for s in self.seats
                         if s not in self.state.knocked and s not in self.state.benched)
        return self.seats


def _cards(n: int) -> str:
    """A count of cards dealt or set aside, in digits: "1 card", "17 cards"."""
    return f"{n} card" if n == 1 else f"{n} cards"


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
