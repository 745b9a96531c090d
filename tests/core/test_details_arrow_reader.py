"""The details page's vectorised reader (Arrow's CSV reader and one pivot) reads what the row-by-row
reader (the csv module, each metric row applied to its launch in file order: the reader before it)
reads, on every real details page we have and on a page of many launches made from one; a page Arrow
cannot read still reads."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core import read_report
from flopscope.core.readers import csv_details
from flopscope.core.readers.csv_text import split_csv

from ..conftest import FIXTURES

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
REAL = sorted(FIXTURES.glob("*details*.csv")) + sorted(FIXTURES.glob("*roofline_section.csv"))


def _plain(path: Path, tmp: Path) -> Path:
    if path.suffix != ".gz":
        return path
    out = tmp / path.stem
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


def _many(source: Path, out: Path, launches: int) -> Path:
    """`launches` launches: the source's in turn, each row's ID cell replaced by the new
    launch's."""
    lines = source.read_bytes().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(b'"ID"'))
    rows: dict[bytes, list[bytes]] = {}
    for line in lines[start + 1 :]:
        if line.startswith(b'"'):
            launch, rest = line.split(b",", 1)
            rows.setdefault(launch, []).append(rest)
    blocks = list(rows.values())
    with out.open("wb") as handle:
        handle.write(lines[start])
        for i in range(launches):
            handle.writelines(b'"%d",%s' % (i, rest) for rest in blocks[i % len(blocks)])
    return out


@pytest.mark.parametrize(
    "name",
    [p.name for p in REAL]
    + ["gemm_bf16_4096x4096x4096.details.csv.gz", "gemm_bf16_full.details.csv.gz", "many"],
)
def test_the_vectorised_details_reader_reads_what_the_row_reader_reads(name, tmp_path, monkeypatch):
    if name == "many":
        path = _many(
            FIXTURES / "t4_nsightful_copy_blocked_details.csv", tmp_path / "many.csv", 3000
        )
    else:
        path = _plain(FIXTURES / name if (FIXTURES / name).exists() else H100 / name, tmp_path)
    if not path.exists():
        pytest.skip(f"{name} not found")
    doc = split_csv(path)
    fast = csv_details._read_arrow(doc)
    assert fast is not None, "read by Arrow"
    pd.testing.assert_frame_equal(fast, csv_details._read_rows(doc), obj=name)
    kernels = read_report(path).kernels
    monkeypatch.setattr(csv_details, "_read_arrow", lambda *_: None)
    pd.testing.assert_frame_equal(kernels, read_report(path).kernels, obj=name)


def test_a_row_wider_than_the_metric_rows_is_read_row_by_row(tmp_path):
    source = FIXTURES / "v100_cutlass_gemm_nersc_flops_details.csv"
    if not source.exists():
        pytest.skip("fixture not found")
    lines = source.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith('"0",'))
    # one metric row with a cell too many
    lines.insert(at + 2, lines[at + 2].rstrip("\n") + ',"extra"\n')
    path = tmp_path / "odd.csv"
    path.write_text("".join(lines))
    doc = split_csv(path)
    assert csv_details._read_arrow(doc) is None
    frame, _ = csv_details.read_details(doc)
    pd.testing.assert_frame_equal(frame, csv_details.read_details(split_csv(source))[0])
