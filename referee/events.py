"""Events in, rulings out: the vocabulary shared by the rules, the log, the engine and the adapters.

Every input event is one line of the table log (see PRODUCT.md, "Table log"). Times are integer
microseconds on the engine's monotonic clock (``referee.clock.now_us``); nothing else decides order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

BUTTONS = ("slap", "double")


@dataclass(frozen=True)
class GameStart:
    """The first line of every log: which game, which seats (in seat order), which options."""

    game: str
    seats: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Cue:
    """The instant the go-word sounded, with the seat the call named if it names one."""

    t_us: int
    seat: str | None = None


@dataclass(frozen=True)
class Press:
    """The first edge of one button press: who, which button, when."""

    t_us: int
    seat: str
    button: str = "slap"


@dataclass(frozen=True)
class Facts:
    """What only eyes can see, for one round, as the game declares its facts. A later one corrects."""

    round: int
    values: Mapping[str, Any]


@dataclass(frozen=True)
class Penalty:
    """A judge-given penalty, in the game's own unit; it adds to the score, not to the race."""

    round: int
    seat: str
    count: int
    reason: str


@dataclass(frozen=True)
class Undo:
    """Reverts the latest facts or penalty line not yet undone."""


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
class ButtonReleased:
    """A button that was reported stuck has been released; it counts again from now on."""

    seat: str
    button: str
    t_us: int


Event = GameStart | Cue | Press | Facts | Penalty | Undo


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
        return {
            "type": "ruling",
            "round": self.round,
            "seat": self.seat,
            "delta": self.delta,
            "reason": self.text,
            "margin_us": self.margin_us,
        }


@dataclass(frozen=True)
class Awaiting:
    """A round that cannot be ruled in full until the judge supplies the named facts."""

    round: int
    need: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"type": "awaiting", "round": self.round, "need": list(self.need)}


@dataclass(frozen=True)
class StandingRow:
    seat: str
    score: int
    place: int
    out: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "score": self.score, "place": self.place, "out": self.out}


@dataclass(frozen=True)
class Standings:
    final: bool
    seats: tuple[StandingRow, ...]
    winners: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "standings",
            "final": self.final,
            "seats": [row.to_json() for row in self.seats],
            "winners": list(self.winners),
        }


def places(scores: Mapping[str, int], order: tuple[str, ...]) -> dict[str, int]:
    """Competition ranking (1, 1, 3) by ascending score; ties share a place."""
    result: dict[str, int] = {}
    ranked = sorted(order, key=lambda s: scores[s])
    for i, seat in enumerate(ranked):
        if i and scores[seat] == scores[ranked[i - 1]]:
            result[seat] = result[ranked[i - 1]]
        else:
            result[seat] = i + 1
    return result
