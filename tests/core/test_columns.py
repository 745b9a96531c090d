"""core/table/columns.py declares every column a kernels table holds, and the lists of counted
columns that every module shares: a column added in one place only is caught here."""

from __future__ import annotations

import numpy as np
import pytest
from flopscope.core import Report, read_report
from flopscope.core.table.columns import ALL, DECLARED

from ..conftest import fixture_path

# Amounts add up over launches (a rate, ratio or ceiling does not): seconds, FLOPs, bytes.
AMOUNT_UNITS = ("s", "FLOP", "B")


def test_every_column_of_a_read_report_is_declared(fixtures_dir):
    """Launches and groups of every fixture hold only columns core/table/columns.py names, units and
    describes."""
    declared = {name for name, _, _ in DECLARED}
    files = sorted(p for p in fixtures_dir.iterdir() if p.suffix != ".md")
    assert len(files) > 10
    for path in files:
        report = read_report(path)
        for by in ("launch", "name", "nvtx"):
            undeclared = set(report.group(by).columns) - declared
            assert not undeclared, (
                f"{path.name} by {by}: {sorted(undeclared)} not in core/table/columns.py"
            )


def test_a_group_row_sums_every_counted_column():
    """Every amount column (unit s, FLOP or B) of a kernel group is the sum of its launches', for
    all of them: a counter added to the table but left out of what groups sum would read as unknown
    in every grouped view. The launches of a real report get a distinct value per column and launch,
    so no column passes by chance."""
    report = read_report(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    k = report.kernels.copy()
    # flop: derived, below
    amounts = [name for name, unit, _ in ALL if unit in AMOUNT_UNITS and name != "flop"]
    assert len(amounts) >= 19
    rng = np.random.default_rng(7)
    for name in amounts:
        k[name] = rng.integers(1, 1000, len(k)).astype(float) * (
            1e-6 if name == "duration_s" else 1e6
        )
    k["status"] = "ok"
    groups = (
        Report(meta=report.meta, kernels=k, gpu=report.gpu).group("name").set_index("kernel_full")
    )
    assert (groups["count"] > 1).sum() >= 3  # groups of several launches
    expected = k.groupby(k["kernel_full"].astype(object))[amounts].sum()
    for name in amounts:
        got = groups[name].reindex(expected.index).to_numpy(dtype=float)
        assert got == pytest.approx(expected[name].to_numpy()), f"group rows do not sum {name}"
    parts = (
        expected["flop_fp64"]
        + expected["flop_fp32"]
        + expected["flop_fp16"]
        + expected["flop_tensor"]
    )
    assert groups["flop"].reindex(expected.index).to_numpy(dtype=float) == pytest.approx(
        parts.to_numpy()
    )
