"""Export (`e`): ask for a path, write exactly the rows shown with `core.export.write_table`, confirm.

Every column of the shown rows is written (not only those that fit the terminal), in the order shown,
at full precision: the numbers are the engine's, not the table's rounded text.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
from flopscope.core import FlopscopeError
from flopscope.core.export import write_table
from textual.app import App

from .prompt import PromptScreen


async def ask_export(app: App, rows: Callable[[], pd.DataFrame], default: Path, what: str = "rows shown") -> None:
    """Prompt for a path (default filled in), then write `rows()` there off the UI thread and notify.
    Awaited from a priority binding, so keys typed right after `e` land in the prompt (see PromptScreen)."""

    def chosen(path: str | None) -> None:
        if path and path.strip():
            app.run_worker(lambda: _write(app, rows, Path(path.strip()).expanduser()), thread=True,
                           group="export", exit_on_error=False)

    await app.push_screen(PromptScreen(f"Export the {what} to (.csv, .parquet or .json by extension):", str(default)),
                    chosen)


def _write(app: App, rows: Callable[[], pd.DataFrame], path: Path) -> None:
    # Building the frame is here too: selecting 1M rows takes a second, which the UI thread must not wait for.
    replaced = path.is_file()  # said afterwards: an export never asks twice, but never replaces silently
    try:
        frame = rows()
        out = write_table(frame, path, meta=getattr(app, "report", None) and app.report.meta)
    except FlopscopeError as err:
        app.notify(err.line(), title="Export failed", severity="error", markup=False)
        return
    except OSError as err:
        app.notify(f"{path}: {err.strerror or err}", title="Export failed", severity="error", markup=False)
        return
    app.notify(f"Wrote {len(frame):,} row(s) to {out.resolve()}" + (", replacing the file there" if replaced else ""),
               title="Exported", markup=False)
