"""benchmarks/bench_startup.py at its tiny size (tests/test_benchmarks.py: why; a file of its own,
so that another worker runs it beside the other benchmarks)."""

from __future__ import annotations

from pathlib import Path

from tests.support import bench_smoke


def test_the_start_up_benchmark_runs_at_a_tiny_size(tmp_path: Path) -> None:
    runs, text = bench_smoke(["startup"], tmp_path)
    assert runs["startup"]["result"]["runs_s"], runs["startup"]
    assert runs["startup"]["result"]["memory"]["rss_mb"] > 0  # the speaking table's memory
    assert "Resident memory, a speaking 4-seat table" in text
