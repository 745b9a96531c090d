"""`--json` and JSON exports are encoded a column at a time (core/export/json_writer.py); what they
read back to must be what the per-row encoder (`export.records` through `json.dumps`, the code path
before) gave, on every real fixture, value for value and type for type (7 stays an int, 7.0 a float,
unknown a null)."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.core.export.cells import json_ready, records
from flopscope.core.export.json_writer import float_text, row_chunks, write_json_doc
from flopscope.core.export.write import run_meta, write_table
from flopscope.core.report.report import GROUPINGS
from flopscope.core.table.columns import NOT_WRITTEN

from ..conftest import FIXTURES
from ..helpers.cli import run_in_process
from ..helpers.text_chunks import same_in_some_chunks

REPORTS = (
    sorted(p for p in FIXTURES.glob("*") if p.suffix in (".csv", ".ncu-rep", ".log"))
    if FIXTURES.is_dir()
    else []
)


def _same(a, b, where="") -> None:
    """Equal, and of the same JSON type (json.loads gives 1 == 1.0; the old writer kept them
    apart)."""
    assert type(a) is type(b), f"{where}: {a!r} ({type(a).__name__}) != {b!r} ({type(b).__name__})"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys differ"
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _before(meta: dict, rows: pd.DataFrame) -> dict:
    """The document as the per-row writer made it, read back (never the NVTX stack: `nvtx` stands
    for it)."""
    rows = rows.drop(columns=[c for c in NOT_WRITTEN if c in rows.columns])
    return json.loads(
        json.dumps({"meta": json_ready(meta), "rows": records(rows)}, indent=1, allow_nan=False)
    )


def _after(meta: dict, rows: pd.DataFrame) -> dict:
    out = io.StringIO()
    write_json_doc(meta, rows, out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("path", REPORTS, ids=[p.name for p in REPORTS])
def test_json_equals_the_per_row_encoding_on_every_real_fixture(path):
    try:
        report = read_report(path)
    except FlopscopeError:  # a fixture the engine refuses (tested elsewhere) has no rows to encode
        pytest.skip(f"{path.name} is refused by the reader")
    meta = run_meta(report)
    for by in GROUPINGS:
        rows = report.view(by)
        _same(_after(meta, rows), _before(meta, rows), f"{path.name} --by {by}")


def test_every_kind_of_cell_reads_back_as_the_per_row_encoding():
    """Values real reports rarely hold, in each dtype the tables use: extreme and non-finite floats,
    ids whole or not, nullable integers, categories with a missing value, text that needs escaping,
    mixed objects."""
    floats = [
        0.1,
        1.0,
        -0.0,
        1e15,
        -5.0,
        9999999999999998.0,
        1e16,
        12345678901234567890.0,
        1e20,
        1e-7,
        5e-324,
    ]
    floats += [1.7976931348623157e308, 1 / 3, math.nan, math.inf, -math.inf]
    n = len(floats)
    rows = pd.DataFrame(
        {
            "duration_s": floats,
            # whole: written as integers
            "launch_id": [float(i) if i % 5 else math.nan for i in range(n)],
            "grid": ["(1, 2, 3)", None, *["(4, 4, 1)"] * (n - 2)],
            "kernel_full": pd.Categorical(
                ['k<"a">\\', None, "=cmd|' /C calc'!A0", "é\x1b\u2028", *["k"] * (n - 4)]
            ),
            "count": pd.array([*list(range(n - 1)), None], dtype="Int64"),
            "registers": np.arange(n, dtype=np.int32),
            "mixed": [
                1,
                "a",
                2.5,
                None,
                math.nan,
                np.float64(3.0),
                np.int64(4),
                True,
                pd.NA,
                "b",
                7,
                math.inf,
                *[None] * (n - 12),
            ],
            "flag": [True, False] * (n // 2),
            "params": [{"batch_size": "8"}, [1, 2], *[None] * (n - 2)],
        }
    )
    meta = {"source": "x", "launches": n, "bad": math.nan, "np": np.float32(0.5)}
    _same(_after(meta, rows), _before(meta, rows), "table")
    _same(_after(meta, rows.iloc[:0]), _before(meta, rows.iloc[:0]), "empty")


def test_report_and_export_json_read_back_as_before(tmp_path):
    path = next((p for p in REPORTS if p.suffix == ".ncu-rep"), None)
    if path is None:
        pytest.skip("no shared .ncu-rep fixture")
    report = read_report(path)
    rows = report.view("launch")
    code, out, _ = run_in_process("report", path, "--by", "launch", "--json", "--no-cache")
    assert code == 0
    _same(json.loads(out), _before(run_meta(report), rows), "report --json")
    write_table(rows, tmp_path / "k.json", meta=run_meta(report))
    _same(
        json.loads((tmp_path / "k.json").read_text()),
        _before(run_meta(report), rows),
        "export .json",
    )


def test_whole_floats_are_written_as_python_writes_them():
    """Counts of FLOPs and bytes are whole floats: written from their int64 (the fast path), they
    must still be the text json.dumps gives, sign of -0.0 included, so each reads back as the same
    float, not an int."""
    values = [
        0.0,
        -0.0,
        1.0,
        -5.0,
        1e15,
        9999999999999998.0,
        -9999999999999998.0,
        2.0**52,
        123456789012345.0,
    ]
    values += [1e16, 2.0**60, 0.5, math.nan]  # past the fast path, or not whole: each still a float
    texts = float_text(np.array(values)).to_pylist()
    for value, text in zip(values, texts, strict=True):
        if math.isnan(value):
            assert text is None
            continue
        back = json.loads(text)
        assert (
            type(back) is float
            and back == value
            and math.copysign(1, back) == math.copysign(1, value)
        ), text
        if abs(value) < 1e16 and value == int(value):
            assert text == json.dumps(value), (text, json.dumps(value))


def test_chunks_encoded_by_several_threads_come_out_in_row_order():
    """Chunks are encoded in parallel (json_rows.in_ranges); the text is the one-chunk text, row for
    row."""
    report = read_report(REPORTS[0]) if REPORTS else None
    if report is None:
        pytest.skip("no shared fixture")
    rows = pd.concat(
        [report.view("launch")] * (200 // max(len(report.kernels), 1) + 1), ignore_index=True
    )
    rows["launch_id"] = np.arange(len(rows))
    whole = bytes(next(row_chunks(rows, chunk=len(rows))))
    pieces = [bytes(c) for c in row_chunks(rows, chunk=7)]
    assert len(pieces) > 8 and b",\n  ".join(pieces) == whole
    assert [r["launch_id"] for r in json.loads(b"[" + whole + b"]")] == list(range(len(rows)))


def test_columns_the_same_in_every_row_of_a_chunk_are_written_as_json_dumps_writes_them():
    rows = same_in_some_chunks()
    text = b",\n  ".join(bytes(c) for c in row_chunks(rows, chunk=4)).decode()
    # -0.0 keeps its sign
    assert text.split(",\n  ") == [json.dumps(r, allow_nan=False) for r in records(rows)]
