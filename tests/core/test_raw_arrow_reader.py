"""The raw page's fast path (pyarrow's CSV reader) reads what pandas' C parser, the path before, reads: the
same metric table on real pages and on the layouts ncu prints (==PROF== lines between rows, thousands
separators, n/a cells), with pandas still reading whatever Arrow refuses."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core.readers import csv_raw, read_metrics

from ..conftest import fixture_path
from ..helpers.raw_csv import launches, raw_csv

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"


def _pages(tmp: Path) -> list[Path]:
    real = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    out = [fixture_path("b200_torch_sdpa_auto_raw.csv")]
    for name, kwargs in [
        ("plain", {}),
        ("prof", {"prof_lines": True}),
        ("thousands", {"thousands": True}),
        ("na", {"na_metric": "dram__bytes.sum"}),
        ("scaled", {"scaled": True}),
    ]:
        (tmp / f"{name}.csv").write_text(raw_csv(real, **kwargs))
        out.append(tmp / f"{name}.csv")
    (tmp / "h100.csv").write_bytes(gzip.decompress((H100 / "linear_bs32.csv.gz").read_bytes()))
    return [*out, tmp / "h100.csv"]


def test_the_arrow_reader_reads_what_pandas_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_NO_CACHE", "1")
    used = []
    real = csv_raw._parse_arrow
    monkeypatch.setattr(csv_raw, "_parse_arrow", lambda handle, *a: used.append(handle.name) or real(handle, *a))
    pages = _pages(tmp_path)
    fast = [read_metrics(p)[0] for p in pages]
    # every page read by Arrow (twice where a later row breaks the first row's pattern of plain numbers)
    assert sorted(set(used)) == sorted(str(p) for p in pages)

    def refuse(*_):
        raise ValueError("pandas only")

    monkeypatch.setattr(csv_raw, "_parse_arrow", refuse)
    for path, frame in zip(pages, fast, strict=True):
        # pandas keeps the category of an `==WARNING==` line it read as a row and dropped; the values agree
        pd.testing.assert_frame_equal(frame, read_metrics(path)[0], obj=path.name, check_categorical=False)


@pytest.mark.parametrize("cut", ["row", "program output"])
def test_a_row_arrow_refuses_is_read_by_pandas(tmp_path, cut, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_NO_CACHE", "1")
    real = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    lines = raw_csv(real).splitlines(keepends=True)  # a short row mid-page (a short last one is refused)
    text = "".join([*lines[:3], '"99","1"\n', *lines[3:]]) if cut == "row" else "".join(lines) + "Done.\n"
    path = tmp_path / "page.csv"
    path.write_text(text)
    frame, _ = read_metrics(path)
    assert len(frame) == len(real) + (cut == "row")  # pandas keeps a short row (its cells unknown), drops `Done.`
