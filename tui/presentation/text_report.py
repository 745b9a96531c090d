"""The non-interactive kernel table (rich) and its JSON twin, for terminals and scripts."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from rich.console import Console, Group
from rich.text import Text

from ...core import FMA_CONVENTION, Report, all_gpus
from ...core.common import is_missing
from ...core.export import json_ready, records, run_meta
from ...core.report import DeviceJudgement
from ...core.table import FLOP_PARTS, INTEGER, SIMT_FLOP, Ceiling, missing_fix
from ...core.table.columns import NOT_WRITTEN
from . import format as fmt
from .blocks import Block, lines
from .columns import (
    EXTRA_COLUMNS,
    Column,
    chosen_columns,
    is_number_column,
    shows_speed_of_light,
    table_columns,
)
from .messages import print_warning, say  # noqa: F401 (the CLI imports them here)

# (the CLI imports them here)
from .tables import Spec, TextTable, console, fitted_table, print_hidden  # noqa: F401


@dataclass(frozen=True)
class Header:
    """The parts of a report's header, each a list of items: the CLI prints them as lines, the app
    wraps them between items (so `FLOP %Peak 0.3%` never splits) and arranges them to fit 80
    columns."""

    gpu: str  # `NVIDIA A100 80GB PCIe`, or `unknown GPU (CC 8.0)`
    cc: str  # ` (CC 8.0)`, or "" when unknown or already in `gpu`
    found: str  # what named the GPU: `report`, `--gpu`, ...
    # the database GPU whose ceilings --gpu put in place of those of the device the report names
    against: str
    source: str
    format: str
    launches: str  # `105 launches`
    totals: list[str]  # `Kernel time 1.83 ms`, `FLOP %Peak 40.0%`, ...
    flop: str  # `FLOP 2.36 M`
    # `Ceilings:`, `FP32 14.4 TFLOP/s,`, ..., `from <source>`: separators included
    ceilings: list[str]
    no_datasheet: str  # "" unless the GPU has no datasheet entry
    not_profiled: str  # "" unless ncu recorded nothing for some launches
    # "" unless the profile was stored although the program failed or the report is partial
    warning: str
    # "" unless --gpu named a GPU whose datasheet set no ceiling (the report's counters did)
    unused_gpu: str

    def named(self, say_report: bool = True) -> str:
        """`, named by --gpu`; where --gpu overrode the ceilings of a GPU the report names, both: `,
        judged against NVIDIA L4 ceilings (--gpu)`, so the header never names one GPU and uses
        another's."""
        if self.against:
            return f", judged against {self.against} ceilings ({self.found})"
        return (
            f", named by {self.found}"
            if self.found and (say_report or self.found != "report")
            else ""
        )


# The header's words for RunSummary's figures (their --json keys): the run's FLOP/s as a share of
# its peak (the table's %Peak over the whole run), the share of kernel time in kernels doing
# arithmetic, and the run's DRAM bytes/s as a share of the DRAM peak.
RUN_FIGURES = {
    "flops_efficiency": "FLOP %Peak",
    "compute_efficiency": "arith. time",
    "bandwidth_efficiency": "DRAM %Peak",
}


def header(report: Report) -> Header:
    meta, s, judged = report.meta, report.summary(), report.gpu_judgement()
    cc = f" (CC {judged.compute_capability})" if judged.compute_capability else ""
    # several GPUs: each device says whose ceilings judge it, --gpu fitting only some of them
    gpu = " + ".join(map(_device, judged.devices)) or judged.gpu or f"unknown GPU{cc}"
    # Each run-level figure named for what it is (docs/method.md), never an "efficiency": `compute
    # eff 99.2%` beside `FLOPS eff 1.2%` read as near-perfect, though it is only the share of time
    # in kernels that compute.
    totals = [
        f"Kernel time {_time(s)}",
        f"{RUN_FIGURES['flops_efficiency']} {fmt.pct(100 * s.flops_efficiency) or 'n/a'}",
        f"{RUN_FIGURES['compute_efficiency']} {fmt.pct(100 * s.compute_efficiency) or 'n/a'}",
        f"{RUN_FIGURES['bandwidth_efficiency']} {fmt.pct(100 * s.bandwidth_efficiency) or 'n/a'}",
    ]
    # the shares cannot cover those
    if s.unknown_time_launches and not math.isnan(s.time_counted_s):
        known = s.launches - s.unknown_time_launches
        totals.append(
            f"(shares of the {fmt.integer(known)} launch{'' if known == 1 else 'es'} of known time)"
        )
    return Header(
        gpu=gpu,
        cc=cc if judged.gpu and not judged.devices else "",
        found=judged.found,
        against=judged.against,
        unused_gpu=(
            f"--gpu {judged.unused_option} not used: the report's own peak counters (measured on"
            " this GPU) set every ceiling."
            if judged.unused_option
            else ""
        ),
        source=meta.source,
        format=meta.format,
        launches=f"{fmt.integer(meta.launches)} launch{'' if meta.launches == 1 else 'es'}",
        totals=totals,
        flop=f"FLOP {_flop(s)}",
        ceilings=_ceilings(report) if report.ceilings() else [],
        no_datasheet=_no_datasheet(report),
        not_profiled=(
            f"{fmt.integer(s.not_profiled)} launch(es) without values (ncu failed to profile them);"
            " kept, marked."
            if s.not_profiled
            else ""
        ),
        warning=(
            f"Warning: {meta.warning}; the numbers may not be the program's whole work."
            if meta.warning
            else ""
        ),
    )


def header_blocks(report: Report) -> list[Block]:
    """The CLI's header: GPU and file (bold), ceilings with their sources, run-level figures,
    notes."""
    h = header(report)
    blocks = [
        Block([f"{h.gpu}{h.cc}{h.named()} ·"], "bold"),
        Block([h.source, f"({h.format}, {h.launches})"], "bold", sep=" ", join=True),
        Block([h.no_datasheet]),
        Block(h.ceilings, sep=" "),
        Block([h.totals[0], h.flop, *h.totals[1:]]),
        Block([h.not_profiled]),
        Block([h.warning]),
        Block([h.unused_gpu]),
    ]
    return [block for block in blocks if any(block.items)]


def header_lines(report: Report, width: int = 200) -> list[str]:
    """The header laid out for `width` columns, breaking only between items (never inside `FLOP
    %Peak 0.3%`)."""
    return [line.plain for line in lines(header_blocks(report), width)]


def _no_datasheet(report: Report) -> str:
    if isinstance(report.judged_by, dict):
        return " ".join(
            f"No datasheet ceilings for {name}: its launches have only the report's own peak"
            " counters."
            for name, gpu in report.judged_by.items()
            if gpu is None
        )
    if report.gpu is not None:
        return ""
    cc = str(report.meta.compute_capability)
    same = [g.key for g in all_gpus() if g.compute_capability == cc]
    of_cc = f"; of CC {cc}: {', '.join(same[:6])}" if same else ""
    return f"No datasheet ceilings for this GPU: pass --gpu NAME (see `flopscope gpus`{of_cc})."


def _ceilings(report: Report) -> list[str]:
    """`Ceilings at SM 1.94 GHz: FP32 14.4 TFLOP/s, FP64 7.21 TFLOP/s, DRAM 1.93 TB/s from
    <source>`: the one SM clock the GPU's FLOP ceilings are taken at, named once; each source said
    once, after the ceilings it gave (sources differ when a datasheet fills in what the report
    lacks); one such group per GPU."""
    ceilings = report.ceilings()
    gpus = list(dict.fromkeys(c.gpu for c in ceilings))
    items = []
    for n, gpu in enumerate(gpus):
        mine = [c for c in ceilings if c.gpu == gpu]
        by_source: dict[str, list[str]] = {}
        for c in mine:
            by_source.setdefault(c.source, []).append(
                f"{fmt.ceiling(c.name)} {fmt.si(c.value, 'B/s' if c.bandwidth else 'FLOP/s')}"
                + _datasheet_figure(report, c)
            )
        clock = next((c.sm_clock_hz for c in mine if c.clock == "run"), math.nan)
        # The run's one SM clock (time-weighted over its launches): every FLOP ceiling below is
        # taken at it.
        at = f" at SM {fmt.si(clock, 'Hz')}" if not math.isnan(clock) else ""
        items.append(f"Ceilings, {gpu}{at}:" if len(gpus) > 1 and gpu else f"Ceilings{at}:")
        for i, (source, values) in enumerate(by_source.items()):
            last = i == len(by_source) - 1 and n == len(gpus) - 1
            items += [f"{v}," for v in values[:-1]] + [
                values[-1],
                f"from {source}{'' if last else ';'}",
            ]
    return items


def _datasheet_figure(report: Report, ceiling: Ceiling) -> str:
    """NVIDIA's own figure beside a datasheet peak scaled to the measured clock: `TC BF16 1.07
    PFLOP/s (datasheet 989 T at 1.83 GHz)`, so that a ceiling above the datasheet's reads as the
    faster clock it is."""
    judged = report.judged_by
    gpu = judged.get(ceiling.gpu) if isinstance(judged, dict) else judged
    if (
        gpu is None
        or ceiling.bandwidth
        or "datasheet" not in ceiling.source
        or math.isnan(ceiling.sm_clock_hz)
    ):
        return ""
    quoted = gpu.peak(ceiling.name)
    return (
        ""
        if math.isnan(quoted)
        else f" (datasheet {fmt.si(quoted)} at {fmt.si(gpu.clock_hz(ceiling.name), 'Hz')})"
    )


def _device(d: DeviceJudgement) -> str:
    """`NVIDIA A100-PCIE-40GB (CC 8.0, 2 launches, judged against NVIDIA A100-SXM4-80GB ceilings
    (--gpu))`: one device of a file with launches on several GPUs; whose ceilings only where --gpu
    gave them."""
    return (
        f"{d.name} ("
        + (f"CC {d.compute_capability}, " if d.compute_capability else "")
        + f"{d.launches} launch{'es' if d.launches != 1 else ''}"
        + (f", judged against {d.against} ceilings (--gpu)" if d.against else "")
        + ")"
    )


def _time(s) -> str:
    """The run's kernel time; where some launches' is unknown (not profiled, say), the known part as
    a lower bound."""
    value, lower_bound = s.known("total_time_s")
    return fmt.at_least(fmt.seconds(value), lower_bound) or "n/a"


def _flop(s) -> str:
    """The run's FLOPs; where some launches' are unknown, the counted part as a lower bound and what
    it leaves out: a share of the known kernel time, and launches whose time is unknown too (those
    are in no share, so a `≥` never stands beside `0.0%`). The missing counters are named on their
    own line."""
    if not math.isnan(s.total_flop):
        return fmt.si(s.total_flop)
    untimed = s.unknown_flop_untimed_launches
    # Nothing counted and all time unknown: `≥ 0` would be true and say nothing (idle tensor pipes
    # count 0).
    nothing = s.flop_counted == 0 and s.unknown_flop_time_share == 1 and not untimed
    if math.isnan(s.flop_counted) or nothing:
        return "n/a"
    left_out = (
        [f"{fmt.pct(100 * s.unknown_flop_time_share)} of kernel time"]
        if s.unknown_flop_time_share > 0
        else []
    )
    if untimed:
        left_out.append(
            f"{fmt.integer(untimed)} launch{'' if untimed == 1 else 'es'} of unknown time"
        )
    return f"≥ {fmt.si(s.flop_counted)} (unknown for {' and '.join(left_out)})"


# The counters the kernel table's columns are computed from, as the table's hint names them.
_TABLE_COUNTERS = {
    "duration_s": "time",
    **{c: f"{c.removeprefix('flop_').upper()} FLOPs" for c in SIMT_FLOP},
    "flop_tensor": "tensor FLOPs",
    "dram_bytes": "DRAM bytes",
}


def missing_hint(report: Report) -> str | None:
    """One line for the app's header when counters the table needs were not collected (a `basic`
    set): `FLOPs and DRAM bytes not collected: ncu --metrics ...`, the option from core (the
    report's own: the counters its GPU has)."""
    gaps = {m.column: m for m in report.missing if m.column in _TABLE_COUNTERS}
    if not gaps:
        return None
    names = [_TABLE_COUNTERS[c] for c in _TABLE_COUNTERS if c in gaps]
    if all(c in gaps for c in FLOP_PARTS):
        names = [n for n in names if not n.endswith("FLOPs")]
        names.insert(1 if "duration_s" in gaps else 0, "FLOPs")
    what = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
    launches = max(m.launches for m in gaps.values())
    # the count only when some launches have them: the line is cut at 80
    total = report.meta.launches
    of = f" ({fmt.integer(launches)} of {fmt.integer(total)} launches)" if launches < total else ""
    return f"{what} not collected{of}: {missing_fix(report.missing, gaps)}"


def printed_kernel_table(
    rows: pd.DataFrame,
    width: int,
    by: str = "name",
    gpus: bool = False,
    sort: str | None = None,
    chosen: list[str] | None = None,
) -> tuple[TextTable, list[str]]:
    """The kernel table as the app shows it for this grouping (its first column says what a row is;
    `gpus`: the next one says which GPU, for a file with launches on several). The `sort` column is
    always shown, as in the app: one the table lacks (FP32 FLOP) joins it last, and a narrow
    terminal never drops it (rows sorted by values not shown read as shuffled). `chosen`: the
    columns `--columns` named, in its order."""
    columns = chosen_columns(
        table_columns(by, gpus, shows_speed_of_light(rows)),
        chosen,
        lambda k: is_number_column(rows, k),
    )
    if sort and sort not in {c.name for c in columns}:
        columns.append(
            EXTRA_COLUMNS.get(sort)
            or Column(
                sort,
                sort,
                fmt.integer if sort in INTEGER else fmt.text,
                0,
                len(sort),
                numeric=sort in INTEGER,
            )
        )
    cells = [
        _marked(
            [
                fmt.at_least(
                    col.render(values.get(col.name)),
                    bool(col.at_least) and fmt.flagged(values.get(col.at_least)),
                )
                for col in columns
            ],
            values.get("status"),
        )
        for values in (row._asdict() for row in rows.itertuples(index=False))
    ]
    return fitted_table(specs(columns, sort), cells, width)


def specs(columns: list[Column], sort: str | None = None) -> list[Spec]:
    """The app's columns as the printed table's: same titles, alignment and priorities (`sort` never
    drops)."""
    return [
        Spec(col.title, col.numeric, 0 if col.name == sort else col.priority) for col in columns
    ]


def _marked(cells: list[str], status: object) -> list[str]:
    """A row ncu recorded nothing for says so in its first blank cell (Time), as the header
    promises."""
    if is_missing(status) or status == "ok":
        return cells
    blank = next((i for i in range(1, len(cells)) if not cells[i]), None)
    return cells if blank is None else [*cells[:blank], "not profiled", *cells[blank + 1 :]]


def print_report(
    report: Report,
    rows: pd.DataFrame,
    console: Console,  # noqa: F811
    by: str = "name",
    sort: str | None = None,
    columns: list[str] | None = None,
) -> None:
    console.print(Group(*lines(header_blocks(report), console.width)), no_wrap=True)
    console.print()
    table, hidden = printed_kernel_table(
        rows, console.width, by, isinstance(report.judged_by, dict), sort, columns
    )
    console.print(table)
    console.print(Text(f"{fmt.integer(len(rows))} row(s) · {FMA_CONVENTION}", style="dim"))
    print_hidden(console, hidden)


def report_json(report: Report, rows: pd.DataFrame) -> dict:
    """Meta and rows as strict JSON values: null for what is unknown or not finite, never NaN or
    Infinity."""
    # the `nvtx` label stands for the stack
    rows = rows.drop(columns=[c for c in NOT_WRITTEN if c in rows])
    # records() already writes null
    return {"meta": json_ready(run_meta(report)), "rows": records(rows)}
