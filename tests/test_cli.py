"""The `flopscope` command as users run it: tables, JSON, exports, GPU list, and bad input."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pandas as pd
import pytest
from flopscope.core import NAMES, FlopscopeError, read_report

from .conftest import fixture_path


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flopscope.tui.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env={"COLUMNS": "200", "PATH": ""})


def test_report_table_has_header_ceilings_and_rows():
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    out = run("report", path)
    assert out.returncode == 0, out.stderr
    assert "Tesla V100-SXM2-32GB" in out.stdout
    assert "Ceilings: FP32" in out.stdout and "report counters" in out.stdout
    assert "FLOPS eff" in out.stdout and "compute eff" in out.stdout and "bandwidth eff" in out.stdout
    assert "compute_tendencies_x_279_gpu" in out.stdout
    assert "FMA = 2 FLOPs" in out.stdout
    lines = out.stdout.splitlines()
    order = [n for n in ("compute_tendencies_x_279_gpu", "semi_discrete_step_232_gpu", "set_halo_values_x_396_gpu")
             if any(n in line for line in lines)]
    positions = [next(i for i, line in enumerate(lines) if n in line) for n in order]
    assert positions == sorted(positions)  # sorted by time, longest first


def test_report_json_is_one_object_with_canonical_rows():
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    out = run("report", path, "--json", "--by", "launch", "--sort", "flop", "--top", "3")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc) == {"meta", "rows"}
    assert len(doc["rows"]) == 3
    assert all(set(NAMES) <= set(row) for row in doc["rows"])
    flops = [row["flop"] for row in doc["rows"]]
    assert flops == sorted(flops, reverse=True)
    expected = read_report(path).kernels["flop"].nlargest(3).tolist()
    assert flops == pytest.approx(expected)
    assert doc["meta"]["summary"]["launches"] == 5


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".json"])
def test_export_writes_the_rows_shown(tmp_path, suffix):
    path = fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep")
    out_file = tmp_path / f"out{suffix}"
    out = run("export", path, "-o", out_file, "--by", "name", "--sort", "count")
    assert out.returncode == 0, out.stderr
    if suffix == ".csv":
        table = pd.read_csv(out_file)
    elif suffix == ".parquet":
        table = pd.read_parquet(out_file)
    else:
        table = pd.DataFrame(json.loads(out_file.read_text())["rows"])
    assert list(table.columns[: len(NAMES)]) == NAMES
    expected = read_report(path).view("name", sort="count")
    assert list(table["count"]) == list(expected["count"])
    assert table["duration_s"].tolist() == pytest.approx(expected["duration_s"].tolist())
    assert not list(tmp_path.glob(".*.tmp"))  # atomic: no temp file left behind


def test_gpus_lists_database_with_sources():
    out = run("gpus", "--json")
    assert out.returncode == 0
    gpus = json.loads(out.stdout)
    keys = {g["key"] for g in gpus}
    assert {"k40m", "k80", "v100-sxm2-16gb", "t4", "a100-sxm4-80gb", "h100-sxm", "h200-sxm", "b200",
            "rtx3090", "rtx4090", "l4", "l40s", "a10"} <= keys
    assert all(g["source"].startswith("https://") for g in gpus)
    table = run("gpus")
    assert "Tesla K80" in table.stdout and table.returncode == 0


def test_gpu_override_gives_datasheet_ceilings():
    path = fixture_path("a100_gemm_printfp_details.csv")  # names no GPU anywhere
    plain = json.loads(run("report", path, "--json").stdout)
    assert plain["meta"]["gpu"] is None and plain["rows"][0]["peak_flop_per_s"] is None
    forced = json.loads(run("report", path, "--json", "--gpu", "NVIDIA A100-SXM4-40GB").stdout)
    assert forced["meta"]["gpu_source"] == "--gpu"
    assert forced["rows"][0]["peak_flop_per_s"] > 1e12


BAD = {
    "empty.csv": b"",
    "text.csv": b"just,some\ncsv,text\n",
    "binary.ncu-rep": bytes(range(256)) * 4,
    "header_only.csv": b'"ID","Process ID","Kernel Name","gpu__time_duration.sum"\n"","","","ns"\n',
    "truncated.ncu-rep": None,
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_one_line_exit_2(tmp_path, name):
    path = tmp_path / name
    content = BAD[name]
    if content is None:
        content = fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep").read_bytes()[:1_000_000]
    path.write_bytes(content)
    out = run("report", path)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0]
    assert out.stdout == ""


@pytest.mark.parametrize(("name", "keep"), [
    ("a100pcie40_cub_radixsort_154k_basic.ncu-rep", 1_667_324),  # ncu_report logs parse errors while reading
    ("t4_mlp_matadd_full.ncu-rep", -20),  # loads, and yields no launch at all
    ("h800_sglang_flashattn_full.ncu-rep", 0.7),
])
def test_a_cut_short_report_says_truncated_in_one_line(tmp_path, name, keep):
    data = fixture_path(name).read_bytes()
    cut = keep if isinstance(keep, int) and keep > 0 else len(data) + keep if isinstance(keep, int) \
        else int(len(data) * keep)
    path = tmp_path / "cut.ncu-rep"
    path.write_bytes(data[:cut])
    out = run("report", path)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr  # no protobuf/absl log lines around it
    assert str(path) in lines[0] and "truncated" in lines[0] and "copy it again" in lines[0]


def _without_column(path, column: str) -> str:
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    k = rows[0].index(column)
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(r[:k] + r[k + 1:] for r in rows)
    return out.getvalue()


@pytest.mark.parametrize(("damage", "says"), [
    ("Metric Value", 'without its "Metric Value" column'),
    ("Metric Unit", 'without its "Metric Unit" column'),
    ("Kernel Name", 'no "Kernel Name" column'),
    ("half", "truncated"),
])
def test_a_damaged_csv_is_refused_not_misread(tmp_path, damage, says):
    """Before: a details page without its value column read as a raw page of 165 empty launches, one without
    kernel names as a single nameless kernel, half a file as a shorter run: all with exit code 0."""
    if damage == "half":
        data = fixture_path("a100_gemm_printfp_details.csv").read_bytes()
        text = data[: len(data) // 2].decode()
    else:
        text = _without_column(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"), damage)
    path = tmp_path / "damaged.csv"
    path.write_text(text)
    out = run("report", path)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and says in lines[0]


def test_missing_file_and_unknown_gpu_and_bad_export_path(tmp_path):
    assert run("report", tmp_path / "nope.csv").returncode == 2
    out = run("report", fixture_path("t4_mlp_matadd_full.ncu-rep"), "--gpu", "Voodoo 3")
    assert out.returncode == 2 and "flopscope gpus" in out.stderr
    out = run("export", fixture_path("t4_mlp_matadd_full.ncu-rep"), "-o", tmp_path / "x.xlsx")
    assert out.returncode == 2 and ".csv" in out.stderr


def test_missing_counter_names_metric_and_ncu_option_and_table_still_prints():
    path = fixture_path("a10_spyinfer_linear_105k_basic.ncu-rep")  # basic set: no FLOP or DRAM counters
    out = run("report", path)
    assert out.returncode == 0
    assert "__cuda_linear_fp32_fp16_kernel" in out.stdout
    assert "ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum" in out.stderr
    sort = run("report", path, "--sort", "flop")
    assert sort.returncode == 2 and "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in sort.stderr
    assert len(sort.stderr.strip().splitlines()) == 1


def test_export_failure_leaves_existing_file_intact(tmp_path):
    target = tmp_path / "keep.csv"
    target.write_text("precious\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("not ncu\n")
    assert run("export", bad, "-o", target).returncode == 2
    assert target.read_text() == "precious\n"


def test_sort_by_kernel_name_is_alphabetical():
    path = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    doc = json.loads(run("report", path, "--json", "--sort", "kernel", "--asc").stdout)
    names = [r["kernel"] for r in doc["rows"]]
    assert names == sorted(names)


def test_demo_without_a_bundled_example_says_so_in_one_line(tmp_path):
    from flopscope.tui.cli import bundled_example

    try:
        path = bundled_example()
    except FlopscopeError:
        path = None
    out = subprocess.run([sys.executable, "-m", "flopscope.tui.cli", "demo", "--no-tui"], capture_output=True,
                         text=True, timeout=120)
    if path is None:
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.count("\n") == 1 and "no bundled example" in out.stderr and "flopscope report" in out.stderr
    else:  # the project's own capture: the same table `flopscope report` prints for it
        same = subprocess.run([sys.executable, "-m", "flopscope.tui.cli", "report", path], capture_output=True,
                              text=True, timeout=120)
        assert out.returncode == 0 and out.stdout == same.stdout
