"""What every game's rules share: options, the registry, and the pure `Rules` state machine contract.

A game's rules are a pure state machine over table-log events: no clock, no I/O, no threads.
``feed`` takes one event, ``advance`` tells it that time has reached ``t_us`` (so race windows
can close), ``finish`` closes every open race as at the end of a log. The live engine and
``referee replay`` drive the very same object; what it reports is a function of the events alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from referee.events import (
    BUTTONS,
    Awaiting,
    Cue,
    Event,
    Facts,
    GameStart,
    Penalty,
    Press,
    Ruling,
    Standings,
    Undo,
)


class RulesError(ValueError):
    """Bad input to the rules (unknown seat, bad option, round that does not exist...)."""


# --------------------------------------------------------------------------------------------
# Options


@dataclass(frozen=True)
class Option:
    """One game option: name, default, how to read a value (from JSON or from `k=v` text)."""

    name: str
    default: Any
    parse: Callable[[Any], Any]
    help: str

    def read(self, value: Any) -> Any:
        try:
            return self.parse(value)
        except (TypeError, ValueError) as exc:
            raise RulesError(f"option {self.name}={value!r}: {exc}") from None


def int_in(lo: int, hi: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError(f"expected a whole number from {lo} to {hi}")
        if isinstance(value, str):
            value = value.strip()
            if not value.lstrip("-").isdigit():
                raise ValueError(f"expected a whole number from {lo} to {hi}")
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"expected a whole number from {lo} to {hi}")
        return value

    return parse


def choice(*names: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if not isinstance(value, str) or value not in names:
            raise ValueError(f"expected one of {', '.join(names)}")
        return value

    return parse


def read_options(
    known: Mapping[str, Option], given: Mapping[str, Any], game: str
) -> dict[str, Any]:
    """Validate `given` against `known`; every option gets a value (defaults filled in)."""
    for name in given:
        if name not in known:
            raise RulesError(
                f"unknown option {name!r} for {game}; known: {', '.join(sorted(known))}"
            )
    values: dict[str, Any] = {}
    for name, opt in known.items():
        values[name] = opt.read(given[name]) if name in given else opt.default
    return values


COMMON_OPTIONS: tuple[Option, ...] = (
    Option("tie_us", 1000, int_in(0, 1_000_000), "margin under which a race is too close to call"),
    Option("pause_ms", 4000, int_in(0, 600_000), "pause between rounds at a live table"),
)


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
    """A game's pure rules. Subclasses declare NAME, SEATS, OPTIONS and implement the hooks."""

    NAME: ClassVar[str]
    TITLE: ClassVar[str]
    SEATS: ClassVar[tuple[int, int]]
    OPTIONS: ClassVar[tuple[Option, ...]]
    UNIT: ClassVar[str]  # "whammies", "lives", "cards"
    BUTTONS: ClassVar[tuple[str, ...]] = ("slap",)
    ROUNDS_FROM_CUES: ClassVar[bool] = True  # rounds are numbered by cues (Pig: by claims)

    def __init__(self, seats: Iterable[str], options: Mapping[str, Any] | None = None):
        self.seats: tuple[str, ...] = tuple(seats)
        lo, hi = self.SEATS
        if not lo <= len(self.seats) <= hi:
            raise RulesError(
                f"{self.NAME} is for {lo} to {hi} seats, not {len(self.seats)}; "
                f"name {lo}-{hi} seats"
            )
        if len(set(self.seats)) != len(self.seats):
            raise RulesError(f"seat names must differ: {', '.join(self.seats)}")
        for seat in self.seats:
            if not isinstance(seat, str) or not seat.strip():
                raise RulesError(f"seat name {seat!r} must be a non-empty text")
        self.options: dict[str, Any] = read_options(
            self.known_options(), options or {}, self.NAME
        )
        self.judge_log: list[Facts | Penalty] = []  # not undone, in order
        self.judged: dict[int, list[Facts | Penalty]] = {}  # the same, by round
        self.changed: set[int] = set()

    @classmethod
    def known_options(cls) -> dict[str, Option]:
        return {o.name: o for o in (*COMMON_OPTIONS, *cls.OPTIONS)}

    # -- input ------------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        """Take one table-log event (not the GameStart line)."""
        if isinstance(event, Press):
            self.check_seat(event.seat)
            if event.button not in BUTTONS:
                raise RulesError(f"button {event.button!r} must be {' or '.join(BUTTONS)}")
            if event.button in self.BUTTONS:  # a button the game does not use: logged, ignored
                self.on_press(event)
        elif isinstance(event, Cue):
            if event.seat is not None:
                self.check_seat(event.seat)
            self.on_cue(event)
        elif isinstance(event, Facts):
            self.check_round(event.round)
            self.check_facts(event)
            self._judge(event)
        elif isinstance(event, Penalty):
            self.check_round(event.round)
            self.check_seat(event.seat)
            self._judge(event)
        elif isinstance(event, Undo):
            if not self.judge_log:
                raise RulesError("undo: there is no judge action left to undo")
            undone = self.judge_log.pop()
            self.judged[undone.round].pop()  # the latest of all is the latest of its round
            self.on_judge(undone.round)
        elif isinstance(event, GameStart):
            raise RulesError("a game line may only be the first line")
        else:  # pragma: no cover - the union is closed
            raise RulesError(f"unknown event {event!r}")

    def check_flags(self, facts: Facts, flag: str) -> None:
        """Facts of games whose only facts are true/false: `flag` (match, claim) and void."""
        for key, value in facts.values.items():
            if key not in (flag, "void"):
                raise RulesError(f"facts field {key!r} is not used in {self.NAME}; use {flag} or void")
            if not isinstance(value, bool):
                raise RulesError(f"{key} must be true or false, not {value!r}")

    def _judge(self, event: Facts | Penalty) -> None:
        self.judge_log.append(event)
        self.judged.setdefault(event.round, []).append(event)
        self.on_judge(event.round)

    def check_seat(self, seat: str) -> None:
        if seat not in self.seats:
            raise RulesError(f"seat {seat!r} is not at this table ({', '.join(self.seats)})")

    def check_round(self, number: int) -> None:
        if not 1 <= number <= self.round_count():
            raise RulesError(
                f"round {number} has not started (rounds so far: {self.round_count()})"
            )

    def facts_for(self, number: int) -> dict[str, Any]:
        """The round's facts as they stand: later facts lines override earlier ones, per field."""
        merged: dict[str, Any] = {}
        for ev in self.judged.get(number, ()):
            if isinstance(ev, Facts):
                merged.update(ev.values)
        return merged

    def penalties_for(self, number: int) -> list[Penalty]:
        return [ev for ev in self.judged.get(number, ()) if isinstance(ev, Penalty)]

    def sync(self) -> None:  # noqa: B027 - a hook; most games need nothing here
        """Bring derived results up to date (games that fold lazily override this)."""

    def take_changed(self) -> list[int]:
        """Rounds whose rulings were made or changed since the last call (for announcing)."""
        self.sync()
        out = sorted(self.changed)
        self.changed.clear()
        return out

    # -- hooks -----------------------------------------------------------------------------

    @abstractmethod
    def on_press(self, press: Press) -> None: ...

    @abstractmethod
    def on_cue(self, cue: Cue) -> None: ...

    @abstractmethod
    def on_judge(self, number: int) -> None:
        """Facts or penalties of round `number` changed (added or undone): re-rule from there."""

    @abstractmethod
    def check_facts(self, facts: Facts) -> None: ...

    @abstractmethod
    def advance(self, t_us: int) -> None: ...

    @abstractmethod
    def finish(self) -> None: ...

    @abstractmethod
    def round_count(self) -> int: ...

    @abstractmethod
    def round_outputs(self, number: int) -> list[Ruling | Awaiting]: ...

    @abstractmethod
    def standings(self) -> Standings: ...

    @abstractmethod
    def status(self) -> Status: ...

    @abstractmethod
    def next_call(self) -> tuple[str, str | None] | None:
        """What the live table should call next: ("cadence", None), ("turn", seat), or None."""

    def opened_by(self, number: int) -> tuple[int, str] | None:
        """The press that opened round `number` (time, seat), in games whose rounds are opened by
        a press rather than a cue (Pig's claims): a judge line may only name a round whose
        opening press came before it in the log."""
        return None

    def reactions(self, number: int) -> dict[str, int]:
        """Each seat's reaction time in round `number`, µs (games without a cue: empty)."""
        return {}

    def announcements(self, number: int) -> list[tuple[str, dict[str, Any]]]:
        """Phrases (key, params) to say before round `number` starts at a live table."""
        return []

    def outputs(self) -> list[Ruling | Awaiting]:
        self.sync()
        out: list[Ruling | Awaiting] = []
        for number in range(1, self.round_count() + 1):
            out.extend(self.round_outputs(number))
        return out


class RederivedRules(Rules):
    """Games that re-derive their rounds from the presses (Pig, Pig's Tail): a round is settled
    once time passes its `due_us`; time passing, the end of the log or the judge re-derive from
    the first round concerned. Subclasses keep `rounds`, `now_us`, `finished` and `_refold(i)`."""

    rounds: list[Any]
    now_us: int
    finished: bool

    @abstractmethod
    def _refold(self, start: int) -> None: ...

    @staticmethod
    @abstractmethod
    def _settled(rnd: Any) -> bool: ...

    @staticmethod
    @abstractmethod
    def _due_us(rnd: Any) -> int: ...

    def advance(self, t_us: int) -> None:
        self.now_us = max(self.now_us, t_us)
        for i, rnd in enumerate(self.rounds):
            if not self._settled(rnd) and self._due_us(rnd) <= self.now_us:
                self._refold(i)
                return

    def finish(self) -> None:
        self.finished = True
        for i, rnd in enumerate(self.rounds):
            if not self._settled(rnd):
                self._refold(i)
                return

    def on_judge(self, number: int) -> None:
        self._refold(number - 1)


REGISTRY: dict[str, type[Rules]] = {}


def register(cls: type[Rules]) -> type[Rules]:
    REGISTRY[cls.NAME] = cls
    return cls


def rules_for(game: str) -> type[Rules]:
    from referee import rules as _all  # noqa: F401  (imports every game module)

    try:
        return REGISTRY[game]
    except KeyError:
        raise RulesError(
            f"unknown game {game!r}; choose one of {', '.join(sorted(REGISTRY))}"
        ) from None
