"""`flopscope report` of one row (one kernel, or --top 1) ends with ncu's rule results for it, and
its --json carries them as `ncu_rules`. Expected values are ncu's own details CSV of the H100
capture."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

from ..conftest import fixture_path
from ..helpers.cli import run_cli

H100 = Path(__file__).resolve().parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
GEMM_FULL = H100 / "gemm_bf16_full.ncu-rep.xz"


def ncu_csv_rules() -> list[dict]:
    with gzip.open(H100 / "gemm_bf16_full.details.csv.gz", "rt", newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["Rule Name"]]


def test_a_one_kernel_report_ends_with_its_findings_largest_global_speedup_first():
    out = run_cli("report", GEMM_FULL, columns=200)
    assert out.returncode == 0, out.stderr
    text = out.stdout[out.stdout.index("ncu rules") :]
    lines = text.splitlines()
    assert lines[1].split() == ["Launch", "ID", "0"]
    globals_ = sorted(
        (
            float(r["Estimated Speedup"])
            for r in ncu_csv_rules()
            if r["Estimated Speedup Type"] == "global"
        ),
        reverse=True,
    )
    shown = [
        line.split()[1] for line in lines if line.startswith("OPT ") and "%" in line.split()[1]
    ]
    assert shown[: len(globals_)] == [f"{g:.4g}%" for g in globals_]
    assert lines[3].startswith("OPT 66.06%") and "Uncoalesced Global Accesses:" in lines[3]


def test_its_json_carries_the_findings_ncu_printed():
    out = run_cli("report", GEMM_FULL, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert list(doc) == ["meta", "rows", "ncu_rules"]
    rules = doc["ncu_rules"]
    assert rules["launch_id"] == 0 and rules["reason"] is None
    got = sorted(
        (
            f["rule"],
            f["kind"],
            None if f["speedup_pct"] is None else f"{f['speedup_pct']:.4g}",
            f["speedup_type"],
        )
        for f in rules["findings"]
    )
    expected = sorted(
        (
            r["Rule Name"],
            r["Rule Type"],
            r["Estimated Speedup"] or None,
            r["Estimated Speedup Type"] or None,
        )
        for r in ncu_csv_rules()
    )
    assert got == expected


def test_top_1_of_a_bigger_report_names_the_launch_and_a_table_of_several_has_none():
    path = fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")
    one = json.loads(run_cli("report", path, "--json", "--top", "1").stdout)
    assert one["rows"][0]["count"] == 2
    assert (
        "the longest of the 2 launches" in one["ncu_rules"]["launch"]
        and one["ncu_rules"]["findings"]
    )
    several = run_cli("report", path, "--top", "2")
    assert several.returncode == 0 and "ncu rules" not in several.stdout
    assert "ncu_rules" not in json.loads(run_cli("report", path, "--json", "--top", "2").stdout)


def test_a_report_without_rules_says_why():
    out = run_cli("report", H100 / "gemm_bf16_1000x1500x700.ncu-rep.xz", columns=120)
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout[out.stdout.index("ncu rules") :].split())
    assert "Findings none: ncu applies its rules only to sections" in text


def test_a_hostile_rule_message_prints_inert(tmp_path):
    text = gzip.decompress((H100 / "gemm_bf16_full.details.csv.gz").read_bytes()).decode()
    text = text.replace(
        "This kernel has uncoalesced", "\x1b]52;c;ZXZpbA==\x07\x1b[2JThis kernel has uncoalesced"
    )
    path = tmp_path / "hostile.csv"
    path.write_text(text)
    out = run_cli("report", path, columns=250)
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout
    assert "\\x1b]52;c;ZXZpbA==\\x07\\x1b[2JThis kernel has uncoalesced" in out.stdout
    # --json keeps the original text (JSON escapes it), as for every other string from a report
    doc = json.loads(run_cli("report", path, "--json").stdout)
    assert any(f["message"].startswith("\x1b]52;c;") for f in doc["ncu_rules"]["findings"])
