"""The `referee` command and `python -m referee`: Ctrl-C while the program is still loading (its
imports take a noticeable moment on a Pi) ends it quietly with exit status 130, as Ctrl-C later
does, never with a traceback."""

from __future__ import annotations


def main() -> int:
    try:
        from referee.cli.main import main as run

        return run()
    except KeyboardInterrupt:
        return 130
