"""A read report: the `Report` (its kernels table, groupings, ceilings), its meta, its cache, which
GPU judges it, launches above their ceiling, and ncu's own rule results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_exports

if TYPE_CHECKING:
    from .judgement import DeviceJudgement
    from .over_ceiling import OverCeiling
    from .report import Report, by_time, in_order, with_gpu
    from .rules import Finding, LaunchFindings, read_rule_results

_EXPORTS = {
    "DeviceJudgement": "judgement",
    "OverCeiling": "over_ceiling",
    "Report": "report",
    "by_time": "report",
    "in_order": "report",
    "with_gpu": "report",
    "Finding": "rules",
    "LaunchFindings": "rules",
    "read_rule_results": "rules",
}
__all__ = [
    "DeviceJudgement",
    "Finding",
    "LaunchFindings",
    "OverCeiling",
    "Report",
    "by_time",
    "in_order",
    "read_rule_results",
    "with_gpu",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
