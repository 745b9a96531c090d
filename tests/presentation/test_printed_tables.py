"""The CLI's tables are laid out by flopscope (tables.TextTable), not by rich's Table: titles in
bold, numbers to the right, text to the left, two spaces between columns, widths in terminal cells
(a CJK character is two), the name column cut to what is left with one ellipsis, and no line wider
than the terminal."""

from __future__ import annotations

import io

from flopscope.tui.presentation.tables import Spec, fitted_table
from rich.console import Console

SPECS = [Spec("Kernel", numeric=False), Spec("N"), Spec("Note", numeric=False, priority=2)]
ROWS = [["gemm<float>", "12", "宽"], ["copy", "3", ""]]


def printed(table, width: int, terminal: bool = False) -> str:
    out = io.StringIO()
    Console(
        file=out,
        width=width,
        force_terminal=terminal,
        color_system="standard" if terminal else None,
    ).print(table)
    return out.getvalue()


def test_columns_are_aligned_by_terminal_cells():
    table, hidden = fitted_table(SPECS, ROWS, 80)
    assert hidden == []
    assert printed(table, 80).splitlines() == [
        "Kernel        N  Note",
        "gemm<float>  12  宽  ",  # 宽 takes two cells: padded to the title's four
        "copy          3      ",
    ]


def test_a_narrow_terminal_cuts_the_name_then_drops_a_column_then_cuts_the_title():
    def lines(width: int) -> tuple[list[str], list[str]]:
        table, hidden = fitted_table(SPECS, ROWS, width, flex_min=3)
        return printed(table, width).splitlines(), hidden

    # 16 = name + 2 + N (2) + 2 + Note (4): the name gets 6 cells, one of them the ellipsis
    assert lines(16) == (["Kernel   N  Note", "gemm<…  12  宽  ", "copy     3      "], [])
    assert lines(12) == (["Kernel     N", "gemm<fl…  12", "copy       3"], ["Note"])
    # one ellipsis, title and name alike
    assert lines(9) == (["Kern…   N", "gemm…  12", "copy    3"], ["Note"])


def test_titles_are_bold_in_a_terminal_and_cells_are_text_not_markup():
    table, _ = fitted_table([Spec("Kernel", numeric=False)], [["[bold]k\x1b[31m"]], 40)
    text = printed(table, 40, terminal=True)
    assert text.startswith("\x1b[1mKernel")
    assert "[bold]k\\x1b[31m" in text and "\x1b[31m" not in text  # the escape shown, never sent


def test_a_numeric_column_escapes_control_characters_too():
    """Numeric columns are text by the time they are printed, and some come from stored values (a
    sweep's parameter, a run's fields): a cell there must not reach the terminal as a sequence
    either."""
    specs = [Spec("Kernel", numeric=False), Spec("N")]
    table, _ = fitted_table(specs, [["gemm", "1\x1b]52;c;cHduZWQ=\x07"], ["copy", "3\u202e"]], 60)
    text = printed(table, 60, terminal=True)
    assert "1\\x1b]52;c;cHduZWQ=\\x07" in text and "3\\u202e" in text
    assert "\x1b]52" not in text and "\u202e" not in text and "\x07" not in text
