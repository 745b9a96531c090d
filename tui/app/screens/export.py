"""Export (`e`): ask for a path, write exactly the rows shown with `core.export.write_table`,
confirm.

Every column of the shown rows is written (not only those that fit the terminal), in the order
shown, at full precision: the numbers are the engine's, not the table's rounded text.

The dialog stays open while the file is written (seconds for a large report), saying what it
writes, with the input replaced by a spinner; `escape` leaves it writing in the background and a
message says when it is done. A path that cannot be written keeps the dialog open with the reason
and the path as typed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pandas as pd
from rich.text import Text
from textual.app import App
from textual.widgets import Input, Label

from ....core import FlopscopeError, Report
from ....core.common import display_text, safe_file_name
from ....core.export import check_target, run_meta, write_table
from ...presentation.names import cut_middle
from .prompt import PromptScreen

if TYPE_CHECKING:
    from ..app import FlopscopeApp

HINT = "enter: write · escape: cancel"


async def ask_export(
    app: App,
    rows: Callable[[], pd.DataFrame],
    default: Path,
    what: str = "rows shown",
    *,
    kernels_of_a_run: bool = False,
    meta: dict | None = None,
) -> None:
    """Prompt for a path (default filled in), then write `rows()` there off the UI thread and
    notify.

    `rows()` is called on the UI thread when the path is accepted and must return a frame of its own
    (an `iloc` selection or a copy): the writer thread then reads only
    that, never a frame the screens keep reading. Awaited from a priority binding, so keys typed
    right after `e` land in the prompt (see PromptScreen).

    `kernels_of_a_run`: the rows are one run's (its kernel table, roofline or a row of it), so a
    JSON or Parquet export carries that run's meta. Otherwise `meta` is what the table's JSON or
    Parquet export carries (a sweep table: its analysis, as `open SWEEP --json`; a diff: its runs
    and totals, as `diff --json`); a run list carries none."""
    await app.push_screen(
        ExportScreen(rows, default, what, _run_meta_below(app) if kernels_of_a_run else meta)
    )


def _run_meta_below(app: App) -> dict | None:
    """The meta of the run whose kernel table is the nearest screen down the stack (the app's own
    report in `flopscope open FILE`, a run opened from the run list or a sweep point otherwise)."""
    for screen in reversed(app.screen_stack):
        report = getattr(screen, "report", None)
        if isinstance(report, Report):
            return run_meta(report)
    report = getattr(app, "report", None)
    return run_meta(report) if isinstance(report, Report) else None


def path_problem(text: str) -> str | None:
    """Why `text` cannot be exported to (checked before the dialog closes), or None."""
    if not text.strip():
        return "type the file to write, ending in .csv, .parquet or .json"
    try:
        check_target(Path(text.strip()).expanduser())
    except FlopscopeError as err:
        return err.line()
    return None


class ExportScreen(PromptScreen):
    """The export dialog: a path prompt that writes the rows itself, off the UI thread."""

    def __init__(
        self, rows: Callable[[], pd.DataFrame], default: Path, what: str, meta: dict | None
    ) -> None:
        # named after a report: its name is untrusted
        default = default.with_name(safe_file_name(default.name))
        super().__init__(
            f"Export the {what} to (.csv, .parquet or .json by extension):",
            str(default),
            HINT,
            check=path_problem,
        )
        self.rows = rows
        self.meta = meta
        self.writing: Path | None = None  # the file being written, while it is

    def submit(self, value: str) -> None:
        path = Path(value.strip()).expanduser()
        app = self.app
        frame = self.rows()
        meta = self.meta
        self.writing = path
        answer = self.query_one(Input)
        answer.disabled = answer.loading = True  # a spinner where the path was: it is working
        self.query_one(".hint", Label).update(
            Text(
                display_text(
                    f"writing {len(frame):,} row(s) to {path} … · escape: keep working meanwhile "
                    "(a message says when it is done)"
                )
            )
        )
        app.run_worker(
            lambda: self._write(app, frame, path, meta),
            thread=True,
            group="export",
            exit_on_error=False,
        )

    def _write(self, app: App, frame: pd.DataFrame, path: Path, meta: dict | None) -> None:
        """Worker thread: write, then report on the UI thread."""
        # said afterwards: an export never asks twice, but never replaces silently
        replaced = path.is_file()
        try:
            out = write_table(frame, path, meta=meta)
        except FlopscopeError as err:
            app.call_from_thread(self._failed, app, err.line())
            return
        except OSError as err:
            app.call_from_thread(self._failed, app, f"{path}: {err.strerror or err}")
            return
        app.call_from_thread(self._written, app, len(frame), out.resolve(), replaced)

    def _written(self, app: App, rows: int, out: Path, replaced: bool) -> None:
        """Two lines, so the message covers no row of the table: what was written, then
        where, a path longer than the line cut in its middle (its file name kept; the dialog showed
        it whole)."""
        self.writing = None
        # escaped before it is cut: an escape is wider than the byte it stands for
        where = cut_middle(display_text(str(out)), cast("FlopscopeApp", app).message_width())
        # One sentence, no title: a toast's title and message read as one line (`Exported: Wrote 26
        # row(s)`).
        counted = f"{rows:,} row{'' if rows == 1 else 's'}"
        note = (
            f"Exported {counted}"
            + (", replacing the file there," if replaced else "")
            + f" to\n{where}"
        )
        app.notify(note, markup=False)
        if app.screen is self:
            self.dismiss(note)

    def _failed(self, app: App, message: str) -> None:
        """Open: the reason under the path, which stays as typed. Hidden (escape): a message says
        it."""
        self.writing = None
        if app.screen is not self:
            app.notify(message, title="Export failed", severity="error", markup=False, timeout=10)
            return
        answer = self.query_one(Input)
        answer.disabled = answer.loading = False
        answer.focus()
        self.query_one(".hint", Label).update(HINT)
        self.show_error(message)

    def action_cancel(self) -> None:
        if self.writing is not None:
            self.app.notify(
                f"still writing {self.writing}; a message will say when it is done",
                timeout=4,
                markup=False,
            )
        self.dismiss(None)
