"""The kernel table as people read it: which canonical columns, their titles, formats and
priorities.

Priority decides what drops first on a narrow terminal (higher number drops first).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ...core.common import FlopscopeError, display_text
from ...core.ncu.stalls import SAMPLE_COLUMNS, STALL_COLUMNS
from ...core.table import ALL, INTEGER, SIMT_FLOP
from . import format as fmt


@dataclass(frozen=True)
class Column:
    name: str  # canonical column
    title: str
    render: Callable[[object], str]
    priority: int
    width: int
    numeric: bool = True
    # a boolean column: where true, the value is a lower bound, shown `≥ value`
    at_least: str | None = None
    # columns of one non-empty pair drop and come back together (A and B of a comparison)
    pair: str = ""


# Widths fit the longest text each format makes (3 significant digits: `0.123 ns`, `1.23 kB`, `58.6
# GB/s`); the name, text and whole-number columns are sized to their values instead
# (TableModel.natural_width).
KERNEL_TABLE = [
    Column("kernel", "Kernel", fmt.text, 0, 36, numeric=False),
    Column("count", "N", fmt.integer, 3, 6),
    # A group with launches ncu did not profile has only the others' time: `≥ 1.70 ms`
    # (`not_profiled` > 0).
    Column("duration_s", "Time", fmt.seconds, 0, 8, at_least="not_profiled"),
    # of the known kernel time: no bound (`≥ 100%` would mislead)
    Column("pct_time", "%Time", fmt.pct, 1, 6),
    Column("flop", "FLOP", lambda v: fmt.si(v), 2, 7),
    Column("flop_per_s", "FLOP/s", lambda v: fmt.si(v), 1, 7),
    Column("dram_bytes", "DRAM B", lambda v: fmt.si(v, "B"), 4, 7),
    Column("dram_bytes_per_s", "DRAM B/s", lambda v: fmt.si(v, "B/s"), 2, 9),
    Column("ai_dram", "AI", fmt.ratio, 3, 8),  # `1.16e+04`
    # % of roof, not % of peak: a memory-bound row is judged by its limiting level's bandwidth
    # (rmsnorm: 89.1% of its roof, 6.7% of the FLOP peak). Where compute bounds the row the two are
    # one number, so %Peak is left to the sort picker (`o`, `--sort %peak`) and the Kernel screen.
    Column("pct_of_roof", "%Roof", fmt.pct, 1, 6),
    # The lowest ceiling of the hierarchical roofline: `compute`, or the memory level (`DRAM`, `L2`,
    # `L1`).
    Column("roof", "Bound", fmt.roof, 2, 7, numeric=False),
    # As wide as its longest label (three parts, `TC fp8/acc16+TC fp16/acc16+fp32`, take 31): never
    # cut.
    Column("precision", "Prec", fmt.precision, 5, 32, numeric=False),
]

# Titles of the numeric columns the table does not show until it is sorted by one (`o`): then it is
# a column like the others, reachable with left/right and flipped by `s`.
_TITLES = {
    **{c: f"{c.removeprefix('flop_').upper()} FLOP" for c in SIMT_FLOP},
    "flop_tensor": "Tensor FLOP",
    "dram_read_bytes": "DRAM rd B",
    "dram_write_bytes": "DRAM wr B",
    "l2_bytes": "L2 B",
    "l1_bytes": "L1 B",
    "ai_l2": "AI L2",
    "ai_l1": "AI L1",
    "peak_flop_per_s": "Peak FLOP/s",
    "peak_dram_bytes_per_s": "Peak B/s",
    "attainable_flop_per_s": "Roof FLOP/s",
    "pct_of_peak": "%Peak",
    "sm_clock_hz": "SM clock",
    "sol_sm_pct": "SM%",
    "sol_memory_pct": "Mem%",
    # Every column offered (the sort picker, a sorted table) by a title with its unit, never its
    # key.
    "peak_l2_bytes_per_s": "Peak L2 B/s",
    "peak_l1_bytes_per_s": "Peak L1 B/s",
    "sol_dram_pct": "DRAM%",  # ncu's speed of light, as SM% and Mem%
    "sol_l2_pct": "L2%",
    "sol_l1_pct": "L1%",
    "occupancy_achieved_pct": "Occupancy%",
    "occupancy_theoretical_pct": "Theor. occ.%",
    **{
        f"pipe_{p}_pct": f"{p.upper()} pipe%"
        for p in ("alu", "fma", "fp64", "fp16", "lsu", "xu", "adu", "cbu", "tex")
    },
    "sm_busy_pct": "SM busy%",
    "pipe_uniform_pct": "Uniform pipe%",
    "pipe_tensor_pct": "Tensor pipe%",
    "pipe_tc_pct": "tcgen05 pipe%",  # Blackwell's 5th-generation tensor core
    "pipe_tmem_pct": "TMEM pipe%",
    "mem_l2_to_l1_bytes": "L2→L1 B",  # the memory chart's crossbar bytes
    "mem_l1_to_l2_bytes": "L1→L2 B",
    # cycles per issued instruction
    **{column: f"{r.title} stall" for column, r in STALL_COLUMNS.items()},
    # warp samples of each reason (PC sampling)
    **{column: f"{r.title} samples" for column, r in SAMPLE_COLUMNS.items()},
}
_RENDER: dict[str, Callable[[object], str]] = {
    "s": fmt.seconds,
    "%": fmt.pct,
    "FLOP/B": fmt.ratio,
    "FLOP": fmt.si,
    "FLOP/s": fmt.si,
    "B": lambda v: fmt.si(v, "B"),
    "B/s": lambda v: fmt.si(v, "B/s"),
    "Hz": lambda v: fmt.si(v, "Hz"),
    "cycles": fmt.ratio,
}


def _extra(name: str, unit: str) -> Column:
    title = _TITLES.get(name) or (
        _tensor_title(name.removeprefix("flop_tensor_"))
        if name.startswith("flop_tensor_")
        else name
    )
    return Column(
        name, title, _RENDER[unit], 6, max(len(title) + 1, 10 if "/" in unit or unit == "Hz" else 8)
    )


def _tensor_title(dtype: str) -> str:
    """`fp16` -> `TC fp16 FLOP`, `fp16_acc16` -> `TC fp16/acc16 FLOP` (FP16 inputs accumulated in
    FP16): every tensor column a title of its own, the precision spelled as the table's Prec column
    spells it."""
    return f"{fmt.precision(f'tensor_{dtype}')} FLOP"


EXTRA_COLUMNS = {
    name: _extra(name, unit)
    for name, unit, _ in ALL
    if unit in _RENDER and name not in {c.name for c in KERNEL_TABLE}
}


# Words people say for a column, beside its title and its --json key: `duration > 5us`, `share >
# 1%`.
FILTER_WORDS = {"duration": "duration_s", "share": "pct_time", "name": "kernel"}


def filter_names(columns: Iterable[Column], keys: Iterable[str]) -> dict[str, str]:
    """Every name a filter expression (`--where`, the table's `/`) may give a column of a table with
    `keys`, lower case -> key: the --json keys, the words above, the titles of the extra columns and
    of the table's `columns`. A title wins over a key it shadows: `bound` is the Bound column, as
    shown (the roof)."""
    present = set(keys)
    names = {key.lower(): key for key in present}
    names |= {word: key for word, key in FILTER_WORDS.items() if key in present}
    titled = [*EXTRA_COLUMNS.values(), *SPEED_OF_LIGHT, *KERNEL_TABLE, *columns]
    return names | {c.title.lower(): c.name for c in titled if c.name in present}


def shown_texts(columns: Iterable[Column]) -> dict[str, Callable[[object], str]]:
    """A text column's values as the table shows them (`TC bf16` for `tensor_bf16`): a filter
    matches those too."""
    return {c.name: c.render for c in columns if not c.numeric}


def short_gpu(name: object) -> str:
    """`NVIDIA A100-PCIE-40GB` -> `A100-PCIE-40GB`: the vendor says nothing in a column of GPUs."""
    return display_text(fmt.text(name).removeprefix("NVIDIA ").removeprefix("Tesla "))


# ncu's speed of light (its Compute (SM) and Memory Throughput, % of peak): what a `--set basic`
# report has in place of FLOP and byte counters, so the table shows them where no row has a roof to
# be judged against.
SPEED_OF_LIGHT = [
    Column("sol_sm_pct", "SM%", fmt.pct, 1, 6),
    Column("sol_memory_pct", "Mem%", fmt.pct, 1, 6),
]


def shows_speed_of_light(rows) -> bool:
    """Whether the kernel table of `rows` (a DataFrame) shows SPEED_OF_LIGHT: no row has a %Roof (no
    FLOP or byte counters, or no ceilings) and some row has ncu's speed of light."""

    def known(name: str) -> bool:
        return name in rows and bool(rows[name].notna().any())

    return not known("pct_of_roof") and any(known(c.name) for c in SPEED_OF_LIGHT)


def table_columns(by: str, gpus: bool = False, speed_of_light: bool = False) -> list[Column]:
    """KERNEL_TABLE, with the first columns saying what a row is in this grouping (and on which GPU,
    where a file holds launches on several: its name groups are per GPU); `speed_of_light`
    (`shows_speed_of_light`): ncu's SM% and Mem% in the place of %Roof, which no row has then."""
    columns = list(KERNEL_TABLE)
    if speed_of_light:
        at = next(i for i, c in enumerate(columns) if c.name == "pct_of_roof")
        columns[at : at + 1] = SPEED_OF_LIGHT
    if gpus:
        # Priority 1, not 0: on a narrow terminal numbers matter more than which GPU (the header
        # names both).
        columns.insert(1, Column("gpu", "GPU", short_gpu, 1, 16, numeric=False))
    if by == "nvtx":
        columns[0] = replace(columns[0], name="nvtx", title="NVTX range")
    if by == "launch":
        # Priority 0, never dropped: launches of one kernel share its name, so the ID is what tells
        # rows apart.
        at = next(i for i, c in enumerate(columns) if c.name == "count")
        columns[at] = Column("launch_id", "ID", fmt.integer, 0, 7)
    return columns


def column_for(name: str, numeric: bool) -> Column:
    """Any column of the canonical table as the table shows it (the column chooser, `--columns`):
    the table's own or an extra column's look, else one made from the key (`registers`, `grid`:
    titled by it), `numeric` saying whether its values are numbers."""
    known = {c.name: c for c in [*EXTRA_COLUMNS.values(), *SPEED_OF_LIGHT, *KERNEL_TABLE]}
    if name in known:
        return known[name]
    if name == "gpu":
        return Column("gpu", "GPU", short_gpu, 1, 16, numeric=False)
    if name == "launch_id":
        return Column("launch_id", "ID", fmt.integer, 0, 7)
    if not numeric:
        return Column(name, name, fmt.text, 6, max(len(name) + 1, 12), numeric=False)
    return Column(
        name, name, fmt.integer if name in INTEGER else fmt.ratio, 6, max(len(name) + 1, 8)
    )


def is_number_column(rows, key: str) -> bool:
    """Whether column `key` of `rows` (a DataFrame) holds numbers: a text or categorical one, or a
    flag, is shown as text."""
    values = rows.get(key)
    dtype = getattr(values, "dtype", None)
    return (
        dtype is not None
        # numpy's and pandas' nullable integers and floats; not bool, text or category
        and dtype.kind in "iuf"
        and not hasattr(dtype, "categories")
    )


def chosen_columns(
    default: list[Column], keys: Sequence[str] | None, numeric: Callable[[str], bool]
) -> list[Column]:
    """The table's columns as a person chose them (`keys`, in their order; None: `default`, the
    table's own): the grouping's first column stays first (what a row is), and so does the GPU on a
    file of several (which one a row ran on); a launch's ID takes the launch count's place (one
    launch each)."""
    if keys is None:
        return default
    by_name = {c.name: c for c in default}
    wanted = ["launch_id" if k == "count" and "launch_id" in by_name else k for k in keys]
    if "gpu" in by_name and "gpu" not in wanted:
        wanted.insert(0, "gpu")
    first = default[0]
    picked = (
        by_name.get(k) or column_for(k, numeric(k))
        for k in dict.fromkeys(wanted)
        if k != first.name
    )
    return [first, *picked]


def column_keys(text: str, names: Mapping[str, str], option: str = "--columns") -> list[str]:
    """`--columns Time,%Roof,registers` -> keys: each a title of the table or a --json key (any
    case), in the order given; one that names no column is one line naming it (exit 2)."""
    keys = []
    for typed in (t.strip() for t in text.split(",")):
        key = names.get(typed.lower())
        if key is None:
            close = difflib.get_close_matches(typed.lower(), list(names), n=1)
            fix = f"did you mean {close[0]}? " if close else ""
            raise FlopscopeError(
                f"{option} {text}",
                f"no column {typed!r}",
                f"{fix}use titles or --json keys, comma-separated",
            )
        keys.append(key)
    return keys


# The Warning column's least width: `! the comman…`. It is never dropped, so it must never take the
# numbers' room; what they leave widens it up to its whole reason, which the Sweep screen's status
# line and the findings also give in full.
WARNING_CELLS = 14


def sweep_columns(param: str, warned: bool = False) -> list[Column]:
    """A sweep's per-point table, the Sweep screen's and `flopscope sweep`'s. `warned`: some point
    was stored with a warning (its program failed, its report is partial): a Warning column beside
    the parameter says which and why in words, never dropped but shortened first (WARNING_CELLS); a
    clean sweep has none."""
    warning = (
        [Column("warning", "Warning", fmt.warning, 0, WARNING_CELLS, numeric=False)]
        if warned
        else []
    )
    return [
        Column(param, param, lambda v: f"{v:g}", 0, min(max(len(param), 6), 16)),
        *warning,
        Column("flop", "FLOP", lambda v: fmt.si(v), 0, 8),
        Column(
            "flop_per_sample",
            f"FLOP/{param}",
            lambda v: fmt.si(v),
            1,
            min(max(len(param) + 5, 11), 16),
        ),
        Column("dram_bytes", "DRAM B", lambda v: fmt.si(v, "B"), 2, 8),
        Column("duration_s", "Time", fmt.seconds, 0, 9),
        Column("flop_per_s", "FLOP/s", lambda v: fmt.si(v), 1, 8),
        Column("flops_efficiency", "FLOP %Peak", fmt.share, 2, 10),  # the header's words for them
        Column("bandwidth_efficiency", "DRAM %Peak", fmt.share, 3, 10),
        Column("kernels", "Kernels", fmt.integer, 4, 7),
    ]


def fit(
    columns: list[Column],
    width: int,
    keep: Collection[str] = (),
    widths: Mapping[str, int] | None = None,
    blank: Collection[str] = (),
) -> list[Column]:
    """Drop the lowest-priority columns until the table fits `width` cells (`drop`), then bring back
    any dropped column that still fits (a wide one dropped first can leave room for a narrow one).
    Columns named in `keep` stay: the sort column (a table sorted by values it does not show reads
    as shuffled) and the one the cursor moved to (every column is reachable by `left`/`right`).
    `widths`: the cells each column takes, where not its set width (a name column as wide as its
    longest name). `blank`: columns with no value in any row, dropped before the rest (they say
    nothing)."""
    size = {c.name: (widths or {}).get(c.name, c.width) for c in columns}

    def cells(chosen: list[Column]) -> int:
        return sum(size[c.name] for c in chosen) + len(chosen) - 1  # one space between columns

    kept = drop(
        [c.priority for c in columns],
        [size[c.name] for c in columns],
        width,
        keep={i for i, c in enumerate(columns) if c.name in keep},
        blank={i for i, c in enumerate(columns) if c.name in blank},
        pairs=[c.pair for c in columns],
    )
    chosen = [columns[i] for i in kept]
    for extra in sorted(
        (c for c in columns if c not in chosen and c.name not in blank), key=lambda c: c.priority
    ):
        # a pair comes back whole
        unit = [c for c in columns if c is extra or (extra.pair and c.pair == extra.pair)]
        if extra not in chosen and cells([*chosen, *unit]) <= width:
            chosen = [c for c in columns if c in chosen or c in unit]
    return chosen


def drop(
    priorities: Sequence[int],
    sizes: Sequence[int],
    width: int,
    *,
    gap: int = 1,
    keep: Collection[int] = (),
    blank: Collection[int] = (),
    pairs: Sequence[str] = (),
) -> list[int]:
    """Indexes of the columns left once the table fits `width` cells (`sizes`, `gap` cells between
    columns): blank ones go first (they say nothing), then the highest priority, leftmost on ties;
    priority 0 and `keep` never go. Columns of one non-empty `pairs` name go together (A and B of a
    comparison). The app's tables (`fit`) and the printed ones (`text_report.fitted_table`) drop
    columns in this one order."""
    kept = list(range(len(priorities)))
    # A kept column keeps its pair: the cursor on `Time A` must not leave `Time B` out.
    keep = {
        i
        for i in kept
        if i in keep or (pairs and pairs[i] and any(pairs[k] == pairs[i] for k in keep))
    }
    # A pair is blank only where all of it is: `Time A` empty (every group only in B) must not take
    # `Time B`.
    blank = {
        i
        for i in blank
        if not (pairs and pairs[i]) or all(j in blank for j in kept if pairs[j] == pairs[i])
    }

    def cells() -> int:
        return sum(sizes[i] for i in kept) + gap * (len(kept) - 1)

    while len(kept) > 2 and cells() > width:
        droppable = [i for i in kept if priorities[i] > 0 and i not in keep]
        if not droppable:
            break
        worst = max(droppable, key=lambda i: (i in blank, priorities[i]))
        pair = pairs[worst] if pairs else ""
        kept = [i for i in kept if i != worst and not (pair and pairs[i] == pair)]
    return kept


# The --json row keys most worth sorting by, for the --sort error and help (every key works).
SORT_KEYS = [
    "duration_s",
    "flop",
    "flop_fp64",
    "flop_fp32",
    "flop_fp16",
    "flop_tensor",
    "dram_bytes",
    "l2_bytes",
    "l1_bytes",
    "ai_dram",
    "pct_of_peak",
    "pct_of_roof",
]


def sort_column(text: str, by: str, gpus: bool, known: Iterable[str]) -> str:
    """`--sort` as typed -> the column: a title of the table or of a column it adds when sorted by
    it (`FLOP`, `%peak`, `FP32 FLOP`; any case), or a column name, the keys of `--json` rows
    (`known`)."""
    wanted = " ".join(text.split()).lower()
    names = {name.lower(): name for name in known}
    shown = table_columns(by, gpus)
    titles = {c.title.lower(): c.name for c in [*shown, *EXTRA_COLUMNS.values()]}
    found = names.get(wanted) or titles.get(wanted)
    if found:
        return found
    # as they are written
    typed = {c.title.lower(): c.title for c in [*shown, *EXTRA_COLUMNS.values()]} | names
    close = difflib.get_close_matches(wanted, list(typed), n=1)
    hint = f"did you mean {typed[close[0]]}? " if close else ""
    raise FlopscopeError(
        f"--sort {text}",
        "no such column",
        f"{hint}use a title of the table ({', '.join(c.title for c in shown)}, %Peak, FP32 FLOP, L2"
        f" B, ...; any case) or a key of the --json rows ({', '.join(SORT_KEYS)}, ...)",
    )
