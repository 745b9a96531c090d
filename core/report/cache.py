"""The finished-report cache: a big report opened again skips counting and deriving as well as
reading.

`read_report` keeps, per report file and `--gpu`, the kernels table it made and the meta beside it,
as an entry of the table cache (table_cache.py: its key, atomic writes, size cap and `--no-cache`
apply). The entry's key holds a digest of all of core/, so a report derived by other code is never
handed back. Its groupings are kept beside it (group_cache.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..readers import table_cache
from ..table.counters import Missing
from .group_cache import GroupCache, new_table_id
from .meta import ReportMeta

_TABLE_ID = "table_id"  # the id of this writing of the entry, which its grouped tables name


def entry_for(path: Path, gpu: str | None) -> Path | None:
    return table_cache.entry_for(path, "report", gpu, code=table_cache.engine_code())


def load(entry: Path | None) -> tuple[pd.DataFrame, ReportMeta, list[Missing], GroupCache] | None:
    """(kernels, meta, missing) as `read_report` made them, and where their groupings are kept, or
    None when there is no usable entry."""
    cached = table_cache.load(entry) if entry is not None else None
    if cached is None:
        return None
    assert entry is not None  # a table was read from it
    kernels, stored = cached
    try:
        missing = [Missing(**m) for m in stored.pop("missing", [])]
        groups = GroupCache(entry, str(stored.pop(_TABLE_ID)))
        return kernels, ReportMeta.from_dict(stored), missing, groups
    # written by a build whose meta had other fields: read the report instead
    except (KeyError, TypeError, ValueError):
        return None


def save(
    entry: Path | None, kernels: pd.DataFrame, meta: ReportMeta, missing: list[Missing]
) -> GroupCache | None:
    """Keep the report; where its groupings can be kept (None: it was not)."""
    if entry is None:
        return None
    table_id = new_table_id()
    stored = {**meta.to_dict(m.__dict__ for m in missing), _TABLE_ID: table_id}
    return GroupCache(entry, table_id) if table_cache.save(entry, kernels, stored) else None
