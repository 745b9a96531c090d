"""NVIDIA's own print of a report's source page (`ncu --import FILE --page source --csv`), read
independently of flopscope's reader, for the source-page tests."""

from __future__ import annotations

import csv
import functools
import io
import subprocess


def first_launch_page(real_ncu, path) -> dict[int, dict[str, str]]:
    """ncu's source page of the report's first launch, by address. ncu 2024.1 prints the source page
    of every launch, several blocks (one per function) each under its "Kernel Name" line, and
    ignores --launch-skip there: the first launch's blocks are those before an address comes round
    again."""
    blocks = sass_blocks(sass_page(tuple(real_ncu), str(path)))
    rows: dict[int, dict[str, str]] = {}
    for block in blocks:
        body = block[block.index('"Address"') :]
        page = {int(r["Address"], 16): r for r in csv.DictReader(io.StringIO(body))}
        if set(page) & set(rows):
            break
        rows |= page
    return rows


@functools.cache
def sass_page(real_ncu: tuple[str, ...], path: str) -> str:
    """ncu's SASS source page of every launch, printed once per test process for the tests of one
    report (several test files and helpers read it)."""
    out = subprocess.run(
        [*real_ncu, "--import", path, "--page", "source", "--csv", "--print-source", "sass"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout


def sass_blocks(page: str) -> list[str]:
    """A source page's blocks, each under its "Kernel Name" line, with SASS lines."""
    return [b for b in page.split('"Kernel Name",') if '"Address"' in b]


def cell(row: dict[str, str], which: str) -> str:
    """A warp-sampling cell: ncu names the columns "Samples", or "Cycles" for older GPUs (Volta)."""
    return row.get(
        f"Warp Stall Sampling ({which} Samples)",
        row.get(f"Warp Stall Sampling ({which} Cycles)", ""),
    )


def count(cell: str) -> int:
    return int(cell.replace(",", "")) if cell not in ("", "-") else 0
