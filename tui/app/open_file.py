"""`flopscope open FILE` and `flopscope demo`: the app on a report file, its first paint as early as
this order allows. The read starts first, in a thread (read_ahead.py), then Textual and the app are
imported with Python's cycle collector paused, then the app runs. No Textual here: this module is
imported before it."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING

from ...core import read_report
from .read_ahead import ReadAhead

if TYPE_CHECKING:
    from ...core.analysis.model_flops import ModelFlops


def open_file(
    path: str | Path,
    gpu: str | None = None,
    roof: str = "clock",
    flop_model: ModelFlops | None = None,
) -> int:
    """The Kernels screen of the report `path` (`-`: stdin, read by the app itself), and over it
    the module tree with `flop_model`'s analytic FLOPs where one is given (`open --model`); the
    process exit code, 2 when the report cannot be read."""
    ahead = (
        None
        if str(path) == "-"
        else ReadAhead(lambda progress: read_report(path, gpu=gpu, progress=progress))
    )
    # Textual's and the app's modules make ~50k objects and no garbage: the collector would walk
    # them again and again as they pile up (~15 ms), and then over every later collection.
    enabled = gc.isenabled()
    gc.disable()
    try:
        from .launch import run_kernels
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    return run_kernels(path, gpu=gpu, roof=roof, read_ahead=ahead, flop_model=flop_model)
