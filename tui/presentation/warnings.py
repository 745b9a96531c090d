"""The warning lines about a report's numbers (counters not collected, launches above their
ceiling), as the CLI prints them on stderr. Plain text, no rich: `export` prints them without
importing a table renderer."""

from __future__ import annotations

from ...core.common import display_text
from ...core.report import Report
from ...core.table import missing_fix

# collects what `ncu --metrics` would, and stores the run
FLOPSCOPE_METRICS = "flopscope profile --metrics"


def missing_lines(report: Report) -> list[str]:
    """The counters a report lacks: one line, with the one option that collects them all (six lines,
    each with its own option, read as six problems and were run as six profiles)."""
    source, missing = report.meta.source, report.missing
    if len(missing) == 1:
        return [f"{source}: {missing[0].problem()}; collect it with `{missing[0].fix()}`"]
    if not missing:
        return []
    every = (missing_fix(missing, [m.column for m in missing]) or "").replace(
        "ncu --metrics", FLOPSCOPE_METRICS, 1
    )
    fix = f"; collect them all with `{every}`" if every else ""
    return [f"{source}: {'; '.join(m.problem() for m in missing)}{fix}"]


def over_ceiling_lines(report: Report) -> list[str]:
    """One line per kind (FLOP, DRAM) of launches measured above their own ceiling, the worst
    named."""
    return [f"{report.meta.source}: {w.problem()}; {w.fix}" for w in report.over_ceiling()]


def warning_lines(report: Report) -> list[str]:
    """Every warning about a report's numbers, as `report`, `open --no-tui` and `profile` print them
    on stderr: how the file was read where that is worth knowing (the streaming .ncu-rep reader
    handed it to ncu_report), counters not collected, then launches above their ceiling (last:
    nearest the table they put in doubt). Each line is safe to print (they name the source file and
    kernels)."""
    notes = [f"{report.meta.source}: {report.meta.reader_note}"] if report.meta.reader_note else []
    return [
        display_text(line) for line in notes + missing_lines(report) + over_ceiling_lines(report)
    ]
