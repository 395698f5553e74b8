"""The `referee` command as a user runs it: real processes, real files, exit statuses."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REFEREE = [sys.executable, "-m", "referee.cli.main"]
SEED = "\n".join(json.dumps(x) for x in [
    {"type": "game", "game": "spank-the-pig", "seats": ["Blue", "Red", "Green", "Yellow"],
     "options": {"doubles": "buttons"}},
    {"type": "cue", "t_us": 1_000_000},
    *({"type": "press", "t_us": t, "seat": s, "button": "slap"} for t, s in
      [(1_150_000, "Green"), (1_180_000, "Red"), (1_210_000, "Yellow"), (1_260_000, "Blue")]),
    *({"type": "press", "t_us": t, "seat": s, "button": "double"} for t, s in
      [(1_300_000, "Blue"), (1_320_000, "Green"), (1_340_000, "Yellow"), (1_400_000, "Red")]),
    {"type": "penalty", "round": 1, "seat": "Blue", "count": 1, "reason": "slapped the hippo"},
]) + "\n"


def run(*args: str, stdin: str | None = None, env: dict[str, str] | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*REFEREE, *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_replay_prints_rulings_and_standings(tmp_path: Path) -> None:
    log = tmp_path / "seed.jsonl"
    log.write_text(SEED)
    result = run("replay", str(log))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert [(x["seat"], x["delta"], x["reason"]) for x in lines[:-1]] == [
        ("Blue", 1, "last to spank the pig"), ("Red", 1, "last to declare the double"),
        ("Blue", 1, "slapped the hippo")]
    assert lines[-1]["type"] == "standings"
    # every output line is exactly the spec's shape
    assert list(lines[0]) == ["type", "round", "seat", "delta", "reason", "margin_us"]
    assert sorted(lines[-1]["seats"][0]) == ["out", "place", "score", "seat"]


def test_replay_option_override_and_stdin() -> None:
    result = run("replay", "-", "--option", "doubles=off", stdin=SEED)
    assert result.returncode == 0
    assert "declare the double" not in result.stdout


@pytest.mark.parametrize(("content", "expected"), [
    ('{"type": "game", "game": "spank-the-pig", "seats": ["A", "B"]}\n{"type": "pres"}\n',
     "line 2: unknown type 'pres'"),
    ('{"type": "game", "game": "spank-the-pig", "seats": ["A", "B"]}\n{"type": "press", "t_us": 1, '
     '"seat": "A"}\n{"type": "cue", "t_us": "soon"}\n', "line 3: t_us must be a whole number"),
    ('{"type": "game", "game": "chess", "seats": ["A", "B"]}\n', "line 1: unknown game 'chess'"),
    ("\x00\x01binary", "line 1: not valid JSON"),
    ('{"type": "game", "game": "spank-the-pig", "seats": ["A", "B"]}\n{"type": "press", "t_us": 1, '
     '"seat": "A"', "line 2: not valid JSON"),
])
def test_bad_logs_are_one_line_and_exit_2(tmp_path: Path, content: str, expected: str) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text(content)
    result = run("replay", str(log))
    assert result.returncode == 2
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_bad_flags_are_one_line_and_exit_2(tmp_path: Path) -> None:
    for args, expected in [
        (["replay", str(tmp_path / "missing.jsonl")], "cannot read"),
        (["replay", "-", "--option", "tie_us"], "write it as key=value"),
        (["replay", "-", "--option", "tie_us=-5"], "option tie_us='-5'"),
        (["play", "spank-the-pig", "--mock", "--seats", "A", "--db", str(tmp_path / "x.db")],
         "for 2 to 7 seats, not 1"),
        (["play", "spank-the-pig", "--mock", "--seats", "A,A", "--db", str(tmp_path / "x.db")],
         "A"),
        (["play", "spank-the-pig", "--mock", "--option", "warp=9", "--db", str(tmp_path / "x.db"),
          "--no-web"], "unknown option 'warp'"),
        (["play", "chess"], "invalid choice"),
        (["export", "--db", str(tmp_path / "none.db")], "no database at"),
        (["play", "--config", str(tmp_path / "nope.toml")], "nope.toml"),
    ]:
        result = run(*args, stdin=SEED)
        assert result.returncode == 2, (args, result.stderr)
        assert expected in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_demo_plays_from_the_keyboard_and_export_replays_it(tmp_path: Path) -> None:
    """`referee demo` in a terminal: keys press the mocked buttons; rulings are printed."""
    db = tmp_path / "demo.db"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the demo, as a user starts it
        os.execvpe(sys.executable, [*REFEREE, "demo", "--no-speech", "--no-web", "--db", str(db),
                                    "--option", "tempo_ms=100", "--option", "pause_ms=300",
                                    "--option", "deck=8",
                                    # the race closes when all four have slapped, so a loaded
                                    # machine cannot end it before the keys arrive
                                    "--option", "doubles=off", "--option", "window_ms=60000"],
                    {**os.environ})
    seen = b""

    def read_until(text: bytes, timeout: float = 20, start: int = 0) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while text not in seen[start:]:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r}; screen: {seen.decode(errors='replace')[-800:]}"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                try:
                    seen += os.read(fd, 4096)
                except OSError:
                    break

    try:
        read_until(b"Keys:")
        read_until(b"when you're ready")
        time.sleep(0.2)
        assert b"PIG!" not in seen  # nothing is called before the table is ready
        def slap(key: bytes, seat: bytes) -> None:
            """One key, then its echo: the demo has read it (and stamped its press) before the
            next key is sent, so a loaded machine cannot read the four keys as one burst."""
            start = len(seen)
            os.write(fd, key)
            read_until(key + " → ".encode() + seat + b" slap", start=start)
            time.sleep(0.05)

        seats = (b"Blue", b"Red", b"Green", b"Yellow")
        for key, seat in zip((b"1", b"2", b"3", b"4"), seats, strict=True):
            slap(key, seat)  # every seat's slap: ready (not a game press)
        read_until(b"PIG!")
        time.sleep(0.3)
        for key, seat in zip((b"1", b"2", b"3", b"4"), seats, strict=True):
            slap(key, seat)  # Blue, Red, Green, Yellow slap in that order: Yellow is last
        read_until(b"Round 1: Yellow +1 (last to spank the pig")
        os.write(fd, b"x")
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:  # a failed step leaves no demo running (nor a zombie)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        os.close(fd)
    exported = run("export", "--db", str(db))
    assert exported.returncode == 0
    assert exported.stdout.splitlines()[0].startswith('{"type": "game", "game": "spank-the-pig"')
    replayed = run("replay", "-", stdin=exported.stdout)
    assert json.loads(replayed.stdout.splitlines()[0])["seat"] == "Yellow"


def test_ctrl_c_while_the_referee_is_still_loading_is_a_quiet_exit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the first moments (the imports take a noticeable moment on a Pi) ends `referee`
    with exit status 130, as Ctrl-C later does, never with a "KeyboardInterrupt" traceback. The
    signal is made to land inside the import, where a real Ctrl-C lands only by chance."""
    import importlib
    import importlib.abc

    from referee.cli import entry

    class CtrlCWhileLoading(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
            if name == "referee.cli.main":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "referee.cli.main", raising=False)
    monkeypatch.setattr(sys, "meta_path", [CtrlCWhileLoading(), *sys.meta_path])
    assert entry.main() == 130
    monkeypatch.setattr(sys, "meta_path", sys.meta_path[1:])
    loaded = importlib.import_module("referee.cli.main")  # the module `entry` will find

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(loaded, "build_parser", interrupted)  # and while the command is read
    monkeypatch.setattr(sys, "argv", ["referee", "replay", "-"])
    assert entry.main() == 130
