"""The per-step block of `report --by module` (and its --json key, and the module tree screen's
header line): each step's wall time, kernel time, idle share, FLOPs and MFU, with where each number
comes from."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.analysis.step_mfu import StepFigures, StepMfu, figures_json, median_wall, step_mfu
from ...core.common import display_text
from ...core.report.meta import ReportMeta
from ...core.store.ncu_filters import profile_filters
from ...core.store.step_times import read_step_times, timing_path
from . import format as fmt

if TYPE_CHECKING:
    import pandas as pd

    from ...core.report import Report
    from .tables import TextTable

# (title, how a step's cell reads, drop priority: higher drops first; 0 never) A known part of an
# unknown total reads `≥` (`≤` for the idle share it leaves an upper bound of); MFU over kernel time
# is `≥` or `≤` where one of its parts is short, unknown (empty) where both are.
COLUMNS: list[tuple[str, Any, int]] = [
    # `3*`: ncu profiled only part of the step (a line below says how)
    ("Step", lambda s: "median" if s.step is None else f"{s.step}{'*' if s.partial else ''}", 0),
    ("Wall", lambda s: fmt.seconds(s.wall_s), 0),
    ("Kernel", lambda s: fmt.at_least(fmt.seconds(s.kernel_s), s.time_partial), 0),
    ("Idle", lambda s: _at_most(fmt.share(s.idle_share), s.time_partial), 0),
    ("FLOP", lambda s: fmt.at_least(fmt.si(s.flop_total), s.flop_partial), 2),
    ("MFU wall", lambda s: fmt.at_least(fmt.share(s.mfu_wall), s.flop_partial), 0),
    ("MFU kernel", lambda s: "" if s.time_partial and s.flop_partial else _mfu_kernel(s), 1),
]


def _at_most(shown: str, upper_bound: bool) -> str:
    return f"≤ {shown}" if shown and upper_bound else shown


def _mfu_kernel(s: StepFigures) -> str:
    shown = fmt.share(s.mfu_kernel)
    return fmt.at_least(shown, s.flop_partial) if not s.time_partial else _at_most(shown, True)


KERNEL_SOURCE = (
    "kernel time: ncu's, the profiled launches under the step's range, each measured alone (ncu"
    " serialises them)"
)


def load_steps(report: Report) -> StepMfu | None:
    """Per-step figures where the launches ran under `step N` ranges (profile --modules), with the
    wall times of the timing file beside the report (a file read from elsewhere, or stdin, has
    none); a bad timing file raises its one line."""
    source = Path(report.meta.source)
    if not source.is_file():
        return step_mfu(report, None)
    return step_mfu(report, read_step_times(timing_path(source)), profile_filters(source))


def timed_step(report: Report) -> tuple[float, str] | None:
    """A step's wall time from the timing file beside the report, for `reconcile`'s utilization, and
    where it comes from; None without one (a bad one raises its one line)."""
    source = Path(report.meta.source)
    times = read_step_times(timing_path(source)) if source.is_file() else None
    median = median_wall(times) if times else None
    if times is None or median is None:
        return None
    wall, chosen = median
    warm = ", step 1 (warm-up) left out" if chosen[0] != 1 else ""
    return wall, f"the timing run without ncu ({times.path}), median of {len(chosen)} step(s){warm}"


def screen_line(steps: StepMfu | None, meta: ReportMeta) -> str:
    """The module tree screen's line: the median step's figures, or how to get them ("" for a
    report without steps)."""
    if steps is None:
        return ""
    return header_line(steps) if steps.timing_file else no_timing_hint(meta)


def in_order(s: StepMfu) -> list[StepFigures]:
    """The steps as printed: each GPU's steps, then its median step."""
    by_gpu = {m.gpu: m for m in s.medians}
    out: list[StepFigures] = []
    for n, step in enumerate(s.steps):
        out.append(step)
        last = n + 1 == len(s.steps) or s.steps[n + 1].gpu != step.gpu
        if last and step.gpu in by_gpu:
            out.append(by_gpu[step.gpu])
    return out


def steps_table(s: StepMfu, width: int) -> tuple[TextTable, list[str]]:
    """One line a step, then the median step's; on a file of several GPUs, GPU by GPU, the GPU
    first on each line."""
    from .tables import Spec, fitted_table  # rich: not for --json

    several = bool(s.peaks_by_gpu)
    specs = [Spec(title, True, priority) for title, _, priority in COLUMNS]
    rows = [[cell(step) for _, cell, _ in COLUMNS] for step in in_order(s)]
    if not several:
        return fitted_table(specs, rows, width, flex=None)
    gpus = [display_text(step.gpu) for step in in_order(s)]
    specs = [Spec("GPU", False, 0), *specs]
    return fitted_table(specs, [[g, *r] for g, r in zip(gpus, rows, strict=True)], width, flex=0)


def sources(s: StepMfu) -> list[str]:
    """Where each number comes from, one line each."""
    return [
        f"wall: {wall_source(s)}",
        KERNEL_SOURCE,
        "idle: (wall - kernel time) / wall: launch overhead, host work, data loading",
        f"MFU: FLOPs (ncu) / (time x peak), each precision against its peak: {peaks_line(s)}",
        *partial_lines(s),
    ]


def partial_lines(s: StepMfu) -> list[str]:
    """A line per step ncu profiled only in part: why, and what that makes of its figures."""
    return [
        display_text(
            f"* {f'{step.gpu}, ' if step.gpu else ''}step {step.step}: {step.partial}: its kernel"
            " time, FLOPs and MFU are the profiled part (≥), its idle share at most (≤), and it is"
            " left out of the median"
        )
        for step in s.steps
        if step.partial
    ]


def wall_source(s: StepMfu) -> str:
    if not s.timing_file:
        return "no timing file"
    median = f"median of {len(s.median_of)} step(s)" if s.median_of else "no step with both times"
    warm = (
        "; step 1 (warm-up) left out"
        if s.median_of and s.median_of[0] != 1 and _has_step_one(s)
        else ""
    )
    return f"the timing run without ncu ({s.timing_file}), {median}{warm}"


def _has_step_one(s: StepMfu) -> bool:
    return any(step.step == 1 for step in s.steps)


def peaks_line(s: StepMfu) -> str:
    """The peaks the steps' FLOPs are held to: each GPU's, named, on a file of several."""
    parts = []
    for gpu, peaks in (s.peaks_by_gpu or {"": s.peaks}).items():
        used = {name for step in s.steps if step.gpu == gpu for name in step.flop}
        shown = [
            f"{fmt.ceiling(name)} {fmt.si(value)}FLOP/s ({source})"
            for name, (value, source) in peaks.items()
            if name in used
        ]
        if shown:
            parts.append((f"{display_text(gpu)}: " if gpu else "") + "; ".join(shown))
    return " · ".join(parts) or "no FLOP ceiling known (pass --gpu NAME)"


def no_timing_hint(meta: ReportMeta) -> str:
    """A report with steps but no timing file: the profile that makes one."""
    command = meta.params.get("command")
    words = [str(w) for w in command] if isinstance(command, list) else ["python", "train.py"]
    return display_text(
        "no timing file, so no wall time, idle share or MFU over wall time per step: `flopscope"
        f" profile --modules -- {shlex.join(words)}` runs the program once more without ncu and"
        " times each step (not with --no-timing)"
    )


def header_line(s: StepMfu) -> str:
    """The module tree screen's line: the median step (or the only one) and where its numbers come
    from; a line per GPU on a file of several."""
    if s.peaks_by_gpu:
        return "\n".join(_gpu_line(s, m) for m in s.medians) or f"{len(s.steps)} step(s)"
    row: StepFigures | None = s.median or (s.steps[0] if len(s.steps) == 1 else None)
    if row is None:
        return f"{len(s.steps)} step(s); {wall_source(s)}"
    label = f"median of {len(s.median_of)}" if s.median else f"step {row.step}"
    return f"Step ({label}): {_figures_words(row)}"


def _gpu_line(s: StepMfu, median: StepFigures) -> str:
    label = f"{display_text(median.gpu)}, step (median of {len(s.median_of)})"
    return f"{label}: {_figures_words(median)}"


def _figures_words(row: StepFigures) -> str:
    cell = {title: render(row) or "unknown" for title, render, _ in COLUMNS}
    return (
        f"wall {cell['Wall']} (timing run, no ncu) · kernel {cell['Kernel']} (ncu)"
        f" · idle {cell['Idle']} · MFU {cell['MFU wall']} of wall, {cell['MFU kernel']} of kernel"
    )


def steps_frame(s: StepMfu) -> pd.DataFrame:
    """One row a step then the median step's (`step` empty), as `--json`'s `steps` has them, each
    precision's FLOPs a column (`flop_bf16`): what the steps screen exports."""
    import pandas as pd

    rows = []
    for step in in_order(s):
        row = figures_json(step)
        row.pop("flop_by_precision")
        rows.append({"step": None, **row, **{f"flop_{p}": f for p, f in step.flop.items()}})
    return pd.DataFrame(rows)


def _peaks_json(peaks: dict[str, tuple[float, str]]) -> dict[str, dict[str, object]]:
    return {
        name: {"flop_per_s": value, "source": source} for name, (value, source) in peaks.items()
    }


def steps_json(s: StepMfu) -> dict[str, Any]:
    """The `steps` key of `report --by module --json`."""
    return {
        "steps": [figures_json(step) for step in s.steps],
        "median": figures_json(s.median) if s.median else None,
        # one per GPU (with its `gpu`) on a file of several
        "medians": [figures_json(m) for m in s.medians],
        "median_of": s.median_of,
        "peaks": _peaks_json(s.peaks),
        **(
            {"peaks_by_gpu": {g: _peaks_json(p) for g, p in s.peaks_by_gpu.items()}}
            if s.peaks_by_gpu
            else {}
        ),
        "sources": {
            "wall": wall_source(s),
            "kernel": KERNEL_SOURCE,
            "timing_file": s.timing_file or None,
        },
    }
