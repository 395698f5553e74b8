"""What every game's rules share: options, the registry, and the pure `Rules` state machine contract.

A game's rules are a pure state machine over table-log events: no clock, no I/O, no threads, no
lock. ``feed`` takes one event, ``advance`` tells it that time has reached ``t_us`` (so race
windows can close), ``finish`` closes every open race as at the end of a log. The live engine and
``referee replay`` drive the very same object; what it reports is a function of the events alone.

The framework owns the plumbing every game shares: the fold (each input re-rules the rounds it made
stale before it returns, so a read never changes anything, and a page or a test may read the rules
from its own thread), change detection (which rounds' rulings a fold made or changed), standings
rows and places in the game's direction, and, for games whose rounds are re-derived from the
presses (`RederivedRules`), the presses, race windows closing, and the status. A turn-based game
builds on `referee.rules.turns.TurnRules`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar, Protocol

from referee.events import (
    BUTTONS,
    Awaiting,
    Cue,
    End,
    Event,
    Facts,
    GameStart,
    Penalty,
    Press,
    Reason,
    Ruling,
    StandingRow,
    Standings,
    Undo,
    places,
)
from referee.rules.declare import (
    VOID,
    Call,
    Fact,
    Option,
    RulesError,
    Schedule,
    UnitWords,
    check_facts,
    read_options,
)
from referee.seatnames import seats_problem

__all__ = ["COMMON_OPTIONS", "Call", "Fact", "Option", "Phrase", "RederivedRules",
           "Rules", "RulesError", "Schedule", "Shared", "Status", "UnitWords"]

Phrase = tuple[str, dict[str, Any]]  # a phrase key of the voice and its parameters


# --------------------------------------------------------------------------------------------
# Options every game has


COMMON_OPTIONS: tuple[Option, ...] = (
    Option.number("tie_us", 1000, 0, 1_000_000, unit="µs", label="Too close to call",
                  help="margin under which a race is too close to call"),
    Option.number("pause_ms", 4000, 0, 600_000, unit="ms", label="Pause between rounds",
                  help="pause between rounds at a live table"),
)


class Shared(Reason):
    """The reasons every game shares."""

    TOO_CLOSE = "too close to call", "too_close"
    PENALTY = "{said}"  # a judge's penalty, in the judge's own words
    # two or more seats never pressed where only one could take the result (or the game's
    # `stragglers` is `no-one`): nobody takes it ({n}: how many, {pressed}: the game's word)
    STRAGGLERS = "unclear: {n} never {pressed}", "never_nobody"


# --------------------------------------------------------------------------------------------
# The rules contract


@dataclass(frozen=True)
class Status:
    """What the table is doing, as far as the rules know (the engine adds cadence/paused)."""

    round: int  # the latest round number (0 before the first)
    race_open: bool  # a race window is open
    closes_at_us: int | None  # when advance() must next be called, if anything is pending
    awaiting: Awaiting | None  # the earliest round waiting for the judge
    over: bool


class Rules(ABC):
    """A game's pure rules, and everything game-specific the rest of the referee reads.

    A subclass declares (class attributes):
    - NAME (the log name), TITLE, SEATS (fewest, most), BUTTONS (the buttons it reads);
    - UNIT (the score's unit key: "whammies") and UNIT_WORDS (one, many: "whammy", "whammies");
      UNIT_SAID (how the voice says it: one, many, a loss, a gain; default: from UNIT_WORDS);
    - PHRASES (its own phrases, in English: what only it says, its calls and its deal; the voice
      keeps only the shared sentences) and CALLS (those of its phrase keys that are calls, said
      beat by beat on time); TEXTS (other English it hands the voice or the pages); its words in
      other languages are files beside its module (`referee.rules.lingo`: `spank.de.toml`);
    - MORE_WINS (the score's direction: False, fewest wins, as whammies; True, most wins);
    - PENALTY_REASONS (the reasons the judge panel suggests for a penalty);
    - OPTIONS (its own `Option`s; `COMMON_OPTIONS` come with every game), FACTS (the `Fact`s the
      judge may give; `VOID` comes with every game), REASONS (its `Reason` enums);
    - ROUNDS_FROM_CUES (rounds are numbered by cues; False: by claims, which are presses),
      SILENT_RACE (a race opens unseen: nothing said, lit or shown until it is ruled).
    and overrides what depends on its options: `schedule()`, `next_call()`, `planned_rounds()`,
    `words()`, `panel_facts()`, `announcements()`, `said_after()`, `box_defaults()`.

    The fold: input marks the rounds from some round on as stale (`refold(number)`, 1-based);
    before the input returns, `sync()` re-rules them (`_fold(start)`) and marks the rounds whose
    news (`_news`: by default their outputs) changed. A game keeps its rounds in `self.rounds`,
    in order, numbered from 1; reading them (`round_outputs`, `status`, `standings`...) never folds.
    """

    NAME: ClassVar[str]
    TITLE: ClassVar[str]
    rounds: Sequence[Any]  # the game's rounds, in order, numbered from 1
    SEATS: ClassVar[tuple[int, int]]
    OPTIONS: ClassVar[tuple[Option, ...]]
    FACTS: ClassVar[tuple[Fact, ...]] = ()
    REASONS: ClassVar[tuple[type[Reason], ...]] = ()
    UNIT: ClassVar[str]  # "whammies", "lives", "cards"
    MORE_WINS: ClassVar[bool] = False  # the score's direction: True, the most wins (cards held)
    UNIT_WORDS: ClassVar[tuple[str, str]]  # "whammy", "whammies"
    UNIT_SAID: ClassVar[UnitWords | None] = None  # None: "{n} whammy", "{n} whammies"
    PHRASES: ClassVar[Mapping[str, Sequence[str]]] = {}  # key → beats ("{seat},", "flip!")
    CALLS: ClassVar[tuple[str, ...]] = ()  # the PHRASES that are calls (said on time)
    # any other English the game hands the voice or the pages (fillers, variant titles): each
    # language's file beside the game translates these with the rest (`referee.rules.lingo`)
    TEXTS: ClassVar[tuple[str, ...]] = ()
    # what the judge panel suggests as a penalty's reason (the judge may write any other)
    PENALTY_REASONS: ClassVar[tuple[str, ...]] = ("judge's penalty",)
    BUTTONS: ClassVar[tuple[str, ...]] = ("slap",)
    ROUNDS_FROM_CUES: ClassVar[bool] = True  # rounds are numbered by cues (False: by claims)
    SILENT_RACE: ClassVar[bool] = False
    # a game from a file: its declaration, which its log's game line carries (None: a module's
    # game, or a game file shipped inside the package, found by name)
    DECLARATION: ClassVar[dict[str, Any] | None] = None
    ZERO_SAID: ClassVar[bool] = True  # a ruling that moves no score still says its count (zero)

    def __init__(self, seats: Iterable[str], options: Mapping[str, Any] | None = None):
        self.seats: tuple[str, ...] = tuple(seats)
        lo, hi = self.SEATS
        if not lo <= len(self.seats) <= hi:
            raise RulesError(
                f"{self.NAME} is for {lo} to {hi} seats, not {len(self.seats)}; "
                f"name {lo}-{hi} seats"
            )
        problem = seats_problem(self.seats)  # the one seat-name rule, wherever names arrive
        if problem:
            raise RulesError(problem)
        self.options: dict[str, Any] = read_options(
            self.known_options(), options or {}, self.NAME
        )
        self.judge_log: list[Facts | Penalty] = []  # not undone, in order
        self.judge_at: list[int] = []  # when each was given (the table's time), in the same order
        self.judged: dict[int, list[Facts | Penalty]] = {}  # the same, by round
        self.practice = False  # a practice game: no sudden death, no champion (`new_rules`)
        self.end_us: int | None = None  # an end line's time: the game ended there
        self.cues_seen = 0  # every cue taken, those ignored after the game was over included
        self.after_end: list[Press] = []  # presses at or after the end: they count for nothing
        self.now_us = 0
        self.changed: set[int] = set()
        self.stale: int | None = None  # the earliest round whose rulings must be re-derived
        self._batched = False  # inside `batch`: inputs wait for one re-ruling at its end

    # -- what the game declares -------------------------------------------------------------

    def practice_options(self) -> dict[str, Any]:
        """These options for a practice game of a few rounds: each option that declares a
        practice size per seat takes it (a short deck); the rest stay as chosen."""
        return {name: (opt.practice_per_seat * len(self.seats)
                       if opt.practice_per_seat is not None else self.options[name])
                for name, opt in self.known_options().items()}

    @classmethod
    def known_options(cls) -> dict[str, Option]:
        return {o.name: o for o in (*COMMON_OPTIONS, *cls.OPTIONS)}

    @classmethod
    def facts(cls) -> tuple[Fact, ...]:
        """Every fact a facts line of this game may hold."""
        return (*cls.FACTS, VOID)

    @classmethod
    def reasons(cls) -> tuple[type[Reason], ...]:
        return (*cls.REASONS, Shared)

    @classmethod
    def box_defaults(cls, seats: int, second_buttons: bool) -> dict[str, Any]:
        """Options whose default at a live table depends on the box (seats, second buttons)."""
        return {}

    @property
    def race_buttons(self) -> tuple[str, ...]:
        """The buttons this game's races read with these options."""
        return self.BUTTONS

    def questions(self) -> list[tuple[Fact, ...]]:
        """The facts the referee may ask at once while a round waits (each asked fact alone, and
        together with the others, in their declared order)."""
        asked = [f for f in self.panel_facts() if f.asked]
        return [combo for n in range(1, len(asked) + 1) for combo in combinations(asked, n)]

    def panel_facts(self) -> tuple[Fact, ...]:
        """The facts the judge panel offers with these options."""
        return self.facts()

    def reason_texts(self) -> list[str]:
        """The texts of the reasons a seat's ruling can give with these options (a reason with
        fillers the options cannot fill, and the judge's own words, are left out)."""
        words = self.reason_words()
        out: list[str] = []
        for reasons in self.reasons():
            for reason in reasons:
                if reason.phrase != "ruling" or reason is Shared.PENALTY:
                    continue
                try:
                    out.append(reason.format(**words) if "{" in reason.value else reason.value)
                except KeyError:
                    continue  # a filler only the ruling knows (a count...)
        return out

    def reason_words(self) -> dict[str, str]:
        """The fillers of this game's reasons that its options decide (Pig: the variant's act)."""
        return {}

    def schedule(self) -> Schedule:
        """How the live table paces this game."""
        return Schedule(pause_ms=int(self.options["pause_ms"]), silent=self.SILENT_RACE)

    def planned_rounds(self) -> int | None:
        """How many rounds the game plans (before any sudden death); None: not known ahead."""
        return None

    def title(self) -> str:
        """The game's name as the pages show it with these options (a variant's own name)."""
        return self.TITLE

    def words(self, scores: Mapping[str, int]) -> dict[str, Any]:
        """The game's own words for the scoreboard: the unit, and whatever else it shows."""
        pace = self.schedule()
        return {"unit": list(self.UNIT_WORDS), "pressed": self.PRESSED,
                "more_wins": self.MORE_WINS, "zero_said": self.ZERO_SAID, "title": self.title(),
                "penalties": list(self.PENALTY_REASONS),
                "next": pace.next_label, "judge_starts": pace.judge_starts}

    @classmethod
    def unit_said(cls) -> UnitWords:
        """How the voice says this game's score (UNIT_SAID, else from UNIT_WORDS)."""
        one, many = cls.UNIT_WORDS
        return cls.UNIT_SAID or UnitWords("{n} " + one, "{n} " + many)

    @classmethod
    def is_loss(cls, delta: int) -> bool:
        """Whether a ruling's delta is bad for its seat (its LED blinks, the pages show it red)."""
        return delta < 0 if cls.MORE_WINS else delta > 0

    @classmethod
    def leaders(cls, scores: Mapping[str, int]) -> list[str]:
        """The seats with the best score in the game's direction (the judge's End crowns them)."""
        if not scores:
            return []
        best = (max if cls.MORE_WINS else min)(scores.values())
        return [s for s, v in scores.items() if v == best]

    # -- input ------------------------------------------------------------------------------

    def check(self, event: Event) -> None:
        """RulesError if `feed` would refuse `event`; nothing changes. The engine asks before it
        writes an event to the log, so the log holds only events the rules take."""
        if isinstance(event, Press):
            self.check_seat(event.seat)
            if event.button not in BUTTONS:
                raise RulesError(f"button {event.button!r} must be {' or '.join(BUTTONS)}")
        elif isinstance(event, Cue):
            if event.seat is not None:
                self.check_seat(event.seat)
            self.check_cue(event)
        elif isinstance(event, Facts):
            self.check_round(event.round)
            check_facts(self.facts(), event.values, self.NAME)
        elif isinstance(event, Penalty):
            self.check_round(event.round)
            self.check_seat(event.seat)
            if event.count < 1:
                raise RulesError(f"count must be 1 or more, not {event.count!r}")
            if not event.reason.strip():
                raise RulesError("a penalty needs a reason, e.g. 'slapped the hippo'")
        elif isinstance(event, Undo):
            if not self.judge_log:
                raise RulesError("undo: there is no judge action left to undo")
        elif isinstance(event, GameStart):
            raise RulesError("a game line may only be the first line")

    def feed(self, event: Event, at_us: int | None = None) -> None:
        """Take one table-log event (not the GameStart line); RulesError if it is refused.
        `at_us`: when a judge line was given (a log's: the time its line stands at), for UNDO to
        tell which change came last; by default the time the rules have reached."""
        self.check(event)
        self.apply(event, at_us)

    def apply(self, event: Event, at_us: int | None = None) -> None:
        """Take one event that `check` has passed, and re-rule what it made stale (inside
        `batch`: once, when the batch ends)."""
        self._take(event, self.now_us if at_us is None else at_us)
        if not self._batched:
            self.sync()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Take many events and re-rule once at the end (a log's judge lines, each of which
        would re-rule from its round to the last: quadratic on a long log). Nothing may be
        read from the rules inside the batch but what its inputs' checks read."""
        self._batched = True
        try:
            yield
        finally:
            self._batched = False
            self.sync()

    def _take(self, event: Event, at_us: int) -> None:
        ended = self.end_us is not None and isinstance(event, Press | Cue) \
            and event.t_us >= self.end_us
        if isinstance(event, Press):
            if ended:
                self.after_end.append(event)  # counts for nothing (a claim's round number)
            elif event.button in self.BUTTONS:  # a button the game does not use: ignored
                self.on_press(event)
        elif isinstance(event, Cue):
            self.cues_seen += 1  # a cue after the end is ignored, but it numbers a round
            if not ended:
                self.on_cue(event)
        elif isinstance(event, Facts | Penalty):
            self.judge_log.append(event)
            self.judge_at.append(at_us)
            self.judged.setdefault(event.round, []).append(event)
            self.refold(event.round)
        elif isinstance(event, Undo):
            undone = self.judge_log.pop()
            self.judge_at.pop()
            self.judged[undone.round].pop()  # the latest of all is the latest of its round
            self.refold(undone.round)
        elif isinstance(event, End) and self.end_us is None:  # a later end changes nothing
            self.end_us = event.t_us
            self.refold(max(1, self.round_count() - 1))  # a race open at the end closes there
            self.advance(event.t_us)

    def undo_step(self, reach: int | None = None) -> Facts | Undo | None:
        """What UNDO writes to revert the latest change to the score, whatever made it: the
        latest judge action is withdrawn (`Undo`); a round ruled from presses alone since then
        is voided (a facts line with "void": true, itself a judge action, so UNDO again restores
        the round). `reach`: the earliest round it may revert (the keypad: the previous round);
        None (the judge panel): any. None when there is nothing to undo within reach."""
        given_at = self.judge_at[-1] if self.judge_at else None
        for number in range(self.round_count(), 0, -1):
            if reach is not None and number < reach:
                break
            if self.judged.get(number) or not any(
                    isinstance(o, Ruling) and o.delta for o in self.round_outputs(number)):
                continue  # judged (its latest change is the judge's), or no score changed
            if given_at is not None and self.rounds[number - 1].close_us <= given_at:
                break  # ruled before the judge's latest action, as every round before it
            return Facts(number, {VOID.name: True})
        if self.judge_log and (reach is None or self.judge_log[-1].round >= reach):
            return Undo()
        return None

    def check_seat(self, seat: str) -> None:
        if seat not in self.seats:
            raise RulesError(f"seat {seat!r} is not at this table ({', '.join(self.seats)})")

    def check_round(self, number: int) -> None:
        named = self.rounds_named()
        if not 1 <= number <= named:
            raise RulesError(f"round {number} has not started (rounds so far: {named})")

    def rounds_named(self) -> int:
        """How many rounds a judge line may name: those played, and those whose cue (or claim)
        came once the game was over, which were ignored: a judge line naming one of them is well
        formed and changes nothing."""
        return max(self.round_count(), self.cues_seen if self.ROUNDS_FROM_CUES else 0)

    def check_cue(self, cue: Cue) -> None:  # noqa: B027 - a hook; most games need no more
        """RulesError for a cue this game refuses (beyond its seat)."""

    def facts_for(self, number: int) -> dict[str, Any]:
        """The round's facts as they stand: later facts lines override earlier ones, per field."""
        merged: dict[str, Any] = {}
        for ev in self.judged.get(number, ()):
            if isinstance(ev, Facts):
                merged.update(ev.values)
        return merged

    def penalties_for(self, number: int) -> list[Penalty]:
        return [ev for ev in self.judged.get(number, ()) if isinstance(ev, Penalty)]

    def penalty_rulings(self, number: int) -> list[Ruling]:
        """The judge's penalties of round `number`, as rulings in the judge's words."""
        return [Ruling(number, p.seat, p.count, Shared.PENALTY, None, (("said", p.reason),))
                for p in self.penalties_for(number)]

    # -- the fold ---------------------------------------------------------------------------

    def refold(self, number: int) -> None:
        """Rounds from `number` (1-based) on must be re-ruled; `sync` does it when read."""
        self.stale = number if self.stale is None else min(self.stale, number)

    def sync(self) -> None:
        """Re-rule from the earliest stale round, and mark the rounds whose news changed. Only
        input calls it (`apply`, `advance`, `finish`), so the rules are up to date between two
        inputs and a read, from any thread, only reads."""
        if self.stale is None:
            return
        start = min(max(1, self.stale), len(self.rounds) + 1)
        self.stale = None
        before = {r.number: self._news(r) for r in self.rounds[start - 1:]}
        self._fold(start)
        for rnd in self.rounds[start - 1:]:
            if before.pop(rnd.number, ()) != self._news(rnd):
                self.changed.add(rnd.number)
        self.changed.update(n for n, news in before.items() if news != ())  # rounds gone

    @abstractmethod
    def _fold(self, start: int) -> None:
        """Re-rule rounds from round `start` (1-based) on, from the table as it stood before it;
        rounds before it are left as they are."""

    def _news(self, rnd: Any) -> object:
        """What of a round the table is told: a change of it marks the round changed (a round
        gone is `()`). By default its outputs: a race that closes with nothing to rule is no news."""
        return tuple(rnd.outputs)

    def take_changed(self) -> list[int]:
        """Rounds whose rulings were made or changed since the last call (for announcing)."""
        out = sorted(self.changed)
        self.changed.clear()
        return out

    # -- hooks -----------------------------------------------------------------------------

    @abstractmethod
    def on_press(self, press: Press) -> None: ...

    @abstractmethod
    def on_cue(self, cue: Cue) -> None: ...

    @abstractmethod
    def advance(self, t_us: int) -> None: ...

    @abstractmethod
    def finish(self) -> None: ...

    def round_count(self) -> int:
        return len(self.rounds)

    def round_outputs(self, number: int) -> list[Ruling | Awaiting]:
        return list(self.rounds[number - 1].outputs)

    def standings(self) -> Standings:
        """The game's standings (`table_standings`), as the end and practice settle them: once
        an end line has ended a game that was not over, and no question is open, they are final
        with the leaders among the seats still in contention as (co-)champions, then every other
        seat as the game placed it; a practice game crowns nobody."""
        st = self.table_standings()
        if self.end_us is not None and not st.final and self.status().awaiting is None:
            scores = {r.seat: r.score for r in st.seats}
            leaders = self.leaders({s: scores[s] for s in self.contenders(st)})
            placed = self.ended_places(st, leaders)
            rank = {s: -p for s, p in placed.items()} if self.MORE_WINS else placed
            st = Standings(True, self.rows(scores, rank, (r.seat for r in st.seats if r.out)),
                           tuple(s for s in self.seats if s in leaders))
        if self.practice and st.winners:
            st = Standings(st.final, st.seats, ())
        return st

    @abstractmethod
    def table_standings(self) -> Standings:
        """The standings as the game's own rules place the seats (the end left to `standings`)."""

    def ended_places(self, st: Standings, leaders: Sequence[str]) -> dict[str, int]:
        """The order of the seats once an end line has ended the game, lower first: the
        `leaders` (its champions), then every other seat as the game placed it."""
        return {r.seat: (0 if r.seat in leaders else r.place) for r in st.seats}

    def contenders(self, st: Standings) -> list[str]:
        """The seats that could still win when an end line ends the game (by default those not
        out); the leaders among them are the champions."""
        return [r.seat for r in st.seats if not r.out]

    def rows(self, scores: Mapping[str, int], rank: Mapping[str, int] | None = None,
             out: Iterable[str] = ()) -> tuple[StandingRow, ...]:
        """The standings rows: each seat's score and place (by `rank` if given, else by score,
        in the game's direction; ties share a place: 1, 1, 3), best place first, then seat
        order."""
        ranked = places(scores if rank is None else rank, self.seats, more_wins=self.MORE_WINS)
        gone = set(out)
        return tuple(StandingRow(s, scores[s], ranked[s], s in gone)
                     for s in sorted(self.seats, key=lambda s: (ranked[s], self.seats.index(s))))

    def status(self) -> Status:
        """What the table is doing (`table_status`); once an end line has ended the game, no race
        is open and, when no question is left, the game is over."""
        st = self.table_status()
        if self.end_us is None:
            return st
        return Status(st.round, False, None, st.awaiting, st.over or st.awaiting is None)

    @abstractmethod
    def table_status(self) -> Status:
        """What the table is doing as the game's rules see it (the end left to `status`)."""

    @abstractmethod
    def next_call(self) -> Call | None:
        """What the live table should call next to start a round, or None (not now, or never:
        claims open the rounds). A question about an older round does not hold the next call:
        the engine holds the table only while the current round waits for the judge."""

    def opened_by(self, number: int) -> tuple[int, str] | None:
        """The press that opened round `number` (time, seat), in games whose rounds are opened by
        a press rather than a cue (Pig's claims): a judge line may only name a round whose
        opening press came before it in the log."""
        return None

    def late(self, number: int) -> dict[str, int]:
        """Presses that belong to round `number` after it was ruled and change nothing, µs after
        its start (games whose window outlasts the ruling: Pig's claims); shown as late."""
        return {}

    def early(self, number: int) -> dict[str, int]:
        """Each seat's early press in round `number`, µs before its cue (games without an early
        window: empty): the pages show it as early, not as "never pressed"."""
        return {}

    def reactions(self, number: int) -> dict[str, int]:
        """Each seat's reaction time in round `number`, µs (games without a cue: empty)."""
        return {}

    # A ruling on a seat that never pressed is said so ("Yellow never slapped: last to spank
    # the pig"), not with a margin to the window's end. Each such reason: (button, "slapped").
    NEVER: ClassVar[Mapping[Reason, tuple[str, str]]] = {}
    PRESSED: ClassVar[str] = "pressed"  # what seats that never raced did not do: "slapped"

    def refutable(self, number: int) -> Fact | None:
        """The fact the judge's NO gives round `number` when nothing is asked: a claim the box
        took at its word (a flipper's match, a four of a kind) that the judge saw was wrong."""
        return None

    def racing(self, number: int) -> tuple[str, ...]:
        """The seats that raced in round `number` (not those out, sitting out, or watching)."""
        out = {r.seat for r in self.standings().seats if r.out}
        return tuple(s for s in self.seats if s not in out)

    def pressers(self, number: int, button: str = "slap") -> frozenset[str]:
        """The seats that pressed `button` in round `number`'s race."""
        return frozenset(self.reactions(number)) if button == "slap" else frozenset()

    def press_note(self, seat: str, button: str, t_us: int) -> str:
        """What a game press of `seat`'s `button` at `t_us` does, in a few words (the terminal's
        echo; "": it races in the round open now). The rules are asked by trial: a copy takes
        the press; if it is not in the open race (between rounds, before the call's go-word),
        what the copy rules differently once every race is closed is what the press does."""
        import copy

        number = self.round_count()
        race_open = self.status().race_open
        if any(r.seat == seat and r.out for r in self.standings().seats):
            return f"does nothing: {seat} is out of the game"
        if race_open and seat not in self.racing(number):
            return f"does nothing: only {' and '.join(self.racing(number))} may press in round " \
                   f"{number}"
        ruled = race_open and any(isinstance(o, Ruling) for o in self.round_outputs(number))
        late = f"late for round {number}, already ruled: it changes nothing"
        if race_open and seat in self.pressers(number, button):
            return late if ruled else \
                f"{seat} already pressed in round {number}; only the first press counts"
        without, trial = copy.deepcopy(self), copy.deepcopy(self)
        try:
            trial.advance(t_us)
            trial.feed(Press(t_us, seat, "double" if button == "double" else "slap"))
        except RulesError:
            return "does nothing"
        if race_open and seat in trial.pressers(number, button) and not ruled:
            return "" if self.ROUNDS_FROM_CUES else f"answers the claim open in round {number}"
        without.advance(t_us)
        without.finish()
        trial.finish()
        if trial.round_count() > without.round_count():
            return f"a claim that opens round {trial.round_count()}"

        def said(o: Ruling) -> tuple[Any, ...]:  # a margin that changes is no new ruling
            return o.round, o.seat, o.delta, o.reason, o.words

        before = {said(o) for o in without.outputs() if isinstance(o, Ruling)}
        new = [o for o in trial.outputs() if isinstance(o, Ruling) and said(o) not in before]
        if new:
            r = next((o for o in new if o.seat == seat), new[0])
            return f"counts in round {r.round}: {r.text}"
        if ruled:
            return trial.in_line(number, seat) or late
        if race_open:
            return f"too early for round {number}'s race: it does nothing"
        return "between rounds, presses are ignored"

    def lit(self, number: int) -> str | None:
        """The seat whose LED stays lit in round `number` (a seat named to answer), if any."""
        return None

    def in_line(self, number: int, seat: str) -> str:
        """What `seat`'s press, taken after round `number` was ruled, waits for (a buzzer in line
        behind the seat answering), in a few words; "": nothing, the press changes nothing."""
        return ""

    def judge_marks(self, number: int) -> dict[str, dict[str, Any]]:
        """The facts the judge's YES and NO give round `number` where they depend on the round (a
        named seat marked right or wrong): {"yes": {...}, "no": {...}}; empty: each asked fact's
        declared `yes` and `no`."""
        return {}

    def keypad(self, awaiting: Awaiting, key: str) -> dict[str, Any]:
        """The facts the judge's YES or NO (`key`) gives the question `awaiting` asks: the named
        seat's marks where the round names one, else each asked fact's declared `yes` or `no`."""
        facts = {f.name: f for f in self.facts()}
        return self.judge_marks(awaiting.round).get(key) or {
            need: facts[need].yes if key == "yes" else facts[need].no for need in awaiting.need}

    def announcements(self, number: int) -> list[Phrase]:
        """Phrases to say before round `number` starts at a live table."""
        return []

    def said_after(self, number: int, new: Sequence[Ruling], first: bool) -> list[Phrase]:
        """Phrases to say after round `number`'s `new` rulings (`first`: its first ruling)."""
        return []

    def said_ahead(self) -> list[Phrase]:
        """Phrases the game may say later that can be known at the start (a seat's letters...),
        for the voice to have ready."""
        return []

    def outputs(self) -> list[Ruling | Awaiting]:
        out: list[Ruling | Awaiting] = []
        for number in range(1, self.round_count() + 1):
            out.extend(self.round_outputs(number))
        return out


class FoldedRound(Protocol):
    """What the shared fold of `RederivedRules` reads of a round."""

    number: int
    close_us: int  # when the race is decided
    closed: bool  # ruled: time has passed close_us (or the log ended)
    outputs: list[Ruling | Awaiting]


class RederivedRules(Rules):
    """Games that re-derive their rounds from the presses (Pig, Pig's Tail): a round is closed
    once time passes its `close_us`; time passing, the end of the log or the judge re-derive
    from the first round concerned. The framework keeps the presses (`presses`, in time order,
    seat order at one instant: never the order they arrived in, nor the seats' names), `rounds`,
    `now_us` and `finished`; a game folds them (`_fold`) and says when it is over (`over`)."""

    rounds: Sequence[FoldedRound]
    over: bool

    def __init__(self, seats: Iterable[str], options: Mapping[str, Any] | None = None):
        super().__init__(seats, options)
        self.presses: list[tuple[int, int, str]] = []  # (time, seat position, seat)
        self.now_us = 0
        self.finished = False

    def _keep(self, press: Press) -> None:
        """Keep a press in time order (at one instant, in seat order)."""
        insort(self.presses, (press.t_us, self.seats.index(press.seat), press.seat))

    def _firsts(self, lo: int, hi: int | None) -> dict[str, int]:
        """Each seat's first press in [lo, hi) (hi None: to the end)."""
        firsts: dict[str, int] = {}
        i = bisect_left(self.presses, (lo,))
        while i < len(self.presses) and (hi is None or self.presses[i][0] < hi):
            t, _, seat = self.presses[i]
            firsts.setdefault(seat, t)
            i += 1
        return firsts

    def advance(self, t_us: int) -> None:
        self.now_us = max(self.now_us, t_us)
        self.sync()
        for rnd in self.rounds:
            if not rnd.closed and rnd.close_us <= self.now_us:
                self.refold(rnd.number)
                break
        self.sync()

    def finish(self) -> None:
        self.finished = True
        self.sync()
        for rnd in self.rounds:
            if not rnd.closed:
                self.refold(rnd.number)
                break
        self.sync()

    def table_status(self) -> Status:
        """The latest round; the race open while a round is not closed (until the earliest
        close); the earliest round waiting for the judge; over as the game says."""
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

    def scores(self) -> Mapping[str, int]:
        """Each seat's score as the fold stands (the default standings rank by it)."""
        raise NotImplementedError(f"{self.NAME} keeps no scores for the default standings")

    def table_standings(self) -> Standings:
        """By score in the game's direction; once over, the first place wins (ties share it)."""
        rows = self.rows(self.scores())
        winners = tuple(r.seat for r in rows if r.place == 1) if self.over else ()
        return Standings(self.over, rows, winners)

