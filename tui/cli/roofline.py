"""`flopscope roofline PATH -o roof.svg`: the Roofline screen's picture (the plot, the strip of rows
off it and the legend, under a title naming the run, its GPU and the roof), written where the
command runs: over SSH, on the node, its path printed."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from ...core.table import ROOFS
from ..app.widgets.roofline_plot import RooflinePlot, roofline_from
from ..presentation.tables import console
from .view import _read, save_picture


def cmd_roofline(args) -> int:
    report = _read(args)
    rows = report.group(args.by, time_order=False)
    data = roofline_from(rows, report.ceilings(), name="nvtx" if args.by == "nvtx" else "kernel")
    width, height = args.size
    plot = RooflinePlot(data, None)
    plot.kernel = None
    drawn = plot.draw(width, height - 1, color=True)
    out = console(record=True)
    out.width = width
    roof = ROOFS[report.roof.kind] if report.roof.kind != "measured" else report.roof.source
    gpu = report.gpu_judgement().gpu or "unknown GPU"
    title = f"{Path(report.meta.source).name} · {gpu} · by {args.by} · roof: {roof}"
    out.print(Text(title, style="bold", no_wrap=True, overflow="ellipsis"))
    out.print(drawn, no_wrap=True, crop=True)
    save_picture(out, args.output, f"flopscope roofline {Path(report.meta.source).name}")
    return 0
