"""A scoreboard opened while the engine thread is too busy to answer at once.

Seen in a whole-suite run beside two busy processes: 50 pages opened their live feed as the table
started, the engine thread answered none of them within a second, no state had been published
yet to fall back on, and every page got a 500 with a traceback in the log. A slow answer is now
a wait (and an engine that does not answer at all a 503 the page retries), never a 500.
"""

from __future__ import annotations

import io
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from referee.cli.table import Table
from referee.config import default_config
from referee.scoreboard.app import create_app

SEATS = ["Blue", "Red", "Green"]


@pytest.fixture
def slow_table(mock_factory: MockFactory, tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Table, dict[str, float]]]:
    """A table whose engine answers a snapshot only after `delay["s"]` seconds."""
    table = Table(default_config(SEATS), db=tmp_path / "referee.db", mock=True, no_speech=True,
                  out=io.StringIO(), auto=False)
    engine = table.start("spank-the-pig", {"doubles": "off"}, resume=False)
    delay = {"s": 0.0}
    real = engine.command

    def command(name: str, timeout: float = 5.0, **args: Any) -> Any:
        if name == "snapshot" and delay["s"] > 0:
            if delay["s"] > timeout:
                time.sleep(timeout)
                raise queue.Empty
            time.sleep(delay["s"])
        return real(name, timeout=timeout, **args)

    monkeypatch.setattr(engine, "command", command)
    try:
        yield table, delay
    finally:
        delay["s"] = 0.0
        table.close()


def test_a_page_opened_while_the_engine_is_slow_gets_the_table_once_it_answers(
        slow_table: tuple[Table, dict[str, float]]) -> None:
    table, delay = slow_table
    delay["s"] = 1.5  # longer than the first second the feed waits
    client = create_app(table).test_client()
    got: dict[str, Any] = {}

    def open_feed() -> None:
        resp = client.get("/api/events", buffered=False)
        got["status"] = resp.status_code
        got["first"] = next(resp.response)
        resp.close()

    opener = threading.Thread(target=open_feed)
    opener.start()
    opener.join(15)
    assert got["status"] == 200
    assert b"event: state" in got["first"] and b'"game":"spank-the-pig"' in got["first"]
