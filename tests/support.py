"""Helpers shared by the test modules: figures, the `referee` command, one-line errors, exports."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from referee.cli.table import Table
from referee.engine.loop import Engine
from referee.store.database import connect, export_lines

ROOT = Path(__file__).resolve().parent.parent


def figure(name: str, value: str) -> None:
    """A measured figure, printed even under pytest's capture (docs/reliability.md quotes them)."""
    sys.__stdout__.write(f"\nFIGURE {name}: {value}\n")
    sys.__stdout__.flush()


def one_line(message: str) -> bool:
    return bool(message) and "\n" not in message and "Traceback" not in message


def assert_refused_in_one_line(result: subprocess.CompletedProcess[str]) -> None:
    """Exit status 2 and one line on stderr, never a traceback."""
    assert result.returncode == 2, result.stderr[-2000:]
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def run_referee(*args: str, stdin: str | None = None, timeout: float = 60,
                env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """`referee ARGS` in a subprocess; a timeout is returned as exit status -9 (it was killed:
    subprocess.run kills the child before it raises)."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full = {k: v for k, v in full.items() if v is not None}
    try:
        return subprocess.run([sys.executable, "-m", "referee.cli.main", *args], input=stdin,
                              capture_output=True, text=True, timeout=timeout, env=full)
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return subprocess.CompletedProcess(args, -9, "", err + f"\n(still running after {timeout} s)")


def export(db: Path) -> list[str]:
    """A database's table log, as `referee export` prints it."""
    conn = connect(db, readonly=True)
    try:
        return list(export_lines(conn))
    finally:
        conn.close()


def end_window(engine: Engine, window_ms: int) -> None:
    """Move a live engine's clock past a race window, so a split round is decided now instead of
    racing the wall clock (tests give races long windows, so a loaded machine cannot close one
    before the test's presses land).

    The engine's time is the wall clock plus `offset_us` (what keeps a resumed game after its
    logged times); presses keep their edge times on it. The offset changes only between two
    commands, while the engine thread waits for the next item; the second command wakes it to
    find the window over."""
    engine.command("snapshot")  # every press sent so far is handled
    engine.offset_us += window_ms * 1000
    engine.command("snapshot")


def close_table(table: Table, window_ms: int) -> None:
    """Close a test's table without waiting out a long race window: `Table.close` gives an open
    race up to 5 s to be ruled (a clean stop), so a race the test left open is ended first."""
    engine = table.engine
    if engine is not None:
        engine.auto = False  # no new round from now on (as Table.close does first)
        # (the engine thread answers in order: a round it started before this is in the answer)
        if engine.command("snapshot")["phase"] in ("cadence", "race"):
            end_window(engine, window_ms)
    table.close()


def typed(game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Options written as `--option key=value` text ("72"), as the command line converts them:
    the harness's tables are set up in text; a log, the API and the rules take typed values
    (PRODUCT.md, "Table log")."""
    from referee.rules.declare import options_from_text
    from referee.rules.registry import rules_for

    return options_from_text(rules_for(game).known_options(), options, game)


def register_game(monkeypatch: Any, cls: type,
                  phrases: Mapping[str, list[str]] | None = None) -> None:
    """Register a game defined in the tests for this test only (as a package's entry point
    would for good), with its `phrases` added to the phrase table: the registry's direct
    registrations and the phrase table are restored afterwards."""
    from referee.rules import registry
    from referee.voice.phrases import ENGLISH

    monkeypatch.setattr(registry, "_direct", dict(registry._direct))
    registry.register(cls)
    for key, beats in (phrases or {}).items():
        monkeypatch.setitem(ENGLISH, key, beats)
