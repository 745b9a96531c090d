"""The export dialog (`e`): it says it is writing while the file is written off the UI thread, the
app keeps answering keys meanwhile, and a path that cannot be used keeps the dialog open with the
reason and the text as typed. The writer is held on an Event here so the "while writing" state can
be looked at; the real `write_table` then writes the real rows."""

from __future__ import annotations

import errno
import threading

import pandas as pd
import pytest
from flopscope.core import read_report
from flopscope.tui.app.screens import export as export_screen
from flopscope.tui.app.screens.export import ExportScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from textual.widgets import Input

from ..conftest import fixture_path, settle
from ..helpers.app import H100, make_app, ready, screen_lines, shows_path


@pytest.fixture(scope="module")
def h100():
    return read_report(fixture_path(H100))


@pytest.fixture
def gate(monkeypatch):
    """write_table waits for `gate.set()`; `gate.fail` makes it raise that OSError instead of
    writing."""
    event = threading.Event()
    event.fail = None
    real = export_screen.write_table

    def held(frame, path, meta=None):
        assert threading.current_thread() is not threading.main_thread()  # never on the UI thread
        assert event.wait(20)
        if event.fail is not None:
            raise event.fail
        return real(frame, path, meta=meta)

    monkeypatch.setattr(export_screen, "write_table", held)
    return event


def dialog_text(app) -> str:
    """The text inside the dialog's border, its wrapped lines joined."""
    boxed = [
        line[line.index("│") + 1 : line.rindex("│")]
        for line in screen_lines(app)
        if line.count("│") >= 2
    ]
    return " ".join(" ".join(boxed).split())


def notes_of(app) -> list[tuple[str, str]]:
    notes = []
    app.notify = lambda message, **kw: notes.append((message, kw.get("severity", "information")))
    return notes


async def test_an_empty_path_says_why_and_keeps_the_dialog_open(h100):
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("e")
        prompt = app.screen
        prompt.query_one(Input).value = "   "
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is prompt and "type the file to write" in prompt.error
        assert "type the file to write" in dialog_text(app)
        await pilot.press("x")  # typing again clears the old reason
        assert prompt.error == ""


async def test_the_dialog_shows_it_is_writing_and_escape_leaves_it_writing(h100, gate, tmp_path):
    app = make_app(h100)
    out = tmp_path / "rows.csv"
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        notes = notes_of(app)
        await pilot.press("e")
        prompt = app.screen
        prompt.query_one(Input).value = str(out)
        await pilot.press("enter")
        await pilot.pause()
        rows = len(h100.group("name"))
        assert app.screen is prompt and prompt.query_one(Input).loading
        wanted = f"writing {rows:,} row(s) to {out}"
        # the path folds over lines
        assert wanted.replace(" ", "") in dialog_text(app).replace(" ", "")
        await pilot.press("escape")  # back to the table while the file is written
        assert app.screen is screen
        await pilot.press("j", "j")
        # keys answered while the writer is busy
        assert screen.query_one(KernelTable).cursor_row == 2
        gate.set()
        await settle(pilot, lambda: any(m.startswith("Exported") for m, _ in notes))
    assert notes[0] == (f"still writing {out}; a message will say when it is done", "information")
    (first, where), severity = notes[-1][0].split("\n"), notes[-1][1]
    assert (
        first == f"Exported {rows:,} rows to"
        and shows_path(where, out.resolve())
        and severity == "information"
    )
    assert len(pd.read_csv(out)) == rows


async def test_a_write_that_fails_keeps_the_dialog_open_with_the_reason_and_the_path(
    h100, gate, tmp_path
):
    app = make_app(h100)
    out = tmp_path / "rows.csv"
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("e")
        prompt = app.screen
        prompt.query_one(Input).value = str(out)
        await pilot.press("enter")
        gate.fail = OSError(errno.ENOSPC, "No space left on device")
        gate.set()
        await settle(pilot, lambda: prompt.error)
        answer = prompt.query_one(Input)
        assert (
            app.screen is prompt
            and answer.value == str(out)
            and not answer.disabled
            and answer.has_focus
        )
        assert prompt.error == f"{out}: No space left on device"
        gate.fail = None
        await pilot.press("enter")  # retried as typed
        await settle(pilot, lambda: app.screen is not prompt)
    assert len(pd.read_csv(out)) == len(h100.group("name"))


async def test_a_failure_after_escape_is_an_error_message(h100, gate, tmp_path):
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        notes = notes_of(app)
        await pilot.press("e")
        app.screen.query_one(Input).value = str(tmp_path / "x.csv")
        await pilot.press("enter", "escape")
        assert not isinstance(app.screen, ExportScreen)
        gate.fail = OSError(errno.EACCES, "Permission denied")
        gate.set()
        await settle(pilot, lambda: any(s == "error" for _, s in notes))
    assert notes[-1] == (f"{tmp_path / 'x.csv'}: Permission denied", "error")
