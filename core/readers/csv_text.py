"""What both ncu CSV layouts share: preamble lines, the header row, identity and NVTX columns."""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import FlopscopeError
from ..common.nvtx_stack import DEFAULT_DOMAINS, encode_stack

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
_THREAD = re.compile(r'^\s*"?\s*\d+\s+')
_QUOTED = re.compile(r'"([^"]*)"')


@dataclass
class CsvText:
    """Where ncu's table starts in a file; the rows themselves stay on disk until a layout reads
    them."""

    path: Path
    preamble: str
    header: list[str]
    data_offset: int  # byte offset of the first line after the header

    def body_bytes(self) -> bytes:
        """The rows, with ncu's own `==PROF==`/`==WARNING==` lines between them removed (a
        whole-file read)."""
        with self.path.open("rb") as handle:
            handle.seek(self.data_offset)
            body = handle.read()
        if body.startswith(b"==") or b"\n==" in body:
            body = b"\n".join(ln for ln in body.split(b"\n") if not ln.startswith(b"=="))
        return body

    def body_text(self) -> str:
        return self.body_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")


_HEADER = b'"ID","'
_CHUNK = 1 << 22


def _no_header(path: Path, head: bytes) -> FlopscopeError:
    """ncu's console output without its table: its own warning says why when it profiled nothing."""
    # ==WARNING== today, ==PROF== in 2019's nv-nsight-cu-cli
    if b"== No kernels were profiled" in head:
        return FlopscopeError(
            path,
            "ncu profiled no kernels (its output says `No kernels were profiled`)",
            "check that the program launches CUDA kernels and that ncu's -k, -c and --launch-skip"
            " match them",
        )
    return FlopscopeError(
        path,
        'no ncu CSV header row ("ID",...) found',
        "export with `ncu --import REPORT --csv --page raw` (or --page details)",
    )


def split_csv(path: Path) -> CsvText:
    """Find ncu's header row after any preamble (==PROF== lines, program output, a BOM, CRLF)."""
    with path.open("rb") as handle:
        head = b""
        while True:
            chunk = handle.read(_CHUNK)
            head += chunk
            start = _header_start(head)
            if start >= 0 and (b"\n" in head[start:] or not chunk):
                break
            if not chunk or len(head) > 64 * _CHUNK:
                raise _no_header(path, head)
        end = head.find(b"\n", start)
        end = len(head) if end < 0 else end
        header = next(csv.reader([head[start:end].decode("utf-8", errors="replace").rstrip("\r")]))
        preamble = head[:start].decode("utf-8", errors="replace").lstrip("\ufeff")
    return CsvText(path, preamble, header, end + 1)


def _header_start(head: bytes) -> int:
    bom = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    if head.startswith(_HEADER, bom):
        return bom
    at = head.find(b"\n" + _HEADER)
    return at + 1 if at >= 0 else -1


def process_label(name: str | None, pid: str | None) -> str | None:
    if not name and not pid:
        return None
    return f"{name} ({pid})" if pid else name


def nvtx_text(header: list[str], nv: list[int], cells: Sequence[str | None]) -> str | None:
    """A launch's NVTX stack as the .ncu-rep readers write it (`nvtx_path`): per domain its push/pop
    ranges, outermost first, then its start/end ranges, from ncu's NVTX cells (one per kind;
    `cells[i]` is column `nv[i]`'s)."""
    domains: dict[str, list[str]] = {}
    for k, cell in zip(nv, cells, strict=True):
        for domain, name in nvtx_ranges(header[k], cell):
            domains.setdefault(domain, []).append(name)
    return nvtx_path(list(domains.items()))


def nvtx_ranges(header: str, cell: str | None) -> list[tuple[str, str]]:
    """(domain, range name) of each range in an NVTX cell, outermost first. A cell holds one quoted
    entry per range (`637  "<default domain>:measure:none:..."  "<default
    domain>:aten::mm:none:..."`), its fields as the header lists them; a name may hold colons
    (`aten::mm`), so it is what the fields around it leave."""
    if not cell or not cell.strip():
        return []
    fields = header.split(":")
    match = next((k for k, f in enumerate(fields) if _NVTX_HEADER.search(f)), None)
    entries = _QUOTED.findall(cell) or [_THREAD.sub("", cell.strip()).strip('"')]
    if match is None:
        return [("", e) for e in entries if e]
    after = len(fields) - match - 1
    out = []
    for entry in entries:
        parts = entry.split(":")
        if len(parts) < match + 1:
            out.append(("", entry))
            continue
        # ncu 2024.1 starts the cell with the launching thread's id (`266595  "<default
        # domain>:...`): the header's first field is "thread Domain", space-separated.
        domain = _THREAD.sub("", parts[match - 1]).strip().strip('"') if match >= 1 else ""
        rest = parts[match:]
        name = ":".join(rest[: len(rest) - after] if len(rest) > after else rest[:1])
        out.append(("" if domain in DEFAULT_DOMAINS else domain, name))
    return out


def nvtx_path(domains: list[tuple[str, list[str]]]) -> str | None:
    """(domain name, its open ranges outermost first) per domain as the launch's structured NVTX
    stack (`core/common/nvtx_stack.py`: names kept whole, the default domain unnamed), which every
    reader writes in its `nvtx` column; counting the kernels table makes `nvtx_stack` of it and the
    joined `nvtx` label."""
    return encode_stack(domains)


def nvtx_columns(header: list[str]) -> list[int]:
    return [k for k, h in enumerate(header) if _NVTX_HEADER.search(h)]
