"""The non-interactive kernel table (rich) and its JSON twin, for terminals and scripts."""

from __future__ import annotations

import shutil

import pandas as pd
from flopscope.core import FMA_CONVENTION, Report
from flopscope.core.export import records
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from . import format as fmt
from .columns import KERNEL_TABLE, fit


def console() -> Console:
    """Rich console for the CLI tables; piped output keeps a wide table instead of rich's 80-column default."""
    return Console(highlight=False, width=shutil.get_terminal_size((160, 24)).columns)


def header_lines(report: Report) -> list[str]:
    """GPU, ceilings with their sources, and run-level figures: shared by the CLI and the app."""
    meta, s = report.meta, report.summary()
    gpu = meta.get("gpu") or "unknown GPU"
    cc = f" (CC {meta['compute_capability']})" if meta.get("compute_capability") else ""
    found = f", named by {meta['gpu_source']}" if meta.get("gpu_source") else ""
    lines = [f"{gpu}{cc}{found} · {meta['source']} ({meta['format']}, {meta['launches']} launches)"]
    if report.gpu is None:
        lines.append("No datasheet ceilings for this GPU: pass --gpu NAME (see `flopscope gpus`).")
    ceilings = report.ceilings()
    if ceilings:
        parts = [f"{c.name.upper()} {fmt.si(c.value, 'B/s' if c.name == 'dram' else 'FLOP/s')} ({c.source})"
                 for c in ceilings]
        lines.append("Ceilings: " + "; ".join(parts))
    lines.append(
        f"Kernel time {fmt.seconds(s.total_time_s) or 'n/a'} · FLOP {_flop(s)} · "
        f"FLOPS eff {fmt.pct(100 * s.flops_efficiency) or 'n/a'} · "
        f"compute eff {fmt.pct(100 * s.compute_efficiency) or 'n/a'} · "
        f"bandwidth eff {fmt.pct(100 * s.bandwidth_efficiency) or 'n/a'}"
        + (f" · utilization {fmt.pct(100 * s.utilization)}" if s.utilization == s.utilization else "")
    )
    if s.not_profiled:
        lines.append(f"{s.not_profiled} launch(es) without values (ncu failed to profile them); kept, marked.")
    return lines


def _flop(s) -> str:
    """The run's FLOPs; where some launches' are unknown, the counted part as a lower bound and how much
    kernel time is unaccounted for (the missing counters are named on their own line)."""
    if s.total_flop == s.total_flop:
        return fmt.si(s.total_flop)
    if s.flop_counted == s.flop_counted and s.unknown_flop_time_share == s.unknown_flop_time_share:
        return f"≥ {fmt.si(s.flop_counted)} (unknown for {fmt.pct(100 * s.unknown_flop_time_share)} of kernel time)"
    return "n/a"


def missing_lines(report: Report) -> list[str]:
    return [f"{report.meta['source']}: {m.column} not collected for {m.launches} launch(es); "
            f"collect it with `{m.fix()}`" for m in report.missing]


def rich_table(rows: pd.DataFrame, width: int) -> Table:
    columns = fit(KERNEL_TABLE, width)
    table = Table(box=None, header_style="bold", pad_edge=False, expand=False)
    for col in columns:
        table.add_column(col.title, justify="right" if col.numeric else "left",
                         no_wrap=True, overflow="ellipsis", max_width=None if col.numeric else max(20, width // 3))
    for row in rows.itertuples(index=False):
        values = row._asdict()
        # Text, not markup: kernel names like `f<T>[with T = float]` must print verbatim.
        table.add_row(*(Text(col.render(values.get(col.name))) for col in columns))
    return table


def print_report(report: Report, rows: pd.DataFrame, console: Console) -> None:
    head = [Text(line, style="bold" if i == 0 else "") for i, line in enumerate(header_lines(report))]
    console.print(Group(*head))
    console.print()
    console.print(rich_table(rows, console.width))
    console.print(Text(f"{len(rows)} row(s) · {FMA_CONVENTION}", style="dim"))


def report_json(report: Report, rows: pd.DataFrame) -> dict:
    meta = dict(report.meta)
    meta["summary"] = report.summary().as_dict()
    meta["ceilings"] = [c.__dict__ for c in report.ceilings()]
    return {"meta": meta, "rows": records(rows)}
