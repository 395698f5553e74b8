"""The HTTP API's messages, each declared once: what a request may send and what an answer holds.

The server decodes every request body with these Structs (`decode`), and `/api/openapi.json` is
generated from the very same classes (`referee.scoreboard.openapi`), so the document cannot say
anything the server does not do. Request bodies refuse unknown fields (a guest's typo is a 400 that
names it); answers list every field the server sends. The message shape is declared here; what a
game makes of the values (which facts it takes, its options, its seats) its rules decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from referee.events import AwaitingLine, RulingLine, SeatScore, StandingsLine
from referee.rules.declare import Fact
from referee.rules.registry import facts_by_game
from referee.wire import explain, not_json, plain, short, words

MAX_TEXT = 200
B = TypeVar("B", bound=Struct)


class BodyError(ValueError):
    """A request body the declarations refuse; the message is one line naming the field."""


NON_BLANK = Meta(min_length=1, pattern=r"\S")  # a text with something in it, not only spaces
SeatText = Annotated[str, NON_BLANK, Meta(max_length=40)]
NameText = Annotated[str, NON_BLANK, Meta(max_length=24)]
ReasonText = Annotated[str, NON_BLANK, Meta(max_length=MAX_TEXT)]
RoundNumber = Annotated[int, Meta(ge=1, le=1_000_000, description="rounds count from 1")]
Pin = Annotated[int, Meta(ge=0, le=27, description="a BCM pin number")]
Colour = Annotated[str, Meta(pattern="^#[0-9a-fA-F]{6}$", examples=["#1f6feb"])]
OptionValue = Annotated[str, Meta(max_length=40)] | int | bool

# -- requests ----------------------------------------------------------------------------------

MAX_NAMES = 12  # names in one fact (the doubles showing...)


def fact_type(fact: Fact) -> Any:
    """The JSON shape of one declared fact: a count, a list of names, a seat, or a flag."""
    if fact.kind == "count":
        return Annotated[int, Meta(ge=0, le=fact.most, description=fact.label)]
    if fact.kind == "names":
        return Annotated[list[SeatText], Meta(max_length=MAX_NAMES, description=fact.label)]
    if fact.kind == "seat":  # a seat's name, or null: nobody
        return Annotated[SeatText | None, Meta(description=fact.label)]
    return Annotated[bool, Meta(description=fact.label)]


def fact_types(declared: Sequence[Fact] | None = None) -> dict[str, Any]:
    """The facts a judge may give in the game in play, as it declares them (`declared`: its
    `Rules.facts()`). None, no game in play (and the API's document): any game's, each name
    taking whatever kinds the games give it (one game's `match` may be a flag, another's a
    count); the game in play decodes a body against its own."""
    if declared is not None:
        return {fact.name: fact_type(fact) for fact in declared}
    kinds: dict[str, dict[str, Fact]] = {}
    for facts in facts_by_game().values():
        for fact in facts:
            seen = kinds.setdefault(fact.name, {}).setdefault(fact.kind, fact)
            if fact.most > seen.most:  # counts of one name: the widest
                kinds[fact.name][fact.kind] = fact
    out: dict[str, Any] = {}
    for name, by_kind in kinds.items():
        shapes = [fact_type(f) for f in by_kind.values()]
        union = shapes[0]
        for shape in shapes[1:]:
            union = union | shape
        out[name] = union
    return out


_FACTS: dict[str, type[Struct]] = {}


def facts_body(declared: Sequence[Fact] | None = None) -> type[Struct]:
    """The `Facts` body of the game in play (`declared`: its facts), or of any game (None); each
    set of facts gets a body of its own (a game registered later, as a test's own game is)."""
    types = fact_types(declared)
    key = repr(sorted(types.items()))
    found = _FACTS.get(key)
    if found is None:
        found = _FACTS[key] = msgspec.defstruct(
            "Facts",
            [("round", RoundNumber),
             *((name, kind | UnsetType, UNSET) for name, kind in types.items())],
            namespace={"__post_init__": _some_fact, "__doc__": "What the judge saw in a round; "
                       "give at least one fact. A later one corrects."},
            forbid_unknown_fields=True, kw_only=True, module=__name__)
    return found


def fact_values(body: Struct) -> dict[str, Any]:
    """The facts sent in a `Facts` body; the names in a list of names are trimmed."""
    sent = {name: getattr(body, name) for name in body.__struct_fields__ if name != "round"}
    return {name: [v.strip() for v in value] if isinstance(value, list) else value
            for name, value in sent.items() if value is not UNSET}


def _some_fact(body: Struct) -> None:
    if not fact_values(body):
        names = [name for name in body.__struct_fields__ if name != "round"]
        raise ValueError(f"name at least one fact: {words(names)}")


class Penalty(Struct, forbid_unknown_fields=True, kw_only=True):
    """A judge's penalty, in the game's own unit, with the reason said aloud."""

    round: RoundNumber
    seat: SeatText
    count: Annotated[int, Meta(ge=1, le=20)] = 1
    reason: ReasonText = "judge's penalty"


class Empty(Struct, forbid_unknown_fields=True):
    """No body, or an empty object."""


class PairApprove(Struct, forbid_unknown_fields=True, kw_only=True):
    """The code a device waiting to pair shows (the box's own screen approves it)."""

    code: Annotated[str, Meta(pattern="^[0-9]{4}$", examples=["4821"],
                              description="the device's 4-digit code")]


class SeatSetup(Struct, forbid_unknown_fields=True, kw_only=True):
    """One seat as the setup page sends it; a pin left out keeps the seat's default pin."""

    name: NameText
    colour: Colour | None = None
    slap: Annotated[Pin | None, Meta(description="BCM pin of the slap button")] | UnsetType = UNSET
    double: Annotated[Pin | None, Meta(
        description="BCM pin of the double button (null: none)")] | UnsetType = UNSET


class NewGame(Struct, forbid_unknown_fields=True, kw_only=True):
    """A new game: which game, the seats (leave out to keep them) and the game's options."""

    game: Annotated[SeatText, Meta(description="the game's log name")]
    seats: Annotated[list[SeatSetup], Meta(
        min_length=2, max_length=8, description="in seat order; leave out to keep the seats")
    ] | UnsetType = UNSET
    options: dict[Annotated[str, Meta(max_length=40)], OptionValue] = {}
    practice: Annotated[bool, Meta(description="ruled and announced, kept out of history")] = False
    language: Annotated[str, Meta(pattern="^[a-z]{2}$", examples=["de"], description=(
        "the table's language from now on (en, de, es): a table setting, never logged"))
    ] | UnsetType = UNSET


class Press(Struct, forbid_unknown_fields=True, kw_only=True):
    """A press of a virtual button: a seat's slap or double, or the judge's yes, no or undo."""

    seat: Annotated[SeatText, Meta(description="a seat, or judge")]
    button: Literal["slap", "double", "yes", "no", "undo"] = "slap"




def requests() -> tuple[type[Struct], ...]:
    """Every request body the API declares."""
    return (facts_body(), Penalty, Empty, SeatSetup, NewGame, Press, PairApprove)


# What JSON Schema can say of a body but a Struct's fields cannot: Facts' `__post_init__` check.
SCHEMA_EXTRAS: dict[str, dict[str, Any]] = {"Facts": {"minProperties": 2}}

# -- answers -----------------------------------------------------------------------------------


class Paired(Struct):
    """A device's pairing: its code to show and its token (kept by the device, sent as
    `X-Table-Token`), or where its request stands."""

    state: Annotated[str, Meta(description="waiting | paired | unknown")] = "waiting"
    code: str = ""
    token: str = ""


class Error(Struct):
    """Every refusal: one line naming the problem and the fix."""

    error: str


class RulingWords(Struct, kw_only=True):
    """A ruling line (or question) in the words the referee says it, beside the line itself."""

    said: Annotated[str, Meta(description="the sentence said aloud")] | UnsetType = UNSET
    what: Annotated[str, Meta(
        description="the part shown beside the seat and its count")] | UnsetType = UNSET
    question: Annotated[str, Meta(description="the judge's question, as asked aloud")] \
        | UnsetType = UNSET


class EarlierRound(Struct):
    round: int
    rulings: list[RulingLine]
    rulings_said: list[RulingWords] | UnsetType = UNSET


class Box(Struct):
    """The virtual button box: which seats have a double button, whether judge keys exist."""

    double: list[str]
    judge_keys: bool


class Health(Struct, kw_only=True):
    """What the status line shows besides the game: warnings a player must see, and the counts
    `referee doctor` shows for the sound device and the button capture."""

    warnings: list[str]
    audio: dict[str, Any] = {}
    capture: dict[str, Any] = {}


class State(Struct, forbid_unknown_fields=True, kw_only=True):
    """The whole table; the same object every `state` event carries."""

    game: Annotated[str | None, Meta(description="the game's log name")]
    title: str | None
    game_id: int | None
    practice: bool
    phase: Literal["setup", "ready", "count-in", "cadence", "race", "awaiting", "ruled", "paused",
                   "over"]
    round: Annotated[int, Meta(ge=0)]
    rounds: Annotated[int | None, Meta(description="regular rounds, if known")]
    unit: Annotated[str | None, Meta(description="what the game's scores count")]
    seats: Annotated[list[SeatScore], Meta(description="standings order")]
    seat_order: list[str]
    rulings: Annotated[list[RulingLine], Meta(description="the latest round's rulings")]
    rulings_said: Annotated[list[RulingWords], Meta(
        description="each of `rulings` in the words the referee says it")] | UnsetType = UNSET
    cut_by_end: Annotated[bool, Meta(
        description="the judge ended the game while the latest round raced: never ruled")] = False
    reactions_us: Annotated[dict[str, int], Meta(
        description="seat → reaction time in the latest round, µs")]
    early_us: Annotated[dict[str, int], Meta(
        description="seat → how long before the go-word it pressed early, µs")] | UnsetType = UNSET
    late_us: Annotated[dict[str, int], Meta(
        description="seat → its press after the latest round was ruled, which changes nothing, "
                    "µs after the round's start")] | UnsetType = UNSET
    racing: Annotated[list[str], Meta(
        description="the seats that raced in the latest round")] | UnsetType = UNSET
    turn: Annotated[str | None, Meta(
        description="the seat whose turn it is, when calls name one")] | UnsetType = UNSET
    awaiting: AwaitingLine | None
    question: Annotated[str | None, Meta(
        description="the judge's question, in the words said aloud")] | UnsetType = UNSET
    final: bool
    winners: list[str]
    options: dict[str, Any]
    said: Annotated[str, Meta(description="the last phrase said aloud")]
    call: Annotated[str, Meta(description="the words of the latest call")] | UnsetType = UNSET
    cue_word: Annotated[str, Meta(
        description="the latest call's go-word (the page flashes it at the cue)")] | UnsetType = UNSET
    ready: Annotated[list[str], Meta(
        description="seats that pressed ready (Ready step, or after the end)")] | UnsetType = UNSET
    stuck: list[str]
    words: Annotated[dict[str, Any], Meta(
        description="the game's own words: unit, thing, act, letters")] | UnsetType = UNSET
    earlier: Annotated[list[EarlierRound], Meta(
        description="the rounds before the latest, up to five")] | UnsetType = UNSET
    colours: dict[str, str]
    facts: Annotated[list[str], Meta(description="facts the judge may give in this game")]
    fact_info: Annotated[dict[str, dict[str, Any]], Meta(
        description="fact name → its declaration: kind, label, question, answers")]
    buttons: Annotated[list[str], Meta(description="the buttons the game's races read")]
    quiet: Annotated[bool, Meta(description="the game hides its races")]
    mock: bool
    box: Box
    storage_full: Annotated[str, Meta(
        description="the one line said when the log could not grow; empty while it can")]
    pin_alert: Annotated[str, Meta(description="someone is guessing the PIN: what the pages say")]
    health: Health
    pairing: Annotated[list[str], Meta(description=(
        "the codes of the devices waiting to pair, oldest first: the keypad's YES lets the one "
        "in while exactly one waits"))] = []


class Reactions(Struct):
    count: int
    median_ms: float | None
    best_ms: float | None


class PlayerStats(Struct):
    name: str
    rating: int
    games: int
    wins: float
    reactions: Reactions


class GameSummary(Struct):
    id: int
    game: str
    title: str
    seats: list[str]
    created: Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
    rounds: int
    final: bool
    ended: bool
    standings: list[SeatScore]
    winners: list[str]
    error: str | None
    demo: Annotated[bool, Meta(
        description="a `referee demo` game: listed, not rated")] = False
    date_approximate: Annotated[bool, Meta(
        description="the box's clock was behind the last game's date when this one began "
                    "(started offline, no hardware clock): `created` is that date, a lower "
                    "bound")] = False


class Setup(Struct):
    """What a game can be set up with, as the games declare it, and this table's seats."""

    games: Annotated[list[dict[str, Any]], Meta(description=(
        "name, title, seats [fewest, most], unit, unit_words [one, many], buttons, options "
        "(name, label, help, kind number|choice, default, unit, min/max or choices) and facts "
        "(name, kind count|names|flag|seat, label, question, ask, answers)"))]
    seats: list[dict[str, Any]]
    game: Annotated[str, Meta(description="the game set up now")]
    language: Annotated[str, Meta(description="the table's language (en, de, es)")]
    languages: Annotated[list[list[str]], Meta(
        description="the languages shipped, each [code, its own name]")]


class Games(Struct):
    """Past games (practice games excluded), newest first."""

    games: list[GameSummary]


class Stats(Struct):
    """Players, best rating first."""

    games: int
    players: list[PlayerStats]


ANSWERS: tuple[type[Struct], ...] = (Error, State, StandingsLine, Setup, Games, Stats, Paired)

# -- decoding ----------------------------------------------------------------------------------

_DECODERS: dict[type[Struct], msgspec.json.Decoder[Any]] = {}


def decode(shape: type[B], raw: bytes) -> B:
    """A request body (bytes as sent) as its declared Struct; BodyError names the problem.

    An empty body is an empty object, so actions without fields need no body at all."""
    decoder = _DECODERS.get(shape)
    if decoder is None:
        decoder = _DECODERS[shape] = msgspec.json.Decoder(shape)
    try:
        return decoder.decode(raw if raw.strip() else b"{}")  # type: ignore[no-any-return]
    except msgspec.ValidationError as exc:
        given = plain(raw)
        if not isinstance(given, dict):
            shown = "" if given is None else f", not {short(given)}"
            raise BodyError(f"the body must be a JSON object, e.g. {{\"round\": 1}}{shown}") from None
        raise BodyError(explain(exc, shape, given)) from None
    except msgspec.DecodeError as exc:  # after ValidationError, which is a kind of DecodeError
        reason = not_json(raw, exc)
        raise BodyError(reason if not reason.startswith("not valid JSON") else
                        "the body is not valid JSON; send a JSON object") from None
    except RecursionError:
        raise BodyError("the body is nested too deeply; send a flat JSON object") from None

