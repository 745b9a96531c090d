"""The canonical kernels table: its columns, the counters that make FLOPs and bytes, kernel names
and NVTX ranges, the roofline judgement per launch, grouping, and run-level figures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_exports

if TYPE_CHECKING:
    from .columns import (
        ALL,
        COLLECTED,
        DESCRIPTIONS,
        FLOP_PARTS,
        GROUPINGS,
        INTEGER,
        NEEDS,
        SIMT_FLOP,
        TENSOR_TYPES,
    )
    from .counters import collecting, missing_fix
    from .names import function_name
    from .roofline import CLOCK, CLOCKS, MEMORY_LEVELS, ROOFS, Ceiling, Roof

_EXPORTS = {
    "ALL": "columns",
    "COLLECTED": "columns",
    "DESCRIPTIONS": "columns",
    "FLOP_PARTS": "columns",
    "GROUPINGS": "columns",
    "INTEGER": "columns",
    "NEEDS": "columns",
    "SIMT_FLOP": "columns",
    "TENSOR_TYPES": "columns",
    "collecting": "counters",
    "missing_fix": "counters",
    "function_name": "names",
    "CLOCK": "roofline",
    "CLOCKS": "roofline",
    "Ceiling": "roofline",
    "MEMORY_LEVELS": "roofline",
    "ROOFS": "roofline",
    "Roof": "roofline",
}
__all__ = [
    "ALL",
    "CLOCK",
    "CLOCKS",
    "COLLECTED",
    "DESCRIPTIONS",
    "FLOP_PARTS",
    "GROUPINGS",
    "INTEGER",
    "MEMORY_LEVELS",
    "NEEDS",
    "ROOFS",
    "SIMT_FLOP",
    "TENSOR_TYPES",
    "Ceiling",
    "Roof",
    "collecting",
    "function_name",
    "missing_fix",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
