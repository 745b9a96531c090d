"""A row's source page (the Kernel screen's `v`, `report --source`): which launch's it is (a group's
longest, as for ncu's rules: ncu samples each launch alone) and its SASS lines as table cells,
hottest first or in address order."""

from __future__ import annotations

import pandas as pd

from ...core.common import display_text
from ...core.readers.ncu_rep_source import SourceLine, SourcePage, read_source
from ...core.readers.source_cuda import CudaLine, cuda_text
from ...core.report import Report
from . import format as fmt
from .rules import longest_launch

# The SASS fourth: at 80 columns it is what a narrow table must keep beside the samples.
COLUMNS = ("Address", "Samples", "%", "SASS", "Top stall", "Not issued", "Executed", "Source")
CUDA = "CUDA"  # the CUDA line's text, last: only where the report embeds the files
# The page by CUDA line (each line's SASS lines summed): its text fourth, as the SASS is above.
CUDA_COLUMNS = ("Source", "Samples", "%", CUDA, "Top stall", "Not issued", "Executed", "SASS lines")


# ncu_report gives `???` for an address it cannot disassemble: all of the V100 report's. The ncu
# CLI 2024.1 prints that SASS; the installed ncu_report is a newer Nsight Compute's, whose GPU
# support table lists Volta as unsupported (2024.1's listed it).
UNDISASSEMBLED = "???"
NO_SASS_CELL = "(no SASS text)"
NO_SASS_NOTE = (
    "No SASS text: the installed ncu_report does not disassemble this report's code (its Nsight"
    " Compute no longer supports some GPUs, Volta among them); an ncu that does prints it: `ncu"
    " --import FILE --page source --print-source sass`."
)


def sass_missing(page: SourcePage) -> bool:
    """Whether the page has lines but ncu_report gave the text of none of them."""
    return bool(page.lines) and all(line.sass in ("", UNDISASSEMBLED) for line in page.lines)


def _sass(line: SourceLine) -> str | None:
    return None if line.sass in ("", UNDISASSEMBLED) else line.sass


def page_columns(page: SourcePage) -> tuple[str, ...]:
    """The SASS table's columns: the CUDA text beside them where the report holds the files."""
    return (*COLUMNS, CUDA) if page.files else COLUMNS


def row_source(report: Report, row: pd.Series, by: str = "name") -> tuple[SourcePage | None, str]:
    """The source page of `row`'s launch (its longest, for a group) and which launch that is in
    words; None where the row names no launch of the report."""
    launch_id, which = longest_launch(report, row, by)
    if launch_id is None:
        return None, which
    return read_source(report.meta.source, launch_id), which


def line_cells(
    line: SourceLine, total: int, files: dict[str, list[str]] | None = None
) -> list[str]:
    """One SASS line as the table shows it: text from the report made inert. `files`
    (`file_lines(page)`): the CUDA line's text as a last cell; None: no such cell."""
    where = _where(line.file, line.line)
    cuda = (
        []
        if files is None
        else [display_text((cuda_text(files, line.file, line.line) or "").strip())]
    )
    return [
        f"{line.address:#x}",
        fmt.integer(line.samples),
        fmt.pct(100 * line.samples / total) if total else "",
        display_text(_sass(line) or NO_SASS_CELL),
        line.top_stall,
        fmt.integer(line.not_issued),
        fmt.integer(line.executed) if line.executed is not None else "",
        where,
        *cuda,
    ]


def cuda_cells(line: CudaLine, total: int) -> list[str]:
    """One CUDA line of the by-line view: its SASS lines' samples and instructions summed, its text
    inert."""
    return [
        _where(line.file, line.line),
        fmt.integer(line.samples),
        fmt.pct(100 * line.samples / total) if total else "",
        display_text((line.text or "").strip()),
        line.top_stall,
        fmt.integer(line.not_issued),
        fmt.integer(line.executed) if line.executed is not None else "",
        fmt.integer(line.sass_lines),
    ]


def cuda_record(line: CudaLine) -> dict[str, object]:
    """One CUDA line for `--json` (the text as the report holds it: JSON escapes what it must)."""
    return {
        "file": line.file,
        "line": line.line,
        "cuda": line.text,
        "samples": line.samples,
        "not_issued": line.not_issued,
        "executed": line.executed,
        "sass_lines": line.sass_lines,
        "stalls": line.stalls,
        "top_stall": line.top_stall,
    }


def _where(file: str, line: int | None) -> str:
    return f"{display_text(file.rsplit('/', 1)[-1])}:{line}" if file and line else ""


def line_record(line: SourceLine, files: dict[str, list[str]] | None = None) -> dict[str, object]:
    """One SASS line for `--json`, with its CUDA line's text where the report holds it."""
    return {
        "address": line.address,
        "sass": _sass(line),  # null: ncu_report gave no text
        "samples": line.samples,
        "not_issued": line.not_issued,
        "executed": line.executed,
        "stalls": line.stalls,
        "top_stall": line.top_stall,
        "file": line.file or None,
        "line": line.line,
        "cuda": cuda_text(files, line.file, line.line) if files else None,
    }
