"""Analytic FLOPs of a model next to the FLOPs ncu measured per NVTX range (`flopscope reconcile`).

No torch here: the analytic side is a `ModelFlops` (counted now, or read from `flopscope model
--json`).

Matching rule. A kernel's NVTX stack (`nvtx_stack`: per domain its ranges, each name whole, so a
`/` or `:` inside a name is part of it; `train > forward > layer1.0.conv1`) gives its range names,
every domain's; the domains' own names are not range names. A module
matches a kernel when one of the names equals the module's fully-qualified name (`layer1.0.conv1`,
as `model.named_modules()` spells it) or that name prefixed by the model's class and a dot
(`ResNet.layer1.0.conv1`, as torch's ModuleTracker spells it). Modules are inclusive: `layer1` gets
every kernel under `layer1/...`, like its analytic count.

Phase rule, first match wins: backward if a name contains "backward" (any case; autograd's
`AddmmBackward0`, a user's `backward` range) or emit_nvtx's "stashed seq"; optimizer if a name
starts with "optim" or contains "zero_grad"; forward if a name contains "forward", names a module of
the model or its class, or is an emit_nvtx forward op (`aten::linear, seq = 12`); other for
remaining ranged kernels; unranged without a range."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, cast

import numpy as np
import pandas as pd

from ..common.errors import FlopscopeError
from ..common.gpus import Gpu, require_gpu
from ..common.nvtx_stack import decode_stack
from ..export.cells import json_ready
from ..report.report import Report
from ..table.columns import FLOP_PARTS
from ..table.counters import collecting, missing_fix
from ..table.grouping import NO_RANGE
from ..table.module_tree import BACKWARD_SUFFIX
from ..table.nvtx import is_emit_nvtx_op, normalize_range, stacks_of
from ..table.roofline import PRECISIONS, Ceiling, datasheet_peak
from ..table.summary import counted_flop
from .model_flops import ModelFlops
from .predict import (
    DTYPE_OF_CEILING,
    ceiling_for,
    flop_by_ceiling,
    fp32_note,
    harmonic_peak,
    peak_for,
    utilization,
)

PHASES = ("forward", "backward", "optimizer", "other", "unranged")


@dataclass
class ModuleRow:
    name: str  # "" is the whole model: the forward and backward phase totals
    type: str
    analytic_forward: float
    analytic_backward: float | None
    measured_forward: float | None  # per step
    measured_backward: float | None
    ratio_forward: float | None  # measured / analytic
    ratio_backward: float | None
    flag: str  # over, under, ok, or "" when nothing to compare
    # "forward"/"backward" where the measured figure leaves out FLOPs of launches whose total is
    # unknown (≥)
    lower_bound: list[str] = field(default_factory=list)


@dataclass
class Reconciliation:
    model: str
    report: str
    tol: float
    steps: int
    modules: list[ModuleRow]  # the model first, then modules some range names, in model order
    measured: dict[str, float | None]  # phase -> measured FLOP per step
    analytic_backward_ratio: float | None
    measured_backward_ratio: float | None
    step_time_s: float | None
    step_time_source: str
    gpu: str | None
    precision: str
    peak_flop_per_s: float | None
    utilization_analytic: float | None  # analytic step FLOPs / (step time x peak)
    utilization_measured: float | None  # measured FLOP per step / (step time x peak)
    notes: list[str] = field(default_factory=list)
    # Without forward/backward ranges, the only comparison: every measured FLOP per step / analytic
    # step FLOPs
    measured_step: float | None = None
    analytic_step: float | None = None
    # where peak_flop_per_s comes from, as `flopscope report` says for its ceilings
    peak_source: str = ""
    # The analytic step's FLOPs per database ceiling, as `flopscope model` predicts them (fp32: TF32
    # convolutions); with several, peak_flop_per_s is their peaks' FLOP-weighted harmonic mean
    ceiling: str = ""
    flop_by_ceiling: dict[str, float] = field(default_factory=dict)
    whole_run_ratio: float | None = None
    whole_run_flag: str = ""
    # Phases (and "step", the whole report) whose measured figure is a lower bound: some of their
    # launches have an unknown total, of which only the known precisions are counted (as `flopscope
    # report`'s "FLOP ≥")
    lower_bounds: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return cast("dict[str, Any]", json_ready(asdict(self)))  # json_ready keeps a dict a dict


def stack_names(text: object) -> list[str]:
    """The range names of one launch's NVTX stack (`nvtx_stack`'s text), every domain's, outermost
    first; [] without a range."""
    return [name for _, ranges in decode_stack(text) for name in ranges if name]


def range_names(path: str | None) -> list[str]:
    """The range names of one joined NVTX label (`nvtx`), outermost first, with domain prefixes also
    stripped off: what a label alone says, where a `/` in a name reads as a separator."""
    if not path or path == NO_RANGE:
        return []
    names = []
    for part in path.split(" | "):
        for name in part.split("/"):
            name = name.strip()
            if name:
                names.append(name)
                # `domain:range` from the readers; a C++ name such as aten::linear has `::` and is
                # kept whole.
                head, sep, tail = name.partition(":")
                if sep and not tail.startswith(":") and head and "::" not in name:
                    names.append(tail)
    return names


def module_names(model: ModelFlops) -> dict[str, str]:
    """Range name -> module name, both spellings of the matching rule."""
    out = {model.model_type: ""}
    for m in model.modules:
        if m.name:
            out[m.name] = m.name
            out[f"{model.model_type}.{m.name}"] = m.name
    return out


def phase(names: list[str], known: dict[str, str]) -> str:
    lowered = [n.lower() for n in names]
    if not names:
        return "unranged"
    if any("backward" in n or "stashed seq" in n for n in lowered):
        return "backward"
    if any(n.startswith("optim") or "zero_grad" in n for n in lowered):
        return "optimizer"
    if (
        any("forward" in n for n in lowered)
        or any(n in known for n in names)
        or any(is_emit_nvtx_op(n) for n in names)
    ):
        return "forward"
    return "other"


def reconcile(
    report: Report,
    model: ModelFlops,
    tol: float = 0.1,
    steps: int = 1,
    step_time_s: float | None = None,
    gpu: str | None = None,
    precision: str | None = None,
    step_time_source: str = "--step-time",
) -> Reconciliation:
    """Line up MODEL's analytic FLOPs with REPORT's measured FLOPs per NVTX range; see the module
    docstring. PRECISION (a --dtype) picks the peak for utilization; default: the model's.
    STEP_TIME_SOURCE says where a given STEP_TIME_S comes from (--step-time, or the run's timing
    run)."""
    precision = precision or model.dtype
    ranges = _ranges(report, model)
    notes = _unknown_notes(report)
    measured = {p: _sum(ranges.loc[ranges["phase"] == p, "flop"]) for p in PHASES}
    measured = {p: None if v is None else v / steps for p, v in measured.items()}
    lower = [
        p
        for p in PHASES
        if measured[p] is not None and ranges.loc[ranges["phase"] == p, "partial"].any()
    ]
    if ranges["partial"].any() and _sum(ranges["flop"]) is not None:
        lower.append("step")
    rows = [_total_row(model, measured, tol, lower), *_module_rows(model, ranges, steps, tol)]
    notes += _count_hints(model, rows, measured, steps, tol)
    if len(rows) == 1:
        notes.append(
            "no NVTX range names a module of the model: push module names (e.g. from forward hooks)"
            " to compare per module; totals compare by phase only"
        )
    no_phases = not measured["forward"] and not measured["backward"]
    if no_phases:
        notes.append(
            "no kernel falls in a forward or backward range, so only the whole report compares"
            " (every profiled kernel, input setup and copies included): name ranges `forward` /"
            " `backward`, run under torch.autograd.profiler.emit_nvtx, or push module names"
        )
    time_s, source = _step_time(report, step_time_s, steps)
    source = step_time_source if step_time_s else source
    spec = require_gpu(gpu) if gpu else report.gpu
    split = _analytic_split(model, spec, precision)
    peak, peak_source, peak_note, peaks = _peak(report, spec, split)
    notes += [
        n
        for n in (peak_note, _fp32_note(spec, precision, peaks), _precision_note(report, precision))
        if n
    ]
    step_measured = _sum(ranges["flop"])
    step_measured = None if step_measured is None else step_measured / steps
    return Reconciliation(
        model=model.model,
        report=report.meta.source,
        tol=tol,
        steps=steps,
        modules=rows,
        measured=measured,
        analytic_backward_ratio=model.backward_ratio,
        measured_backward_ratio=_ratio(measured["backward"], measured["forward"]),
        step_time_s=time_s,
        step_time_source=source,
        gpu=spec.name if spec else None,
        precision=precision,
        peak_flop_per_s=peak,
        utilization_analytic=_util(model.step_flop, time_s, peak),
        utilization_measured=None if step_measured is None else _util(step_measured, time_s, peak),
        notes=notes,
        measured_step=step_measured,
        analytic_step=model.step_flop,
        peak_source=peak_source,
        ceiling="+".join(split),
        flop_by_ceiling=split,
        whole_run_ratio=_ratio(step_measured, model.step_flop) if no_phases else None,
        whole_run_flag=flag(_ratio(step_measured, model.step_flop), tol) if no_phases else "",
        lower_bounds=lower,
    )


def module_report(report: Report, model: ModelFlops, module: str) -> Report:
    """The launches MODULE's measured FLOPs come from, as a Report of their own (the reconcile
    screen's drill-down): every launch in a range naming the module, by the matching rule above, in
    any phase; "" (the model's totals row) is every launch of a forward or backward range."""
    ranges = _ranges(report, model)
    if module:
        stacks = ranges.loc[[module in names for names in ranges["modules"]], "stack"]
    else:
        stacks = ranges.loc[ranges["phase"].isin(["forward", "backward"]), "stack"]
    k = report.kernels
    chosen = k[np.isin(_stack_codes(k)[0], stacks.to_numpy(dtype=np.int64))].reset_index(drop=True)
    return Report(
        replace(report.meta, launches=len(chosen)),
        chosen,
        report.gpu,
        report.missing,
        report.gpus,
        report.roof,
    )


def _ranges(report: Report, model: ModelFlops) -> pd.DataFrame:
    """One row per NVTX path: measured FLOPs, whether they are a lower bound (`partial`), range
    names, phase and the modules it matches."""
    # Counted FLOPs summed per range, as `flopscope report` sums them (Report.group would leave a
    # range with one uncounted launch unknown): the known precisions of a launch whose total is
    # unknown count too, the range's figure then a lower bound, and `_unknown_notes` says what was
    # left out and why.
    k = report.kernels
    by, texts = _stack_codes(k)
    flop = counted_flop(k).groupby(by, sort=False).sum(min_count=1)
    partial = k["flop"].isna().groupby(by, sort=False).any()
    stacks = flop.index.to_numpy(dtype=np.int64)
    grouped = pd.DataFrame(
        {
            "stack": stacks,  # the number of its distinct stack (-1: no range)
            "flop": flop.to_numpy(),
            "partial": partial.reindex(flop.index).to_numpy(dtype=bool),
        }
    )
    known = module_names(model)
    raw = [stack_names(texts[c]) if c >= 0 else [] for c in stacks]
    # The phase reads emit_nvtx's arguments (`seq`, `stashed seq`); modules are matched on the names
    # without them.
    grouped["phase"] = [phase(names, known) for names in raw]
    names = [[_module_part(normalize_range(n)) for n in ns] for ns in raw]
    grouped["modules"] = [{known[n] for n in ns if known.get(n)} for ns in names]
    return grouped


def _module_part(name: str) -> str:
    """The module a backward range names: `mlp.0 [backward]` (profile --modules' hooks),
    `backward/mlp.0` (the project's H100 captures' own, one range); any other name as it is."""
    return name.removesuffix(BACKWARD_SUFFIX).removeprefix("backward/")


def _stack_codes(k: pd.DataFrame) -> tuple[np.ndarray, list[object]]:
    """Each launch's number among the distinct NVTX stacks (-1: no range) and those stacks."""
    codes, uniques = pd.factorize(stacks_of(k), sort=False, use_na_sentinel=True)
    return codes.astype(np.int64), list(np.asarray(uniques, dtype=object))


def _unknown_notes(report: Report) -> list[str]:
    """How many launches have no total FLOP count, and why: ncu did not profile them; it did without
    (some of) the FLOP counters, named with the `ncu --metrics` option that collects them; or it
    counted tensor instructions flopscope has no checked FLOPs-per-instruction factor for (the rows'
    provenance says so)."""
    k = report.kernels
    unknown = k["flop"].isna()
    if not unknown.any():
        return []
    skipped = unknown & (k["status"] != "ok") if "status" in k else unknown & False
    counted = unknown & ~skipped
    causes = (
        [f"{int(skipped.sum())} not profiled (ncu recorded no values for them)"]
        if skipped.any()
        else []
    )
    if counted.any():
        causes += _counted_causes(report, counted)
    partial = counted & k[list(FLOP_PARTS)].notna().any(axis=1)
    effect = (
        "measured figures count their known precisions only, so they are lower bounds (≥)"
        if partial.any()
        else "measured figures leave them out and under-count"
    )
    return [
        f"{int(unknown.sum())} of {len(k)} launches have no FLOP count ({'; '.join(causes)}):"
        f" {effect}"
    ]


def _counted_causes(report: Report, rows: pd.Series) -> list[str]:
    """Why profiled launches ROWS have no total: a FLOP column the provenance calls unknown
    (counted, but no checked factor), else one ncu did not collect."""
    k = report.kernels.loc[rows]
    empty = pd.Series("", index=k.index)
    provenance = (
        k["provenance"].astype(object).fillna("").astype(str) if "provenance" in k else empty
    )
    causes, lacking, uncollected = [], [], pd.Series(False, index=k.index)
    for col in FLOP_PARTS:
        na = k[col].isna()
        why = provenance.str.extract(rf"{col} unknown: ([^;]*)", expand=False)
        settled = na & why.notna()
        for reason in pd.unique(why[settled]):
            n = int((settled & (why == reason)).sum())
            fix = missing_fix([m for m in report.missing if m.why != "not collected"], [col])
            causes.append(
                f"{n} profiled, but {col} unknown ({reason})"
                + (f": collect the counters that settle it with `{fix}`" if fix else "")
            )
        if (na & ~settled).any():
            lacking.append(col)
            uncollected |= na & ~settled
    if lacking:
        what = (
            "no FLOP counters were collected"
            if len(lacking) == len(FLOP_PARTS)
            else f"{', '.join(lacking)} not collected"
        )
        ccs = [str(c) for c in pd.unique(k.loc[uncollected, "cc"].dropna())] if "cc" in k else []
        collected_not = [m for m in report.missing if m.why == "not collected"]
        # the chips' own counter names
        fix = missing_fix(collected_not, lacking) or collecting(lacking, ccs)
        causes.insert(
            0,
            f"{int(uncollected.sum())} profiled, but {what}"
            + (f": collect them with `{fix}`" if fix else ""),
        )
    return causes


def _sum(values: pd.Series) -> float | None:
    values = values.dropna()
    return float(values.sum()) if len(values) else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def flag(ratio: float | None, tol: float) -> str:
    """over: measured > analytic x (1+tol); under: measured < analytic x (1-tol); ok between; "" if
    unknown."""
    if ratio is None:
        return ""
    if ratio > 1 + tol:
        return "over"
    if ratio < 1 - tol:
        return "under"
    return "ok"


def _row_flag(pairs: list[tuple[float | None, float | None]], tol: float) -> str:
    """One flag for (measured, analytic) pairs; measured work where the analytic count is 0 is
    over-counting."""
    flags = [
        flag(_ratio(m, a), tol) if a else "over" for m, a in pairs if m is not None and (a or m)
    ]
    bad = list(dict.fromkeys(f for f in flags if f != "ok"))
    return "/".join(bad) if bad else ("ok" if flags else "")


def _total_row(
    model: ModelFlops, measured: dict[str, float | None], tol: float, lower: list[str]
) -> ModuleRow:
    fwd, bwd = measured["forward"], measured["backward"] if model.train else None
    shown = ("forward", "backward")
    return ModuleRow(
        name="",
        type=model.model_type,
        analytic_forward=model.forward_flop,
        analytic_backward=model.backward_flop,
        measured_forward=fwd,
        measured_backward=bwd,
        ratio_forward=_ratio(fwd, model.forward_flop),
        ratio_backward=_ratio(bwd, model.backward_flop),
        flag=_row_flag([(fwd, model.forward_flop), (bwd, model.backward_flop)], tol),
        lower_bound=[
            p for p, v in zip(shown, (fwd, bwd), strict=True) if v is not None and p in lower
        ],
    )


def _module_rows(
    model: ModelFlops, ranges: pd.DataFrame, steps: int, tol: float
) -> list[ModuleRow]:
    # One pass over the ranges: (module, phase) -> measured FLOPs (None while only unknown counts
    # were seen).
    measured: dict[tuple[str, str], float | None] = {}
    partial: set[tuple[str, str]] = set()  # (module, phase) with a launch whose total is unknown
    for mods, ph, flop, part in zip(
        ranges["modules"], ranges["phase"], ranges["flop"], ranges["partial"], strict=True
    ):
        for name in mods:
            before = measured.get((name, ph))
            measured[(name, ph)] = before if math.isnan(flop) else (before or 0.0) + float(flop)
            if part:
                partial.add((name, ph))
    rows = []
    for m in model.modules:
        if not m.name or not any((m.name, ph) in measured for ph in PHASES):
            continue
        fwd, bwd = measured.get((m.name, "forward")), measured.get((m.name, "backward"))
        fwd = None if fwd is None else fwd / steps
        bwd = None if bwd is None or not model.train else bwd / steps
        rows.append(
            ModuleRow(
                name=m.name,
                type=m.type,
                analytic_forward=m.forward_flop,
                analytic_backward=m.backward_flop,
                measured_forward=fwd,
                measured_backward=bwd,
                ratio_forward=_ratio(fwd, m.forward_flop),
                ratio_backward=_ratio(bwd, m.backward_flop),
                flag=_row_flag([(fwd, m.forward_flop), (bwd, m.backward_flop)], tol),
                lower_bound=[
                    p
                    for p, v in (("forward", fwd), ("backward", bwd))
                    if v is not None and (m.name, p) in partial
                ],
            )
        )
    return rows


def _count_hints(
    model: ModelFlops,
    rows: list[ModuleRow],
    measured: dict[str, float | None],
    steps: int,
    tol: float,
) -> list[str]:
    """What the user likely forgot when measured and analytic differ wholesale: --train, or
    --steps."""
    hints = []
    if model.backward_flop is None and measured["backward"]:
        hints.append(
            f"the report has {measured['backward']:.3g} FLOP per step in backward ranges but the"
            " analytic count is a forward pass: pass --train to count a training step (forward +"
            " backward)"
        )
    ratios = [r for row in rows for r in (row.ratio_forward, row.ratio_backward) if r is not None]
    factor = round(ratios[0]) if ratios else 0
    if factor >= 2 and all(abs(r / factor - 1) <= tol for r in ratios):
        hints.append(
            f"every measured figure is {factor}x its analytic one: the report likely holds "
            f"{factor * steps} steps, not {steps}; pass --steps {factor * steps}"
        )
    return hints


def _step_time(report: Report, given: float | None, steps: int) -> tuple[float | None, str]:
    if given:
        return given, "--step-time"
    kernel = (
        float(report.kernels["duration_s"].sum(min_count=1))
        if report.kernels["duration_s"].notna().any()
        else math.nan
    )
    if math.isnan(kernel) or not kernel:
        return None, "unknown"
    return (
        kernel / steps,
        (
            "sum of kernel durations: ncu serializes kernels and a real step also waits on the CPU,"
            " so utilization from it is an upper bound; pass --step-time for a measured step"
        ),
    )


def _analytic_split(model: ModelFlops, gpu: Gpu | None, precision: str) -> dict[str, float]:
    """The analytic step's FLOPs per database ceiling, as `flopscope model` predicts them
    (predict.flop_by_ceiling: at fp32, convolutions on the TF32 tensor cores of a GPU that has
    them)."""
    if gpu is None:
        return {ceiling_for(None, precision): model.step_flop}
    return flop_by_ceiling(model.step_flop, gpu, precision, model.family_flops())


def _peak(
    report: Report, gpu: Gpu | None, split: dict[str, float]
) -> tuple[float | None, str, str, dict[str, float]]:
    """(peak FLOP/s, its source, a note, each ceiling's peak) for the analytic FLOPs SPLIT per
    ceiling: each ceiling as `_ceiling` takes it, several making their FLOP-weighted harmonic mean
    (predict.harmonic_peak; an fp32 ResNet's convolutions held against the FP32 peak alone read as
    1538% of it on an A100)."""
    ceilings = {c.name: c for c in report.ceilings()}
    found = {name: _ceiling(report, ceilings, gpu, name) for name in split}
    missing = next((note for _, _, note in found.values() if note), "")
    if missing:
        return None, "", missing, {}
    # None only with a note
    peaks = {name: peak for name, (peak, _, _) in found.items() if peak is not None}
    sources = list(dict.fromkeys(source for _, source, _ in found.values()))
    source = (
        sources[0]
        if len(sources) == 1
        else "; ".join(f"{n}: {s}" for n, (_, s, _) in found.items())
    )
    return harmonic_peak(split, peaks), source, "", peaks


def _ceiling(
    report: Report, ceilings: dict[str, Ceiling], gpu: Gpu | None, name: str
) -> tuple[float | None, str, str]:
    """(FLOP/s, source, a note) of the database ceiling NAME: the report's own where it has one, the
    one `flopscope report` judges the run against (its peak counters x the measured clock: 2.84
    TFLOP/s FP32 in a T4 report, not the datasheet's 8.1); else the datasheet's, scaled to the
    measured SM clock as report does."""
    if name in ceilings:
        return ceilings[name].value, ceilings[name].source, ""
    if gpu is None:
        return None, "", "no GPU known for the peak: pass --gpu NAME"
    try:
        peak_for(gpu, DTYPE_OF_CEILING[name])  # a one-line reason where the GPU has no such unit
    # the GPU lacks this precision: keep the FLOP comparison, skip utilization
    except FlopscopeError as err:
        return None, "", f"no utilization: {err.line()}"
    # `report`'s rule for a ceiling it has no counters for: the datasheet's, at the clock the
    # launches ran at.
    peak, source = datasheet_peak(report.kernels, gpu, name)
    return peak, source, ""


def _fp32_note(gpu: Gpu | None, precision: str, peaks: dict[str, float]) -> str:
    """`flopscope model`'s note on what fp32 means (predict.fp32_note), naming the TF32 peak as
    taken here."""
    # without a GPU, whether it has TF32 units is unknown
    if precision != "fp32" or gpu is None or not peaks:
        return ""
    return fp32_note({gpu.key: peaks["tensor_tf32"]} if "tensor_tf32" in peaks else {})


def _precision_note(report: Report, dtype: str) -> str:
    """Say so when most measured FLOPs ran in another precision than the peak utilization is taken
    against (FP16 tensor work judged against the FP32 peak reads as 285% of it)."""
    flops = {
        name: float(report.kernels[col].sum())
        for name, col, _ in PRECISIONS
        if col in report.kernels
    }
    total = sum(flops.values())
    if not total:
        return ""
    top = max(flops, key=flops.__getitem__)
    suggested = DTYPE_OF_CEILING.get(top)
    if suggested == dtype or flops[top] < 0.5 * total:
        return ""
    fix = f"pass --dtype {suggested}" if suggested else "read utilization with care"
    return (
        f"{100 * flops[top] / total:.0f}% of the measured FLOPs ran as {top}, but utilization is"
        f" against the {dtype} peak: {fix}"
    )


def _util(flop: float, seconds: float | None, peak: float | None) -> float | None:
    if seconds is None or peak is None:
        return None
    value = utilization(flop, seconds, peak)
    return None if math.isnan(value) else value
