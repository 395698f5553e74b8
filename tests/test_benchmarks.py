"""Every benchmark runs, at a tiny size, in the suite: `make bench` cannot rot unseen.

`benchmarks/run_all.py --smoke` runs each script with its smoke arguments and the same document
writer `make bench` uses; a script that fails, times out, prints no RESULT line, or whose
document section no longer renders fails here. The figures themselves are not checked (a tiny
run on a shared machine says nothing about the targets), only that each benchmark measured what
it says it measures. The longest smoke runs have files of their own (test_benchmarks_*.py), so
that the suite's workers run them side by side; the quick ones run here, all at once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support import ROOT, bench_smoke

sys.path.insert(0, str(ROOT / "benchmarks"))

import run_all  # noqa: E402  (benchmarks/run_all.py)

# the benchmarks whose smoke runs have a file of their own, by file
OWN_FILES = {"test_benchmarks_hostile.py": ["hostile"], "test_benchmarks_startup.py": ["startup"],
             "test_benchmarks_speech.py": ["speech", "pi_speech"]}
QUICK = [b.key for b in run_all.BENCHES if all(b.key not in keys for keys in OWN_FILES.values())]


def test_the_quick_benchmarks_run_at_a_tiny_size_and_their_sections_render(tmp_path: Path) -> None:
    runs, _ = bench_smoke(QUICK, tmp_path)
    if "press" in runs:
        press = runs["press"]["result"]
        assert all(row["misnamed"] == 0 for row in press["rows"]), press["rows"]
    if "idle" in runs:
        assert runs["idle"]["result"]["served"] and runs["idle"]["result"]["phase"] in (
            "ready", "ruled", "awaiting", "over")


def test_every_benchmark_is_smoke_tested_by_one_file() -> None:
    """A new benchmark joins the quick group by existing; one named for its own file has it."""
    here = Path(__file__).parent
    for name, keys in OWN_FILES.items():
        assert (here / name).exists(), name
        text = (here / name).read_text()
        assert all(f'"{k}"' in text for k in keys), (name, keys)
    named = [k for keys in OWN_FILES.values() for k in keys]
    assert sorted(named + QUICK) == sorted(b.key for b in run_all.BENCHES)


def test_smoke_refuses_to_overwrite_the_real_figures() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--smoke"],
                          cwd=ROOT, text=True, capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--doc" in proc.stderr
