"""Issue 42.3: the Memory chart panel as boxes and arrows (tui/presentation/memory_diagram.py): the
same figures as the chart's lines, every launch of every full-set report, within 80 columns, the
hit rates those ncu computed itself (ncu_report), and a clean drawing where figures are missing."""

from __future__ import annotations

import re

import pytest
from flopscope.core import read_report
from flopscope.tui.presentation import format as fmt
from flopscope.tui.presentation.kernel_sections import memory_chart
from flopscope.tui.presentation.memory_diagram import memory_diagram

from ..conftest import FIXTURES, fixture_path
from ..helpers.accounting import counter, report_actions
from ..helpers.ncu_report_columns import measured

FULL = sorted(p.name for p in FIXTURES.glob("*_full.ncu-rep")) if FIXTURES.is_dir() else []
# a figure as the panel prints it: a number with its SI prefix and unit, or a percentage
FIGURE = re.compile(r"(?<![\w/.])\d[\d.,]*(?: ?[kMGTP]?(?:B/s|B)\b| [kMGTP]\b|%)?")
UNITS = ["Kernel", "L1/TEX", "L2", "DRAM"]


def boxes(lines: list[str]) -> dict[str, list[str]]:
    """Each unit's lines inside its box, by the name in its top border."""
    out: dict[str, list[str]] = {}
    name = None
    for line in lines:
        if line.startswith("╭─ "):
            name = line[3:].split(" ", 1)[0]
            out[name] = []
        elif line.startswith("╰"):
            name = None
        elif name is not None:
            out[name].append(line.strip("│ "))
    return out


def check_drawing(lines: list[str]) -> None:
    assert max(map(len, lines)) <= 72, "fits a panel at 80 columns"
    assert list(boxes(lines)) == UNITS
    for k, line in enumerate(lines):
        if line.startswith("╭"):  # a box: its lines as wide as its top border
            end = next(j for j in range(k, len(lines)) if lines[j].startswith("╰"))
            assert {len(x) for x in lines[k : end + 1]} == {len(line)}
            if end + 1 < len(lines):  # an arrow leaves from its tee and ends at the next box
                tee = lines[end].index("┬")
                edge = lines[end + 1 : lines.index(next(x for x in lines[end:] if x[:1] == "╭"))]
                assert all(x[tee] in "│▼" for x in edge) and edge[-1].strip() == "▼"
    assert "None" not in "\n".join(lines) and "nan" not in "\n".join(lines)


@pytest.mark.parametrize("name", FULL)
def test_the_diagram_shows_the_charts_figures_for_every_launch(name):
    path = fixture_path(name)
    report = read_report(path)
    actions = report_actions(path)
    launches = report.group("launch").set_index("launch_id")
    drawn = 0
    for launch, action in enumerate(actions):
        if launch not in launches.index:
            continue
        row = launches.loc[launch]
        chart, lines = memory_chart(row), memory_diagram(row)
        assert bool(chart) == bool(lines)
        if not lines:
            continue
        check_drawing(lines)
        text = "\n".join(lines)
        # the same figures, in the same order: kernel -> L1 -> L2 -> DRAM
        assert FIGURE.findall(text) == [
            f for label, value in _in_drawing_order(chart) for f in FIGURE.findall(value)
        ], launch
        inside = boxes(lines)
        l2 = counter(action, "lts__t_sector_hit_rate.pct")
        if measured(l2) and counter(action, "lts__t_sectors.sum"):
            assert any(f"hit {fmt.pct(l2)}" in line for line in inside["L2"]), launch
        drawn += 1
    assert drawn


def _in_drawing_order(chart: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The chart's lines in the order the diagram draws them: the kernel's edge, L1/TEX's box
    (bandwidth, shared, local), its edge to L2, L2's box (sectors, bandwidth), its edge to DRAM,
    DRAM's box."""
    by = dict(chart)
    order = [
        "Kernel → L1/TEX",
        "",
        "L1/TEX bandwidth",
        "Shared memory",
        "Local (spills)",
        "L1/TEX ⇄ L2",
        "L2",
        "L2 bandwidth",
        "L2 ⇄ DRAM",
        "DRAM bandwidth",
    ]
    return [(label, by[label]) for label in order if label in by]


def test_missing_figures_leave_a_clean_drawing():
    """A launch with its loads but no L2 or DRAM counters: every box drawn, the unknown bytes `?`,
    no sector count, bandwidth or hit rate made up."""
    row = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")).group("name").iloc[0]
    gone = [c for c in row.index if c.startswith(("mem_l2", "dram_", "l2_", "peak_"))]
    lines = memory_diagram(row.drop(gone))
    check_drawing(lines)
    inside = boxes(lines)
    assert inside["L2"] == []
    assert inside["DRAM"] == []
    assert "▲ ? read, ▼ ? written" in "\n".join(lines)
