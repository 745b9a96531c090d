"""CUDA source beside the SASS: the text of each SASS line's file:line, where the report embeds the
file (ncu `--import-source yes`), and the source page by CUDA line: each CUDA line's SASS lines,
their samples and instructions summed, as ncu's `cuda,sass` source view sums them. The text is the
report's, untrusted: whoever shows it makes it inert (`display_text`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .ncu_rep_source import SourceLine, SourcePage

# What a page without CUDA lines needs, in the words of the compiler's and ncu's options.
NO_CUDA_LINES = (
    "no CUDA lines: compile with -lineinfo (nvcc), and profile with ncu --import-source yes for"
    " their text"
)


@dataclass(frozen=True)
class CudaLine:
    file: str
    line: int
    text: str | None  # None: the report does not embed the file (or it is shorter)
    samples: int
    not_issued: int
    executed: int | None  # None where no SASS line of it has the count
    sass_lines: int
    stalls: dict[str, int] = field(default_factory=dict)

    @property
    def top_stall(self) -> str:
        stalls = {r: n for r, n in self.stalls.items() if r != "selected"}
        return max(stalls, key=lambda r: stalls[r]) if stalls else ""


def file_lines(page: SourcePage) -> dict[str, list[str]]:
    """Each embedded file as its lines, numbered from 1 as the compiler numbers them (split at
    newlines only: a form feed or a lone CR inside a line does not start a new one)."""
    return {
        name: [ln.removesuffix("\r") for ln in text.split("\n")]
        for name, text in page.files.items()
    }


def cuda_text(lines: dict[str, list[str]], file: str, line: int | None) -> str | None:
    """The text of `file`:`line`, from `file_lines(page)`; None where the report does not hold
    it."""
    text = lines.get(file)
    if text is None or line is None or not 1 <= line <= len(text):
        return None
    return text[line - 1]


def by_cuda_line(page: SourcePage) -> list[CudaLine]:
    """The page's SASS lines grouped by CUDA file:line (those the report resolves), in file and line
    order."""
    groups: dict[tuple[str, int], list[SourceLine]] = {}
    for sass in page.lines:
        if sass.file and sass.line is not None:
            groups.setdefault((sass.file, sass.line), []).append(sass)
    lines = file_lines(page)
    return [
        _summed(file, line, cuda_text(lines, file, line), group)
        for (file, line), group in sorted(groups.items())
    ]


def hottest_cuda(lines: list[CudaLine], top: int | None = None) -> list[CudaLine]:
    """CUDA lines by samples, most first (then instructions executed, then file and line)."""
    ranked = sorted(lines, key=lambda c: (-c.samples, -(c.executed or 0), c.file, c.line))
    return ranked[:top] if top is not None else ranked


def _summed(file: str, line: int, text: str | None, group: list[SourceLine]) -> CudaLine:
    stalls: dict[str, int] = {}
    for sass in group:
        for reason, n in sass.stalls.items():
            stalls[reason] = stalls.get(reason, 0) + n
    counts = [s.executed for s in group if s.executed is not None]
    return CudaLine(
        file=file,
        line=line,
        text=text,
        samples=sum(s.samples for s in group),
        not_issued=sum(s.not_issued for s in group),
        executed=sum(counts) if counts else None,
        sass_lines=len(group),
        stalls=stalls,
    )
