"""`--where EXPR` of `report`, `export` and `check`: the engine's expressions (core/table/where.py)
over a table, its columns named as the app's table names them, a bad expression one line naming the
problem and where it is."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ...core.common import FlopscopeError
from ...core.table.where import WhereError, parse
from .columns import EXTRA_COLUMNS, Column, filter_names, shown_texts


def where_mask(text: str, rows: pd.DataFrame, columns: Iterable[Column]) -> np.ndarray:
    """The rows of `rows` (a kernels table) where `text` holds; `columns`: the table's, whose titles
    name them."""
    shown = list(columns)
    try:
        where = parse(text, filter_names(shown, rows.columns))
        return where.mask(rows, shown_texts([*shown, *EXTRA_COLUMNS.values()]))
    except WhereError as err:
        raise FlopscopeError(
            f"--where {text}",
            f"{err.problem} at character {err.position + 1}",
            err.hint or "write it as `time > 5us and bound == dram` (docs/cli.md, --where)",
        ) from None
