"""The Kernel screen's sections as text, without Textual: a row's time, FLOPs, bytes, roofline
judgement and launch configuration as (label, value) pairs, ncu's own speed-of-light and pipe
figures, and why a value is empty. The Kernel screen, the split pane and the diff's side by side lay
them out."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
from rich.table import Table
from rich.text import Text

from ...core import FMA_CONVENTION
from ...core.common import display_text, find_gpu, is_missing
from ...core.common.nvtx_stack import stack_path
from ...core.ncu import ASK_FOR_TENSOR_COUNTERS, WHICH_TENSOR_COUNTERS
from ...core.ncu.panel_sections import EVERY_PANEL, PANEL_SECTIONS, section_options
from ...core.ncu.stalls import STALL_COLUMNS
from ...core.table import COLLECTED, FLOP_PARTS, SIMT_FLOP, TENSOR_TYPES, Ceiling, collecting
from . import format as fmt
from .reprofile import reprofile_advice
from .stall_samples import SAMPLED_TITLE, sampled_stalls, top_stall
from .warnings import FLOPSCOPE_METRICS


def row_value(row: pd.Series, name: str):
    value = row.get(name)
    return None if is_missing(value) else value


def sections(
    row: pd.Series, launches: pd.DataFrame | None = None
) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section title, [(label, value)]) for every metric the row holds; missing numbers say why.
    `launches`: the launches of the row's report, whose earlier launches of the same function the
    advice for a launch ncu did not profile skips (`--launch-skip`); None: not known."""

    measured = _measured(row)

    def num(name: str, render, unit: str = "") -> str:
        value = row_value(row, name)
        if value is None:
            return why_empty(row, name) if measured else "not measured"
        if isinstance(value, str):  # a group whose launches differ says "(mixed)"
            return value
        return render(value, unit) if unit else render(value)

    count = row_value(row, "count") or 1
    duration = row_value(row, "duration_s")
    # Launches ncu did not profile have no time: the total is the others' (`≥`), the mean is over
    # the others.
    unprofiled = int(row_value(row, "not_profiled") or 0)
    timed = count - unprofiled
    lower = unprofiled > 0 and duration is not None
    time = [
        ("Total time", fmt.at_least(num("duration_s", fmt.seconds), lower)),
        ("Share of kernel time", num("pct_time", fmt.pct)),  # of the known time
        (
            "Launches",
            fmt.integer(count) + (f" ({fmt.integer(unprofiled)} not profiled)" if lower else ""),
        ),
    ]
    if duration is not None and timed > 1:
        time.append(
            (
                "Mean per launch" + (f" (of {fmt.integer(timed)} timed)" if lower else ""),
                fmt.seconds(duration / timed),
            )
        )
    time.append(("SM clock", num("sm_clock_hz", fmt.si, "Hz")))

    compute = [
        ("All FLOPs", num("flop", fmt.si, "FLOP")),
        ("FLOP/s", num("flop_per_s", fmt.si, "FLOP/s")),
    ]
    compute += [
        (f"{c.removeprefix('flop_').upper()} SIMT", num(c, fmt.si, "FLOP")) for c in SIMT_FLOP
    ]
    compute.append(("Tensor, all types", num("flop_tensor", fmt.si, "FLOP")))
    # Spelled as the table's Prec column and the sort list spell it (`TC fp16/acc16`), not a third
    # way.
    compute += [
        (fmt.precision(f"tensor_{d}"), num(f"flop_tensor_{d}", fmt.si, "FLOP"))
        for d in TENSOR_TYPES
        if row_value(row, f"flop_tensor_{d}")
    ]
    judged = _precision(row_value(row, "precision")) or (
        why_empty(row, "precision") if measured else "unknown"
    )
    compute += [
        ("Precision judged", judged),
        ("% of peak", num("pct_of_peak", fmt.pct) + _of_roof(row)),
        ("% of roof", num("pct_of_roof", fmt.pct) + _roof_is(row)),
        ("Attainable", num("attainable_flop_per_s", fmt.si, "FLOP/s")),
        ("Bound", _bound(row)),
    ]

    memory = [
        ("DRAM read", num("dram_read_bytes", fmt.si, "B")),
        ("DRAM write", num("dram_write_bytes", fmt.si, "B")),
        ("DRAM total", num("dram_bytes", fmt.si, "B")),
        ("DRAM bandwidth", num("dram_bytes_per_s", fmt.si, "B/s")),
        ("L2", num("l2_bytes", fmt.si, "B")),
        ("L1/TEX", num("l1_bytes", fmt.si, "B")),
        ("AI vs DRAM", num("ai_dram", _intensity)),
        ("AI vs L2", num("ai_l2", _intensity)),
        ("AI vs L1", num("ai_l1", _intensity)),
    ]

    launch = [
        ("Grid", fmt.text(row_value(row, "grid"))),
        ("Block", fmt.text(row_value(row, "block"))),
        ("Registers/thread", num("registers", fmt.integer)),
        ("Stream", num("stream", fmt.integer)),
        ("Device", num("device", fmt.integer)),
        ("Process", fmt.text(row_value(row, "process"))),
        # the ranges whole (a `/` in a name is no separator), else the group's label
        ("NVTX", fmt.text(stack_path(row_value(row, "nvtx_stack")) or row_value(row, "nvtx"))),
        ("First launch ID", num("launch_id", fmt.integer)),
        ("GPU", _gpu(row)),
    ]

    peak, bw = row_value(row, "peak_flop_per_s"), row_value(row, "peak_dram_bytes_per_s")
    ceilings = [
        ("Compute ceiling", num("peak_flop_per_s", fmt.si, "FLOP/s") + _datasheet_beside(row)),
        ("DRAM ceiling", num("peak_dram_bytes_per_s", fmt.si, "B/s")),
        ("L2 ceiling", num("peak_l2_bytes_per_s", fmt.si, "B/s")),
        ("L1 ceiling", num("peak_l1_bytes_per_s", fmt.si, "B/s")),
        ("Ridge point", f"{fmt.ratio(peak / bw)} FLOP/B" if peak and bw else "n/a"),
        ("Ceiling source", fmt.text(row_value(row, "peak_source")) or _no_source(row)),
    ]

    # An empty estimated/provenance means "all counted" only where ncu measured something.
    nothing = "nothing measured: ncu recorded no values"
    notes = [
        ("Status", fmt.text(row_value(row, "status")) or "ok"),
        ("To collect", _to_collect(row, measured, launches)),
        (
            "Estimated",
            fmt.text(row_value(row, "estimated"))
            or (_nothing_estimated(row) if measured else nothing),
        ),
        (
            "Provenance",
            fmt.text(row_value(row, "provenance"))
            or ("counted .sum metrics" if measured else nothing),
        ),
        ("Convention", FMA_CONVENTION),
    ]
    identity = [
        ("Name", fmt.text(row_value(row, "kernel_full")) or fmt.text(row_value(row, "kernel"))),
        ("Short name", fmt.text(row_value(row, "kernel"))),
    ]
    # The full name last: a template instantiation can fill a screen on its own.
    out = [
        ("Time", time),
        ("Compute", compute),
        ("Memory", memory),
        *ncu_sections(row),
        ("Launch configuration", launch),
        ("Ceilings", ceilings),
        ("Provenance", notes),
        ("Kernel", identity),
    ]
    # A label with nothing beside it (a .ncu-rep names no process) says nothing: left out, the
    # section kept.
    return [(title, [(label, value) for label, value in items if value]) for title, items in out]


_SPEED_OF_LIGHT = [
    ("SM (compute)", "sol_sm_pct"),
    ("Memory", "sol_memory_pct"),
    ("DRAM", "sol_dram_pct"),
    ("L2", "sol_l2_pct"),
    ("L1/TEX", "sol_l1_pct"),
]
_PIPES = [
    ("Tensor pipe", "pipe_tensor_pct"),
    ("Tensor pipe tcgen05", "pipe_tc_pct"),  # Blackwell's 5th-generation tensor core
    ("TMEM pipe", "pipe_tmem_pct"),  # Blackwell's tensor memory
    ("FMA pipe", "pipe_fma_pct"),
    ("ALU pipe", "pipe_alu_pct"),
    ("FP64 pipe", "pipe_fp64_pct"),
    ("FP16 pipe", "pipe_fp16_pct"),
    ("LSU pipe", "pipe_lsu_pct"),
    ("XU pipe", "pipe_xu_pct"),
    ("ADU pipe", "pipe_adu_pct"),
    ("CBU pipe", "pipe_cbu_pct"),
    ("TEX pipe", "pipe_tex_pct"),
    ("Uniform pipe", "pipe_uniform_pct"),
]
# The kinds of warp instruction ncu's full set counts per launch (INSTRUCTION_MIX), as the panel
# names them.
_INSTRUCTION_KINDS = [
    ("Global loads", "inst_global_ld"),
    ("Global stores", "inst_global_st"),
    ("Shared loads", "inst_shared_ld"),
    ("Shared stores", "inst_shared_st"),
    ("Local loads", "inst_local_ld"),
    ("Local stores", "inst_local_st"),
    ("Branches", "inst_branch"),
]


def ncu_sections(row: pd.Series) -> list[tuple[str, list[tuple[str, str]]]]:
    """ncu's own per-launch figures the report holds (speed of light, occupancy, waves, pipes), each
    section only where the report has some of it. A group's numbers are its launches' time-weighted
    means, and say so."""
    count = row_value(row, "count") or 1
    per = (
        [("Per launch", f"time-weighted mean of {fmt.integer(count)} launches")]
        if count > 1
        else []
    )

    def pcts(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Each % as ncu prints it, with a bar of it (the speed-of-light chart of NVIDIA's GUI, in
        cells)."""
        return [
            (label, f"{_percent(value):>6} {_pct_bar(value)}")
            for label, name in items
            if (value := row_value(row, name)) is not None
        ]

    out = []
    light = pcts(_SPEED_OF_LIGHT)
    if light:
        out.append(("Speed of light", per + light))  # % of peak, ncu's GPU Speed Of Light section
    chart = memory_chart(row)
    if chart:
        # ncu's Memory Workload Analysis chart, as edges between units
        out.append(("Memory chart", chart))
    occupancy = pcts(
        [("Achieved", "occupancy_achieved_pct"), ("Theoretical", "occupancy_theoretical_pct")]
    )
    limiter, blocks = row_value(row, "occupancy_limiter"), row_value(row, "occupancy_limit_blocks")
    if limiter is not None:
        allows = f" ({fmt.integer(blocks)} blocks/SM)" if isinstance(blocks, (int, float)) else ""
        occupancy.append(("Limited by", fmt.text(limiter) + allows))
    if row_value(row, "waves_per_sm") is not None:
        occupancy.append(("Waves per SM", fmt.ratio(row_value(row, "waves_per_sm"))))
    if occupancy:
        out.append(("Occupancy", per + occupancy))
    mix = instruction_mix(row)
    if mix:
        out.append(("Instruction mix", mix))
    pipes = pcts([("SM busy", "sm_busy_pct"), *_PIPES])
    if pipes:
        out.append(("Pipe utilisation", per + pipes))  # % of peak while the SM was active
    stalls = warp_stalls(row)
    if stalls:
        out.append(("Warp stalls, cycles per issued instruction", per + stalls))
    elif sampled := sampled_stalls(row):  # no warp state statistics: PC sampling's reasons
        out.append((SAMPLED_TITLE, sampled))
    missing = not_collected(row, {title for title, _ in out})
    if missing:
        out.append(("Not collected", missing))
    return out


def not_collected(row: pd.Series, shown: set[str]) -> list[tuple[str, str]]:
    """For a row profiled with some of ncu's sections but not all the panels need (`--set basic`):
    each panel it lacks and the ncu options that collect it. A row profiled with metrics alone
    (flopscope's roofline set) has the ncu rules panel's advice instead, and the Source page (`v`)
    says its own."""
    if not (_measured(row) and row_value(row, "sol_sm_pct") is not None):
        return []
    # Each panel by its title's first words (`Warp stalls`), its options beside it; a panel shown
    # from another section (stalls from PC sampling) is not lacking.
    heads = {title.split(",")[0] for title in shown}
    lacking = [
        (p.split(",")[0], section_options(p))
        for p in PANEL_SECTIONS
        if p.split(",")[0] not in heads and p != "Source"
    ]
    return [*lacking, ("", EVERY_PANEL)] if lacking else []


def instruction_mix(row: pd.Series) -> list[tuple[str, str]]:
    """Warp instructions executed and each kind's count and share of them as a bar (the rest:
    arithmetic, moves, conversions), the FLOPs counted beside, and the busiest pipe: an "FP32"
    kernel whose LSU pipe is the busiest waits on its loads, not its math."""
    executed = _number(row, "inst_executed")
    if executed is None:
        return []
    ipc = _number(row, "ipc_active")
    out = [
        (
            "Executed",
            f"{fmt.si(executed)} warp instructions" + (f", IPC {fmt.ratio(ipc)}" if ipc else ""),
        )
    ]
    known = 0.0
    for label, column in _INSTRUCTION_KINDS:
        count = _number(row, column)
        if count:
            known += count
            out.append((label, _share(count, executed)))
    if executed and known <= executed:
        out.append(("Other (math, ...)", _share(executed - known, executed)))
    flops = [(p, _number(row, f"flop_{p}")) for p in ("fp32", "fp64", "fp16", "tensor")]
    counted = ", ".join(
        f"{p.upper() if p != 'tensor' else 'tensor'} {fmt.si(n)}" for p, n in flops if n
    )
    if counted:
        out.append(("FLOPs", counted))
    busiest = max(
        ((label, v) for label, name in _PIPES if (v := _number(row, name)) is not None),
        key=lambda lv: lv[1],
        default=None,
    )
    if busiest is not None:
        out.append(("Busiest pipe", f"{busiest[0]}, {fmt.pct(busiest[1])} of its peak"))
    return out


def _number(row: pd.Series, name: str) -> float | None:
    value = row_value(row, name)
    return float(value) if isinstance(value, (int, float)) else None


def _share(count: float, executed: float) -> str:
    """`1.23 M  45.0% ████`: a kind's warp instructions and their share of all executed, as a
    bar."""
    fraction = count / executed if executed else 0.0
    return f"{fmt.si(count):>7} {fmt.pct(100 * fraction):>6} {fmt.bar(fraction, PCT_BAR)}"


def memory_chart(row: pd.Series) -> list[tuple[str, str]]:
    """The memory hierarchy as NVIDIA's chart draws it, edge by edge: kernel -> L1/TEX (requests,
    sectors per request, hit rate), local and shared memory (bank conflicts), L1/TEX <-> L2 and L2
    <-> DRAM (bytes each way, L2's hit rate), and the bandwidth each level reached against its peak.
    Empty where the report has no chart (`--set full` collects it)."""

    def v(name: str) -> float | None:
        value = row_value(row, name)
        return float(value) if isinstance(value, (int, float)) else None

    if v("mem_global_ld_requests") is None and v("mem_l2_sectors") is None:
        return []
    out = [
        ("Kernel → L1/TEX", _requests(v, "ld", "loads")),
        ("", _requests(v, "st", "stores")),
    ]
    local = [v("mem_local_ld_sectors"), v("mem_local_st_sectors")]
    if any(local):
        out.append(
            (
                "Local (spills)",
                f"{fmt.si(local[0] or 0)} load, {fmt.si(local[1] or 0)} store sectors",
            )
        )
    waves, conflicts = v("mem_shared_wavefronts"), v("mem_shared_bank_conflicts")
    if waves:
        share = (
            f" ({fmt.pct(100 * (conflicts or 0) / waves)} of wavefronts)"
            if conflicts is not None
            else ""
        )
        out.append(
            (
                "Shared memory",
                f"{fmt.si(waves)} wavefronts, {fmt.si(conflicts or 0)} bank conflicts{share}",
            )
        )
    out.append(
        (
            "L1/TEX ⇄ L2",
            (
                f"← {_bytes(v('mem_l2_to_l1_bytes'))} read, → {_bytes(v('mem_l1_to_l2_bytes'))}"
                " written"
            ),
        )
    )
    out.append(("L2", _l2(v)))
    out.append(
        (
            "L2 ⇄ DRAM",
            f"← {_bytes(v('dram_read_bytes'))} read, → {_bytes(v('dram_write_bytes'))} written",
        )
    )
    out += [
        (f"{title} bandwidth", _bandwidth(v, level))
        for title, level in (("L1/TEX", "l1"), ("L2", "l2"), ("DRAM", "dram"))
    ]
    return [(label, value) for label, value in out if value]


def _l2(v) -> str:
    """`6.85 M sectors, hit 99.5%`; empty where the report has no L2 sector count."""
    sectors = v("mem_l2_sectors")
    if sectors is None:
        return ""
    return f"{fmt.si(sectors)} sectors, {_hit(v('mem_l2_hit_sectors'), sectors)}"


def _requests(v, op: str, what: str) -> str:
    requests, sectors = v(f"mem_global_{op}_requests"), v(f"mem_global_{op}_sectors")
    if not requests:
        return f"no global {what}" if requests == 0 else ""
    per = f" ({fmt.ratio(sectors / requests)} sectors/request)" if sectors is not None else ""
    hits = f", {_hit(v(f'mem_global_{op}_hit_sectors'), sectors)}" if op == "ld" else ""
    return f"{fmt.si(requests)} global {what}{per}{hits}"


def _hit(hits: float | None, total: float | None) -> str:
    return (
        f"hit {fmt.pct(100 * hits / total)}" if hits is not None and total else "hit rate unknown"
    )


def _bytes(value: float | None) -> str:
    return fmt.si(value, "B") if value is not None else "?"


def _bandwidth(v, level: str) -> str:
    """`362 GB/s, 4.3% of 8.41 TB/s`: the level's bytes over the time, against its ceiling."""
    nbytes, duration, peak = v(f"{level}_bytes"), v("duration_s"), v(f"peak_{level}_bytes_per_s")
    if nbytes is None or not duration:
        return ""
    rate = nbytes / duration
    return f"{fmt.si(rate, 'B/s')}" + (
        f", {fmt.pct(100 * rate / peak)} of {fmt.si(peak, 'B/s')}" if peak else ""
    )


STALL_BAR = 16  # cells of the largest reason's bar


def warp_stalls(row: pd.Series) -> list[tuple[str, str]]:
    """ncu's warp state reasons, largest first, each as cycles per issued instruction, its share of
    all and a bar; then what the top stall (not `selected`, the issue itself) means and what usually
    helps."""
    values = [
        (r, float(v))
        for column, r in STALL_COLUMNS.items()
        if isinstance(v := row_value(row, column), float)
    ]
    # 0.00 says nothing
    values = sorted(((r, v) for r, v in values if v >= 0.005), key=lambda rv: -rv[1])
    if not values:
        return []
    total, top = sum(v for _, v in values), values[0][1]
    out = [
        (r.title, f"{v:6.2f} {100 * v / total:5.1f}% {fmt.bar(v / top, STALL_BAR)}")
        for r, v in values
    ]
    return out + top_stall([r for r, _ in values])


PCT_BAR = 20  # cells of a 100% bar


def _pct_bar(value) -> str:
    return fmt.bar(float(value) / 100, PCT_BAR) if isinstance(value, (int, float)) else ""


def _percent(value) -> str:
    """ncu's percentages to one decimal, as its own sections print them."""
    return value if isinstance(value, str) else fmt.pct(value)


def _of_roof(row: pd.Series) -> str:
    """` (at clock) of 67.2 TFLOP/s at SM 1.99 GHz`: the roof the % of peak is of (issue 22), and
    the peak and clock it is judged at: the kernel's own launches' clock, which need not be the
    run's (issue 41.2)."""
    if row_value(row, "pct_of_peak") is None:
        return ""
    roof = fmt.peak_roof(row_value(row, "peak_source"))
    peak, clock = row_value(row, "peak_flop_per_s"), row_value(row, "sm_clock_hz")
    at_clock = bool(peak and clock and "clock" in roof)
    if at_clock:  # `at clock`, `datasheet at clock`: said once, with the clock, after the peak
        roof = " + ".join(
            part.removesuffix("at clock").strip() or "report" for part in roof.split(" + ")
        )
    out = (f" ({roof})" if roof else "") + (f" of {fmt.si(peak, 'FLOP/s')}" if peak else "")
    return out + (f" at its SM clock {fmt.si(clock, 'Hz')}" if at_clock else "")


def _roof_is(row: pd.Series) -> str:
    """What the % of roof is of: for a memory-bound row, the bandwidth it reached at the level that
    bounds it over that level's ceiling (` of the L2 roof: 900 GB/s of 13.0 TB/s`); for a
    compute-bound one, its FLOP/s over its peak."""
    if row_value(row, "pct_of_roof") is None:
        return ""
    level = fmt.roof(row_value(row, "roof"))
    if level in ("dram", "l2", "l1"):
        nbytes, duration = row_value(row, f"{level}_bytes"), row_value(row, "duration_s")
        peak = row_value(row, f"peak_{level}_bytes_per_s")
        if nbytes is not None and duration and peak:
            rate = fmt.si(nbytes / duration, "B/s")
            return f" of the {fmt.ceiling(level)} roof: {rate} of {fmt.si(peak, 'B/s')}"
        return f" of the {fmt.ceiling(level)} roof"
    if level == "compute" and row_value(row, "peak_flop_per_s"):
        return f" of the compute roof: {fmt.si(row_value(row, 'peak_flop_per_s'), 'FLOP/s')}"
    return ""


def _to_collect(row: pd.Series, measured: bool, launches: pd.DataFrame | None) -> str:
    if not measured:
        return reprofile_advice(row, launches)
    cc = row_value(row, "cc")  # the tensor counters to name are this GPU's
    option = collecting(
        [c for c in COLLECTED if row_value(row, c) is None], [] if cc is None else [cc]
    )
    # a GPU whose tensor counters flopscope does not know
    if option and ASK_FOR_TENSOR_COUNTERS in option:
        option += f" ({WHICH_TENSOR_COUNTERS})"
    if option:  # one line for all: flopscope's own option collects them as ncu's would
        return option.replace("ncu --metrics", FLOPSCOPE_METRICS, 1)
    return "nothing: every counter flopscope reads is here"


# What a derived number is computed from: where one is empty, the first of these that is empty says
# why.
_NEEDS = {
    "flop_per_s": ("flop", "duration_s"),
    "dram_bytes_per_s": ("dram_bytes", "duration_s"),
    "ai_dram": ("flop", "dram_bytes"),
    "ai_l2": ("flop", "l2_bytes"),
    "ai_l1": ("flop", "l1_bytes"),
    "pct_of_peak": ("flop", "duration_s", "peak_flop_per_s"),
    "attainable_flop_per_s": ("flop", "dram_bytes", "peak_flop_per_s", "peak_dram_bytes_per_s"),
    "pct_of_roof": ("duration_s", "flop", "dram_bytes", "peak_flop_per_s", "peak_dram_bytes_per_s"),
    "bound": ("flop", "dram_bytes", "peak_flop_per_s", "peak_dram_bytes_per_s"),
    "dram_bytes": ("dram_read_bytes",),
    "flop": FLOP_PARTS,
    "precision": FLOP_PARTS,
}
_JUDGED_BY_FLOPS = {
    "precision",
    "pct_of_peak",
    "attainable_flop_per_s",
    "peak_flop_per_s",
    "pct_of_roof",
    "bound",
}
_NO_CEILING = {
    "peak_flop_per_s": "none: no peak for this GPU (pass --gpu NAME to judge it against one)",
    "peak_dram_bytes_per_s": (
        "none: no DRAM peak for this GPU (pass --gpu NAME to judge it against one)"
    ),
    "peak_l2_bytes_per_s": "none: the report has no L2 peak counter (ncu's --set full has it)",
    "peak_l1_bytes_per_s": "none: ncu records no L1 peak rate, only its % of peak",
}


def why_empty(row: pd.Series, name: str) -> str:
    """Why a measured row has no `name`, in words: integer MMA has no FLOP ceiling, a kernel without
    FLOPs is judged by memory, a counter was not collected (the To collect line gives the one option
    for all), a GPU has no known peak."""
    if name in _JUDGED_BY_FLOPS and _integer_mma(row):
        return "none: integer MMA (IMMA) work has no FLOP ceiling"
    if name in _JUDGED_BY_FLOPS - {"pct_of_roof", "bound"} and row_value(row, "flop") == 0:
        return "none: no FLOPs (judged by memory: % of roof, Bound)"
    if name in COLLECTED or name in ("dram_read_bytes", "dram_write_bytes", "sm_clock_hz"):
        return "not collected (To collect, below)"
    if name in _NO_CEILING:
        return _NO_CEILING[name]
    for need in _NEEDS.get(name, ()):
        if row_value(row, need) is None:
            why = why_empty(row, need)
            return why if why.startswith("unknown") else f"unknown: {why}"
    if name == "bound" and row_value(row, "flop") == 0:
        return "none: no FLOPs and no bytes moved"
    return "unknown"


def _datasheet_beside(row: pd.Series) -> str:
    """A datasheet ceiling scaled to the launch's measured clock, with NVIDIA's own figure beside
    it, so that 1.07 PFLOP/s above the datasheet's 989 T reads as the faster clock it is, not as a
    bug."""
    gpu, name = (
        find_gpu(fmt.text(row_value(row, "gpu"))),
        fmt.text(row_value(row, "precision")).split("+")[0],
    )
    if (
        "datasheet" not in fmt.text(row_value(row, "peak_source"))
        or gpu is None
        or not name
        or math.isnan(gpu.peak(name))
    ):
        return ""
    clock, quoted = row_value(row, "sm_clock_hz"), gpu.clock_hz(name)
    scaled = (
        f", x {fmt.si(clock, 'Hz')} measured / {fmt.si(quoted, 'Hz')}" if clock and quoted else ""
    )
    return f" (datasheet {fmt.si(gpu.peak(name), 'FLOP/s')}{scaled})"


def row_ceilings(row: pd.Series, ceilings: list[Ceiling]) -> list[Ceiling]:
    """The ceilings the row's own numbers use (its launches' clock and peaks), for its plot: the
    run's are at the run's clock, and a plot drawn against them disagreed with the % of peak beside
    it (975 T vs 1.07 P)."""
    gpu = fmt.text(row_value(row, "gpu"))
    mine = [c for c in ceilings if not c.gpu or c.gpu == gpu] or ceilings
    precision, clock = (
        fmt.text(row_value(row, "precision")).split("+")[0],
        row_value(row, "sm_clock_hz"),
    )
    out = []
    for c in mine:
        value = c.value
        if c.bandwidth:
            value = row_value(row, f"peak_{c.name}_bytes_per_s") or value
        elif c.name == precision and row_value(row, "peak_flop_per_s"):
            value = row_value(row, "peak_flop_per_s")
        elif clock and not math.isnan(c.sm_clock_hz):
            value = c.value * clock / c.sm_clock_hz  # at the launch's clock, as its own peak is
        out.append(dataclasses.replace(c, value=float(value), sm_clock_hz=clock or c.sm_clock_hz))
    return out


def _integer_mma(row: pd.Series) -> bool:
    value = row_value(row, "integer_mma")
    return value is not None and bool(value)


def _no_source(row: pd.Series) -> str:
    if _integer_mma(row):
        return "none: integer MMA (IMMA) work has no FLOP ceiling"
    return "none: pass --gpu NAME"


def _nothing_estimated(row: pd.Series) -> str:
    """`nothing: all counted` only where every counter is there; a row lacking some says so."""
    absent = [c for c in COLLECTED if row_value(row, c) is None]
    if not absent:
        return "nothing: all counted"
    if len(absent) == len(COLLECTED):
        return (
            "nothing, and nothing counted: no counter flopscope reads is here (To collect, above)"
        )
    return f"nothing; {len(absent)} of {len(COLLECTED)} counters not collected (To collect, above)"


def _measured(row: pd.Series) -> bool:
    """False for a launch ncu recorded no values for (a group is that only if all its launches
    are)."""
    return not (fmt.text(row_value(row, "status")) or "ok").startswith("not profiled")


def _precision(label: object) -> str:
    """The table's short spelling, and the canonical label (--json's, export's) where it differs:
    `TC fp16/acc16+TC fp16 (tensor_fp16_acc16+tensor_fp16)`."""
    short = fmt.precision(label)
    return short if short == fmt.text(label) else f"{short} ({label})"


def _bound(row: pd.Series) -> str:
    """`compute`, or `memory (L2 roof)`: the ceiling of the hierarchical roofline that is lowest for
    it."""
    bound, roof = fmt.text(row_value(row, "bound")), row_value(row, "roof")
    return (
        f"{bound} ({fmt.roof(roof)} roof)"
        if bound == "memory" and fmt.roof(roof)
        else bound or why_empty(row, "bound")
    )


def _intensity(value: float) -> str:
    return f"{fmt.ratio(value)} FLOP/B"


def _gpu(row: pd.Series) -> str:
    """`NVIDIA A100 (CC 8.0)`; a report without the GPU's name (details CSV) says unknown, not a
    blank."""
    name, cc = fmt.text(row_value(row, "gpu")) or "unknown", fmt.text(row_value(row, "cc"))
    return f"{name} (CC {cc})" if cc else name


def section_table(title: str, items: list[tuple[str, str]]) -> Table:
    heading = Text(title, style="bold") if title else None  # none in a panel, whose title says it
    table = Table(box=None, show_header=False, title=heading, title_justify="left", pad_edge=False)
    table.add_column("what", no_wrap=True, style="dim")
    table.add_column("value", overflow="fold")
    for label, value in items:
        # Text: never markup; escapes: never a terminal code
        table.add_row(Text(label), Text(display_text(value)))
    return table
