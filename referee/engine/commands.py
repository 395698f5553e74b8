"""What the pages, the terminal and the tests ask of the engine: small typed commands, each with
one handler on the engine thread (`Engine._handlers`), as a message bus takes its commands.

A command is sent with `Engine.command(Pause())` (or by its name, `Engine.command("pause")`,
which the HTTP API's routes and the tests use) and answered on the caller's thread.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass, field, fields
from typing import Any

from referee.events import Event


class EngineCommand:
    """A control action for the engine thread; `name` is how the API and the CLI call it."""

    name: str = ""


@dataclass(frozen=True)
class Pause(EngineCommand):
    name = "pause"


@dataclass(frozen=True)
class Resume(EngineCommand):
    """Idempotent: a table already playing plays on."""

    name = "resume"


@dataclass(frozen=True)
class Start(EngineCommand):
    """The judge starts play (the Ready step); idempotent too."""

    name = "start"


@dataclass(frozen=True)
class End(EngineCommand):
    """The judge ends the game: the leaders as they stand are the (co-)champions."""

    name = "end"


@dataclass(frozen=True)
class UndoLatest(EngineCommand):
    """The judge panel's UNDO: the latest change to the score, whatever made it, in any round
    (a judge action withdrawn, or a round ruled from presses alone voided)."""

    name = "undo"


@dataclass(frozen=True)
class NextGame(EngineCommand):
    name = "next_game"


@dataclass(frozen=True)
class NextRound(EngineCommand):
    """A table without its own rhythm (tests, a manual table): call the next round now."""

    name = "next_round"


@dataclass(frozen=True)
class SayStandings(EngineCommand):
    name = "standings"


@dataclass(frozen=True)
class Feed(EngineCommand):
    """A table-log event from the judge panel or a test (facts, penalty, undo, press)."""

    event: Event
    name = "feed"


@dataclass(frozen=True)
class Step(EngineCommand):
    """A simulated clock moved on (tests): act at the new time."""

    name = "step"


@dataclass(frozen=True)
class Wake(EngineCommand):
    """When the engine next acts by itself (tests on a simulated clock)."""

    name = "wake"


@dataclass(frozen=True)
class Snapshot(EngineCommand):
    """The table as the pages show it, read on the engine thread."""

    name = "snapshot"


@dataclass(frozen=True)
class Stop(EngineCommand):
    name = "stop"


@dataclass(frozen=True)
class PressNote(EngineCommand):
    """What a press of this seat's button would do now, in words (the terminal's echo)."""

    seat: str
    button: str
    name = "press_note"


COMMANDS: dict[str, type[EngineCommand]] = {
    cls.name: cls for cls in (Pause, Resume, Start, End, UndoLatest, NextGame, NextRound,
                              SayStandings, Feed, Step, Wake, Snapshot, Stop, PressNote)}


def parse(name: str, args: dict[str, Any]) -> EngineCommand:
    """The command called `name` with `args` (ValueError naming it when there is none)."""
    cls = COMMANDS.get(name)
    if cls is None:
        raise ValueError(f"unknown command {name!r}")
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    extra = set(args) - known
    if extra:
        raise ValueError(f"command {name!r} takes no {', '.join(sorted(extra))}")
    return cls(**args)


@dataclass(frozen=True)
class Request:
    """A command on the engine's queue, with where its answer goes."""

    command: EngineCommand
    reply: queue.SimpleQueue[Any] | None = field(default=None, compare=False)
