"""The package as its import path reads, for tools that walk folders (import-linter, grimp, mypy):
pyproject's package-dir maps core/ and tui/ into flopscope/, which no such tool remaps, so
flopscope/ is laid out in `at` with flopscope_pkg's modules copied and core/ and tui/ as links to
the real folders."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def linked_tree(at: Path) -> Path:
    """`at`, holding flopscope/ (made or brought up to date); returns `at`."""
    pkg = at / "flopscope"
    pkg.mkdir(parents=True, exist_ok=True)
    for module in (ROOT / "flopscope_pkg").glob("*.py"):  # __init__.py, torch.py
        shutil.copy(module, pkg / module.name)
    for layer in ("core", "tui"):
        if not (pkg / layer).is_symlink():
            (pkg / layer).symlink_to(ROOT / layer, target_is_directory=True)
    return at
