"""benchmarks/bench_hostile.py at its tiny size (tests/test_benchmarks.py: why; a file of its own,
so that another worker runs it beside the other benchmarks)."""

from __future__ import annotations

from pathlib import Path

from tests.support import bench_smoke


def test_the_hostile_guests_benchmark_runs_at_a_tiny_size(tmp_path: Path) -> None:
    runs, _ = bench_smoke(["hostile"], tmp_path)
    result = runs["hostile"]["result"]
    assert result["full_disk"]["logged"] == result["full_disk"]["accepted"] > 0
    assert result["full_disk"]["refusal"] == 507
    assert set(result["side_by_side"]) >= {"idle", "slowloris", "pin"}
