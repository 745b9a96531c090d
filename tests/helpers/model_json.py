"""A model JSON as users make one: `flopscope model workloads.py:Block --input-shape 8,128,512
--train --json` (the transformer block the H100 captures ran), written by the real CLI, and each
module's analytic FLOPs per step read back from it with `json` alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli import run_cli
from .reconciled import WORKLOADS


def block_model_json(folder: Path) -> Path:
    """The JSON, in `folder` (skips without PyTorch, which `flopscope model` needs)."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    out = run_cli("model", f"{WORKLOADS}:Block", "--input-shape", "8,128,512", "--train", "--json")
    assert out.returncode == 0, out.stderr
    path = folder / "block.json"
    path.write_text(out.stdout)
    return path


def analytic_flops(path: Path) -> dict[str, float]:
    """Forward plus backward FLOPs of one step, per module name."""
    return {
        m["name"]: m["forward_flop"] + (m["backward_flop"] or 0)
        for m in json.loads(path.read_text())["modules"]
    }
