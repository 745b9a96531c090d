"""Warp instructions executed per SASS opcode (`IADD3`, `LDG`, `HMMA`, ...) for some of a report's
launches, summed: ncu's InstructionStats section keeps them as one instanced metric,
`sass__inst_executed_per_opcode`, an instance per opcode. Read on demand through NVIDIA's ncu_report
(the Kernel screen's Instruction mix panel), as the source page is: the kernels table keeps no
column per opcode."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..common.errors import FlopscopeError
from ..ncu.metrics import INST_PER_OPCODE
from .ncu_rep_source import _action, plain_report


def read_opcodes(path: str | Path, launch_ids: Iterable[int]) -> dict[str, int]:
    """{opcode: warp instructions executed} over the launches `launch_ids` (0-based, file order);
    empty where none of them has the metric (a report without InstructionStats)."""
    counts: dict[str, int] = {}
    for launch in read_opcodes_by_launch(path, launch_ids).values():
        for opcode, count in launch.items():
            counts[opcode] = counts.get(opcode, 0) + count
    return counts


def read_opcodes_by_launch(
    path: str | Path, launch_ids: Iterable[int]
) -> dict[int, dict[str, int]]:
    """{launch ID: {opcode: warp instructions executed}} for each of `launch_ids` the report has."""
    import ncu_report

    with plain_report(Path(path)) as plain:
        try:
            context = ncu_report.load_report(str(plain))
        except Exception as exc:  # ncu_report raises its own kinds for a file it cannot load
            raise FlopscopeError(
                path, f"ncu_report could not load it ({str(exc)[:120]})", "pass an .ncu-rep"
            ) from None
        out: dict[int, dict[str, int]] = {}
        for launch_id in launch_ids:
            action = _action(context, launch_id)
            if action is not None:
                out[launch_id] = _per_opcode(action)
        return out


def _per_opcode(action: Any) -> dict[str, int]:
    metric = action.metric_by_name(INST_PER_OPCODE)
    if metric is None or not metric.has_correlation_ids():
        return {}
    ids = metric.correlation_ids()
    return {str(ids.as_string(i)): int(metric.as_uint64(i)) for i in range(metric.num_instances())}
