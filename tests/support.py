"""Helpers shared by the test modules: figures, the `referee` command, one-line errors, exports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
