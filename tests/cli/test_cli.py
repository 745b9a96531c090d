"""The `flopscope` command as users run it: tables, JSON, exports, GPU list, and bad input."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sqlite3
import stat
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core import NAMES, FlopscopeError, read_report
from flopscope.core.store.run_store import Store
from rich.cells import cell_len

from ..conftest import fixture_path
from ..helpers.cli import CLI, permissions_bind, run_cli
from ..helpers.commands import run


def one_line_error(out: subprocess.CompletedProcess, *needles: str) -> None:
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert all(n in lines[0] for n in needles), lines[0]


def test_report_table_has_header_ceilings_and_rows():
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    out = run("report", path)
    assert out.returncode == 0, out.stderr
    assert "Tesla V100-SXM2-32GB" in out.stdout
    assert (
        re.search(r"Ceilings at SM [\d.]+ GHz: FP32", out.stdout)
        and "report counters" in out.stdout
    )
    assert "FLOP %Peak" in out.stdout and "arith. time" in out.stdout and "DRAM %Peak" in out.stdout
    assert "compute_tendencies_x_279_gpu" in out.stdout
    assert "FMA = 2 FLOPs" in out.stdout
    lines = out.stdout.splitlines()
    order = [
        n
        for n in (
            "compute_tendencies_x_279_gpu",
            "semi_discrete_step_232_gpu",
            "set_halo_values_x_396_gpu",
        )
        if any(n in line for line in lines)
    ]
    positions = [next(i for i, line in enumerate(lines) if n in line) for n in order]
    assert positions == sorted(positions)  # sorted by time, longest first


def test_report_json_is_one_object_with_canonical_rows():
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    out = run("report", path, "--json", "--by", "launch", "--sort", "flop", "--top", "3")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    # by launch, a full-set report's opcode counts nest beside the rows (issue 42.5): those of the
    # rows shown
    assert set(doc) == {"meta", "rows", "opcodes"}
    assert len(doc["rows"]) == 3
    assert set(doc["opcodes"]) == {str(row["launch_id"]) for row in doc["rows"]}
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


def test_precision_reads_as_in_the_app_and_json_keeps_the_canonical_label(tmp_path):
    """The printed table spells a two-part tensor precision as the app does (short enough to show at
    120 columns, where `tensor_fp16_acc16+tensor_fp16` was hidden); --json and export keep the
    canonical label."""
    from ..helpers.raw_csv import mixed_accumulate_hgemm

    path = mixed_accumulate_hgemm(tmp_path / "hgemm.csv")
    out = run_cli("report", path, columns=120)
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("ampere_fp16"))
    assert row.rstrip().endswith(" TC fp16/acc16+TC fp16")
    assert not [
        line for line in out.stdout.splitlines() if line.startswith("Hidden") and "Prec" in line
    ]
    doc = json.loads(run("report", path, "--json").stdout)
    assert [r["precision"] for r in doc["rows"]] == ["tensor_fp16_acc16+tensor_fp16"]
    assert run("export", path, "-o", tmp_path / "rows.csv").returncode == 0
    assert pd.read_csv(tmp_path / "rows.csv")["precision"].tolist() == [
        "tensor_fp16_acc16+tensor_fp16"
    ]


def test_gpus_lists_database_with_sources():
    out = run("gpus", "--json")
    assert out.returncode == 0
    gpus = json.loads(out.stdout)
    keys = {g["key"] for g in gpus}
    assert {
        "k40m",
        "k80",
        "v100-sxm2-16gb",
        "t4",
        "a100-sxm4-80gb",
        "h100-sxm",
        "h200-sxm",
        "b200",
        "rtx3090",
        "rtx4090",
        "l4",
        "l40s",
        "a10",
    } <= keys
    assert all(g["source"].startswith("https://") for g in gpus)
    table = run("gpus")
    assert "Tesla K80" in table.stdout and table.returncode == 0
    # Volta and Turing have FP16 tensor cores only: their tensor column is FP16 (V100 SXM2 125, T4
    # 65 TFLOP/s)
    lines = table.stdout.splitlines()
    assert "FP16 TC" in lines[0]
    for name, fp16 in (("Tesla V100-SXM2-16GB", "125 TFLOP/s"), ("Tesla T4", "65.0 TFLOP/s")):
        assert fp16 in next(line for line in lines if line.startswith(name + " "))


def test_gpu_override_gives_datasheet_ceilings():
    path = fixture_path("a100_gemm_printfp_details.csv")  # names no GPU anywhere
    plain = json.loads(run("report", path, "--json").stdout)
    assert plain["meta"]["gpu"] is None and plain["rows"][0]["peak_flop_per_s"] is None
    forced = json.loads(run("report", path, "--json", "--gpu", "NVIDIA A100-SXM4-40GB").stdout)
    assert forced["meta"]["gpu_source"] == "--gpu"
    assert forced["rows"][0]["peak_flop_per_s"] > 1e12


def test_gpu_override_of_a_named_device_says_both_in_header_and_json():
    """--gpu l4 on an RTX 4090 report: the ceilings are the L4's (datasheet: 30.3 TFLOP/s FP32, 300
    GB/s), and the header no longer says the 4090 was "named by --gpu" over L4 ceilings."""
    path = fixture_path("rtx4090_torch_linear_sgemm.ncu-rep")
    out = run("report", path, "--gpu", "l4")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith(
        "NVIDIA GeForce RTX 4090 (CC 8.9), judged against NVIDIA L4 ceilings (--gpu) · "
    ), first
    meta = json.loads(run("report", path, "--gpu", "l4", "--json").stdout)["meta"]
    assert (
        meta["gpu"],
        meta["gpu_database_key"],
        meta["gpu_database_name"],
        meta["gpu_source"],
    ) == (
        "NVIDIA GeForce RTX 4090",
        "l4",
        "NVIDIA L4",
        "--gpu",
    )
    ceilings = {c["name"]: c["value"] for c in meta["ceilings"]}
    assert ceilings["fp32"] == pytest.approx(30.3e12, rel=0.01) and ceilings[
        "dram"
    ] == pytest.approx(300e9, rel=0.01)
    # Naming the report's own GPU overrides nothing: the report named it.
    own = run("report", path, "--gpu", "rtx4090").stdout.splitlines()[0]
    assert own.startswith("NVIDIA GeForce RTX 4090 (CC 8.9), named by report · "), own
    assert (
        json.loads(run("report", path, "--gpu", "rtx4090", "--json").stdout)["meta"]["gpu_source"]
        == "report"
    )


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


@pytest.mark.parametrize(
    ("name", "keep"),
    [
        # ncu_report logs parse errors while reading
        ("a100pcie40_cub_radixsort_154k_basic.ncu-rep", 1_667_324),
        ("t4_mlp_matadd_full.ncu-rep", -20),  # loads, and yields no launch at all
        ("h800_sglang_flashattn_full.ncu-rep", 0.7),
    ],
)
def test_a_cut_short_report_says_truncated_in_one_line(tmp_path, name, keep):
    data = fixture_path(name).read_bytes()
    cut = (
        keep
        if isinstance(keep, int) and keep > 0
        else len(data) + keep
        if isinstance(keep, int)
        else int(len(data) * keep)
    )
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
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
        r[:k] + r[k + 1 :] for r in rows
    )
    return out.getvalue()


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("Metric Value", 'without its "Metric Value" column'),
        ("Metric Unit", 'without its "Metric Unit" column'),
        ("Kernel Name", 'no "Kernel Name" column'),
        ("half", "truncated"),
    ],
)
def test_a_damaged_csv_is_refused_not_misread(tmp_path, damage, says):
    """Before: a details page without its value column read as a raw page of 165 empty launches, one
    without kernel names as a single nameless kernel, half a file as a shorter run: all with exit
    code 0."""
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


@pytest.mark.parametrize(
    ("name", "keep"),
    [("v100_cutlass_gemm_nersc_flops_details.csv", 150), ("a100_gemm_printfp_details.csv", 40)],
)
def test_a_details_csv_cut_at_a_line_break_is_refused(tmp_path, name, keep):
    """`head -n 150` of the V100 details CSV: each row whole, the last launch with 4 of its 15
    metrics. Before: exit 0, that launch blank, `duration_s not collected ... collect it with
    gpu__time_duration.sum` (never in the file) and `FLOP ≥ 85.9 T (unknown for 0.0% of kernel
    time)`. Now one line: where it ends, what the launch has against an earlier one of the same
    metrics, and the fix."""
    lines = fixture_path(name).read_text(encoding="utf-8-sig").splitlines(keepends=True)
    path = tmp_path / name
    path.write_text("".join(lines[:keep]))
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = [r for r in csv.reader(lines[start + 1 :]) if len(r) > 12]
    kept = rows[: keep - start - 1]
    last = kept[-1][0]
    have = sum(r[0] == last for r in kept)
    full = sum(r[0] == last for r in rows)
    assert 0 < have < full  # the cut is inside launch `last`
    out = run("report", path, "--by", "launch")
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert (
        str(path) in line
        and f"ends inside launch {last}: it has {have} of the {full} metrics launch" in line
    )
    assert "cut short" in line and "export it again" in line


@pytest.mark.parametrize(
    "name", ["v100_cutlass_gemm_nersc_flops_details.csv", "b200_torch_sdpa_auto_raw.csv"]
)
def test_program_output_after_the_table_is_not_truncation(tmp_path, name):
    """A program that prints after ncu's table (`GFLOPS: 123.4`): the table is whole and reads as
    without it."""
    path = tmp_path / name
    path.write_bytes(fixture_path(name).read_bytes().rstrip(b"\n") + b"\nGFLOPS: 123.4\nDone.\n")
    out = run("report", path, "--json")
    assert out.returncode == 0, out.stderr
    plain = json.loads(run("report", fixture_path(name), "--json").stdout)
    after = json.loads(out.stdout)["meta"]
    assert after["launches"] == plain["meta"]["launches"]  # no launch made of `Done.`
    assert after["summary"]["total_time_s"] == plain["meta"]["summary"]["total_time_s"]


def test_missing_file_and_unknown_gpu_and_bad_export_path(tmp_path):
    assert run("report", tmp_path / "nope.csv").returncode == 2
    out = run("report", fixture_path("t4_mlp_matadd_full.ncu-rep"), "--gpu", "Voodoo 3")
    assert out.returncode == 2 and "flopscope gpus" in out.stderr
    one_line_error(
        run("report", fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"), "--gpu", "T4"),
        "--gpu T4",
        "compute capability 7.5",
        "CC 7.0",
    )
    one_line_error(
        run("report", fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"), "--gpu", "V100"),
        "--gpu V100",
        "did you mean v100-sxm2-16gb",
    )
    out = run("export", fixture_path("t4_mlp_matadd_full.ncu-rep"), "-o", tmp_path / "x.xlsx")
    assert out.returncode == 2 and ".csv" in out.stderr


def test_missing_counter_names_metric_and_ncu_option_and_table_still_prints():
    # basic set: no FLOP or DRAM counters
    path = fixture_path("a10_spyinfer_linear_105k_basic.ncu-rep")
    out = run("report", path)
    assert out.returncode == 0
    assert "__cuda_linear_fp32_fp16_kernel" in out.stdout
    # One line for every counter missing, with the one option that collects them all (issue 19.3).
    (line,) = [line for line in out.stderr.splitlines() if "not collected" in line]
    assert (
        "dram__bytes_read.sum,dram__bytes_write.sum" in line
        and "`flopscope profile --metrics " in line
    )
    sort = run("report", path, "--sort", "flop")
    assert (
        sort.returncode == 2
        and "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in sort.stderr
    )
    assert len(sort.stderr.strip().splitlines()) == 1


def test_export_to_a_folder_or_an_unwritable_place_is_one_line(tmp_path):
    path = fixture_path("t4_mlp_matadd_full.ncu-rep")
    folder = tmp_path / "d.csv"
    folder.mkdir()
    one_line_error(run("export", path, "-o", "d.csv", cwd=tmp_path), "d.csv", "folder")
    assert list(folder.iterdir()) == [] and not list(tmp_path.glob(".*.tmp"))
    if Path("/proc/self").is_dir():  # Linux: nobody, root included, can create files in /proc
        one_line_error(run("export", path, "-o", "/proc/out.csv"), "/proc/out.csv", "cannot create")


def test_export_says_a_target_it_cannot_write_before_it_reads_the_report(tmp_path):
    """A 100k-launch report takes seconds to read: a target that cannot be written is said first,
    not after."""
    damaged = tmp_path / "damaged.ncu-rep"
    damaged.write_bytes(b"NVR\0" + b"\xff" * 64)  # reading it would say it is truncated
    one_line_error(
        run("export", damaged, "-o", tmp_path / "no" / "out.csv"),
        "out.csv",
        "folder does not exist",
    )


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_export_mode_follows_the_umask(tmp_path, umask):
    out = run(
        "export", fixture_path("t4_mlp_matadd_full.ncu-rep"), "-o", tmp_path / "k.csv", umask=umask
    )
    assert out.returncode == 0, out.stderr
    assert stat.S_IMODE((tmp_path / "k.csv").stat().st_mode) == 0o666 & ~umask


# launch 0 of the T4 report as `ncu --import t4_mlp_matadd_full.ncu-rep --csv --page raw` prints it
T4_IDS = {"launch_id": 0, "device": 0, "stream": 7, "registers": 18, "count": 1}


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".json"])
def test_export_writes_ids_and_counts_as_integers(tmp_path, suffix):
    out_file = tmp_path / f"k{suffix}"
    assert (
        run(
            "export", fixture_path("t4_mlp_matadd_full.ncu-rep"), "-o", out_file, "--by", "launch"
        ).returncode
        == 0
    )
    if suffix == ".csv":
        with out_file.open(newline="") as handle:
            row = next(csv.DictReader(handle))
        # "7", never "7.0"
        assert {k: row[k] for k in T4_IDS} == {k: str(v) for k, v in T4_IDS.items()}
    elif suffix == ".json":
        row = json.loads(out_file.read_text())["rows"][0]
        assert {k: row[k] for k in T4_IDS} == T4_IDS
        assert all(type(row[k]) is int for k in T4_IDS)
    else:
        table = pd.read_parquet(out_file)
        assert all(pd.api.types.is_integer_dtype(table[k]) for k in T4_IDS)
        assert {k: int(table[k].iloc[0]) for k in T4_IDS} == T4_IDS


def test_report_json_ids_are_integers_from_ncu_rep_and_csv_alike():
    rep = json.loads(
        run("report", fixture_path("t4_mlp_matadd_full.ncu-rep"), "--json", "--by", "launch").stdout
    )
    details = json.loads(
        run("report", fixture_path("t4_nsightful_copy_blocked_details.csv"), "--json").stdout
    )
    # Device "0", Stream "7" as both files print them (the .ncu-rep through `ncu --import ...
    # --csv`)
    for row in (rep["rows"][0], details["rows"][0]):
        assert (row["device"], row["stream"]) == (0, 7)
        assert type(row["device"]) is int and type(row["stream"]) is int


@pytest.mark.parametrize("top", ["0", "-1", "two"])
def test_top_below_one_is_a_one_line_usage_error(top):
    out = run("report", fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"), "--top", top)
    one_line_error(
        out, "--top", "not a whole number" if top == "two" else "leave it out for every row"
    )


def test_top_one_is_the_longest_row():
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    rows = json.loads(run("report", path, "--json", "--by", "launch", "--top", "1").stdout)["rows"]
    assert [r["launch_id"] for r in rows] == [int(read_report(path).kernels["duration_s"].idxmax())]


def test_export_failure_leaves_existing_file_intact(tmp_path):
    target = tmp_path / "keep.csv"
    target.write_text("precious\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("not ncu\n")
    assert run("export", bad, "-o", target).returncode == 2
    assert target.read_text() == "precious\n"


@pytest.mark.parametrize(
    ("typed", "column"),
    [
        ("FLOP", "flop"),
        ("%peak", "pct_of_peak"),
        ("fp32 flop", "flop_fp32"),
        ("DRAM B/s", "dram_bytes_per_s"),
        ("Duration_S", "duration_s"),
    ],
)
def test_sort_takes_the_table_titles_in_any_case_and_canonical_names(typed, column):
    """Before, `--sort FLOP` and `--sort %Peak` (the table's own headers) were "no such column"."""
    path = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    out = run("report", path, "--json", "--sort", typed)
    assert out.returncode == 0, out.stderr
    values = [r[column] for r in json.loads(out.stdout)["rows"]]
    assert values == sorted(values, reverse=True) and len(set(values)) > 1


@pytest.mark.parametrize("columns", [80, 200])
def test_sort_by_a_column_the_table_lacks_shows_it(columns):
    path = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    out = run("report", path, "--sort", "flop_fp32", "--top", "3", columns=columns)
    assert out.returncode == 0, out.stderr
    header, *rows = table_lines(out.stdout, "Kernel")
    assert header.rstrip().endswith("FP32 FLOP")  # the last column, kept even at 80 columns
    doc = json.loads(run("report", path, "--json", "--sort", "flop_fp32", "--top", "3").stdout)
    for row, line in zip(doc["rows"], rows, strict=True):
        value = row["flop_fp32"]
        # 1.08 G, 230 M, 28.7 M
        shown = f"{value / 1e9:.3g} G" if value >= 1e9 else f"{value / 1e6:.3g} M"
        assert line.rstrip().endswith(shown), (line, shown)
    assert "FP32 FLOP" not in run("report", path, "--sort", "flop").stdout


def test_sort_by_an_unknown_column_lists_the_choices_in_one_line():
    out = run("report", fixture_path("t4_mlp_matadd_full.ncu-rep"), "--sort", "flops")
    one_line_error(
        out,
        "--sort flops: no such column",
        "did you mean FLOP/s?",
        "Time, %Time, FLOP, FLOP/s",
        "%Peak",
        "flop_fp32",
        "l2_bytes",
    )
    assert "%Peak" in run("report", "--help").stdout


def test_top_that_cuts_rows_of_unknown_value_says_so():
    """The H800 report's flash_fwd_kernel has no values (ncu failed on it): unknown FLOPs sort last
    in both directions, so `--sort flop --top 1` leaves it out, whatever it did; a line on stderr
    says so."""
    path = fixture_path("h800_sglang_flashattn_full.ncu-rep")
    for order in ((), ("--asc",)):
        out = run("report", path, "--sort", "flop", "--top", "1", *order)
        assert out.returncode == 0, out.stderr
        said = [line for line in out.stderr.splitlines() if "--top" in line]
        assert said == [
            "flopscope: --top 1 left out 1 row(s) whose flop is unknown (unknown values sort last"
            " either way); leave out --top to see them"
        ]
    assert "--top" not in run("report", path, "--sort", "flop", "--top", "2").stderr


def test_sort_by_kernel_name_is_alphabetical():
    path = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    doc = json.loads(run("report", path, "--json", "--sort", "kernel", "--asc").stdout)
    names = [r["kernel"] for r in doc["rows"]]
    assert names == sorted(names)


# piped, plain `demo` prints too: no app in a pipe
@pytest.mark.parametrize("flags", [["--no-tui"], []])
def test_demo_prints_the_bundled_h100_capture(flags):
    """The package ships the project's own capture (tests/data/gpu/README.md): `demo` prints what
    `report` prints for it, a bf16 training step on an H100 whose matmuls ran on tensor cores."""
    from flopscope.tui.cli.main import bundled_example

    path = bundled_example()
    out = subprocess.run(
        [*CLI, "demo", *flags],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    same = subprocess.run([*CLI, "report", path], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stderr == "" and out.stdout == same.stdout
    assert "NVIDIA H100 80GB HBM3 (CC 9.0)" in out.stdout and "ncu-rep, 91 launches" in out.stdout
    doc = json.loads(run("demo", "--no-tui", "--json").stdout)
    tensor = [r for r in doc["rows"] if r["kernel"].startswith("nvjet_sm90")]
    assert tensor and all(r["flop_tensor_bf16"] > 0.99 * r["flop"] for r in tensor)


def test_demo_without_a_bundled_example_says_so_in_one_line(tmp_path, monkeypatch):
    from flopscope.tui.cli import main as cli

    monkeypatch.setattr(cli, "_bundled", list)
    with pytest.raises(FlopscopeError) as err:
        cli.bundled_example()
    assert "no bundled example" in str(err.value) and "flopscope report" in str(err.value)


def table_lines(stdout: str, first: str) -> list[str]:
    """The table of a `report`/`diff` printout: from its header row (starting `first`) to the line
    before the footer."""
    lines = stdout.splitlines()
    # not "Kernel time ..."
    start = next(i for i, line in enumerate(lines) if line.startswith(first + "  "))
    end = next(
        i for i in range(start, len(lines)) if "row(s)" in lines[i] or "group(s)" in lines[i]
    )
    return lines[start:end]


def test_report_by_nvtx_and_by_launch_say_what_a_row_is():
    nvtx = run(
        "report",
        fixture_path("b200_nvtx_apprange_details_sanitized.csv"),
        "--by",
        "nvtx",
        columns=80,
    )
    rows = table_lines(nvtx.stdout, "NVTX range")
    # the file's NVTX cell: "0:<default
    # domain>:compute_kernel:profile:none:none:none:none:none:none": the name is what the six fields
    # after it leave (names hold colons: aten::mm); its kernel is called "range"
    assert len(rows) == 2 and rows[1].startswith("compute_kernel:profile ")
    launch = run(
        "report",
        fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep"),
        "--by",
        "launch",
        columns=80,
    )
    header, *rows = table_lines(launch.stdout, "Kernel")
    assert header.split()[:2] == ["Kernel", "ID"]
    assert sorted(int(r.split()[1]) for r in rows) == [0, 1, 2, 3, 4]  # 5 launches, ncu IDs 0-4


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_report_name_column_takes_the_spare_width_and_names_stay_distinct(columns):
    out = run("report", fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep"), columns=columns)
    assert all(cell_len(line) <= columns for line in out.stdout.splitlines())
    header, *rows = table_lines(out.stdout, "Kernel")
    assert len(rows) == 2 and all(r.startswith("cutlass::") for r in rows)
    names = [r.split("  ")[0] for r in rows]  # the name cell: up to the gap before the next column
    assert names[0] != names[1]  # B2bGemm and Gemm: they differ only after 39 shared characters
    assert max(cell_len(r.rstrip()) for r in [header, *rows]) >= columns - 8  # the width is used


@pytest.mark.parametrize("by", ["name", "launch"])
def test_report_marks_the_launch_ncu_did_not_profile_and_cuts_names_once(by):
    """H800: ncu recorded nothing for flash_fwd. The header says such rows are 'kept, marked': its
    row says 'not profiled' where its time would be. Its name ends in an elided template
    (`traits<…>`), cut once."""
    out = run("report", fixture_path("h800_sglang_flashattn_full.ncu-rep"), "--by", by, columns=100)
    assert out.returncode == 0, out.stderr
    assert "1 launch(es) without values" in out.stdout and "kept, marked" in out.stdout
    _, *rows = table_lines(out.stdout, "Kernel")
    flash = [r for r in rows if r.startswith("flash_fwd")]
    assert len(flash) == 1 and "not profiled" in flash[0]
    assert not any("not profiled" in r for r in rows if not r.startswith("flash_fwd"))
    assert "……" not in out.stdout


def test_report_table_never_doubles_an_ellipsis_at_any_width():
    """`flash_fwd_kernel<Flash_fwd_kernel_traits<…>, ...`: wherever the name column ends, one
    ellipsis."""
    from flopscope.tui.presentation.text_report import printed_kernel_table
    from rich.console import Console

    rows = read_report(fixture_path("h800_sglang_flashattn_full.ncu-rep")).group("launch")
    for width in range(60, 161):
        console = Console(width=width, file=io.StringIO(), record=True)
        console.print(printed_kernel_table(rows, width, "launch")[0])
        text = console.export_text()
        assert "……" not in text and "flash_fwd_kernel<" in text, width


def test_report_names_each_ceiling_source_once():
    """V100 CUTLASS: three compute ceilings from the datasheet at the measured clock, DRAM from the
    datasheet."""
    out = run("report", fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"), columns=300)
    line = next(line for line in out.stdout.splitlines() if line.startswith("Ceilings at SM "))
    assert line.count("from datasheet (Tesla V100-PCIE-32GB) @ measured clock") == 1
    assert line.count("from datasheet (Tesla V100-PCIE-32GB)") == 2  # that one, and DRAM's own
    assert line.index("FP32") < line.index("@ measured clock") < line.index("DRAM")


@pytest.mark.parametrize("columns", [60, 80, 120, 200])
def test_gpus_table_never_cuts_a_number(columns):
    table = run("gpus", columns=columns).stdout.splitlines()
    assert all(cell_len(line) <= columns for line in table)
    for gpu in json.loads(run("gpus", "--json").stdout):
        line = next(
            line.strip() for line in table if line.strip().startswith(gpu["names"][0] + " ")
        )
        # the one peak that always shows, written out independently here
        fp32 = gpu["peak_fp32_flop_per_s"]
        # 3 digits, zeros kept
        tera, giga = (f"{fp32 / scale:#.3g}".rstrip(".") for scale in (1e12, 1e9))
        assert f"{tera} TFLOP/s" in line or f"{giga} GFLOP/s" in line
        assert "…" not in line.split("https://")[0]  # only a source link may be cut
        # what --gpu takes and error messages suggest (`v100-sxm2-16gb`)
        assert f" {gpu['key']} " in line


@pytest.fixture
def two_gpu_store(tmp_path):
    store = Store(tmp_path / "flopscope.db")
    for name, fixture in (
        ("a", "h100pcie_ee384_cub_agents_full.ncu-rep"),
        ("b", "v100_ncar_miniweather_fp64_full.ncu-rep"),
        ("c", "h100pcie_ee384_cub_agents_full.ncu-rep"),
    ):
        store.save(read_report(fixture_path(fixture)), name)
    store.close()
    return tmp_path


@pytest.mark.parametrize("columns", [80, 200])
def test_diff_prints_numbers_and_names_both_runs_gpus(two_gpu_store, columns):
    out = run("diff", "a", "b", "--no-tui", columns=columns, home=two_gpu_store)
    assert out.returncode == 0, out.stderr
    assert (
        out.stdout.splitlines()[0]
        == "A: a (id 1, NVIDIA H100 PCIe) · B: b (id 2, Tesla V100-SXM2-32GB)"
    )
    warning = out.stderr.strip().splitlines()
    assert (
        len(warning) == 1
        and "NVIDIA H100 PCIe" in warning[0]
        and "Tesla V100-SXM2-32GB" in warning[0]
    )
    assert all(cell_len(line) <= columns for line in out.stdout.splitlines())
    header, *rows = table_lines(out.stdout, "Kernel")
    assert {"Time A", "Time B", "ΔTime"} <= set(header.split("  ")) | {
        h.strip() for h in header.split("  ")
    }
    # Every kernel of each run with its total time, summed here from the launches, as "6.19 ms" etc.
    for run_name, fixture, where in (
        ("a", "h100pcie_ee384_cub_agents_full.ncu-rep", "only in A"),
        ("b", "v100_ncar_miniweather_fp64_full.ncu-rep", "only in B"),
    ):
        k = read_report(fixture_path(fixture)).kernels
        for total in k.groupby("kernel_full", observed=True)["duration_s"].sum():
            shown = f"{total * 1e3:.3g} ms" if total >= 1e-3 else f"{total * 1e6:.3g} us"
            assert any(shown in r and r.rstrip().endswith(where) for r in rows), (run_name, shown)


def test_diff_of_runs_on_one_gpu_warns_nothing(two_gpu_store):
    out = run("diff", "a", "c", "--no-tui", home=two_gpu_store)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith("A: a (id 1, NVIDIA H100 PCIe) · B: c (id 3, NVIDIA H100 PCIe)")


def test_open_without_a_terminal_prints_the_table_and_exits(tmp_path, two_gpu_store):
    path = fixture_path("t4_mlp_matadd_full.ncu-rep")
    expected = run("report", path).stdout
    assert run(path).stdout == expected  # `flopscope PATH | less`
    with (tmp_path / "out.txt").open("w") as file:  # `flopscope open PATH > out.txt`
        assert run("open", path, stdout=file).returncode == 0
    assert (tmp_path / "out.txt").read_text() == expected and "\x1b" not in expected
    stored = run("open", "a", home=two_gpu_store)
    assert (
        stored.returncode == 0
        and "NVIDIA H100 PCIe" in stored.stdout
        and "\x1b" not in stored.stdout
    )
    doc = json.loads(run("open", "a", "--json", home=two_gpu_store).stdout)
    assert doc["meta"]["launches"] == 18


@pytest.mark.parametrize(
    "argv",
    [
        ["diff", "a", "b", "--no-tui"],
        ["open", "a", "--no-tui"],
        ["open", "zz", "--no-tui"],
        ["runs", "--no-tui"],
        ["sweep", "--from", "a", "c", "--no-tui"],
    ],
)
def test_commands_close_every_store_they_open(two_gpu_store, monkeypatch, argv):
    """`diff` and `open RUN` once left their SQLite connection open (a library caller or the app
    kept it)."""
    from flopscope.tui.cli.main import main

    monkeypatch.setenv("FLOPSCOPE_HOME", str(two_gpu_store))
    opened = []
    real_init = Store.__init__

    def tracked(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(Store, "__init__", tracked)
    main(argv)
    assert opened
    for store in opened:
        with pytest.raises(sqlite3.ProgrammingError, match="closed"):
            store.db.execute("SELECT 1")


def test_open_a_stored_sweep_without_a_terminal_prints_its_analysis(tmp_path):
    store = Store(tmp_path / "flopscope.db")
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    for n in (1, 2, 4):
        store.save(report, f"bs{n}", kind="sweep", sweep="sw", params={"batch_size": str(n)})
    store.close()
    out = run("open", "sw", home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "batch_size" and "\x1b" not in out.stdout
    # one report stored three times: the sweep did nothing
    assert "identical at every batch_size" in out.stdout
    points = json.loads(run("open", "sw", "--json", home=tmp_path).stdout)["analyses"][0]["points"]
    assert [p["batch_size"] for p in points] == [1, 2, 4]


@pytest.fixture
def stored_4090(tmp_path):
    """An RTX 4090 report stored as run `one` and as the two points of sweep `sw`."""
    store = Store(tmp_path / "flopscope.db")
    report = read_report(fixture_path("rtx4090_torch_linear_sgemm.ncu-rep"))
    store.save(report, "one")
    for n in (1, 2):
        store.save(report, f"p{n}", kind="sweep", sweep="sw", params={"batch_size": str(n)})
    store.close()
    return tmp_path


def test_open_a_stored_run_or_sweep_applies_gpu_or_refuses_it_as_for_a_file(stored_4090):
    """Before, `open RUN|SWEEP --gpu NAME` ignored --gpu (exit 0, the report's own ceilings)."""
    home = stored_4090
    for ref in ("one", "sw"):
        one_line_error(
            run("open", ref, "--gpu", "bogus", "--no-tui", home=home), "--gpu bogus: not in the GPU"
        )
        one_line_error(
            run("open", ref, "--gpu", "a100-sxm4-40gb", "--no-tui", home=home),
            "compute capability 8.0",
        )
    one_line_error(
        run("sweep", "--from", "p1", "p2", "--gpu", "bogus", "--json", home=home), "--gpu bogus"
    )
    doc = json.loads(run("open", "one", "--gpu", "l4", "--json", home=home).stdout)
    assert (doc["meta"]["gpu"], doc["meta"]["gpu_database_key"]) == (
        "NVIDIA GeForce RTX 4090",
        "l4",
    )
    # Every kernel is FP32 or FLOP-free, so held against the L4's FP32 datasheet peak, 30.3 TFLOP/s.
    rows = doc["rows"]
    expected = sum(r["flop"] for r in rows) / (sum(r["duration_s"] for r in rows) * 30.3e12)
    assert doc["meta"]["summary"]["flops_efficiency"] == pytest.approx(expected, rel=0.01)
    assert (
        "judged against NVIDIA L4 ceilings (--gpu)"
        in run("open", "one", "--gpu", "l4", home=home).stdout
    )
    for command in (("open", "sw"), ("sweep", "--from", "p1", "p2")):
        points = json.loads(run(*command, "--gpu", "l4", "--json", home=home).stdout)["analyses"][
            0
        ]["points"]
        assert [p["flops_efficiency"] for p in points] == pytest.approx([expected] * 2, rel=0.01)
        plain = json.loads(run(*command, "--json", home=home).stdout)["analyses"][0]["points"]
        # the 4090's own FP32 peak is 82.6 TFLOP/s
        assert plain[0]["flops_efficiency"] < expected / 2


def test_a_sweep_judged_by_gpu_says_so_and_sweep_from_a_sweep_points_to_open(stored_4090):
    """Before, `open SWEEP --gpu l4` printed the L4-judged points with no word of --gpu, and `sweep
    --from SWEEP` said only "no such run in the store"."""
    home = stored_4090
    one_line_error(
        run("sweep", "--from", "sw", "--json", home=home),
        "--from sw: a sweep, not a run",
        "`flopscope open sw` shows the sweep",
    )
    for command in (("open", "sw"), ("sweep", "--from", "p1", "p2")):
        assert (
            json.loads(run(*command, "--gpu", "l4", "--json", home=home).stdout)["judged_against"]
            == "NVIDIA L4"
        )
        assert json.loads(run(*command, "--json", home=home).stdout)["judged_against"] is None
        text = run(*command, "--gpu", "l4", "--no-tui", home=home).stdout
        assert text.splitlines()[0] == "judged against NVIDIA L4 ceilings (--gpu)"
        assert "judged against" not in run(*command, "--no-tui", home=home).stdout


def test_a_run_or_sweep_name_of_digits_only_is_refused_before_anything_runs(tmp_path):
    """Before, `import FOLDER --name 1` was stored as run "1", and `open 1` then opened it, not the
    run with id 1 that `runs --json` lists."""
    home, ran = tmp_path / "home", tmp_path / "ncu-ran"
    ncu = tmp_path / "ncu"  # would leave a mark if anything started it
    ncu.write_text(f"#!/bin/sh\ntouch {ran}\n")
    ncu.chmod(0o755)
    folder = tmp_path / "12"
    folder.mkdir()
    (folder / "report.ncu-rep").write_bytes(fixture_path("t4_mlp_matadd_full.ncu-rep").read_bytes())
    for args, needle in (
        (("import", folder, "--name", "1"), "--name 1: a name of digits only"),
        (("import", folder), f"{folder} (its name): a name of digits only (12)"),
        (("profile", "--ncu", ncu, "--no-tui", "--name", "2", "--", "true"), "--name run2"),
        (
            (
                "sweep",
                "--ncu",
                ncu,
                "--no-tui",
                "--sweep-name",
                "3",
                "--param",
                "a=1,2",
                "--",
                "echo",
                "{a}",
            ),
            "--sweep-name sweep3",
        ),
    ):
        one_line_error(run(*args, home=home), needle)
    assert (
        not ran.exists() and not (home / "runs").exists() and not (home / "flopscope.db").exists()
    )
    assert run("import", folder, "--name", "run1", home=home).returncode == 0  # a letter is enough


def test_path_errors_say_what_is_wrong_with_the_path(tmp_path):
    """Before: `open /nonexistent.ncu-rep` said "no such run in the store", `import /nonexistent`
    "no report.ncu-rep in this folder", and `open RUN_FOLDER` "Is a directory"."""
    home = tmp_path / "home"
    for ref in (tmp_path / "nonexistent.ncu-rep", "nosuch.csv", "sub/dir"):
        one_line_error(run("open", ref, "--no-tui", home=home), f"{ref}: no such file")
    one_line_error(
        run("open", "nosuch", "--no-tui", home=home), "run nosuch: no such run in the store"
    )
    one_line_error(
        run("import", tmp_path / "nonexistent", home=home), "nonexistent: no such file or folder"
    )
    report = fixture_path("t4_mlp_matadd_full.ncu-rep")
    folder = tmp_path / "run-folder"
    folder.mkdir()
    one_line_error(
        run("open", folder, "--no-tui", home=home),
        f"{folder}: a folder with no report.ncu-rep in it",
    )
    (folder / "report.ncu-rep").write_bytes(report.read_bytes())
    for args in (("open", folder, "--no-tui"), (folder,), ("report", folder)):
        out = run(*args, home=home)
        assert (
            out.returncode == 0 and out.stdout == run("report", folder / "report.ncu-rep").stdout
        ), out.stderr
    # A stored run whose name looks like a file still opens.
    store = Store(home / "flopscope.db")
    store.save(read_report(report), "t4.csv")
    store.close()
    assert "Tesla T4" in run("open", "t4.csv", "--no-tui", home=home).stdout


@pytest.mark.parametrize("word", ["nosuch.ncu-rep", "runs/x", "./report"])
def test_a_path_that_does_not_exist_is_no_such_file_not_invalid_choice(tmp_path, word):
    """Before: argparse's "invalid choice: 'nosuch.ncu-rep' (choose from 'report', 'export',
    ...)"."""
    out = run(word, cwd=tmp_path)
    one_line_error(out, f"flopscope: {word}: no such file")
    assert "choose from" not in out.stderr


def test_a_mistyped_command_still_lists_the_commands(tmp_path):
    out = run("reprot", cwd=tmp_path)
    assert out.returncode == 2 and "invalid choice: 'reprot'" in out.stderr


@pytest.mark.parametrize("columns", [80, 100])
def test_a_file_with_two_gpus_keeps_its_numbers_on_a_narrow_terminal(tmp_path, columns):
    """The GPU column was never dropped and as wide as `NVIDIA A100-PCIE-40GB`: at 80 columns it
    pushed the numbers out. It now names the GPU without the vendor and gives way to numbers
    first."""
    from ..helpers.accounting import SIMT, fp32_only
    from ..helpers.raw_csv import page

    units = {
        "gpu__time_duration.sum": "nsecond",
        "smsp__cycles_elapsed.avg.per_second": "cycle/second",
        "dram__bytes.sum": "byte",
        "sm__inst_executed_pipe_tensor.sum": "inst",
        **SIMT,
    }
    base = {
        "kernel": "k",
        "gpu__time_duration.sum": 1e6,
        "dram__bytes.sum": 1e8,
        "sm__inst_executed_pipe_tensor.sum": 0,
        **dict.fromkeys(SIMT, 0),
        **fp32_only(1e9),
    }
    rows = [
        {
            **base,
            "gpu": "NVIDIA A100-PCIE-40GB",
            "cc": "8.0",
            "smsp__cycles_elapsed.avg.per_second": 1.41e9,
        },
        {
            **base,
            "gpu": "NVIDIA H100 PCIe",
            "cc": "9.0",
            "smsp__cycles_elapsed.avg.per_second": 1.755e9,
        },
    ]
    out = run("report", page(tmp_path / "two.csv", units, rows), columns=columns)
    assert all(cell_len(line) <= columns for line in out.stdout.splitlines())
    header, *table = table_lines(out.stdout, "Kernel")
    assert header.split()[:2] == ["Kernel", "GPU"] and "Time" in header and "FLOP/s" in header
    assert sorted(line.split()[1] for line in table) == ["A100-PCIE-40GB", "H100"]
    assert all("1.00 ms" in line for line in table)  # each group's time: one launch of 1e6 ns


@pytest.mark.parametrize("columns", [60, 80])
def test_report_header_fits_the_terminal_and_breaks_only_between_items(columns):
    """Before: rich word-wrapped the header at 80 columns, splitting `(ncu-rep, 3` from `launches)`
    and starting lines mid-item. Now every line fits and each item of the header stays whole on one
    line."""
    from flopscope.tui.presentation.text_report import header

    path = fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep")
    out = run("report", path.name, columns=columns, cwd=path.parent)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n\n")[0].splitlines()
    assert all(cell_len(line) <= columns for line in lines), lines
    h = header(read_report(path))
    items = [
        h.gpu,
        path.name,
        f"({h.format}, {h.launches})",
        h.flop,
        *h.totals,
        *(c.rstrip(",;") for c in h.ceilings if "/s" in c),
    ]
    assert len(items) > 10
    for item in items:
        assert sum(item in line for line in lines) == 1, (item, lines)


@pytest.mark.parametrize(
    "name",
    [
        "v100_cutlass_gemm_nersc_flops_details.csv",
        "b200_torch_sdpa_auto_raw.csv",
        "t4_mlp_matadd_full.ncu-rep",
    ],
)
def test_report_reads_standard_input_and_pipes_like_the_file(tmp_path, name):
    """`ncu --csv ... | flopscope report -` and `<(...)`: before, a pipe read as "the file is empty"
    (the readers seek), and `-` could not be opened."""
    path = fixture_path(name)
    direct = json.loads(run("report", path, "--json").stdout)["rows"]
    env = {"COLUMNS": "200", "PATH": ""}
    with path.open("rb") as stdin:
        piped = subprocess.run(
            [*CLI, "report", "-", "--json"], stdin=stdin, capture_output=True, env=env, timeout=120
        )
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["rows"] == direct
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(
        [*CLI, "report", str(fifo), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    fifo.write_bytes(path.read_bytes())
    out, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, err
    assert json.loads(out)["rows"] == direct


def test_empty_standard_input_is_one_line_naming_it():
    out = run("report", "-")
    one_line_error(out, "standard input", "empty")


@pytest.mark.parametrize(
    ("name", "lines"),
    [
        ("b200_torch_sdpa_auto_raw.csv", 3),
        ("b200_torch_sdpa_auto_raw.csv", 4),
        ("v100_cutlass_gemm_nersc_flops_details.csv", 11),
    ],
)
def test_a_real_header_without_rows_says_no_kernel_rows(tmp_path, name, lines):
    """Before: a raw page cut after its header (or units row) said `malformed ncu CSV (IndexError:
    ...)`."""
    path = tmp_path / name
    path.write_text("".join(fixture_path(name).read_text().splitlines(keepends=True)[:lines]))
    one_line_error(run("report", path), str(path), "a header but no kernel rows")


def test_ncu_output_that_profiled_nothing_says_so(tmp_path):
    """ncu's console when an NVTX filter matched nothing, as posted in meta-pytorch/tritonbench
    issue #87."""
    path = tmp_path / "ncu.log"
    path.write_text(
        "==PROF== Connected to process 1906325 (/home/yhao/.conda/envs/ptd/bin/python3.11)\n"
        "==PROF== Disconnected from process 1906325\n==WARNING== No kernels were profiled.\n"
        "==WARNING== Note that specified NVTX include expressions match only push/pop ranges.\n"
    )
    one_line_error(run("report", path), str(path), "ncu profiled no kernels", "-k")


def test_a_run_with_no_flop_counted_says_n_a_not_at_least_zero():
    """b200_torch_sdpa_auto_raw.csv collected no FLOP counter at all (its header has none); the
    header said `FLOP ≥ 0 (unknown for 100.0% of kernel time)`, true and useless."""
    path = fixture_path("b200_torch_sdpa_auto_raw.csv")
    header = next(line for line in path.read_text().splitlines() if line.startswith('"ID"'))
    assert "inst_executed_op_f" not in header and "sm__ops_path_tensor" not in header
    out = run("report", path)
    assert out.returncode == 0, out.stderr
    assert "FLOP n/a" in out.stdout and "FLOP ≥" not in out.stdout


@pytest.mark.parametrize("suffix", [".parquet", ".json"])
def test_export_carries_the_run_meta_that_report_json_has(tmp_path, suffix):
    """Before: a JSON export had only the reader's meta (no summary, ceilings or convention) and a
    Parquet export none at all, so an exported table could not be judged without its source file."""
    import pyarrow.parquet as pq

    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    out_file = tmp_path / f"out{suffix}"
    assert run("export", path, "-o", out_file).returncode == 0
    if suffix == ".json":
        meta = json.loads(out_file.read_text())["meta"]
    else:
        meta = json.loads(pq.read_schema(out_file).metadata[b"flopscope"])
        assert len(pd.read_parquet(out_file)) == len(read_report(path).view("name"))
    expected = json.loads(run("report", path, "--json").stdout)["meta"]
    assert meta == expected
    raw = read_report(path).kernels
    assert meta["summary"]["total_time_s"] == pytest.approx(raw["duration_s"].sum())
    assert {c["name"] for c in meta["ceilings"]} >= {"fp32", "fp64", "dram"} and "FMA = 2" in meta[
        "fma_convention"
    ]
    # Every canonical column the file holds is explained, with its SI unit (the name's suffix says
    # the same).
    exported = (
        pd.read_parquet(out_file).columns
        if suffix == ".parquet"
        else json.loads(out_file.read_text())["rows"][0].keys()
    )
    for name in (c for c in exported if c in NAMES):
        unit = meta["columns"][name]["unit"]
        assert meta["columns"][name]["meaning"], name
        if name.endswith("_per_s"):
            assert unit.endswith("/s"), (name, unit)
        elif name.endswith(("_s", "_bytes", "_hz")):
            assert unit == {"s": "s", "bytes": "B", "hz": "Hz"}[name.rsplit("_", 1)[1]], (
                name,
                unit,
            )


def _usage_entries() -> dict[str, str]:
    """docs/cli.md's Usage block as command -> the text of its entries (`flopscope CMD ...` and its
    indented lines)."""
    reference = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    block = reference.split("## Usage", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    command = None
    for line in block.splitlines():
        if line.startswith("flopscope "):
            command = line.split()[1]
            entries[command] = entries.get(command, "") + "\n"
        if command and line.strip():
            entries[command] += " " + line.split("  #")[0]
    return entries


def _subcommands():
    import argparse

    from flopscope.tui.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    return sub.choices, helps


def test_every_option_of_every_command_has_help_and_is_in_the_readme_usage():
    """--help and the command reference (docs/cli.md) drifted apart (options without help text,
    options missing from Usage); argparse's own parser is the list of what exists."""
    import argparse

    commands, helps = _subcommands()
    entries = _usage_entries()
    assert "PATH" in entries  # the `flopscope PATH` shortcut
    profile_options = {o for a in commands["profile"]._actions for o in a.option_strings} - {
        "--name"
    }
    problems = []
    for name, parser in commands.items():
        if not helps.get(name):
            problems.append(f"{name}: no help")
        text = entries.get(name)
        if text is None:
            problems.append(f"{name}: not in docs/cli.md's Usage")
            continue
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            label = f"{name} {'/'.join(action.option_strings) or action.dest}"
            if not action.help:
                problems.append(f"{label}: no help text")
            if not action.option_strings:
                continue
            shared = (
                name == "sweep"
                and "[profile options but --name]" in text
                and action.option_strings[0] in profile_options
            )
            found = [
                m
                for o in action.option_strings
                for m in re.finditer(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)
            ]
            if not found and not shared:
                problems.append(f"{label}: not in docs/cli.md's Usage")
            # `--by name|nvtx` every choice; `--x a|b|...` some
            for m in found if action.choices else ():
                shown = text[m.end() :].split()[0].strip("[]").split("|")
                some = shown[-1] == "..."
                fits = (
                    set(shown[:-1]) <= set(action.choices)
                    if some
                    else sorted(shown) == sorted(action.choices)
                )
                if not fits:
                    problems.append(
                        f"{label}: docs/cli.md shows {shown}, choices are"
                        f" {'|'.join(action.choices)}"
                    )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("command", ["gpus", "report", "runs", "sweep"])
def test_an_unknown_option_points_to_the_commands_own_help(tmp_path, command):
    """Before, `gpus --bogus` pointed to `flopscope --help`, which does not list gpus' options."""
    args = (
        [command, fixture_path("t4_mlp_matadd_full.ncu-rep")] if command == "report" else [command]
    )
    one_line_error(
        run(*args, "--bogus", home=tmp_path),
        f"flopscope {command}: unrecognized arguments: --bogus; see `flopscope {command} --help`",
    )


def test_gpu_that_sets_no_ceiling_is_said_unused_not_claimed():
    """A --set full report carries its own peak counters, which win over any datasheet: before, the
    header said 'judged against Tesla V100-PCIE-32GB ceilings (--gpu)' while every number stayed the
    report's own."""
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    plain, forced = (
        json.loads(run("report", path, "--json", *extra).stdout)["meta"]
        for extra in ((), ("--gpu", "v100-pcie-32gb"))
    )
    assert forced["ceilings"] == plain["ceilings"] and all(
        "report" in c["source"] for c in plain["ceilings"]
    )
    out = run("report", path, "--gpu", "v100-pcie-32gb")
    assert "judged against" not in out.stdout
    assert "--gpu Tesla V100-PCIE-32GB not used: the report's own peak counters" in out.stdout


def test_dash_alone_and_open_dash_read_standard_input_and_a_terminal_there_is_refused():
    """`flopscope -` (the PATH shortcut) and `open -` read a piped report like `report -`; `report
    -` typed at a terminal waited silently for input."""
    import pty

    path = fixture_path("v100_cutlass_gemm_nersc_flops_details.csv")
    direct = json.loads(run("report", path, "--json").stdout)["rows"]
    env = {"COLUMNS": "200", "PATH": ""}
    for args in (["-", "--json"], ["open", "-", "--json"]):
        with path.open("rb") as stdin:
            out = subprocess.run(
                [*CLI, *args], stdin=stdin, capture_output=True, env=env, timeout=120
            )
        assert out.returncode == 0, out.stderr
        # open's rows are by name too
        assert json.loads(out.stdout)["rows"] == [r for r in direct], args
    leader, follower = pty.openpty()
    try:
        out = subprocess.run(
            [*CLI, "report", "-"],
            stdin=follower,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    finally:
        os.close(leader)
        os.close(follower)
    one_line_error(out, "standard input", "terminal", "| flopscope report -")


def test_a_missing_path_says_no_such_file_whichever_command_reads_it(tmp_path):
    """Before, `report /nonexist/x.ncu-rep` said "cannot open (No such file or directory)" while
    `flopscope /nonexist.csv` said "no such file"."""
    home = tmp_path / "home"
    missing = [tmp_path / "nonexist" / "x.ncu-rep", tmp_path / "x.csv", Path("/etc/hostname/x.csv")]
    for path in missing:
        for args in (
            ("report", path),
            ("export", path, "-o", tmp_path / "out.csv"),
            (path,),
            ("open", path, "--no-tui"),
            ("sweep", "--from", path, "--json"),
        ):
            out = run(*args, home=home)
            one_line_error(out, f"flopscope: {path}: no such file", "check the path")
            assert "cannot open" not in out.stderr
    # a file that is there but cannot be read keeps its own reason
    readable_not = tmp_path / "locked.csv"
    readable_not.write_text("x")
    readable_not.chmod(0)
    prefix = permissions_bind()  # root reads it anyway, unless it drops the capability to
    if prefix is not None:
        out = run_cli("report", readable_not, home=home, prefix=prefix)
        one_line_error(out, f"flopscope: {readable_not}: permission denied")
        assert "no such file" not in out.stderr


@pytest.mark.parametrize("opener", ["gzip", "lzma", "bz2"])
@pytest.mark.parametrize("name", ["t4_mlp_matadd_full.ncu-rep", "b200_torch_sdpa_auto_raw.csv"])
def test_compressed_reports_read_as_the_original(tmp_path, opener, name):
    """Reports travel compressed (a cuBLAS kernel's .ncu-rep embeds its cubin: 14 MB, 1 MB as xz):
    flopscope reads gzip, xz and bzip2 files by their magic bytes, whatever their name."""
    import importlib

    original = Path(fixture_path(name))
    packed = tmp_path / f"{name}.packed"
    with importlib.import_module(opener).open(packed, "wb") as out:
        out.write(original.read_bytes())
    want = json.loads(run("report", str(original), "--json").stdout)
    got = json.loads(run("report", str(packed), "--json").stdout)
    assert got["rows"] == want["rows"] and got["rows"]


def test_a_damaged_compressed_report_is_one_line_naming_it(tmp_path):
    import lzma

    packed = tmp_path / "cut.ncu-rep.xz"
    packed.write_bytes(
        lzma.compress(Path(fixture_path("t4_mlp_matadd_full.ncu-rep")).read_bytes())[:5000]
    )
    one_line_error(
        run("report", str(packed)), str(packed), "damaged compressed file", "compress the original"
    )
