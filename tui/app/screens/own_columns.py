"""The column chooser (`C`) of a table with columns of its own (Runs, Diff, Reconcile): its choices
are the table's own columns, the first (what a row is) always first; the Kernels screen offers every
canonical column instead (kernels.py). The choice is kept per table in config.toml
(column_choice.py)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.screen import Screen

from ....core import FlopscopeError
from ....core.table import DESCRIPTIONS
from ...presentation.columns import Column
from ..column_choice import save_columns
from .columns import Choice


def own_chosen(
    default: list[Column], keys: list[str] | None, kept: Iterable[str] = ()
) -> list[Column]:
    """The table's columns as chosen (`keys`, in their order; None: `default`): the first column
    first, then `kept` (what tells rows apart: a diff's GPU when groups were matched on it), then
    the keys the table has."""
    if keys is None:
        return default
    by_name = {c.name: c for c in default}
    wanted = dict.fromkeys([*kept, *keys])
    return [default[0], *(by_name[k] for k in wanted if k in by_name and k != default[0].name)]


def own_choices(default: list[Column]) -> list[Choice]:
    """Every column of the table but its first, titled as the table titles it, with its meaning
    where the canonical table has one (else none: the title said again would add nothing)."""
    return [Choice(c.name, c.title, "", DESCRIPTIONS.get(c.name, "")) for c in default[1:]]


def keep_choice(screen: Screen, table: str, keys: list[str]) -> None:
    """Save `table`'s choice in config.toml and say where (or why not: the choice holds for this
    app)."""
    try:
        where = save_columns(table, keys)
    except (OSError, FlopscopeError) as exc:
        screen.notify(f"Not saved: {exc}", title="Columns", severity="warning", markup=False)
    else:
        screen.notify(f"Saved in {where}", title="Columns", markup=False)
