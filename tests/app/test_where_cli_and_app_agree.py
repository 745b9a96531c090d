"""One expression, typed in the app's live filter and given to `report --where`, keeps the same rows
in the same order (issue 43: the CLI's filters give what the app's give), on a real file of each
kind the readers take (every real file: FLOPSCOPE_EVERY_FILE=1, ~10 minutes)."""

from __future__ import annotations

import json
import os

import pytest
from flopscope.core import read_report

from ..helpers.app import make_app, ready
from ..helpers.cli import run_cli
from ..helpers.real_files import file_id, real_files

EXPRESSION = "share > 1% or bound == dram"


def _files() -> list:
    """One real file per kind (suffixes: raw or details CSV, console log, .ncu-rep, compressed), or
    all."""
    if os.environ.get("FLOPSCOPE_EVERY_FILE") == "1":
        return real_files()
    kinds: dict[str, object] = {}
    for path in real_files():
        if path.suffix in {".gz", ".xz"}:  # the same tables unpacked: the readers' tests take those
            continue
        kind = path.suffix + ("details" if "details" in path.name else "")
        kinds.setdefault(kind, path)
    return list(kinds.values())


async def _typed_in_the_app(report) -> list[str]:
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("slash", *("space" if c == " " else c for c in EXPRESSION), "enter")
        for _ in range(100):
            await pilot.pause()
            if screen.query_state.where == EXPRESSION and not app.screen.is_modal:
                break
        await pilot.pause()
        return screen.model.shown()["kernel_full"].astype(str).tolist()


@pytest.mark.parametrize("path", _files(), ids=file_id)
async def test_the_app_and_report_where_keep_the_same_rows(path, tmp_path):
    report = read_report(path)
    in_the_app = await _typed_in_the_app(report)
    # the shares add up to 100%: some row has over 1%
    assert 0 < len(in_the_app) <= len(report.group("name"))
    done = run_cli("report", path, "--where", EXPRESSION, "--all", "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [row["kernel_full"] for row in json.loads(done.stdout)["rows"]] == in_the_app
