"""TableModel: sort on real values, filter by regex and bound, cells formatted only when asked
for."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from flopscope.tui.app.widgets.kernel_table import fit_cell
from flopscope.tui.presentation.columns import KERNEL_TABLE, table_columns
from flopscope.tui.presentation.table_model import Query, TableModel, parse_filter


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kernel": ["gemm<float>", "Copy", "gemm<half>", "reduce", None],
            "kernel_full": [
                "void gemm<float>(...)",
                "copy_kernel",
                "void gemm<half>(...)",
                "reduce [with T = int]",
                "",
            ],
            "count": [1, 2, 3, 4, 5],
            "duration_s": [5.0, 4.0, 3.0, 2.0, 1.0],
            "flop_per_s": [2e12, np.nan, 9e12, 2e12, 0.0],  # a tie, a NaN and a zero
            "bound": ["compute", "memory", "compute", "memory", ""],
        }
    )


def test_numeric_sort_matches_pandas_stable_sort_with_nan_last():
    model = TableModel(frame(), KERNEL_TABLE)
    for descending in (True, False):
        model.apply(Query(sort="flop_per_s", descending=descending))
        expected = frame().sort_values(
            "flop_per_s", ascending=not descending, na_position="last", kind="stable"
        )
        assert model.order.tolist() == expected.index.tolist()


def test_text_sort_and_unknown_column():
    model = TableModel(frame(), KERNEL_TABLE, Query(sort="kernel", descending=False))
    assert model.shown()["kernel"].tolist()[:4] == ["Copy", "gemm<float>", "gemm<half>", "reduce"]
    model.apply(Query(sort="no_such_column"))
    assert model.query.sort is None and model.order.tolist() == [0, 1, 2, 3, 4]


def test_filter_regex_case_insensitive_on_short_and_full_names():
    model = TableModel(frame(), KERNEL_TABLE, Query(pattern="GEMM"))
    assert model.order.tolist() == [0, 2]
    model.apply(Query(pattern=r"with T = int"))  # only in the full name
    assert model.order.tolist() == [3]
    model.apply(Query(pattern="copy", bound="compute"))
    assert len(model) == 0


def test_filter_and_sort_combine():
    model = TableModel(frame(), KERNEL_TABLE, Query(sort="flop_per_s", bound="compute"))
    assert model.order.tolist() == [2, 0]


def test_parse_filter():
    q = parse_filter("gemm<.*>  bound:memory", Query())
    assert (q.pattern, q.bound) == ("gemm<.*>", "memory") and q.text() == "gemm<.*> bound:memory"
    assert parse_filter("", q) == Query()
    with pytest.raises(ValueError, match="regular expression"):
        parse_filter("(", Query())
    with pytest.raises(ValueError, match="bound:"):
        parse_filter("bound:fast", Query())


def test_cells_are_formatted_lazily_and_blank_when_missing():
    model = TableModel(frame(), KERNEL_TABLE, Query(sort="duration_s", descending=False))
    cells = model.cells(0)  # the shortest: the row with no name
    by_name = dict(zip([c.name for c in KERNEL_TABLE], cells, strict=True))
    assert by_name["kernel"] == "" and by_name["duration_s"] == "1.00 s" and by_name["count"] == "5"
    assert len(model._cells) == 1  # nothing else was formatted


def test_index_of_and_row():
    model = TableModel(frame(), KERNEL_TABLE, Query(sort="duration_s", descending=False))
    assert model.index_of(0) == 4 and model.row(4)["kernel"] == "gemm<float>"
    model.apply(Query(pattern="copy"))
    assert model.index_of(0) is None


def test_columns_per_grouping():
    assert table_columns("nvtx")[0].title == "NVTX range"
    assert "launch_id" in [c.name for c in table_columns("launch")]
    assert "count" not in [c.name for c in table_columns("launch")]


def test_fit_cell_pads_and_cuts_by_cells():
    assert fit_cell("abc", 5) == "abc  " and fit_cell("abc", 5, right=True) == "  abc"
    assert fit_cell("abcdef", 4) == "abc…"
    assert fit_cell("核函数名", 5) == "核函…"  # wide characters count two cells


def test_uncopied_launch_table_shows_longest_first():
    """Report.group('launch', time_order=False) is the launches table in launch order; the model
    orders it."""
    from flopscope.core import read_report
    from flopscope.tui.presentation.columns import KERNEL_TABLE
    from flopscope.tui.presentation.table_model import TableModel

    from ..conftest import fixture_path

    report = read_report(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))
    rows = report.group("launch", time_order=False)
    assert rows is report.kernels
    shown = TableModel(rows, list(KERNEL_TABLE)).shown()
    assert shown["launch_id"].tolist() == report.group("launch")["launch_id"].tolist()


# -- names cut to a width stay different (the table's and the CLI's)
# -------------------------------------
def _fixture_names(*files: str) -> list[str]:
    from flopscope.core import read_report

    from ..conftest import fixture_path

    return [str(n) for f in files for n in read_report(fixture_path(f)).group("name")["kernel"]]


@pytest.mark.parametrize("width", [8, 12, 16, 20, 28, 36, 40, 60])
def test_distinct_cuts_keep_different_names_different(width):
    """Real names that share 39 characters (CUTLASS B2bGemm/Gemm) or 95 (two thrust agents): cut at
    the end they read alike; every cut here fits the width, differs from every other name's, and
    never doubles the ellipsis a name already has (`traits<…>`)."""
    from flopscope.tui.presentation.names import distinct_cuts

    names = _fixture_names(
        "a100pcie80_cutlass_gemm_full.ncu-rep",
        "h100pcie_ee384_cub_agents_full.ncu-rep",
        "h800_sglang_flashattn_full.ncu-rep",
    )
    cuts = distinct_cuts(names, width)
    shown = [cuts.get(n, n) for n in names]
    # the names are ASCII: a cell per character
    assert set(cuts) == {n for n in names if len(n) > width}
    assert all(len(s) <= width and "……" not in s for s in shown)
    assert len(set(shown)) == len(set(names))
    for name, cut in cuts.items():  # a cut keeps the name's start and marks what it left out
        assert "…" in cut and name.startswith(cut.split("…")[0])


def test_fit_cell_cuts_once_after_an_elided_template():
    assert fit_cell("flash_fwd_kernel<traits<…>, (bool)0>", 26) == "flash_fwd_kernel<traits<… "


def test_fit_brings_back_a_narrow_column_a_wide_one_made_room_for():
    """Drop by priority until the table fits, then refill: at 36 cells, A (5 cells) goes first, then
    B (10) still does not fit, and without B there is room for A again."""
    from flopscope.tui.presentation.columns import Column, fit

    cols = [
        Column("name", "Name", str, 0, 20, numeric=False),
        Column("a", "A", str, 2, 5),
        Column("b", "B", str, 2, 10),
        Column("c", "C", str, 1, 8),
    ]
    assert [c.name for c in fit(cols, 36)] == ["name", "a", "c"]  # 20+5+8 + 2 gaps = 35; with B 46
    # a blank column goes first
    assert [c.name for c in fit(cols, 37, blank={"c"})] == ["name", "a", "b"]
    # 20+10+1: no room for A or C
    assert [c.name for c in fit(cols, 36, keep={"b"})] == ["name", "b"]
    # 43 cells + 3 gaps: no gap after the last
    assert [c.name for c in fit(cols, 46)] == ["name", "a", "b", "c"]


def test_every_extra_column_has_a_title_of_its_own():
    """The sort picker lists columns by title: FP16- and FP8-accumulate-in-FP16 tensor FLOPs once
    read alike."""
    from flopscope.tui.presentation.columns import EXTRA_COLUMNS

    titles = [c.title for c in EXTRA_COLUMNS.values()]
    assert len(titles) == len(set(titles))
    assert EXTRA_COLUMNS["flop_tensor_fp16_acc16"].title != EXTRA_COLUMNS["flop_tensor_fp16"].title
