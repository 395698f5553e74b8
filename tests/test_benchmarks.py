"""Every benchmark runs, at a tiny size, in the suite: `make bench` cannot rot unseen.

`benchmarks/run_all.py --smoke` runs each script with its smoke arguments (all at once) and the
same document writer `make bench` uses; a script that fails, times out, prints no RESULT line, or
whose document section no longer renders fails here. The figures themselves are not checked (a
tiny run on a shared machine says nothing about the targets), only that each benchmark measured
what it says it measures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import run_all  # noqa: E402  (benchmarks/run_all.py)


def test_every_benchmark_runs_at_a_tiny_size_and_its_section_renders(tmp_path: Path) -> None:
    doc, out = tmp_path / "bench.md", tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--smoke",
                           "--doc", str(doc), "--json", str(out)], cwd=ROOT, text=True,
                          capture_output=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    runs = json.loads(out.read_text())
    assert set(runs) == {b.key for b in run_all.BENCHES}
    for key, r in runs.items():
        assert r["status"] == "ok", (key, r)
        bench = next(b for b in run_all.BENCHES if b.key == key)
        if '"RESULT ' in (ROOT / "benchmarks" / bench.script).read_text():
            assert r["result"] is not None, f"{key}: no RESULT line"
    press = runs["press"]["result"]
    assert all(row["misnamed"] == 0 for row in press["rows"]), press["rows"]
    assert runs["startup"]["result"]["runs_s"], runs["startup"]
    assert runs["startup"]["result"]["memory"]["rss_mb"] > 0  # the speaking table's memory
    assert "Resident memory, a speaking 4-seat table" in doc.read_text()
    assert runs["idle"]["result"]["served"] and runs["idle"]["result"]["phase"] in (
        "ready", "ruled", "awaiting", "over")
    text = doc.read_text()
    for b in run_all.BENCHES:
        assert f"## {b.title}" in text
    assert "failed (exit" not in text and "timed out" not in text


def test_smoke_refuses_to_overwrite_the_real_figures() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--smoke"],
                          cwd=ROOT, text=True, capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--doc" in proc.stderr
