"""Sweeps: real profiles through the ncu stand-in (locally and over two SSH hosts at once), the
scaling analysis on series built from real launches, kill-and-resume, and hostile parameter
values."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core import read_report
from flopscope.core.analysis.scaling import findings, linear_fit
from flopscope.core.ncu.command import ProfileOptions
from flopscope.core.profiling.sweep import (
    parse_params,
    points,
    run_sweep,
    substitute,
    unused_params,
)
from flopscope.core.profiling.transport import LocalTransport
from flopscope.core.store.run_store import Store

from ..conftest import fixture_path
from ..helpers.cli import CLI
from ..helpers.profile import make_ncu
from ..helpers.raw_csv import launches, raw_csv, simt_flop
from ..helpers.sshd import start_sshd
from ..helpers.sweep import cli


def test_placeholders_substitute_inside_one_argument():
    assert substitute(
        ["--bs={batch_size}", "{batch_size}", "{other}", "x"], {"batch_size": "8"}
    ) == [
        "--bs=8",
        "8",
        "{other}",
        "x",
    ]
    assert points(parse_params(["a=1,2", "b=x,y"])) == [
        {"a": "1", "b": "x"},
        {"a": "1", "b": "y"},
        {"a": "2", "b": "x"},
        {"a": "2", "b": "y"},
    ]


def test_seed_puzzle_hard_coded_batch_size_is_flagged(tmp_path):
    """The seed script ignored its batch size: every point profiles the same work."""
    out = cli(
        "sweep",
        "--param",
        "batch_size=1,8,32",
        "--ncu",
        make_ncu(tmp_path),
        "--sweep-name",
        "seed",
        "--json",
        "--",
        sys.executable,
        "-c",
        "batch_size = 32",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "no argument uses {batch_size}" in out.stderr
    doc = json.loads(out.stdout)["analyses"][0]
    assert [p["batch_size"] for p in doc["points"]] == [1, 8, 32]
    assert len({p["flop"] for p in doc["points"]}) == 1
    assert any(
        "identical at every batch_size" in f and "never reached the program" in f
        for f in doc["findings"]
    )


def test_sweep_has_no_name_option_and_its_json_help_says_what_it_prints(tmp_path):
    """Before, `sweep --help` listed `--name RUN`, which did nothing (points are stored as
    SWEEP-param=value), and said --json prints "the final report" (it prints the analyses)."""
    text = cli("sweep", "--help", home=tmp_path).stdout
    options = " ".join(text.split())
    assert " --name " not in options and "final report" not in options
    assert '--json print the analysis as one JSON object, {"analyses": [...]}' in options
    out = cli(
        "sweep",
        "--name",
        "x",
        "--param",
        "n=1,2",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "echo",
        "{n}",
        home=tmp_path,
    )
    assert out.returncode == 2 and "unrecognized arguments: --name x" in out.stderr
    assert not (tmp_path / "runs").exists()


def test_a_sweep_point_opens_with_its_parameters_and_an_unknown_sweep_is_refused(tmp_path):
    """Before, `open POINT --json` had only command and host in meta.params (`runs --json` showed
    the batch size), and `runs --sweep nosuch` printed an empty list with exit 0."""
    out = cli(
        "sweep",
        "--param",
        "batch_size=1,2",
        "--ncu",
        make_ncu(tmp_path),
        "--sweep-name",
        "bs",
        "--json",
        "--",
        "echo",
        "{batch_size}",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    listed = json.loads(cli("runs", "--sweep", "bs", "--json", home=tmp_path).stdout)
    for run in listed:
        params = json.loads(cli("open", run["name"], "--json", home=tmp_path).stdout)["meta"][
            "params"
        ]
        assert params["batch_size"] == run["params"]["batch_size"]
        assert (
            params["command"] == ["echo", run["params"]["batch_size"]]
            and params["host"] == "localhost"
        )
    for flags in ((), ("--json",), ("--no-tui",)):
        out = cli("runs", "--sweep", "nosuch", *flags, home=tmp_path)
        assert out.returncode == 2 and out.stdout == ""
        assert (
            out.stderr
            == "flopscope: --sweep nosuch: no runs of this sweep in the store; sweeps stored: bs\n"
        )


def test_linear_series_from_real_launches(tmp_path):
    """Points made of N real V100 GEMM launches: FLOPs exactly linear in N, per-sample FLOPs
    constant."""
    rows = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    gemm = next(r for r in rows if "tensorop_s884gemm" in r["Kernel Name"])
    init = next(r for r in rows if "InitializeMatrix" in r["Kernel Name"])
    files = []
    for n in (1, 2, 4, 8):
        path = tmp_path / f"gemm_bs{n}.csv"
        path.write_text(raw_csv([gemm] * n + ([init] if n >= 4 else [])))
        files.append(path)
    out = cli(
        "sweep",
        "--from",
        *files,
        "--param-from-name",
        r"bs(\d+)",
        "--param",
        "batch_size",
        "--json",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["analyses"][0]
    # Volta tensor estimate, 2*M*N*K per launch, + its epilogue
    per_gemm = 2 * 20480**3 + simt_flop(gemm)
    assert simt_flop(init) == 0
    assert [p["flop"] for p in doc["points"]] == pytest.approx(
        [per_gemm * n for n in (1, 2, 4, 8)], rel=1e-9
    )
    assert doc["fits"]["flop"]["slope"] == pytest.approx(per_gemm, rel=1e-9)
    assert doc["fits"]["flop"]["r2"] == pytest.approx(1.0)
    assert not any("varies by" in f for f in doc["findings"])
    assert any(
        "InitializeMatrix" in f and "only at batch_size = 4, 8" in f for f in doc["findings"]
    )


def test_kill_mid_sweep_then_resume(tmp_path):
    ncu = make_ncu(tmp_path, delay=0.4)
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path)}
    args = [
        *CLI,
        "sweep",
        "--param",
        "n=1,2,3,4,5,6",
        "--ncu",
        ncu,
        "--sweep-name",
        "k",
        "--",
        "echo",
        "{n}",
    ]
    proc = subprocess.Popen(
        args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env
    )
    for line in proc.stderr:
        if line.startswith("[2/6]"):
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    listed = json.loads(cli("runs", "--sweep", "k", "--json", home=tmp_path).stdout)
    assert 2 <= len(listed) < 6
    assert all(run["launches"] == 1 for run in listed)
    first = cli("diff", listed[0]["name"], listed[-1]["name"], "--json", home=tmp_path)
    # every stored run still loads
    assert first.returncode == 0 and json.loads(first.stdout)["rows"]
    rest = args[3:]
    resumed = cli(*rest[: rest.index("--")], "--resume", *rest[rest.index("--") :], home=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.count("already stored, skipped") == len(listed)
    assert len(json.loads(cli("runs", "--sweep", "k", "--json", home=tmp_path).stdout)) == 6


def test_hostile_parameter_values_stay_inert(tmp_path):
    sentinel = tmp_path / "SENTINEL"
    seen = tmp_path / "seen.txt"
    program = f"import sys; open({str(seen)!r}, 'a').write(sys.argv[1] + '\\n')"
    value = f"$(touch {sentinel});`touch {sentinel}`"
    out = cli(
        "sweep",
        "--param",
        f"v={value},'; touch {sentinel}'",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        sys.executable,
        "-c",
        program,
        "{v}",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert seen.read_text().splitlines() == [value, f"'; touch {sentinel}'"]
    assert not sentinel.exists()


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory):
    a = start_sshd(tmp_path_factory.mktemp("sshd_a"), alias="gpu-a")
    b = start_sshd(tmp_path_factory.mktemp("sshd_b"), alias="gpu-b")
    config = tmp_path_factory.mktemp("cfg") / "ssh_config"
    config.write_text(a.config.read_text() + b.config.read_text())
    yield config
    a.stop()
    b.stop()


def test_sweep_over_two_hosts_at_once(tmp_path, two_hosts):
    ncu = make_ncu(tmp_path, delay=0.5)
    start = time.monotonic()
    out = cli(
        "sweep",
        "--param",
        "batch_size=1,2,3,4",
        "--host",
        "gpu-a",
        "--host",
        "gpu-b",
        "--ssh-config",
        two_hosts,
        "--ncu",
        ncu,
        "--sweep-name",
        "two",
        "--json",
        "--",
        "echo",
        "{batch_size}",
        home=tmp_path,
    )
    elapsed = time.monotonic() - start
    assert out.returncode == 0, out.stderr
    listed = json.loads(cli("runs", "--sweep", "two", "--json", home=tmp_path).stdout)
    assert sorted(r["params"]["batch_size"] for r in listed) == ["1", "2", "3", "4"]
    assert {r["host"] for r in listed} == {"gpu-a", "gpu-b"}
    assert "4 of 4 point(s) stored" in out.stderr
    assert elapsed < 60


def test_two_parameter_sweep_is_reported_per_line(tmp_path):
    out = cli(
        "sweep",
        "--param",
        "batch_size=1,2,4",
        "--param",
        "seq=128,256",
        "--ncu",
        make_ncu(tmp_path),
        "--sweep-name",
        "grid",
        "--json",
        "--",
        "echo",
        "{batch_size}",
        "{seq}",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    analyses = json.loads(out.stdout)["analyses"]
    assert [(a["param"], a["fixed"]) for a in analyses] == [
        ("batch_size", {"seq": "128"}),
        ("batch_size", {"seq": "256"}),
        ("seq", {"batch_size": "1"}),
        ("seq", {"batch_size": "2"}),
        ("seq", {"batch_size": "4"}),
    ]
    assert [p["batch_size"] for p in analyses[0]["points"]] == [1, 2, 4]
    assert [p["seq"] for p in analyses[2]["points"]] == [128, 256]
    # The stand-in hands back one report for every point: each line says its parameter never
    # arrived.
    assert all(any("identical at every" in f for f in a["findings"]) for a in analyses)


def test_each_host_is_asked_for_its_tensor_counters_once(tmp_path):
    calls = tmp_path / "calls.log"
    standin = make_ncu(tmp_path)
    logged = tmp_path / "ncu-logged"
    logged.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {standin} "$@"\n')
    logged.chmod(0o755)
    out = cli(
        "sweep",
        "--param",
        "n=1,2,3",
        "--ncu",
        logged,
        "--sweep-name",
        "once",
        "--json",
        "--",
        "echo",
        "{n}",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = calls.read_text().splitlines()
    assert sum("--query-metrics" in line for line in lines) == 1
    profiled = [line for line in lines if "--export" in line]
    assert len(profiled) == 3 and all(
        "sm__ops_path_tensor_src_fp16.sum" in line for line in profiled
    )


def test_each_host_gets_the_tensor_counters_of_its_own_gpu(tmp_path, two_hosts):
    """gpu-a answers the catalogue query as an H100, gpu-b as an A100 (the stand-in picks the chip
    by the sshd port the session came in on): each host's profiles ask for that GPU's counters, on
    every point."""
    config = two_hosts.read_text()
    port_b = config.split("Host gpu-b", 1)[1].split("Port ", 1)[1].split()[0]
    standin = make_ncu(tmp_path)
    ncu = tmp_path / "ncu-by-host"
    ncu.write_text(
        f'#!/bin/sh\ncase "${{SSH_CONNECTION##* }}" in {port_b}) chip=ga100;; *) chip=gh100;;'
        f' esac\nexec {standin} --standin-chip "$chip" "$@"\n'
    )
    ncu.chmod(0o755)
    out = cli(
        "sweep",
        "--param",
        "batch_size=1,2,3,4,5,6",
        "--host",
        "gpu-a",
        "--host",
        "gpu-b",
        "--ssh-config",
        two_hosts,
        "--ncu",
        ncu,
        "--sweep-name",
        "gpus",
        "--json",
        "--",
        "echo",
        "{batch_size}",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    listed = json.loads(cli("runs", "--sweep", "gpus", "--json", home=tmp_path).stdout)
    by_host: dict[str, list[str]] = {}
    for run in listed:
        argv = json.loads((tmp_path / "runs" / run["name"] / "run.json").read_text())["ncu_argv"]
        by_host.setdefault(run["host"], []).append(argv[argv.index("--metrics") + 1])
    assert set(by_host) == {"gpu-a", "gpu-b"}
    assert all("src_fp16.sum" in m and "src_fp16_dst_fp32" not in m for m in by_host["gpu-a"])
    assert all("src_fp16_dst_fp32.sum" in m and "src_fp8" not in m for m in by_host["gpu-b"])


# -- fits on constant data, and --param-from-name mistakes
# -------------------------------------------------------
@pytest.mark.parametrize("x", [[1, 2, 4, 8], [1, 2, 3], [1, 2, 4, 8, 16, 32, 64, 128]])
@pytest.mark.parametrize("value", [87.1e-6, 586e6, 1.374e14, 0.0])
def test_constant_data_fits_a_flat_line_with_no_r2(x, value):
    """polyfit leaves rounding noise in the slope of constant data (1e-22 s per unit, -1e-7 FLOP per
    unit for these values): the fit reports slope 0 and no R², as there is no variance to
    explain."""
    fit = linear_fit(pd.Series(x, dtype=float), pd.Series([value] * len(x)))
    assert fit.slope == 0 and fit.r2 is None
    assert fit.intercept == pytest.approx(value, rel=1e-15)


def test_a_real_trend_keeps_its_slope_intercept_and_r2():
    x = pd.Series([1.0, 2, 4, 8])
    exact = linear_fit(x, 3e12 * x + 5e9)
    assert (exact.slope, exact.intercept, exact.r2) == pytest.approx((3e12, 5e9, 1.0), rel=1e-12)
    # One point off the line by 1 of 800: least squares in closed form (Sxy / Sxx), R² = 1 - SSres /
    # SStot.
    y = pd.Series([100.0, 200, 400, 801])
    fit = linear_fit(x, y)
    slope = 2879.25 / 28.75  # Sxy, Sxx about the means 3.75 and 375.25
    intercept = 375.25 - slope * 3.75
    r2 = 1 - ((y - (slope * x + intercept)) ** 2).sum() / ((y - 375.25) ** 2).sum()
    assert (fit.slope, fit.intercept, fit.r2) == pytest.approx((slope, intercept, r2), rel=1e-9)
    assert 0.99 < fit.r2 < 1
    # A slope far below the noise bound of the values, but the data really vary: still a fit.
    tiny = linear_fit(pd.Series([1.0, 2.0, 3.0]), pd.Series([0.0, 1e-30, 2e-30]))
    assert tiny.slope == pytest.approx(1e-30) and tiny.r2 == pytest.approx(1.0)


def test_two_parameter_values_fit_a_line_but_have_no_r2():
    """Any line passes through two points, so R² was 1.0000 for every fit of a two-value sweep: it
    says nothing about linearity and is None (null, n/a) below three distinct values; repeated
    values count once."""
    two = linear_fit(pd.Series([1.0, 2.0]), pd.Series([5.0, 7.0]))  # y = 2x + 3 through both points
    assert (two.slope, two.intercept, two.r2, two.values) == (
        pytest.approx(2.0),
        pytest.approx(3.0),
        None,
        2,
    )
    assert two.why_no_r2("bs") == "only 2 bs values"
    # means 5 and 7
    repeated = linear_fit(pd.Series([1.0, 1.0, 2.0, 2.0]), pd.Series([4.0, 6.0, 7.0, 7.0]))
    assert (repeated.slope, repeated.r2, repeated.values) == (pytest.approx(2.0), None, 2)
    # Three values off a line: slope = Sxy / Sxx = 1 / 2, intercept 2 - 0.5 * 2 = 1, residuals -0.5,
    # 1, -0.5:
    # R² = 1 - 1.5 / 2.
    three = linear_fit(pd.Series([1.0, 2.0, 3.0]), pd.Series([1.0, 3.0, 2.0]))
    assert (three.slope, three.intercept, three.r2, three.values) == pytest.approx(
        (0.5, 1.0, 0.25, 3)
    )
    flat_two = linear_fit(pd.Series([1.0, 2.0]), pd.Series([9.0, 9.0]))
    assert flat_two.r2 is None and flat_two.why_no_r2("bs") == "constant"


def test_cli_two_value_sweep_says_r2_is_not_available(tmp_path):
    """The review's command: two real reports named 4 and 100 printed `R^2 1.0000` for every fit."""
    files = [
        fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"),
        fixture_path("t4_mlp_matadd_full.ncu-rep"),
    ]
    out = cli("sweep", "--from", *files, "--param-from-name", r"(\d+)", "--no-tui", home=tmp_path)
    assert out.returncode == 0, out.stderr
    fits = [line for line in out.stdout.splitlines() if " × param " in line]
    assert len(fits) == 3 and all(
        line.endswith("(R² n/a: only 2 param values)") for line in fits
    ), fits
    assert "R² 1.0000" not in out.stdout
    out = cli("sweep", "--from", *files, "--param-from-name", r"(\d+)", "--json", home=tmp_path)
    fits = json.loads(out.stdout)["analyses"][0]["fits"]
    assert {k: (f["r2"], f["values"]) for k, f in fits.items()} == {k: (None, 2) for k in fits}
    # The line still goes through both points: FLOPs at 4 (T4 report) and 100 (V100 report),
    # computed here.
    t4, v100 = (read_report(f).kernels["flop"].sum() for f in reversed(files))
    assert fits["flop"]["slope"] == pytest.approx((v100 - t4) / 96, rel=1e-9)


@pytest.fixture
def constant_files(tmp_path) -> list[Path]:
    """The same real T4 report three times, named as batch sizes 1, 2 and 4."""
    source = fixture_path("t4_mlp_matadd_full.ncu-rep")
    files = []
    for n in (1, 2, 4):
        files.append(tmp_path / f"t4_bs{n}.ncu-rep")
        files[-1].write_bytes(source.read_bytes())
    return files


def test_cli_constant_sweep_says_constant_in_the_table_and_null_in_json(tmp_path, constant_files):
    out = cli(
        "sweep",
        "--from",
        *constant_files,
        "--param-from-name",
        r"bs(\d+)",
        "--no-tui",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    fits = [line for line in out.stdout.splitlines() if " × param " in line]
    assert len(fits) == 3 and all(
        line.endswith("(R² n/a: constant)") and re.search(r" = 0 (B |s )?× ", line) for line in fits
    ), fits
    assert "nan" not in out.stdout.lower()
    out = cli(
        "sweep", "--from", *constant_files, "--param-from-name", r"bs(\d+)", "--json", home=tmp_path
    )

    def strict(constant: str):
        raise AssertionError(f"{constant} is not JSON")

    fits = json.loads(out.stdout, parse_constant=strict)["analyses"][0]["fits"]
    t4 = read_report(constant_files[0]).kernels
    assert fits["flop"] == {
        "slope": 0.0,
        "intercept": pytest.approx(t4["flop"].sum(), rel=1e-12),
        "r2": None,
        "values": 3,
    }
    assert fits["duration_s"]["r2"] is None and fits["dram_bytes"]["r2"] is None


@pytest.mark.parametrize("sizes", [(1, 2), (1, 2, 4)])
def test_copies_of_one_report_are_identical_work_not_a_drift(tmp_path, sizes):
    """The same report at batch sizes 1 and 2 (and 1, 2, 4): FLOP/param halves only because the
    FLOPs never grew. The finding is that the parameter never reached the program, and no FLOP/param
    drift besides."""
    source = fixture_path("t4_mlp_matadd_full.ncu-rep")
    files = [tmp_path / f"bs{n}.ncu-rep" for n in sizes]
    for path in files:
        path.write_bytes(source.read_bytes())
    out = cli("sweep", "--from", *files, "--param-from-name", r"bs(\d+)", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    notes = json.loads(out.stdout)["analyses"][0]["findings"]
    flop = read_report(source).kernels["flop"].sum()
    assert len(notes) == 1 and notes[0].startswith(f"FLOPs ({flop:.4g}) and DRAM bytes"), notes
    assert (
        "are identical at every param: the parameter most likely never reached the program"
        in notes[0]
    )


def test_param_from_name_that_is_no_regex_is_one_line_exit_2(tmp_path, constant_files):
    out = cli(
        "sweep", "--from", *constant_files, "--param-from-name", "bs(", "--no-tui", home=tmp_path
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "flopscope: --param-from-name 'bs(': not a regular expression ("
    )
    assert lines[0].endswith(r"e.g. 'bs(\d+)'")


def test_param_from_name_is_printed_as_typed(tmp_path, constant_files):
    out = cli(
        "sweep",
        "--from",
        *constant_files,
        "--param-from-name",
        r"xx(\d+)",
        "--no-tui",
        home=tmp_path,
    )
    assert out.returncode == 2
    assert (
        r"--param-from-name 'xx(\d+)' does not match the name" in out.stderr
        and "\\\\" not in out.stderr
    )


# -- findings: GPUs, repeated values, efficiency trends
# -------------------------------------------------------------
def test_points_on_different_gpus_are_named_per_gpu(tmp_path):
    """Copies of an H100 report and a T4 report as batch sizes 1 and 4 (GPU names as SOURCES.md
    lists them)."""
    a, b = tmp_path / "a_bs1.ncu-rep", tmp_path / "b_bs4.ncu-rep"
    a.write_bytes(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep").read_bytes())
    b.write_bytes(fixture_path("t4_mlp_matadd_full.ncu-rep").read_bytes())
    out = cli("sweep", "--from", a, b, "--param-from-name", r"bs(\d+)", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    notes = json.loads(out.stdout)["analyses"][0]["findings"]
    assert (
        "the points ran on different GPUs (NVIDIA H100 PCIe at param = 1; Tesla T4 at param = 4)"
        in notes[0]
    )


def gemm_files(tmp_path: Path, counts: dict[str, int]) -> list[Path]:
    """A file per name holding that many real V100 GEMM launches."""
    gemm = next(
        r
        for r in launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
        if "tensorop_s884gemm" in r["Kernel Name"]
    )
    files = []
    for name, n in counts.items():
        files.append(tmp_path / name)
        files[-1].write_text(raw_csv([gemm] * n))
    return files


def test_a_repeated_value_is_named_and_fitted_at_its_mean(tmp_path):
    """bs 1, 2 and two runs at bs 4 (4 and 6 GEMMs): the line goes through the means (1, 2, 5
    GEMMs), slope by hand: Sxx = 42/9, Sxy = 57/9 about x 7/3, y 8/3, so 19/14 GEMMs per unit (all
    four points would give 37/27)."""
    files = gemm_files(tmp_path, {"g_bs1.csv": 1, "g_bs2.csv": 2, "g_bs4.csv": 4, "h_bs4.csv": 6})
    out = cli("sweep", "--from", *files, "--param-from-name", r"bs(\d+)", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["analyses"][0]
    gemm = next(
        r
        for r in launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
        if "tensorop_s884gemm" in r["Kernel Name"]
    )
    per_gemm = 2 * 20480**3 + simt_flop(gemm)
    assert doc["fits"]["flop"]["slope"] == pytest.approx(19 / 14 * per_gemm, rel=1e-9)
    assert (
        "param = 4 appears 2 times (g_bs4.csv, h_bs4.csv): the fits and the efficiency trend use"
        " the mean of its points" in doc["findings"]
    )
    assert [p["run"] for p in doc["points"]] == ["g_bs1.csv", "g_bs2.csv", "g_bs4.csv", "h_bs4.csv"]


def test_one_value_twice_says_so_not_that_the_parameter_never_arrived(tmp_path):
    files = gemm_files(tmp_path, {"a_bs4.csv": 4, "b_bs4.csv": 4})
    out = cli("sweep", "--from", *files, "--param-from-name", r"bs(\d+)", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["analyses"][0]
    assert doc["findings"] == [
        (
            "param = 4 appears 2 times (a_bs4.csv, b_bs4.csv): the fits and the efficiency trend "
            "use the mean of its points"
        ),
        "param has one value (4) at every point: nothing to fit or compare",
    ]
    assert doc["fits"] == {"flop": None, "dram_bytes": None, "duration_s": None}


def efficiency_table(values: list[float], efficiency: list[float]) -> pd.DataFrame:
    """A per-point table with made-up efficiencies and FLOPs growing exactly with the parameter."""
    return pd.DataFrame(
        {
            "bs": values,
            "flop": [1e9 * v for v in values],
            "dram_bytes": [1e6 * v for v in values],
            "flop_per_sample": [1e9] * len(values),
            "flops_efficiency": efficiency,
            "run": [f"r{i}" for i in range(len(values))],
            "gpu": ["GPU X"] * len(values),
        }
    )


@pytest.mark.parametrize(
    ("efficiency", "expected"),
    [
        # rises, then stays within 90% of its best 0.5: saturates where it first reaches 0.45, at
        # the 46% measured there (the finding quoted 45.0%, the threshold, a value no point had)
        (
            [0.1, 0.3, 0.46, 0.5, 0.48],
            "FLOP %Peak saturates from bs = 4 (reaches 46.0%, ≥ 90% of its best 50.0%)",
        ),
        # best at the first point, then down to 0.2%: it falls (the reviewers' sweep said "saturates
        # from 1")
        (
            [0.127, 0.1, 0.02, 0.005, 0.002],
            "FLOP %Peak falls after bs = 1 (best 12.7%) to 0.2% at bs = 16",
        ),
        # rises, peaks, falls below 90% of the peak by the end
        (
            [0.1, 0.4, 0.5, 0.3, 0.2],
            "FLOP %Peak falls after bs = 4 (best 50.0%) to 20.0% at bs = 16",
        ),
        ([0.1, 0.2, 0.3, 0.4, 0.5], None),  # still rising at the largest value: neither
        ([0.3, 0.31, 0.3, 0.305, 0.3], None),  # flat within 10%
    ],
)
def test_efficiency_saturates_only_when_it_rises_then_levels(efficiency, expected):
    notes = findings(efficiency_table([1, 2, 4, 8, 16], efficiency), pd.DataFrame(), "bs")
    trend = [n for n in notes if n.startswith("FLOP %Peak")]
    assert trend == ([expected] if expected else [])


# -- hosts that go away, points that fail, and what the sweep then says and exits with
# ---------------------------
def with_dead_host(config: Path, tmp_path: Path, alias: str = "deadbox") -> Path:
    """`config` plus a host whose port nothing listens on (a machine that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    text = config.read_text()
    block = "Host gpu-a" + text.split("Host gpu-a", 1)[1].split("Host ", 1)[0]
    port = block.split("Port ", 1)[1].split()[0]
    dead = block.replace("Host gpu-a", f"Host {alias}").replace(f"Port {port}", f"Port {closed}")
    out = tmp_path / "ssh_config_dead"
    out.write_text(text + dead)
    return out


def test_a_dead_host_is_dropped_and_the_others_finish_the_sweep(tmp_path, two_hosts):
    """Before: deadbox took 5 of 6 points and failed each ("cannot reach the host"), exit 0."""
    config = with_dead_host(two_hosts, tmp_path)
    out = cli(
        "sweep",
        "--param",
        "bs=1,2,3,4,5,6",
        "--host",
        "gpu-a",
        "--host",
        "deadbox",
        "--ssh-config",
        config,
        "--connect-timeout",
        "3",
        "--ncu",
        make_ncu(tmp_path, delay=0.3),
        "--sweep-name",
        "dead",
        "--json",
        "--",
        "echo",
        "{bs}",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("dropped host deadbox") == 1 and "cannot reach the host" in out.stderr
    assert "FAILED" not in out.stderr and "6 of 6 point(s) stored" in out.stderr
    listed = json.loads(cli("runs", "--sweep", "dead", "--json", home=tmp_path).stdout)
    assert sorted(int(r["params"]["bs"]) for r in listed) == [1, 2, 3, 4, 5, 6]
    assert {r["host"] for r in listed} == {"gpu-a"}
    # deadbox's attempt left no empty folder behind: one run folder per stored point
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted(
        r["name"] for r in listed
    )


def test_a_host_whose_connection_drops_mid_point_hands_the_point_back(tmp_path):
    """The connection to `flaky` dies while its first point is being profiled: that point is
    profiled again on `steady`, flaky is dropped, and every point ends up stored once."""
    steady, flaky = (
        start_sshd(tmp_path / "s1", alias="steady"),
        start_sshd(tmp_path / "s2", alias="flaky"),
    )
    try:
        config = tmp_path / "ssh_config"
        config.write_text(steady.config.read_text() + flaky.config.read_text())
        env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path / "home")}
        ncu = make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep", delay=0.5)
        proc = subprocess.Popen(
            [
                *CLI,
                "sweep",
                "--param",
                "n=1,2,3",
                "--host",
                "steady",
                "--host",
                "flaky",
                "--ssh-config",
                str(config),
                "--ncu",
                str(ncu),
                "--sweep-name",
                "drop",
                "--json",
                "--",
                "echo",
                "{n}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("    flaky: kernel 0"):
                assert flaky.drop_sessions() > 0
                break
        seen += proc.stderr.readlines()
        assert proc.wait(timeout=120) == 0, "".join(seen)
    finally:
        steady.stop()
        flaky.stop()
    stderr = "".join(seen)
    assert stderr.count("dropped host flaky") == 1 and "connection to flaky lost" in stderr
    assert "FAILED" not in stderr and "3 of 3 point(s) stored" in stderr
    listed = json.loads(cli("runs", "--sweep", "drop", "--json", home=tmp_path / "home").stdout)
    assert sorted(r["params"]["n"] for r in listed) == ["1", "2", "3"]


def test_with_every_host_dead_each_point_fails_once_and_the_exit_is_2(tmp_path, two_hosts):
    config = with_dead_host(two_hosts, tmp_path)
    out = cli(
        "sweep",
        "--param",
        "bs=1,2",
        "--host",
        "deadbox",
        "--ssh-config",
        config,
        "--connect-timeout",
        "3",
        "--ncu",
        make_ncu(tmp_path),
        "--json",
        "--",
        "echo",
        "{bs}",
        home=tmp_path,
    )
    assert out.returncode == 2, out.stderr
    assert json.loads(out.stdout)["analyses"] == []  # the output still prints
    assert out.stderr.count("FAILED: not profiled: no host left to run it") == 2
    assert "0 of 2 point(s) stored, 2 failed" in out.stderr


def test_some_points_failing_exit_1_and_the_rest_is_analysed(tmp_path):
    """A point whose profile fails (ncu refused: ERR_NVGPUCTRPERM, as captured) does not stop the
    others."""
    ok, perm = make_ncu(tmp_path), make_ncu(tmp_path, scenario="perm")
    ncu = tmp_path / "ncu-some"
    ncu.write_text(f'#!/bin/sh\ncase "$*" in *" 2") exec {perm} "$@";; *) exec {ok} "$@";; esac\n')
    ncu.chmod(0o755)
    out = cli(
        "sweep",
        "--param",
        "n=1,2,3",
        "--ncu",
        ncu,
        "--sweep-name",
        "some",
        "--json",
        "--",
        "echo",
        "{n}",
        home=tmp_path,
    )
    assert out.returncode == 1, out.stderr
    assert (
        "2 of 3 point(s) stored, 1 failed" in out.stderr
        and "n=2 on localhost: FAILED" in out.stderr
    )
    # no empty n=2
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["some-n=1", "some-n=3"]
    assert [p["n"] for p in json.loads(out.stdout)["analyses"][0]["points"]] == [1, 3]
    every = cli(
        "sweep", "--param", "n=1,2", "--ncu", perm, "--json", "--", "echo", "{n}", home=tmp_path
    )
    assert every.returncode == 2 and "0 of 2 point(s) stored, 2 failed" in every.stderr


def test_a_point_whose_program_failed_is_named_and_the_exit_is_1(tmp_path):
    """Before: bs=2's program exited 1 and the sweep said only `stored as swf-bs=2`, exit 0: a crash
    at one size would bend the fits unnoticed."""
    out = cli(
        "sweep",
        "--param",
        "bs=1,2,4",
        "--ncu",
        make_ncu(tmp_path),
        "--sweep-name",
        "swf",
        "--json",
        "--",
        "sh",
        "-c",
        "test {bs} -ne 2",
        home=tmp_path,
    )
    assert out.returncode == 1, out.stderr
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("[") and "bs=2 " in ln)
    assert "stored as swf-bs=2 (" in line and "the command exited with code 1" in line
    assert "3 of 3 point(s) stored, 1 with a warning" in out.stderr
    assert (
        "warning: bs=2 (run swf-bs=2) is in the analysis although the command exited with code 1"
        in out.stderr
    )
    runs = {r["params"]["bs"]: r for r in json.loads(out.stdout)["runs"]}
    assert runs["2"]["suspect"] == "the command exited with code 1"
    assert runs["1"]["suspect"] == runs["4"]["suspect"] == ""
    assert any("exited with code 1" in n for n in runs["2"]["notes"])
    said = "bs=2 (run swf-bs=2) is in the analysis although the command exited with code 1"
    assert [f for f in json.loads(out.stdout)["analyses"][0]["findings"] if said in f]
    # the store remembers it for every later analysis
    reopened = cli("open", "swf", "--json", home=tmp_path)
    assert reopened.returncode == 0, reopened.stderr
    assert [f for f in json.loads(reopened.stdout)["analyses"][0]["findings"] if said in f]
    assert not [
        f
        for f in json.loads(reopened.stdout)["analyses"][0]["findings"]
        if "bs=1 " in f or "bs=4 " in f
    ]
    # The table marks the point too, in words (as the app's Sweep screen does), and keeps it at 80
    # columns.
    shown = cli("open", "swf", "--no-tui", home=tmp_path, columns=80).stdout.splitlines()
    rows = {line.split()[0]: line for line in shown if line.split()[:1] in (["1"], ["2"], ["4"])}
    # Shortened where the numbers need the room (every number stays whole); the finding below says
    # it whole.
    assert "! the command" in rows["2"] and "!" not in rows["1"] + rows["4"]
    assert said in " ".join(" ".join(shown).split())
    assert shown[0].split()[:3] == ["bs", "Warning", "FLOP"] and all(
        len(line) <= 80 for line in shown
    )
    clean = cli(
        "sweep",
        "--param",
        "bs=1,2",
        "--ncu",
        make_ncu(tmp_path),
        "--json",
        "--",
        "sh",
        "-c",
        "test {bs} -ne 9",
        home=tmp_path,
    )
    assert clean.returncode == 0 and "with a warning" not in clean.stderr, clean.stderr


class FullDiskOnce(LocalTransport):
    """This machine, whose disk fills up while the first report is copied back (ENOSPC from the
    copy)."""

    def __init__(self) -> None:
        self.full = True

    def fetch(self, remote: str, local: Path) -> bool:
        if self.full:
            self.full = False
            raise OSError(errno.ENOSPC, "No space left on device", str(local))
        return super().fetch(remote, local)


def test_an_error_that_is_not_flopscopes_fails_its_point_not_the_sweep(tmp_path, monkeypatch):
    """Before: the worker thread died on the OSError, the other points were never profiled, and the
    summary counted them stored."""
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    opts = ProfileOptions(command=["echo", "{n}"], ncu=str(make_ncu(tmp_path)))
    results = run_sweep(opts, {"n": ["1", "2", "3"]}, [FullDiskOnce()], "enospc")
    assert [(r.params["n"], r.status) for r in results] == [
        ("1", "failed"),
        ("2", "stored"),
        ("3", "stored"),
    ]
    assert (
        results[0].error
        == f"OSError: [Errno 28] No space left on device: '{tmp_path / 'runs'}/enospc-n=1/"
        "report.ncu-rep'"
    )


def test_a_store_that_cannot_be_written_stops_the_sweep_cleanly(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    monkeypatch.setattr(Store, "timeout", 0.2)
    Store().close()
    other = sqlite3.connect(tmp_path / "flopscope.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holding the store
    try:
        opts = ProfileOptions(command=["echo", "{n}"], ncu=str(make_ncu(tmp_path)))
        results = run_sweep(opts, {"n": ["1", "2", "3"]}, [LocalTransport()], "locked")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert [r.status for r in results] == ["failed"] * 3
    assert "another process kept the store locked" in results[0].error
    assert f"its report is kept in {tmp_path / 'runs' / 'locked-n=1'}" in results[0].error
    assert (tmp_path / "runs" / "locked-n=1" / "report.ncu-rep").is_file()
    assert all(r.error.startswith("not profiled: the sweep stopped (") for r in results[1:])
    # nothing profiled that could not be kept
    assert not (tmp_path / "runs" / "locked-n=2").exists()


# -- names, --resume, --from run ids, placeholders, checks before anything runs
# -----------------------------------
RESERVER = """
import sys
from flopscope.core.store.run_store import Store
store = Store()
print("ready", flush=True)
sys.stdin.readline()
for _ in range(20):
    print(store.new_sweep("sweep-20250101-120000"), flush=True)
"""


def test_sweeps_started_in_the_same_second_get_different_names(tmp_path):
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RESERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    names = [line for proc in procs for line in proc.communicate(timeout=120)[0].split()]
    assert len(names) == 40 and len(set(names)) == 40
    assert "sweep-20250101-120000" in names and "sweep-20250101-120000-39" in names


def test_two_default_named_sweeps_at_once_do_not_merge(tmp_path):
    ncu = make_ncu(tmp_path)
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path)}
    args = [*CLI, "sweep", "--param", "n=1,2", "--ncu", str(ncu), "--json", "--", "echo", "{n}"]
    procs = [
        subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(2)
    ]
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
    listed = json.loads(cli("runs", "--json", home=tmp_path).stdout)
    by_sweep: dict[str, list[str]] = {}
    for run in listed:
        by_sweep.setdefault(run["sweep"], []).append(run["params"]["n"])
    assert len(by_sweep) == 2 and all(sorted(v) == ["1", "2"] for v in by_sweep.values())


def test_resume_needs_the_sweeps_name(tmp_path):
    out = cli(
        "sweep",
        "--param",
        "n=1,2",
        "--resume",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "echo",
        "{n}",
        home=tmp_path,
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert (
        out.stderr.startswith("flopscope: --resume: which sweep?")
        and "--sweep-name NAME" in out.stderr
    )
    assert not (tmp_path / "runs").exists()


def test_from_run_ids_keeps_their_stored_parameters(tmp_path, monkeypatch):
    """Before: `--from 1 2 3` looked the parameters up by name, found none for "1" and stopped."""
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    files = gemm_files(tmp_path, {"g1.csv": 1, "g2.csv": 2, "g4.csv": 4})
    store = Store()
    for n, path in zip((1, 2, 4), files, strict=True):
        store.save(read_report(path), f"point-{n}", kind="sweep", sweep="s", params={"bs": str(n)})
    store.close()
    ids = [str(i) for i in json_runs(tmp_path, "id")]
    out = cli("sweep", "--from", *ids, "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["analyses"][0]
    assert doc["param"] == "bs" and [p["bs"] for p in doc["points"]] == [1, 2, 4]
    gemm = next(
        r
        for r in launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
        if "tensorop_s884gemm" in r["Kernel Name"]
    )
    # one V100 GEMM per unit: 2*M*N*K + its epilogue's SIMT FLOPs
    per_gemm = 2 * 20480**3 + simt_flop(gemm)
    assert doc["fits"]["flop"]["slope"] == pytest.approx(per_gemm, rel=1e-9)
    by_name = cli("sweep", "--from", "point-1", "point-4", "--json", home=tmp_path)
    assert [p["bs"] for p in json.loads(by_name.stdout)["analyses"][0]["points"]] == [1, 4]


def test_saturation_quotes_the_efficiency_measured_where_it_saturates(tmp_path):
    """Before, the finding said `reaches {0.9 x best}`: the threshold, a number no point measured,
    beside a table showing another. Real launches: batch size N = N tensor-core GEMMs and one SIMT
    GEMM, so the efficiency rises and levels; the finding quotes the stored run's own efficiency at
    the point it names."""
    rows = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
    gemm = next(r for r in rows if "tensorop_s884gemm" in r["Kernel Name"])
    simt = next(r for r in rows if "gemm::kernel::Gemm" in r["Kernel Name"])
    sizes = (1, 2, 4, 8, 16, 32)
    with Store(tmp_path / "flopscope.db") as store:
        for n in sizes:
            path = tmp_path / f"bs{n}.csv"
            path.write_text(raw_csv([gemm] * n + [simt]))
            store.save(
                read_report(path, gpu="Tesla V100-SXM2-16GB"),
                f"sat-{n}",
                kind="sweep",
                sweep="sat",
                params={"batch_size": n},
            )
        measured = {n: store.load(f"sat-{n}").summary().flops_efficiency for n in sizes}
    best = max(measured.values())
    first = next(n for n in sizes if all(measured[m] >= 0.9 * best for m in sizes if m >= n))
    assert first not in (sizes[0], sizes[-1])  # it rises, then levels: a saturation to name
    out = cli("open", "sat", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["analyses"][0]
    said = next(f for f in doc["findings"] if f.startswith("FLOP %Peak"))
    assert (
        said
        == f"FLOP %Peak saturates from batch_size = {first} (reaches {measured[first]:.1%}, ≥ 90%"
        f" of its best {best:.1%})"
    )
    shown = cli("open", "sat", "--no-tui", home=tmp_path, columns=200).stdout
    row = next(line for line in shown.splitlines() if line.split()[:1] == [str(first)])
    assert f"{100 * measured[first]:.1f}%" in row.split()  # the table's cell is the number quoted


def json_runs(home: Path, field: str) -> list:
    return [r[field] for r in json.loads(cli("runs", "--json", home=home).stdout)]


def test_a_parameter_used_only_in_the_working_directory_reaches_the_program(tmp_path):
    """Before: "no argument uses {bs}" though every point ran in its own folder."""
    assert (
        unused_params(["python", "x.py"], {"bs": ["1"], "seq": ["2"]}, {"S": "{seq}"}, "/data/{bs}")
        == []
    )
    assert unused_params(["python", "x.py"], {"bs": ["1"]}, {}, None) == ["bs"]
    for n in (1, 2):
        (tmp_path / f"d{n}").mkdir()
    seen = tmp_path / "seen.txt"
    program = f"import os; open({str(seen)!r}, 'a').write(os.getcwd() + '\\n')"
    out = cli(
        "sweep",
        "--param",
        "bs=1,2",
        "--remote-cwd",
        f"{tmp_path}/d{{bs}}",
        "--ncu",
        make_ncu(tmp_path),
        "--json",
        "--",
        sys.executable,
        "-c",
        program,
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "no argument uses" not in out.stderr
    assert seen.read_text().splitlines() == [str(tmp_path / "d1"), str(tmp_path / "d2")]
    missing = cli(
        "sweep",
        "--param",
        "bs=1,3",
        "--remote-cwd",
        f"{tmp_path}/d{{bs}}",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "true",
        home=tmp_path / "h2",
    )
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert f"--remote-cwd {tmp_path}/d3: no such folder on this machine" in missing.stderr
    assert not (tmp_path / "h2" / "runs").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--tolerance", "-1"],
        ["--metrics", ","],
        ["--launch-count", "0"],
        ["--connect-timeout", "-5"],
        ["--ncu-args", '"abc'],
        # Before: every point was profiled, then 0 stored (--gpu), or each point's
        # folder was left behind (--host).
        ["--gpu", "nosuch"],
        ["--host=-bad"],
        ["--host", "h", "--ssh-config", "/no"],
        ["--ncu-args=--export x"],
        ["--sweep-name", "a/b"],
        # Before: only bs=3 was profiled, exit 0.
        ["--param", "n=3"],
    ],
)
def test_bad_options_are_refused_before_any_point_runs(tmp_path, args):
    out = cli(
        "sweep",
        "--param",
        "n=1,2",
        "--ncu",
        make_ncu(tmp_path),
        *args,
        "--",
        "echo",
        "{n}",
        home=tmp_path,
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, (
        out.stderr
    )
    assert not (tmp_path / "runs").exists() and not (tmp_path / "flopscope.db").exists()


def per_param_table(values: list[float], flop: list[float]) -> pd.DataFrame:
    """A per-point table: FLOP/param computed here as FLOP / value."""
    return pd.DataFrame(
        {
            "seq": values,
            "flop": flop,
            "dram_bytes": [1e6 * v for v in values],
            "flop_per_sample": [f / v for f, v in zip(flop, values, strict=True)],
            "flops_efficiency": [0.5] * len(values),
            "run": [f"r{i}" for i in range(len(values))],
            "gpu": ["GPU X"] * len(values),
        }
    )


@pytest.mark.parametrize(
    ("flop", "expected"),
    [
        # FLOPs that do not grow: that finding only, not also a FLOP/seq "drift" of 6300%.
        ([2.26e9, 2.26e9, 2.26e9, 2.26e9], None),
        ([2.26e9, 2.27e9, 2.26e9, 2.265e9], None),  # flat within 1%
        # FLOP/seq from 1.808e10 (at 8) down to 4e6 (at 4): a factor of 4,520, not `451900.0%`
        (
            [2.26e9, 2.26e9 * 8, 1.0e6 * 16, 2.26e9 * 64],
            "FLOP/seq varies by 4,520× (largest/smallest) across seq",
        ),
        ([1e9, 2e9 * 1.031, 4e9, 8e9], "FLOP/seq varies by 3.1% across seq"),
        ([1e9, 2e9 * 5, 4e9, 8e9], "FLOP/seq varies by 5× (largest/smallest) across seq"),
    ],
)
def test_flop_per_param_drift_is_named_after_the_parameter_and_readable(flop, expected):
    notes = findings(per_param_table([1, 2, 4, 8], flop), pd.DataFrame(), "seq", tolerance=0.01)
    drift = [n for n in notes if "varies by" in n]
    assert [n.split(" (tolerance")[0] for n in drift] == ([expected] if expected else [])
    amounts = [n.split("varies by ")[1].split(" across")[0] for n in drift]
    assert all(float(a[:-1]) <= 100 for a in amounts if a.endswith("%"))  # past 100%: a factor
    if flop[0] == flop[1]:
        assert any("identical" in n or "do not grow" in n for n in notes) or expected


def test_a_run_and_a_sweep_of_one_name_are_refused_before_ncu_runs(tmp_path):
    """Before, `sweep --sweep-name t4a` beside run t4a, and `profile --name bs` beside sweep bs,
    were accepted: then `open NAME` showed the sweep while `diff NAME` took the run."""
    home, ran = tmp_path / "home", tmp_path / "ncu-ran"
    ncu = tmp_path / "ncu"  # the stand-in, leaving a mark if anything started it
    ncu.write_text(f'#!/bin/sh\ntouch {ran}\nexec {make_ncu(tmp_path)} "$@"\n')
    ncu.chmod(0o755)
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    with Store(home / "flopscope.db") as store:
        store.save(report, "t4a")
        store.save(report, "bs-n=1", kind="sweep", sweep="bs", params={"n": "1"})
    folder = tmp_path / "bs"  # `import` takes a run folder's own name
    folder.mkdir()
    (folder / "report.ncu-rep").write_bytes(fixture_path("t4_mlp_matadd_full.ncu-rep").read_bytes())
    for args, needle in (
        (
            ("sweep", "--param", "n=1,2", "--sweep-name", "t4a", "--", "echo", "{n}"),
            "--sweep-name t4a: a run named t4a is stored",
        ),
        (("profile", "--name", "bs", "--", "true"), "--name bs: a sweep named bs is stored"),
        (("import", folder), f"{folder} (its name): a sweep named bs is stored"),
    ):
        out = cli(
            *args[:1],
            *(("--ncu", ncu, "--no-tui") if args[0] != "import" else ()),
            *args[1:],
            home=home,
        )
        assert out.returncode == 2 and out.stdout == "" and len(out.stderr.splitlines()) == 1, (
            out.stderr
        )
        assert out.stderr.startswith(f"flopscope: {needle}") and "Traceback" not in out.stderr
    assert not ran.exists() and not (home / "runs").exists()
    # newest first
    assert [r["name"] for r in json.loads(cli("runs", "--json", home=home).stdout)] == [
        "bs-n=1",
        "t4a",
    ]
    # A sweep resumed under its own name is no collision, and a default sweep name skips a run's
    # name.
    with Store(home / "flopscope.db") as store:
        store.save(report, "sweep-x")
        assert store.new_sweep("sweep-x") == "sweep-x-1"
        store.check_names_apart("t4b", "bs", "--name t4b", "--sweep-name bs")


def test_a_repeated_param_is_refused_naming_the_fix(tmp_path):
    out = cli(
        "sweep",
        "--param",
        "bs=1,2",
        "--param",
        "bs=3",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "echo",
        "{bs}",
        home=tmp_path,
    )
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr
    assert (
        out.stderr
        == "flopscope: --param bs=3: bs is given by an earlier --param too; one --param per name, "
        "its values comma-separated: --param bs=1,2,3\n"
    )
    assert not (tmp_path / "runs").exists()


def test_a_stored_sweep_name_without_resume_is_refused_before_anything_runs(tmp_path):
    """Before: the second `sweep --sweep-name bs` stored bs=1 and bs=2 again beside the first ones,
    each value then measured twice in the analysis."""
    sweep = [
        "sweep",
        "--param",
        "bs=1,2",
        "--ncu",
        make_ncu(tmp_path),
        "--sweep-name",
        "bs",
        "--json",
    ]
    assert cli(*sweep, "--", "echo", "{bs}", home=tmp_path).returncode == 0
    again = cli(*sweep, "--", "echo", "{bs}", home=tmp_path)
    assert again.returncode == 2 and len(again.stderr.splitlines()) == 1, again.stderr
    assert again.stderr.startswith(
        "flopscope: --sweep-name bs: a sweep of this name is stored already (2 point(s)); pass"
        " --resume to continue it"
    )
    assert "or choose another --sweep-name" in again.stderr
    assert sorted(json_runs(tmp_path, "name")) == ["bs-bs=1", "bs-bs=2"]
    resumed = cli(*sweep, "--resume", "--", "echo", "{bs}", home=tmp_path)
    assert resumed.returncode == 0 and resumed.stderr.count("already stored, skipped") == 2, (
        resumed.stderr
    )
    assert len(json_runs(tmp_path, "name")) == 2


def test_a_gpu_of_another_compute_capability_keeps_every_point(tmp_path):
    """Before: every point was profiled, then refused (`--gpu a100-pcie-80gb` on a T4): 0 stored,
    exit 2."""
    out = cli(
        "sweep",
        "--param",
        "bs=1,2",
        "--ncu",
        make_ncu(tmp_path),
        "--gpu",
        "a100-pcie-80gb",
        "--json",
        "--sweep-name",
        "cc",
        "--",
        "echo",
        "{bs}",
        home=tmp_path,
    )
    assert out.returncode == 1, out.stderr
    assert "2 of 2 point(s) stored, 2 with a warning" in out.stderr
    assert (
        "warning: 2 point(s) judged against their own GPU, not --gpu: --gpu a100-pcie-80gb: NVIDIA"
        " A100 80GB PCIe is compute capability 8.0" in out.stderr
    )
    doc = json.loads(out.stdout)
    assert doc["judged_against"] is None  # its own GPU judged the points: no "(--gpu)" header
    assert [r["status"] for r in doc["runs"]] == ["stored", "stored"]
