"""`y`: the selected kernel's full name onto the clipboard, over SSH too (Textual writes it as OSC
52)."""

from __future__ import annotations

import pandas as pd
from textual.app import App

from ....core.common import display_text


def full_name(row: pd.Series, name_column: str = "kernel") -> str:
    """The row's full kernel name (an NVTX range's name when the rows are ranges), as text that is
    safe to paste: a control character from the report is escaped (`\\x1b`), never sent to a shell
    or terminal."""
    # a range's row: its name
    grouped_by = [name_column] if name_column not in ("kernel", "kernel_full") else []
    for column in (*grouped_by, "kernel_full", "kernel"):
        value = row.get(column)
        if isinstance(value, str) and value:
            return display_text(value)
    return ""


def copy_full_name(app: App, row: pd.Series | None, name_column: str = "kernel") -> None:
    name = "" if row is None else full_name(row, name_column)
    if not name:
        app.notify("no kernel selected: nothing copied", timeout=3)
        return
    app.copy_to_clipboard(name)
    app.notify(
        f"{name[:60]}{'…' if len(name) > 60 else ''} ({len(name):,} characters)",
        title="Copied",
        timeout=3,
    )
