"""A group's own reaction game, declared as data: the game file's format, decoded and checked.

A game file (TOML) declares a game from a small set of pieces (docs/games.md has every key):
- `[round]`: how a round starts (`start`: a cadence, a turn call, or the judge's "next"), the call's
  words (the last is the go-word, the cue), its tempo, the race window, which buttons race, and
  what a press before the go-word is (`early`: ignored, a wrong press, or a lock-out);
- `[cards]`: a deck dealt to the seats and a centre pile (turn games): the score is the cards held;
- `[press]`: what the first right press, the last right press and the first wrong press earn;
- `[judge]`: the fact only eyes can see (a flag: consensus, else the judge's question; or the
  answer of the seat named, which the judge marks right or wrong);
- `[end]`: how many rounds (a number or an option), or the end a deck game has;
- `[options.NAME]`: the game's own whole-number options; `quiet`: the quiet threshold or "none".

msgspec decodes the file into these typed structures in one pass; `check` adds what a type cannot
say (an effect that needs a deck, an option that is not declared). Every refusal is one line that
names the key and what it must be (`GameFileError`). `Declaration.to_builtins` is the declaration
as the `game` line of a log carries it, so the log replays on its own.
"""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from referee.rules.declare import RulesError
from referee.wire import explain, words

__all__ = ["Declaration", "GameFileError", "decode", "from_builtins", "load", "parse_effect"]

MAX_BYTES = 64 * 1024  # a game file is a page of text

Name = Annotated[str, Meta(pattern=r"^[a-z][a-z0-9-]{1,29}$", extra_json_schema={"examples": ["snap"]})]
Text = Annotated[str, Meta(min_length=1, max_length=200, pattern=r"\S")]
Word = Annotated[str, Meta(min_length=1, max_length=40, pattern=r"\S")]
OptionName = Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_]{1,29}$",
                                 extra_json_schema={"examples": ["points"]})]
Ms = Annotated[int, Meta(ge=0, le=600_000)]
Count = Annotated[int, Meta(ge=0, le=100_000)]


class OptionSpec(Struct, forbid_unknown_fields=True, kw_only=True):
    """One whole-number option of the game (`[options.NAME]`)."""

    default: Count
    min: Count = 0
    max: Count = 100_000
    label: Text
    help: Text = "an option of this game"
    unit: Word | None = None


class RoundSpec(Struct, forbid_unknown_fields=True, kw_only=True):
    """How a round starts and what races in it (`[round]`)."""

    start: Literal["cadence", "turn", "judge"]
    call: Annotated[list[Text], Meta(min_length=1, max_length=6)]
    tempo_ms: Annotated[int, Meta(ge=50, le=10_000)] = 500
    window_ms: Annotated[int, Meta(ge=100, le=60_000)] = 3000
    pace_ms: Annotated[int, Meta(ge=200, le=60_000)] = 4000
    pause_ms: Ms = 4000
    buttons: Annotated[list[Literal["slap", "double"]], Meta(min_length=1, max_length=2)] = \
        msgspec.field(default_factory=lambda: ["slap"])
    early: Literal["ignore", "wrong", "lock-out"] = "ignore"
    early_says: Text = "pressed early"
    next: Word = "Next round"


class CardsSpec(Struct, forbid_unknown_fields=True, kw_only=True):
    """A deck dealt to the seats and a centre pile (`[cards]`, turn games)."""

    deck: Annotated[int, Meta(ge=2, le=520)] = 52
    first_card_can_match: bool = False
    deal: Text = "Deal all the cards face down, as evenly as they go."


class Earn(Struct, forbid_unknown_fields=True, kw_only=True):
    """What one kind of press earns, and the reason said with it."""

    earns: Text = "nothing"
    says: Text = "pressed"


class PressSpec(Struct, forbid_unknown_fields=True, kw_only=True):
    """What the first right press, the last right press and the first wrong press earn."""

    first_right: Earn = msgspec.field(default_factory=Earn)
    last_right: Earn = msgspec.field(default_factory=Earn)
    first_wrong: Earn = msgspec.field(default_factory=Earn)


class JudgeSpec(Struct, forbid_unknown_fields=True, kw_only=True):
    """The fact only eyes can see, and how the referee gets it (`[judge]`)."""

    mode: Literal["flag", "answer"] = "flag"
    fact: Annotated[str, Meta(pattern=r"^[a-z][a-z_]{0,19}$")]
    label: Text
    question: Text
    answers: Annotated[list[Word], Meta(min_length=2, max_length=2)] = \
        msgspec.field(default_factory=lambda: ["Yes", "No"])
    consensus: Literal["all-or-none", "judge"] = "all-or-none"
    named: Text = "buzzed first"  # answer: what the first seat named did
    named_next: Text = "answers next"  # answer: the seat named after a wrong answer


class EndSpec(Struct, forbid_unknown_fields=True, kw_only=True):
    """When the game ends (`[end]`); the judge may always end it early."""

    rounds: Count | OptionName | None = None  # a number, an option's name, or no limit
    one_holds_all: bool = False  # cards: the game ends when one seat holds every card


class Declaration(Struct, forbid_unknown_fields=True, kw_only=True):
    """A whole game file."""

    name: Name
    title: Text
    seats: Annotated[list[Annotated[int, Meta(ge=2, le=8)]], Meta(min_length=2, max_length=2)]
    unit: Annotated[list[Word], Meta(min_length=2, max_length=2)]
    more_wins: bool
    intro: Text | None = None
    quiet: Annotated[int, Meta(ge=2, le=10_000)] | Literal["none"] = "none"
    round: RoundSpec
    cards: CardsSpec | None = None
    press: PressSpec = msgspec.field(default_factory=PressSpec)
    judge: JudgeSpec
    end: EndSpec = msgspec.field(default_factory=EndSpec)
    options: dict[OptionName, OptionSpec] = {}

    def to_builtins(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


class GameFileError(RulesError):
    """A game file that cannot be played: one line naming the key and the fix."""


CARD_EFFECTS = ("take-pile", "give-flipper", "give-each", "to-pile")
_AMOUNT = re.compile(r"^(gain|lose) ([0-9]{1,6}|[a-z][a-z0-9_]{1,29})$")
RESERVED = ("tie_us", "pause_ms", "window_ms", "tempo_ms", "turn_ms", "early_ms")


def _fields(text: str) -> set[str]:
    """The {fillers} of a phrase ("{seat}," → {"seat"}); a stray brace is no filler."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}
    except ValueError:
        return {"{"}


def parse_effect(text: str) -> tuple[str, int | str]:
    """("nothing", 0), ("take-pile", 0)..., or ("gain"/"lose", a number or an option's name)."""
    if text == "nothing" or text in CARD_EFFECTS:
        return text, 0
    found = _AMOUNT.match(text)
    if found is None:
        raise ValueError(text)
    amount = found[2]
    return found[1], int(amount) if amount.isdigit() else amount


def load(path: str | Path) -> Declaration:
    """Read and check a game file; GameFileError names the file, the key and the fix."""
    where = Path(path)
    try:
        data = where.read_bytes()[:MAX_BYTES + 1]
    except OSError as exc:
        raise GameFileError(f"game file {str(where)!r} cannot be read ({exc.strerror}); "
                            f"give the path of a .toml game file") from None
    return decode(data, where.name)


def decode(data: bytes, name: str = "game file") -> Declaration:
    if len(data) > MAX_BYTES:
        raise GameFileError(f"{name}: longer than {MAX_BYTES} bytes; a game file is a page of text")
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise GameFileError(f"{name}: not UTF-8 text; save it as UTF-8") from None
    try:
        raw = msgspec.toml.decode(text.encode())
    except msgspec.DecodeError as exc:
        raise GameFileError(f"{name}: not valid TOML ({exc}); fix that line") from None
    return _checked(raw, name)


def from_builtins(raw: Any, name: str = "the game line's declaration") -> Declaration:
    """A declaration as a log's game line carries it (plain JSON values)."""
    return _checked(raw, name)


def _checked(raw: Any, name: str) -> Declaration:
    try:
        decl = msgspec.convert(raw, Declaration, strict=True)
    except msgspec.ValidationError as exc:
        raise GameFileError(f"{name}: {_keyed(explain(exc, Declaration, raw))}") from None
    problem = _problem(decl)
    if problem:
        raise GameFileError(f"{name}: {problem}")
    return decl


def _keyed(message: str) -> str:
    """msgspec's line in game-file words: a key, not a field."""
    return message.replace("unknown field", "unknown key").replace("missing field", "missing key")


def _problem(d: Declaration) -> str:
    """What the types cannot say: the pieces must fit together (one line, or "")."""
    lo, hi = d.seats
    if lo > hi:
        return f"seats = [{lo}, {hi}]: the fewest comes first, e.g. [{hi}, {lo}]"
    for key, spec in d.options.items():
        if key in RESERVED:
            return f"options.{key}: every game has {key} already; name the option otherwise"
        if not spec.min <= spec.default <= spec.max:
            return f"options.{key}.default = {spec.default}: must be from min {spec.min} to max " \
                   f"{spec.max}"
    for key, text in (("intro", d.intro or ""), *(("round.call", w) for w in d.round.call),
                      *((("cards.deal", d.cards.deal),) if d.cards else ())):
        seat = {"seat"} if key in ("round.call", "cards.deal") else set()
        unknown = sorted(_fields(text) - set(d.options) - seat)
        if unknown:
            return f"{key}: {{{unknown[0]}}} is not an option of this game; declare " \
                   f"[options.{unknown[0]}] or take it out"
    start = d.round.start
    if start == "turn" and not any("{seat}" in w for w in d.round.call):
        return 'round.call: a turn call names the flipper; put "{seat}" in a word, ' \
               'e.g. ["{seat},", "flip!"]'
    if start != "turn" and any("{seat}" in w for w in d.round.call):
        return 'round.call: only a turn call names a seat; take "{seat}" out'
    if start == "turn" and d.cards is None:
        return "cards: a turn game flips a deck; add a [cards] table (deck = 52)"
    if start != "turn" and d.cards is not None:
        return 'cards: a deck is flipped in turns; set round.start = "turn" or remove [cards]'
    if start == "judge" and len(d.round.call) < 2:
        return 'round.call: a judge-started round says a word before the go-word, e.g. ' \
               '["Next question.", "Buzzers!"]'
    if d.judge.mode == "answer" and d.cards is not None:
        return 'judge.mode = "answer" marks a named seat right or wrong; a deck game uses "flag"'
    if d.judge.fact == "void":
        return 'judge.fact = "void": every game has that fact; name it otherwise'
    said = [d.press.first_right.says, d.press.last_right.says, d.press.first_wrong.says,
            d.round.early_says, d.judge.named, d.judge.named_next, "given a card"]
    if len(set(said)) != len(said):
        return "press.*.says, round.early_says, judge.named and judge.named_next: each reason " \
               "is said differently (and none is \"given a card\")"
    for which in ("first_right", "last_right", "first_wrong"):
        earns = getattr(d.press, which).earns
        try:
            kind, amount = parse_effect(earns)
        except ValueError:
            return (f"press.{which}.earns = {earns!r}: use \"nothing\", \"gain N\", \"lose N\" "
                    f"(N a number or an option's name), or with [cards] {words(list(CARD_EFFECTS))}")
        if kind in CARD_EFFECTS and d.cards is None:
            return f"press.{which}.earns = {earns!r} moves cards; add a [cards] table or earn " \
                   f"\"gain N\" / \"lose N\""
        if kind in ("gain", "lose") and d.cards is not None:
            return f"press.{which}.earns = {earns!r}: with [cards] the score is the cards held; " \
                   f"use {words(list(CARD_EFFECTS))} or \"nothing\""
        if isinstance(amount, str) and amount not in d.options:
            return f"press.{which}.earns = {earns!r}: no option {amount!r}; declare " \
                   f"[options.{amount}] or give a number"
        if which == "last_right" and kind != "nothing" and d.judge.mode == "answer":
            return "press.last_right: the answer mode names seats in turn; earn \"nothing\""
        if kind == "give-flipper" and start != "turn":
            return f"press.{which}.earns = \"give-flipper\": only a turn game has a flipper"
    rounds = d.end.rounds
    if isinstance(rounds, str) and rounds not in d.options:
        return f"end.rounds = {rounds!r}: no option of that name; declare [options.{rounds}] " \
               f"or give a number"
    if d.end.one_holds_all and d.cards is None:
        return "end.one_holds_all needs a deck; add a [cards] table"
    if rounds is None and not d.end.one_holds_all:
        return "end: say when the game ends: rounds = N (or an option's name), or with [cards] " \
               "one_holds_all = true"
    if d.round.early != "ignore" and start == "turn":
        return 'round.early: a turn call has no early window; use "ignore"'
    return ""
