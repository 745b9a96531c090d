"""Each launch's NVTX ranges read from an ncu CSV page (raw or details) with `csv` alone, not the
engine: per domain, its ranges in the order the page lists them (push/pop, then start/stop), each
name whole."""

from __future__ import annotations

import csv
import gzip
import re
import sys
from pathlib import Path

_ENTRY = re.compile(r'"([^"]*)"')
# A .ncu-rep's ranges as `ncu_stacks` read them, per file: each test process exports a report's
# page once (test_nvtx_groups and test_nvtx_stack both compare against every real file's).
_EXPORTED: dict[Path, dict[int, dict[str, tuple[str, ...]]]] = {}
_RANGE_FIELD = ("Push/Pop_Range", "Start/Stop_Range")


def page_stacks(page: Path) -> dict[int, dict[str, tuple[str, ...]]]:
    """{launch ID: {domain ("" for ncu's `<default domain>`): (outermost range, ..., innermost)}}; a
    launch without ranges maps to {}. A details page repeats a launch on each of its metric rows:
    the first counts."""
    csv.field_size_limit(sys.maxsize)  # a page's instanced metrics hold long cells
    opener = gzip.open if page.suffix == ".gz" else open
    with opener(page, "rt", newline="", encoding="utf-8-sig", errors="replace") as handle:
        rows = csv.reader(line for line in handle if not line.startswith("=="))
        header = next(r for r in rows if r and r[0] == "ID")
        columns = [k for k, h in enumerate(header) if any(f in h for f in _RANGE_FIELD)]
        out: dict[int, dict[str, tuple[str, ...]]] = {}
        for row in rows:
            if (
                len(row) <= max(columns, default=0)
                or not row[0].strip().isdigit()
                or int(row[0]) in out
            ):
                continue  # the units row, a details page's later rows of a launch
            stacks: dict[str, list[str]] = {}
            for k in columns:
                for domain, name in _cell_ranges(header[k], row[k]):
                    stacks.setdefault(domain, []).append(name)
            out[int(row[0])] = {d: tuple(names) for d, names in stacks.items()}
    return out


def _cell_ranges(header: str, cell: str) -> list[tuple[str, str]]:
    """(domain, name) per quoted entry: the entry's fields are the header's, so a name holding `:`
    is what the fields before and after it leave."""
    fields = header.split(":")
    at = next(k for k, f in enumerate(fields) if f in _RANGE_FIELD)
    out = []
    for entry in _ENTRY.findall(cell):
        parts = entry.split(":")
        after = len(fields) - at - 1
        domain = parts[at - 1] if at else ""
        name = ":".join(parts[at : len(parts) - after])
        out.append(("" if domain == "<default domain>" else domain, name))
    return out


def ncu_page(path: Path, ncu: list[str], folder: Path) -> Path:
    """The page to read with `csv`: the file itself where it is a CSV page, else `ncu --import F
    --page raw --csv` of it (`ncu`: the real_ncu fixture's command)."""
    import subprocess

    from .real_files import plain_copy

    if ".ncu-rep" not in path.name:
        return path
    page = folder / "page.csv"
    with page.open("w") as out:
        subprocess.run(
            [*ncu, "--import", str(plain_copy(path, folder)), "--page", "raw", "--csv"],
            stdout=out,
            check=True,
            timeout=300,
        )
    return page


def ncu_stacks(path: Path, ncu: list[str], folder: Path) -> dict[int, dict[str, tuple[str, ...]]]:
    """`page_stacks` of `ncu_page(path, ...)`; a .ncu-rep's page is exported once per test process
    (the tests only read the result)."""
    if ".ncu-rep" not in path.name:
        return page_stacks(path)
    if path not in _EXPORTED:
        _EXPORTED[path] = page_stacks(ncu_page(path, ncu, folder))
    return _EXPORTED[path]
