"""What both ncu CSV layouts share: preamble lines, the header row, identity and NVTX columns."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import FlopscopeError

# ncu's CSV identity headers mapped to canonical identity columns.
IDENTITY_HEADERS = {
    "ID": "launch_id",
    "Kernel Name": "kernel_full",
    "Stream": "stream",
    "Block Size": "block",
    "Grid Size": "grid",
    "Device": "device",
    "CC": "cc",
}
_NVTX_HEADER = re.compile(r"(Push/Pop_Range|Start/Stop_Range)")


@dataclass
class CsvText:
    path: Path
    preamble: str
    header: list[str]
    body: str  # data lines after the header, with ncu's own `==` lines removed


def split_csv(path: Path, text: str) -> CsvText:
    """Find ncu's header row after any preamble (==PROF== lines, program output, a BOM)."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    start = 0 if text.startswith('"ID","') else text.find('\n"ID","') + 1
    if start or text.startswith('"ID","'):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        header = next(csv.reader([text[start:end]]))
        body = text[end + 1:]
        if "\n==" in body or body.startswith("=="):  # ncu's own lines interleaved with the rows
            body = "\n".join(ln for ln in body.split("\n") if not ln.startswith("=="))
        return CsvText(path, text[:start], header, body)
    raise FlopscopeError(path, "no ncu CSV header row (\"ID\",...) found",
                         "export with `ncu --import REPORT --csv --page raw` (or --page details)")


def process_label(name: str | None, pid: str | None) -> str | None:
    if not name and not pid:
        return None
    return f"{name} ({pid})" if pid else name


def nvtx_label(header: str, cell: str | None) -> str | None:
    """The range name out of ncu's colon-separated NVTX cell, located by the header's field list."""
    if not cell:
        return None
    cell = cell.strip().strip('"').strip()
    if not cell:
        return None
    fields = header.split(":")
    match = next((k for k, f in enumerate(fields) if _NVTX_HEADER.search(f)), None)
    parts = cell.split(":")
    if match is None or match >= len(parts):
        return cell
    domain = parts[match - 1] if match >= 1 else ""
    name = parts[match]
    return name if domain in ("", "<default domain>") else f"{domain}:{name}"


def nvtx_columns(header: list[str]) -> list[int]:
    return [k for k, h in enumerate(header) if _NVTX_HEADER.search(h)]
