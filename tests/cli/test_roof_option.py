"""`flopscope report --roof clock|datasheet|measured` (issue 22): the rows judged against the roof
named, the measured one from the run store (SYNTHETIC ceilings, and those measured on the H100 the
report comes from: tests/helpers/ceilings.py), refused in one line without."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flopscope.core.store.ceilings import from_bench, save
from flopscope.core.store.run_store import Store

from ..helpers.ceilings import datasheet, recorded_doc, synthetic
from ..helpers.cli import run_cli as flopscope

GEMM = (
    Path(__file__).parents[1]
    / "data"
    / "gpu"
    / "nvidia_h100_80gb_hbm3"
    / "gemm_fp32_4096x4096x4096.ncu-rep.xz"
)


@pytest.fixture
def measured(tmp_path) -> dict:
    """The first ceilings `flopscope ceilings` measured on the H100, stored in tmp_path's run store
    (the FP32 GEMM captured there is the report they judge)."""
    if not GEMM.exists():
        pytest.skip(f"{GEMM} not in this checkout")
    doc = recorded_doc(1)
    with Store(tmp_path / "flopscope.db") as store:
        save(store, from_bench("localhost", doc))
    return doc


def rows(home: Path, roof: str) -> list[dict]:
    out = flopscope("report", GEMM, "--json", "--roof", roof, home=home)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["rows"]


def test_report_roof_judges_against_the_roof_named(tmp_path):
    if not GEMM.exists():
        pytest.skip(f"{GEMM} not in this checkout")
    with Store(tmp_path / "flopscope.db") as store:
        save(store, synthetic())
    sheet = datasheet("h100-sxm")["fp32"]
    clock, on_sheet, measured = (rows(tmp_path, r)[0] for r in ("clock", "datasheet", "measured"))
    assert (clock["peak_source"], on_sheet["peak_source"], measured["peak_source"]) == (
        "report",
        "datasheet",
        "measured on node",
    )
    assert on_sheet["peak_flop_per_s"] == pytest.approx(sheet)
    assert measured["peak_flop_per_s"] == pytest.approx(0.89 * sheet)
    assert measured["pct_of_peak"] / on_sheet["pct_of_peak"] == pytest.approx(1 / 0.89)
    assert clock["pct_of_peak"] / measured["pct_of_peak"] == pytest.approx(
        0.89 * sheet / clock["peak_flop_per_s"]
    )


def test_report_roof_measured_without_stored_ceilings_is_one_line(tmp_path):
    if not GEMM.exists():
        pytest.skip(f"{GEMM} not in this checkout")
    out = flopscope("report", GEMM, "--roof", "measured", home=tmp_path)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert (
        out.stderr.strip()
        == "flopscope: --roof measured: no ceilings measured for NVIDIA H100 80GB HBM3 are "
        "stored (no run store yet); `flopscope ceilings [--host HOST]` on a node with "
        "NVIDIA H100 80GB HBM3 measures them; or use --roof clock (the default) or "
        "--roof datasheet"
    )


def test_report_roof_measured_with_the_ceilings_measured_on_that_h100(tmp_path, measured):
    """The FP32 GEMM captured on the H100 judged by what `flopscope ceilings` measured there: its
    %Peak is its FLOP/s over the measured FP32 FMA rate, and the header names the node and the
    date."""
    doc = measured
    (row,) = rows(tmp_path, "measured")
    fp32 = doc["values"]["fp32_flop_per_s"]
    assert row["peak_flop_per_s"] == pytest.approx(fp32)
    assert row["pct_of_peak"] == pytest.approx(100 * row["flop_per_s"] / fp32)
    text = flopscope("report", GEMM, "--roof", "measured", home=tmp_path)
    assert text.returncode == 0, text.stderr
    assert (
        f"FP32 {fp32 / 1e12:.1f} TFLOP/s" in text.stdout
        and "from measured on localhost" in text.stdout
    )


def test_export_roof_writes_the_peaks_of_the_roof_named(tmp_path, measured):
    doc = measured
    out_file = tmp_path / "gemm.json"
    out = flopscope("export", GEMM, "-o", out_file, "--roof", "measured", home=tmp_path)
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out_file.read_text())["rows"]
    assert row["peak_source"] == "measured on node"
    assert row["peak_flop_per_s"] == pytest.approx(doc["values"]["fp32_flop_per_s"])


def test_open_roof_judges_a_file_and_a_stored_run_and_needs_ceilings_stored_for_measured(
    tmp_path, measured
):
    """`open --roof` (piped: the table `report` prints) as `report --roof`: a file, and a stored run
    by name."""
    from flopscope.core import read_report

    with Store(tmp_path / "flopscope.db") as store:
        store.save(read_report(GEMM), "gemm")
    fp32, sheet = measured["values"]["fp32_flop_per_s"], datasheet("h100-sxm")["fp32"]
    for ref, roof, peak in (
        (GEMM, "measured", fp32),
        ("gemm", "measured", fp32),
        ("gemm", "datasheet", sheet),
    ):
        out = flopscope("open", ref, "--json", "--roof", roof, home=tmp_path)
        assert out.returncode == 0, out.stderr
        (row,) = json.loads(out.stdout)["rows"]
        assert row["peak_flop_per_s"] == pytest.approx(peak), (ref, roof)
        assert row["pct_of_peak"] == pytest.approx(100 * row["flop_per_s"] / peak)
    bare = tmp_path / "bare"
    out = flopscope("open", GEMM, "--no-tui", "--roof", "measured", home=bare)
    assert out.returncode == 2 and out.stderr.startswith(
        "flopscope: --roof measured: no ceilings measured"
    )


async def test_the_app_opens_a_file_judged_by_the_roof_named(tmp_path, monkeypatch, measured):
    """`open FILE --roof measured` in a terminal: the app's table is judged by the stored ceilings,
    and with none stored the app ends with exit code 2 (the CLI's one line)."""
    from flopscope.tui.app.launch import kernels_app

    from ..helpers.app import exited, ready

    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    app = kernels_app(GEMM, roof="measured")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        (row,) = screen.model.rows.to_dict("records")
    assert app.report.roof.kind == "measured"
    assert row["peak_flop_per_s"] == pytest.approx(measured["values"]["fp32_flop_per_s"])
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path / "bare"))
    app = kernels_app(GEMM, roof="measured")
    async with app.run_test() as pilot:
        assert await exited(app, pilot) == 2
