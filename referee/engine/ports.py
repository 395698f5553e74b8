"""The ports between the engine and its adapters, as Protocols: the composition root (`referee.cli`)
wires real or fake adapters to them, and nothing on either side names the other's classes. The
engine reaches the store and the voice only through these (an import-linter contract keeps it so;
the phrase table, `referee.voice.phrases`, is the language the pages speak too, not an adapter).
The scoreboard's own ports (a running table, a game) are in `referee.scoreboard.ports`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from referee.events import LogFull

if TYPE_CHECKING:
    from referee.events import Event, GameStart
    from referee.voice.phrases import Phrasebook

__all__ = ["Announcer", "Leds", "Listener", "LogFull", "TableLog"]

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


class Announcer(Protocol):
    """The referee's voice, as the engine uses it: every call returns at once (nothing on the
    engine thread waits for audio). The speech adapter (`referee.voice.speech`) and the printing
    one (`referee.voice.announce.PrintAnnouncer`) both fit it."""

    def learn(self, book: Phrasebook) -> None:
        """The words of the game about to be played: its own phrases (its calls, its deal...)
        and its unit, said beside the shared sentences from now on."""

    def cadence(self, key: str, params: dict[str, Any], tempo_ms: int) -> int:
        """Start calling the words of phrase `key` (a call a game declares) `tempo_ms` apart.
        Returns at once with the engine-clock time (µs) at which the last word (the go-word)
        sounds."""
        ...

    def say(self, key: str, params: dict[str, Any], *, interrupt: bool = False) -> None:
        """Say phrase `key` as soon as the voice is free (`interrupt`: cut a stale one short)."""

    def cut_calls(self) -> None:
        """Stop at once the call being said and every phrase still waiting (the game ended)."""

    def quiet_at(self) -> int | None:
        """When (µs, the cue's clock) everything asked so far will have been said; None while
        a phrase is still being rendered (its length is not known yet: ask again soon)."""

    def warm_table(self, seats: Sequence[str], said: Sequence[tuple[str, dict[str, Any]]] = (),
                   *, reasons: Sequence[str] = (),
                   first: Sequence[tuple[str, dict[str, Any]]] = ()) -> None:
        """Get ready to say every phrase a table with these seats can say ahead of time; the
        game's calls and the phrases said `first` (the deal) before the rest: the voice is not
        quiet until they are ready."""

    def describe(self) -> str:
        """One line for `referee doctor`: which output is in use."""
        ...

    def close(self) -> None: ...


class TableLog(Protocol):
    """Where the engine writes what happens (every event before it acts on it, and its marks)
    and reads a game back to resume it. A write that cannot be made raises `LogFull`."""

    def append(self, game_id: int, event: Event) -> int: ...

    def game(self, game_id: int) -> tuple[GameStart, bool] | None:
        """A game's `game` line and whether it was a practice game; None: no such game."""

    def events(self, game_id: int) -> Iterator[Event]:
        """A game's logged events, in the order they were written."""
        ...

    def marks(self, game_id: int, kind: str) -> list[Any]:
        """The values of a game's marks of one kind, in the order they were made."""
        ...

    def mark(self, game_id: int, kind: str, value: Any, *, durable: bool = True) -> None: ...

    def new_game(self, start: GameStart, *, practice: bool = False) -> int:
        """A new game's row (the real game after practice, the next game after the end)."""
        ...
