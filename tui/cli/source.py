"""`flopscope report FILE --source WHICH [--top N]`: the hottest SASS lines of one launch, by warp
samples."""

from __future__ import annotations

import json
import re
import sys

from rich.text import Text

from ...core import FlopscopeError
from ...core.common import display_text
from ...core.readers.ncu_rep_source import COLLECT, SourcePage, read_source
from ...core.readers.source_cuda import by_cuda_line, file_lines, hottest_cuda
from ...core.report import Report
from ..presentation import format as fmt
from ..presentation.source_page import (
    CUDA,
    CUDA_COLUMNS,
    NO_SASS_NOTE,
    cuda_cells,
    cuda_record,
    line_cells,
    line_record,
    page_columns,
    row_source,
    sass_missing,
)
from ..presentation.text_report import Spec, console, fitted_table, print_hidden

TOP = 20  # lines printed unless --top says otherwise
TEXT = ("Top stall", "SASS", "Source", CUDA)


def _specs(titles: tuple[str, ...]) -> list[Spec]:
    # The CUDA text beside the SASS drops first on a narrow terminal: the by-line table below shows
    # it.
    return [
        Spec(t, numeric=t not in TEXT, priority=1 if t == CUDA and "SASS" in titles else 0)
        for t in titles
    ]


def print_source(report: Report, which: str, top: int | None, as_json: bool) -> int:
    if report.meta.format != "ncu-rep":
        raise FlopscopeError(
            report.meta.source,
            "has no source lines: only an .ncu-rep keeps them",
            f"pass the .ncu-rep itself; {COLLECT}",
        )
    page, launch = _page(report, which)
    files = file_lines(page) if page.files else None
    if as_json:
        doc = {
            "launch_id": page.launch_id,
            "launch": launch,
            "kernel": page.kernel,
            "samples": page.samples,
        }
        doc |= {
            "reason": page.reason or None,
            "lines": [line_record(line, files) for line in page.hottest(top)],
        }
        doc["cuda_lines"] = [cuda_record(c) for c in hottest_cuda(by_cuda_line(page), top)]
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
        return 0
    out = console()
    out.print(Text(f"Launch {launch}: {display_text(page.kernel)}", style="bold"))
    if not page.lines:
        out.print(Text(page.reason))
        return 0
    shown = page.hottest(top or TOP)
    out.print(
        Text(
            f"{fmt.integer(page.samples)} warp samples over {fmt.integer(len(page.lines))} SASS"
            f" lines; the {fmt.integer(len(shown))} hottest:"
        )
    )
    if sass_missing(page):
        out.print(Text(NO_SASS_NOTE))
    cells = [line_cells(line, page.samples, files) for line in shown]
    table, hidden = fitted_table(_specs(page_columns(page)), cells, out.width, flex=3)
    out.print(table)
    print_hidden(out, hidden)
    _print_cuda_lines(out, page, top or TOP)
    return 0


def _print_cuda_lines(out, page: SourcePage, top: int) -> None:
    """The hottest CUDA lines, each its SASS lines summed, where the report resolves lines
    (`-lineinfo`)."""
    lines = by_cuda_line(page)
    if not lines:
        return
    shown = hottest_cuda(lines, top)
    out.print(
        Text(
            f"By CUDA line ({fmt.integer(len(lines))} lines), the {fmt.integer(len(shown))}"
            " hottest:"
        )
    )
    cells = [cuda_cells(line, page.samples) for line in shown]
    table, hidden = fitted_table(_specs(CUDA_COLUMNS), cells, out.width, flex=3)
    out.print(table)
    print_hidden(out, hidden)


def _page(report: Report, which: str) -> tuple[SourcePage, str]:
    """A launch ID, else the kernel (by name, regex, any case) with the most time that matches, its
    longest."""
    if which.isdigit():
        launch_id = int(which)
        if launch_id not in set(report.kernels["launch_id"].dropna().astype(int)):
            raise FlopscopeError(
                report.meta.source, f"has no launch {launch_id}", "pass an ID `--by launch` lists"
            )
        return read_source(report.meta.source, launch_id), f"ID {launch_id}"
    try:
        pattern = re.compile(which, re.IGNORECASE)
    except re.error as exc:
        raise FlopscopeError(
            which, f"is not a regular expression ({exc})", "pass a launch ID or a name regex"
        ) from None
    rows = report.group("name")
    for _, row in rows.iterrows():  # time order: the kernel that took longest first
        if pattern.search(str(row.get("kernel_full") or row.get("kernel"))):
            page, launch = row_source(report, row, "name")
            if page is not None:
                return page, launch
    raise FlopscopeError(
        report.meta.source, f"has no kernel whose name matches {which!r}", "pass a launch ID"
    )
