"""Report builders of the FLOP-accounting tests (ncu_report actions, FP32-only raw pages)."""

from __future__ import annotations

import ncu_report


def report_actions(path):
    ctx = ncu_report.load_report(str(path))
    return [
        ctx.range_by_idx(r).action_by_idx(i)
        for r in range(ctx.num_ranges())
        for i in range(ctx.range_by_idx(r).num_actions())
    ]


def counter(action, name):
    metric = action.metric_by_name(name)
    return None if metric is None else metric.value()


def rate_flops(action, letter: str) -> float:
    """add + mul + 2 x fma of one precision from a full-set report's per-cycle rates x elapsed
    cycles."""
    rate = {
        op: counter(
            action, f"smsp__sass_thread_inst_executed_op_{letter}{op}_pred_on.sum.per_cycle_elapsed"
        )
        for op in ("add", "mul", "fma")
    }
    cycles = (
        counter(action, "smsp__cycles_elapsed.avg.per_second")
        * counter(action, "gpu__time_duration.sum")
        * 1e-9
    )
    return (rate["add"] + rate["mul"] + 2 * rate["fma"]) * cycles


SIMT = {
    f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum": "inst"
    for p in "dfh"
    for op in ("add", "mul", "fma")
}


def fp32_only(ffma: float, fadd: float = 0, fmul: float = 0) -> dict:
    return {
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": ffma,
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": fadd,
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": fmul,
    }


def samples_by_address(action) -> dict[int, int]:
    """Warp samples per SASS address, summed here over ncu_report's per-reason sampling metrics."""
    samples: dict[int, int] = {}
    for name in action.metric_names():
        if name.startswith("smsp__pcsamp_warps_issue_stalled_") and not name.endswith(
            "_not_issued"
        ):
            metric = action.metric_by_name(name)
            ids = metric.correlation_ids()
            for i in range(metric.num_instances()):
                samples[ids.as_uint64(i)] = samples.get(ids.as_uint64(i), 0) + metric.as_uint64(i)
    return samples
