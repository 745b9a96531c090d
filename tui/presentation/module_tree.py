"""The module tree (`report --by module`) as the CLI prints it, an indented table, and as nested
JSON rows; the app's sort choices for it; what a report without NVTX ranges says instead."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from ...core.common import display_text
from ...core.export import records
from ...core.table import DESCRIPTIONS
from ...core.table.module_tree import with_public_paths
from . import format as fmt
from .tables import Spec, TextTable, fitted_table

if TYPE_CHECKING:
    from ...core.report.meta import ReportMeta

INDENT = "  "
# (title, canonical column, how a cell reads, right-aligned, drop priority: higher drops first; 0
# never)
COLUMNS: list[tuple[str, str, Any, bool, int]] = [
    ("Module", "name", fmt.text, False, 0),
    ("N", "count", fmt.integer, True, 4),
    ("Time", "duration_s", fmt.seconds, True, 0),
    ("%Time", "pct_time", fmt.pct, True, 0),
    ("Fwd", "forward_duration_s", fmt.seconds, True, 2),
    ("Bwd", "backward_duration_s", fmt.seconds, True, 2),
    ("Own", "own_duration_s", fmt.seconds, True, 5),
    ("FLOP", "flop", fmt.si, True, 3),
    ("FLOP/s", "flop_per_s", fmt.si, True, 3),
    ("%Peak", "pct_of_peak", fmt.pct, True, 6),
    ("%Roof", "pct_of_roof", fmt.pct, True, 1),
    ("Bound", "roof", fmt.roof, False, 1),
]
# With `report --by module --model MODEL.json` (core/analysis/module_model.py): the analytic FLOPs
# beside the measured ones. Only in the CLI's table and JSON, and only when asked for.
MODEL_COLUMNS: list[tuple[str, str, Any, bool, int]] = [
    ("Model", "model_flop", fmt.si, True, 0),
    ("/Model", "flop_vs_model", fmt.ratio, True, 0),
]
# With a timing file (profile --modules' timing run; core/analysis/step_mfu.py): each node's MFU
# over its kernel time and its part of the median step's MFU over wall time. Only in the CLI's table
# and JSON.
MFU_COLUMNS: list[tuple[str, str, Any, bool, int]] = [
    ("MFU krn", "mfu_kernel", fmt.share, True, 7),
    ("MFU wall", "mfu_wall", fmt.share, True, 7),
]
# What the tree's own columns hold (the canonical ones are described in core.table.DESCRIPTIONS).
_TREE_DESCRIPTIONS = {
    "name": "the module (or NVTX range) name",
    "forward_duration_s": "time of its forward launches",
    "backward_duration_s": "time of its backward launches (the module whose backward ran them)",
    "own_duration_s": "time of its launches outside its children",
    "mfu_kernel": "its FLOPs' time at peak over its kernel time",
    "mfu_wall": "its FLOPs' time at peak per step over the median step's wall time",
    "model_flop": "the model's analytic FLOPs of the module it names",
    "flop_vs_model": "measured FLOPs / the model's",
}


def sort_choices(tree: pd.DataFrame) -> tuple[list[tuple[str, str]], list[str]]:
    """The sort picker's (column, label) for each of the tree's columns with a value, and the titles
    of those without (as the Kernels screen's picker offers its columns); the MFU and model columns
    where the tree has them."""
    offered = [*COLUMNS, *(c for c in (*MFU_COLUMNS, *MODEL_COLUMNS) if c[1] in tree)]
    has = [
        (title, column)
        for title, column, *_ in offered
        if column in tree and tree[column].notna().any()
    ]
    choices = [(c, f"{t} · {_TREE_DESCRIPTIONS.get(c) or DESCRIPTIONS.get(c, c)}") for t, c in has]
    return choices, [title for title, column, *_ in offered if (title, column) not in has]


def column_title(column: str) -> str:
    """The title a tree column is printed under: `duration_s` -> `Time`."""
    every = (*COLUMNS, *MFU_COLUMNS, *MODEL_COLUMNS)
    return next((title for title, c, *_ in every if c == column), column)


EXAMPLE = "python train.py"  # the program in the hint where the report does not say which one ran


def modules_hint(meta: ReportMeta) -> str:
    """Why a report without NVTX ranges has a one-node tree, and the `flopscope profile --modules`
    that fills it: the command and host a stored run was profiled with, word for word, else an
    example to put the program in."""
    command, host = meta.params.get("command"), meta.params.get("host")
    words = [str(w) for w in command] if isinstance(command, list) else []
    known = bool(words) and words == command
    on = (
        f"--host {shlex.quote(host)} "
        if isinstance(host, str) and host and host != "localhost"
        else ""
    )
    line = (
        f"flopscope profile --modules {on if known else ''}--"
        f" {shlex.join(words) if known else EXAMPLE}"
    )
    how = (
        "(the command it was profiled with"
        if known
        else f"(your program in the place of `{EXAMPLE}`"
    ) + "; any PyTorch program, unchanged: each module call becomes a range)"
    return display_text(
        f"no NVTX ranges, so its module tree is one node; profile it with `{line}` {how}, or use "
        "flopscope.torch.annotate(model) in the program"
    )


def tree_table(tree: pd.DataFrame, width: int) -> tuple[TextTable, list[str]]:
    """One line a node, indented by depth under the root; `Own` is the time of its launches outside
    children; the model's FLOPs and measured / model where the tree has them."""
    columns = COLUMNS + [c for c in (*MFU_COLUMNS, *MODEL_COLUMNS) if c[1] in tree]
    specs = [Spec(title, right, priority) for title, _, _, right, priority in columns]
    rows = []
    for node in tree.to_dict(orient="records"):
        cells = [render(node.get(column)) for _, column, render, _, _ in columns]
        cells[0] = INDENT * int(node["depth"]) + cells[0]
        rows.append(cells)
    return fitted_table(specs, rows, width, flex=0)


def tree_json(tree: pd.DataFrame) -> list[dict[str, Any]]:
    """The nodes nested: each a JSON row of its columns (`path`, `depth`, ...) with its `children`,
    in the order printed (tree is depth first). `path_names` is a node's path as the list of its
    names (the canonical one: a name may hold `/`); `path` the same joined with `/`, as it was
    before there was the list."""
    out: list[dict[str, Any]] = []
    stack: list[dict[str, Any]] = []
    for row in records(with_public_paths(tree)):
        row["children"] = []
        depth = cast(int, row["depth"])
        del stack[depth:]
        (stack[-1]["children"] if stack else out).append(row)
        stack.append(row)
    return out
