"""`Report.view_order` gives a view as its rows and the positions it shows them in, so an export can
write a million launches in order without a sorted copy of the table (tui/cli/view.cmd_export). The
order must be the view's, row for row: checked against the view made another way, with pandas' own
sort of a time-ordered copy, on real reports, every grouping, sorts by number and by text, both
directions, and `--top`."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from flopscope.core.export.cells import nested_as_json, whole_integers
from flopscope.core.export.write import write_table
from flopscope.core.report.report import GROUPINGS, in_order

from ..conftest import fixture_path
from ..helpers.real_files import report_of

REPORTS = ["h800_sglang_flashattn_full.ncu-rep", "b200_nvtx_apprange_details_sanitized.csv"]
SORTS = [
    (None, True, None),
    ("flop", True, None),
    ("dram_bytes", False, 7),
    ("kernel", False, None),
    (None, True, 3),
]


def _reference(
    report, by: str, sort: str | None, descending: bool, top: int | None
) -> pd.DataFrame:
    """The view as the app's first table was made: every row copied in time order (longest first,
    unknown last), then pandas' stable sort of that copy (text A-Z, unknown last either way), then
    its head."""
    rows = report.group(by, time_order=False)
    seconds = rows["duration_s"].to_numpy(dtype=float)
    unknown = np.isnan(seconds)
    timed = rows.iloc[np.lexsort((np.arange(len(rows)), np.where(unknown, 0.0, -seconds), unknown))]
    timed = timed.reset_index(drop=True)
    if sort:
        text = isinstance(timed[sort].dtype, pd.CategoricalDtype)
        timed = timed.sort_values(
            sort,
            ascending=not descending,
            na_position="last",
            kind="stable",
            key=(lambda col: col.astype(str)) if text else None,
        ).reset_index(drop=True)
    return timed.head(top) if top else timed


@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("by", list(GROUPINGS))
@pytest.mark.parametrize(("sort", "descending", "top"), SORTS)
def test_the_order_is_the_view_row_for_row(name, by, sort, descending, top):
    report = report_of(fixture_path(name))
    rows, order = report.view_order(by, sort=sort, top=top, descending=descending)
    expected = _reference(report, by, sort, descending, top)
    pd.testing.assert_frame_equal(in_order(rows, order), expected, check_exact=True)
    pd.testing.assert_frame_equal(
        report.view(by, sort=sort, top=top, descending=descending), expected
    )
    if by == "launch":
        assert rows is report.kernels  # the launches table itself: nothing copied


@pytest.mark.parametrize("ext", ["csv", "json", "parquet"])
def test_a_table_written_in_an_order_is_the_sorted_table_written(ext, tmp_path):
    """Each chunk takes its rows in the order (CSV, JSON; chunks of a few rows here, so an order
    crosses them); Parquet takes them first. The file is the one written from a sorted copy, byte
    for byte."""
    report = report_of(fixture_path(REPORTS[0]))
    rows, order = report.view_order("launch", sort="dram_bytes", descending=False)
    ordered = write_table(rows, tmp_path / f"ordered.{ext}", order=order)
    copied = write_table(in_order(rows, order), tmp_path / f"copied.{ext}")
    if ext == "parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(ordered), pd.read_parquet(copied))
    else:
        assert ordered.read_bytes() == copied.read_bytes()


def test_csv_and_json_chunks_take_an_order_that_crosses_them():
    from flopscope.core.export.csv_writer import write_csv
    from flopscope.core.export.json_writer import row_chunks

    report = report_of(fixture_path(REPORTS[0]))
    rows, order = report.view_order("launch", sort="flop")
    table = nested_as_json(whole_integers(rows))
    sorted_table = in_order(table, order)
    one, many = io.BytesIO(), io.BytesIO()
    write_csv(sorted_table, one)
    write_csv(table, many, chunk=3, order=order)
    assert many.getvalue() == one.getvalue()
    whole = b",\n  ".join(bytes(c) for c in row_chunks(sorted_table))
    assert b",\n  ".join(bytes(c) for c in row_chunks(table, chunk=3, order=order)) == whole
