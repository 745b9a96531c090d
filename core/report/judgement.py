"""Whose ceilings judge a report, decided once for every view: the GPU (or GPUs) the report names,
or the one `--gpu` named, and whether --gpu's datasheet set any ceiling at all (the report's own
peak counters win over it). The views only word a GpuJudgement; none reads meta to decide it
again."""

from __future__ import annotations

from dataclasses import dataclass

from ..common.gpus import Gpu
from ..table.roofline import Ceiling
from .meta import ReportMeta

# one GPU's datasheet, or each device's (a file of several GPUs)
JudgedBy = Gpu | dict[str, Gpu | None] | None


@dataclass(frozen=True)
class DeviceJudgement:
    """One device of a file with launches on several GPUs, and whose ceilings judge its launches."""

    name: str  # as the report names it: `NVIDIA A100-PCIE-40GB`
    compute_capability: str | None  # None where the report does not say
    launches: int
    against: str = ""  # the --gpu GPU whose datasheet ceilings judge its launches; "": its own


@dataclass(frozen=True)
class GpuJudgement:
    # the GPU of most launches (or the one --gpu or the CSV's program output named); None: unknown
    gpu: str | None
    compute_capability: str | None  # of most launches; None where the report does not say
    # what named the GPU whose ceilings apply: `report`, `--gpu`, `program output before the CSV`,
    # ""
    found: str
    # one GPU: the --gpu GPU whose datasheet ceilings replace those of the device the report names
    against: str = ""
    # the --gpu GPU whose datasheet set no ceiling (the report's peak counters set all)
    unused_option: str = ""
    # several GPUs: each, most launches first; empty for one
    devices: tuple[DeviceJudgement, ...] = ()


def judge_gpu(
    meta: ReportMeta, gpu: Gpu | None, judged_by: JudgedBy, ceilings: list[Ceiling]
) -> GpuJudgement:
    """A report's GPU judgement, from its meta (gpu_source per run and per device), the GPU of most
    launches, the datasheet GPU (or GPUs) that judge it and its ceilings."""
    several = isinstance(judged_by, dict)
    by_option = _by_option(meta, judged_by, ceilings)
    overridden = bool(gpu and meta.gpu_source == "--gpu" and meta.gpus)
    used = overridden and any("datasheet" in c.source for c in ceilings)
    option = gpu.name if gpu else ""  # the GPU --gpu named (on several GPUs: of those it judged)
    # `several`, tested here so that it narrows judged_by
    if isinstance(judged_by, dict) and overridden:
        chosen = [judged_by[g.name] for g in meta.gpus if g.gpu_source == "--gpu"]
        option = chosen[0].name if chosen and chosen[0] else option
        used = bool(by_option)
    devices = (
        tuple(
            DeviceJudgement(g.name, g.compute_capability, g.launches, by_option.get(g.name, ""))
            for g in meta.gpus
        )
        if several and len(meta.gpus) > 1
        else ()
    )
    return GpuJudgement(
        gpu=meta.gpu,
        compute_capability=meta.compute_capability,
        found="report" if (overridden and not used) or several else meta.gpu_source or "",
        against=gpu.name if used and not several and gpu else "",
        unused_option=option if overridden and not used else "",
        devices=devices,
    )


def _by_option(meta: ReportMeta, judged_by: JudgedBy, ceilings: list[Ceiling]) -> dict[str, str]:
    """Device -> the database GPU --gpu gave its launches, where a datasheet ceiling of it is
    used."""
    gpus = judged_by if isinstance(judged_by, dict) else {}
    datasheet = {c.gpu for c in ceilings if "datasheet" in c.source}
    return {
        g.name: gpu.name
        for g in meta.gpus
        if g.gpu_source == "--gpu" and (gpu := gpus.get(g.name)) and g.name in datasheet
    }
