"""Whose ceilings judge a report, decided once for every view: the GPU the report names, or the one `--gpu`
named, and whether --gpu's datasheet set any ceiling at all (the report's own peak counters win over it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import Report


@dataclass(frozen=True)
class GpuJudgement:
    found: str  # what named the GPU whose ceilings apply: `report`, `--gpu`, `program output before the CSV`, ""
    against: str = ""  # one GPU: the --gpu GPU whose datasheet ceilings replace those of the device the report names
    unused_option: str = ""  # the --gpu GPU whose datasheet set no ceiling (the report's peak counters set all)
    # Several GPUs: device -> the --gpu GPU whose datasheet ceilings judge that device's launches.
    by_option: dict[str, str] = field(default_factory=dict)


def judge_gpu(report: Report) -> GpuJudgement:
    """The report's GPU judgement, from its meta (gpu_source per run and per device) and its ceilings."""
    meta = report.meta
    several = isinstance(report.judged_by, dict)
    by_option = _by_option(report)
    overridden = bool(report.gpu and meta.get("gpu_source") == "--gpu" and meta.get("gpus"))
    used = overridden and any("datasheet" in c.source for c in report.ceilings())
    option = report.gpu.name if report.gpu else ""  # the GPU --gpu named (on several GPUs: of those it judged)
    if several and overridden:
        chosen = [report.judged_by[g["name"]] for g in meta["gpus"] if g.get("gpu_source") == "--gpu"]
        option = chosen[0].name if chosen and chosen[0] else option
        used = bool(by_option)
    return GpuJudgement(
        found="report" if (overridden and not used) or several else meta.get("gpu_source") or "",
        against=report.gpu.name if used and not several and report.gpu else "",
        unused_option=option if overridden and not used else "",
        by_option=by_option)


def _by_option(report: Report) -> dict[str, str]:
    """Device -> the database GPU --gpu gave its launches, where a datasheet ceiling of it is used."""
    gpus = report.judged_by if isinstance(report.judged_by, dict) else {}
    datasheet = {c.gpu for c in report.ceilings() if "datasheet" in c.source}
    return {g["name"]: gpus[g["name"]].name for g in report.meta.get("gpus") or []
            if g.get("gpu_source") == "--gpu" and gpus.get(g["name"]) and g["name"] in datasheet}
