"""The ports between the engine and its adapters, as Protocols: the composition root (`referee.cli`)
wires real or fake adapters to them, and nothing on either side names the other's classes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from referee.config import TableConfig
    from referee.engine.commands import EngineCommand
    from referee.events import Event, GameStart
    from referee.rules.base import Rules
    from referee.store.database import Store

Listener = Callable[[str, dict[str, Any]], None]


class Leds(Protocol):
    """The seat LEDs of the button box, and its watch on buttons held down too long."""

    def blink(self, seat: str, times: int = 3, on_ms: int = 150) -> None: ...
    def led(self, seat: str, on: bool) -> None: ...
    def all_leds(self, on: bool) -> None: ...
    def cue_light(self, on_ms: int = 200) -> None:
        """Every seat LED on at once (the go-word's instant), off again after `on_ms`."""

    def next_hold_us(self) -> int | None:
        """When a button held down is next due to be reported (for the engine's sleep)."""

    def check_stuck(self, now_us: int) -> None:
        """Report buttons held too long (as `ButtonHeld` / `ButtonStuck` items to the engine's
        queue)."""


class TableLog(Protocol):
    """Where the engine writes what happens: every event before it acts on it, and its marks."""

    def append(self, game_id: int, event: Event) -> int: ...

    def mark(self, game_id: int, kind: str, value: Any, *, durable: bool = True) -> None: ...

    def new_game(self, start: GameStart, *, practice: bool = False) -> int:
        """A new game's row (the real game after practice, the next game after the end)."""
        ...


class EnginePort(Protocol):
    """A running game as the scoreboard drives it: its rules (to read), commands (to act)."""

    rules: Rules
    game_id: int

    def command(self, cmd: EngineCommand | str, timeout: float = 5.0, **args: Any) -> Any:
        """Run a command on the engine thread; its answer, or the exception it raised."""

    def subscribe(self, listener: Listener) -> None: ...


class TablePort(Protocol):
    """One running table as the scoreboard sees it: the store, the current engine, the setup
    actions, and the virtual button box (mock mode only)."""

    config: TableConfig
    pin: str
    mock: bool
    store: Store
    language: str  # the table's: the voice's and the pages' words

    @property
    def engine(self) -> EnginePort | None:
        """The game running now, if any (read-only here: only `start` replaces it)."""

    def subscribe(self, listener: Listener) -> None: ...

    def game_options(self, game: str, options: dict[str, Any],
                     config: TableConfig | None = None) -> dict[str, Any]: ...

    def start(self, game: str, options: dict[str, Any] | None = None, *, practice: bool = False,
              resume: bool = True, language: str | None = None) -> EnginePort: ...

    def reseat(self, seats: list[dict[str, Any]]) -> None: ...

    def health(self) -> dict[str, Any]:
        """Warnings for the players (a stalled speaker, untimed edges) and device counts."""

    def press(self, seat: str, button: str) -> None:
        """Press a virtual button (LookupError: no box open; ValueError: no such seat/button)."""
