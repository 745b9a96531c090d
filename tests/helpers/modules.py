"""Which launches of the project's transformer training steps (tests/data/gpu, the bundled demo) a
module holds, read from each launch's NVTX text alone, so that module tree figures are checked
against a computation of their own."""

from __future__ import annotations

from itertools import pairwise

import pandas as pd

TOP_MODULES = ("attn", "mlp", "norm1", "norm2")  # the block's modules under `measure/forward`


def module_launches(kernels: pd.DataFrame, module: str) -> pd.Series:
    """Whether each launch is MODULE's: its forward launches name the module as a range
    (`measure/forward/mlp/mlp.0/aten::linear...`), its backward launches run inside the start/end
    range `backward/<module>` (the capture's own hooks)."""

    def holds(nvtx: object) -> bool:
        tokens = nvtx.split("/") if isinstance(nvtx, str) else []
        after_backward = {b for a, b in pairwise(tokens) if a == "backward"}
        return module in after_backward or (module in tokens and "forward" in tokens)

    return kernels["nvtx"].map(holds).astype(bool)
