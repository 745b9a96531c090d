"""`report --where`, `export --where`, `check --where` through the entry point, on real reports: the
rows kept are those a plain pandas comparison written here keeps (from the engine's table, not the
expression engine); a bad expression is one line naming the problem and its position, exit 2."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from flopscope.core import read_report

from ..conftest import fixture_path
from ..helpers.cli import run_cli

DEMO = Path(__file__).parents[2] / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"
H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"


def _names(rows) -> list[str]:
    return [r["kernel_full"] for r in rows]


def test_report_where_keeps_the_rows_pandas_keeps_in_the_table_order():
    rows = read_report(DEMO).group("name")  # in time order, as the table shows it
    expected = rows[
        (rows["duration_s"] > 5e-6)
        & (rows["roof"].astype(object) == "dram")
        & (rows["pct_of_roof"] < 20)
    ]
    assert 0 < len(expected) < len(rows)
    done = run_cli(
        "report", DEMO, "--where", "time > 5us and bound == dram and %Roof < 20", "--json"
    )
    assert done.returncode == 0, done.stderr
    assert _names(json.loads(done.stdout)["rows"]) == expected["kernel_full"].tolist()


def test_report_where_by_json_key_and_regex_on_what_the_table_shows():
    rows = read_report(DEMO).group("name")
    tensor = rows[
        rows["precision"].astype(str).str.contains("tensor_") & (rows["dram_bytes"] >= 4e6)
    ]
    # `TC bf16` as shown
    done = run_cli("report", DEMO, "--where", "prec ~ tc and dram_bytes >= 4MB", "--json")
    assert done.returncode == 0, done.stderr
    assert _names(json.loads(done.stdout)["rows"]) == tensor["kernel_full"].tolist()
    assert len(tensor)
    printed = run_cli("report", DEMO, "--where", "prec ~ tc and dram_bytes >= 4MB")
    assert f"{len(tensor)} row(s)" in printed.stdout


def test_report_where_on_the_launches_of_another_real_report():
    path = fixture_path("h800_sglang_flashattn_full.ncu-rep")
    launches = read_report(path).kernels
    expected = launches[launches["duration_s"] > 1e-5].sort_values(
        "duration_s", ascending=False, kind="stable"
    )
    done = run_cli("report", path, "--by", "launch", "--where", "duration_s > 10us", "--json")
    assert done.returncode == 0, done.stderr
    assert [r["launch_id"] for r in json.loads(done.stdout)["rows"]] == expected[
        "launch_id"
    ].tolist()


def test_export_where_writes_only_those_rows(tmp_path):
    rows = read_report(DEMO).group("name")
    expected = rows[
        ~(rows["duration_s"] > 2e-6) | (rows["kernel"].astype(str).str.contains("nvjet"))
    ]
    out = tmp_path / "kept.csv"
    done = run_cli("export", DEMO, "-o", out, "--where", "not (time > 2us) or kernel ~ nvjet")
    assert done.returncode == 0, done.stderr
    with out.open(newline="") as f:
        written = [r["kernel_full"] for r in csv.DictReader(f)]
    assert written == expected["kernel_full"].tolist()
    assert f"wrote {len(expected)} rows" in done.stderr


def test_check_where_judges_only_the_launches_kept():
    bs8, bs32 = (H100 / f"train_transformer_bf16_bs{n}.ncu-rep.xz" for n in (8, 32))
    done = run_cli("check", bs32, "--baseline", bs8, "--where", "kernel ~ nvjet", "--json")
    assert done.returncode in (0, 1), done.stderr
    kept = json.loads(done.stdout)["rows"]
    expected = set()
    for path in (bs8, bs32):
        kernels = read_report(path).kernels
        expected |= set(
            kernels.loc[kernels["kernel"].astype(str).str.contains("nvjet", case=False), "kernel"]
        )
    assert {r["kernel"] for r in kept} == expected
    assert len(expected) > 1


@pytest.mark.parametrize(
    ("command", "where", "said"),
    [
        (["report", str(DEMO)], "tme > 5us", "no column 'tme' at character 1; did you mean time?"),
        (
            ["export", str(DEMO), "-o", "out.csv"],
            "time > 1GB",
            "1GB is in B, time in s at character 8",
        ),
        (["report", str(DEMO)], "(time > 5us", "'(' is never closed at character 1"),
        (["report", str(DEMO)], "kernel > 3", "kernel is text: > compares numbers at character 10"),
        (
            ["check", str(DEMO), "--baseline", str(DEMO)],
            "time >",
            "ends too soon after '>' at character 7",
        ),
    ],
)
def test_a_bad_expression_is_one_line_exit_2(tmp_path, command, where, said):
    done = run_cli(*command, "--where", where, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and f"--where {where}" in lines[0], lines
    assert not (tmp_path / "out.csv").exists()
