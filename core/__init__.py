"""flopscope's engine: read ncu output, count FLOPs and bytes, place kernels on the roofline.

No Textual here: `core` is usable as a library.

    from flopscope.core import read_report
    report = read_report("run.ncu-rep")
    report.kernels          # one row per launch, canonical columns in SI units
    report.group("name")    # the same columns per kernel name (or "nvtx", "launch")
    report.summary()        # run-level figures
"""

from .columns import CANONICAL, FMA_CONVENTION, NAMES
from .errors import FlopscopeError
from .gpus import Gpu, all_gpus, find_gpu
from .report import Report, read_report

__all__ = ["CANONICAL", "FMA_CONVENTION", "NAMES", "FlopscopeError", "Gpu", "Report", "all_gpus",
           "find_gpu", "read_report"]
