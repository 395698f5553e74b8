"""Helpers shared by the test modules: figures, the `referee` command, one-line errors, exports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def bench_smoke(keys: list[str], tmp_path: Path) -> tuple[dict[str, Any], str]:
    """`benchmarks/run_all.py --smoke --only KEYS`: each benchmark at its tiny size, checked as
    `make bench` would take it (it ran, printed its RESULT line, its document section renders);
    the runs by key and the document written."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import run_all  # benchmarks/run_all.py

    doc, out = tmp_path / "bench.md", tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--smoke",
                           "--only", ",".join(keys), "--doc", str(doc), "--json", str(out)],
                          cwd=ROOT, text=True, capture_output=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    runs: dict[str, Any] = json.loads(out.read_text())
    assert set(runs) == set(keys)
    text = doc.read_text()
    for key, r in runs.items():
        assert r["status"] == "ok", (key, r)
        bench = next(b for b in run_all.BENCHES if b.key == key)
        if '"RESULT ' in (ROOT / "benchmarks" / bench.script).read_text():
            assert r["result"] is not None, f"{key}: no RESULT line"
        assert f"## {bench.title}" in text
    assert "failed (exit" not in text and "timed out" not in text
    return runs, text
