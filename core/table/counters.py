"""ncu counters -> the canonical raw columns of the kernels table, with provenance for every number.

Rules (DESIGN.md, "FLOP and byte accounting"): counts come from `.sum` counters; rate forms are
converted with the launch's own cycles or duration and say so; FMA counts as 2 FLOPs; tensor FLOPs
come from the `sm__ops_path_tensor_*` counters, and from instruction counts only as a flagged
estimate."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..common.units import is_missing
from ..ncu.catalogue import (
    ASK_FOR_TENSOR_COUNTERS,
    WHICH_TENSOR_COUNTERS,
    by_accumulator,
    tensor_counters_for,
    uncovered,
)
from ..ncu.metrics import (
    COLUMN_METRICS,
    INSIGHT,
    INSTRUCTION_MIX,
    MEMORY_CHART,
    MODIFIER_METRIC,
    OCCUPANCY_LIMITS,
    OPCODE_METRIC,
    PC_SAMPLES,
    PRECISION_LETTER,
    RATE_FORMS,
)
from ..readers.wanted import objects
from .columns import COLLECTED, SIMT_FLOP, TENSOR_TYPES
from .metric_values import (
    MetricValues,
    all_of,
    any_of,
    first_known,
    where_known,
    zero_filled,
)
from .names import distinct_short_names
from .nvtx import stack_columns

FMA_WEIGHTS = {"add": 1.0, "mul": 1.0, "fma": 2.0}  # FMA = 2 FLOPs, everywhere
# FLOPs per counted thread instruction. The half counters count HFMA2/HADD2/HMUL2 thread
# instructions, two lanes each, so weights double, as in ncu's own half roofline (hfma x4, hadd x2,
# hmul x2); with these the hfma peak counter gives the datasheet FP16 peaks (H100 SXM: 128/SM/cycle
# x 4 x 132 SMs x 1.98 GHz = 133.8 TFLOP/s). A scalar HFMA also issues as one (one-lane) instruction
# and is then counted twice over.
OP_WEIGHTS = {"d": FMA_WEIGHTS, "f": FMA_WEIGHTS, "h": {op: 2 * w for op, w in FMA_WEIGHTS.items()}}
# SASS opcodes by precision with FLOPs per thread instruction (packed x2 forms do two lanes).
OPCODE_FLOPS = {
    "fp64": {"DADD": 1, "DMUL": 1, "DFMA": 2},
    "fp32": {
        "FADD": 1,
        "FMUL": 1,
        "FFMA": 2,
        "FADD32I": 1,
        "FMUL32I": 1,
        "FFMA32I": 2,
        "FADD2": 2,
        "FMUL2": 2,
        "FFMA2": 4,
    },
    "fp16": {"HADD": 1, "HMUL": 1, "HFMA": 2, "HADD2": 2, "HMUL2": 2, "HFMA2": 4},
}
TENSOR_DTYPES = ("fp64", "tf32", "fp16", "bf16", "fp8", "fp6", "fp4")
# Data types whose MMAs may accumulate in FP16, at twice the FP32-accumulate rate on GeForce: their
# FP16- accumulate FLOPs get columns (and ceilings) of their own, `flop_tensor_fp16_acc16`.
ACC16 = ("fp16", "fp8")
# FLOPs per warp-level tensor instruction, checked against 2*M*N*K on real data before being listed:
# Volta HMMA.884 (V100 CUTLASS 20480^3 GEMM: 33,554,432,000 instructions = 2*20480^3 / 512). Volta
# tensor cores do FP16 only, so the estimate also names its data type. The check was an
# FP32-accumulate GEMM (s884gemm): FP16-accumulate HMMA.884 may do more FLOPs per instruction, and
# the estimate says so.
VOLTA_CHECK = "512 FLOP/instruction, checked on Volta HMMA.884 with FP32 accumulate only"
TENSOR_FLOP_PER_INST = {"7.0": (512.0, "fp16", VOLTA_CHECK), "7.2": (512.0, "fp16", VOLTA_CHECK)}

RATE = "derived from rates"
SECTOR_BYTES = 32  # ncu's L1/L2 sector


@dataclass
class Missing:
    """A canonical column ncu did not collect for some launches, and the ncu metrics that fill
    it."""

    column: str
    metrics: list[str]
    launches: int
    why: str = "not collected"  # what is wrong with the column for those launches
    detail: str = ""  # and why

    def fix(self) -> str:
        return "ncu --metrics " + ",".join(self.metrics)

    def problem(self) -> str:
        return f"{self.column} {self.why} for {self.launches} launch(es)" + (
            f" ({self.detail})" if self.detail else ""
        )

    def as_dict(self) -> dict[str, str | int]:
        """As `--json` and exports list it in meta's `missing`: the column, its launches, the
        problem and the fix."""
        return {
            "column": self.column,
            "launches": self.launches,
            "problem": self.problem(),
            "fix": self.fix(),
        }


@dataclass
class Counted:
    kernels: pd.DataFrame
    missing: list[Missing] = field(default_factory=list)


class _Provenance:
    """Per-row notes ('flop_fp32 derived from rates'), kept as one mask per note until the end."""

    def __init__(self, index: pd.Index) -> None:
        self.index = index
        self.notes: dict[str, dict[str, np.ndarray]] = {"estimated": {}, "provenance": {}}

    def add(self, kind: str, mask: np.ndarray | pd.Series, text: str) -> None:
        rows = np.asarray(mask, dtype=bool)
        if rows.any():
            seen = self.notes[kind].get(text)
            self.notes[kind][text] = rows if seen is None else seen | rows

    def column(self, kind: str) -> pd.Series:
        """Rows share one label per combination of notes (a million launches, a handful of
        labels)."""
        items = list(self.notes[kind].items())
        bits = np.zeros(len(self.index), dtype=np.int64)
        for i, (_, rows) in enumerate(items):
            bits |= rows.astype(np.int64) << i
        combos, codes = np.unique(bits, return_inverse=True)
        labels = [
            "; ".join(text for i, (text, _) in enumerate(items) if combo >> i & 1)
            for combo in combos
        ]
        return pd.Series(
            pd.Categorical.from_codes(codes.reshape(-1), categories=labels), index=self.index
        )


def kernel_names(df: pd.DataFrame) -> tuple[pd.Categorical, pd.Categorical]:
    """(full, short) names as categoricals: a million launches share a handful of names of kilobytes
    each, so every distinct name is hashed, stored and shortened once."""
    col = df["kernel_full"]
    if isinstance(col.dtype, pd.CategoricalDtype) and (col.cat.codes >= 0).all():
        # CSV pages arrive categorical: reuse the parser's codes instead of hashing a million names
        # again.
        codes, uniques = (
            col.cat.codes.to_numpy(),
            np.asarray(col.cat.categories.to_numpy(dtype=object)),
        )
    else:
        values = objects(col)
        base = objects(df["kernel_base"])
        missing = pd.isna(values)
        values[missing] = base[missing]
        values[pd.isna(values)] = ""
        codes, uniques = pd.factorize(values)
    full = pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))
    short_of = distinct_short_names(uniques)  # different kernels keep different short names
    short_codes, shorts = pd.factorize(np.array([short_of[u or ""] for u in uniques], dtype=object))
    short = pd.Categorical.from_codes(short_codes[codes], categories=pd.Index(shorts, dtype=object))
    return full, short


def _first(
    m: MetricValues,
    prov: _Provenance,
    column: str,
    sources: list[tuple[Callable[[], np.ndarray | None], str | None]],
) -> np.ndarray:
    """Take each row's value from the first source that has it; note which rows needed rates. A
    source is computed only while some row lacks a value (None: it has none): most reports hold the
    first, and the rest (rates x time, of counters a report mostly lacks) would be computed for
    nothing."""
    out = np.full(m.rows, np.nan)
    for source, note in sources:
        gap = np.isnan(out)
        if not gap.any():
            break
        values = source()
        if values is None:
            continue
        take = gap & ~np.isnan(values)
        if take.any():
            out[take] = values[take]
            if note:
                prov.add("provenance", take, f"{column} {note}")
    return out


def _metric(
    m: MetricValues, name: str, *factors: float | np.ndarray
) -> Callable[[], np.ndarray | None]:
    """A `_first` source: metric `name` x `factors` (a constant; the launch's duration or cycles,
    for a rate), computed when `_first` asks for it; None where the table has no such metric."""

    def values() -> np.ndarray | None:
        if name not in m:
            return None  # no value for any launch, whatever its factors
        out = m.floats(name)
        for factor in factors:
            out = out * factor
        return out

    return values


# The table being built: a column per name (float arrays, categoricals, the readers' own Series),
# made a DataFrame once at the end.
Columns = dict[str, Any]


def count_kernels(metrics: pd.DataFrame) -> Counted:
    """The canonical raw columns (SI units) for every launch of a metric table."""
    df = metrics.reset_index(drop=True)
    m = MetricValues(df)
    prov = _Provenance(df.index)
    out: Columns = {"launch_id": pd.to_numeric(df["launch_id"], errors="coerce")}
    out["kernel_full"], out["kernel"] = kernel_names(df)
    out["nvtx_stack"], out["nvtx"] = stack_columns(df["nvtx"])
    for ident in ("process", "device", "stream", "grid", "block", "registers", "gpu", "cc"):
        out[ident] = df[ident]
    # silent, as pandas' arithmetic was: a count over a duration of 0 is inf (`derive` drops it)
    with np.errstate(all="ignore"):
        absent, no_factor = _count(m, prov, out)
        last = _last_columns(df, m, prov, out)
    # A block per column (no copy), as pandas holds columns added one by one; ncu's section figures
    # as one block: a full set's ~90 columns added one by one fragment the frame (pandas warns).
    kernels = pd.concat(
        [
            pd.DataFrame(out, index=df.index, copy=False),
            _insight(m, df.index),
            pd.DataFrame(last, index=df.index, copy=False),
        ],
        axis=1,
    )
    rate_only = {
        column: np.isnan(out["duration_s"]) & m.any_known(cols)
        for column, pattern in RATE_FORMS.items()
        if (cols := [c for c in df.columns if pattern.match(c)])
    }
    return Counted(kernels, _missing(kernels, absent, rate_only, no_factor))


def _last_columns(df: pd.DataFrame, m: MetricValues, prov: _Provenance, out: Columns) -> Columns:
    """The table's last columns: the occupancy limiter, each launch's notes and its status."""
    last: Columns = {}
    _occupancy_limiter(m, last)
    _note_simt_beside_tensor(prov, out)
    last["estimated"] = prov.column("estimated")
    last["provenance"] = prov.column("provenance")
    empty = _unmeasured(df, [out[c] for c in COLLECTED])
    last["status"] = pd.Categorical.from_codes(
        empty.astype(np.int8),
        categories=["ok", "not profiled: ncu recorded no values for this launch"],
    )
    return last


def _count(
    m: MetricValues, prov: _Provenance, out: Columns
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Time, cycles, clock, FLOPs, bytes and the report's peaks into `out`; returns (per counter,
    the rows that lack it; the launches whose tensor FLOPs lack a checked factor) for `_missing`."""
    out["duration_s"] = dur = _first(
        m,
        prov,
        "duration_s",
        [
            (_metric(m, "gpu__time_duration.sum"), None),
            (_metric(m, "gpu__time_duration.avg"), None),
            (
                lambda: (
                    m.floats("smsp__cycles_elapsed.avg")
                    / m.floats("smsp__cycles_elapsed.avg.per_second")
                ),
                "from cycles / clock",
            ),
            (
                lambda: (
                    m.floats("sm__cycles_elapsed.avg")
                    / m.floats("sm__cycles_elapsed.avg.per_second")
                ),
                "from cycles / clock",
            ),
        ],
    )
    cycles = _first(
        m,
        prov,
        "cycles",
        [
            (_metric(m, "smsp__cycles_elapsed.avg"), None),
            (_metric(m, "sm__cycles_elapsed.avg"), None),
            (_metric(m, "smsp__cycles_elapsed.avg.per_second", dur), None),
            (_metric(m, "sm__cycles_elapsed.avg.per_second", dur), None),
        ],
    )
    out["sm_clock_hz"] = first_known(
        m.floats("smsp__cycles_elapsed.avg.per_second"),
        m.floats("sm__cycles_elapsed.avg.per_second"),
        cycles / dur,
    )
    absent: dict[str, np.ndarray] = {}
    insts: dict[str, np.ndarray] = {}
    for precision in PRECISION_LETTER:
        out[f"flop_{precision}"] = _simt_flop(m, prov, precision, cycles, dur, absent, insts)
    cc = _cc_key(out["cc"])  # once: both readers compare it
    only_moves = _register_moves(m, prov, out, insts["hfma"], cc)
    no_factor = _tensor_flop(m, prov, out, only_moves, cc)
    _bytes(m, prov, out, dur)
    _report_peaks(m, out)
    return absent, no_factor


def _note_simt_beside_tensor(prov: _Provenance, out: Columns) -> None:
    """Counted tensor work with SIMT counters absent: the total is the tensor FLOPs plus the SIMT
    FLOPs that were counted (a GEMM's epilogue is noise next to its MMAs, see roofline.total_flop);
    the row says so."""
    unknown = {col: np.isnan(out[col]) for col in SIMT_FLOP}
    tensor = out["flop_tensor"] > 0
    none = all_of(unknown.values(), len(tensor))
    prov.add("provenance", none & tensor, "flop is tensor work only (SIMT counters not collected)")
    for col in SIMT_FLOP:
        prov.add(
            "provenance",
            unknown[col] & ~none & tensor,
            f"flop leaves out {col} (counters not collected)",
        )


def _unmeasured(df: pd.DataFrame, numbers: list[np.ndarray]) -> np.ndarray:
    """Launches ncu failed to profile: no value for any counted column (`numbers`). When the table
    holds no ncu metric at all (a details CSV of throughput percentages only: the readers keep only
    what flopscope reads), ncu was not asked for these counters rather than failing every launch:
    the launches count as profiled, and `_missing` names the ncu option that collects what is
    absent."""
    empty = all_of((np.isnan(values) for values in numbers), len(df))
    if empty.all() and not any("__" in c for c in df.columns):
        return np.zeros(len(df), dtype=bool)
    # a launch with only rates, or an add count without mul and fma, was measured all the same
    if empty.any():
        measured = [c for c in df.columns if "__" in c and not _RECORDED_ANYWAY.search(c)]
        empty[empty] = ~df.loc[empty, measured].notna().any(axis=1).to_numpy(dtype=bool)
    return empty


# What ncu records even for a launch it failed to profile: the device's attributes and peak rates.
_RECORDED_ANYWAY = re.compile(r"^(device__|launch__)|\.peak_sustained$|^derived__.*_x[24]$")


def _simt_flop(
    m: MetricValues,
    prov: _Provenance,
    precision: str,
    cycles: np.ndarray,
    dur: np.ndarray,
    absent: dict[str, np.ndarray],
    insts: dict[str, np.ndarray],
) -> np.ndarray:
    """add + mul + 2 x fma of one precision, known only where all three counters are: a missing add
    or mul counter is not zero adds, and a total without it would pass for the whole. Per-opcode
    SASS counts fill the rest (they list every executed opcode, so an opcode absent there ran 0
    times). `absent` gets, per counter, the rows that lack it, so the fix names only what is
    missing; `insts` each counter's thread instructions ("hfma": ...)."""
    letter = PRECISION_LETTER[precision]
    column = f"flop_{precision}"
    total = np.zeros(m.rows)
    known = np.ones(m.rows, dtype=bool)
    lacking = {}
    for op, weight in OP_WEIGHTS[letter].items():
        base = f"sass_thread_inst_executed_op_{letter}{op}_pred_on.sum"
        inst = _first(
            m,
            prov,
            column,
            [
                (_metric(m, f"smsp__{base}"), None),
                (_metric(m, f"sm__{base}"), None),
                (_metric(m, f"smsp__{base}.per_cycle_elapsed", cycles), RATE),
                (_metric(m, f"smsp__{base}.per_second", dur), RATE),
                (_metric(m, f"sm__{base}.per_second", dur), RATE),
            ],
        )
        known &= ~np.isnan(inst)
        insts[f"{letter}{op}"] = inst
        lacking[f"smsp__{base}"] = np.isnan(inst)
        total += weight * inst
    opcode = _opcode_flop(m, precision)
    use_opcode = ~known & ~np.isnan(opcode)
    prov.add("provenance", use_opcode, f"{column} from SASS per-opcode counts")
    absent.update(lacking)
    return np.where(known, total, opcode)


WARP = 32
# what the half counters credit each HFMA2(.MMA) thread instruction
HFMA2_FLOP = OPCODE_FLOPS["fp16"]["HFMA2"]


def _register_moves(
    m: MetricValues, prov: _Provenance, out: Columns, hfma: np.ndarray, cc: pd.Series
) -> np.ndarray:
    """Take the compiler's register moves out of `flop_fp16`; return the launches whose tensor pipe
    ran only them.

    The compiler moves constants into registers with `HFMA2.MMA Rd, -RZ, RZ, imm, imm`, issued on
    the MMA pipe: ncu counts each as an HFMA2 (hfma and per-opcode counters) and as a tensor-pipe
    instruction. They are no FP16 math, and no MMA. But from Ampere on the compiler also issues
    half2 math as HFMA2.MMA, to use both pipes: an H100 loop of 16 `__hfma2` per thread ran 8 as
    HFMA2 and 8 as HFMA2.MMA (+1 move; tests/data/gpu). So HFMA2.MMA count as moves only in launches
    that run no other HFMA2; elsewhere they stay FP16 math, and the few moves among them are
    flagged. The HFMA2.MMA thread instructions are known from the per-modifier SASS counts, else
    where tensor-pipe warp instructions x 32 equal the HFMA thread instructions exactly: then every
    HFMA was one (a naive FP32 SGEMM on an A100: 104,857,600 x 32 = 3,355,443,200). Partial warps or
    real MMAs break the equality, and the launch's tensor work stays unknown. On Turing, whose FP16
    math may itself issue on the MMA pipe, the moves are flagged, not removed. `cc`: `_cc_key` of
    the launches' compute capabilities."""
    inst = _tensor_inst(m)
    # Equal to the thread instruction (a count from rates x cycles carries float noise, not one
    # instruction).
    tensor_moves: np.ndarray = (inst > 0) & (np.round(inst * WARP) == np.round(hfma))
    columns = [c for c in m.df.columns if c.startswith(MODIFIER_METRIC + ":")]
    per_modifier = np.full(m.rows, np.nan)
    if columns:
        per_modifier = where_known(
            m.any_known(columns), zero_filled(m.floats(f"{MODIFIER_METRIC}:HFMA2.MMA"))
        )
    moves = first_known(per_modifier, where_known(tensor_moves, hfma))
    turing = (cc == "7.5").to_numpy(dtype=bool)
    # the launch runs other HFMA2s: its HFMA2.MMA may be math too
    with_math = np.round(hfma - moves) > 0
    fp16 = out["flop_fp16"]
    some = (moves > 0) & ~np.isnan(fp16)
    drop = some & ~turing & ~with_math
    less = fp16 - HFMA2_FLOP * moves
    out["flop_fp16"] = np.where(drop, np.where(np.isnan(less) | (less >= 0.0), less, 0.0), fp16)
    prov.add(
        "provenance",
        drop & ~np.isnan(per_modifier),
        "flop_fp16 leaves out HFMA2.MMA register moves (per-modifier SASS counts)",
    )
    prov.add(
        "provenance",
        drop & np.isnan(per_modifier),
        "flop_fp16 leaves out the HFMAs: HFMA2.MMA register moves (tensor-pipe instructions x 32 ="
        " HFMAs)",
    )
    prov.add(
        "provenance",
        some & turing,
        "flop_fp16 may include HFMA2.MMA register moves (kept: Turing may run FP16 math as"
        " HFMA2.MMA)",
    )
    prov.add(
        "provenance",
        some & ~turing & with_math,
        "flop_fp16 counts HFMA2.MMA as FP16 math (the launch runs other HFMA2s too, and the"
        " compiler splits half2 math across the FMA and MMA pipes): a few may be register moves",
    )
    return tensor_moves


def _tensor_inst(m: MetricValues) -> np.ndarray:
    """Warp-level instructions issued on the tensor (MMA) pipe."""
    return first_known(
        m.floats("smsp__inst_executed_pipe_tensor.sum"),
        m.floats("sm__inst_executed_pipe_tensor.sum"),
    )


def _opcode_flop(m: MetricValues, precision: str) -> np.ndarray:
    cols = {f"{OPCODE_METRIC}:{op}": w for op, w in OPCODE_FLOPS[precision].items()}
    present = [c for c in cols if c in m]
    any_opcode = [c for c in m.df.columns if c.startswith(OPCODE_METRIC + ":")]
    if not any_opcode:
        return np.full(m.rows, np.nan)
    has_row = m.any_known(any_opcode)
    total = sum((zero_filled(m.floats(c)) * cols[c] for c in present), np.zeros(m.rows))
    return where_known(has_row, total)


_TENSOR_OPS = re.compile(
    r"^sm__ops_path_tensor_src_(\w+?)(?:_dst_(\w+?))?(_sparsity_(?:on|off))?(?:\.sum)?$"
)


def _tensor_dtype(src: str) -> str | None:
    src = src.lower()
    if src.startswith("int") or src.startswith("uint"):
        return None  # integer ops are not FLOPs
    for dtype in TENSOR_DTYPES:
        if src.startswith(dtype):
            return dtype
    if src.startswith(("e4m3", "e5m2")):
        return "fp8"
    if src.startswith(("e2m1",)):
        return "fp4"
    if src.startswith(("e2m3", "e3m2")):
        return "fp6"
    return None


def _tensor_ops(m: MetricValues, prov: _Provenance) -> dict[str, np.ndarray]:
    """The tensor op counters' FLOPs per column (`fp16`, `fp16_acc16`, ...), of the types the
    table counts."""
    by_dtype: dict[str, np.ndarray] = {}
    groups: dict[tuple[str, str | None], dict[str, str]] = {}
    for name in m.df.columns:
        match = _TENSOR_OPS.match(name)
        if match and _tensor_dtype(match.group(1)):
            groups.setdefault((match.group(1), match.group(2)), {})[match.group(3) or ""] = name
    # Counters of one family overlap (an aggregate holds its per-destination counters): sum only the
    # widest, except that an FP16/FP32-destination pair wins over its aggregate (the pair says how
    # it accumulated).
    widest = uncovered(
        by_accumulator({key: (frozenset(key[0].split("_")), key[1]) for key in groups})
    )
    for (src, dst), variants in groups.items():
        if (src, dst) not in widest:
            continue
        dtype = _tensor_dtype(src)
        assert dtype is not None  # `groups` holds the sources of a float type only
        column = f"{dtype}_acc16" if dst == "fp16" and dtype in ACC16 else dtype
        # sparsity_on/off split the same ops; use the total when ncu gives it.
        parts = [variants[""]] if "" in variants else list(variants.values())
        ops = sum((m.floats(p) for p in parts), np.zeros(m.rows))
        if "_" in src:  # one counter for several source types: its precision is a guess
            prov.add(
                "provenance",
                zero_filled(ops) > 0,
                f"flop_tensor_{column}: ncu counts {src.replace('_', '/')} together",
            )
        prev = by_dtype.get(column)
        by_dtype[column] = ops if prev is None else _add_filled(prev, ops)
    return by_dtype


def _add_filled(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b, a value missing on one side taken as 0, unknown where both miss (pandas'
    `a.add(b, fill_value=0.0)`)."""
    both = np.isnan(a) & np.isnan(b)
    return np.where(both, np.nan, zero_filled(a) + zero_filled(b))


def _tensor_flop(
    m: MetricValues, prov: _Provenance, out: Columns, only_moves: np.ndarray, cc: pd.Series
) -> np.ndarray:
    """flop_tensor and its per-type columns into `out`; returns the launches whose tensor
    instructions were counted on an architecture without a checked FLOP-per-instruction factor
    (their tensor FLOPs unknown). `only_moves`: launches whose tensor-pipe instructions were all
    HFMA2.MMA register moves (no MMA); `cc`: `_cc_key` of the launches' compute capabilities."""
    by_dtype = _tensor_ops(m, prov)
    typed = [f"flop_tensor_{column}" for column in TENSOR_TYPES]
    for column, name in zip(TENSOR_TYPES, typed, strict=True):
        out[name] = by_dtype.get(column, np.full(m.rows, np.nan))
    counted = (
        # pandas' row sum over a frame of a column per block, as the table holds them: numpy would
        # add nine columns in another order, a last bit apart
        pd.DataFrame({c: out[c] for c in typed}, copy=False).sum(axis=1, min_count=1).to_numpy()
        if by_dtype
        else np.full(m.rows, np.nan)  # no tensor op counters in the table
    )
    inst = _tensor_inst(m)
    factor = (
        cc.map({k: f for k, (f, _, _) in TENSOR_FLOP_PER_INST.items()}).astype(float).to_numpy()
    )
    dtypes = cc.map({k: d for k, (_, d, _) in TENSOR_FLOP_PER_INST.items()})
    estimate = np.where(np.isnan(inst), np.nan, np.where(inst != 0, inst * factor, 0.0))
    idle = _tensor_idle(m)
    flop = counted.copy()
    # before any estimate: a move x 512 FLOP/instruction would be invented
    moves = np.isnan(flop) & only_moves
    flop[moves] = 0.0
    prov.add(
        "provenance",
        moves,
        "flop_tensor 0: every tensor-pipe instruction an HFMA2.MMA register move, no HMMA",
    )
    use_est = np.isnan(flop) & ~np.isnan(estimate)
    flop[use_est] = estimate[use_est]
    for dtype in dtypes.dropna().unique():
        rows = use_est & (dtypes == dtype).to_numpy(dtype=bool)
        name = f"flop_tensor_{dtype}"
        out[name] = np.where(rows, estimate, out[name])
    for key, (_, _, checked) in TENSOR_FLOP_PER_INST.items():
        prov.add(
            "estimated",
            use_est & (inst != 0) & (cc == key).to_numpy(dtype=bool),
            f"flop_tensor (tensor instructions x {checked})",
        )
    integer = _integer_mma(m)
    for mask, why in (
        (idle & ~integer, "tensor pipes idle"),
        (idle & integer, "floating-point tensor pipes idle (the integer one ran IMMA)"),
        (_no_mma_opcodes(m), "no floating-point MMA in SASS opcode counts"),
        (_no_tensor_cores(cc), "GPU has no tensor cores"),
    ):
        use = np.isnan(flop) & mask
        flop[use] = 0.0
        prov.add("provenance", use, f"flop_tensor 0: {why}")
    prov.add("provenance", integer, "integer tensor-core work (IMMA) is not FLOPs: not counted")
    out["flop_tensor"] = flop
    # Its work is integer MMA: a FLOP ceiling (and the ridge point that decides bound) says nothing
    # about it.
    out["integer_mma"] = integer & (flop == 0)
    prov.add(
        "provenance",
        out["integer_mma"],
        "no % of peak or bound: its work is integer MMA (IMMA), which no FLOP ceiling measures",
    )
    no_factor: np.ndarray = np.isnan(flop) & ~np.isnan(inst) & (inst != 0)
    for key in pd.unique(cc[no_factor]):
        prov.add(
            "provenance",
            no_factor & (cc == key).to_numpy(dtype=bool),
            "flop_tensor unknown: tensor instructions counted, no checked FLOP/instruction"
            f" {_for_cc(key)}",
        )
    return no_factor


def _for_cc(cc: str) -> str:
    """`for CC 8.0`; '' (a details CSV without its CC column) in words that read right without
    one."""
    return f"for CC {cc}" if cc else "for an unknown compute capability: the report names none"


def _no_mma_opcodes(m: MetricValues) -> np.ndarray:
    """True where the SASS opcode counts show no floating-point MMA (integer IMMA/BMMA are not
    FLOPs)."""
    ops = [c for c in m.df.columns if c.startswith(OPCODE_METRIC + ":")]
    if not ops:
        return np.zeros(m.rows, dtype=bool)
    mma = [
        c for c in ops if "MMA" in c.split(":", 1)[1] and not _INTEGER_MMA.match(c.split(":", 1)[1])
    ]
    has_counts = m.any_known(ops)
    if not mma:
        return has_counts
    no_mma: np.ndarray = has_counts & all_of(
        (m.df[c].fillna(0.0).to_numpy() == 0 for c in mma), m.rows
    )
    return no_mma


def _integer_mma(m: MetricValues) -> np.ndarray:
    """True where SASS opcode counts or per-op pipe utilisation show integer tensor-core work."""
    cols = [
        c
        for c in m.df.columns
        if c.startswith(OPCODE_METRIC + ":") and _INTEGER_MMA.match(c.split(":", 1)[1])
    ]
    cols += [c for c in _tensor_pipe_columns(m.df) if _INTEGER_PIPE.search(c)]
    return any_of((m.floats(c) > 0 for c in cols), m.rows)


def _tensor_pipe_columns(df: pd.DataFrame) -> list[str]:
    """The tensor pipes' utilisation (% of peak), all ops together or per op."""
    return [
        c
        for c in df.columns
        if c.startswith(("sm__inst_executed_pipe_tensor", "sm__pipe_tensor")) and "pct_of_peak" in c
    ]


# Integer and binary tensor instructions (Ampere IMMA/BMMA, Hopper IGMMA/BGMMA, Blackwell UTCIMMA):
# not FLOPs.
_INTEGER_MMA = re.compile(r"^(UTC)?[IB]G?MMA")
# Their pipe, where ncu splits the tensor pipe per op (Ampere/Hopper `_op_imma`, Blackwell
# `_subpipe_imma`).
_INTEGER_PIPE = re.compile(r"_(op|subpipe)_[ib]mma")


def _no_tensor_cores(key: pd.Series) -> np.ndarray:
    """`key`: `_cc_key` of the launches' compute capabilities."""
    none: np.ndarray = (
        key.map({v: bool(_major(v) < 7) for v in pd.unique(key)}).astype(bool).to_numpy()
    )
    return none


def _cc_key(cc: pd.Series) -> pd.Series:
    """Compute capability as text ('7.0'), '' where unknown; one conversion per distinct value, and
    a categorical, so what is looked up or compared per launch is looked up once per distinct CC."""
    return cc.map({v: "" if is_missing(v) else str(v) for v in pd.unique(cc)}).astype("category")


def _major(cc: str) -> float:
    try:
        return float(cc.split(".")[0])
    except ValueError:
        return np.nan


def _tensor_idle(m: MetricValues) -> np.ndarray:
    """True where ncu shows the floating-point tensor pipes at exactly 0% (so tensor FLOPs are
    exactly 0). Where ncu splits the pipe by operation (`..._op_hmma`, `_op_dmma`, `_op_imma`), the
    integer op's utilisation is not floating-point work and the all-ops aggregate would count it:
    only FP ops are read."""
    cols = _tensor_pipe_columns(m.df)
    per_op = [c for c in cols if "_op_" in c or "_subpipe_" in c]
    if per_op:
        cols = [c for c in per_op if not _INTEGER_PIPE.search(c)]
    if not cols:
        return np.zeros(m.rows, dtype=bool)
    values = [m.floats(c) for c in cols]
    some = any_of((~np.isnan(v) for v in values), m.rows)
    idle: np.ndarray = some & all_of((zero_filled(v) == 0.0 for v in values), m.rows)
    return idle


def _bytes(m: MetricValues, prov: _Provenance, out: Columns, dur: np.ndarray) -> None:
    for way in ("read", "write"):
        out[f"dram_{way}_bytes"] = _first(
            m,
            prov,
            f"dram_{way}_bytes",
            [
                (_metric(m, f"dram__bytes_{way}.sum"), None),
                (_metric(m, f"dram__bytes_op_{way}.sum"), None),
                (_metric(m, f"dram__bytes_{way}.sum.per_second", dur), RATE),
            ],
        )
    out["dram_bytes"] = _first(
        m,
        prov,
        "dram_bytes",
        [
            (_metric(m, "dram__bytes.sum"), None),
            (lambda: out["dram_read_bytes"] + out["dram_write_bytes"], None),
            (_metric(m, "dram__bytes.sum.per_second", dur), RATE),
        ],
    )
    for level, unit in (("l2", "lts__t"), ("l1", "l1tex__t")):
        # ncu defines its *_bytes as sectors x 32 B (a sector is an aligned 32-byte chunk); a --set
        # full report holds only the sector counts.
        out[f"{level}_bytes"] = _first(
            m,
            prov,
            f"{level}_bytes",
            [
                (_metric(m, f"{unit}_bytes.sum"), None),
                (_metric(m, f"{unit}_sectors.sum", SECTOR_BYTES), None),
                (_metric(m, f"{unit}_bytes.sum.per_second", dur), RATE),
                (_metric(m, f"{unit}_sectors.sum.per_second", SECTOR_BYTES, dur), RATE),
            ],
        )


def _insight(m: MetricValues, index: pd.Index) -> pd.DataFrame:
    """What ncu's sections show beside the roofline (speed of light, occupancy, waves, pipes,
    stalls, memory chart, instruction mix), as ncu recorded it per launch; a column only where some
    launch has it, so a report without them gains no empty columns."""
    columns: dict[str, np.ndarray] = {}
    for column, names in INSIGHT.items():
        present = [name for name in names if name in m]
        if present:
            columns[column] = first_known(*(m.floats(name) for name in present))
    # counts: only where the report has them
    for column, name in {**MEMORY_CHART, **INSTRUCTION_MIX, **PC_SAMPLES}.items():
        if name in m:
            columns[column] = m.floats(name)
    return pd.DataFrame(columns, index=index, dtype=float)


def _occupancy_limiter(m: MetricValues, out: Columns) -> None:
    """The resource(s) allowing the fewest blocks per SM (ncu's Occupancy section), and how many."""
    limits = {what: m.floats(name) for what, name in OCCUPANCY_LIMITS.items() if name in m}
    if not limits or not m.rows or all(np.isnan(v).all() for v in limits.values()):
        return
    fewest = np.fmin.reduce(list(limits.values()))
    out["occupancy_limit_blocks"] = fewest
    # Every resource that allows only the fewest blocks per SM limits it (ties named together).
    # A bit per resource, one label per combination: a million launches share a handful of labels.
    bits = sum((values == fewest).astype(np.int64) << i for i, values in enumerate(limits.values()))
    combos, codes = np.unique(bits, return_inverse=True)
    labels = [
        " + ".join(what for i, what in enumerate(limits) if combo >> i & 1) or None
        for combo in combos
    ]
    out["occupancy_limiter"] = pd.Series(
        np.array(labels, dtype=object)[codes.reshape(-1)], index=m.df.index, dtype=object
    )


def _report_peaks(m: MetricValues, out: Columns) -> None:
    """The report's own ceilings: peak per cycle x the launch's measured clock."""
    clock = out["sm_clock_hz"]
    for precision, letter in PRECISION_LETTER.items():
        fma = OP_WEIGHTS[letter]["fma"]
        per_cycle = first_known(
            m.floats(f"derived__sm__sass_thread_inst_executed_op_{letter}fma_pred_on_x{fma:g}"),
            fma
            * m.floats(f"sm__sass_thread_inst_executed_op_{letter}fma_pred_on.sum.peak_sustained"),
        )
        out[f"report_peak_{precision}_flop_per_s"] = where_known(per_cycle > 0, per_cycle) * clock
    dram_per_cycle = m.floats("dram__bytes.sum.peak_sustained")
    device = _devices(out)  # once: three readings are averaged per device
    dur = out["duration_s"]
    out["report_peak_dram_bytes_per_s"] = dram_per_cycle * _dram_clock(m, dur, device)
    out["report_peak_dram_own_bytes_per_s"] = dram_per_cycle * m.floats(
        "dram__cycles_elapsed.avg.per_second"
    )
    for level, unit in (("l2", "lts"), ("l1", "l1tex")):
        # Over the report, as DRAM's clock: a launch's own reading is its elapsed cycles over its
        # duration, which for a short launch is off by up to 2x (V100 11-13 us: 1.18 and 1.52 TB/s
        # against 2.50 for the long ones), and judged against DRAM's report-wide peak it would read
        # as L2-bound when ncu's own percentages (DRAM 22.3%, L2 13.8%) say DRAM.
        out[f"report_peak_{level}_bytes_per_s"] = _over_report(_cache_peak(m, unit), dur, device)


def _cache_peak(m: MetricValues, unit: str) -> np.ndarray:
    """The peak rate of the counter the level's intensity divides by (`{unit}__t_bytes`, ncu's
    sectors x 32 B): peak per cycle x the unit's clock; a --set full report holds neither, only the
    sectors' rate and their % of peak, whose ratio is the same peak rate."""
    per_cycle = first_known(
        m.floats(f"{unit}__t_bytes.sum.peak_sustained"),
        SECTOR_BYTES * m.floats(f"{unit}__t_sectors.sum.peak_sustained"),
    )
    peak = where_known(per_cycle > 0, per_cycle) * m.floats(
        f"{unit}__cycles_elapsed.avg.per_second"
    )
    pct = first_known(
        m.floats(f"{unit}__t_sectors.sum.pct_of_peak_sustained_elapsed"),
        m.floats(f"{unit}__t_sectors.avg.pct_of_peak_sustained_elapsed"),
    )  # a sum and an average: one ratio
    rate = SECTOR_BYTES * m.floats(f"{unit}__t_sectors.sum.per_second")
    return first_known(peak, rate / (where_known(pct > 0, pct) / 100.0))


def _dram_clock(m: MetricValues, duration: np.ndarray, device: np.ndarray) -> np.ndarray:
    """Each device's DRAM clock over the whole report: its cycles over its time, duration-weighted.

    Memory does not boost per kernel, but ncu's per-launch reading is noisy for short kernels (V100
    HBM2 runs at 877 MHz; 11 us kernels read 416-532 MHz), which would halve their bandwidth
    ceiling."""
    return _over_report(m.floats("dram__cycles_elapsed.avg.per_second"), duration, device)


def _over_report(value: np.ndarray, duration: np.ndarray, device: np.ndarray) -> np.ndarray:
    """Each device's duration-weighted mean of a per-launch reading (`value`) over the whole report,
    for each launch of it that has the reading; launches without a duration keep their own.
    `device`: `_devices(out)`."""
    dur = np.where(np.isnan(value), np.nan, duration)
    both = ~np.isnan(value * dur)
    totals = np.bincount(device, weights=np.where(both, value * dur, 0.0))
    times = np.bincount(device, weights=np.nan_to_num(dur))
    mean = (totals / times)[device]
    return np.where(dur > 0, mean, value)


def _devices(out: Columns) -> np.ndarray:
    """Each launch's device (GPU name and index) as a number from 0. Unknown is a value of its own
    (-1, then shifted to 0); a categorical or integer column is factorized without a Python object
    per launch."""
    gpu = pd.factorize(out["gpu"])[0].astype(np.int64) + 1
    index = pd.factorize(out["device"])[0].astype(np.int64) + 1
    numbers: np.ndarray = pd.factorize(gpu * (int(index.max(initial=0)) + 1) + index)[0]
    return numbers


# every collected column has its ncu metrics
_FIXES = {column: COLUMN_METRICS[column] for column in COLLECTED}


def collecting(columns: Collection[str], ccs: Collection[str] = ()) -> str | None:
    """The `ncu --metrics` option that collects these canonical columns on GPUs of compute
    capabilities `ccs` (tensor op counters are named per chip: another chip's would make ncu refuse
    the whole profile; with no known CC a placeholder says to look them up); None if none is a
    counted column."""
    metrics = [
        m for c in columns for m in (_tensor_fix(ccs) if c == "flop_tensor" else _FIXES.get(c, []))
    ]
    return Missing("", list(dict.fromkeys(metrics)), 0).fix() if metrics else None


def missing_fix(missing: list[Missing], columns: Collection[str]) -> str | None:
    """The one `ncu --metrics` option that fills these columns where a report lacks them, from the
    report's own `missing` (its chips' tensor counters, only the add/mul/fma counters absent); None
    if it lacks none."""
    metrics = [x for m in missing if m.column in columns for x in m.metrics]
    return Missing("", list(dict.fromkeys(metrics)), 0).fix() if metrics else None


def _tensor_fix(ccs: Collection[str]) -> list[str]:
    """flop_tensor's metrics on these CCs: the op counters they all have, and the instruction
    count."""
    return tensor_counters_for([str(c) for c in ccs]) + [
        m for m in _FIXES["flop_tensor"] if not m.startswith("sm__ops_path_tensor")
    ]


def _missing(
    out: pd.DataFrame,
    absent: dict[str, pd.Series],
    rate_only: dict[str, pd.Series],
    no_factor: pd.Series,
) -> list[Missing]:
    """Per column, the launches that lack it and the ncu metrics that fill it: for SIMT FLOPs only
    the add/mul/fma counters those launches lack (a report with ffma alone needs fadd and fmul). A
    column whose rates were collected lacks only the duration that turns them into counts; tensor
    instructions on an architecture without a checked FLOP-per-instruction factor need the tensor op
    counters."""
    profiled = out["status"] == "ok"
    needs_time = pd.Series(False, index=out.index)
    for rows in rate_only.values():
        needs_time |= rows & profiled
    found = []
    for column, metrics in _FIXES.items():
        unknown = out[column].isna() & profiled
        if column == "duration_s" and (unknown & needs_time).any():
            found.append(
                Missing(
                    column,
                    metrics,
                    int(unknown.sum()),
                    detail="the FLOP and byte rates collected for them need it to become counts",
                )
            )
            continue
        if column in rate_only:
            unknown &= ~rate_only[column]
        if column == "flop_tensor":
            # The op counters differ by chip: name those this GPU's ncu has (GA100's on a GH100
            # would make ncu refuse the whole profile).
            metrics = _tensor_fix(pd.unique(out.loc[unknown, "cc"].dropna()))
            settle = unknown & no_factor
            if settle.any():
                ops = [m for m in metrics if m.startswith("sm__ops_path_tensor")]
                cc = ", ".join(sorted(str(c) for c in pd.unique(out.loc[settle, "cc"].dropna())))
                found.append(
                    Missing(
                        column,
                        ops,
                        int(settle.sum()),
                        "unknown",
                        "tensor instructions were counted, "
                        f"but flopscope has no checked FLOPs per instruction {_for_cc(cc)}",
                    )
                )
            unknown &= ~no_factor
        n = int(unknown.sum())
        if n:
            named = [m for m in metrics if m not in absent or (absent[m] & unknown).any()]
            found.append(
                Missing(
                    column,
                    named or metrics,
                    n,
                    detail=WHICH_TENSOR_COUNTERS if ASK_FOR_TENSOR_COUNTERS in metrics else "",
                )
            )
    return found
