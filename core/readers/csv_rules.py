"""ncu's rule results of one launch from a `--csv --page details` export, read on demand.

ncu (2023+) prints each rule message as a row of its own after its section's metrics, with an empty
Metric Name and the columns "Rule Name", "Rule Type" (OPT/WRN/INF), "Rule Description", "Estimated
Speedup Type" (local/global) and "Estimated Speedup" (%, four significant digits). The details
reader skips these rows; this reads them for the launch a view shows, from any text stream (a
compressed file is read as it unpacks)."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator

from ..common.units import NumberError, parse_number
from .ncu_rep_rules import RawFinding

RULE_COLUMNS = ("Rule Name", "Rule Type", "Rule Description")


class NoRuleColumns(Exception):
    """The CSV is not a details page with ncu's rule columns (a raw page, or an export before ncu
    had them)."""


def csv_launch_rules(
    lines: Iterable[str], launch_id: int
) -> tuple[str | None, list[RawFinding]] | None:
    """(the launch's kernel name, its rule messages in file order) for the launch whose ID is
    `launch_id`, or None when the file has no such launch. Raises NoRuleColumns."""
    rows = csv.reader(_table_lines(lines))
    header = next(rows, None)
    if header is None or not all(c in header for c in RULE_COLUMNS):
        raise NoRuleColumns
    col = {h: k for k, h in enumerate(header)}
    wanted, name, found, seen = str(launch_id), None, [], False
    for cells in rows:
        if not cells or cells[0] != wanted:
            if seen:
                break  # ncu writes a launch's rows together: the next launch ends it
            continue
        seen = True
        name = name or _cell(cells, col, "Kernel Name") or None
        if _cell(cells, col, "Rule Name"):
            found.append(_finding(cells, col))
    return (name, found) if seen else None


def _finding(cells: list[str], col: dict[str, int]) -> RawFinding:
    try:
        # NaN where empty: no estimate
        speedup = parse_number(_cell(cells, col, "Estimated Speedup"))
    except NumberError:  # digits other than 0-9: an estimate no ncu wrote is shown as none
        speedup = math.nan
    return RawFinding(
        kind=_cell(cells, col, "Rule Type"),
        rule=_cell(cells, col, "Rule Name"),
        # the CSV has no display name: the identifier stands for it
        name=_cell(cells, col, "Rule Name"),
        message=_cell(cells, col, "Rule Description"),
        speedup=None if math.isnan(speedup) else speedup,
        speedup_type=_cell(cells, col, "Estimated Speedup Type") or None,
    )


def _cell(cells: list[str], col: dict[str, int], name: str) -> str:
    k = col.get(name)
    return cells[k].strip() if k is not None and k < len(cells) else ""


def _table_lines(lines: Iterable[str]) -> Iterator[str]:
    """The header row and the rows after it: the program's output and ncu's `==PROF==` lines before
    the table (a UTF-8 BOM, CRLF) are left out, as are ncu's `==` lines between rows."""
    started = False
    for line in lines:
        if not started:
            if not line.lstrip("\ufeff").startswith('"ID","'):
                continue
            started, line = True, line.lstrip("\ufeff")
        if not line.startswith("=="):
            yield line
