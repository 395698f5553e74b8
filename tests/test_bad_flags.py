"""Bad input, command-line flags: random command lines exit 0 or 2 with one line; each known bad
flag exits 2 with one line; the laptop default serves on loopback only."""

from __future__ import annotations

import contextlib
import io
import os
import string
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cli import main as cli
from referee.config import default_config
from referee.store.database import Store
from tests.harness import examples
from tests.support import assert_refused_in_one_line, run_referee
from tests.test_bad_logs import SEED_LOG, log_text


class WouldPlay(Exception):
    """Raised instead of running a table when every flag was accepted."""


flag_values = st.one_of(st.sampled_from(["", "-", "=", "x=", "=1", "tie_us=1", "tie_us=x", "deck=0",
                                         "Blue,Red", "Blue,,Red", "A,A", "Blue", "1", "-1", "0",
                                         "65536", "99999999999999999999", "nan", "/dev/null",
                                         "/proc/nope/x.db", "spank-the-pig", "pig", "pigs-tail",
                                         "snap", "warp=9", "é", "\x00"]),
                        st.text(string.ascii_letters + string.digits + string.punctuation + " ",
                                max_size=6))
flags = st.sampled_from(["--seats", "--option", "--config", "--db", "--host", "--port", "--pin",
                         "--no-speech", "--no-web", "--new", "--mock", "--bogus", "-x", "--",
                         "--help", "--version"])


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["play", "demo", "replay", "export", "buttons", "doctor", "speech", "nope"]),
       st.lists(st.one_of(flags, flag_values), max_size=7))
def test_random_command_lines_exit_0_or_2_with_one_line(tmp_path: Path, monkeypatch: Any,
                                                         command: str, argv: list[str]) -> None:
    """Every accepted `play`/`demo` stops before a table is built (WouldPlay); `buttons`, `doctor`
    and `speech` are only parsed, as they touch hardware and audio."""
    if command in ("buttons", "doctor", "speech") or "\x00" in "".join(argv):
        parser = cli.build_parser()
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                parser.parse_args([command, *argv])
            except SystemExit as exc:
                assert exc.code in (0, 2)
                if exc.code == 2:
                    assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
        return

    from gpiozero import Device

    import referee.cli.table as bootstrap

    monkeypatch.setattr(Device, "pin_factory", Device.pin_factory)  # --mock replaces it
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", os.environ.get("GPIOZERO_PIN_FACTORY", ""))

    def no_table(*args: Any, **kwargs: Any) -> None:
        raise WouldPlay

    monkeypatch.setattr(bootstrap, "Table", no_table)
    monkeypatch.setattr(sys, "stdin", io.StringIO(log_text(SEED_LOG)))
    monkeypatch.setenv("REFEREE_DB", str(tmp_path / "none.db"))
    argv = [a.replace("/dev/null", str(tmp_path / "empty")) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main([command, *argv])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
        except WouldPlay:
            return
    assert "Traceback" not in err.getvalue()
    assert rc in (0, 2), (rc, err.getvalue())
    if rc == 2:
        assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()


BAD_FLAGS: dict[str, list[str]] = {
    "port out of range": ["play", "spank-the-pig", "--mock", "--no-speech", "--port", "70000"],
    "negative port": ["play", "spank-the-pig", "--mock", "--no-speech", "--port", "-1"],
    "host with spaces": ["play", "spank-the-pig", "--mock", "--no-speech", "--host", "not a host!"],
    "port not a number": ["play", "spank-the-pig", "--mock", "--no-speech", "--port", "web"],
    "empty seats": ["play", "spank-the-pig", "--mock", "--no-speech", "--seats", ","],
    "bad option value": ["play", "pig", "--mock", "--no-speech", "--option", "lives=2"],
    "game id too big": ["export", "99999999999999999999"],
    "negative game id": ["export", "--", "-5"],
    "log is a directory": ["replay", "."],
    "unknown command": ["referee-me"],
}


@pytest.fixture(scope="module")
def bad_flag_runs() -> Iterator[dict[str, subprocess.CompletedProcess[str]]]:
    """Each bad command line in its own process, side by side; one still running after 60 s
    (it accepted the flag and started a table) is killed and reported as exit status -9. (Eleven
    processes starting at once on a loaded 2-core machine took over 10 s to refuse a flag.)"""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "flags.db"
        run_referee("replay", "-", stdin=log_text(SEED_LOG))  # warm the import cache
        Store(db).close()  # an empty database for `export`

        def one(item: tuple[str, list[str]]) -> tuple[str, subprocess.CompletedProcess[str]]:
            name, argv = item
            extra = ["--db", str(db)] if argv[0] in ("play", "export") else []
            if argv[0] == "export" and "--" in argv:
                argv = [argv[0], *extra, *argv[1:]]
            else:
                argv = [*argv, *extra]
            return name, run_referee(*argv, timeout=60, env={"REFEREE_DB": str(db)})

        with ThreadPoolExecutor(len(BAD_FLAGS)) as pool:
            yield dict(pool.map(one, BAD_FLAGS.items()))


@pytest.mark.parametrize("name", list(BAD_FLAGS))
def test_bad_command_line_flags_exit_2_with_one_line(
        bad_flag_runs: dict[str, subprocess.CompletedProcess[str]], name: str) -> None:
    result = bad_flag_runs[name]
    assert_refused_in_one_line(result)


def test_play_without_mock_on_a_machine_without_gpio_is_one_line(tmp_path: Path) -> None:
    """A laptop without --mock: gpiozero finds no pin library (BadPinFactory); one line, exit 2."""
    result = run_referee("play", "spank-the-pig", "--no-web", "--no-speech", "--db",
                         str(tmp_path / "x.db"), env={"GPIOZERO_PIN_FACTORY": None}, timeout=20)
    assert_refused_in_one_line(result)


def test_the_laptop_default_listens_on_loopback_only() -> None:
    """Without a config, `play` and `demo` serve on 127.0.0.1; the LAN only when configured."""
    parser = cli.build_parser()
    for argv in (["play", "spank-the-pig", "--mock"], ["demo"]):
        args = parser.parse_args(argv)
        assert args.host is None and args.config is None
        assert (args.host or cli.table_config(args).host) == "127.0.0.1"
    assert default_config().host == "127.0.0.1"
    assert (args.port or cli.table_config(args).port) == 8000

