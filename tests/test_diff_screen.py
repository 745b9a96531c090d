"""The diff of two runs in the app: one row per kernel group, largest time change first; export writes them.
And the diff itself where ncu recorded nothing: unknown stays unknown."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from flopscope.core import read_report
from flopscope.core.diff import diff_runs
from flopscope.core.store import Store
from flopscope.tui import format as fmt
from flopscope.tui.screen_app import ScreenApp
from flopscope.tui.screens.diff import DiffScreen
from flopscope.tui.screens.help import HelpScreen
from flopscope.tui.screens.prompt import PromptScreen
from textual.widgets import DataTable, Input

from .conftest import fixture_path
from .test_app import screen_lines
from .test_sweep import cli

H100 = "h100pcie_ee384_cub_agents_full.ncu-rep"
MW = "v100_ncar_miniweather_fp64_full.ncu-rep"
H800 = "h800_sglang_flashattn_full.ncu-rep"  # its flash_fwd launch: ncu recorded no values


@pytest.fixture
def rows() -> pd.DataFrame:
    return diff_runs(read_report(fixture_path(H100)), read_report(fixture_path(MW)))


async def test_rows_keys_and_export(tmp_path, rows):
    app = ScreenApp(DiffScreen(rows, "h100", "mw"))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(rows)
        first = [str(c) for c in table.get_row_at(0)]
        assert first[0] == str(rows["kernel"].iloc[0])  # the cell holds the whole name; only its display is cut
        assert first[[c.key.value for c in table.ordered_columns].index("presence")] == rows["presence"].iloc[0]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("e")
        assert isinstance(app.screen, PromptScreen)
        out = tmp_path / "diff.csv"
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        for _ in range(100):
            if out.exists():
                break
            await pilot.pause(0.05)
        written = pd.read_csv(out)
        assert written["kernel"].tolist() == rows["kernel"].astype(str).tolist()  # full names, not ellipsized
        assert written["duration_s_delta"].tolist() == pytest.approx(rows["duration_s_delta"].tolist())
        await pilot.press("q")


def times_by_name(report) -> pd.Series:
    """Kernel time per full name, summed from the launches (not from diff_runs)."""
    return report.kernels.groupby(report.kernels["kernel_full"].astype(str), observed=True)["duration_s"].sum()


def short_names(*reports) -> dict[str, str]:
    return {str(f): str(k) for r in reports for f, k in zip(r.kernels["kernel_full"], r.kernels["kernel"],
                                                             strict=True)}


async def test_at_80x24_the_times_sit_beside_the_names_and_the_gpus_head_the_screen():
    a, b = read_report(fixture_path(H100)), read_report(fixture_path(MW))
    time_a, time_b = times_by_name(a), times_by_name(b)
    short = short_names(a, b)
    app = ScreenApp(DiffScreen(diff_runs(a, b), "h100", "mw", (a.meta["gpu"], b.meta["gpu"])))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        text = "\n".join(lines)
        assert "A = h100 (NVIDIA H100 PCIe) · B = mw (Tesla V100-SXM2-32GB)" in text
        assert "! different GPUs (NVIDIA H100 PCIe vs Tesla V100-SXM2-32GB)" in text
        header = next(i for i, line in enumerate(lines) if "Time A" in line)
        assert "ΔTime" in lines[header]
        width = app.screen.query_one(DataTable).ordered_columns[0].width
        checked = 0
        for line in lines[header + 1:]:
            cell = line[1:1 + width].rstrip()
            # The name as shown: whole, or cut with an ellipsis at the column's edge (then maybe ambiguous).
            names = [f for f, k in short.items() if k == cell or (cell.endswith("…") and k.startswith(cell[:-1]))]
            if not cell or not names:
                continue
            expected = [(fmt.seconds(time_a.get(f, math.nan)), fmt.seconds(time_b.get(f, math.nan)),
                         fmt.seconds(time_b.get(f, 0.0) - time_a.get(f, 0.0))) for f in names]
            assert any(all(s in line for s in numbers) for numbers in expected), (cell, line, expected)
            checked += 1
        assert checked >= 10
        assert any("…" in line for line in lines[header + 1:])  # the long thrust/cub names are cut to make room


async def test_same_gpu_shows_no_warning_and_wide_terminals_show_whole_names():
    a = read_report(fixture_path(H100))
    rows = diff_runs(a, a)
    app = ScreenApp(DiffScreen(rows, "x", "y", (a.meta["gpu"], a.meta["gpu"])))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "different GPUs" not in "\n".join(screen_lines(app))
        longest = max(rows["kernel"].astype(str), key=len)
        assert longest not in "\n".join(screen_lines(app))
        await pilot.resize_terminal(300, 40)
        await pilot.pause()
        assert longest in "\n".join(screen_lines(app))


def test_unknown_on_either_side_stays_unknown():
    """The H800 flash_fwd launch has no values: compared with itself, its change is unknown, not 0."""
    report = read_report(fixture_path(H800))
    launches = report.kernels
    dead = launches[launches["status"].astype(str).str.startswith("not profiled")]
    assert len(dead) == 1 and dead[["duration_s", "flop", "dram_bytes"]].isna().all(axis=None)
    rows = diff_runs(report, report).set_index("kernel_full")
    flash = rows.loc[dead["kernel_full"].iloc[0]]
    for col in ("duration_s", "flop", "dram_bytes", "flop_per_s"):
        assert math.isnan(flash[f"{col}_delta"]) and math.isnan(flash[f"{col}_ratio"]), col
    assert flash["count_delta"] == 0 and flash["count_ratio"] == 1  # the launch count is known
    known = rows.drop(index=dead["kernel_full"].iloc[0]).iloc[0]
    assert known["flop_delta"] == 0 and known["flop_ratio"] == 1


def test_a_kernel_one_run_lacks_counts_as_zero_there_but_its_unknown_time_stays_unknown():
    a, b = read_report(fixture_path(H100)), read_report(fixture_path(H800))
    rows = diff_runs(a, b).set_index("kernel_full")
    only_a = time_a = times_by_name(a)
    for name, seconds in only_a.items():
        assert rows.loc[name, "duration_s_delta"] == pytest.approx(-seconds, rel=1e-12)
        assert rows.loc[name, "duration_s_ratio"] == 0
        assert math.isnan(rows.loc[name, "flop_per_s_delta"])  # a rate of a kernel that never ran: undefined
    flash = rows[rows["kernel"].astype(str).str.startswith("flash_fwd")].iloc[0]
    assert flash["presence"] == "only in B" and math.isnan(flash["duration_s_delta"])
    assert len(time_a) == (rows["presence"] == "only in A").sum()


def test_cli_diff_json_says_null_for_unknown(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    store = Store()
    report = read_report(fixture_path(H800))
    store.save(report, "one")
    store.save(report, "two")
    store.close()
    out = cli("diff", "one", "two", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {r["kernel"]: r for r in json.loads(out.stdout)["rows"]}  # strict JSON: no NaN
    flash = next(r for name, r in rows.items() if name.startswith("flash_fwd"))
    assert flash["flop_delta"] is None and flash["duration_s_delta"] is None and flash["flop_ratio"] is None
    assert flash["count_delta"] == 0
