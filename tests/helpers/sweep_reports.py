"""A batch-size sweep made of real launches (the V100 CUTLASS fixture): N tensor-core GEMMs at batch
N."""

from __future__ import annotations

import pytest
from flopscope.core import Report, read_report

from ..conftest import fixture_path
from .raw_csv import launches, raw_csv

GPU = "Tesla V100-SXM2-16GB"  # the fixture's GPU: gives the efficiency columns real values


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[int, Report]:
    """Batch size N: N real tensor-core GEMM launches, plus the real init kernel from N = 4 on."""
    rows = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    gemm = next(r for r in rows if "tensorop_s884gemm" in r["Kernel Name"])
    init = next(r for r in rows if "InitializeMatrix" in r["Kernel Name"])
    folder = tmp_path_factory.mktemp("sweep")
    out = {}
    for n in (1, 2, 4, 8, 16, 32, 64, 128):
        path = folder / f"gemm_bs{n}.csv"
        path.write_text(raw_csv([gemm] * n + ([init] if n >= 4 else [])))
        out[n] = read_report(path, gpu=GPU)
    return out


def shuffled(reports: dict[int, Report]) -> list[tuple[float, Report]]:
    """Points out of order: the screen must show them in parameter order."""
    keys = sorted(reports)
    return [(float(n), reports[n]) for n in keys[1::2] + keys[::2]]
