"""Issue 41.5: names are cut where they differ, not at a fixed width, in every view. CUTLASS short
names keep the tile shape and element type their elided template arguments hold; NVTX rows keep the
words they differ by (no `autograd::engine::evaluate_function…#1`); a runs list keeps
`batch_size=16` and `=1024` apart in every column."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.core.store.run_store import Store
from flopscope.tui.app.launch import runs_app
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import fixture_path
from ..helpers.app import make_app, ready, regrouped
from ..helpers.cli import run_cli
from ..helpers.real_files import DEMO, H100

CUTLASS = [
    "a100pcie80_cutlass_gemm_full.ncu-rep",
    "rtx5090_dsocr_cutlass_gemm_details.csv",
    "v100_cutlass_gemm_nersc_flops_details.csv",
]
# those these files' GEMMs use
ELEMENT = {"signed char": "s8", "cutlass::half_t": "f16", "float": "f32"}


def _tile_and_element(full: str) -> tuple[str, str] | None:
    """The first `GemmShape<(int)M, (int)N, (int)K>` of a CUTLASS signature as `MxNxK`, and the
    first element type among its template arguments, found by reading the text from left to
    right."""
    at = full.find("GemmShape<")
    if at < 0:
        return None
    inside = full[at + len("GemmShape<") : full.index(">", at)]
    tile = "x".join(part.replace("(int)", "").strip() for part in inside.split(","))
    first = min(
        (full.find(f", {t},"), t) for t in ELEMENT if f", {t}," in full
    )  # `MatrixShape<...>, signed char, ...`: an iterator's element
    return tile, ELEMENT[first[1]]


def _paths(name: str) -> Path:
    return DEMO if name == "demo" else fixture_path(name)


@pytest.mark.parametrize("name", CUTLASS)
def test_cutlass_short_names_keep_tile_and_element_type(name):
    """Before: `cutlass::Kernel<cutlass::gemm::kernel::Gemm<…>>` even in full-width output. Now the
    short name (the `kernel` column of --json and exports) and the 200-column table hold the
    threadblock tile and element type, read here from the full signature."""
    path = fixture_path(name)
    out = run_cli("report", path, "--json")
    rows = json.loads(out.stdout)["rows"]
    table = run_cli("report", path, columns=200).stdout
    checked = 0
    for row in rows:
        found = _tile_and_element(row["kernel_full"])
        if found is None:
            continue
        tile, element = found
        assert f"{tile} {element}" in row["kernel"], row["kernel"]
        assert row["kernel"] in table
        checked += 1
    assert checked == sum("GemmShape<" in r["kernel_full"] for r in rows)


def _names_in_table(stdout: str, first_title: str) -> list[str]:
    lines = stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(first_title + "  "))
    end = next(i for i in range(at, len(lines)) if " row(s) · " in lines[i])
    title = lines[at]
    width = len(title) - len(title[len(first_title) :].lstrip())  # the name column and its gap
    return [line[:width].rstrip() for line in lines[at + 1 : end]]


@pytest.mark.parametrize("columns", [80, 160])
@pytest.mark.parametrize(
    ("name", "by"), [*((n, "name") for n in CUTLASS), ("demo", "name"), ("demo", "nvtx")]
)
def test_the_printed_table_shows_distinct_text_for_distinct_rows(name, by, columns):
    """At 80 and 160 columns every two rows of the CLI's table read differently, NVTX ranges
    included, with no numbered fallback (`…#1`) where the words that differ fit."""
    path = _paths(name)
    out = run_cli("report", path, "--by", by, columns=columns)
    assert out.returncode == 0, out.stderr
    shown = _names_in_table(out.stdout, "NVTX range" if by == "nvtx" else "Kernel")
    rows = json.loads(run_cli("report", path, "--by", by, "--json").stdout)["rows"]
    assert len(shown) == len(rows) == len(set(shown)), shown
    assert not any(re.search(r"…#\d+$", s) for s in shown), shown


async def _app_names(path: Path, by: str, width: int) -> tuple[list[str], list[str]]:
    app = make_app(read_report(path), by=by)
    async with app.run_test(size=(width, 24 if width == 80 else 48)) as pilot:
        screen = await ready(app, pilot)
        if screen.by != by:
            await regrouped(app, pilot, by)
        table = screen.query_one(KernelTable)
        column = "nvtx" if by == "nvtx" else "kernel"
        names = [str(n) for n in screen.model.rows[column]]
        return names, [table.shown_text(column, n) for n in names]


@pytest.mark.parametrize("width", [80, 160])
@pytest.mark.parametrize(
    ("name", "by"), [*((n, "name") for n in CUTLASS), ("demo", "name"), ("demo", "nvtx")]
)
async def test_the_app_table_shows_distinct_text_for_distinct_rows(name, by, width):
    names, shown = await _app_names(_paths(name), by, width)
    assert len(set(shown)) == len(set(names)) == len(names), shown
    assert not any(re.search(r"…#\d+$", s) for s in shown), shown


async def test_nvtx_rows_keep_the_op_they_differ_by():
    """`autograd::engine::evaluate_function: ToCopyBackward0/.../backward/attn` and
    `.../mlp/backward/mlp.0` read `autograd::engine::evaluate_function…#1` and `…#2` at 80 columns;
    now each shows the end it differs by."""
    names, shown = await _app_names(DEMO, "nvtx", 80)
    cut = dict(zip(names, shown, strict=True))
    to_copy = [
        n for n in names if n.startswith("autograd::engine::evaluate_function: ToCopyBackward0")
    ]
    assert len(to_copy) >= 3
    for name in to_copy:
        last = name.rsplit("/", 1)[-1]  # attn, mlp.0, mlp.2: where these ranges differ
        assert cut[name].endswith(last), (name, cut[name])


RUN_NAMES = [f"linear_h100-batch_size={n}" for n in (1, 16, 1024, 1536)]


@pytest.fixture
def sweep_store(tmp_path) -> Path:
    """Four stored runs of one sweep, with parameters `batch_size=1`, `=16`, `=1024`, `=1536`."""
    report = read_report(H100 / "linear_bs1.ncu-rep.xz")
    with Store(tmp_path / "flopscope.db") as store:
        for name in RUN_NAMES:
            batch = int(name.rsplit("=", 1)[1])
            store.save(report, name, sweep="linear_h100", params={"batch_size": batch})
    return tmp_path


@pytest.mark.parametrize("width", [60, 80])
async def test_the_runs_list_keeps_parameters_apart(sweep_store, width):
    """`batch_size=1024` and `batch_size=1536` cut at the end both read `batch_size=1…` in a narrow
    Params column: every text column of the runs list is cut so that different values stay
    different."""
    app = runs_app(sweep_store / "flopscope.db")
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        screen = app.first
        table = screen.query_one(KernelTable)
        for _, column, _ in table.layout_columns:
            if column.numeric:
                continue
            texts = screen.model.texts(column)
            shown = {table.shown_text(column.name, t) for t in texts}
            assert len(shown) == len(texts), (column.name, shown)
