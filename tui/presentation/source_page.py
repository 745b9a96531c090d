"""A row's source page (the Kernel screen's `v`, `report --source`): which launch's it is (a group's longest, as
for ncu's rules: ncu samples each launch alone) and its SASS lines as table cells, hottest first or in address
order."""

from __future__ import annotations

import pandas as pd

from ...core.common import display_text
from ...core.readers.ncu_rep_source import SourceLine, SourcePage, read_source
from ...core.report import Report
from . import format as fmt
from .rules import longest_launch

# The SASS fourth: at 80 columns it is what a narrow table must keep beside the samples.
COLUMNS = ("Address", "Samples", "%", "SASS", "Top stall", "Not issued", "Executed", "Source")


def row_source(report: Report, row: pd.Series, by: str = "name") -> tuple[SourcePage | None, str]:
    """The source page of `row`'s launch (its longest, for a group) and which launch that is in words; None
    where the row names no launch of the report."""
    launch_id, which = longest_launch(report, row, by)
    if launch_id is None:
        return None, which
    return read_source(report.meta.source, launch_id), which


def line_cells(line: SourceLine, total: int) -> list[str]:
    """One SASS line as the table shows it: text from the report made inert."""
    where = f"{display_text(line.file.rsplit('/', 1)[-1])}:{line.line}" if line.file and line.line else ""
    return [
        f"{line.address:#x}",
        fmt.integer(line.samples),
        fmt.pct(100 * line.samples / total) if total else "",
        display_text(line.sass),
        line.top_stall,
        fmt.integer(line.not_issued),
        fmt.integer(line.executed) if line.executed is not None else "",
        where,
    ]


def line_record(line: SourceLine) -> dict[str, object]:
    """One SASS line for `--json`."""
    return {
        "address": line.address,
        "sass": line.sass,
        "samples": line.samples,
        "not_issued": line.not_issued,
        "executed": line.executed,
        "stalls": line.stalls,
        "top_stall": line.top_stall,
        "file": line.file or None,
        "line": line.line,
    }
