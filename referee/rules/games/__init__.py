"""The game files that ship inside the package, each played by name like a module's game.

Each `NAME.toml` here is a game file (docs/games.md); the entry point `NAME =
"referee.rules.games:NAME"` in the group `table_referee.games` registers it, and this module
compiles it when the registry asks for it. A shipped game's log names it and needs no declaration.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

__all__: list[str] = []


@cache
def _compiled(name: str) -> Any:
    from referee.rules.fromfile import compile_game
    from referee.rules.gamefile import decode

    source = resources.files(__name__).joinpath(f"{name}.toml")
    cls = compile_game(decode(source.read_bytes(), f"{name}.toml"), carried=False)
    cls.WORDS_BESIDE = str(source)  # type: ignore[attr-defined]  # its words beside it (lingo)
    return cls


def __getattr__(name: str) -> Any:
    """`referee.rules.games.snap`: the Rules class of snap.toml."""
    if name.startswith("_") or not resources.files(__name__).joinpath(f"{name}.toml").is_file():
        raise AttributeError(name)
    return _compiled(name)
