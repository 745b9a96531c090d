"""The type checker, as CI runs it: mypy over the installed package layout (flopscope.core,
flopscope.tui), with pyproject.toml's settings (strict on core/), over the package as its import
path reads (tests/helpers/linked_tree.py: no mypy option remaps pyproject's package-dir), kept in
.mypy_tree/ beside its cache, so a second run checks only what changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .helpers.linked_tree import linked_tree

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error():
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    tree = linked_tree(ROOT / ".mypy_tree")
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
