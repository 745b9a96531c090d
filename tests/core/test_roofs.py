"""The three roofs a kernel is judged against (issue 22): the datasheet, the theoretical peak at the
measured clock (the default), and ceilings measured on a node (`flopscope ceilings`, stored). A real
H100 PCIe report; the stored ceilings are SYNTHETIC (tests/helpers/ceilings.py: no GPU runs the
suite), the expected ratios come from core/data/gpus.csv and the report's own peak counters, read
here."""

from __future__ import annotations

import pytest
from flopscope.core import read_report
from flopscope.core.store.ceilings import as_roof, measured_roof, save
from flopscope.core.store.run_store import Store
from flopscope.core.table.roofline import Roof

from ..conftest import fixture_path
from ..helpers.ceilings import datasheet, synthetic

H100 = "h100pcie_ee384_cub_agents_full.ncu-rep"


@pytest.fixture(scope="module")
def report():
    return read_report(fixture_path(H100))


def stored() -> object:
    return synthetic(gpu="NVIDIA H100 PCIe", key="h100-pcie")


def fp32_launches(k):
    return k[(k["precision"] == "fp32") & (k["pct_of_peak"] > 0)]


def test_each_roof_changes_pct_of_peak_by_the_ratio_of_its_fp32_ceiling(report):
    sheet = datasheet("h100-pcie")
    measured = report.against(as_roof(stored()))
    on_sheet = report.against(Roof("datasheet"))
    rows = fp32_launches(report.kernels).index
    assert len(rows) >= 3
    m, d, c = (r.kernels.loc[rows] for r in (measured, on_sheet, report))
    assert (m["pct_of_peak"] / d["pct_of_peak"]).tolist() == pytest.approx(
        [sheet["fp32"] / (0.89 * sheet["fp32"])] * len(rows)
    )
    # The clock roof is the report's own FP32 peak counter x the clock each launch ran at.
    assert (c["pct_of_peak"] / m["pct_of_peak"]).tolist() == pytest.approx(
        (0.89 * sheet["fp32"] / c["report_peak_fp32_flop_per_s"]).tolist()
    )
    assert set(m["peak_source"]) == {"measured on node"} and set(d["peak_source"]) == {"datasheet"}
    assert set(c["peak_source"]) == {"report"}
    assert m["peak_dram_bytes_per_s"].tolist() == pytest.approx([0.86 * sheet["dram"]] * len(rows))


def test_the_run_ceilings_name_their_roof_and_what_it_lacks_stays_the_clock_roof(report):
    sheet = datasheet("h100-pcie")
    ceilings = {c.name: c for c in report.against(as_roof(stored())).ceilings()}
    assert ceilings["fp32"].value == pytest.approx(0.89 * sheet["fp32"])
    assert ceilings["fp32"].source.startswith("synthetic (test data, not measured) on gpubox (")
    assert ceilings["dram"].source == ceilings["fp32"].source
    # not measured: the clock roof's
    assert ceilings["fp64"].source == "report counters x measured clock"
    on_sheet = {c.name: c for c in report.against(Roof("datasheet")).ceilings()}
    assert (
        on_sheet["fp64"].value == pytest.approx(sheet["fp64"])
        and on_sheet["dram"].value == sheet["dram"]
    )
    assert on_sheet["fp32"].source == "datasheet (NVIDIA H100 PCIe)"


def test_the_measured_roof_is_found_for_the_reports_gpu_or_says_why_not(report, tmp_path):
    with Store(tmp_path / "flopscope.db") as store:
        roof, why = measured_roof(report, store)
        assert (
            roof is None
            and why
            == "no ceilings measured for NVIDIA H100 PCIe are stored; `flopscope ceilings "
            "[--host HOST]` on a node with NVIDIA H100 PCIe measures them"
        )
        save(store, synthetic())  # an H100 SXM: another GPU
        assert measured_roof(report, store)[0] is None
        save(store, stored())
        roof, why = measured_roof(report, store)
    assert why == "" and roof.kind == "measured"
    assert roof.measured == pytest.approx(
        {
            "dram": 0.86 * datasheet("h100-pcie")["dram"],
            "fp32": 0.89 * datasheet("h100-pcie")["fp32"],
        }
    )


def test_on_a_file_of_two_gpus_the_measured_roof_judges_its_own_gpus_launches_only(tmp_path):
    from ..helpers.multi_gpu import A100, H100, two_gpus

    two = two_gpus(tmp_path)
    with Store(tmp_path / "flopscope.db") as store:
        save(store, stored())  # an H100 PCIe: the file's main GPU (most launches)
        roof, _ = measured_roof(two, store)
    judged = two.against(roof)
    on_h100 = (judged.kernels["gpu"] == H100).to_numpy()
    assert judged.kernels.loc[on_h100, "peak_flop_per_s"].tolist() == pytest.approx(
        [0.89 * datasheet("h100-pcie")["fp32"]] * int(on_h100.sum())
    )
    assert set(judged.kernels.loc[on_h100, "peak_source"]) == {"measured on node"}
    columns = ["peak_flop_per_s", "peak_dram_bytes_per_s", "peak_source"]
    assert (
        judged.kernels.loc[~on_h100, columns].astype(object).values.tolist()
        == two.kernels.loc[~on_h100, columns].astype(object).values.tolist()
    )
    sources = {(c.gpu, c.name): c.source for c in judged.ceilings()}
    assert sources[(H100, "fp32")].startswith("synthetic (test data, not measured) on gpubox")
    # the A100's from its own counters or datasheet (at its launches' clock), not the H100 node's
    # measurement
    assert "synthetic" not in sources[(A100, "fp32")] and "synthetic" not in sources[(A100, "dram")]


def test_on_a_file_of_two_gpus_each_gpu_with_stored_ceilings_is_judged_by_its_own(tmp_path):
    from ..helpers.multi_gpu import A100, H100, two_gpus

    two = two_gpus(tmp_path)
    with Store(tmp_path / "flopscope.db") as store:
        save(store, stored())
        save(store, synthetic(gpu=A100, key="a100-pcie-40gb", host="other"))  # another node's A100
        roof, why = measured_roof(two, store)
    assert why == "" and [r.gpu for r in roof.others] == [A100]
    judged = two.against(roof)
    k = judged.kernels
    for gpu, key in ((H100, "h100-pcie"), (A100, "a100-pcie-40gb")):
        rows = (k["gpu"] == gpu).to_numpy()
        sheet = datasheet(key)
        assert k.loc[rows, "peak_flop_per_s"].tolist() == pytest.approx(
            [0.89 * sheet["fp32"]] * int(rows.sum())
        )
        assert k.loc[rows, "peak_dram_bytes_per_s"].tolist() == pytest.approx(
            [0.86 * sheet["dram"]] * int(rows.sum())
        )
        assert set(k.loc[rows, "peak_source"]) == {"measured on node"}
    sources = {(c.gpu, c.name): c.source for c in judged.ceilings()}
    assert sources[(A100, "fp32")].startswith("synthetic (test data, not measured) on other (")
    assert sources[(H100, "dram")].startswith("synthetic (test data, not measured) on gpubox (")


def test_ceilings_are_computed_once_per_launches_gpus_and_roof(monkeypatch):
    """The header asks for the ceilings several times (1M launches: 0.07 s each): computed once, and
    anew for another roof, GPU or launches table, never stale."""
    from flopscope.core.report import report as report_module
    from flopscope.core.report.report import with_gpu

    calls = []
    real = report_module.run_ceilings
    monkeypatch.setattr(report_module, "run_ceilings", lambda *a: calls.append(a[2]) or real(*a))
    report = read_report(fixture_path(H100))
    first = report.ceilings()
    assert report.ceilings() == first == report.ceilings() and len(calls) == 1
    report.ceilings().clear()  # a caller's list is its own
    assert report.ceilings() == first
    on_sheet = report.against(Roof("datasheet"))
    assert on_sheet.ceilings() != first and len(calls) == 2
    # the same figures here (the report's own counters set them)
    with_gpu(report, "h100-sxm").ceilings()
    assert len(calls) == 3
    report.kernels = report.kernels.head(3)
    report.ceilings()
    assert len(calls) == 4
