"""Screen snapshots: the app's SVG export (`App.export_screenshot`) against tests/snapshots/*.svg.

pytest-textual-snapshot does the same, but pins syrupy 4.8.0, which needs pytest < 9. A change
meant to change a screen rewrites its snapshots with `--snapshot-update` (or
FLOPSCOPE_SNAPSHOT_UPDATE=1); review the SVGs in the diff (a browser shows them) before committing.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parents[1] / "snapshots"
SIZE = (80, 24)
# Textual names the SVG's CSS classes after a hash of the whole picture (equal pictures, equal
# names): kept out of the comparison, so that a difference shows as the text or style that changed.
_HASH = re.compile(r"terminal-\d+")


def normalised(svg: str) -> list[str]:
    return _HASH.sub("terminal", svg).splitlines()


def check(name: str, svg: str, update: bool, tmp_path: Path) -> None:
    stored = SNAPSHOTS / f"{name}.svg"
    if update or not stored.exists():
        stored.write_text(svg, encoding="utf-8")
        if not update:
            pytest.fail(f"{stored} did not exist and was written: review it and run again")
        return
    expected, got = normalised(stored.read_text(encoding="utf-8")), normalised(svg)
    if expected != got:
        (tmp_path / stored.name).write_text(svg, encoding="utf-8")
        diff = "\n".join(
            list(difflib.unified_diff(expected, got, str(stored), "now", lineterm="", n=0))[:40]
        )
        pytest.fail(
            f"the {name} screen differs from {stored} (now: {tmp_path / stored.name}; if meant, "
            f"run with --snapshot-update):\n{diff}"
        )
