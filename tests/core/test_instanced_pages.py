"""Raw pages printed with `--print-metric-instances details` (flopscope's own import arguments) hold
cells such as `128 (0: 128)`: the total, then its instances. They must give the kernels table the
same page gives without instances (ncu's default), read by the typed fast path."""

from __future__ import annotations

import csv
import gzip
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core import read_report

from ..conftest import fixture_path

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
_INSTANCED = re.compile(r"^(\S+) \(.*\)$")


def _rows(text: str) -> list[list[str]]:
    """The header, units and launch rows (ncu's `==PROF==` lines before them left out)."""
    csv.field_size_limit(2**31 - 1)
    return list(csv.reader(io.StringIO(text[text.index('"ID",') :], newline="")))


def _gunzip(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8-sig")


def _write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as handle:
        csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return path


def _same_tables(a: Path, b: Path) -> None:
    ka, kb = read_report(a).kernels, read_report(b).kernels
    pd.testing.assert_frame_equal(ka, kb, check_exact=True)
    assert ka["grid"].notna().all() and ka["duration_s"].notna().all()


def test_an_instanced_page_made_from_a_real_plain_one_gives_its_table(tmp_path):
    """The B200 page as ncu printed it, and the same with every numeric cell of the columns the H100
    capture shows instanced written as ncu writes an instanced cell: `v (0: v)`."""
    rows = _rows(fixture_path("b200_torch_sdpa_auto_raw.csv").read_text(encoding="utf-8-sig"))
    h100 = _rows(_gunzip(H100 / "elementwise_float.csv.gz"))
    instanced = {
        h for h, c in zip(h100[0], h100[2], strict=True) if _INSTANCED.match(c) and "__" in h
    }
    cols = [k for k, h in enumerate(rows[0]) if h in instanced]
    assert len(cols) > 20  # launch__grid_dim_x, launch__registers_per_thread, ...
    wrapped = [rows[0], rows[1]] + [
        [f"{c} (0: {c})" if k in cols and c and c[0].isdigit() else c for k, c in enumerate(r)]
        for r in rows[2:]
    ]
    _same_tables(_write(tmp_path / "plain.csv", rows), _write(tmp_path / "instanced.csv", wrapped))


@pytest.mark.parametrize("name", ["elementwise_float", "gemm_fp32_4096x4096x4096"])
def test_a_real_instanced_page_gives_the_table_of_its_totals(tmp_path, name):
    """The H100 capture (made with `--print-metric-instances details`), and the same page with each
    instanced cell cut to its total, as ncu prints it without the option (but for the per-opcode
    counts, which flopscope reads per instance)."""
    rows = _rows(_gunzip(H100 / f"{name}.csv.gz"))
    opcodes = {
        k
        for k, h in enumerate(rows[0])
        if h.startswith("sass__thread_inst_executed_true_per_opcode")
    }
    plain = [
        [
            m.group(1) if (m := _INSTANCED.match(c)) and k not in opcodes else c
            for k, c in enumerate(r)
        ]
        for r in rows
    ]
    assert plain != rows
    _same_tables(_write(tmp_path / "plain.csv", plain), _write(tmp_path / "instanced.csv", rows))
