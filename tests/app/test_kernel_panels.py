"""Issue 42.1: the Kernel screen as foldable panels, in one column at 80x24 and in two or three from
120 columns, the roofline at the top of the last; ncu's speed of light drawn as bars."""

from __future__ import annotations

import re

import pytest
from flopscope.core import read_report
from flopscope.tui.app.screens.kernel import KernelScreen
from textual.widgets import Collapsible

from ..conftest import fixture_path, settle
from ..helpers.app import make_app, ready, screen_lines
from ..helpers.snapshots import check

CUB = "h100pcie_ee384_cub_agents_full.ncu-rep"


async def open_kernel(pilot, app) -> KernelScreen:
    await ready(app, pilot)
    await pilot.press("enter")
    await settle(pilot, lambda: isinstance(app.screen, KernelScreen) and app.screen.rules_read)
    return app.screen


async def test_panels_sit_side_by_side_when_wide_and_stack_when_narrow():
    app = make_app(read_report(fixture_path(CUB)))
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_kernel(pilot, app)
        titles = [line for line in screen_lines(app) if line.count("▼") >= 2]
        # the plot in view at once
        assert any(re.search(r"▼ Time .*▼ Roofline", line) for line in titles), titles
        assert len(screen.query(".panel-column")) == 2
        await pilot.resize_terminal(200, 48)
        await pilot.pause()
        assert len(screen.query(".panel-column")) == 3
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert len(screen.query(".panel-column")) == 1
        assert all(line.count("▼") <= 1 for line in screen_lines(app))


async def test_z_folds_every_panel_and_a_fold_survives_a_resize():
    app = make_app(read_report(fixture_path(CUB)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_kernel(pilot, app)
        panels = list(screen.query(".panel").results(Collapsible))
        assert len(panels) >= 10 and not any(p.collapsed for p in panels)
        await pilot.press("z")
        assert all(p.collapsed for p in screen.query(".panel").results(Collapsible))
        text = screen_lines(app)
        # one title a line, all in view
        assert sum(line.lstrip().startswith("▶ ") for line in text) >= 10
        await pilot.press("z")
        assert not any(p.collapsed for p in screen.query(".panel").results(Collapsible))
        await pilot.press("tab", "enter")  # the first panel's title, folded by itself
        first = str(next(iter(screen.query(".panel").results(Collapsible))).title)
        assert [
            str(p.title) for p in screen.query(".panel").results(Collapsible) if p.collapsed
        ] == [first]
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert [
            str(p.title) for p in screen.query(".panel").results(Collapsible) if p.collapsed
        ] == [first]


async def test_speed_of_light_is_drawn_as_bars_of_its_percentages():
    report = read_report(fixture_path(CUB))
    row = report.group("name").iloc[0]
    app = make_app(report)
    async with app.run_test(size=(80, 60)) as pilot:
        await open_kernel(pilot, app)
        lines = [" ".join(line.split()) for line in screen_lines(app)]
    for label, column in (
        ("SM (compute)", "sol_sm_pct"),
        ("Memory", "sol_memory_pct"),
        ("L2", "sol_l2_pct"),
    ):
        line = next(line for line in lines if line.startswith(f"{label} {row[column]:.1f}%"))
        bar = line.split("%", 1)[1].strip()
        # a whole cell, or part of one
        cells = sum(1 if ch == "█" else 0.5 for ch in bar if ch in "█▏▎▍▌▋▊▉")
        assert abs(cells - row[column] / 100 * 20) <= 1, (line, row[column])  # 20 cells: 100%


async def test_the_instruction_mix_panel_shows_each_kind_and_the_busiest_pipe():
    """The T4 matrix add (FP32 FLOPs only) on the Kernel screen: its Instruction mix panel, folded
    open, says its warp instructions, the global loads' share of them, and that LSU is its busiest
    pipe."""
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    row = report.group("name").iloc[0]
    app = make_app(report)
    async with app.run_test(size=(80, 80)) as pilot:
        screen = await open_kernel(pilot, app)
        titles = [str(c.title) for c in screen.query(Collapsible)]
        assert "Instruction mix" in titles and "Pipe utilisation" in titles
        lines = [" ".join(line.split()) for line in screen_lines(app)]
    share = f"{100 * row['inst_global_ld'] / row['inst_executed']:.1f}%"
    assert any(line.startswith("Global loads") and share in line for line in lines), share
    assert any(line.startswith("Busiest pipe LSU pipe") for line in lines)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_report_with_only_pc_samples_shows_its_stalls_as_samples(
    size, tmp_path, snapshot_update
):
    """The RTX 4090 report has SourceCounters but no WarpStateStats: the Kernel screen's stall panel
    is titled as samples and shows the top row's reasons with their sample counts, at 80x24 (one
    column, scrolled to it) and at 160x48 (two); snapshot SVGs of both."""
    report = read_report(fixture_path("rtx4090_torch_linear_sgemm.ncu-rep"))
    row = report.group("name").iloc[0]
    top = max(
        (c for c in row.index if c.startswith("samples_") and row[c] == row[c]),
        key=lambda c: row[c],
    )
    app = make_app(report)
    async with app.run_test(size=size) as pilot:
        screen = await open_kernel(pilot, app)
        await settle(pilot, lambda: screen.opcodes is not None)  # the panels above it, complete
        panel = next(
            p
            for p in screen.query(".panel").results(Collapsible)
            if str(p.title) == "Warp stalls, share of PC samples"
        )
        panel.scroll_visible(animate=False, top=True)
        await pilot.pause()
        text = "\n".join(" ".join(line.split()) for line in screen_lines(app))
        assert "Warp stalls, share of PC samples" in text
        assert "cycles per issued instruction" not in text
        total = int(sum(row[c] for c in row.index if c.startswith("samples_") and row[c] > 0))
        assert f"{total} warp samples" in text
        assert f"{int(row[top])} {100 * row[top] / total:.1f}%" in text
        check(
            f"kernel-samples-{size[0]}x{size[1]}",
            app.export_screenshot(),
            snapshot_update,
            tmp_path,
        )


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_memory_chart_is_drawn_as_boxes_and_arrows(size, tmp_path, snapshot_update):
    """The H100 CUB report's top kernel: the Memory chart panel is the diagram, kernel -> L1/TEX ->
    L2 -> DRAM, whole on screen once scrolled to (one column at 80x24, two at 160x48); snapshot
    SVGs of both."""
    from flopscope.tui.presentation.memory_diagram import memory_diagram

    report = read_report(fixture_path(CUB))
    diagram = memory_diagram(report.group("name").iloc[0])
    app = make_app(report)
    async with app.run_test(size=size) as pilot:
        screen = await open_kernel(pilot, app)
        await settle(pilot, lambda: screen.opcodes is not None)  # the panels above it, complete
        screen.query_one("#panel-memory").scroll_visible(animate=False, top=True)
        await pilot.pause()
        lines = screen_lines(app)
        text = "\n".join(lines)
        for line in diagram:  # every line of it, unbroken
            assert line.rstrip() in text, line
        assert "Kernel → L1/TEX" not in text  # the label/value lines are gone
        check(
            f"kernel-memory-{size[0]}x{size[1]}", app.export_screenshot(), snapshot_update, tmp_path
        )


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_instruction_mix_lists_the_groups_top_opcodes(size):
    """The CUB report's top kernel: once read from the file, the Instruction mix panel ends in its
    launches' most executed opcodes, counted here from NVIDIA's ncu_report (summed over the group's
    launches), most first."""
    from flopscope.core.ncu.metrics import INST_PER_OPCODE

    from ..helpers.accounting import report_actions

    report = read_report(fixture_path(CUB))
    row = report.group("name").iloc[0]
    actions = report_actions(fixture_path(CUB))
    counts: dict[str, int] = {}
    for launch_id in report.launches_of(row, "name")["launch_id"]:
        metric = actions[int(launch_id)].metric_by_name(INST_PER_OPCODE)
        ids = metric.correlation_ids()
        for i in range(metric.num_instances()):
            counts[ids.as_string(i)] = counts.get(ids.as_string(i), 0) + metric.as_uint64(i)
    top = sorted(counts, key=lambda op: (-counts[op], op))[:3]
    app = make_app(report)
    async with app.run_test(size=size) as pilot:
        screen = await open_kernel(pilot, app)
        await settle(pilot, lambda: screen.opcodes is not None)
        await pilot.pause()
        screen.query_one("#instruction-mix").scroll_visible(animate=False, top=True)
        await pilot.pause()
        lines = screen_lines(app)
        at = next(k for k, line in enumerate(lines) if "Top opcodes" in line)
        column = lines[at].index("Top opcodes")  # the panel's column, left or right
        shown = [line[column:].split()[0] for line in lines[at + 1 : at + 4]]
        assert shown == top, (shown, top)
