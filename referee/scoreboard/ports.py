"""The ports the scoreboard drives, as Protocols: a running table (`TablePort`, built by the
composition root in `referee.cli`) and its current game (`EnginePort`, the engine)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from referee.engine.ports import Listener

if TYPE_CHECKING:
    from referee.config import TableConfig
    from referee.engine.commands import EngineCommand
    from referee.rules.base import Rules
    from referee.store.database import Store

__all__ = ["EnginePort", "Listener", "TablePort"]


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
