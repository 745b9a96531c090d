"""The roofline: derived columns per launch or group (rates, intensities, the ceiling each row is
judged against, %Peak, %Roof, Bound) and the ceilings a run is judged against (run_summary.py adds
the run's figures).

`derive` works on launches and on grouped rows alike, so every view shows numbers computed the same
way."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..common.gpus import Gpu
from .columns import SIMT_FLOP, TENSOR_TYPES
from .metric_values import float_blocks

SIMT = tuple(c.removeprefix("flop_") for c in SIMT_FLOP)
# Candidate precisions for the ceiling: (name, FLOP column, GPU database ceiling).
PRECISIONS = [(p, f"flop_{p}", p) for p in SIMT] + [
    (f"tensor_{d}", f"flop_tensor_{d}", f"tensor_{d}") for d in TENSOR_TYPES
]


# the hierarchical roofline's bandwidth ceilings, outermost first
MEMORY_LEVELS = ("dram", "l2", "l1")

# The database GPU of a table's launches: one for all of them, or one per device name (the `gpu`
# column) for a file that holds launches on several GPUs.
Gpus = Gpu | Mapping[str, Gpu | None] | None


def gpu_rows(k: pd.DataFrame, gpus: Gpus) -> list[tuple[np.ndarray | None, Gpu | None, str]]:
    """(rows, database GPU, device name) per GPU of the table; rows None means all of them, so the
    usual file of one GPU costs no per-row work."""
    if gpus is None or isinstance(gpus, Gpu):
        return [(None, gpus, "")]
    if len(gpus) <= 1:
        return [(None, g, name) for name, g in gpus.items()] or [(None, None, "")]
    return [
        ((k["gpu"] == name).to_numpy(dtype=bool, na_value=False), g, name)
        for name, g in gpus.items()
    ]


def _div(a: pd.Series, b: pd.Series) -> pd.Series:
    """a / b, unknown where b is 0."""
    return pd.Series(_ratio(_floats(a), _floats(b)), index=a.index)


def _floats(values: pd.Series) -> np.ndarray:
    """A column as float64 numbers (NaN where missing)."""
    floats: np.ndarray = values.to_numpy(dtype=float, na_value=np.nan)
    return floats


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):  # inf / inf, huge / tiny: as pandas
        ratio: np.ndarray = a / np.where(b != 0, b, np.nan)
    return ratio


def intensity(flop: pd.Series, nbytes: pd.Series) -> pd.Series:
    """FLOP per byte. FLOPs over zero bytes (a kernel working in cache or registers) are infinitely
    intense: compute bound, its roof the compute peak. 0 FLOP over 0 bytes says nothing (NaN)."""
    f, b = _floats(flop), _floats(nbytes)
    return pd.Series(np.where((b == 0) & (f > 0), np.inf, _ratio(f, b)), index=flop.index)


def total_flop(k: pd.DataFrame) -> pd.Series:
    """SIMT + tensor FLOPs.

    Unknown work leaves the total unknown: a precision whose add/mul/fma counters were not all
    collected, or tensor work without its counter. A total without it is the undercount this tool
    exists to prevent (the missing counters are reported with their ncu option). Counted tensor work
    is the exception: with SIMT counters absent, the total is the tensor FLOPs plus the SIMT FLOPs
    that were counted (a GEMM's epilogue is noise next to its MMAs); the row says so."""
    simt = k[list(SIMT_FLOP)]
    tensor = k["flop_tensor"]
    known = simt.sum(axis=1, skipna=False) + tensor
    beside_tensor = simt.sum(axis=1) + tensor
    return known.fillna(beside_tensor.where(tensor > 0))


# A precision is named in a row's `precision` when it takes at least this share of the row's time at
# peak.
NAMED_SHARE = 0.1
# peak_source, by code
SOURCES = ["", "report", "datasheet", "datasheet @ measured clock", "measured on node"]

# The three roofs a kernel can be judged against: its key, and what it is, as screens
# name it.
ROOFS = {
    "clock": "theoretical at the measured clock",
    "datasheet": "datasheet",
    "measured": "measured on this node",
}


@dataclass(frozen=True)
class Roof:
    """Which roof judges the launches. `clock` (the default): the report's peak counters x the
    measured clock, else the datasheet scaled to the measured SM clock. `datasheet`: NVIDIA's
    figures as quoted (no datasheet gives cache bandwidth: L2/L1 keep the report's peaks).
    `measured`: what `flopscope ceilings` reached on a node (`measured`: ceiling name -> value, for
    the launches on device `gpu`, all where empty; `others`: the same for the file's other GPUs); a
    ceiling it did not measure (FP16 SIMT, L1, ...) stays the clock roof's, and its source says
    so."""

    kind: str = "clock"
    # fp32, tensor_bf16, dram, l2 -> FLOP/s or B/s
    measured: Mapping[str, float] = field(default_factory=dict)
    gpu: str = ""
    # the run-level ceilings' source: where and when they were measured
    source: str = "measured on node"
    # a file of several GPUs: the measured roof of each other GPU that has one
    others: tuple[Roof, ...] = ()

    def rows(self, k: pd.DataFrame) -> np.ndarray:
        """The rows the measured values judge (none for another kind)."""
        if self.kind != "measured":
            return np.zeros(len(k), dtype=bool)
        if not self.gpu or "gpu" not in k:
            return np.ones(len(k), dtype=bool)
        rows: np.ndarray = (k["gpu"].astype(object) == self.gpu).to_numpy(dtype=bool)
        return rows

    def per_row(self, k: pd.DataFrame, name: str) -> np.ndarray:
        """The measured ceiling `name` of every row, from the roof of the GPU it ran on (NaN: none
        measured)."""
        out = np.full(len(k), np.nan)
        for part in (self, *self.others):
            if part.measured.get(name):
                out[part.rows(k)] = part.measured[name]
        return out

    def of_gpu(self, name: str) -> Roof | None:
        """The measured roof judging the launches on device `name` (None: no measured ceilings for
        it)."""
        if self.kind != "measured":
            return None
        return next(
            (part for part in (self, *self.others) if not part.gpu or part.gpu == name), None
        )


CLOCK = Roof()


def precision_peaks(
    k: pd.DataFrame, gpus: Gpus, columns: list[int], roof: Roof = CLOCK
) -> tuple[np.ndarray, np.ndarray]:
    """The ceiling (FLOP/s, NaN where unknown) and its source code (SOURCES) of every row for the
    PRECISIONS at `columns`, under `roof`. The clock roof: the report's own peak counters (peak per
    cycle x measured clock) win; the datasheet fills the rest, its compute peaks scaled from the
    clock they are quoted at (the boost clock; Hopper's tensor peaks: its lower tensor clock) to the
    measured SM clock, so both agree on the clock. The measured roof: its values first, then as the
    clock roof. The datasheet roof: as quoted."""
    peak = np.full((len(k), len(columns)), np.nan)
    source = np.zeros(peak.shape, dtype=np.int8)
    for j, i in enumerate(columns):
        value = roof.per_row(k, PRECISIONS[i][0])
        measured = ~np.isnan(value)
        peak[measured, j], source[measured, j] = value[measured], 4
        col = f"report_peak_{PRECISIONS[i][0]}_flop_per_s"
        if col in k and roof.kind != "datasheet":
            values = k[col].to_numpy(dtype=float, na_value=np.nan)
            has = ~np.isnan(values) & np.isnan(peak[:, j])
            peak[has, j], source[has, j] = values[has], 1
    for rows, gpu, _ in gpu_rows(k, gpus):
        if gpu is None:
            continue
        for j, i in enumerate(columns):
            quoted = gpu.peak(PRECISIONS[i][2])
            take = np.isnan(peak[:, j]) if rows is None else np.isnan(peak[:, j]) & rows
            if not math.isnan(quoted) and take.any():
                scale = (
                    _clock_scale(k, gpu.clock_hz(PRECISIONS[i][2]))
                    if roof.kind != "datasheet"
                    else np.ones(len(k))
                )
                peak[take, j] = quoted * scale[take]
                source[take, j] = np.where(scale[take] != 1.0, 3, 2)
    return peak, source


def judge(
    k: pd.DataFrame, gpus: Gpus, roof: Roof = CLOCK
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """(precision, peak FLOP/s, peak source) per row.

    A row that ran several precisions is judged against the FLOP-weighted harmonic mean of their
    peaks, peak = F / sum_p(F_p / peak_p): % of peak is then the time the FLOPs need at peak over
    the time they took (for one precision, FLOP/s over its peak). A precision without a ceiling is
    left out of the mean (its FLOPs are taken at the others' rate); if the precision with most FLOPs
    has none, the peak is unknown. A row without FLOPs is held against the FP32 peak (0% of it)."""
    cols = [c for _, c, _ in PRECISIONS]
    fp32 = cols.index("flop_fp32")
    # Few precisions ran, over a million rows: only their columns are kept, read one at a time.
    used, ran = [], []
    for j, col in enumerate(cols):
        values = k[col].to_numpy(dtype=float, na_value=np.nan)
        if j == fp32 or (values > 0).any():
            used.append(j)
            ran.append(values)
    flops = np.nan_to_num(np.column_stack(ran), nan=0.0)
    peaks, sources = precision_peaks(k, gpus, used, roof)
    rows = np.arange(len(k))
    did = flops.max(axis=1, initial=0.0) > 0
    dominant = np.where(did, flops.argmax(axis=1), used.index(fp32))
    ran = (flops > 0) & ~np.isnan(peaks)
    time = np.where(ran, flops / np.where(ran, peaks, 1.0), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        peak = np.where(
            did, np.where(ran, flops, 0.0).sum(axis=1) / time.sum(axis=1), peaks[rows, dominant]
        )
    peak[np.isnan(peaks[rows, dominant])] = np.nan
    ran[~did, dominant[~did]] = ~np.isnan(peak[~did])
    names = [PRECISIONS[i][0] for i in used]
    # what judges the row: time at peak, else FLOPs
    weight = np.where(np.isnan(peak)[:, None], flops, time)
    bits = np.bitwise_or.reduce(np.left_shift(1, sources.astype(np.int64)) * ran, axis=1)
    return (
        _label(weight, did, names, k.index),
        pd.Series(peak, index=k.index),
        _combined_sources(bits, k.index),
    )


def _label(weight: np.ndarray, did: np.ndarray, names: list[str], index: pd.Index) -> pd.Series:
    """'fp32', or 'fp64+fp32' where several precisions each take NAMED_SHARE of the weight, largest
    first."""
    total = weight.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, weight / total, 0.0)
    order = np.argsort(-share, axis=1, kind="stable")
    key = np.zeros(len(weight), dtype=np.int64)
    base = len(names) + 1
    for pos in range(len(names)):
        j = order[:, pos]
        named = (share[np.arange(len(weight)), j] >= NAMED_SHARE) | (pos == 0)
        key = np.where(named & did, key * base + j + 1, key)
    keys, codes = np.unique(key, return_inverse=True)
    labels = [_decode(int(v), base, names) for v in keys]
    return pd.Series(
        pd.Categorical.from_codes(codes.reshape(-1), categories=pd.Index(labels, dtype=object)),
        index=index,
    )


def _decode(key: int, base: int, names: list[str]) -> str:
    parts = []
    while key:
        key, j = divmod(key, base)
        parts.append(names[j - 1])
    return "+".join(reversed(parts))


def _combined_sources(bits: np.ndarray, index: pd.Index) -> pd.Series:
    combos, codes = np.unique(bits, return_inverse=True)
    labels = [" + ".join(s for i, s in enumerate(SOURCES) if i and int(c) >> i & 1) for c in combos]
    return pd.Series(
        pd.Categorical.from_codes(codes.reshape(-1), categories=pd.Index(labels, dtype=object)),
        index=index,
    )


def dram_ceiling(k: pd.DataFrame, gpus: Gpus, roof: Roof = CLOCK) -> pd.Series:
    """The report's DRAM peak where collected, else the datasheet's; the measured roof's where it
    has one, the datasheet's only under the datasheet roof."""
    dram = (
        k["report_peak_dram_bytes_per_s"].astype(float)
        if "report_peak_dram_bytes_per_s" in k and roof.kind != "datasheet"
        else pd.Series(np.nan, index=k.index)
    )
    measured = roof.per_row(k, "dram")
    dram = dram.mask(~np.isnan(measured), pd.Series(measured, index=k.index))
    for rows, gpu, _ in gpu_rows(k, gpus):
        if gpu is not None and not math.isnan(gpu.dram_bytes_per_s):
            fill = dram.isna() if rows is None else dram.isna() & rows
            dram[fill] = gpu.dram_bytes_per_s
    return dram


def _clock_scale(k: pd.DataFrame, reference_hz: float) -> np.ndarray:
    """Measured SM clock over the clock a datasheet peak is quoted at; 1 where either is unknown."""
    if "sm_clock_hz" not in k or not reference_hz or math.isnan(reference_hz):
        return np.ones(len(k))
    clock: np.ndarray = k["sm_clock_hz"].to_numpy(dtype=float, na_value=np.nan)
    return np.nan_to_num(clock / reference_hz, nan=1.0)


def derive(
    k: pd.DataFrame, gpu: Gpus, launch_peaks: bool = False, roof: Roof = CLOCK
) -> pd.DataFrame:
    """Add flop, rates, intensities, ceilings, % of peak/roof and bound to a table of raw columns,
    judged against `roof` (the clock roof unless another is chosen).

    `launch_peaks`: the rows are groups that carry their launches' duration-weighted ceilings; keep
    them, so a group's % of peak is its FLOPs over sum(duration x peak) of its launches, as for the
    whole run."""
    # copy-on-write: the caller's frame keeps its columns, none is copied
    k = finite(k.copy(deep=False))
    k["flop"] = total_flop(k)
    dur = k["duration_s"]
    k["flop_per_s"] = _div(k["flop"], dur)
    k["dram_bytes_per_s"] = _div(k["dram_bytes"], dur)
    for level in MEMORY_LEVELS:
        k[f"ai_{level}"] = intensity(k["flop"], k[f"{level}_bytes"])
    k["precision"], peak, source = judge(k, gpu, roof)
    # judged by no FLOP ceiling: precision, % of peak, % of roof and bound stay empty
    integer = integer_mma(k)
    if integer.any():
        k["precision"] = _blank_where(k["precision"], integer)
    if not launch_peaks:
        k["peak_flop_per_s"], k["peak_source"] = peak.mask(integer), _blank_where(source, integer)
        k["peak_dram_bytes_per_s"] = dram_ceiling(k, gpu, roof)
        # no datasheet gives cache bandwidth: the report's peak counters or none
        for level in MEMORY_LEVELS[1:]:
            k[f"peak_{level}_bytes_per_s"] = k.get(f"report_peak_{level}_bytes_per_s", np.nan)
            measured = roof.per_row(k, level)
            if not np.isnan(measured).all():
                k[f"peak_{level}_bytes_per_s"] = pd.Series(
                    k[f"peak_{level}_bytes_per_s"], index=k.index, dtype=float
                ).mask(~np.isnan(measured), pd.Series(measured, index=k.index))
    at_peak = _seconds_at_peak(k)
    # The roof is the lowest ceiling: compute, or a memory level's intensity x its bandwidth, which
    # is the FLOPs over the time the level's bytes need at its peak (the slowest level's is the
    # lowest). A cache level whose bytes or peak are unknown sets none; without the DRAM roof or the
    # compute peak there is no roof.
    lowest = np.fmin(k["peak_flop_per_s"], k["flop"].astype(float) / at_peak.max(axis=1))
    k["attainable_flop_per_s"] = lowest.where(
        k["ai_dram"].notna() & k["peak_dram_bytes_per_s"].notna() & k["peak_flop_per_s"].notna()
    )
    k["pct_of_peak"] = 100.0 * _div(k["flop_per_s"], k["peak_flop_per_s"])
    k["bound"], k["roof"], judged = _bound(k, at_peak)
    # % of roof: the time the limiting resource (the roof) needs at its peak, over the time taken.
    # With FLOPs, that is FLOP/s over the attainable FLOP/s; without (a copy, a fill, a cast), the
    # bandwidth reached at the limiting memory level over that level's peak: the number that matters
    # for them.
    needed = pd.Series(
        np.fmax(
            (k["flop"] / k["peak_flop_per_s"]).to_numpy(dtype=float),
            at_peak.max(axis=1).to_numpy(dtype=float),
        ),
        index=k.index,
    )
    k["pct_of_roof"] = (100.0 * _div(needed, dur)).where(judged)
    return finite(k)


def _blank_where(labels: pd.Series, rows: pd.Series) -> pd.Series:
    """Categorical `labels` with "" at `rows`, its categories the labels it holds, sorted (as
    `astype("category")` makes them): worked on the categories, not on a Python object per row."""
    labels = labels.astype("category")
    if rows.any() and "" not in labels.cat.categories:
        labels = labels.cat.add_categories("")
    labels = labels.mask(rows, "").cat.remove_unused_categories()
    return labels.cat.reorder_categories(sorted(labels.cat.categories))


def finite(k: pd.DataFrame) -> pd.DataFrame:
    """`k` with ±inf as unknown (NaN) in every float column but the intensities (FLOPs over 0 bytes
    are infinitely intense, and say so). The readers refuse non-finite and absurd counters, but
    arithmetic on sane ones can still overflow (bytes over a duration of 1e-300 s): an infinite rate
    is no measurement, and a table or JSON must not show one as if it were."""
    floats = [
        col
        for col, dtype in k.dtypes.items()
        if dtype == np.float64 and not str(col).startswith("ai_")
    ]
    for chunk, block in float_blocks(k, floats):
        for col in itertools.compress(chunk, np.isinf(block).any(axis=0)):
            values = k[col].to_numpy()
            k[col] = np.where(np.isinf(values), np.nan, values)
    return k


def _seconds_at_peak(k: pd.DataFrame) -> pd.DataFrame:
    """Per memory level, the time the row's bytes there need at the level's peak (NaN where either
    is unknown)."""
    return pd.DataFrame(
        {
            level: k[f"{level}_bytes"] / k.get(f"peak_{level}_bytes_per_s", np.nan)
            for level in MEMORY_LEVELS
        },
        index=k.index,
        dtype=float,
    )


def integer_mma(k: pd.DataFrame) -> pd.Series:
    """True for rows whose work is integer tensor-core MMA (IMMA, no floating-point MMA):
    counters.py's `integer_mma`, absent (all False) in a run stored before it existed."""
    if "integer_mma" not in k:
        return pd.Series(False, index=k.index)
    if k["integer_mma"].dtype == bool:  # as counted; a stored run's may hold nulls
        return k["integer_mma"]
    values = k["integer_mma"]
    # no fillna on objects: pandas 2.x warns of a downcast
    return values.notna() & values.astype(object).eq(True)


def _bound(k: pd.DataFrame, at_peak: pd.DataFrame) -> tuple[pd.Series, pd.Series, np.ndarray]:
    """(bound, roof, where bound is known) by the time each resource needs at its peak: compute
    where the FLOPs need at least as long as any memory level's bytes (the ridge included), else
    memory; the roof names the level whose bytes need longest (DRAM on a tie), or compute. For
    kernels with FLOPs that is the lowest ceiling of the roofline; for those without, still the
    level that limits them. Empty where the compute peak or DRAM's time is unknown, and where
    nothing is done (no FLOPs, no bytes at any level)."""
    at_peak = at_peak.to_numpy()
    longest = np.where(np.isnan(at_peak), -np.inf, at_peak)
    level = (
        np.array(MEMORY_LEVELS, dtype=object)[longest.argmax(axis=1)]
        if len(k)
        else np.array([], dtype=object)
    )
    compute = (k["flop"] / k["peak_flop_per_s"]).to_numpy(dtype=float)
    slowest = longest.max(axis=1, initial=-np.inf)
    # Not attainable_flop_per_s's notna: a launch with no FLOPs and no DRAM bytes has no DRAM
    # intensity (0/0), yet one that streams through L2 (a thrust fill on the H100, 1.4 MB) is
    # L2-bound all the same.
    known = ~np.isnan(at_peak[:, 0]) & ~np.isnan(compute) & ((compute > 0) | (slowest > 0))
    memory = known & (slowest > compute)
    bound = _BOUNDS[known.astype(np.int8) + memory]  # the three texts shared, not one made per row
    return (
        pd.Series(bound, index=k.index, dtype=object),
        pd.Series(np.where(memory, level, bound), index=k.index, dtype=object),
        known,
    )


_BOUNDS = np.array(["", "compute", "memory"], dtype=object)  # by known + memory


@dataclass
class Ceiling:
    name: str  # fp32, tensor_bf16, dram, ...
    value: float  # FLOP/s or B/s
    source: str
    gpu: str = ""  # the device it belongs to, in a file with launches on several GPUs
    sm_clock_hz: float = math.nan  # the SM clock a FLOP ceiling is taken at (NaN: none known)
    clock: str = ""  # which clock that is (CLOCKS); "" for a bandwidth ceiling

    @property
    def bandwidth(self) -> bool:
        """A memory level's ceiling (B/s), not a precision's (FLOP/s)."""
        return self.name in MEMORY_LEVELS


def run_ceilings(k: pd.DataFrame, gpus: Gpus, roof: Roof = CLOCK) -> list[Ceiling]:
    """The ceilings a run is judged against under `roof`: FP32, FP64, every precision it used, and
    DRAM; per GPU where the launches ran on several (each from that GPU's launches)."""
    out = []
    for rows, gpu, name in gpu_rows(k, gpus):
        part = k if rows is None else k[rows]
        measured = roof.of_gpu(name) or Roof("datasheet" if roof.kind == "datasheet" else "clock")
        out += [dataclasses.replace(c, gpu=name) for c in _ceilings(part, gpu, measured)]
    return out


REPORT_SOURCE = "report counters x measured clock"
# The clock a run's FLOP ceiling is taken at (Ceiling.clock): one per GPU, so that ceilings from the
# report's counters and from the datasheet stand side by side at the same clock.
CLOCKS = {
    "run": "the launches' measured SM clock, time-weighted",
    "datasheet": "the clock the datasheet quotes",
    "node": "as measured on the node",
}


def run_clock(k: pd.DataFrame) -> float:
    """The run's SM clock: the launches' measured clocks weighted by their time (NaN where none is
    known). A run's FLOP ceilings are all taken at it; each launch is judged at its own."""
    return _weighted(k, "sm_clock_hz")


def _ceilings(k: pd.DataFrame, gpu: Gpu | None, roof: Roof) -> list[Ceiling]:
    used = [
        p
        for p, col, _ in PRECISIONS
        if col in k and (k[col].to_numpy(dtype=float, na_value=np.nan) > 0).any()
    ]
    names = list(dict.fromkeys(["fp32", "fp64", *used]))
    clock = run_clock(k) if roof.kind != "datasheet" else math.nan
    out = []
    for name in names:
        value, source, at = roof.measured.get(name) or math.nan, roof.source, "node"
        if math.isnan(value) and roof.kind != "datasheet":
            value, source, at = _report_peak(k, name, clock), REPORT_SOURCE, "run"
        if math.isnan(value) and gpu is not None:
            value, source, at = _datasheet_at(gpu, name, clock)
        if not math.isnan(value):
            hz = clock if at == "run" else math.nan
            out.append(Ceiling(name, value, source, sm_clock_hz=hz, clock=at))
    dram, source = roof.measured.get("dram") or math.nan, roof.source
    if math.isnan(dram) and roof.kind != "datasheet":
        dram, source = _weighted(k, "report_peak_dram_bytes_per_s"), REPORT_SOURCE
    if math.isnan(dram) and gpu is not None:
        dram, source = gpu.dram_bytes_per_s, f"datasheet ({gpu.name})"
    if not math.isnan(dram):
        out.append(Ceiling("dram", dram, source))
    for level in MEMORY_LEVELS[1:]:
        value, source = roof.measured.get(level) or math.nan, roof.source
        if math.isnan(value):
            value, source = _weighted(k, f"report_peak_{level}_bytes_per_s"), REPORT_SOURCE
        if not math.isnan(value):
            out.append(Ceiling(level, value, source))
    return out


def _report_peak(k: pd.DataFrame, name: str, clock: float) -> float:
    """The report's peak counter for precision NAME at the run's clock: its peak per cycle (peak
    over the launch's clock, time-weighted) x that clock; without clocks, the counters'
    time-weighted mean."""
    col = f"report_peak_{name}_flop_per_s"
    if col not in k or "sm_clock_hz" not in k or math.isnan(clock):
        return _weighted(k, col)
    per_cycle = _weighted_values(
        k[col].astype(float) / k["sm_clock_hz"].astype(float), k["duration_s"]
    )
    return per_cycle * clock if not math.isnan(per_cycle) else _weighted(k, col)


def datasheet_peak(k: pd.DataFrame, gpu: Gpu, name: str) -> tuple[float, str]:
    """(FLOP/s, source) of GPU's datasheet ceiling NAME for launches K: scaled from the clock it is
    quoted at to the run's clock, as every run-level datasheet ceiling is (NaN where GPU has
    none)."""
    return _datasheet_at(gpu, name, run_clock(k))[:2]


def _datasheet_at(gpu: Gpu, name: str, clock: float) -> tuple[float, str, str]:
    """(FLOP/s, source, Ceiling.clock) of a datasheet peak at `clock` (NaN: as quoted)."""
    quoted = gpu.clock_hz(name)
    if math.isnan(clock) or not quoted or math.isnan(quoted):
        return gpu.peak(name), f"datasheet ({gpu.name})", "datasheet"
    return gpu.peak(name) * clock / quoted, f"datasheet ({gpu.name}) @ measured clock", "run"


def _weighted(k: pd.DataFrame, col: str) -> float:
    """The time-weighted mean of `col` over the launches that have it and a time."""
    if col not in k:
        return math.nan
    return _weighted_values(k[col], k["duration_s"])


def _weighted_values(values: pd.Series, duration: pd.Series) -> float:
    keep = values.notna() & duration.notna()
    if not keep.any():
        return math.nan
    # two columns, not every row of the frame copied
    values, duration = values[keep], duration[keep]
    weight = duration.sum()
    return float((values * duration).sum() / weight) if weight else float(values.mean())
