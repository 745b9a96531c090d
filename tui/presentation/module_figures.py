"""The module tree with the figures a run adds to it, one way for `report --by module` and the app's
module tree screen: each node's MFU where the report has a timing file beside it (`MFU krn`, `MFU
wall`), and each module's analytic FLOPs where a model JSON is given (`Model`, `/Model`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ...core.analysis.module_model import steps_held, with_model_flops
from ...core.analysis.step_mfu import StepMfu, with_node_mfu
from .step_mfu import load_steps

if TYPE_CHECKING:
    from ...core.analysis.model_flops import ModelFlops
    from ...core.report import Report


def with_model(report: Report, tree: pd.DataFrame, model: ModelFlops) -> pd.DataFrame:
    """The tree with the model's analytic FLOPs per node, over the steps the report holds."""
    return with_model_flops(tree, model, steps_held(report.kernels))


def with_steps(report: Report, tree: pd.DataFrame) -> tuple[pd.DataFrame, StepMfu | None]:
    """The report's steps (None without `step N` ranges and timing file) and the tree with each
    node's MFU where there is a median step to judge it by; a bad timing file raises its one
    line."""
    steps = load_steps(report)
    if steps is None or not steps.medians:
        return tree, steps
    return with_node_mfu(tree, steps, steps_held(report.kernels)), steps
