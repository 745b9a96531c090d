"""Issue 19.2: different kernels never read the same. On every real file we have (the shared ncu
fixtures, the H100 capture, the bundled demo), distinct full names get distinct names wherever a
name is shown: the `kernel` column (CSV, JSON), the printed table (`--no-tui`), the app's table at
80 and 120 columns, the diff, and the run list."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.launch import runs_app
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.cli.runs import _DIFF_COLUMNS, _diff_cells
from flopscope.tui.presentation.diff_text import table_rows
from flopscope.tui.presentation.text_report import fitted_table, printed_kernel_table

from ..conftest import settle
from ..helpers.app import make_app, ready
from ..helpers.cli import run_cli
from ..helpers.real_files import DEMO, H100, file_id, real_files, report_of

WIDTHS = [80, 120]

FILES = real_files()
# Files of several kernel names: the app's table (a Pilot run each) is checked on these. (the H100
# capture's CSVs hold the kernels of its .ncu-rep files; the demo is its bf16 batch-8 report).
MANY = [
    p
    for p in FILES
    if p.name.startswith(("train_", "h100pcie_ee384", "a100pcie40", "v100_", "h100pcie_robo"))
    and not p.name.endswith(".csv.gz")
    and p.name != DEMO.name
] + [DEMO]


def collide(full: list[str], shown: list[str]) -> dict[str, list[str]]:
    """Shown names that stand for more than one full name."""
    seen: dict[str, set[str]] = {}
    for f, s in zip(full, shown, strict=True):
        seen.setdefault(str(s), set()).add(f)
    return {s: sorted(fs) for s, fs in seen.items() if len(fs) > 1}


def cells(table, column: int = 0) -> list[str]:
    return [row[column] for row in table.rows]


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_short_names_and_printed_table_keep_kernels_apart(path):
    report = report_of(path)
    rows = report.group("name")
    full = [str(f) for f in rows["kernel_full"]]
    assert len(set(full)) == len(rows)  # grouped by full name: one row each
    assert not collide(full, list(rows["kernel"]))
    for width in WIDTHS:
        table, _ = printed_kernel_table(rows, width)
        assert not collide(full, cells(table)), width


def test_demo_csv_names_the_elementwise_kernels_apart(tmp_path):
    """The demo's `direct_copy_kernel_cuda` and `CUDAFunctor_add<c10::BFloat16>` rows read the same
    in the CSV."""
    out = tmp_path / "k.csv"
    done = run_cli("export", DEMO, "-o", out)
    assert done.returncode == 0, done.stderr
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert not collide([r["kernel_full"] for r in rows], [r["kernel"] for r in rows])
    copy = next(
        r["kernel"]
        for r in rows
        if "gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda" in r["kernel_full"]
        and "elementwise_kernel<(int)128, (int)4" in r["kernel_full"]
    )
    assert "direct_copy_kernel_cuda" in copy


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", MANY, ids=file_id)
async def test_app_table_keeps_kernels_apart(path, width):
    report = report_of(path)
    app = make_app(report)
    async with app.run_test(size=(width, 24 if width == 80 else 40)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        rows = screen.model.rows
        shown = [table.shown_text("kernel", str(k)) for k in rows["kernel"]]
        assert all(len(s) <= width for s in shown)
        assert not collide([str(f) for f in rows["kernel_full"]], shown)


PAIRS = [
    ("train_transformer_bf16_bs8.ncu-rep.xz", "train_transformer_bf16_bs32.ncu-rep.xz"),
    ("train_resnet_bs8.ncu-rep.xz", "train_transformer_bf16_bs8.ncu-rep.xz"),
    ("train_transformer_bs8.ncu-rep.xz", "train_transformer_bf16_bs8.ncu-rep.xz"),
]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-vs-{p[1]}")
async def test_diff_keeps_kernels_apart(pair):
    a, b = (report_of(H100 / name) for name in pair)
    rows = diff_runs(a, b)
    full = [str(f) for f in rows["kernel_full"]]
    assert not collide(full, list(rows["kernel"]))
    shown = table_rows(rows)
    for width in WIDTHS:
        table, _ = fitted_table(_DIFF_COLUMNS, [_diff_cells(r) for r in shown.itertuples()], width)
        assert not collide([str(f) for f in shown["kernel_full"]], cells(table)), width
        app = FlopscopeApp(DiffScreen(rows, "a", "b", (a.gpu_label, b.gpu_label), (a, b), (1, 2)))
        async with app.run_test(size=(width, 24)) as pilot:
            await settle(pilot, lambda app=app: app.screen.model is not None)
            table = app.screen.query_one(KernelTable)
            model = app.screen.model
            names = [str(model.rows["kernel"].iat[i]) for i in range(len(model.rows))]
            assert not collide(
                [str(f) for f in model.rows["kernel_full"]],
                [table.shown_text("kernel", n) for n in names],
            ), width


RUN_NAMES = [f"train_transformer_bf16_seq128_sweep-batch_size={n}" for n in (1, 1024, 16, 8)]


@pytest.fixture
def runs_store(tmp_path) -> Path:
    report = read_report(H100 / "linear_bs1.ncu-rep.xz")
    with Store(tmp_path / "flopscope.db") as store:
        for name in RUN_NAMES:
            store.save(report, name)
    return tmp_path


@pytest.mark.parametrize("width", WIDTHS)
async def test_run_list_keeps_runs_apart(runs_store, width):
    done = run_cli("runs", "--no-tui", home=runs_store, columns=width)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.split()[0].isdigit()]
    assert len({line.split()[1] for line in lines}) == len(RUN_NAMES), done.stdout
    app = runs_app(runs_store / "flopscope.db")
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        names = [str(app.first.model.rows["name"].iat[i]) for i in range(len(RUN_NAMES))]
        assert len({table.shown_text("name", n) for n in names}) == len(RUN_NAMES)
