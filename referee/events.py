"""Events in, rulings out: the vocabulary shared by the rules, the log, the engine and the adapters.

Every input event is one line of the table log (see PRODUCT.md, "Table log"), and each class here
is that line's one declaration: a frozen msgspec Struct whose tag is the line's `type`. The log
reader decodes lines straight into these classes (`referee.store.tablelog`), and the output lines
(ruling, awaiting, standings) are declared the same way below. Times are integer microseconds on the
engine's monotonic clock (``referee.clock.now_us``); nothing else decides order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

from msgspec import Meta, Struct, to_builtins

BUTTONS = ("slap", "double")

Micros = Annotated[int, Meta(ge=0, description="µs on the engine's monotonic clock")]
RoundNumber = Annotated[int, Meta(ge=1, description="rounds count from 1")]
SeatName = Annotated[str, Meta(min_length=1)]
Button = Literal["slap", "double"]


class GameStart(Struct, frozen=True, tag="game", tag_field="type"):
    """The first line of every log: which game, which seats (in seat order), which options."""

    game: SeatName
    seats: tuple[SeatName, ...]
    options: dict[str, Any] = {}
    practice: bool = False  # a practice game: no sudden death, no champion (written only if true)


class Cue(Struct, frozen=True, tag="cue", tag_field="type", omit_defaults=True):
    """The instant the go-word sounded, with the seat the call named if it names one."""

    t_us: Micros
    seat: SeatName | None = None


class Press(Struct, frozen=True, tag="press", tag_field="type"):
    """The first edge of one button press: who, which button, when."""

    t_us: Micros
    seat: SeatName
    button: Button = "slap"


class Facts(Struct, frozen=True, tag="facts", tag_field="type"):
    """What only eyes can see, for one round, as the game declares its facts. A later one
    corrects.

    On the wire the values are fields of the line itself (`{"type": "facts", "round": 1, "pigs":
    1}`); which fields are facts, and their values, the game declares and its rules check.
    """

    round: RoundNumber
    values: Mapping[str, Any] = {}


class Penalty(Struct, frozen=True, tag="penalty", tag_field="type"):
    """A judge-given penalty, in the game's own unit; it adds to the score, not to the race."""

    round: RoundNumber
    seat: SeatName
    count: Annotated[int, Meta(ge=1)]
    reason: Annotated[str, Meta(min_length=1)]


class Undo(Struct, frozen=True, tag="undo", tag_field="type"):
    """Reverts the latest facts or penalty line not yet undone."""


class End(Struct, frozen=True, tag="end", tag_field="type"):
    """The game ends at `t_us` (the judge's End, or a practice over): cues after it are ignored,
    a race open at it closes there, and the leaders as they stand are the (co-)champions once no
    question is open. Judge lines for rounds before it still count wherever they stand."""

    t_us: Micros


# -- signals from the button box to the engine (not log lines) ---------------------------


@dataclass(frozen=True)
class JudgeKey:
    """A press of a judge keypad key: "yes", "no" or "undo"."""

    t_us: int
    key: str


@dataclass(frozen=True)
class ButtonStuck:
    """A button held down too long (or already held at start); its presses are ignored.

    ``seat`` is the seat name, or "judge" for a keypad key (then ``button`` is the key).
    ``since_us`` is when the hold began; None when it was already held as the box started.
    """

    seat: str
    button: str
    t_us: int
    since_us: int | None = None


@dataclass(frozen=True)
class ButtonHeld:
    """A seat button held down for the hold-to-pause time (2 s): the table pauses."""

    seat: str
    button: str
    t_us: int


@dataclass(frozen=True)
class ButtonReleased:
    """A button that was reported stuck has been released; it counts again from now on."""

    seat: str
    button: str
    t_us: int


Event = GameStart | Cue | Press | Facts | Penalty | Undo | End


class Reason(StrEnum):
    """Why a ruling was made, as python-chess's `Termination` says how a game ended.

    Each game declares its reasons as a subclass. A member's value is the reason's text as the
    table log and `referee replay` print it; it may hold `{fillers}` that the ruling supplies
    (`Ruling.words`: the variant's action, a count). `phrase` is the key of the phrase the voice
    says it with: "ruling" (a seat named, with its count and margin), "too_close", "unclear"...
    Members are written `NAME = "text"` or `NAME = "text", "phrase key"`.
    """

    phrase: str

    def __new__(cls, text: str, phrase: str = "ruling") -> Reason:
        member = str.__new__(cls, text)
        member._value_ = text
        member.phrase = phrase
        return member


@dataclass(frozen=True)
class Ruling:
    """One seat's result in one round (seat None: nobody, e.g. too close to call)."""

    round: int
    seat: str | None
    delta: int
    reason: Reason
    margin_us: int | None = None
    words: tuple[tuple[str, str], ...] = ()  # the fillers of the reason's text

    @property
    def text(self) -> str:
        """The reason as said and logged: its text with the fillers in."""
        return self.reason.format(**dict(self.words)) if self.words else str(self.reason.value)

    def to_json(self) -> dict[str, Any]:
        return _plain(RulingLine(self.round, self.seat, self.delta, self.text,
                                      self.margin_us))


@dataclass(frozen=True)
class Awaiting:
    """A round that cannot be ruled in full until the judge supplies the named facts."""

    round: int
    need: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return _plain(AwaitingLine(self.round, list(self.need)))


@dataclass(frozen=True)
class StandingRow:
    seat: str
    score: int
    place: int
    out: bool = False

    def to_json(self) -> dict[str, Any]:
        return _plain(self.line())

    def line(self) -> SeatScore:
        return SeatScore(self.seat, self.score, self.place, self.out)


@dataclass(frozen=True)
class Standings:
    final: bool
    seats: tuple[StandingRow, ...]
    winners: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return _plain(StandingsLine(self.final, [row.line() for row in self.seats],
                                         list(self.winners)))


def _plain(line: Struct) -> dict[str, Any]:
    out: dict[str, Any] = to_builtins(line)
    return out


# -- the output lines, as `referee replay` prints them and the scoreboard shows them ----------


class RulingLine(Struct, tag="ruling", tag_field="type"):
    """One seat's result in one round; `delta` is in the game's own unit."""

    round: RoundNumber
    seat: str | None
    delta: int
    reason: str
    margin_us: int | None = None


class AwaitingLine(Struct, tag="awaiting", tag_field="type"):
    """A round that waits for the judge to give the facts named in `need`."""

    round: RoundNumber
    need: list[str]


class SeatScore(Struct):
    """One standings row: ties share a place; `out` is a seat eliminated or knocked out."""

    seat: str
    score: int
    place: Annotated[int, Meta(ge=1)]
    out: bool = False


class StandingsLine(Struct, tag="standings", tag_field="type"):
    """The standings; `winners` is empty until `final`."""

    final: bool
    seats: list[SeatScore]
    winners: list[str] = []


def places(scores: Mapping[str, int], order: tuple[str, ...], *, more_wins: bool = False
           ) -> dict[str, int]:
    """Competition ranking (1, 1, 3) by score, the fewest first (`more_wins`: the most first);
    ties share a place."""
    result: dict[str, int] = {}
    ranked = sorted(order, key=lambda s: -scores[s] if more_wins else scores[s])
    for i, seat in enumerate(ranked):
        if i and scores[seat] == scores[ranked[i - 1]]:
            result[seat] = result[ranked[i - 1]]
        else:
            result[seat] = i + 1
    return result


class LogFull(Exception):
    """The table log cannot grow (a full disk, a damaged file): whatever could not be written is
    refused, never acted on, and the engine pauses the table. The store raises its own subclass."""
