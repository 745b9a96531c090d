"""Module ranges from inside a PyTorch program, for those who prefer it in code to `flopscope
profile --modules`:

    import flopscope.torch

    with flopscope.torch.annotate(model):
        train(model)

Every module call inside the block is an NVTX range named after its qualified name, forward and
backward, and each optimizer.step() ends a step (core/profiling/module_ranges.py). Profile the
program with ncu's NVTX support on (`flopscope profile` does) and `flopscope report FILE --by
module` shows the model's tree."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .core.profiling.module_ranges import ModuleRanges
from .core.profiling.module_ranges import annotate as _annotate


@contextmanager
def annotate(model: Any = None) -> Iterator[ModuleRanges]:
    """Module ranges for the modules called inside the block; MODEL (optional) is named from the
    start."""
    import torch

    with _annotate(torch, model) as ranges:
        yield ranges
