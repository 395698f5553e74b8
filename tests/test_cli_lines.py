"""Every error line names the fix, every flag is explained, and output lines never run together
(issue 14). The real `referee` entry point, in process."""

from __future__ import annotations

import argparse
import io
import threading
from pathlib import Path
from typing import Any

import pytest

from referee.cli.common import Lines
from referee.cli.main import build_parser, main
from referee.cli.table import Table
from referee.config import ConfigError, default_config, load_config


@pytest.mark.parametrize("pin", ["12", "abcd", "123456789", "12 34"])
def test_a_bad_pin_is_refused_with_the_rule(pin: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "spank-the-pig", "--mock", "--no-web", "--pin", pin]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "is not a PIN of 4 to 8 digits; e.g. --pin 483920" in err and pin in err


@pytest.mark.parametrize("pin", ["1234", "00000000"])
def test_a_good_pin_is_taken(pin: str) -> None:
    from referee.config import check_pin

    assert check_pin(build_parser().parse_args(["play", "--pin", pin]).pin) == pin


def test_a_bad_pin_in_the_config_names_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('[table]\npin = "12"\n\n[[seats]]\nname = "Blue"\nslap = 4\n\n'
                    '[[seats]]\nname = "Red"\nslap = 17\n')
    with pytest.raises(ConfigError, match=r"'12' is not a PIN of 4 to 8 digits"):
        load_config(path)


def test_speech_render_to_a_folder_it_cannot_write_names_the_fix(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["speech", "render", "/proc/nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("referee speech: cannot write the phrases to '/proc/nope': No such file or "
                   "directory; give a folder you may write to (it is made if missing), e.g. "
                   "referee speech render ./phrases")


def test_replay_names_the_missing_field_and_the_fix(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "game.jsonl"
    log.write_text('{"type": "game", "game": "pig", "seats": ["A", "B", "C"]}\n'
                   '{"type": "press", "seat": "A"}\n')
    assert main(["replay", str(log)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("line 2: missing field 't_us': add it, a whole number ≥ 0")


@pytest.mark.parametrize("command", ["play", "demo", "replay", "export", "buttons", "doctor"])
def test_every_flag_of_a_command_is_explained(command: str) -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    child = sub.choices[command]
    unexplained = [a.option_strings or a.dest for a in child._actions
                   if a.help != argparse.SUPPRESS and not (a.help or "").strip()]
    assert not unexplained, f"referee {command} --help leaves {unexplained} unexplained"
    if command in ("replay", "export", "buttons", "doctor"):
        assert child.description, f"referee {command} --help says nothing of what it does"


class Writes(io.StringIO):
    """A stream that remembers each write() it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            self.writes.append(text)
        return super().write(text)


def test_lines_from_two_threads_never_run_together() -> None:
    stream = Writes()
    out = Lines(stream)

    def talk(word: str) -> None:
        for _ in range(300):
            print(f"{word} says something long enough to be interleaved", file=out)

    threads = [threading.Thread(target=talk, args=(w,)) for w in ("engine", "keyboard")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(w.endswith("\n") for w in stream.writes)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 600
    assert set(lines) == {f"{w} says something long enough to be interleaved"
                          for w in ("engine", "keyboard")}


def test_a_table_prints_whole_lines(tmp_path: Path, mock_factory: Any) -> None:
    stream = Writes()
    table = Table(default_config(["Blue", "Red", "Green"]), db=tmp_path / "referee.db",
                  mock=True, no_speech=True, out=stream, auto=False)
    try:
        table.start("pigs-tail", {}, resume=False)  # the engine says how to lay the cards
        print("Table Referee: Pig's Tail", file=table.out)
        table.engine.command("standings")
    finally:
        table.close()
    assert stream.writes and all(w.endswith("\n") for w in stream.writes), stream.writes


@pytest.mark.parametrize(("winners", "said"), [
    (["Blue"], "Game over. Winner: Blue. "),
    (["Blue", "Red"], "Game over. Winners: Blue and Red. "),
    (["Blue", "Red", "Yellow"], "Game over. Winners: Blue, Red and Yellow. ")])
def test_the_terminal_names_the_winners_as_a_list(winners: list[str], said: str) -> None:
    """"Winner: Blue and Red and Yellow" read like a list typed by a machine."""
    from referee.cli import main as cli_main

    table = argparse.Namespace(out=io.StringIO(), engine=None)
    seats = [{"place": 1, "seat": s, "score": 15} for s in winners]
    cli_main._print_event(table, "over", {"winners": winners, "seats": seats})
    assert table.out.getvalue().startswith(said), table.out.getvalue()


def test_a_seat_named_without_a_score_is_printed_without_plus_zero() -> None:
    """The quiz's first buzzer is named, not scored: "Red +0 (buzzed first)" read as a ruling
    that gave Red nothing; a point is printed with its sign."""
    from referee.cli import main as cli_main
    from referee.rules.registry import rules_for

    quiz = rules_for("quiz")(["Red", "Blue"], {})  # a game that says no zero count
    table = argparse.Namespace(out=io.StringIO(), engine=argparse.Namespace(rules=quiz))
    rulings = [{"type": "ruling", "seat": "Red", "delta": 0, "reason": "buzzed first",
                "margin_us": 12_000},
               {"type": "ruling", "seat": "Blue", "delta": 1, "reason": "right answer",
                "margin_us": None}]
    cli_main._print_event(table, "ruling", {"rulings": rulings, "round": 3, "correction": False})
    assert table.out.getvalue().splitlines()[0] == (
        "Round 3: Red (buzzed first, by 12.0 ms); Blue +1 (right answer)")
