"""A file with launches on two GPUs (an A100 and an H100 PCIe) meeting the diff, the Kernel screen's
roofline and the run store: groups are per (name, GPU), each launch is judged against its own
GPU."""

from __future__ import annotations

import json
import re

import pytest
from flopscope.core import read_report
from flopscope.core.analysis.diff import diff_runs, gpus_apart
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.help import HelpScreen
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.kernel_pair import KernelPairScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.widgets.roofline_plot import RooflinePlot, roofline_from
from flopscope.tui.app.widgets.summary import Summary

from ..conftest import settle
from ..helpers.app import make_app, ready, screen_lines, shown_cells, summary_text, wait_for_rows
from ..helpers.multi_gpu import A100, H100, KERNELS, UNITS, launch, two_gpus
from ..helpers.raw_csv import page
from ..helpers.sweep import cli

# FP32 peak at the measured clock (A100: 108 SMs x 128 FLOP/clk, H100 PCIe: 114 x 256) and datasheet
# DRAM (A100 40GB: 5120-bit HBM2 at 1.215 GHz DDR; H100 PCIe: 2.0 TB/s): ridge points 12.5 and 25.6
# FLOP/B.
FP32 = {A100: 108 * 128 * 1.41e9, H100: 114 * 256 * 1.755e9}
DRAM = {A100: 5120 / 8 * 2 * 1.215e9, H100: 2.0e12}


def a100_only(tmp_path):
    return read_report(page(tmp_path / "a100.csv", UNITS, [launch(k, A100) for k in KERNELS]))


def test_diff_of_a_multi_gpu_run_matches_groups_by_name_and_gpu(tmp_path):
    multi = two_gpus(tmp_path)
    rows = diff_runs(multi, multi)
    # 2 kernels x 2 GPUs (was 20 rows, or a crash in the app)
    assert len(rows) == 4 and rows.attrs["by_gpu"]
    pairs = sorted((k, g) for k in KERNELS for g in (A100, H100))
    assert sorted(zip(rows["kernel"], rows["gpu"], strict=True)) == pairs
    assert (rows["presence"] == "both").all() and (rows["duration_s_delta"] == 0).all()
    counts = {
        (k, g): c for k, g, c in zip(rows["kernel"], rows["gpu"], rows["count_a"], strict=True)
    }
    assert counts == {(k, g): 1 if g == A100 else 2 for k in KERNELS for g in (A100, H100)}
    # NVTX grouping too (no ranges: one per GPU)
    assert sorted(diff_runs(multi, multi, by="nvtx")["gpu"]) == [A100, H100]


def test_diff_of_a_single_gpu_run_with_a_multi_gpu_one_matches_on_name_and_gpu(tmp_path):
    rows = diff_runs(a100_only(tmp_path), two_gpus(tmp_path)).set_index(["kernel", "gpu"])
    assert len(rows) == 4
    for kernel, (_, _, ns) in KERNELS.items():
        a100 = rows.loc[(kernel, A100)]
        assert a100["presence"] == "both" and a100["duration_s_delta"] == 0
        h100 = rows.loc[(kernel, H100)]
        assert h100["presence"] == "only in B" and h100["duration_s_delta"] == pytest.approx(
            2 * ns * 1e-9
        )


def test_cli_diff_and_runs_of_a_multi_gpu_run(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    store = Store()
    store.save(two_gpus(tmp_path), "multi")
    store.save(a100_only(tmp_path), "single")
    store.close()
    out = cli("diff", "multi", "multi", "--no-tui", home=tmp_path)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "4 kernel group(s)" in out.stdout
    assert f"A: multi (id 1, {H100} + {A100})" in out.stdout
    lines = [line for line in out.stdout.splitlines() if line.startswith(("dense", "stream"))]
    assert sorted((line.split()[0], A100 in line) for line in lines) == [
        ("dense", False),
        ("dense", True),
        ("stream", False),
        ("stream", True),
    ]
    out = cli("diff", "single", "multi", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["rows"]
    assert sorted((r["kernel"], r["gpu"], r["presence"]) for r in rows) == [
        ("dense", A100, "both"),
        ("dense", H100, "only in B"),
        ("stream", A100, "both"),
        ("stream", H100, "only in B"),
    ]
    listed = json.loads(cli("runs", "--json", home=tmp_path).stdout)
    assert {r["name"]: r["gpu"] for r in listed} == {"multi": f"{H100} + {A100}", "single": A100}


async def test_diff_screen_shows_the_gpu_and_enter_opens_that_gpus_group(tmp_path):
    multi = two_gpus(tmp_path)
    app = FlopscopeApp(DiffScreen(diff_runs(multi, multi), "a", "b", reports=(multi, multi)))
    async with app.run_test(size=(120, 24)) as pilot:
        table = await wait_for_rows(pilot, app.screen)
        cells = shown_cells(table)
        assert sorted((c["kernel"], c["gpu"]) for c in cells) == sorted(
            (k, g.removeprefix("NVIDIA ")) for k in KERNELS for g in (A100, H100)
        )
        at = next(i for i in range(len(table.model)) if table.model.row(i)["gpu"] == A100)
        table.cursor_row = at
        # both runs ran it: A's and B's rows side by side, each that GPU's group
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelPairScreen))
        assert all(row["gpu"] == A100 and row["count"] == 1 for row in app.screen.rows)


async def test_kernel_screen_plots_a_launch_against_its_own_gpus_ceilings(tmp_path):
    """The A100 "dense" group, 20 FLOP/B: over the A100's ridge (12.5), under the H100's (25.6). Its
    plot drew the H100's lines (the GPU of most launches), so the point sat memory bound beside a
    compute-bound table."""
    report = two_gpus(tmp_path)
    groups = report.group("name")
    row = groups[(groups["kernel"] == "dense") & (groups["gpu"] == A100)].iloc[0]
    ffma, dram, _ = KERNELS["dense"]
    assert FP32[A100] / DRAM[A100] < 2 * ffma / dram < FP32[H100] / DRAM[H100]
    app = FlopscopeApp(KernelScreen(row, report.ceilings(), "kernel", launches=report.kernels))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        drawn = app.screen.query_one(RooflinePlot).data
        assert drawn.dram.value == pytest.approx(DRAM[A100], rel=1e-3) and drawn.dram.gpu == A100
        fp32 = next(c for c in drawn.compute if c.name == "fp32")
        assert fp32.value == pytest.approx(FP32[A100], rel=1e-3) and {
            c.gpu for c in drawn.compute
        } == {A100}
        (point,) = drawn.points
        assert point.ai > fp32.value / drawn.dram.value and "compute" in point.bound
    # the whole run's roofline draws the GPU with most launches, with that GPU's points only
    whole = roofline_from(groups, report.ceilings())
    assert whole.dram.gpu == H100 and whole.dram.value == pytest.approx(DRAM[H100], rel=1e-3)
    assert {groups.iloc[p.position]["gpu"] for p in whole.points} == {H100}


async def test_at_80x24_a_short_table_leaves_the_summary_room_for_every_line(tmp_path):
    """Nine summary lines over a table of four rows: the 35% cap (8 lines of 24) cut the A100's
    ceilings while 11 lines stayed empty under the table. The summary now takes the room the table's
    rows leave."""
    report = two_gpus(tmp_path)
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        summary = app.screen.query_one(Summary)
        whole = summary_text(app).splitlines()
        assert len(whole) > 24 * 35 // 100  # the old cap would cut it
        shown = screen_lines(app)[summary.region.y : summary.region.bottom]  # below the breadcrumb
        assert [line.strip() for line in shown] == [line.strip() for line in whole]
        table = screen_lines(app)[summary.size.height :]
        # the rows stay in view
        assert sum(1 for line in table if "dense" in line or "stream" in line) >= 2
        await pilot.resize_terminal(80, 15)  # smaller: cut again, and said so
        await pilot.pause()
        assert screen_lines(app)[summary.size.height - 1].strip().startswith("… not shown: ")


async def test_at_80x15_the_capped_summary_says_whose_ceilings_it_cut(tmp_path):
    """Both GPUs' ceilings take 4 lines at 80 columns; on a short terminal the A100's fell off the
    bottom with nothing to say so, while `flopscope report` printed them."""
    report = two_gpus(tmp_path)
    app = make_app(report)
    async with app.run_test(size=(80, 15)) as pilot:
        await ready(app, pilot)
        summary = app.screen.query_one(Summary)
        whole = summary_text(app).splitlines()  # every line, as `--no-tui` prints them
        shown = screen_lines(app)[summary.region.y : summary.region.bottom]  # below the breadcrumb
        assert len(whole) > len(shown), "the cap no longer cuts: this test says nothing"
        assert [line.strip() for line in shown[:-1]] == [
            line.strip() for line in whole[: len(shown) - 1]
        ]
        assert (
            shown[-1].strip().startswith("… not shown: ")
            and "A100-PCIE-40GB ceilings (" in shown[-1]
        )
        # names first, room allowing
        assert "--no-tui prints all" in shown[-1] or "H100 PCIe ceilings" in shown[-1]
        assert any("Ceilings, NVIDIA H100 PCIe" in line for line in shown)
    # where the marker sends one: every ceiling
    out = cli("report", report.meta.source, home=tmp_path)
    assert re.search(
        rf"Ceilings, NVIDIA A100-PCIE-40GB( at SM [\d.]+ GHz)?: FP32 {FP32[A100] / 1e12:.1f}"
        r" TFLOP/s",
        out.stdout,
    )


async def test_the_roofline_screen_shows_each_gpus_kernels_against_its_own_ceilings(tmp_path):
    """The whole-run roofline drew the H100's lines (the GPU of most launches) under the A100's
    points too: the A100 "dense" group, compute bound against its own ridge (12.5 FLOP/B), sat left
    of the H100's (25.6) and read memory bound. Now one GPU at a time, `g` to the next, the title
    line saying whose."""
    app = make_app(two_gpus(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        screen = app.screen
        for gpu in (H100, A100):
            await pilot.pause()
            drawn = screen.query_one(RooflinePlot).data
            assert {screen.rows.iloc[p.position]["gpu"] for p in drawn.points} == {gpu}
            assert sorted(p.label for p in drawn.points) == sorted(KERNELS)
            assert drawn.dram.value == pytest.approx(DRAM[gpu], rel=1e-3)
            fp32 = next(c for c in drawn.compute if c.name == "fp32")
            assert fp32.value == pytest.approx(FP32[gpu], rel=1e-3) and {
                c.gpu for c in drawn.compute
            } == {gpu}
            dense = next(p for p in drawn.points if p.label == "dense")
            ffma, dram, _ = KERNELS["dense"]
            ridge = FP32[gpu] / DRAM[gpu]
            assert dense.ai == pytest.approx(2 * ffma / dram) and dense.bound == (
                "compute" if dense.ai > ridge else "dram"
            )  # no cache peaks here: DRAM is the only memory roof
            shown = screen_lines(app)
            title = (
                f"{gpu.removeprefix('NVIDIA ')} (GPU {1 + (gpu == A100)} of 2): its kernels and its"
                " ceilings"
            )
            assert shown[0].strip().startswith(title), shown[0]
            # the legend: this GPU's
            assert any(f"DRAM {DRAM[gpu] / 1e12:.2f} TB/s" in line for line in shown)
            await pilot.press("g")
        assert screen.query_one(RooflinePlot).data.dram.gpu == H100  # round and back
        await pilot.press("question_mark")
        await settle(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert any(keys == "g" and what == "Next GPU" for _, keys, what in app.screen.rows)


async def test_the_roofline_of_one_gpus_rows_has_no_gpu_key(tmp_path):
    app = make_app(a100_only(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        assert not app.screen.query("#roofline-gpu") and "Next GPU" not in screen_lines(app)[-1]
        assert len(app.screen.query_one(RooflinePlot).data.points) == len(KERNELS)


def test_a_single_gpu_run_against_a_multi_gpu_one_is_warned_of_the_gpu_only_b_used(
    tmp_path, monkeypatch
):
    """A ran on the A100, B on the A100 and an H100: "different GPUs" said the times compared
    hardware, but groups are matched on name and GPU, so the A100 groups compare on one GPU and the
    H100 ones are only in B."""
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    with Store() as store:
        store.save(a100_only(tmp_path), "single")
        store.save(two_gpus(tmp_path), "multi")
    rows = diff_runs(a100_only(tmp_path), two_gpus(tmp_path))  # what the warning claims, row by row
    assert set(zip(rows["gpu"], rows["presence"], strict=True)) == {
        (A100, "both"),
        (H100, "only in B"),
    }
    warning = (
        f"B also ran on {H100}: groups are matched on name and GPU, so those groups are only in B;"
        f" the others compare on the same GPU ({A100})"
    )
    for args in (("--no-tui",), ("--json",)):
        out = cli("diff", "single", "multi", *args, home=tmp_path)
        assert out.returncode == 0, out.stderr
        assert f"flopscope: warning: {warning}" in out.stderr and "different GPUs" not in out.stderr
    out = cli("diff", "multi", "single", "--no-tui", home=tmp_path)
    assert (
        f"A also ran on {H100}: groups are matched on name and GPU, so those groups are only in A"
        in out.stderr
    )
    out = cli("diff", "multi", "multi", "--no-tui", home=tmp_path)  # the same GPUs: nothing to say
    assert "warning" not in out.stderr


async def test_the_diff_screen_says_b_also_ran_on_another_gpu(tmp_path):
    single, multi = a100_only(tmp_path), two_gpus(tmp_path)
    app = FlopscopeApp(
        DiffScreen(
            diff_runs(single, multi),
            "single",
            "multi",
            (single.gpu_label, multi.gpu_label),
            reports=(single, multi),
        )
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app.screen)
        text = " ".join(line.strip() for line in screen_lines(app))
        assert (
            f"! B also ran on {H100}: groups are matched on name and GPU, so those groups are only"
            " in B" in text
        )
        assert "different GPUs" not in text


def test_runs_on_no_common_gpu_are_told_nothing_is_compared():
    # name-only matching
    assert gpus_apart([A100], [H100]).startswith(f"different GPUs ({A100} vs {H100})")
    # B on two GPUs: matched on name and GPU, so no group meets its twin
    v100 = "Tesla V100-SXM2-32GB"
    assert (
        gpus_apart([v100], [H100, A100])
        == f"no GPU in common ({v100} vs {H100} + {A100}): groups are matched on name and GPU, so"
        " none is compared"
    )
    assert gpus_apart([H100, A100], [A100, H100]) is None and gpus_apart([], [A100]) is None


# NVIDIA A100 80GB PCIe datasheet: 1,935 GB/s HBM2e (its FP32 peak, 19.5 TFLOP/s at 1410 MHz, is the
# 40GB's).
DRAM_A100_80GB = 1935e9


def test_gpu_option_judges_the_launches_of_its_compute_capability_and_leaves_the_others(
    tmp_path, monkeypatch
):
    """`--gpu a100-pcie-80gb` on a file of A100 (CC 8.0) and H100 (CC 9.0) launches was refused
    outright, with a hint (GPUs of CC 9.0) that would be refused too. Now the A100's launches get
    the 80GB board's ceilings, the H100's keep their own, and the header says which; a --gpu that
    fits no launch is one line naming the file."""
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    report = two_gpus(tmp_path)
    path = report.meta.source
    plain = json.loads(cli("report", path, "--json", home=tmp_path).stdout)
    out = cli("report", path, "--json", "--gpu", "a100-pcie-80gb", home=tmp_path)
    assert out.returncode == 0, out.stderr
    meta = json.loads(out.stdout)["meta"]
    assert [(g["name"], g["database_key"], g["gpu_source"]) for g in meta["gpus"]] == [
        (H100, "h100-pcie", "report"),
        (A100, "a100-pcie-80gb", "--gpu"),
    ]
    dram = {c["gpu"]: c["value"] for c in meta["ceilings"] if c["name"] == "dram"}
    assert dram == {H100: pytest.approx(DRAM[H100]), A100: pytest.approx(DRAM_A100_80GB)}
    rows = json.loads(out.stdout)["rows"]
    before = {(r["kernel"], r["gpu"]): r for r in plain["rows"]}
    for r in rows:  # the H100's rows as without --gpu; the A100's against the 80GB board's DRAM
        if r["gpu"] == H100:
            assert r["pct_of_roof"] == pytest.approx(before[(r["kernel"], H100)]["pct_of_roof"])
        else:
            ffma, dram_bytes, ns = KERNELS[r["kernel"]]
            roof = min(FP32[A100], 2 * ffma / dram_bytes * DRAM_A100_80GB)
            assert r["pct_of_roof"] == pytest.approx(100 * 2 * ffma / (ns * 1e-9) / roof, rel=1e-3)
    header = cli("report", path, "--gpu", "a100-pcie-80gb", home=tmp_path).stdout.splitlines()
    text = " ".join(header[:3])
    assert (
        f"{A100} (CC 8.0, 2 launches, judged against NVIDIA A100 80GB PCIe ceilings (--gpu))"
        in text
        and f"{H100} (CC 9.0, 4 launches)" in text
    )
    # a stored run is judged the same way by `open RUN --gpu`
    with Store() as store:
        store.save(report, "multi")
    opened = json.loads(
        cli("open", "multi", "--gpu", "a100-pcie-80gb", "--json", home=tmp_path).stdout
    )["meta"]
    assert [(g["database_key"], g["gpu_source"]) for g in opened["gpus"]] == [
        ("h100-pcie", "report"),
        ("a100-pcie-80gb", "--gpu"),
    ]
    # no launch of the L4's CC 8.9: one line naming the file, the problem and the fix
    for args in (("report", path), ("open", "multi", "--no-tui")):
        bad = cli(*args, "--gpu", "l4", home=tmp_path)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr and bad.stdout == ""
        (line,) = bad.stderr.strip().splitlines()
        assert line.startswith(
            f"flopscope: {path}: --gpu l4 is NVIDIA L4 (CC 8.9), but the launches ran on {H100} "
            f"(CC 9.0), {A100} (CC 8.0); name a GPU of one of those compute capabilities"
        )


async def test_r_opens_the_roofline_on_the_cursor_rows_point_and_gpu(tmp_path):
    """`r` selected the first point of the H100 (GPU 1) whatever the cursor was on; now the cursor
    row's own point, on its GPU's roofline, for every row of the table."""
    app = make_app(two_gpus(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        kernels = await ready(app, pilot)
        table = kernels.query_one("#table")
        seen = set()
        for index in range(len(table.model)):
            row = table.model.row(index)
            await pilot.press("home", *["down"] * index, "r")
            await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
            screen = app.screen
            point = screen.data.points[screen.selected]
            assert screen.gpu == row["gpu"] and point.label == row["kernel"]
            assert screen.rows.iloc[point.position]["gpu"] == row["gpu"]
            shown = screen_lines(app)
            assert shown[0].strip().startswith(row["gpu"].removeprefix("NVIDIA "))
            assert any(f"by time · {row['kernel']}" in line for line in shown)
            seen.add((row["kernel"], row["gpu"]))
            await pilot.press("escape")
            await settle(pilot, lambda: app.screen is kernels)
        assert seen == {(k, g) for k in KERNELS for g in (A100, H100)}


async def test_the_diff_screen_names_the_columns_80_columns_hide(tmp_path):
    """Before: a two-GPU diff at 80 columns dropped `Only in` (the GPU column took its room) with
    nothing saying so, where the CLI prints "Hidden at 80 columns". Now the status line names each
    column left out, in one line (the table keeps its rows), and `right` brings one back with the
    list following."""
    # Names as long as real ones (the H100 fixture's cub kernels): with them the name takes the
    # room.
    long = {
        "dense": "cub::DeviceReduceKernel<cub::DeviceReducePolicy<float>::Policy600>",
        "stream": "cub::DeviceScanKernel<cub::DeviceScanPolicy<int>::Policy600>",
    }

    def named(path, gpus):
        rows = [{**launch(k, g), "kernel": long[k]} for g in gpus for k in KERNELS]
        return read_report(page(path, UNITS, rows))

    single, multi = (
        named(tmp_path / "a100.csv", [A100]),
        named(tmp_path / "two.csv", [A100, H100, H100]),
    )
    app = FlopscopeApp(
        DiffScreen(
            diff_runs(single, multi),
            "single",
            "multi",
            (single.gpu_label, multi.gpu_label),
            reports=(single, multi),
        )
    )
    async with app.run_test(size=(80, 24)) as pilot:
        table = await wait_for_rows(pilot, app.screen)
        header = table.visible_text()[0]
        assert "GPU" in header and "Only in" not in header  # the case the review found
        status = str(app.screen.query_one("#status").render())
        assert (
            "hidden: " in status and "Only in" in status.split("hidden: ")[1] and len(status) <= 78
        )
        lines = screen_lines(app)
        assert lines[-2].strip() == status.strip() and all(len(line) <= 80 for line in lines)
        while table.focused_column.name != "only_in":
            await pilot.press("right")
        await pilot.pause()
        status = str(app.screen.query_one("#status").render())
        assert "Only in" in table.visible_text()[0] and "Only in" not in status
