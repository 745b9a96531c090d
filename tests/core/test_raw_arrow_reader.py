"""The raw page's fast path (pyarrow's CSV reader) reads what pandas' C parser, the path before,
reads: the same metric table on real pages and on the layouts ncu prints (==PROF== lines between
rows, thousands separators, n/a cells), with pandas still reading whatever Arrow refuses."""

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
    monkeypatch.setattr(
        csv_raw, "_parse_arrow", lambda handle, *a: used.append(handle.name) or real(handle, *a)
    )
    pages = _pages(tmp_path)
    fast = [read_metrics(p)[0] for p in pages]
    # every page read by Arrow (twice where a later row breaks the first row's pattern of plain
    # numbers)
    assert sorted(set(used)) == sorted(str(p) for p in pages)

    def refuse(*_):
        raise ValueError("pandas only")

    monkeypatch.setattr(csv_raw, "_parse_arrow", refuse)
    for path, frame in zip(pages, fast, strict=True):
        # pandas keeps the category of an `==WARNING==` line it read as a row and dropped; the
        # values agree
        pd.testing.assert_frame_equal(
            frame, read_metrics(path)[0], obj=path.name, check_categorical=False
        )


@pytest.mark.parametrize("cut", ["row", "program output"])
def test_a_row_arrow_refuses_is_read_by_pandas(tmp_path, cut, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_NO_CACHE", "1")
    real = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    # a short row mid-page (a short last one is refused)
    lines = raw_csv(real).splitlines(keepends=True)
    text = (
        "".join([*lines[:3], '"99","1"\n', *lines[3:]])
        if cut == "row"
        else "".join(lines) + "Done.\n"
    )
    path = tmp_path / "page.csv"
    path.write_text(text)
    frame, _ = read_metrics(path)
    # pandas keeps a short row (its cells unknown), drops `Done.`
    assert len(frame) == len(real) + (cut == "row")


def test_rows_one_per_line_are_cut_at_line_ends_and_a_quoted_line_break_is_read_too(
    tmp_path, monkeypatch
):
    """Arrow parses a page in blocks cut at line ends (newlines_in_values off: every core at work).
    A kernel name holding a line break where a block is cut makes that parse fail, and the page is
    read again allowing line breaks in values: by Arrow still, not by pandas, and every value as on
    the page."""
    import pyarrow.csv as pacsv

    monkeypatch.setenv("FLOPSCOPE_NO_CACHE", "1")
    modes: list[bool] = []
    real_read = pacsv.read_csv

    def spy(source, *, read_options, parse_options, **kwargs):
        modes.append(parse_options.newlines_in_values)
        # blocks of a few rows: a cut lands in a name (Arrow's default: 1 MB)
        read_options.block_size = 16384
        return real_read(source, read_options=read_options, parse_options=parse_options, **kwargs)

    monkeypatch.setattr(pacsv, "read_csv", spy)
    rows = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv")) * 20
    plain = tmp_path / "plain.csv"
    plain.write_text(raw_csv(rows))
    expected = read_metrics(plain)[0]
    assert modes == [False]

    rows = [{**row, "Kernel Name": row["Kernel Name"] + "\n  second line\n"} for row in rows]
    broken = tmp_path / "line_breaks.csv"
    broken.write_text(raw_csv(rows))
    modes.clear()
    frame = read_metrics(broken)[0]
    assert modes == [False, True]  # Arrow both times: pandas' parser would be a third read
    names = [str(name) for name in frame["kernel_full"]]
    assert names == [row["Kernel Name"] for row in rows]
    others = [c for c in expected.columns if c not in ("kernel", "kernel_full")]
    pd.testing.assert_frame_equal(frame[others], expected[others], check_categorical=False)
