"""Nsight Compute itself: the metrics flopscope reads, ncu's per-chip catalogue, the ncu command
line it builds and the progress ncu prints while it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_exports

if TYPE_CHECKING:
    from .catalogue import ASK_FOR_TENSOR_COUNTERS, WHICH_TENSOR_COUNTERS
    from .command import REPLAY_MODES, TIMING_LIMIT_S, ProfileOptions, ncu_argv
    from .metrics import METRIC_SETS
    from .progress import Event, describe

_EXPORTS = {
    "ASK_FOR_TENSOR_COUNTERS": "catalogue",
    "WHICH_TENSOR_COUNTERS": "catalogue",
    "METRIC_SETS": "metrics",
    "ProfileOptions": "command",
    "REPLAY_MODES": "command",
    "TIMING_LIMIT_S": "command",
    "ncu_argv": "command",
    "Event": "progress",
    "describe": "progress",
}
__all__ = [
    "ASK_FOR_TENSOR_COUNTERS",
    "METRIC_SETS",
    "REPLAY_MODES",
    "TIMING_LIMIT_S",
    "WHICH_TENSOR_COUNTERS",
    "Event",
    "ProfileOptions",
    "describe",
    "ncu_argv",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
