"""The Kernel screen's "ncu rules" section (issue 19): ncu's findings with their estimated speedups,
largest first, read from the report file for the launch shown; why there are none where a file has
none; report text shown inert. Expected values are ncu's own output committed beside the H100
capture."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from flopscope.core import read_report
from flopscope.tui.app.screens.kernel import KernelScreen
from textual.containers import VerticalScroll

from ..conftest import fixture_path, settle
from ..helpers.app import make_app, ready, screen_lines

H100 = Path(__file__).resolve().parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"


async def kernel_screen_lines(report, size=(80, 24)) -> list[str]:
    """Every line of the Kernel screen of the table's first row once its rules are read, scrolled
    through."""
    app = make_app(report)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, KernelScreen)
        await settle(pilot, lambda: screen.rules_read)
        body = screen.query_one("#kernel-body", VerticalScroll)
        lines: list[str] = []
        while True:
            lines += screen_lines(app)
            if body.scroll_y >= body.max_scroll_y:
                break
            await pilot.press("pagedown")
    return lines


def ncu_speedups_in_order(text: str) -> list[str]:
    """ncu's `Est. Speedup: 66.06%` (global) figures in its details text, largest first."""
    found = re.findall(r"OPT   Est\. Speedup: ([\d.]+)%", text)
    return sorted(found, key=float, reverse=True)


async def test_the_h100_full_set_gemm_shows_ncus_findings_largest_speedup_first_at_80x24():
    lines = await kernel_screen_lines(read_report(H100 / "gemm_bf16_full.ncu-rep.xz"))
    assert all(len(line) <= 80 for line in lines)
    text = [" ".join(line.split()) for line in lines]
    # its panel's title
    at = next(i for i, line in enumerate(text) if line.startswith("▼ ncu rules"))
    # the scrollbar's thumb may end the line
    assert text[at + 1].rstrip(" ▁▂▃▄▅▆▇█") == "Launch ID 0"
    expected = ncu_speedups_in_order((H100 / "gemm_bf16_full.details.txt").read_text())
    assert expected[:3] == ["66.06", "51.67", "34.38"]
    shown = [
        m.group(1) for line in text[at:] if (m := re.match(r"OPT (\d[\d.]*)%(?! local)", line))
    ]
    assert shown == expected  # every global estimate, in order
    first = next(line for line in text[at:] if line.startswith("OPT "))
    assert first.startswith("OPT 66.06% Uncoalesced Global Accesses: This kernel has uncoalesced")
    # local estimates (a unit's efficiency) said so, after the global ones
    local = next(
        i
        for i, line in enumerate(text)
        if line.startswith("OPT 84.36% local High Pipe Utilization")
    )
    assert local > next(i for i, line in enumerate(text) if line.startswith("OPT 0.6423%"))
    assert any(line.startswith("Est. speedup ncu's estimate of the run time") for line in text)


async def test_a_report_without_rules_says_why():
    text = " ".join(
        " ".join(line.split())
        for line in await kernel_screen_lines(
            read_report(H100 / "gemm_bf16_1000x1500x700.ncu-rep.xz")
        )
    )
    assert "ncu rules" in text
    assert "Findings none: ncu applies its rules only to sections" in text
    assert "--set full" in text


async def test_a_group_shows_its_longest_launchs_findings():
    report = read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"))
    first = report.group("name").iloc[0]
    launches = report.kernels[report.kernels["kernel_full"] == first["kernel_full"]]
    assert len(launches) == 2
    longest = int(launches.loc[launches["duration_s"].idxmax(), "launch_id"])
    text = " ".join(
        " ".join(line.split()) for line in await kernel_screen_lines(report, size=(120, 40))
    )
    assert f"Launch ID {longest}, the longest of the 2 launches" in text


async def test_a_hostile_rule_message_is_shown_inert(tmp_path):
    """A details CSV whose rule text carries an OSC 52 clipboard write and a screen clear: shown as
    escapes."""
    text = gzip.decompress((H100 / "gemm_bf16_full.details.csv.gz").read_bytes()).decode()
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J"
    assert "This kernel has uncoalesced global accesses" in text
    text = text.replace(
        "This kernel has uncoalesced global accesses", f"{evil}This kernel has uncoalesced global"
    )
    path = tmp_path / "hostile.csv"
    path.write_text(text)
    # one column: the message's lines in turn
    lines = await kernel_screen_lines(read_report(path), size=(80, 40))
    joined = "\n".join(lines)
    assert "\x1b" not in joined and "\x07" not in joined
    # wrapped at 80
    assert "\\x1b]52;c;ZXZpbA==\\x07\\x1b[2JThis kernel has" in " ".join(joined.split())
