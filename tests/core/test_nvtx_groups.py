"""Issue 19.6: NVTX ranges from `torch.autograd.profiler.emit_nvtx` group and diff by the range, not
by the call: its arguments (`seq`, `op_id`, `sizes`, `input_op_ids`, `stashed seq`) number every
call and record shapes, so left in, grouping the demo by NVTX gave 88 groups of 91 launches and a
diff across batch sizes matched nothing."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from flopscope.core import read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.common.nvtx_stack import decode_stack
from flopscope.core.store.run_store import Store
from flopscope.core.table.grouping import NO_RANGE
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import settle
from ..helpers.app import make_app, ready, regrouped, screen_lines
from ..helpers.cli import run_cli
from ..helpers.merged_ranges import grouped_stack
from ..helpers.nvtx_cells import ncu_stacks, page_stacks
from ..helpers.real_files import file_id, real_files
from ..helpers.real_files import report_of as report_cached
from ..helpers.renamed_range import RENAMED, renamed_page

ROOT = Path(__file__).resolve().parents[2]
H100 = ROOT / "tests" / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
BS8, BS32 = (
    H100 / "train_transformer_bf16_bs8.ncu-rep.xz",
    H100 / "train_transformer_bf16_bs32.ncu-rep.xz",
)
DEMO = ROOT / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"


@cache
def report_of(path: Path):
    return read_report(path)


def ranges(path: Path) -> set[str]:
    """The file's ranges by name: each range of a path cut at its first `, ` (emit_nvtx's arguments
    follow it; no range name of these files holds one otherwise)."""
    paths = report_of(path).kernels["nvtx"].dropna().astype(str).unique()
    return {"/".join(part.split(", ")[0] for part in p.split("/")) for p in paths}


def test_demo_grouped_by_nvtx_gives_one_row_per_range():
    report = report_of(DEMO)
    raw = report.kernels["nvtx"].nunique()
    rows = report.group("nvtx")
    assert raw == 88 and len(report.kernels) == 91  # the capture: nearly one path per launch
    assert len(rows) == len(ranges(DEMO)) < 50
    assert set(rows["nvtx"]) == ranges(DEMO)
    assert rows["count"].sum() == 91
    assert rows["duration_s"].sum() == report.kernels["duration_s"].sum()


async def test_demo_in_the_app_grouped_by_nvtx():
    app = make_app(report_of(DEMO))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("g", "g")
        await regrouped(app, pilot, "nvtx")
        assert len(app.kernels.model) == len(ranges(DEMO))


def test_diff_by_nvtx_across_batch_sizes_matches_the_ranges(tmp_path):
    both = ranges(BS8) & ranges(BS32)
    assert len(both) > 0.9 * len(ranges(BS8) | ranges(BS32))
    with Store(tmp_path / "flopscope.db") as store:
        store.save(report_of(BS8), "bs8")
        store.save(report_of(BS32), "bs32")
    done = run_cli("diff", "bs8", "bs32", "--by", "nvtx", "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert sorted(r["nvtx"] for r in rows if r["presence"] == "both") == sorted(both)


async def test_g_in_the_diff_compares_by_nvtx_and_back():
    a, b = report_of(BS8), report_of(BS32)
    app = FlopscopeApp(
        DiffScreen(diff_runs(a, b), "bs8", "bs32", (a.gpu_label, b.gpu_label), (a, b), (1, 2))
    )
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await settle(pilot, lambda: screen.model is not None)
        kernels = len(screen.model)
        await pilot.press("g")
        await settle(pilot, lambda: screen.by == "nvtx")
        assert len(screen.model) == len(ranges(BS8) | ranges(BS32))
        assert (screen.model.rows["presence"] == "both").sum() == len(ranges(BS8) & ranges(BS32))
        assert "by nvtx" in str(screen.query_one("#status").render())
        await pilot.press("g")
        await settle(pilot, lambda: screen.by == "name")
        assert len(screen.model) == kernels


# -- issue 40: grouped by the structured stack, not the joined label ----------------------------


def _group_key(ranges: list[dict] | None) -> tuple:
    return tuple(sorted((d["domain"] or "", tuple(d["ranges"])) for d in ranges or []))


@pytest.mark.parametrize("path", real_files(), ids=file_id)
def test_by_nvtx_groups_are_the_pages_stacks_launch_for_launch(path, request, tmp_path):
    """Every real file: one group per distinct stack read from ncu's own page with `csv` (a
    .ncu-rep's page exported by the real ncu), with as many launches; each group's launches are
    that many."""
    ncu = request.getfixturevalue("real_ncu") if ".ncu-rep" in path.name else []
    stacks = ncu_stacks(path, ncu, tmp_path)
    expected = Counter(grouped_stack(s) for s in stacks.values())
    report = report_cached(path)
    rows = report.group("nvtx")
    several_gpus = isinstance(report.judged_by, dict)
    got = Counter()
    for _, row in rows.iterrows():
        got[_group_key(row["nvtx_ranges"])] += int(row["count"])
        assert len(report.launches_of(row, "nvtx")) == row["count"]
    assert got == expected
    if not several_gpus:  # a stack's launches on two GPUs are two rows
        assert len(rows) == len(expected)


def test_a_slash_in_a_range_name_stays_in_the_name_and_json_rows_carry_the_list(tmp_path):
    """The H100 step with `attn` renamed `attn/qkv:proj`: its own group, the name whole in the
    `nvtx_ranges` list of `report --by nvtx --json`, as many launches as the page has under it."""
    page = renamed_page(tmp_path)
    under = sum(
        RENAMED in names for stack in page_stacks(page).values() for names in stack.values()
    )
    done = run_cli("report", page, "--by", "nvtx", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    named = [r for r in rows if any(RENAMED in d["ranges"] for d in r["nvtx_ranges"] or [])]
    assert named and sum(r["count"] for r in named) == under
    assert not any("qkv:proj" in d["ranges"] for r in rows for d in r["nvtx_ranges"] or [])
    assert all(r["nvtx_ranges"] is None for r in rows if r["nvtx"] == NO_RANGE)
    # a filter reads the list as its text
    done = run_cli("report", page, "--by", "nvtx", "--where", "nvtx_ranges ~ qkv:proj", "--json")
    assert done.returncode == 0, done.stderr
    holding = [r for r in rows if "qkv:proj" in json.dumps(r["nvtx_ranges"])]  # backward's too
    assert len(json.loads(done.stdout)["rows"]) == len(holding) > len(named)


async def test_the_kernel_screens_nvtx_line_shows_the_ranges_whole(tmp_path):
    """A launch under the renamed range: the Kernel screen's NVTX line lists its ranges joined by
    ` > `, `attn/qkv:proj` one of them."""
    report = read_report(renamed_page(tmp_path))
    stack = next(s for s in report.kernels["nvtx_stack"] if isinstance(s, str) and RENAMED in s)
    ranges = dict(decode_stack(stack))[""]
    app = make_app(report, by="launch")
    async with app.run_test(size=(160, 60)) as pilot:
        await ready(app, pilot)
        table = app.kernels.query_one(KernelTable)
        row = int(np.flatnonzero(app.kernels.model.rows["nvtx_stack"].astype(object) == stack)[0])
        table.cursor_row = list(app.kernels.model.order).index(row)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        await pilot.pause()
        text = " ".join(" ".join(line.split()) for line in screen_lines(app))
    assert " > ".join(ranges) in text
