"""SectionLines draws a details section segment for segment as rich's table of it
(`section_table`) does: on real reports' rows, at widths where values fit, fold, and where the table
is left to rich, and on made-up cells where rich's layout has its corners."""

from __future__ import annotations

import io

import pytest
from flopscope.core import read_report
from flopscope.tui.presentation.kernel_sections import section_table, sections
from flopscope.tui.presentation.section_lines import SectionLines
from rich.console import Console

from ..conftest import FIXTURES

WIDTHS = (12, 20, 30, 38, 45, 60, 100)
REPORTS = sorted(p.name for p in FIXTURES.glob("*.ncu-rep")) if FIXTURES.exists() else []


def drawn(renderable, width: int) -> list:
    console = Console(file=io.StringIO(), color_system="truecolor", width=200)
    return console.render_lines(renderable, console.options.update_width(width), pad=False)


def assert_same(title: str, items: list[tuple[str, str]]) -> None:
    for width in WIDTHS:
        expected = drawn(section_table(title, items), width)
        assert drawn(SectionLines(title, items), width) == expected, (title, width)


@pytest.mark.skipif(not REPORTS, reason=f"no shared ncu fixtures at {FIXTURES}")
@pytest.mark.parametrize("name", REPORTS)
def test_every_section_of_real_rows_is_drawn_as_richs_table_draws_it(name):
    report = read_report(FIXTURES / name)
    for by in ("name", "launch"):
        rows = report.group(by)
        for i in range(min(len(rows), 4)):
            for title, items in sections(rows.iloc[i], report.kernels):
                assert_same(title, items)


@pytest.mark.parametrize(
    "title, items",
    [
        ("Time", [("Total time", "1.23 ms"), ("Share of kernel time", "12.3 %")]),
        ("A title wider than its table, so that rich wraps it", [("a", "b")]),
        ("", [("no title", "x")]),
        ("Bars", [("Pipe", " 70.3% ██████████████▏"), ("Other", "  3.16  22.0% ████")]),
        ("Long", [("Kernel", "void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<" * 3)]),
        ("Words", [("Advice", "not collected (To collect, below) " * 4)]),
        ("Spaces", [("lead", "   three leading"), ("trail", "two trailing  "), ("", "no label")]),
        ("Escapes", [("name", "a\x1b[31mred\nline\tx")]),  # shown escaped, as the table does
        ("Wide", [("名前", "カーネル名の長い名前 " * 3)]),
        ("Empty", [("nothing", "")]),
        ("No rows", []),
    ],
)
def test_corner_cells_are_drawn_as_richs_table_draws_them(title, items):
    assert_same(title, items)
