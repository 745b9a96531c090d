"""Grouped tables kept beside a finished report's cache entry (cache.py): a big report opened again
is shown by kernel name or NVTX range without aggregating its launches again, with the very rows
its first open made.

Each grouping of a report entry is an entry of its own in the table cache's folder (table_cache.py:
atomic writes, size cap, an entry that cannot be read ignored and rewritten), named by the report
entry's name and the grouping. It holds the id the report entry was written with: a report entry
written again (another file, a damaged one replaced, another build) has a new id, so no grouped
table made from other launches is handed back. It is sealed with its SHA-256 (table_cache.save):
a damaged byte anywhere, numbers, names or types, and it is not read."""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..readers import table_cache

_SCALARS = (str, int, float, bool, type(None))


def new_table_id() -> str:
    """The id a report entry is written with (cache.py): its grouped tables name it."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class GroupCache:
    """The grouped tables of one finished-report entry (`entry`, written with `table_id`)."""

    entry: Path
    table_id: str

    def entry_of(self, key: str, by_gpu: bool) -> Path:
        name = json.dumps([self.entry.name, "grouped", key, by_gpu])
        return self.entry.with_name(f"{hashlib.sha256(name.encode()).hexdigest()[:32]}.parquet")

    def load(self, key: str, by_gpu: bool) -> pd.DataFrame | None:
        """The rows `Report.group` made of these launches by `key`, or None: no entry, a damaged
        one, or one made from another writing of the report entry."""
        cached = table_cache.load(self.entry_of(key, by_gpu), sealed=True)
        if cached is None:
            return None
        rows, stored = cached
        if stored.get("table_id") != self.table_id:
            return None
        try:
            return _decoded(rows, stored["json_columns"])
        # written by a build that stored other cells: group afresh
        except (KeyError, TypeError, ValueError):
            return None

    def save(self, key: str, by_gpu: bool, rows: pd.DataFrame) -> None:
        """Keep `rows` (a grouping by `key` of the entry's launches); rows with a cell JSON cannot
        hold exactly are not kept."""
        encoded = _encoded(rows)
        if encoded is None:
            return
        frame, json_columns = encoded
        stored = {"table_id": self.table_id, "json_columns": json_columns}
        table_cache.save(self.entry_of(key, by_gpu), frame, stored, sealed=True)


def _encoded(rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str]] | None:
    """`rows` with each object column that is not text alone (a group's one value or "(mixed)",
    each NVTX range list) as JSON text, and those columns' names; None where a cell is of a type
    JSON would hand back as another."""
    as_json = [
        c for c in rows.columns if rows[c].dtype == object and not table_cache.text_only(rows[c])
    ]
    if not as_json:
        return rows, []
    out = rows.copy(deep=False)
    for name in as_json:
        cells = [json.dumps(v) if _exact(v) else None for v in rows[name]]
        if any(cell is None for cell in cells):
            return None
        out[name] = pd.Series(cells, index=rows.index, dtype=object)
    return out, as_json


def _exact(value: Any) -> bool:
    """Whether JSON hands `value` back as it is, type included."""
    if type(value) in _SCALARS:
        return True
    if type(value) is list:
        return all(_exact(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _exact(v) for k, v in value.items())
    return False


def _decoded(rows: pd.DataFrame, json_columns: list[str]) -> pd.DataFrame:
    for name in json_columns:
        rows[name] = pd.Series([json.loads(v) for v in rows[name]], index=rows.index, dtype=object)
    return rows
