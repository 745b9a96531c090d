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


# Which stored snapshots show each screen and dialog of the app (tests/app/test_snapshot_registry.py
# fails on a Screen class under tui/app that is in neither this nor BASES): a new screen lands with
# its picture at 80x24, and at 160x48 where it lays itself out wider.
SHOWN_BY: dict[str, tuple[str, ...]] = {
    "KernelsScreen": ("kernels", "kernels-120x40", "kernels-160x48", "copy-name"),
    "PushedKernelsScreen": ("run-kernels",),
    "KernelScreen": (
        "kernel",
        "kernel-120x40",
        "kernel-memory-80x24",
        "kernel-memory-160x48",
        "kernel-samples-80x24",
        "kernel-samples-160x48",
    ),
    "KernelPairScreen": ("kernel-pair",),
    "SourceScreen": ("source", "source-no-sass-80x24", "source-no-sass-160x48"),
    "RooflineScreen": ("roofline", "roofline-160x48"),
    "ModuleTreeScreen": ("module-tree", "module-tree-mfu", "module-tree-deep-model"),
    "StepsScreen": ("module-tree-steps",),
    "RunsScreen": ("runs",),
    "DiffScreen": ("diff",),
    "SweepScreen": ("sweep",),
    "LiveSweepScreen": ("live-sweep",),
    "ProfileScreen": ("profile",),
    "ReconcileScreen": ("reconcile",),
    "HelpScreen": ("help", "help-kernel"),
    "SortScreen": ("sort-picker",),
    "ExportScreen": ("export-prompt",),
    "PromptScreen": ("filter-prompt",),
    "ColumnsScreen": ("column-chooser", "runs-columns"),
}
# Screen classes that are only ever shown as one of their subclasses.
BASES = frozenset({"BackScreen", "LiveFilter", "TableScreen"})
