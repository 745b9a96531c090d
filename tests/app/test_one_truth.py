"""Issue 41.1 and 41.2: every kernel on the Roofline screen, `r` on the cursor's kernel, and one
peak per kernel across the views.

Before: `r` on the demo's first row (a copy, 0 FLOP, 15.8% of kernel time) opened on another kernel,
the 7 rows without FLOPs (34.7% of the time) were drawn nowhere, and the Kernel screen's 28.5% of a
980 TFLOP/s peak sat under a roof drawn at 1.07 PFLOP/s (the run's ceiling, at another clock)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from flopscope.tui.app.screens.roofline import RooflineScreen, describe
from flopscope.tui.app.widgets.roofline_plot import (
    PLOT,
    STRIP,
    RooflinePlot,
    own_roof,
    roofline_from,
)
from flopscope.tui.presentation import format as fmt
from flopscope.tui.presentation.kernel_sections import sections

from ..conftest import settle
from ..helpers.app import make_app, ready, screen_lines
from ..helpers.real_files import DEMO, file_id, real_files, report_of

PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def number(text: str) -> float:
    """The first number a screen prints, with its SI prefix: `980 TFLOP/s (...)` -> 9.8e14, `28.5%
    ...` -> 28.5."""
    value, prefix = re.match(r"\s*([\d.]+)\s*([kMGTPE]?)", text).groups()
    return float(value) * PREFIX[prefix]


def kernel_screen(row: pd.Series) -> dict[str, str]:
    return {label: value for _, items in sections(row) for label, value in items}


def single_gpu(report) -> bool:
    return len({c.gpu for c in report.ceilings()}) <= 1


@pytest.mark.parametrize("path", real_files(), ids=file_id)
def test_every_row_is_drawn_somewhere_and_the_legend_counts_where(path):
    report = report_of(path)
    if not single_gpu(report):
        pytest.skip(
            "launches on several GPUs: the screen draws one GPU at a time"
            " (tests/cli/test_two_gpu_capture.py)"
        )
    rows = report.group("name")
    data = roofline_from(rows, report.ceilings())
    # each row once, none left out
    assert sorted(p.position for p in data.kernels) == list(range(len(rows)))
    # Where each row goes, from its own sums: FLOPs and DRAM bytes both positive on the log-log
    # plot, else by its % of roof on the strip, else nowhere (nothing known to place it by).
    flop, dram = rows["flop"].to_numpy(dtype=float), rows["dram_bytes"].to_numpy(dtype=float)
    duration = rows["duration_s"].to_numpy(dtype=float)
    plotted = (flop > 0) & (dram > 0) & (duration > 0)
    strip = ~plotted & (rows["pct_of_roof"].to_numpy(dtype=float) > 0)
    assert {p.position for p in data.kernels if p.place == PLOT} == set(np.flatnonzero(plotted))
    assert {p.position for p in data.kernels if p.place == STRIP} == set(np.flatnonzero(strip))
    if data.others:
        from flopscope.tui.app.widgets.roofline_plot import legend

        where = next(text for text, _ in legend(data, None) if " plotted" in text)
        assert where.startswith(f"{int(plotted.sum())} plotted")
        assert (f"{int(strip.sum())} on the strip" in where) == bool(strip.any())


@pytest.mark.parametrize("path", real_files(), ids=file_id)
def test_the_kernel_screens_pct_is_its_flops_over_the_roof_drawn_for_it(path):
    """For every row: the Kernel screen's % of peak is its FLOP/s over its compute ceiling as
    printed there, and the roof the Roofline screen draws for that kernel is that ceiling: a run's
    ceiling within 0.5%, else the kernel's own, drawn and named beside its %."""
    report = report_of(path)
    if not single_gpu(report):
        pytest.skip("launches on several GPUs: tests/cli/test_two_gpu_capture.py")
    rows = report.group("name")
    data = roofline_from(rows, report.ceilings())
    judged = 0
    for index, p in enumerate(data.kernels):
        shown = kernel_screen(rows.iloc[p.position])
        if p.place != PLOT or not shown["% of peak"][0].isdigit():
            continue
        pct, rate, ceiling = (number(shown[k]) for k in ("% of peak", "FLOP/s", "Compute ceiling"))
        # three printed figures
        assert pct == pytest.approx(100 * rate / ceiling, rel=0.015, abs=0.06), shown
        drawn = own_roof(data, data.points.index(p))
        text = " ".join(part.plain for part in describe(data, index).renderables)
        assert f"{fmt.pct(p.pct_of_peak)} of" in text and shown["% of peak"].startswith(
            fmt.pct(p.pct_of_peak)
        )
        # a run's ceiling is its own: within 0.5% of what the Kernel screen prints
        if math.isnan(drawn):
            assert any(c.value == pytest.approx(ceiling, rel=0.01) for c in data.compute), (
                shown,
                data.compute,
            )
        else:  # its own roof, drawn for it, printed as the Kernel screen prints it
            assert (
                shown["Compute ceiling"].startswith(fmt.si(drawn, "FLOP/s"))
                and fmt.si(drawn, "FLOP/s") in text
            )
        judged += 1
    if not judged:
        pytest.skip(f"{path.name}: no plotted row has a % of peak (no FLOP ceiling or no FLOPs)")


async def test_r_opens_on_the_cursors_kernel_even_without_flops():
    """The demo's first row is a copy (0 FLOP): `r` selects it, on the strip, with the bandwidth its
    % is of."""
    report = report_of(DEMO)
    launches = report.kernels
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await ready(app, pilot)
        first = table.rows_frame().iloc[0] if hasattr(table, "rows_frame") else None
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))
        roof = app.screen
        kernel = roof.data.kernels[roof.selected]
        name = roof.rows.iloc[kernel.position]["kernel"]
        mine = launches[launches["kernel"] == name]
        # the table's first row: a copy
        assert mine["flop"].sum() == 0 and kernel.place == STRIP, name
        level = roof.rows.iloc[kernel.position]["roof"]
        # its bytes at that level over its time
        rate = mine[f"{level}_bytes"].sum() / mine["duration_s"].sum()
        lines = screen_lines(app)
        info = " ".join(lines[-4:])
        assert "1/" in info and "Strip (0 FLOP)" in info and fmt.si(rate, "B/s") in info, info
        # drawn, selected, on the strip
        assert any(line.startswith("% of roof:") and "◆" in line for line in lines)
        assert roof.query_one(RooflinePlot).selected is None  # and not on the plot
        strip = sum(p.place == STRIP for p in roof.data.kernels)
        assert any(f" plotted · {strip} on the strip" in line for line in lines), lines
        await pilot.press("j")  # the table's 2nd row: a reduction with FLOPs, on the plot
        await pilot.pause()
        assert (
            roof.data.kernels[roof.selected].place == PLOT
            and roof.query_one(RooflinePlot).selected is not None
        )
        assert first is None or first["kernel"] == name


@pytest.mark.parametrize("width", [80, 160])
def test_the_legend_tells_the_ranked_kernels_apart(width):
    """Issue 41.5: the legend cut every name at 19 characters even at 160 columns
    (`nvjet_sm90_tst_64…` three times in the demo). Now the ranked rows read apart at any width, and
    whole where the width allows."""
    from flopscope.tui.app.widgets.roofline_plot import NUMBERED, legend

    report = report_of(DEMO)
    rows = report.group("name")
    data = roofline_from(rows, report.ceilings())
    top = [k.label for k in data.kernels[:NUMBERED]]
    entries = [text for text, _ in legend(data, None, width=width)]
    ranked = [
        next(e for e in entries if e.startswith(f"{rank} ")) for rank in range(1, NUMBERED + 1)
    ]
    assert len(set(ranked)) == NUMBERED
    shown = [e.split(" ", 1)[1] for e in ranked]
    # the names differ, not just their shares
    assert len({s.rsplit(" ", 2)[0] for s in shown}) == NUMBERED
    if width >= 160:  # the demo's GEMM names (39 characters) fit whole
        assert all(
            name in entry for name, entry in zip(top, ranked, strict=True) if len(name) <= 39
        )


@pytest.mark.parametrize("path", real_files(), ids=file_id)
def test_the_table_the_kernel_screen_the_roofline_and_the_export_agree(path, tmp_path):
    """Issue 41: for every row of every real file, the four views print one time, one FLOP/s, one %
    of roof and name one ceiling: the table's cells (what the app and `report` show), the Kernel
    screen, the Roofline screen's text, and the CSV export read back with the csv module."""
    import csv as csv_module

    from flopscope.core.export import write_table
    from flopscope.tui.presentation.columns import table_columns
    from flopscope.tui.presentation.table_model import TableModel

    report = report_of(path)
    if not single_gpu(report):
        pytest.skip("launches on several GPUs: tests/cli/test_two_gpu_capture.py")
    rows = report.group("name")
    columns = table_columns("name")
    model = TableModel(rows, columns)
    data = roofline_from(rows, report.ceilings())
    at = {k.position: i for i, k in enumerate(data.kernels)}
    out = write_table(rows, tmp_path / "rows.csv")
    with open(out, newline="", encoding="utf-8") as handle:
        exported = list(csv_module.DictReader(handle))
    assert len(exported) == len(rows) == len(model)
    for index in range(len(model)):
        position = model.position(index)
        row, cells = (
            rows.iloc[position],
            dict(zip([c.title for c in columns], model.cells(index), strict=True)),
        )
        shown, written = kernel_screen(row), exported[position]
        if written["duration_s"]:  # else the table's cell is empty and the Kernel screen says why
            assert cells["Time"].lstrip("≥ ") == shown["Total time"].lstrip("≥ ")
            assert fmt.seconds(float(written["duration_s"])) == cells["Time"].lstrip("≥ ")
        if written["flop_per_s"] and shown["FLOP/s"][0].isdigit():
            assert number(cells["FLOP/s"]) == pytest.approx(number(shown["FLOP/s"]), rel=0.006)
            assert number(shown["FLOP/s"]) == pytest.approx(float(written["flop_per_s"]), rel=0.006)
        roof = cells.get("%Roof", "")
        if written["pct_of_roof"]:
            assert roof == fmt.pct(float(written["pct_of_roof"])) and shown["% of roof"].startswith(
                roof
            )
            text = " ".join(part.plain for part in describe(data, at[position]).renderables)
            assert f"{roof} of" in text, text
        if written["peak_flop_per_s"] and shown["Compute ceiling"][0].isdigit():
            assert shown["Compute ceiling"].startswith(
                fmt.si(float(written["peak_flop_per_s"]), "FLOP/s")
            )
