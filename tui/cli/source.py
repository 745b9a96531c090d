"""`flopscope report FILE --source WHICH [--top N]`: the hottest SASS lines of one launch, by warp samples."""

from __future__ import annotations

import json
import re
import sys

from rich.text import Text

from ...core import FlopscopeError
from ...core.common import display_text
from ...core.readers.ncu_rep_source import COLLECT, SourcePage, read_source
from ...core.report import Report
from ..presentation import format as fmt
from ..presentation.source_page import COLUMNS, line_cells, line_record, row_source
from ..presentation.text_report import Spec, console, fitted_table, print_hidden

TOP = 20  # lines printed unless --top says otherwise
SPECS = [Spec(title, numeric=title not in ("Top stall", "SASS", "Source")) for title in COLUMNS]


def print_source(report: Report, which: str, top: int | None, as_json: bool) -> int:
    if report.meta.format != "ncu-rep":
        raise FlopscopeError(
            report.meta.source,
            "has no source lines: only an .ncu-rep keeps them",
            f"pass the .ncu-rep itself; {COLLECT}",
        )
    page, launch = _page(report, which)
    if as_json:
        doc = {"launch_id": page.launch_id, "launch": launch, "kernel": page.kernel, "samples": page.samples}
        doc |= {"reason": page.reason or None, "lines": [line_record(line) for line in page.hottest(top)]}
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
            f"{fmt.integer(page.samples)} warp samples over {fmt.integer(len(page.lines))} SASS lines; the "
            f"{fmt.integer(len(shown))} hottest:"
        )
    )
    table, hidden = fitted_table(SPECS, [line_cells(line, page.samples) for line in shown], out.width, flex=3)
    out.print(table)
    print_hidden(out, hidden)
    return 0


def _page(report: Report, which: str) -> tuple[SourcePage, str]:
    """A launch ID, else the kernel (by name, regex, any case) with the most time that matches, its longest."""
    if which.isdigit():
        launch_id = int(which)
        if launch_id not in set(report.kernels["launch_id"].dropna().astype(int)):
            raise FlopscopeError(report.meta.source, f"has no launch {launch_id}", "pass an ID `--by launch` lists")
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
    raise FlopscopeError(report.meta.source, f"has no kernel whose name matches {which!r}", "pass a launch ID")
