"""Bad input, table logs: truncated at every byte, wrong types and fields, deep nesting, huge
files and huge lines are replayed or refused in one line (exit 2), never a traceback, with bounded
memory and time. docs/reliability.md lists the figures (`pytest -s tests/test_bad_logs.py`)."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cli import main as cli
from referee.store.tablelog import LogError, replay
from tests.harness import examples
from tests.support import ROOT, figure, one_line

SEED_LOG = [
    {"type": "game", "game": "spank-the-pig", "seats": ["Zoë", "Red", "Green", "Yellow"],
     "options": {"doubles": "buttons"}},
    {"type": "cue", "t_us": 1_000_000},
    {"type": "press", "t_us": 1_150_000, "seat": "Green", "button": "slap"},
    {"type": "press", "t_us": 1_180_000, "seat": "Red", "button": "slap"},
    {"type": "press", "t_us": 1_210_000, "seat": "Yellow"},
    {"type": "press", "t_us": 1_260_000, "seat": "Zoë", "button": "slap"},
    {"type": "press", "t_us": 1_300_000, "seat": "Zoë", "button": "double"},
    {"type": "press", "t_us": 1_320_000, "seat": "Green", "button": "double"},
    {"type": "press", "t_us": 1_340_000, "seat": "Yellow", "button": "double"},
    {"type": "press", "t_us": 1_400_000, "seat": "Red", "button": "double"},
    {"type": "penalty", "round": 1, "seat": "Zoë", "count": 1, "reason": "slapped the hippo"},
    {"type": "cue", "t_us": 6_000_000},
    {"type": "press", "t_us": 6_100_000, "seat": "Red"},
    {"type": "facts", "round": 2, "pigs": 0, "doubles": []},
    {"type": "undo"},
    {"type": "facts", "round": 2, "pigs": 2, "doubles": ["zebracorn"]},
    {"type": "cue", "t_us": 12_000_000},
    {"type": "press", "t_us": 12_000_500, "seat": "Red"},
    {"type": "press", "t_us": 12_000_900, "seat": "Green"},
]
PIG_LOG = [
    {"type": "game", "game": "pig", "seats": ["A", "B", "C", "D"], "options": {"lives": 3}},
    {"type": "press", "t_us": 1_000_000, "seat": "A"},
    {"type": "press", "t_us": 1_200_000, "seat": "B"},
    {"type": "press", "t_us": 1_300_000, "seat": "C"},
    {"type": "press", "t_us": 30_000_000, "seat": "D"},
    {"type": "facts", "round": 2, "claim": False},
]
TAIL_LOG = [
    {"type": "game", "game": "pigs-tail", "seats": ["A", "B", "C"], "options": {"take": "slowest"}},
    {"type": "cue", "t_us": 1_000_000, "seat": "A"},
    {"type": "cue", "t_us": 5_000_000, "seat": "B"},
    {"type": "press", "t_us": 5_100_000, "seat": "A"},
    {"type": "press", "t_us": 5_200_000, "seat": "C"},
    {"type": "facts", "round": 2, "match": True},
]
SLAPJACK_LOG = [
    {"type": "game", "game": "slapjack", "seats": ["A", "B", "C"], "options": {}},
    {"type": "cue", "t_us": 1_000_000, "seat": "A"},
    {"type": "cue", "t_us": 4_000_000, "seat": "B"},
    {"type": "press", "t_us": 4_200_000, "seat": "C"},
    {"type": "press", "t_us": 4_300_000, "seat": "A"},
    {"type": "facts", "round": 2, "jack": True},
    {"type": "cue", "t_us": 8_000_000, "seat": "C"},
    {"type": "press", "t_us": 8_100_000, "seat": "B"},
]
HALLI_LOG = [
    {"type": "game", "game": "halli-galli", "seats": ["A", "B", "C"], "options": {}},
    {"type": "cue", "t_us": 1_000_000, "seat": "A"},
    {"type": "press", "t_us": 1_300_000, "seat": "B"},
    {"type": "cue", "t_us": 4_000_000, "seat": "B"},
    {"type": "press", "t_us": 4_200_000, "seat": "C"},
    {"type": "press", "t_us": 4_250_000, "seat": "A"},
    {"type": "facts", "round": 2, "five": True},
]
SNAP_LOG = [
    {"type": "game", "game": "snap", "seats": ["A", "B", "C"], "options": {}},
    {"type": "cue", "t_us": 1_000_000, "seat": "A"},
    {"type": "cue", "t_us": 4_000_000, "seat": "B"},
    {"type": "press", "t_us": 4_200_000, "seat": "C"},
    {"type": "facts", "round": 2, "snap": True},
    {"type": "cue", "t_us": 8_000_000, "seat": "C"},
    {"type": "press", "t_us": 8_150_000, "seat": "A"},
]
QUIZ_LOG = [
    {"type": "game", "game": "quiz", "seats": ["A", "B", "C"], "options": {}},
    {"type": "cue", "t_us": 30_000_000},
    {"type": "press", "t_us": 30_300_000, "seat": "B"},
    {"type": "press", "t_us": 30_500_000, "seat": "C"},
    {"type": "facts", "round": 1, "wrong": ["B"]},
    {"type": "facts", "round": 1, "right": "C"},
    {"type": "cue", "t_us": 60_000_000},
    {"type": "press", "t_us": 59_900_000, "seat": "A"},
    {"type": "press", "t_us": 60_200_000, "seat": "B"},
]
LOGS = {"spank": SEED_LOG, "pig": PIG_LOG, "pigs-tail": TAIL_LOG, "slapjack": SLAPJACK_LOG,
        "halli-galli": HALLI_LOG, "snap": SNAP_LOG, "quiz": QUIZ_LOG}


def log_text(objs: list[Any]) -> str:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def replay_cli(path: Path) -> tuple[int, str, str]:
    """`referee replay PATH` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(["replay", str(path)])
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


def check_replay_outcome(rc: int, out: str, err: str) -> None:
    assert "Traceback" not in err
    if rc == 0:
        assert err == ""
        assert json.loads(out.splitlines()[-1])["type"] == "standings"
    else:
        assert rc == 2, (rc, err)
        assert out == "" and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("name", list(LOGS))
def test_a_log_truncated_at_every_byte_is_read_or_refused_in_one_line(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # `referee replay` a thousand times in one process: the command line is parsed by the real
    # parser, built once (building it is nine tenths of a short replay's time)
    monkeypatch.setattr(cli, "build_parser", functools.cache(cli.build_parser))
    data = log_text(LOGS[name]).encode("utf-8")
    path = tmp_path / "cut.jsonl"
    outcomes = {0: 0, 2: 0}
    for cut in range(len(data) + 1):
        path.write_bytes(data[:cut])
        rc, out, err = replay_cli(path)
        check_replay_outcome(rc, out, err)
        outcomes[rc] += 1
    assert outcomes[0] and outcomes[2]
    figure(f"truncated {name} log", f"{len(data) + 1} cuts: {outcomes[0]} replayed, "
                                    f"{outcomes[2]} refused (exit 2, one line)")


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
              st.sampled_from(["Zoë", "Red", "slap", "double", "game", "cue", "press", "facts"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)
FIELDS = ["type", "t_us", "seat", "button", "round", "pigs", "doubles", "match", "claim", "void",
          "count", "reason", "game", "seats", "options"]


@st.composite
def mutated_logs(draw: st.DrawFn) -> str:
    objs = [dict(o) for o in draw(st.sampled_from(list(LOGS.values())))]
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(objs) - 1))
        action = draw(st.sampled_from(["set", "delete", "type", "insert", "swap", "raw"]))
        obj = objs[i]
        if action == "set" and isinstance(obj, dict):
            obj[draw(st.sampled_from(FIELDS))] = draw(json_values)
        elif action == "delete" and isinstance(obj, dict) and obj:
            obj.pop(draw(st.sampled_from(sorted(obj))))
        elif action == "type" and isinstance(obj, dict):
            obj["type"] = draw(st.one_of(st.sampled_from(
                ["game", "cue", "press", "facts", "penalty", "undo", "ruling", "Press"]), json_values))
        elif action == "insert":
            objs.insert(i, draw(st.one_of(json_values, st.dictionaries(
                st.sampled_from(FIELDS), json_values, max_size=5))))
        elif action == "swap":
            j = draw(st.integers(0, len(objs) - 1))
            objs[i], objs[j] = objs[j], objs[i]
        elif action == "raw":
            objs[i] = draw(st.sampled_from(["[", "}", "\x00", "NaN", "1e999", '{"type": "cue"']))
    return "".join((o if isinstance(o, str) else json.dumps(o, ensure_ascii=False)) + "\n"
                   for o in objs)


@settings(max_examples=examples(250), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated_logs())
def test_logs_with_wrong_types_and_fields_are_replayed_or_refused_in_one_line(
        tmp_path: Path, text: str) -> None:
    try:
        result = replay(text.splitlines(keepends=True))
    except LogError as exc:
        assert one_line(str(exc)) and str(exc).startswith("line "), str(exc)
        return
    json.dumps(result.lines())  # what replay accepts it can print


def test_a_deeply_nested_log_line_is_refused_in_one_line(tmp_path: Path) -> None:
    """json.loads recurses per nesting level: 60000 '[' on one line raise RecursionError."""
    path = tmp_path / "deep.jsonl"
    path.write_text(log_text(SEED_LOG[:2]) + "[" * 60_000 + "\n")
    rc, out, err = replay_cli(path)
    check_replay_outcome(rc, out, err)
    assert rc == 2 and "line 3" in err


# python -c HWM_WRAPPER <file> <module> <args>: run the module as `python -m` would, and write
# the process's own peak RSS (kB) to <file> as it exits, however it exits
HWM_WRAPPER = """
import atexit, runpy, sys
out = sys.argv[1]
def peak():
    with open('/proc/self/status') as f:
        kb = next(line.split()[1] for line in f if line.startswith('VmHWM:'))
    with open(out, 'w') as f:
        f.write(kb)
atexit.register(peak)
sys.argv = sys.argv[2:]
runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)
"""


def rss_run(args: list[str], workdir: Path, limit_s: float = 90.0
            ) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run `python -m module ...`; return its result, its wall time and its own peak RSS (MiB).

    The peak is the process's own high-water mark after it started Python (VmHWM, written by
    the process as it exits), not wait4's ru_maxrss: Linux folds the RSS of the process image
    before exec into that, and a child forked from a pytest worker starts with the worker's
    pages (a worker grown by earlier tests read as 554 MiB for a 174 MiB replay).
    A run past `limit_s` is killed and fails the test: a replay that turned quadratic must fail
    here, not hang the suite."""
    assert args[1] == "-m", args
    hwm_path = workdir / "hwm.txt"
    args = [args[0], "-c", HWM_WRAPPER, str(hwm_path), *args[2:]]
    started = time.monotonic()
    out_path, err_path = workdir / "out.txt", workdir / "err.txt"
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        pid = 0
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                assert time.monotonic() - started < limit_s, f"{args[3:]}: still running after {limit_s} s"
                time.sleep(0.02)
        finally:
            if not pid:  # failed or interrupted: the child goes too
                proc.kill()
                proc.wait()
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    result = subprocess.CompletedProcess(args, proc.returncode, out_path.read_text(),
                                         err_path.read_text())
    assert usage is not None
    return result, wall, int(hwm_path.read_text()) / 1024


@pytest.mark.timeout(300)  # 6 s on an idle machine; past 30 s beside the whole suite and mutmut
def test_huge_logs_are_replayed_or_refused_with_bounded_memory(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    seats = ["Blue", "Red", "Green", "Yellow"]
    with big.open("w") as f:
        f.write(json.dumps({"type": "game", "game": "spank-the-pig", "seats": seats,
                            "options": {"doubles": "off", "deck": 10_000}}) + "\n")
        n = 1
        t = 1_000_000
        while n < 200_000:
            f.write(json.dumps({"type": "cue", "t_us": t}) + "\n")
            for i, seat in enumerate(seats):
                f.write(json.dumps({"type": "press", "t_us": t + 100_000 + i * 7_000,
                                    "seat": seat}) + "\n")
            n += 5
            t += 4_000_000
    lines = n
    size_mb = big.stat().st_size / 1e6
    result, wall, peak = rss_run([sys.executable, "-m", "referee.cli.main", "replay", str(big)], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.splitlines()[-1])["type"] == "standings"
    figure("200k-line log", f"{lines} lines ({size_mb:.1f} MB) replayed in {wall:.1f} s, "
                            f"peak RSS {peak:.0f} MiB")
    assert peak < 512

    long_line = tmp_path / "longline.jsonl"
    with long_line.open("w") as f:
        f.write(log_text(SEED_LOG[:2]))
        f.write('{"type": "press", "t_us": 1, "seat": "' + "x" * 10_000_000 + '"}\n')
    result, wall, peak2 = rss_run([sys.executable, "-m", "referee.cli.main", "replay", str(long_line)],
                                     tmp_path)
    assert result.returncode == 2 and "line 3" in result.stderr, result.stderr[-500:]
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    figure("10 MB line", f"refused in {wall:.1f} s, peak RSS {peak2:.0f} MiB "
                         f"(exit 2: '{result.stderr.strip()[:90]}')")
    assert peak2 < 512


