"""The model's analytic FLOPs beside the measured ones, per node of the module tree (`report --by
module --model MODEL.json`): a node named after a module of the model (its qualified name, or the
model's class for the model itself, as reconciliation.module_names spells them) gets that module's
forward FLOPs, plus its backward FLOPs where the model was counted for training, times the steps the
report holds.

Steps: the `step N` ranges (profile --modules) that hold a module's forward launch, so the range the
last `optimizer.step()` opens (the program's tail: zero_grad, evaluation) is not counted; a report
without step ranges is one step."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..table.module_tree import ROOT, placements
from ..table.nvtx import stacks_of
from .model_flops import ModelFlops
from .reconciliation import module_names


def steps_held(kernels: pd.DataFrame) -> int:
    """How many training steps the launches hold (see the module docstring)."""
    codes, placed = placements(stacks_of(kernels))
    used = np.unique(codes) if len(codes) else np.array([], dtype=int)
    steps = {
        placed[c].step
        for c in used
        if placed[c].step is not None and not placed[c].backward and placed[c].node
    }
    return len(steps) or 1


def with_model_flops(tree: pd.DataFrame, model: ModelFlops, steps: int) -> pd.DataFrame:
    """The tree with `model_flop` (analytic, over `steps` steps; NaN where the node names no module
    of the model) and `flop_vs_model` (measured / analytic)."""
    spelled = module_names(model)
    per_step = {m.name: m.forward_flop + (m.backward_flop or 0) for m in model.modules}

    def analytic(name: object) -> float:
        module = spelled.get(str(name)) if name != ROOT else None
        return (
            float(steps * per_step[module])
            if module is not None and module in per_step
            else math.nan
        )

    out = tree.copy()
    out["model_flop"] = tree["name"].map(analytic).astype(float)
    model_flop = out["model_flop"].where(out["model_flop"] > 0)
    out["flop_vs_model"] = out["flop"].astype(float) / model_flop
    return out
