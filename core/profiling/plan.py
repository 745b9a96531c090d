"""The collection planner (`profile --plan`): what a profile will cost before it runs, and what cuts
it.

ncu replays each profiled launch once per pass, and how many passes a metric set needs depends on
the GPU and the ncu version. ncu cannot say it without a GPU (`--list-sets` gives metric counts,
`--query-metrics` the catalogue, neither passes: checked with ncu 2024.1.1), so the count comes from
where it was seen: the last run of the same command on that host (its ncu.log), else the passes
recorded on a real GPU (RECORDED)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ..common.gpus import find_gpu
from ..common.home import data_home
from ..ncu.command import ProfileOptions, metric_list
from .profiler import ProfileResult

if TYPE_CHECKING:
    from .transport import Transport

# Passes ncu needed per launch, seen on real GPUs: (GPU, metric set, ncu version, passes, where it
# was seen). The roofline and flops sets there are METRIC_SETS[...] plus the H100 catalogue's tensor
# op counters (tests/data/gpu/nvidia_h100_80gb_hbm3/metrics_flopscope.txt); tests/cli/test_plan.py
# checks each row against the ncu streams of the capture.
_H100 = "tests/data/gpu/nvidia_h100_80gb_hbm3/"
# (GPU, metric set, ncu version, passes, where it was seen)
Recorded = tuple[str, str, str, int, str]
RECORDED: list[Recorded] = [
    (
        "NVIDIA H100 80GB HBM3",
        "roofline",
        "2025.3.1",
        7,
        _H100 + "train_*.stream.txt, flopscope_profile.stream.txt, plan/ncu_roofline.log",
    ),
    ("NVIDIA H100 80GB HBM3", "flops", "2025.3.1", 7, _H100 + "plan/ncu_flops.log"),
    ("NVIDIA H100 80GB HBM3", "memory", "2025.3.1", 1, _H100 + "plan/ncu_memory.log"),
    ("NVIDIA H100 80GB HBM3", "full", "2025.3.1", 38, _H100 + "plan/ncu_full.log"),
]
_PASSES = re.compile(r"^==PROF== Profiling .* - (\d+) pass(?:es)?\s*$")


class LastRun(TypedDict):
    """The latest stored run of a command on a host (last_run)."""

    name: str
    launches: int | None  # the store's count, NULL where it has none
    passes: list[int]  # per launch, from its ncu.log
    filtered: bool


@dataclass
class Plan:
    metrics: str  # what is collected, in words
    passes: str  # passes per launch and where that number comes from
    launches: str  # how many launches will be profiled, when known
    # (what it does, the exact flopscope options)
    cuts: list[tuple[str, str]] = field(default_factory=list)
    replays: int | None = None  # launches x passes, when both are known
    timing: str = ""  # --modules' timing run, when it follows


def _known_replays(opts: ProfileOptions, gpu_name: str | None, last: LastRun | None) -> int | None:
    if last and last["passes"]:
        return (
            sum(last["passes"])
            if not opts.launch_count
            else max(last["passes"]) * opts.launch_count
        )
    recorded = _recorded(opts, gpu_name)
    launches = opts.launch_count or (last["launches"] if last else None)
    return recorded[3] * launches if recorded and launches else None


def _recorded(opts: ProfileOptions, gpu_name: str | None) -> Recorded | None:
    """RECORDED's row for this metric set on this GPU, if someone profiled it there."""
    gpu = find_gpu(gpu_name) if gpu_name else None
    if gpu is None:
        return None
    return next(
        (row for row in RECORDED if row[1] == opts.metrics and find_gpu(row[0]) is gpu), None
    )


def make_plan(opts: ProfileOptions, host: str, gpu_name: str | None) -> Plan:
    last = last_run(opts.command, host)
    return Plan(
        _metrics(opts),
        _passes(opts, gpu_name, last),
        _launches(opts, last),
        _cuts(opts),
        _known_replays(opts, gpu_name, last),
        TIMING_RUN if opts.modules and opts.timing else "",
    )


TIMING_RUN = (
    "then the program once more, without ncu, each training step timed (--no-timing skips it)"
)


def _metrics(opts: ProfileOptions) -> str:
    if opts.metrics == "full":
        return "full: ncu's full section set (--set full), hundreds of metrics"
    names = metric_list(opts) or []
    tensor = (
        " + the tensor op counters the target's ncu offers (asked of it when profiling)"
        if opts.metrics in ("roofline", "flops")
        else ""
    )
    return f"{opts.metrics}: {len(names)} metrics{tensor}"


def _passes(opts: ProfileOptions, gpu_name: str | None, last: LastRun | None) -> str:
    if last and last["passes"]:
        seen = "/".join(map(str, sorted(set(last["passes"]))))
        return (
            f"{seen} per launch, as ncu needed at the last run of this command here (run"
            f" {last['name']})"
        )
    if row := _recorded(opts, gpu_name):
        name, _, ncu, passes, _ = row
        return f"{passes} per launch (recorded on an {name} with ncu {ncu})"
    elsewhere = next((row for row in RECORDED if row[1] == opts.metrics), None)
    seen = f" (on an {elsewhere[0]} it took {elsewhere[3]})" if elsewhere else ""
    return (
        f"unknown for {gpu_name or 'this GPU'}{seen}: ncu tells only once it profiles (each"
        " launch's progress line says `N passes`)"
    )


def _launches(opts: ProfileOptions, last: LastRun | None) -> str:
    if opts.launch_count:
        return f"at most {opts.launch_count} (--launch-count)" + (
            f" after skipping {opts.launch_skip}" if opts.launch_skip else ""
        )
    if last:
        filtered = ", which had launch filters" if last["filtered"] else ""
        return (
            f"{last['launches']} at the last run of this command here (run"
            f" {last['name']}{filtered})"
        )
    return "every kernel launch of the program (unknown until it runs)"


def _cuts(opts: ProfileOptions) -> list[tuple[str, str]]:
    return [
        (
            "profile each distinct kernel launch configuration (grid, block, shared memory) once",
            '--ncu-args "--filter-mode per-launch-config" --launch-count 1',
        ),
        (
            "profile a window of launches: skip the warm-up, then N",
            "--launch-skip 100 --launch-count 20",
        ),
        ("profile only inside an NVTX range (push one around the step)", '--nvtx-include "step/"'),
        ("profile one kernel (a name or a regex)", "-k regex:gemm"),
        (
            "collect fewer metrics: FLOPs only, or bytes only",
            "--metrics flops  (or --metrics memory)",
        ),
    ]


def last_run(command: list[str], host: str) -> LastRun | None:
    """The latest stored run of this exact command on this host: its launches and the passes its
    ncu.log shows. Read-only: no store is created for a plan."""
    db = data_home() / "flopscope.db"
    if not db.exists():
        return None
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            row = conn.execute(
                "SELECT name, launches FROM runs WHERE command = ? AND host = ? ORDER BY id DESC"
                " LIMIT 1",
                (json.dumps(command), host),
            ).fetchone()
    except sqlite3.Error:
        return None
    if row is None:
        return None
    log = data_home() / "runs" / row[0] / "ncu.log"
    run_json = log.with_name("run.json")
    try:
        passes = [
            int(m.group(1))
            for line in log.read_text(errors="replace").splitlines()
            if (m := _PASSES.match(line))
        ]
    except OSError:
        passes = []
    found: LastRun = {
        "name": row[0],
        "launches": row[1],
        "passes": passes,
        "filtered": _filtered(run_json),
    }
    return found


def _filtered(run_json: Path) -> bool:
    """Did that run profile only some launches (ncu's kernel, launch or NVTX filters)?"""
    try:
        argv = json.loads(run_json.read_text())["ncu_argv"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return any(
        a in argv
        for a in (
            "--kernel-name",
            "-k",
            "--kernel-id",
            "--launch-skip",
            "--launch-count",
            "--nvtx-include",
            "--filter-mode",
        )
    )


def local_ncu_found(ncu: str, cwds: Sequence[str | None]) -> bool:
    """Whether `--ncu` names an executable on this machine (one relative to the command's cwd is
    looked for there by Popen: taken as found). A plan needs none; `profile` refuses to start
    without it."""
    relative_to_cwd = "/" in ncu and not os.path.isabs(ncu) and any(cwds)
    return relative_to_cwd or shutil.which(ncu) is not None


def target_gpu_name(transport: Transport) -> str | None:
    """The first GPU's name as nvidia-smi on the target says it; None where it cannot (no driver
    here)."""
    done = transport.output(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
    lines = done.stdout.strip().splitlines() if done.returncode == 0 else []
    return lines[0].strip() if lines else None


def plan_lines(plan: Plan) -> list[str]:
    lines = [f"metrics   {plan.metrics}", f"passes    {plan.passes}", f"launches  {plan.launches}"]
    if plan.replays:
        lines.append(f"replays   about {plan.replays} kernel runs under ncu (launches x passes)")
    if plan.timing:
        lines.append(f"timing    {plan.timing}")
    lines.append("each profiled launch is replayed once per pass; to profile less:")
    width = max(len(what) for what, _ in plan.cuts)
    return lines + [f"  {what:{width}}  {flags}" for what, flags in plan.cuts]


def cost_line(result: ProfileResult) -> str:
    """After a run: how long ncu took and the passes it used (from its `N passes` progress
    lines)."""
    passes = [e.passes for e in result.events if e.kind == "kernel" and e.passes]
    launches = result.kernels_profiled
    each = "/".join(map(str, sorted(set(passes)))) if passes else "unknown"
    replays = f", {sum(passes)} replays in all" if passes else ""
    return (
        f"profiled {launches} launch(es) in {result.ncu_seconds:.1f} s, {each} passes each{replays}"
    )
