"""What a game declares, for the engine, the voice, the scoreboard and the command line to read.

A game's `Rules` class holds these small typed declarations; nothing outside the rules learns a
game's ways by name or by probing:
- `Option`: one option, with its kind (number, choice), unit, choices and a human label;
- `Fact`: one thing only eyes can see that the judge may give, with its kind, the judge panel's
  label, the question said aloud, and what the keypad's YES and NO mean;
- `Schedule`: how the live table calls rounds (the words' tempo, the pause after a ruling, a turn
  pace, a pass beat) and whether races are silent;
- `Call`: the call that starts the next round (a phrase key, and the seat it names if any);
- `UnitWords`: how the score is said (one, many, a loss, a gain).
Reasons are `referee.events.Reason` enums, declared by each game beside its rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple


class RulesError(ValueError):
    """Bad input to the rules (unknown seat, bad option, round that does not exist...)."""


def _words(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


# --------------------------------------------------------------------------------------------
# Options


OptionKind = Literal["number", "choice"]


@dataclass(frozen=True)
class Option:
    """One game option. `read` takes a typed value (JSON, TOML), or `k=v` text when told so
    (RulesError if bad).

    `kind` "number": a whole number from `lo` to `hi`, in `unit` (ms, µs, cards...);
    "choice": one of `choices` (text, or whole numbers). `default` None: the game decides.
    `practice_per_seat`: a practice game suggests this many per seat (a short deck).
    """

    name: str
    default: Any
    kind: OptionKind
    label: str
    help: str
    unit: str | None = None
    lo: int = 0
    hi: int = 0
    choices: tuple[str | int, ...] = ()
    labels: tuple[str, ...] = ()  # each choice in words, for the setup page ("Nobody loses")
    practice_per_seat: int | None = None

    @classmethod
    def number(cls, name: str, default: int | None, lo: int, hi: int, *, label: str, help: str,
               unit: str | None = None, practice_per_seat: int | None = None) -> Option:
        return cls(name, default, "number", label, help, unit, lo, hi,
                   practice_per_seat=practice_per_seat)

    @classmethod
    def choice(cls, name: str, default: str | int | None, choices: tuple[str | int, ...], *,
               label: str, help: str, labels: tuple[str, ...] = ()) -> Option:
        if labels and len(labels) != len(choices):
            raise ValueError(f"option {name!r}: one label per choice, {len(choices)} in all")
        return cls(name, default, "choice", label, help, choices=choices, labels=labels)

    def read(self, value: Any, *, text: bool = False) -> Any:
        """The option's value, checked. JSON and TOML values are typed: a number is a JSON
        integer (`"1000"` and `2500.5` are bad values); only with `text` (`--option k=v`) is a
        string converted ("36" -> 36)."""
        if text and isinstance(value, str):
            parsed = self._from_text(value.strip())
        else:
            parsed = self._number(value) if self.kind == "number" else self._choice(value)
        if parsed is None:
            raise RulesError(f"option {self.name}={value!r}: expected {self.expects()}")
        return parsed

    def expects(self) -> str:
        if self.kind == "number":
            return f"a whole number from {self.lo} to {self.hi}"
        if all(isinstance(c, int) for c in self.choices):
            return " or ".join(map(str, self.choices))
        return "one of " + ", ".join(map(str, self.choices))

    def _number(self, value: Any) -> int | None:
        if type(value) is not int or not self.lo <= value <= self.hi:
            return None  # bool, float and text are not whole numbers
        return value

    def _choice(self, value: Any) -> str | int | None:
        for choice in self.choices:
            if type(value) is type(choice) and value == choice:
                return choice
        return None

    def _from_text(self, value: str) -> str | int | None:
        if self.kind == "number":
            digits = value[1:] if value[:1] == "-" else value
            if not (digits.isascii() and digits.isdigit()):
                return None
            return self._number(int(value))
        return next((c for c in self.choices if str(c) == value), None)

    def to_json(self) -> dict[str, Any]:
        """The option as the setup page and the HTTP API describe it."""
        out: dict[str, Any] = {"name": self.name, "label": self.label, "help": self.help,
                               "kind": self.kind, "default": self.default, "unit": self.unit}
        if self.kind == "number":
            out["min"], out["max"] = self.lo, self.hi
            out["practice_per_seat"] = self.practice_per_seat
        else:
            out["choices"] = list(self.choices)
            out["choice_labels"] = list(self.labels) or [str(c) for c in self.choices]
        return out


def read_options(known: Mapping[str, Option], given: Mapping[str, Any], game: str
                 ) -> dict[str, Any]:
    """Validate typed `given` values (a log's, the API's, the config's) against `known`; every
    option gets a value (defaults filled in)."""
    check_names(known, given, game)
    return {name: opt.read(given[name]) if name in given else opt.default
            for name, opt in known.items()}


def options_from_text(known: Mapping[str, Option], given: Mapping[str, Any], game: str
                      ) -> dict[str, Any]:
    """The options given as `--option k=v` text, converted to their declared kinds (a value
    that is typed already is checked as it is); only the ones given."""
    check_names(known, given, game)
    return {name: known[name].read(value, text=True) for name, value in given.items()}


def check_names(known: Mapping[str, Option], given: Mapping[str, Any], game: str) -> None:
    """RulesError naming the first option `game` does not know."""
    for name in given:
        if name not in known:
            raise RulesError(
                f"unknown option {name!r} for {game}; known: {', '.join(sorted(known))}"
            )


# --------------------------------------------------------------------------------------------
# Facts


FactKind = Literal["count", "names", "flag", "seat"]


@dataclass(frozen=True)
class Fact:
    """One fact the judge may give for a round (a field of a `facts` line).

    `kind` "count": a whole number from 0 to `most` (the panel offers 0 to `shown`, the last as
    "shown or more"); "names": a list of names (the panel offers `choices`, (value, label) each);
    "flag": true or false (the panel's buttons say `answers`); "seat": a seat's name or null (who
    answered right; the panel's buttons say `answers` for the seat named). `yes` and `no` are what the judge
    keypad's YES and NO give. While a round waits for the judge, `question` is asked aloud and
    `ask` written on the pages; `asked` False: the referee never waits for it (the judge gives it
    unasked, as a correction).
    """

    name: str
    kind: FactKind
    label: str
    question: str
    ask: str
    yes: Any = True
    no: Any = False
    answers: tuple[str, str] = ("Yes", "No")
    most: int = 0
    shown: int = 0
    choices: tuple[tuple[str, str], ...] = ()
    what: str = ""  # what one item is called on the panel ("pig", "double")
    asked: bool = True

    def check(self, value: Any) -> None:
        """RulesError naming the value when it is not a value of this fact."""
        if self.kind == "flag":
            if not isinstance(value, bool):
                raise RulesError(f"{self.name} must be true or false, not {value!r}")
        elif self.kind == "seat":
            if value is not None and not (isinstance(value, str) and value):
                raise RulesError(f"{self.name} must be a seat's name or null, not {value!r}")
        elif self.kind == "count":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= self.most:
                raise RulesError(f"{self.name} must be a whole number from 0 up, not {value!r}")
        elif not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
            raise RulesError(f"{self.name} must be a list of {self.what or 'name'} names, "
                             f"not {value!r}")

    def to_json(self) -> dict[str, Any]:
        """The fact as the judge panel builds its buttons from it."""
        return {"name": self.name, "kind": self.kind, "label": self.label,
                "question": self.question, "ask": self.ask, "answers": list(self.answers),
                "most": self.most, "shown": self.shown, "what": self.what,
                "choices": [list(c) for c in self.choices], "asked": self.asked}


VOID = Fact("void", "flag", "Void", "does this round count?", "Void this round?",
            answers=("Void this round", "It counts"), asked=False)


def check_facts(declared: tuple[Fact, ...], values: Mapping[str, Any], game: str) -> None:
    """The one check of a `facts` line's values against the facts a game declares."""
    known = {f.name: f for f in declared}
    for key, value in values.items():
        if key not in known:
            raise RulesError(f"facts field {key!r} is not used in {game}; "
                             f"use {_words(list(known))}")
        known[key].check(value)


# --------------------------------------------------------------------------------------------
# Calling rounds


class Call(NamedTuple):
    """The call that starts the next round: the phrase key of its words (the last word is the
    go-word, the cue) and the seat it names, if any."""

    phrase: str
    seat: str | None = None


@dataclass(frozen=True)
class Schedule:
    """How the live table paces a game; it paces the table and changes no ruling."""

    tempo_ms: int = 500  # between the words of a call
    pause_ms: int = 4000  # from the end of a ruling's words to the next call
    turn_ms: int | None = None  # instead: a call every turn_ms after the previous cue
    beat_ms: int = 0  # a beat phrase this often while the game runs (0: none); never a cue
    beat: str | None = None  # the phrase key of the beat
    silent: bool = False  # say, light and show nothing while a race is open (it opens unseen)
    quiet_rounds: int | None = None  # a table this many rounds without a press pauses itself
    judge_starts: bool = False  # each round waits for the judge's "next" (panel, keypad YES)
    next_label: str = "Next round now"  # what the judge's "next" button says


# --------------------------------------------------------------------------------------------
# Saying the score


@dataclass(frozen=True)
class UnitWords:
    """How a game's score is said, in English: `one` and `many`, a count of its unit ("{n}
    life", "{n} lives"; {n} is the number in words); `loss` and `gain`, a change that is bad or
    good for its seat ("{count} lost", "{count} back"; {count} is the count, {n} the number).
    A ruling says its count as a loss or a gain by the score's direction; a standing score is
    said as what it counts (losses where fewer wins, gains where more wins)."""

    one: str
    many: str
    loss: str = "{count}"
    gain: str = "{count} back"
