"""The diff of two runs in the app: one row per kernel group, largest time change first; export
writes them. And the diff itself where ncu recorded nothing: unknown stays unknown."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest
from flopscope.core import Report, read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.help import HelpScreen
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.kernel_pair import KernelPairScreen
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.presentation import format as fmt
from textual.widgets import Input

from ..conftest import fixture_path, settle
from ..helpers.app import focus_column, make_app, ready, screen_lines, shown_cells, wait_for_rows
from ..helpers.sweep import cli

H100 = "h100pcie_ee384_cub_agents_full.ncu-rep"
MW = "v100_ncar_miniweather_fp64_full.ncu-rep"
H800 = "h800_sglang_flashattn_full.ncu-rep"  # its flash_fwd launch: ncu recorded no values


def signed(seconds: float) -> str:
    return ("+" if seconds > 0 else "") + fmt.seconds(seconds)


@pytest.fixture
def rows() -> pd.DataFrame:
    return diff_runs(read_report(fixture_path(H100)), read_report(fixture_path(MW)))


async def test_rows_keys_and_export(tmp_path, rows):
    app = FlopscopeApp(DiffScreen(rows, "h100", "mw"))
    async with app.run_test(size=(80, 24)) as pilot:
        table = await wait_for_rows(pilot, app.screen)
        assert len(table.model) == len(rows)
        assert [str(table.model.row(i)["kernel"]) for i in range(len(rows))] == rows[
            "kernel"
        ].astype(str).tolist()
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        listed = app.screen.text()
        # Every key listed does something: no DataTable "Select" that selects nothing.
        assert (
            "Select" not in listed
            and "Sort" in listed
            and "Filter" in listed
            and "Column right" in listed
        )
        assert "Open" not in listed  # without the two reports there is nothing to open
        await pilot.press("escape")
        await pilot.press("e")
        assert isinstance(app.screen, PromptScreen)
        out = tmp_path / "diff.csv"
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot, out.exists)
        written = pd.read_csv(out)
        # diff_runs' columns, not the display ones
        assert written.columns.tolist() == rows.columns.tolist()
        # full names, not ellipsized
        assert written["kernel"].tolist() == rows["kernel"].astype(str).tolist()
        assert written["duration_s_delta"].tolist() == pytest.approx(
            rows["duration_s_delta"].tolist()
        )
        await pilot.press("q")


def times_by_name(report) -> pd.Series:
    """Kernel time per full name, summed from the launches (not from diff_runs)."""
    return report.kernels.groupby(report.kernels["kernel_full"].astype(str), observed=True)[
        "duration_s"
    ].sum()


def short_names(*reports) -> dict[str, str]:
    return {
        str(f): str(k)
        for r in reports
        for f, k in zip(r.kernels["kernel_full"], r.kernels["kernel"], strict=True)
    }


async def test_at_80x24_the_times_sit_beside_the_names_and_the_gpus_head_the_screen():
    a, b = read_report(fixture_path(H100)), read_report(fixture_path(MW))
    time_a, time_b = times_by_name(a), times_by_name(b)
    short = short_names(a, b)
    app = FlopscopeApp(DiffScreen(diff_runs(a, b), "h100", "mw", (a.meta.gpu, b.meta.gpu)))
    async with app.run_test(size=(80, 24)) as pilot:
        table = await wait_for_rows(pilot, app.screen)
        text = "\n".join(screen_lines(app))
        assert "A = h100 (NVIDIA H100 PCIe) · B = mw (Tesla V100-SXM2-32GB)" in text
        assert "! different GPUs (NVIDIA H100 PCIe vs Tesla V100-SXM2-32GB)" in text
        header = table.visible_text()[0]
        assert all(title in header for title in ("Kernel", "Time A", "Time B", "ΔTime", "Only in"))
        assert set(a.kernels["kernel_full"]).isdisjoint(b.kernels["kernel_full"])
        # no kernel ran in both: a column of blanks gives its room to numbers
        assert "B/A" not in header
        assert all(len(line) <= 80 for line in screen_lines(app))
        checked = 0
        for cells in shown_cells(table):
            cell = cells["kernel"]
            # The name as shown: whole, or cut with an ellipsis at the column's edge (then maybe
            # ambiguous).
            names = [f for f, k in short.items() if shown_as(cell, k)]
            expected = [
                (
                    fmt.seconds(time_a.get(f, math.nan)),
                    fmt.seconds(time_b.get(f, math.nan)),
                    # B took longer: `+`, as the totals line
                    signed(time_b.get(f, 0.0) - time_a.get(f, 0.0)),
                )
                for f in names
            ]
            assert (
                cells["duration_s_a"],
                cells["duration_s_b"],
                cells["duration_s_delta"],
            ) in expected, cells
            # Every kernel ran in one run only: no B/A (0 or infinite), and which run ran it.
            assert cells.get("time_ratio", "") == "" and cells["only_in"] == (
                "A" if names[0] in time_a else "B"
            )
            checked += 1
        assert checked == len(time_a) + len(time_b)
        # long thrust/cub names are cut
        assert any(c["kernel"].endswith("…") for c in shown_cells(table))
        # Numbers right-aligned: a time ends at its column's right edge (they were left-aligned).
        start = sum(w + 1 for _, _, w in table.layout_columns[:2])  # where Time B starts
        width = table.layout_columns[2][2]
        raw = [
            line[start : start + width]
            for line in table.visible_text()[1:]
            if line[start : start + width].strip()
        ]
        assert len(raw) == len(time_b) and all(cell[-1] != " " and cell[0] == " " for cell in raw)


async def test_same_gpu_shows_no_warning_and_wide_terminals_show_whole_names():
    a = read_report(fixture_path(H100))
    rows = diff_runs(a, a)
    app = FlopscopeApp(DiffScreen(rows, "x", "y", (a.meta.gpu, a.meta.gpu)))
    async with app.run_test(size=(80, 24)) as pilot:
        table = await wait_for_rows(pilot, app.screen)
        assert "different GPUs" not in "\n".join(screen_lines(app))
        longest = max(rows["kernel"].astype(str), key=len)
        assert longest not in "\n".join(screen_lines(app))
        # Both ran every kernel: B/A is 1.00 in the app's one ratio format, and no "Only in".
        assert {(c.get("time_ratio", ""), c.get("only_in", "")) for c in shown_cells(table)} == {
            (fmt.ratio(1.0), "")
        }
        assert fmt.ratio(1.0) == "1.00"
        await pilot.resize_terminal(300, 40)
        await pilot.pause()
        assert longest in "\n".join(screen_lines(app))


def run_times(report) -> float:
    """A run's kernel time as `flopscope runs` means it: the launches ncu profiled, summed from the
    raw table here (the unprofiled one is counted, not summed)."""
    k = report.kernels
    return float(k.loc[k["status"].astype(str) == "ok", "duration_s"].sum())


async def test_the_header_totals_agree_with_the_run_list(tmp_path):
    """H800's flash_fwd launch was not profiled: the run list says 87.1 us for the run, and so must
    the diff (it said `kernel time n/a -> n/a (n/a)`)."""
    a, b = read_report(fixture_path(H800)), read_report(fixture_path(H100))
    store = Store(tmp_path / "flopscope.db")
    store.save(a, "h800run")
    store.save(b, "other")
    runs = store.runs().set_index("name")
    listed, lower = runs["total_time_s"], runs["lower_bounds"]
    store.close()
    assert listed["h800run"] == pytest.approx(run_times(a), rel=1e-12)
    assert fmt.seconds(run_times(a)) == "87.1 us"
    # The list marks H800's time a lower bound (`≥ 87.1 us`): one launch has no status ok, so no
    # time.
    assert (a.kernels["status"].astype(str) != "ok").sum() == 1
    assert "total_time_s" in lower["h800run"] and "total_time_s" not in lower["other"]
    change = fmt.seconds(listed["other"] - listed["h800run"])
    # A's time a lower bound makes B - A an upper one: `≤ +6.67 ms`; swapped, a lower one.
    expected = [
        (a, b, f"kernel time ≥ 87.1 us -> {fmt.seconds(listed['other'])} (≤ +{change})"),
        (b, a, f"kernel time {fmt.seconds(listed['other'])} -> ≥ 87.1 us (≥ -{change})"),
    ]
    for x, y, line in expected:
        app = FlopscopeApp(DiffScreen(diff_runs(x, y), "x", "y"))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for_rows(pilot, app.screen)
            text = " ".join(" ".join(screen_lines(app)).split())
            assert line in text
            assert (
                f"launches ncu did not profile (not in the times): {'A' if x is a else 'B'} 1"
                in text
            )
    out = cli("diff", "h800run", "other", "--no-tui", home=tmp_path)
    assert expected[0][2] in " ".join(out.stdout.split())


@pytest.fixture
def h100_mw():
    a, b = read_report(fixture_path(H100)), read_report(fixture_path(MW))
    # B: MW's launches and those of three of A's kernels, so rows are only in A, only in B, or in
    # both.
    shared = (
        a.kernels["kernel_full"].astype(str).isin(a.kernels["kernel_full"].astype(str).unique()[:3])
    )
    kernels = pd.concat([b.kernels, a.kernels[shared]], ignore_index=True)
    kernels["kernel_full"] = kernels["kernel_full"].astype(str)
    kernels["kernel"] = kernels["kernel"].astype(str)
    both = Report(meta=b.meta, kernels=kernels, gpu=b.gpu)
    return a, both


async def test_s_sorts_slash_filters_and_enter_opens_the_group_in_its_run(h100_mw):
    a, b = h100_mw
    rows = diff_runs(a, b)
    app = FlopscopeApp(DiffScreen(rows, "a", "b", reports=(a, b)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        table = await wait_for_rows(pilot, screen)
        await pilot.press("l", "l", "l")  # to ΔTime
        assert table.focused_column.name == "duration_s_delta"
        await pilot.press("s")
        shown = [table.model.row(i)["duration_s_delta"] for i in range(len(table.model))]
        known = [v for v in shown if not math.isnan(v)]
        assert known == sorted(known, reverse=True) and "sort ΔTime↓" in str(
            screen.query_one("#status").render()
        )
        await pilot.press("s")
        shown = [
            v
            for v in (table.model.row(i)["duration_s_delta"] for i in range(len(table.model)))
            if not math.isnan(v)
        ]
        assert shown == sorted(shown)
        # enter on a kernel only A ran opens A's group; on one both ran, B's.
        only_a = next(
            i for i in range(len(table.model)) if table.model.row(i)["presence"] == "only in A"
        )
        table.cursor_row = only_a
        name = table.model.row(only_a)["kernel_full"]
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelScreen))
        expected = a.kernels[a.kernels["kernel_full"] == name]
        assert app.screen.row["kernel_full"] == name and app.screen.row["count"] == len(expected)
        assert app.screen.row["duration_s"] == pytest.approx(
            expected["duration_s"].sum(), rel=1e-12
        )
        await pilot.press("escape")
        # On one both ran: A's group and B's, side by side (issue 19: "the diff's enter shows A and
        # B").
        both = next(i for i in range(len(table.model)) if table.model.row(i)["presence"] == "both")
        table.cursor_row = both
        name = table.model.row(both)["kernel_full"]
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelPairScreen))
        for row, run in zip(app.screen.rows, (a, b), strict=True):
            expected = run.kernels[run.kernels["kernel_full"] == name]
            assert row["kernel_full"] == name and row["count"] == len(expected)
            assert row["duration_s"] == pytest.approx(expected["duration_s"].sum(), rel=1e-12)
        text = "\n".join(screen_lines(app))
        times = [
            fmt.seconds(r.kernels.loc[r.kernels["kernel_full"] == name, "duration_s"].sum())
            for r in (a, b)
        ]
        assert re.search(rf"Total time +{re.escape(times[0])} +{re.escape(times[1])}", text), text
        body = app.screen.query_one("#pair-body")
        await pilot.press("j")  # it scrolls as the Kernel screen does
        await pilot.pause(0.05)
        assert body.scroll_y > 0
        await pilot.press("escape")
        # A filter: the rows whose name matches; none matching says so; escape shows all again.
        await pilot.press("slash", *"fill_vector", "enter")
        assert {str(table.model.row(i)["kernel"]) for i in range(len(table.model))} == {
            "fill_vector"
        }
        await pilot.press("slash", "ctrl+u", *"no_such_kernel", "enter")
        assert len(table.model) == 0
        assert "no kernel group matches no_such_kernel" in str(screen.query_one("#status").render())
        # not a regex: the dialog stays, says why
        await pilot.press("slash", "ctrl+u", *"(", "enter")
        assert (
            isinstance(app.screen, PromptScreen) and "not a regular expression" in app.screen.error
        )
        assert app.screen.query_one(Input).value == "("
        await pilot.press("escape", "escape")
        assert app.screen is screen and len(table.model) == len(rows)


def test_unknown_on_either_side_stays_unknown():
    """The H800 flash_fwd launch has no values: compared with itself, its change is unknown, not
    0."""
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
        # B/A of a kernel B never ran: blank, not 0
        assert math.isnan(rows.loc[name, "duration_s_ratio"])
        # a rate of a kernel that never ran: undefined
        assert math.isnan(rows.loc[name, "flop_per_s_delta"])
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
    assert (
        flash["flop_delta"] is None
        and flash["duration_s_delta"] is None
        and flash["flop_ratio"] is None
    )
    assert flash["count_delta"] == 0


def shown_as(cell: str, name: str) -> bool:
    """`cell` is `name`, whole or cut: each `…` stands for a run of left-out characters (at the end,
    or in the middle where names differ late)."""
    pattern = ".*".join(re.escape(part) for part in cell.split("…"))
    return re.fullmatch(pattern, name, flags=re.S) is not None


T4_NO_FLOP = "t4_nsightful_copy_blocked_details.csv"  # details layout without a FLOP counter


async def test_s_on_an_empty_column_refuses_alike_on_the_kernels_and_diff_screens():
    """Neither screen may sort by a column with no values (the order would not change, yet the
    status line would say `sort FLOP A↓`): both say so in the same notice and leave the order as it
    was."""
    path = fixture_path(T4_NO_FLOP)
    # ncu collected no FLOP counter
    assert "sm__sass_thread_inst_executed_op" not in path.read_text()
    report = read_report(path)
    app = make_app(report)
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        app.notify = lambda message, **kw: notes.append(message)
        await focus_column(pilot, screen.query_one(KernelTable), "flop")
        await pilot.press("s")
        assert screen.query_state.sort is None and "sort Time↓" in str(
            screen.query_one("#status").render()
        )
    assert notes == ["FLOP has no values in these rows: nothing to sort by."]
    app = FlopscopeApp(DiffScreen(diff_runs(report, report), "a", "b"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        table = await wait_for_rows(pilot, screen)
        app.notify = lambda message, **kw: notes.append(message)
        await focus_column(pilot, table, "flop_a")
        await pilot.press("s")
        status = str(screen.query_one("#status").render())
        assert (
            screen.model.query.sort is None
            and "sort FLOP A" not in status
            and "largest time change first" in status
        )
    assert notes[1:] == ["FLOP A has no values in these rows: nothing to sort by."]


async def test_a_bound_filter_on_the_diff_says_the_groups_have_none(rows):
    """Compared groups carry no bound column: `bound:memory` keeps the dialog open with the reason,
    where it used to reach the filter and fail on the missing column."""
    app = FlopscopeApp(DiffScreen(rows, "h100", "mw"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        table = await wait_for_rows(pilot, screen)
        await pilot.press("slash", *"gemm bound:memory", "enter")
        assert isinstance(app.screen, PromptScreen) and "no bound" in app.screen.error
        await pilot.press("escape")
        assert app.screen is screen and len(table.model) == len(rows)


def test_cli_diff_names_the_runs_and_shows_b_over_a_and_the_kernel_time(tmp_path):
    """Before, `diff --no-tui` had no B/A column and no `kernel time A -> B` line (README and the
    app's Diff screen have both), and `diff 2 1 --json` gave `"a": "2"`, the ref as typed, not the
    run."""
    from ..helpers.raw_csv import launches, raw_csv

    rows = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    gemm = next(r for r in rows if "tensorop_s884gemm" in r["Kernel Name"])
    init = next(r for r in rows if "InitializeMatrix" in r["Kernel Name"])
    with Store(tmp_path / "flopscope.db") as store:
        for name, launched in (("two-gemms", [gemm] * 2), ("three-gemms", [gemm] * 3 + [init])):
            (tmp_path / f"{name}.csv").write_text(raw_csv(launched))
            store.save(read_report(tmp_path / f"{name}.csv"), name)
    # A launch's time from its raw counters: elapsed SM cycles over their rate.
    t_gemm, t_init = (
        r["sm__cycles_elapsed.avg"] / r["sm__cycles_elapsed.avg.per_second"] for r in (gemm, init)
    )
    doc = json.loads(cli("diff", "1", "2", "--json", home=tmp_path).stdout)
    assert (doc["a"], doc["a_id"], doc["b"], doc["b_id"]) == ("two-gemms", 1, "three-gemms", 2)
    assert doc["total_time_s_a"] == pytest.approx(2 * t_gemm, rel=1e-6)
    assert doc["total_time_s_b"] == pytest.approx(3 * t_gemm + t_init, rel=1e-6)
    out = cli("diff", "1", "2", "--no-tui", home=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # no GPU in a raw CSV
    assert lines[0] == "A: two-gemms (id 1, unknown GPU) · B: three-gemms (id 2, unknown GPU)"
    header = next(line for line in lines if line.startswith("Kernel"))
    assert "ΔTime   B/A" in header
    gemm_row = next(line for line in lines if "s884gemm" in line)
    assert re.search(r"\s1\.50\s", gemm_row)  # 3 launches of one kernel over 2
    init_row = next(line for line in lines if "InitializeMatrix" in line)
    assert init_row.rstrip().endswith("only in B") and not re.search(r"\s(0\.00|inf)\s", init_row)
    total = (
        f"kernel time {fmt.seconds(2 * t_gemm)} -> {fmt.seconds(3 * t_gemm + t_init)} "
        f"(+{fmt.seconds(t_gemm + t_init)}) · 2 kernel group(s)"
    )
    assert total in lines


async def test_one_gpu_judged_against_two_datasheets_is_said_in_the_app_and_the_cli(tmp_path):
    """A run stored with `--gpu l4` and the same report stored as it is: one GPU, but % of peak
    compares an L4's ceilings with an RTX 4090's. (Before, neither the app nor the CLI said so.)"""
    path = fixture_path("rtx4090_torch_linear_sgemm.ncu-rep")
    plain, l4 = read_report(path), read_report(path, gpu="l4")
    assert plain.meta.gpu == l4.meta.gpu == "NVIDIA GeForce RTX 4090"  # the device the report names
    app = FlopscopeApp(
        DiffScreen(
            diff_runs(plain, l4), "plain", "l4", (plain.gpu_label, l4.gpu_label), (plain, l4)
        )
    )
    warning = (
        "A is judged against NVIDIA GeForce RTX 4090 ceilings, B against NVIDIA L4 (--gpu): % of"
        " peak compares the ceilings too"
    )
    async with app.run_test(size=(200, 24)) as pilot:
        await wait_for_rows(pilot, app.screen)
        text = "\n".join(screen_lines(app))
        assert f"! {warning}" in text and "different GPUs" not in text
    with Store(tmp_path / "flopscope.db") as store:
        store.save(plain, "plain")
        store.save(l4, "l4")
    for args in (("plain", "l4"), ("plain", "l4", "--json")):
        assert f"flopscope: warning: {warning}\n" in cli("diff", *args, home=tmp_path).stderr
    assert "judged against" not in cli("diff", "plain", "plain", home=tmp_path).stderr


PAIRS = [
    ("duration_s_a", "duration_s_b"),
    ("count_a", "count_b"),
    ("flop_a", "flop_b"),
    ("dram_bytes_a", "dram_bytes_b"),
]


@pytest.mark.parametrize("other", [MW, H100])
async def test_at_80x24_a_and_b_columns_drop_and_come_back_in_pairs(tmp_path, other):
    """`diff multi v100mw` kept `Time B` and dropped `Time A`, so a group only A ran showed no time
    at all; `diff h800 h100cub` showed `N A` without `N B`. Pairs go together, as in `flopscope diff
    --no-tui`."""
    from ..helpers.multi_gpu import two_gpus

    a = two_gpus(tmp_path) if other == MW else read_report(fixture_path(H800))
    b = read_report(fixture_path(other))
    # A's time per group, summed from its launches (per GPU where the file has several)
    k = a.kernels
    by_gpu = k["gpu"].nunique() > 1
    times = k.groupby(
        [k["kernel_full"].astype(str), (k["gpu"] if by_gpu else k["kernel"]).astype(str)]
    )
    times = times["duration_s"].sum(min_count=1)  # a launch ncu did not profile: no time, not 0
    app = FlopscopeApp(DiffScreen(diff_runs(a, b), "a", "b"))
    async with app.run_test(size=(80, 24)) as pilot:
        table = await wait_for_rows(pilot, app.screen)
        for width in (80, 100, 120, 140):
            await pilot.resize_terminal(width, 24)
            await settle(pilot, lambda w=width: table._fitted_width == table._width)
            shown = {c.name for _, c, _ in table.layout_columns}
            assert all((x in shown) == (y in shown) for x, y in PAIRS), (width, shown)
        await pilot.resize_terminal(80, 24)
        await settle(pilot, lambda: table._fitted_width == table._width)
        assert {"duration_s_a", "duration_s_b"} <= {c.name for _, c, _ in table.layout_columns}
        # Each group only A ran shows A's time, summed from its launches.
        cells = shown_cells(table)
        only_a = [
            (cells[i], table.model.row(i))
            for i in range(len(cells))
            if table.model.row(i)["presence"] == "only in A"
        ]
        key = "gpu" if by_gpu else "kernel"
        assert only_a and all(
            c["duration_s_a"] == fmt.seconds(times[(str(r["kernel_full"]), str(r[key]))])
            for c, r in only_a
        )
        # Moving the cursor onto a dropped column of a pair brings back both of its sides.
        await pilot.press(*["l"] * 8)
        name = table.focused_column.name
        if name.endswith(("_a", "_b")):
            shown = {c.name for _, c, _ in table.layout_columns}
            assert all((x in shown) == (y in shown) for x, y in PAIRS)
