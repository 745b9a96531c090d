"""The bundled demo (the bf16 transformer training step of tests/data/gpu/) reconciled with the
model it ran, workloads.py's Block: the reconcile screen's real input. Counted once per session
(torch takes seconds)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from flopscope.core import Report, read_report
from flopscope.core.analysis.model_flops import ModelFlops, count_model
from flopscope.core.analysis.reconciliation import Reconciliation, reconcile
from flopscope.tui.cli.main import bundled_example

WORKLOADS = Path(__file__).parents[1] / "data" / "gpu" / "workloads.py"


@cache
def demo_reconciled() -> tuple[Report, ModelFlops, Reconciliation]:
    pytest.importorskip("torch")
    report = read_report(bundled_example())
    model = count_model(f"{WORKLOADS}:Block", (8, 128, 512), train=True, dtype="bf16")
    return report, model, reconcile(report, model, precision="bf16")
