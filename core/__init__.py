"""flopscope's engine: read ncu output, count FLOPs and bytes, place kernels on the roofline.

No Textual here: `core` is usable as a library.

    from flopscope.core import read_report
    report = read_report("run.ncu-rep")
    report.kernels          # one row per launch, canonical columns in SI units
    report.group("name")    # the same columns per kernel name (or "nvtx", "launch")
    report.summary()        # run-level figures

The names below are imported on first use (PEP 562): `flopscope --version` or `gpus` imports this package
without pandas and pyarrow, which `Report` and `read_report` need.
"""

from __future__ import annotations

from importlib import import_module

_EXPORTS = {
    "CANONICAL": "columns",
    "FMA_CONVENTION": "columns",
    "NAMES": "columns",
    "FlopscopeError": "errors",
    "Gpu": "gpus",
    "all_gpus": "gpus",
    "find_gpu": "gpus",
    "Report": "report",
    "read_report": "report",
    "ReportMeta": "report_meta",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
