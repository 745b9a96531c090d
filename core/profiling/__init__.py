"""Running ncu: locally, over SSH or through Slurm; doctor and ceilings on the target; sweeps and
their plans."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_exports

if TYPE_CHECKING:
    from .ceilings_run import measure_ceilings
    from .doctor import doctor_json, failed, judge, probe
    from .plan import cost_line, local_ncu_found, make_plan, plan_lines, target_gpu_name
    from .profiler import ProfileResult, profile
    from .slurm import JOBS_AT_ONCE, SlurmOptions, SlurmTransport
    from .sweep import STOP_WAIT_S, parse_params, points, run_sweep, substitute, unused_params
    from .transport import (
        LocalTransport,
        SshTransport,
        check_env,
        check_host,
        stop_all,
        stopped_running_job,
    )

_EXPORTS = {
    "measure_ceilings": "ceilings_run",
    "doctor_json": "doctor",
    "failed": "doctor",
    "judge": "doctor",
    "probe": "doctor",
    "cost_line": "plan",
    "local_ncu_found": "plan",
    "make_plan": "plan",
    "plan_lines": "plan",
    "target_gpu_name": "plan",
    "ProfileResult": "profiler",
    "profile": "profiler",
    "JOBS_AT_ONCE": "slurm",
    "SlurmOptions": "slurm",
    "SlurmTransport": "slurm",
    "STOP_WAIT_S": "sweep",
    "parse_params": "sweep",
    "points": "sweep",
    "run_sweep": "sweep",
    "substitute": "sweep",
    "unused_params": "sweep",
    "LocalTransport": "transport",
    "SshTransport": "transport",
    "check_env": "transport",
    "check_host": "transport",
    "stop_all": "transport",
    "stopped_running_job": "transport",
}
__all__ = [
    "JOBS_AT_ONCE",
    "STOP_WAIT_S",
    "LocalTransport",
    "ProfileResult",
    "SlurmOptions",
    "SlurmTransport",
    "SshTransport",
    "check_env",
    "check_host",
    "cost_line",
    "doctor_json",
    "failed",
    "judge",
    "local_ncu_found",
    "make_plan",
    "measure_ceilings",
    "parse_params",
    "plan_lines",
    "points",
    "probe",
    "profile",
    "run_sweep",
    "stop_all",
    "stopped_running_job",
    "substitute",
    "target_gpu_name",
    "unused_params",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
