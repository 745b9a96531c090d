"""What the kernel table shows: grouped rows, an order (sort + filter) over them, and cells
formatted on demand.

No Textual here. The frame from `Report.group()` is never copied or reformatted: sorting and
filtering only compute `order` (frame positions, top to bottom), and a cell becomes a string when it
scrolls into view. That keeps 1M launches as cheap as 100 (formatting every cell up front costs ~10
s per million rows)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from rich.cells import cell_len

from ...core.common import display_text, is_missing
from ...core.table import MEMORY_LEVELS
from ...core.table.where import Where, WhereError, looks_like_where, parse
from . import format as fmt
from .columns import EXTRA_COLUMNS, Column, filter_names, shown_texts

BOUNDS = ("all", "memory", "compute")  # what `b` cycles through
LEVELS = MEMORY_LEVELS  # `bound:l2`: the rows whose lowest ceiling is that memory level's
_CACHE_ROWS = 4096  # formatted rows kept; a screen shows < 100, scrolling back reuses them


@dataclass(frozen=True)
class Query:
    """Sort and filter, kept when the grouping changes."""

    sort: str | None = None  # None: the engine's order (time, descending)
    descending: bool = True
    pattern: str = ""  # regex over the row's name, case-insensitive
    bound: str = "all"
    # an expression over the columns (core/table/where.py): `time > 5us and bound == dram`
    where: str = ""

    def text(self) -> str:
        """The filter as typed: `regex bound:memory`, `time > 5us bound:memory`."""
        typed = self.where or self.pattern
        parts = [typed] if typed else []
        return " ".join([*parts, f"bound:{self.bound}"] if self.bound != "all" else parts)

    @property
    def filtered(self) -> bool:
        return bool(self.pattern or self.where) or self.bound != "all"


def sorted_by(query: Query, column: Column) -> Query:
    """`s` on `column`: sort by it, or flip the order if it is already the sort (time is the default
    sort). A new sort starts with numbers biggest first and names A to Z."""
    if query.sort == column.name or (query.sort is None and column.name == "duration_s"):
        return replace(query, sort=column.name, descending=not query.descending)
    return replace(query, sort=column.name, descending=column.numeric)


def parse_filter(text: str, query: Query, names: dict[str, str] | None = None) -> Query:
    """`gemm bound:memory` -> pattern 'gemm', bound 'memory'; with the table's column `names`
    (`TableModel.names`), an expression (`time > 5us`, `looks_like_where`) -> `where`, checked as
    far as it can be without the rows. Raises ValueError with a readable reason (WhereError: with
    the position)."""
    bound, words = "all", []
    for word in text.split(" "):
        if word.lower().startswith("bound:"):
            bound = word.split(":", 1)[1].lower() or "all"
            if bound not in BOUNDS + LEVELS:
                raise ValueError(f"bound:{bound}? use one of {', '.join(BOUNDS + LEVELS)}")
        else:
            words.append(word)
    pattern = " ".join(words).strip()
    if names is not None and looks_like_where(pattern, names):
        parse(pattern, names)  # WhereError where it cannot be one
        return replace(query, pattern="", where=pattern, bound=bound)
    try:
        re.compile(pattern)
    except re.error as err:
        raise ValueError(f"not a regular expression ({err})") from None
    return replace(query, pattern=pattern, where="", bound=bound)


def problem_text(err: ValueError) -> str:
    """A filter's problem in one line: an expression's with its position and the fix (`no column
    'tme' at character 1: did you mean time?`)."""
    return f"{err}: {err.hint}" if isinstance(err, WhereError) and err.hint else str(err)


# `name=value` typed as it is written (letters, digits, `.`, `-`), ending the filter or one of its
# alternatives.
_TYPED_VALUE = re.compile(r"(?<=\w=)([\w.-]+)(?=$|[\s|)])")


def whole_values(pattern: str) -> str:
    """The filter as matched: a parameter's value typed whole matches that value whole, so
    `batch_size=1` finds `batch_size=1` (before a space, `-`, `,` or the end) and not
    `batch_size=16` or `=1024`; a value written as a regex (`batch_size=1\\d+`, `=(1|8)`) is left to
    mean what it says."""
    return _TYPED_VALUE.sub(lambda typed: typed.group(1) + r"(?![\w.])", pattern)


def filter_problem(
    text: str, query: Query, no_bound: str = "", model: TableModel | None = None
) -> str | None:
    """Why `text` cannot filter these rows (a bad regex or expression; a bound where rows have none,
    `no_bound` saying so), or None: the filter dialogs stay open with the reason instead of dropping
    what was typed. `model`: the rows, whose columns an expression names and whose values it is
    tried on."""
    try:
        parsed = parse_filter(text, query, model.names if model is not None else None)
        if model is not None and parsed.where:
            model.where(parsed.where).mask(model.rows, model.shown_as, model.factors)
    except ValueError as err:
        return problem_text(err)
    return no_bound if no_bound and parsed.bound != "all" else None


class TableModel:
    def __init__(
        self, rows: pd.DataFrame, columns: list[Column], query: Query | None = None
    ) -> None:
        self.rows = rows  # read-only: shared with the app's cache of groupings
        # the grouping's; `columns` adds the sort column when it is none of them
        self.table_columns = columns
        self.columns = columns
        self.query = Query()
        self._base: np.ndarray | None = None
        self.order = self._time_order()
        self._arrays: dict[str, Callable[[int], object]] = {}
        self._names: dict[str, tuple[np.ndarray, list]] = {}
        self._cells: dict[int, list[str]] = {}
        self._widths: dict[str, int] = {}
        self._valued: dict[str, bool] = {}
        self._unprofiled: np.ndarray | None = None
        self._wheres: dict[str, Where] = {}
        # what an expression may call a column
        self.names = filter_names(columns, self.rows.columns)
        self.shown_as = shown_texts([*columns, *EXTRA_COLUMNS.values()])
        if query is not None:
            self.apply(query)

    def __len__(self) -> int:
        return len(self.order)

    @property
    def total(self) -> int:
        return len(self.rows)

    def apply(self, query: Query) -> None:
        """Recompute `order`; a sort column this grouping lacks falls back to the engine's order."""
        if query.sort is not None and query.sort not in self.rows:
            query = replace(query, sort=None, descending=True)
        order = self._sorted(query)
        keep = self._mask(query)
        self.order = order if keep is None else order[keep[order]]
        self.query = query
        columns = self.table_columns
        if query.sort in EXTRA_COLUMNS and query.sort not in {c.name for c in columns}:
            columns = [*columns, EXTRA_COLUMNS[query.sort]]
        if columns != self.columns:
            self.columns = columns
            self._cells.clear()  # cached rows hold one cell per column

    def has_values(self, name: str) -> bool:
        """Whether any row has a value in column `name` (sorting by an empty column would change
        nothing)."""
        if name not in self._valued:
            values = self.rows.get(name)
            valued = values is not None and bool(values.notna().any())
            if valued and not pd.api.types.is_numeric_dtype(values):
                valued = any(u.strip() for u in self.distinct(name))
            self._valued[name] = valued
        return self._valued[name]

    def natural_width(self, column: Column) -> int:
        """Cells the column needs: its longest name or text as shown (rendered: `! why`, a short
        precision), its largest whole number, else its set width; at least its title and the sort
        arrow (`N↓`)."""
        if column.name not in self._widths:
            width = column.width
            title = len(column.title) + 1
            if not column.numeric and column.name in self.rows:
                # as shown: a control character takes the cells of its escape (`\x1b`)
                width = max(
                    [
                        title,
                        *(
                            cell_len(display_text(column.render(u)))
                            for u in self.distinct(column.name)
                        ),
                    ]
                )
            elif column.render is fmt.integer and column.name in self.rows and len(self.rows):
                width = max(title, len(fmt.integer(self.rows[column.name].max())))
            if column.at_least:  # `≥ 1.70 ms` must not be cut to `≥ 1.70 …`
                width = max(width, *self._lower_bound_widths(column))
            self._widths[column.name] = width
        return self._widths[column.name]

    def _lower_bound_widths(self, column: Column) -> list[int]:
        """Cells each value marked a lower bound takes with its `≥ ` (few rows: those with launches
        not profiled), and 0."""
        marker, values = self.rows.get(column.at_least), self.rows.get(column.name)
        if marker is None or values is None:
            return [0]
        marked = pd.to_numeric(marker, errors="coerce").fillna(0).astype(bool).to_numpy()
        return [0, *(cell_len(fmt.at_least(_render(column, v), True)) for v in values[marked])]

    def distinct(self, name: str) -> list[str]:
        """The distinct values of a column, as text."""
        return self._factors(name)[1]

    def texts(self, column: Column) -> list[str]:
        """The distinct cells of a text column, as the table renders them."""
        if column.name not in self.rows:
            return []
        return list(dict.fromkeys(_render(column, value) for value in self.distinct(column.name)))

    def not_profiled(self, index: int) -> str | None:
        """Why the index-th row shown has no values (its launches were not profiled), or None."""
        if self._unprofiled is None:
            status = self.rows.get("status")
            self._unprofiled = (
                np.zeros(len(self.rows), dtype=bool)
                if status is None
                else (status.notna() & (status.astype(object) != "ok")).to_numpy(dtype=bool)
            )
        position = self.position(index)
        return str(self.rows["status"].iat[position]) if self._unprofiled[position] else None

    def _sorted(self, query: Query) -> np.ndarray:
        base = self._time_order()
        if query.sort is None:
            return base
        values = self.rows[query.sort]
        if pd.api.types.is_numeric_dtype(values) and not isinstance(
            values.dtype, pd.CategoricalDtype
        ):
            # real values, not their formatted text
            data = values.to_numpy(dtype=float, na_value=np.nan)
        else:
            data = self._text_ranks(query.sort)
        # Negating keeps ties in time order and NaN last: the engine's stable
        # sort_values(na_position="last").
        data = data[base]
        return base[np.argsort(-data if query.descending else data, kind="stable")]

    def _time_order(self) -> np.ndarray:
        """The engine's order (longest first, unknown last): the frame's own, or computed once here
        for the uncopied launches table (`Report.group("launch", time_order=False)`)."""
        # frames the engine left in launch order say so
        if self.rows.attrs.get("time_ordered", True):
            return np.arange(len(self.rows))
        if self._base is None:
            duration = self.rows["duration_s"].to_numpy(dtype=float, na_value=np.nan)
            self._base = np.argsort(np.where(np.isnan(duration), np.inf, -duration), kind="stable")
        return self._base

    def _text_ranks(self, name: str) -> np.ndarray:
        """Each row's place in the A-Z order of its column's distinct values (NaN if missing): text
        and categorical columns (whose category order is not alphabetical) sort alike, ranking each
        name once."""
        codes, uniques = self._factors(name)
        ranks = np.empty(len(uniques) + 1)
        ranks[np.argsort(np.array(uniques, dtype=object), kind="stable")] = np.arange(len(uniques))
        ranks[-1] = np.nan  # code -1: missing
        return ranks[codes]

    def where(self, text: str) -> Where:
        """`text` parsed over these rows' columns, once (typed live, the same text comes back as it
        grows)."""
        if text not in self._wheres:
            self._wheres[text] = parse(text, self.names)
        return self._wheres[text]

    def factors(self, name: str) -> tuple[np.ndarray, list[str]]:
        """(code per row, distinct values as text) of a column, computed once: what an expression
        matches."""
        return self._factors(name)

    def _mask(self, query: Query) -> np.ndarray | None:
        keep = None
        if query.where:
            try:
                keep = self.where(query.where).mask(self.rows, self.shown_as, self.factors)
            # an expression of another grouping's columns: no row matches it here
            except WhereError:
                keep = np.zeros(len(self.rows), dtype=bool)
        if query.pattern:
            regex = re.compile(whole_values(query.pattern), re.IGNORECASE)
            for name in self._name_columns():
                hits = self._matches(name, regex)
                keep = hits if keep is None else keep | hits
        if query.bound != "all":
            column = "roof" if query.bound in LEVELS else "bound"
            is_bound = self.rows[column].to_numpy(dtype=object) == query.bound
            keep = is_bound if keep is None else keep & is_bound
        return keep

    def _name_columns(self) -> list[str]:
        first = self.columns[0].name
        return [c for c in dict.fromkeys([first, "kernel_full"]) if c in self.rows]

    def _matches(self, name: str, regex: re.Pattern) -> np.ndarray:
        # Names repeat (a kernel launched 10k times): match each distinct name once.
        codes, uniques = self._factors(name)
        hits = np.fromiter(
            (regex.search(u) is not None for u in uniques), dtype=bool, count=len(uniques)
        )
        return np.append(hits, False)[codes]  # code -1 (missing name) lands on the appended False

    def _factors(self, name: str) -> tuple[np.ndarray, list[str]]:
        """(code per row, distinct values as text), computed once per column."""
        if name not in self._names:
            codes, uniques = pd.factorize(self.rows[name], use_na_sentinel=True)
            self._names[name] = (codes, [str(u) for u in uniques])
        return self._names[name]

    def position(self, index: int) -> int:
        """Frame position of the index-th row shown."""
        return int(self.order[index])

    def index_of(self, position: int) -> int | None:
        found = np.flatnonzero(self.order == position)
        return int(found[0]) if len(found) else None

    def row(self, index: int) -> pd.Series:
        return self.rows.iloc[self.position(index)]

    def shown(self) -> pd.DataFrame:
        """The rows as shown (filter and sort applied), every column: what export writes."""
        return self.rows.iloc[self.order].reset_index(drop=True)

    def cells(self, index: int) -> list[str]:
        """Formatted cells of the index-th row shown, one per column in `columns`."""
        position = self.position(index)
        cached = self._cells.get(position)
        if cached is None:
            if len(self._cells) > _CACHE_ROWS:
                self._cells.clear()
            cached = self._cells[position] = [
                fmt.at_least(
                    _render(c, self._value(c.name, position)),
                    bool(c.at_least and fmt.flagged(self._value(c.at_least, position))),
                )
                for c in self.columns
            ]
        return cached

    def _value(self, name: str, position: int) -> object:
        # Only numbers are fetched through whole-column arrays (zero-copy views); turning 1M names
        # into Python strings to show 40 of them would cost more than the rest of a first paint.
        if name not in self._arrays:
            self._arrays[name] = _column_reader(self.rows.get(name))
        return self._arrays[name](position)


def _column_reader(values: pd.Series | None):
    if values is None:
        return lambda position: None
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes, categories = (
            values.cat.codes.to_numpy(),
            np.asarray(values.cat.categories, dtype=object),
        )
        return lambda position: categories[codes[position]] if codes[position] >= 0 else None
    if pd.api.types.is_numeric_dtype(values):
        array = values.to_numpy()
        return lambda position: array[position]
    return values.iat.__getitem__


def _render(column: Column, value: object) -> str:
    if is_missing(value):
        return ""
    return column.render(value)
