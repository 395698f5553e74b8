"""benchmarks/bench_speech.py and bench_pi_speech.py at their tiny size (tests/test_benchmarks.py:
why; a file of their own, so that another worker runs them beside the other benchmarks)."""

from __future__ import annotations

from pathlib import Path

from tests.support import bench_smoke


def test_the_speech_benchmarks_run_at_a_tiny_size(tmp_path: Path) -> None:
    bench_smoke(["speech", "pi_speech"], tmp_path)
