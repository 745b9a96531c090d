"""flopscope's engine: read ncu output, count FLOPs and bytes, place kernels on the roofline.

No Textual here: `core` is usable as a library.

    from flopscope.core import read_report
    report = read_report("run.ncu-rep")
    report.kernels          # one row per launch, canonical columns in SI units
    report.group("name")    # the same columns per kernel name (or "nvtx", "launch")
    report.summary()        # run-level figures

The names below are imported on first use (PEP 562): `flopscope --version` or `gpus` imports this
package without pandas and pyarrow, which `Report` and `read_report` need.

The engine is laid out by the stages a report goes through, each a package naming its public surface
in its `__init__`; a stage imports only those below it (pyproject's import-linter contract,
tests/test_layers.py):

    analysis | profiling   runs against runs and models  |  running ncu here, over SSH, through
    Slurm store                  the run store export                 tables written out report
    the Report: a read file's table, ceilings, meta, cache table                  the canonical
    kernels table: columns, counters, roofline, grouping readers                every ncu output
    read into raw metric rows ncu                    ncu's metrics, catalogue, command line,
    progress common                 errors, units, safe text, the data home, the GPU database
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .common.lazy import lazy_exports

if TYPE_CHECKING:
    from .common.errors import FlopscopeError
    from .common.gpus import Gpu, all_gpus, find_gpu
    from .report.meta import ReportMeta
    from .report.report import Report, read_report
    from .table.columns import CANONICAL, FMA_CONVENTION, NAMES

_EXPORTS = {
    "CANONICAL": "table.columns",
    "FMA_CONVENTION": "table.columns",
    "NAMES": "table.columns",
    "FlopscopeError": "common.errors",
    "Gpu": "common.gpus",
    "all_gpus": "common.gpus",
    "find_gpu": "common.gpus",
    "Report": "report.report",
    "read_report": "report.report",
    "ReportMeta": "report.meta",
}
__all__ = [
    "CANONICAL",
    "FMA_CONVENTION",
    "NAMES",
    "FlopscopeError",
    "Gpu",
    "Report",
    "ReportMeta",
    "all_gpus",
    "find_gpu",
    "read_report",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
