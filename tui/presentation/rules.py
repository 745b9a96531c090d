"""ncu's rule results of a row (the Kernel screen's "ncu rules" section, `flopscope report` of one
row): which launch's they are, and one line per finding, largest estimated speedup first, or why
there are none."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from rich.table import Table
from rich.text import Text

from ...core.common import display_text
from ...core.report import Finding, LaunchFindings, Report, read_rule_results
from . import format as fmt

TITLE = "ncu rules"
SPEEDUP_NOTE = "ncu's estimate of the run time a fix saves; local: of that unit's efficiency only"


def row_rule_results(
    report: Report, row: pd.Series, by: str = "name"
) -> tuple[LaunchFindings, str]:
    """The findings for `row` of `report.group(by)` and which launch they are of: the row's own for
    a launch, the longest launch's for a group (ncu judges each launch alone; the longest is where a
    fix saves most)."""
    launch_id, which, full = _longest(report, row, by)
    if launch_id is None:
        return (
            LaunchFindings(
                report.meta.source, None, (), "none: the row names no launch of this report"
            ),
            "",
        )
    return read_rule_results(report.meta.source, launch_id, full), which


def longest_launch(report: Report, row: pd.Series, by: str = "name") -> tuple[int | None, str]:
    """(the launch ID a row's per-launch views read: its own, or its group's longest; that launch in
    words)."""
    return _longest(report, row, by)[:2]


def _longest(report: Report, row: pd.Series, by: str) -> tuple[int | None, str, str | None]:
    launches = report.launches_of(row, by)
    if launches.empty:
        return None, "", None
    duration = pd.to_numeric(launches["duration_s"], errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )
    launch = launches.iloc[int(np.nanargmax(duration)) if not np.isnan(duration).all() else 0]
    try:
        launch_id = int(launch["launch_id"])
    # no ID (its cell was empty) or no integer: none to look up
    except (TypeError, ValueError, OverflowError):
        return None, "", None
    which = f"ID {launch_id}"
    if len(launches) > 1:
        which += (
            f", the longest of the {fmt.integer(len(launches))} launches (ncu judges each launch"
            " alone)"
        )
    full = launch.get("kernel_full")
    return launch_id, which, None if pd.isna(full) else str(full)


def rule_items(found: LaunchFindings, which: str) -> list[tuple[str, str]]:
    """(label, text) lines: the launch, what the speedups mean (where there are any), then each
    finding as `OPT 66.06%` (`local` added for a unit's speedup) beside `rule name: message`, or why
    there are none."""
    items = [("Launch", which)] if which else []
    if not found.findings:
        return [*items, ("Findings", found.reason or "none")]
    if any(f.speedup_pct is not None for f in found.findings):
        items.append(("Est. speedup", SPEEDUP_NOTE))
    return items + [(label(f), f"{f.name}: {f.message}") for f in found.findings]


def label(finding: Finding) -> str:
    """`OPT 66.06%`, `OPT 84.36% local`, `INF`: ncu's four significant digits, as its console prints
    them; `note` for a message ncu gives no kind (its console prints none)."""
    kind = finding.kind or "note"
    if finding.speedup_pct is None or not math.isfinite(finding.speedup_pct):
        return kind
    local = " local" if finding.speedup_type == "local" else ""
    return f"{kind} {finding.speedup_pct:.4g}%{local}"


def rules_table(items: list[tuple[str, str]], title: str = TITLE) -> Table:
    """The items as a two-column table: labels on one line, text wrapped to the width; report text
    made inert."""
    heading = Text(title, style="bold") if title else None  # none in a panel, whose title says it
    table = Table(box=None, show_header=False, title=heading, title_justify="left", pad_edge=False)
    table.add_column("what", no_wrap=True, style="dim")
    table.add_column("value", overflow="fold")
    for what, value in items:
        table.add_row(Text(display_text(what)), Text(display_text(value)))
    return table
