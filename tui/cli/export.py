"""`flopscope export`: the kernel table (or the module tree) written to CSV, Parquet or JSON, every
column of the rows unless `--columns` names them (as `report --columns` does: after the name, in the
order given)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...core.export import check_target, run_meta, write_table
from ...core.table.module_tree import with_public_paths
from ..presentation.columns import (
    chosen_columns,
    is_number_column,
    shows_speed_of_light,
    table_columns,
)
from ..presentation.messages import say
from ..presentation.warnings import warning_lines
from .view import _chosen, _module_tree, _view_order


def cmd_export(args) -> int:
    # a target that cannot be written is said before the read, not after
    kind = check_target(Path(args.output))
    if args.by == "module":
        # refuses --columns and --where: they are the kernel table's
        report, tree = _module_tree(args)
        out = write_table(
            with_public_paths(tree),
            args.output,
            meta=None if kind == "csv" else run_meta(report),
            raw_csv=args.raw_csv,
        )
        say(f"wrote {len(tree)} rows to {out}")
        return 0
    # The rows unsorted and their order: the writer takes each chunk's rows in it, so a million
    # launches are never copied sorted (~250 MB, a fifth of a 100k-launch CSV export's time beside
    # the bare read).
    report, rows, order = _view_order(args)
    keys = _chosen(args, report, rows)
    if keys is not None:
        rows = chosen_rows(rows, keys, args.by, isinstance(report.judged_by, dict))
    # A CSV has no place for the run's meta (its warnings are printed instead): not made for one.
    meta, warnings = (None if kind == "csv" else run_meta(report)), warning_lines(report)
    del report  # what the rows do not hold need not stay while they are written
    out = write_table(rows, args.output, meta=meta, raw_csv=args.raw_csv, order=order)
    for line in warnings:  # a CSV has no meta to carry them; after the write: a refusal is one line
        say(line)
    say(f"wrote {len(order)} rows to {out}")
    return 0


def chosen_rows(rows: pd.DataFrame, keys: list[str], by: str, gpus: bool) -> pd.DataFrame:
    """Only the columns `--columns` chose, as `report --columns` prints them: the grouping's name
    first (and the GPU on a file of several), then the keys in the order given. The frame keeps its
    positions: `order` holds."""
    default = table_columns(by, gpus, shows_speed_of_light(rows))
    columns = chosen_columns(default, keys, lambda k: is_number_column(rows, k))
    return rows[[c.name for c in columns if c.name in rows]]
