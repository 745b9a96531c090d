"""Damaged copies of the real ncu fixtures: the tables parsed with the csv module (independently of
the engine), edited, and written back in ncu's layout (every cell quoted)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Table:
    """An ncu CSV page: what precedes the header, the header, the units row (raw pages only), the
    rows."""

    preamble: str
    header: list[str]
    units: list[str] | None
    rows: list[list[str]] = field(default_factory=list)

    def col(self, name: str) -> int:
        return self.header.index(name)

    def text(self) -> str:
        buf = io.StringIO()
        buf.write(self.preamble)
        w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(self.header)
        if self.units is not None:
            w.writerow(self.units)
        w.writerows(self.rows)
        return buf.getvalue()

    def write(self, path: Path) -> Path:
        path.write_text(self.text(), encoding="utf-8")
        return path

    def copy(self) -> Table:
        return Table(
            self.preamble,
            list(self.header),
            None if self.units is None else list(self.units),
            [list(r) for r in self.rows],
        )


def read_table(path: Path) -> Table:
    text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID","'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = rows[0], [r for r in rows[1:] if r]
    units = body.pop(0) if body and body[0] and body[0][0] == "" else None
    body = [r for r in body if r[0].isdigit()]  # ncu's own ==PROF== lines are no rows
    return Table("\n".join(lines[:start]) + ("\n" if start else ""), header, units, body)
