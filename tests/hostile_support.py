"""What the issue-16 test files share: waiting, a free port, the one-line-error check."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referee.cli.table import Table
    from referee.scoreboard.app import WebServer

REFEREE = [sys.executable, "-m", "referee.cli.main"]
PIN = "482913"
SEATS = ["Blue", "Red", "Green", "Yellow"]


def wait_for(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The process failed as a user mistake should: exit 2, one printable line, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-300:], proc.stderr[-1500:])
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert all(c.isprintable() for c in lines[0]), lines[0]  # no raw ESC/NUL on the console
    return lines[0]


@contextmanager
def served_table(db: Path, options: dict[str, Any]) -> Iterator[tuple[Table, WebServer]]:
    """A real Table on mocked pins (a spank-the-pig game in its Ready step) behind the real
    waitress server on 127.0.0.1, on a free port."""
    from referee.cli.table import Table
    from referee.config import default_config
    from referee.scoreboard.app import serve_in_thread

    table = Table(default_config(SEATS), db=db, mock=True, no_speech=True, pin=PIN,
                  out=io.StringIO(), auto=False)
    table.start("spank-the-pig", options, resume=False)
    server = serve_in_thread(table, "127.0.0.1", 0)
    try:
        yield table, server
    finally:
        server.close()
        table.close()
