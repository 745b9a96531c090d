"""Every script in benchmarks/ still starts: its imports (of flopscope, and of its sibling scripts)
resolve and its arguments parse. The scripts themselves run for minutes and are not part of the
suite; a renamed function broke one unseen before (bench_details imported bench_outputs.median_run
after it became median_runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("script", sorted(BENCHMARKS.glob("*.py")), ids=lambda p: p.name)
def test_a_benchmark_script_starts(script):
    done = subprocess.run(
        [sys.executable, script.name, "--help"], cwd=BENCHMARKS, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
