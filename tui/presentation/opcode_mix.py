"""The Instruction mix panel's opcode lines: the launch's (a group's: all its launches') most
executed SASS opcodes, each with its warp instructions and their share of all as a bar, the rest
summed; read from the report on demand (core/readers/opcode_mix.py)."""

from __future__ import annotations

import pandas as pd

from ...core.readers.opcode_mix import read_opcodes_by_launch
from ...core.report import Report
from . import format as fmt
from .kernel_sections import _share

TOP = 8  # opcodes shown; the others summed on one line


def opcode_items(counts: dict[str, int], top: int = TOP) -> list[tuple[str, str]]:
    """`Top opcodes` then one line per opcode, most executed first (ties by name), and `Other
    opcodes`; empty where the report has no count per opcode."""
    total = sum(counts.values())
    if not total:
        return []
    ranked = sorted(counts.items(), key=lambda oc: (-oc[1], oc[0]))
    shown, rest = ranked[:top], ranked[top:]
    out = [("Top opcodes", f"warp instructions, of the {fmt.integer(len(counts))} executed")]
    out += [(opcode, _share(count, total)) for opcode, count in shown]
    if rest:
        out.append((f"{len(rest)} other opcodes", _share(sum(c for _, c in rest), total)))
    return out


def launch_opcodes(report: Report, rows: pd.DataFrame) -> dict[str, dict[str, int]]:
    """`report --by launch --json`'s `opcodes`: {launch ID: {opcode: warp instructions}} for the
    rows' launches, read from the .ncu-rep where the rows have an instruction count at all (a report
    without InstructionStats is not opened a second time)."""
    if report.meta.format != "ncu-rep" or "inst_executed" not in rows:
        return {}
    if rows["inst_executed"].isna().all():
        return {}
    ids = pd.to_numeric(rows["launch_id"], errors="coerce").dropna().astype(int).tolist()
    by_launch = read_opcodes_by_launch(report.meta.source, ids)
    return {str(launch): counts for launch, counts in by_launch.items() if counts}
