"""`ReportMeta`: what a Report says beside its launches (the file, how it was read, the GPU and
whose ceilings judge it), typed for every view. Stored runs, `--json` and exports keep it as the
JSON object `to_dict` writes: those names and that order are the stored format, so `from_dict` loads
runs stored by earlier builds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ..table.columns import FMA_CONVENTION


@dataclass(frozen=True)
class DeviceMeta:
    """One device the launches ran on: an entry of meta's `gpus`, most launches first."""

    name: str  # as the report names the device: `NVIDIA H100 PCIe`
    # the database GPU whose datasheet ceilings judge its launches; None: not in it
    database_key: str | None
    compute_capability: str | None  # `9.0`; None where the report does not say
    launches: int  # launches that ran on it
    # `--gpu` where --gpu's datasheet replaced its own; None: stored before
    gpu_source: str | None = "report"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DeviceMeta:
        return cls(
            name=d["name"],
            database_key=d.get("database_key"),
            compute_capability=d.get("compute_capability"),
            launches=d.get("launches", 0),
            gpu_source=d.get("gpu_source"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "database_key": self.database_key,
            "compute_capability": self.compute_capability,
            "launches": self.launches,
            "gpu_source": self.gpu_source,
        }


@dataclass(frozen=True)
class ReportMeta:
    """A report's meta. `read_report` fills it, `with_gpu` and the store rebuild it
    (`dataclasses.replace`)."""

    source: str  # the file read (a run folder's report.ncu-rep)
    format: str  # how it was read: `ncu-rep`, `csv-raw`, `csv-details`, ...
    # why a .ncu-rep was read by ncu_report, not the streaming reader
    reader_note: str | None = None
    captured: float | None = None  # when ncu started the capture (Unix s); a CSV does not say
    # the device of most launches; without one in the file, the GPU --gpu or the CSV named
    gpu: str | None = None
    # the datasheet whose ceilings judge (the GPU of most launches)
    gpu_database_key: str | None = None
    gpu_database_name: str | None = None  # its name: `NVIDIA H100 PCIe`
    # what named that GPU: `report`, `--gpu`, `program output before the CSV`
    gpu_source: str | None = None
    # every device, most launches first (empty: the file names none)
    gpus: tuple[DeviceMeta, ...] = ()
    compute_capability: str | None = None  # of most launches
    launches: int = 0
    metrics_collected: tuple[str, ...] = ()  # the ncu metric names the file holds
    convention: str = FMA_CONVENTION  # how its FLOPs count an FMA
    # the command, host and sweep values it was profiled with
    params: dict[str, Any] = field(default_factory=dict)
    warning: str | None = None  # stored although the program failed or the report is partial: why
    run: str | None = None  # the name a stored run is loaded under
    # a stored run's keys this build does not know, as they were
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ReportMeta:
        """The meta `to_dict` wrote (a stored run's, by this build or an earlier one: absent keys
        take defaults)."""
        known = {f.name for f in fields(cls)} - {"extra"}
        values = {k: v for k, v in d.items() if k in known}
        values["gpus"] = tuple(DeviceMeta.from_dict(g) for g in d.get("gpus") or [])
        values["metrics_collected"] = tuple(d.get("metrics_collected") or ())
        values["params"] = dict(d.get("params") or {})
        return cls(
            **values, extra={k: v for k, v in d.items() if k not in known and k != "missing"}
        )

    def to_dict(self, missing: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
        """The JSON object runs are stored with and `--json` prints, `missing` (the counters not
        collected, as the caller writes them) in its place; `warning` and `run` only where set, as
        before they were typed."""
        out: dict[str, Any] = {
            "source": self.source,
            "format": self.format,
            "reader_note": self.reader_note,
            "captured": self.captured,
            "gpu": self.gpu,
            "gpu_database_key": self.gpu_database_key,
            "gpu_database_name": self.gpu_database_name,
            "gpu_source": self.gpu_source,
            "gpus": [g.to_dict() for g in self.gpus],
            "compute_capability": self.compute_capability,
            "launches": self.launches,
            "metrics_collected": list(self.metrics_collected),
            "missing": list(missing),
            "convention": self.convention,
            "params": dict(self.params),
        }
        out.update({k: v for k, v in self.extra.items() if k not in out})
        out.update(
            {k: v for k, v in (("warning", self.warning), ("run", self.run)) if v is not None}
        )
        return out
