"""The type checker, as CI runs it: mypy over the installed package layout (flopscope.core, flopscope.tui), with
pyproject.toml's settings (strict on core/). pyproject's package-dir maps the folders core/ and tui/ into
flopscope/, which no mypy option remaps: the check runs over a tree of two links laid out as the import path
reads (.mypy_tree/, beside its cache, so a second run checks only what changed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tree() -> Path:
    tree = ROOT / ".mypy_tree"
    pkg = tree / "flopscope"
    pkg.mkdir(parents=True, exist_ok=True)
    for module in (ROOT / "flopscope_pkg").glob("*.py"):  # __init__.py, torch.py
        shutil.copy(module, pkg / module.name)
    for layer in ("core", "tui"):
        link = pkg / layer
        if not link.is_symlink():
            link.symlink_to(ROOT / layer, target_is_directory=True)
    return tree


def test_mypy_finds_no_error():
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    tree = _tree()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "-p",
            "flopscope",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tree / ".cache"),
        ],
        cwd=tree,
        env={"MYPYPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr
