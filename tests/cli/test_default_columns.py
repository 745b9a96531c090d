"""Issue 41.4: the default kernel table judges each row by %Roof, shows ncu's speed of light where a
report has no FLOP or byte counters (`--set basic`), and the header names its run-level figures for
what they are."""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict

import ncu_report
import pytest

from ..conftest import fixture_path
from ..helpers.cli import run_cli

BASIC = ["a100pcie40_cub_radixsort_154k_basic.ncu-rep", "a10_spyinfer_linear_105k_basic.ncu-rep"]


def _table(stdout: str) -> tuple[str, list[str]]:
    """The printed kernel table's title line and its row lines."""
    lines = stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(("Kernel  ", "NVTX range  ")))
    end = next(i for i in range(at, len(lines)) if " row(s) · " in lines[i])
    return lines[at], lines[at + 1 : end]


def _cell(titles: str, line: str, title: str) -> str:
    """The cell of a right-aligned (numeric) column in `line`: the word that ends where its title
    ends."""
    end = re.search(rf"(?<!\S){re.escape(title)}(?!\S)", titles).end()
    return "" if line[:end].endswith(" ") else line[:end].split()[-1]


def _json_rows(*args) -> list[dict]:
    out = run_cli("report", *args, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["rows"]


@pytest.mark.parametrize("columns", [80, 160])
def test_every_row_shows_its_percent_of_roof_and_peak_only_on_request(columns):
    """The demo at 80 and 160 columns: %Roof beside Bound, no %Peak (rmsnorm read 6.7% of peak where
    its roof, 89.1%, is what matters). Where compute bounds a row the two are one number; `--sort
    %peak` shows %Peak."""
    from flopscope.tui.cli.main import bundled_example

    demo = bundled_example()
    out = run_cli("report", demo, columns=columns)
    assert out.returncode == 0, out.stderr
    titles, rows = _table(out.stdout)
    assert {"%Roof", "Bound"} <= set(titles.split()) and "%Peak" not in titles, titles
    # every row judged has a %Roof cell; memory-bound rows read above their % of the FLOP peak
    judged = [r for r in _json_rows(demo) if r["pct_of_roof"] is not None]
    assert len(judged) == len(rows)
    for row in judged:
        if row["roof"] == "compute":
            assert row["pct_of_roof"] == pytest.approx(row["pct_of_peak"])
        elif row["pct_of_peak"] is not None:
            assert row["pct_of_roof"] > row["pct_of_peak"]
    sorted_by_peak = run_cli("report", demo, "--sort", "%peak", columns=columns)
    assert "%Peak" in _table(sorted_by_peak.stdout)[0].split()


def _speed_of_light(path) -> dict[str, tuple[float, float]]:
    """Per kernel (its demangled signature), ncu's SM and Memory Throughput % over its launches,
    weighted by their time, read with ncu_report itself."""
    ctx = ncu_report.load_report(str(path))
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in range(ctx.num_ranges()):
        for i in range(ctx.range_by_idx(r).num_actions()):
            action = ctx.range_by_idx(r).action_by_idx(i)
            name = action.name(ncu_report.IAction.NameBase_DEMANGLED)
            metrics = [
                action.metric_by_name(m)
                for m in (
                    "gpu__time_duration.sum",
                    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                )
            ]
            if any(m is None for m in metrics):
                continue
            time, sm, memory = (m.value() for m in metrics)
            total = sums[name]
            total[0] += time
            total[1] += time * sm
            total[2] += time * memory
    return {name: (sm / time, memory / time) for name, (time, sm, memory) in sums.items()}


@pytest.mark.parametrize("name", BASIC)
@pytest.mark.parametrize("columns", [80, 120])
def test_a_basic_report_shows_ncus_speed_of_light(name, columns):
    """Before: a `--set basic` report printed blank FLOP/s, %Peak and Bound on every row, though
    ncu's Compute (SM) and Memory Throughput are in the file. Now SM% and Mem% stand in %Roof's
    place, each row's the time-weighted mean of its launches' (as ncu_report reads them), in the
    table and in --json."""
    path = fixture_path(name)
    expected = _speed_of_light(path)
    out = run_cli("report", path, columns=columns)
    assert out.returncode == 0, out.stderr
    titles, lines = _table(out.stdout)
    assert {"SM%", "Mem%"} <= set(titles.split()) and "%Roof" not in titles, titles
    if any("…" in line for line in lines):  # names cut: no column without a value takes their room
        assert not {"FLOP/s", "Bound"} & set(titles.split()), titles
    rows = _json_rows(path)
    assert {r["kernel_full"] for r in rows} == set(expected)
    for row, line in zip(rows, lines, strict=True):
        sm, memory = expected[row["kernel_full"]]
        assert row["sol_sm_pct"] == pytest.approx(sm) and row["sol_memory_pct"] == pytest.approx(
            memory
        )
        assert (
            _cell(titles, line, "SM%") == f"{sm:.1f}%"
            and _cell(titles, line, "Mem%") == f"{memory:.1f}%"
        ), line


def test_a_details_csv_without_flops_shows_its_speed_of_light():
    """A details CSV (ncu --csv, sections) without FLOP counters: SM% and Mem% as its `Compute (SM)
    Throughput` and `Memory Throughput` % rows say, read here with the csv module."""
    path = fixture_path("t4_nsightful_copy_blocked_details.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    expected = {
        label: float(r["Metric Value"])
        for r in rows
        for label in ("Compute (SM) Throughput", "Memory Throughput")
        if r["Metric Name"] == label and r["Metric Unit"] == "%"
    }
    out = run_cli("report", path, columns=120)
    titles, (line,) = _table(out.stdout)
    assert _cell(titles, line, "SM%") == f"{expected['Compute (SM) Throughput']:.1f}%"
    assert _cell(titles, line, "Mem%") == f"{expected['Memory Throughput']:.1f}%"
    (row,) = _json_rows(path)
    assert row["sol_sm_pct"] == pytest.approx(expected["Compute (SM) Throughput"])


def test_a_report_with_a_roof_keeps_speed_of_light_off_the_table():
    """A full report judges rows by %Roof: SM% and Mem% stay out of its default table (they are in
    --json)."""
    out = run_cli("report", fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep"), columns=200)
    titles, _ = _table(out.stdout)
    assert "%Roof" in titles.split() and "SM%" not in titles and "Mem%" not in titles


def test_the_run_level_figures_say_what_they_are():
    """`FLOPS eff 13.0% · compute eff 65.4% · bandwidth eff 11.8%` read as near-perfect kernels: the
    figures are named for what they measure (the run's FLOP/s and DRAM B/s as % of peak, the share
    of kernel time in kernels doing arithmetic), the --json keys unchanged; each checked against the
    rows' own numbers."""
    from flopscope.tui.cli.main import bundled_example

    demo = bundled_example()
    out = run_cli("report", demo, "--json")
    doc = json.loads(out.stdout)
    summary = doc["summary"] if "summary" in doc else doc["meta"]["summary"]
    rows = _json_rows(demo, "--by", "launch")
    time = sum(r["duration_s"] for r in rows)
    arith = sum(r["duration_s"] for r in rows if r["flop"]) / time
    assert summary["compute_efficiency"] == pytest.approx(arith)
    judged = [r for r in rows if r["peak_flop_per_s"] is not None]
    flops = sum(r["flop"] for r in judged) / sum(
        r["duration_s"] * r["peak_flop_per_s"] for r in judged
    )
    assert summary["flops_efficiency"] == pytest.approx(flops)
    text = run_cli("report", demo, columns=200).stdout
    header = next(line for line in text.splitlines() if line.startswith("Kernel time"))
    assert (
        f"FLOP %Peak {100 * flops:.1f}%" in header and f"arith. time {100 * arith:.1f}%" in header
    )
    assert "DRAM %Peak" in header
    assert not any(word in header for word in ("FLOPS eff", "compute eff", "bandwidth eff"))


def test_a_basic_reports_export_holds_its_speed_of_light(tmp_path):
    """`export` writes the speed-of-light columns at full precision, as ncu_report reads them."""
    path = fixture_path("a10_spyinfer_linear_105k_basic.ncu-rep")
    out = tmp_path / "k.csv"
    done = run_cli("export", path, "-o", out)
    assert done.returncode == 0, done.stderr
    with out.open(newline="") as f:
        (row,) = list(csv.DictReader(f))
    sm, memory = _speed_of_light(path)[row["kernel_full"]]
    assert float(row["sol_sm_pct"]) == pytest.approx(sm) and float(
        row["sol_memory_pct"]
    ) == pytest.approx(memory)


def test_the_speed_of_light_is_what_the_real_ncu_prints(real_ncu):
    """Per launch, sol_sm_pct and sol_memory_pct as `ncu --import FILE --page raw --csv` prints
    them."""
    import subprocess

    path = fixture_path("a10_spyinfer_linear_105k_basic.ncu-rep")
    raw = subprocess.run(
        [*real_ncu, "--import", str(path), "--page", "raw", "--csv"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = raw[raw.index('"ID"') :].splitlines()
    header, _units, *launches = list(csv.reader(lines))
    sm_at = header.index("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    memory_at = header.index("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
    rows = {r["launch_id"]: r for r in _json_rows(path, "--by", "launch")}
    assert len(rows) == len(launches)
    for launch in launches:
        row = rows[int(launch[header.index("ID")])]
        assert row["sol_sm_pct"] == pytest.approx(float(launch[sm_at].replace(",", "")), rel=1e-3)
        assert row["sol_memory_pct"] == pytest.approx(
            float(launch[memory_at].replace(",", "")), rel=1e-3
        )
