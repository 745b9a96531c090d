"""Issue 19.6: NVTX ranges from `torch.autograd.profiler.emit_nvtx` group and diff by the range, not
by the call: its arguments (`seq`, `op_id`, `sizes`, `input_op_ids`, `stashed seq`) number every
call and record shapes, so left in, grouping the demo by NVTX gave 88 groups of 91 launches and a
diff across batch sizes matched nothing."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from flopscope.core import read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.screens.diff import DiffScreen

from ..conftest import settle
from ..helpers.app import make_app, ready, regrouped
from ..helpers.cli import run_cli

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
