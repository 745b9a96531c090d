"""`Report`: meta (report_meta.py) + the canonical kernels table, grouped any way every view
needs."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..common.errors import FlopscopeError
from ..common.gpus import Gpu, find_gpu, gpu_in_text, require_gpu, same_cc
from ..common.nvtx_stack import stack_from_label
from ..common.units import is_missing
from ..readers import Progress, read_metrics, report_file
from ..table.columns import ALL, FMA_CONVENTION, GROUPINGS
from ..table.counters import Missing, count_kernels
from ..table.grouping import NO_RANGE, aggregate, unprofiled
from ..table.module_tree import launches_under, module_tree
from ..table.nvtx import grouping_stack, stack_groups
from ..table.roofline import CLOCK, Ceiling, Roof, derive, run_ceilings
from ..table.summary import RunSummary, summarize
from . import cache as report_cache
from .group_cache import GroupCache
from .judgement import GpuJudgement, judge_gpu
from .meta import DeviceMeta, ReportMeta
from .over_ceiling import OverCeiling, over_ceiling


def _row_stack(row: pd.Series) -> str:
    """The stack a `group("nvtx")` row stands for (`nvtx.grouping_stack`); a row without one read
    from its label as best it can be ("" for the launches without a range)."""
    stack = row.get("nvtx_stack")
    if isinstance(stack, str):
        return stack
    label = row.get("nvtx")
    return (
        ""
        if label == NO_RANGE or not isinstance(label, str)
        else grouping_stack(stack_from_label(label))
    )


@dataclass
class Report:
    meta: ReportMeta
    # One row per launch, canonical + extra columns, derived metrics included. The frame passed in
    # is left as it is: the Report holds a new frame sharing its columns (no copy of a million
    # launches) plus its own.
    kernels: pd.DataFrame
    gpu: Gpu | None = None  # the GPU of most launches
    missing: list[Missing] = field(default_factory=list)
    # device name -> database GPU, where launches ran on several
    gpus: dict[str, Gpu | None] | None = None
    roof: Roof = CLOCK  # the roof the launches are judged against (see `against`)
    # (what they were computed from, the ceilings): the header alone asks several times
    _ceilings: tuple[tuple[object, ...], list[Ceiling]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    # where the groupings of these launches, as read_report made them, are kept (`keep_groups`),
    # with what they were made from
    _kept_groups: tuple[tuple[object, ...], GroupCache] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.kernels = with_launch_shares(self.kernels)
        if "roof" not in self.kernels and "bound" in self.kernels:
            # Stored before the hierarchical roofline: DRAM was its only memory roof.
            self.kernels["roof"] = self.kernels["bound"].where(
                self.kernels["bound"] != "memory", "dram"
            )
        if self.gpus is None and len(self.meta.gpus) > 1:  # a stored run: rebuild from its meta
            self.gpus = {g.name: find_gpu(g.database_key) for g in self.meta.gpus}

    @property
    def judged_by(self) -> Gpu | dict[str, Gpu | None] | None:
        """What each launch's ceilings come from: one GPU, or one per device name."""
        return self.gpus if self.gpus and len(self.gpus) > 1 else self.gpu

    @property
    def gpu_label(self) -> str | None:
        """The run's GPU as the run list and the diff name it: `meta.gpu` (the GPU of most
        launches), or, where launches ran on several, every one, most launches first: `NVIDIA H100
        PCIe + NVIDIA A100-...`."""
        if isinstance(self.judged_by, dict):
            return " + ".join(g.name for g in self.meta.gpus) or " + ".join(self.judged_by)
        return self.meta.gpu

    @property
    def gpu_names(self) -> list[str]:
        """Every device the launches ran on, most launches first; none where the report names no
        device."""
        named = [str(g.name) for g in self.meta.gpus]
        return named or ([str(self.meta.gpu)] if self.meta.gpu else [])

    def summary(self) -> RunSummary:
        return summarize(self.kernels)

    def ceilings(self) -> list[Ceiling]:
        """The run's ceilings, computed once per launches table, GPUs and roof: every screen and
        export asks for them, and they walk every launch."""
        basis = self._basis()
        if self._ceilings is None or any(
            a is not b for a, b in zip(self._ceilings[0], basis, strict=True)
        ):
            self._ceilings = (basis, run_ceilings(self.kernels, self.judged_by, self.roof))
        return list(self._ceilings[1])

    def keep_groups(self, groups: GroupCache | None) -> Report:
        """Take the rows of `group` from `groups` and keep them there, for these launches, GPUs and
        roof as they are now (read_report: the report its cache entry holds)."""
        self._kept_groups = None if groups is None else (self._basis(), groups)
        return self

    def _basis(self) -> tuple[object, ...]:
        """What the ceilings and groupings are computed from."""
        return (self.kernels, self.gpu, self.gpus, self.roof)

    def _group_cache(self) -> GroupCache | None:
        """Where this report's groupings are kept: none once its launches, GPUs or roof changed."""
        if self._kept_groups is None:
            return None
        basis, groups = self._kept_groups
        same = all(a is b for a, b in zip(basis, self._basis(), strict=True))
        return groups if same else None

    def against(self, roof: Roof) -> Report:
        """This report judged against another roof (datasheet, clock, measured on a node): every
        peak, % of peak, % of roof and bound derived anew; the launches, their order and meta stay
        as they are."""
        if roof == self.roof:
            return self
        return Report(
            meta=self.meta,
            kernels=ordered(derive(self.kernels, self.judged_by, roof=roof)),
            gpu=self.gpu,
            missing=self.missing,
            gpus=self.gpus,
            roof=roof,
        )

    def gpu_judgement(self) -> GpuJudgement:
        """Whose ceilings judge the launches, and whether --gpu's datasheet set any (see
        gpu_judgement.py)."""
        return judge_gpu(self.meta, self.gpu, self.judged_by, self.ceilings())

    def over_ceiling(self) -> list[OverCeiling]:
        """Launches measured above their own ceiling, one finding per kind (FLOP, DRAM). Computed
        from the launches each time, never stored in meta: judged again with another --gpu, a stored
        run says anew."""
        return over_ceiling(self.kernels, self.meta)

    def module_tree(self) -> pd.DataFrame:
        """The model's module tree from the launches' NVTX ranges, each node rolled up over its
        subtree and judged as a group is (core/table/module_tree.py)."""
        return ordered(module_tree(self.kernels, self.judged_by))

    def under_module(self, path: str) -> Report:
        """The launches a node of `module_tree()` rolls up (its `path`; "" the root), as a Report of
        their own, judged as this one is."""
        return self.only(launches_under(self.kernels, path))

    def only(self, keep: np.ndarray | pd.Series) -> Report:
        """The launches where `keep` (a boolean per launch) holds, as a Report of their own, judged
        as this one is: a module tree node's, or `check --where`'s."""
        chosen = self.kernels[np.asarray(keep, dtype=bool)].reset_index(drop=True)
        meta = replace(self.meta, launches=len(chosen))
        return Report(meta, chosen, self.gpu, self.missing, self.gpus, self.roof)

    def group(self, by: str = "name", time_order: bool = True) -> pd.DataFrame:
        """Rows per kernel name, NVTX range or launch; same columns as launches; sorted by time.

        `time_order=False` with `by="launch"` returns the launches table itself, uncopied, in launch
        order (`attrs["time_ordered"]` says which): a view that sorts on its own saves copying a
        million rows."""
        rows = self._rows(by)
        if GROUPINGS[by] is None and not time_order:
            return rows
        return in_order(rows, by_time(rows))  # the only copy, even at a million launches

    def _rows(self, by: str) -> pd.DataFrame:
        """The rows of a grouping in no particular order: the launches table itself, or the
        aggregated groups."""
        if by not in GROUPINGS:
            raise ValueError(f"group by one of {', '.join(GROUPINGS)}")
        key = GROUPINGS[by]
        return self.kernels if key is None else self._aggregated(key)

    def launches_of(self, row: pd.Series, by: str = "name") -> pd.DataFrame:
        """The launches a row of `group(by)` stands for, in launch order: itself for a launch (count
        1), else those sharing its full name (NVTX range, normalised as `group` does) and, in a file
        of several GPUs, its GPU."""
        k = self.kernels
        if (row.get("count") or 1) <= 1 or GROUPINGS.get(by) is None:
            return k[k["launch_id"] == row.get("launch_id")]
        key = GROUPINGS[by]
        if key == "nvtx":  # the launches of the row's stack, as `group` made it
            codes, stacks = stack_groups(k)
            wanted = _row_stack(row)
            hit = codes == (stacks.index(wanted) if wanted in stacks else -1)
        else:
            hit = (k[key].astype(object).fillna("") == row.get(key)).to_numpy(dtype=bool)
        if isinstance(self.judged_by, dict):
            hit = hit & (k["gpu"].astype(object) == row.get("gpu")).to_numpy(dtype=bool)
        return k[hit]

    def _aggregated(self, key: str) -> pd.DataFrame:
        several = isinstance(self.judged_by, dict)  # launches of one name on two GPUs are two rows
        kept = self._group_cache()
        if kept is not None and (rows := kept.load(key, several)) is not None:
            return rows
        rows = ordered(
            derive(aggregate(self.kernels, key, by_gpu=several), self.judged_by, launch_peaks=True)
        )
        rows["pct_time"] = pct_time(rows["duration_s"], self.kernels["duration_s"].sum())
        if kept is not None:
            kept.save(key, several, rows)
        return rows

    def view(
        self,
        by: str = "name",
        sort: str | None = None,
        top: int | None = None,
        descending: bool = True,
    ) -> pd.DataFrame:
        """The rows `by` a grouping, in time order (longest first, unknown last), or sorted by
        column `sort` (unknown last either way, ties in time order), the first `top` of them."""
        return in_order(*self.view_order(by, sort, top, descending))

    def view_order(
        self,
        by: str = "name",
        sort: str | None = None,
        top: int | None = None,
        descending: bool = True,
    ) -> tuple[pd.DataFrame, np.ndarray]:
        """`view` as rows and the positions it shows them in (`rows.take(order)` is the view), the
        launches table uncopied: a writer taking each chunk's rows in that order spares it a sorted
        copy of a million launches."""
        rows = self._rows(by)  # sorted once, here: the groups are not put in time order first
        order = by_time(rows)
        if sort:
            if sort not in rows:
                raise FlopscopeError(
                    f"--sort {sort}",
                    "no such column",
                    "use a canonical column name, e.g. duration_s, flop, pct_of_peak",
                )
            keys = rows[sort].take(order).reset_index(drop=True)
            ranked = keys.sort_values(
                ascending=not descending, na_position="last", kind="stable", key=_sort_key
            )
            order = order[ranked.index.to_numpy()]
        return rows, order[:top] if top else order


def by_time(rows: pd.DataFrame) -> np.ndarray:
    """The rows' positions by time taken, longest first, unknown last (ties as they are)."""
    duration = rows["duration_s"].to_numpy(dtype=float)
    return np.argsort(np.where(np.isnan(duration), np.inf, -duration), kind="stable")


def in_order(rows: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """`rows` at positions `order`, as a table of its own (`view_order`'s rows and order: the
    view)."""
    out = rows.take(order)
    out.index = pd.RangeIndex(len(out))
    # the engine ordered it (the app's table sorts launch-order frames itself)
    out.attrs["time_ordered"] = True
    return out


def with_launch_shares(kernels: pd.DataFrame) -> pd.DataFrame:
    """`kernels` with per-launch `count` (1) and `pct_time`, so the launches table is a finished
    view by itself. A shallow copy: the caller's frame keeps its columns, and the new one shares
    theirs instead of copying."""
    out = kernels.copy(deep=False)
    out["count"] = 1
    out["not_profiled"] = unprofiled(out).astype(np.int64)
    out["pct_time"] = pct_time(out["duration_s"], out["duration_s"].sum())
    out.attrs["time_ordered"] = False
    return out


def pct_time(duration: pd.Series, total: float) -> pd.Series | float:
    """Each row's share of the run's kernel time `total`, in %; NaN when the run took no (known)
    time."""
    return 100.0 * duration / total if total else np.nan


def _sort_key(col: pd.Series) -> pd.Series:
    """Text sorts A-Z (categorical names would otherwise sort in order of first appearance)."""
    return col.astype(str) if isinstance(col.dtype, pd.CategoricalDtype) else col


def ordered(df: pd.DataFrame) -> pd.DataFrame:
    """Canonical columns first, in their order, then extras; internal columns last."""
    names = [n for n, _, _ in ALL]
    rest = [c for c in df.columns if c not in names]
    # One reindex: the absent canonical columns come as NaN and every column in order in one pass
    # (added one at a time they fragmented the frame: pandas warns past a hundred).
    return df.reindex(columns=names + rest)


def read_report(
    path: str | Path,
    gpu: str | None = None,
    params: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> Report:
    """Read any ncu output (detected by content) into a Report with derived metrics.
    `progress(launches read, launches in all)` is called as a .ncu-rep is read (a plain callback:
    the CLI and the app draw it)."""
    path = report_file(path)  # a run folder: its report.ncu-rep, which meta.source then names
    entry = report_cache.entry_for(path, gpu)
    if (cached := report_cache.load(entry)) is not None:
        kernels, meta, missing, groups = cached
        meta = replace(meta, source=str(Path(path)), params=dict(params or {}))
        return Report(
            meta=meta, kernels=kernels, gpu=find_gpu(meta.gpu_database_key), missing=missing
        ).keep_groups(groups)
    metrics, reader_meta = read_metrics(path, progress)
    counted = count_kernels(metrics)
    k = counted.kernels
    devices = _devices(k, metrics)
    collected = tuple(sorted(c for c in metrics.columns if "__" in c))
    del metrics  # at 1M launches ~0.5 GB that derive's new columns reuse: it set the peak
    device_name = next(iter(devices), None)  # the GPU of most launches
    ccs = {str(c) for c in pd.unique(k["cc"].dropna())}
    device_cc = {name: _most_common(k.loc[k["gpu"] == name, "cc"]) for name in devices}
    own = {name: find_gpu(name, sms) for name, (sms, _) in devices.items()}
    # the launches of --gpu's compute capability get its ceilings; the others keep theirs
    if gpu and len(devices) > 1:
        specs = _datasheets(gpu, device_cc, own, path)
        assert device_name is not None  # devices is not empty
        spec = specs[device_name]
        source = "--gpu" if _chosen(specs, own) else "report"
    elif gpu:  # replaces the ceilings of every launch; the device stays the one the report names
        spec = require_gpu(gpu, ccs)
        specs = {name: spec for name in devices}
        # Naming the report's own GPU overrides nothing: the report still named it.
        source = "report" if devices and not _chosen(specs, own) else "--gpu"
    elif devices:
        specs, source = dict(own), "report"
        assert device_name is not None  # devices is not empty
        spec = specs[device_name]
    else:
        spec = gpu_in_text(reader_meta.get("preamble", ""), _most_common(k["cc"]))
        source = "program output before the CSV"
        specs = {}
    if spec is not None and not device_name:
        k["gpu"] = spec.name
    several = specs if len(specs) > 1 else None
    kernels = ordered(derive(k, several or spec))
    meta = ReportMeta(
        source=str(Path(path)),
        format=reader_meta["format"],
        reader_note=reader_meta.get("note"),
        captured=reader_meta.get("captured"),
        gpu=device_name or (spec.name if spec else None),
        # the datasheet ceilings used (of the GPU of most launches): --gpu's where given and of its
        # CC
        gpu_database_key=spec.key if spec else None,
        gpu_database_name=spec.name if spec else None,
        gpu_source=source if (spec or device_name) else None,
        gpus=tuple(
            DeviceMeta(
                name,
                sheet.key if (sheet := specs.get(name)) else None,
                device_cc[name],
                n,
                "--gpu" if name in _chosen(specs, own) else "report",
            )
            for name, (_, n) in devices.items()
        ),
        compute_capability=_most_common(k["cc"]),
        launches=len(k),
        metrics_collected=collected,
        convention=FMA_CONVENTION,
        params=dict(params or {}),
    )
    report = Report(meta=meta, kernels=kernels, gpu=spec, missing=counted.missing, gpus=several)
    return report.keep_groups(report_cache.save(entry, report.kernels, report.meta, report.missing))


def _datasheets(
    gpu: str, ccs: dict[str, object], own: dict[str, Gpu | None], where: object
) -> dict[str, Gpu | None]:
    """Device name -> the database GPU whose ceilings judge its launches, under `--gpu NAME` in a
    file (`where`) with launches on several GPUs: NAME for the devices of its compute capability,
    each other device its own (one architecture's datasheet says nothing of another's). Refused
    where NAME fits no device."""
    spec = require_gpu(gpu)
    fits = {
        name for name, cc in ccs.items() if is_missing(cc) or same_cc(cc, spec.compute_capability)
    }
    if not fits:
        ran = ", ".join(f"{name} (CC {cc})" for name, cc in ccs.items())
        raise FlopscopeError(
            where,
            f"--gpu {gpu} is {spec.name} (CC {spec.compute_capability}), but the launches ran on"
            f" {ran}",
            "name a GPU of one of those compute capabilities (`flopscope gpus` lists "
            "them): its launches get that GPU's ceilings, the others keep their own",
        )
    return {name: spec if name in fits else own[name] for name in ccs}


def _chosen(specs: dict[str, Gpu | None], own: dict[str, Gpu | None]) -> set[str]:
    """The devices whose ceilings --gpu changed (naming a device's own GPU changes nothing)."""
    return {
        name
        for name, gpu in specs.items()
        if getattr(gpu, "key", None) != getattr(own.get(name), "key", None)
    }


def _devices(k: pd.DataFrame, metrics: pd.DataFrame) -> dict[str, tuple[int | None, int]]:
    """Device name -> (SM count, launches), most launches first."""
    names = k["gpu"].astype(object)
    counts = names.value_counts(sort=True)
    sms_col = metrics.get("device__attribute_multiprocessor_count")
    out = {}
    for name, n in counts.items():
        sms = _most_common(sms_col[(names == name).to_numpy()]) if sms_col is not None else None
        out[str(name)] = (int(sms) if sms else None, int(n))
    return out


def _most_common(s: pd.Series) -> Any:  # a cell of `s`, as pandas holds it
    s = s.dropna()
    if s.empty:
        return None
    value = s.mode().iloc[0]
    return None if is_missing(value) else value


def with_gpu(report: Report, gpu: str) -> Report:
    """A report already read (a stored run, a sweep point) judged against `--gpu`'s datasheet
    ceilings, as `read_report(path, gpu=...)` would have judged it: refused the same way (unknown
    name, another compute capability), and on several GPUs given to the launches of its compute
    capability only. The devices the report names stay its devices."""
    k = report.kernels.copy()
    named = report.meta.gpus
    # Each device's own GPU: the one its name found, not one an earlier --gpu put in its place.
    own = {
        g.name: (
            find_gpu(g.name)
            if (g.gpu_source or report.meta.gpu_source) == "--gpu"
            else find_gpu(g.database_key)
        )
        for g in named
    }
    if len(named) > 1:
        specs = _datasheets(
            gpu, {g.name: g.compute_capability for g in named}, own, report.meta.source
        )
        spec = specs[named[0].name]
        device = report.meta.gpu
    else:
        spec = require_gpu(gpu, {str(c) for c in pd.unique(k["cc"].dropna())})
        specs = {g.name: spec for g in named}
        if not named:  # no device name in the file: --gpu names the GPU, as in read_report
            k["gpu"] = spec.name
        device = report.meta.gpu if named else spec.name
    chosen = _chosen(specs, own)
    devices = tuple(
        replace(
            g,
            database_key=getattr(specs[g.name], "key", None),
            gpu_source="--gpu" if g.name in chosen else "report",
        )
        for g in named
    )
    several = specs if len(named) > 1 else None
    meta = replace(
        report.meta,
        gpu=device,
        gpu_database_key=getattr(spec, "key", None),
        gpu_database_name=getattr(spec, "name", None),
        gpu_source="report" if named and not chosen else "--gpu",
        gpus=devices,
    )
    return Report(
        meta=meta,
        kernels=ordered(derive(k, several or spec)),
        gpu=spec,
        missing=report.missing,
        gpus=several,
    )
