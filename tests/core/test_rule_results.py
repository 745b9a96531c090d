"""ncu's rule results (guided-analysis findings with estimated speedups), read for one launch on
demand.

Expected values come from ncu itself: its console text with rule details and its details CSV,
committed beside the H100 capture; NVIDIA's ncu_report module (another reader of the same files);
and the real ncu CLI where FLOPSCOPE_REAL_NCU names one (its CSV of the shared fixtures, from ncu
versions and GPUs other than ours)."""

from __future__ import annotations

import csv
import gzip
import io
import re
import subprocess
from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.core.report.rules import NO_SECTIONS, by_speedup, plain_message, read_rule_results

from ..conftest import fixture_path
from ..helpers.real_files import H100, plain_copy

GEMM_FULL = H100 / "gemm_bf16_full.ncu-rep.xz"
# ncu's finding header line: `    OPT   Est. Local Speedup: 84.36%`, or the kind and the message's
# first words.
_HEADER = re.compile(r"^    (OPT|WRN|INF|ERR)   (?:Est\. (Local )?Speedup: ([\d.]+)%|(\S.*?))\s*$")


def ncu_text_findings(text: str) -> list[tuple[str, str | None, str | None, str]]:
    """(kind, speedup as ncu printed it, local or global, the message's first 40 characters) per
    finding of ncu's `--page details --print-rule-details` text."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if not m:
            continue
        kind, local, speedup, first = m.groups()
        body = [first] if first else []
        for follow in lines[i + 1 :]:
            if not follow.startswith("          ") or not follow.strip():
                break
            body.append(follow.strip())
        kind_of = None if speedup is None else ("local" if local else "global")
        out.append((kind, speedup, kind_of, " ".join(body)[:40]))
    return out


def ours(found) -> list[tuple[str, str | None, str | None, str]]:
    return [
        (
            f.kind,
            None if f.speedup_pct is None else f"{f.speedup_pct:.4g}",
            f.speedup_type,
            f.message[:40],
        )
        for f in found.findings
    ]


def test_the_h100_full_set_gemm_has_the_findings_ncu_printed():
    found = read_rule_results(GEMM_FULL, 0)
    expected = ncu_text_findings((H100 / "gemm_bf16_full.details.txt").read_text())
    assert len(expected) == 14 and found.reason is None
    assert sorted(ours(found), key=str) == sorted(expected, key=str)
    # Largest global estimate first (ncu's `Est. Speedup: 66.06%`), local ones after the global
    # ones.
    first = found.findings[0]
    assert (first.kind, f"{first.speedup_pct:.4g}", first.speedup_type) == (
        "OPT",
        "66.06",
        "global",
    )
    assert first.name == "Uncoalesced Global Accesses"
    tiers = [f.speedup_type for f in found.findings]
    assert tiers == sorted(tiers, key=lambda t: {"global": 0, "local": 1}.get(t or "", 2))
    # ncu's links as its console prints them
    fp = next(f for f in found.findings if f.rule == "FPInstructions")
    assert (
        "their fused (https://docs.nvidia.com/cuda/floating-point/#cuda-and-floating-point), higher"
        in fp.message
    )
    assert "@" not in " ".join(f.message for f in found.findings)


def test_the_details_csv_of_the_same_launch_reads_the_same():
    with gzip.open(H100 / "gemm_bf16_full.details.csv.gz", "rt", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["Rule Name"]]
    expected = sorted(
        (
            r["Rule Name"],
            r["Rule Type"],
            r["Estimated Speedup"] or None,
            " ".join(r["Rule Description"].split()),
        )
        for r in rows
    )
    for path in (H100 / "gemm_bf16_full.details.csv.gz", GEMM_FULL):
        found = read_rule_results(path, 0)
        got = sorted(
            (f.rule, f.kind, None if f.speedup_pct is None else f"{f.speedup_pct:.4g}", f.message)
            for f in found.findings
        )
        assert got == expected, path.name


def ncu_report_findings(path: Path) -> list[list[tuple]]:
    """Per launch, (rule, kind, message, speedup, its type) from NVIDIA's ncu_report."""
    ncu_report = pytest.importorskip("ncu_report")
    kinds = {
        ncu_report.MsgType_NONE: "",
        ncu_report.MsgType_OK: "INF",
        ncu_report.MsgType_WARNING: "WRN",
        ncu_report.MsgType_ERR: "ERR",
        ncu_report.MsgType_OPTIMIZATION: "OPT",
    }
    types = {ncu_report.SpeedupType_LOCAL: "local", ncu_report.SpeedupType_GLOBAL: "global"}
    context = ncu_report.load_report(str(path))
    out = []
    for r in range(context.num_ranges()):
        launches = context.range_by_idx(r)
        for i in range(launches.num_actions()):
            found = []
            for rule in launches.action_by_idx(i).rule_results_as_dicts():
                message = rule.get("rule_message") or {}
                if not message.get("message", "").strip():
                    continue
                speedup = rule.get("speedup_estimation")
                found.append(
                    (
                        rule["rule_identifier"],
                        kinds[message["type"]],
                        " ".join(message["message"].split()),
                        None if speedup is None else round(speedup["speedup"], 9),
                        None if speedup is None else types[speedup["type"]],
                    )
                )
            out.append(sorted(found, key=str))
    return out


@pytest.mark.parametrize(
    "name",
    [
        "h100pcie_ee384_cub_agents_full.ncu-rep",
        "t4_mlp_matadd_full.ncu-rep",
        "v100_ncar_miniweather_fp64_full.ncu-rep",
        "h800_sglang_flashattn_full.ncu-rep",
        "a100pcie80_cutlass_gemm_full.ncu-rep",
    ],
)
def test_every_launch_of_full_set_fixtures_matches_ncu_report(name):
    same_as_ncu_report(fixture_path(name))


def test_the_h100_capture_matches_ncu_report(tmp_path):
    same_as_ncu_report(plain_copy(GEMM_FULL, tmp_path))


def same_as_ncu_report(path: Path) -> None:
    expected = ncu_report_findings(path)
    assert any(expected)
    for launch, wanted in enumerate(expected):
        found = read_rule_results(path, launch)
        got = sorted(
            (
                f.rule,
                f.kind,
                # ncu_report keeps ncu's link markup; ours is rendered as ncu's console prints it
                f.message,
                None if f.speedup_pct is None else round(f.speedup_pct, 9),
                f.speedup_type,
            )
            for f in found.findings
        )
        assert sorted(got, key=str) == sorted(
            ((r, k, plain_message(m), s, t) for r, k, m, s, t in wanted), key=str
        )
        assert (found.reason is None) == bool(wanted)


def test_an_older_ncus_report_reads_as_the_real_ncu_prints_it(real_ncu):
    """The V100 report (ncu 2022; its optimisation hints are WRN, with no speedup estimates) against
    the real ncu's own details CSV of it."""
    path = fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")
    out = subprocess.run(
        [*real_ncu, "--import", str(path), "--csv", "--page", "details"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [r for r in csv.DictReader(io.StringIO(out[out.index('"ID"') :])) if r["Rule Name"]]
    launches = sorted({int(r["ID"]) for r in rows})
    assert len(launches) == 5
    for launch in launches:
        expected = sorted(
            (
                r["Rule Name"],
                r["Rule Type"],
                " ".join(r["Rule Description"].split()),
                r["Estimated Speedup"] or None,
            )
            for r in rows
            if int(r["ID"]) == launch
        )
        found = read_rule_results(path, launch)
        got = sorted(
            (f.rule, f.kind, f.message, None if f.speedup_pct is None else f"{f.speedup_pct:.4g}")
            for f in found.findings
        )
        assert got == expected, launch
        assert {f.kind for f in found.findings} <= {"WRN", "INF", ""}


def test_a_roofline_set_report_says_why_it_has_none():
    found = read_rule_results(H100 / "gemm_bf16_1000x1500x700.ncu-rep.xz", 0)
    assert found.findings == () and found.reason == NO_SECTIONS
    assert "--set full" in found.reason and "metrics alone" in found.reason


def test_other_files_without_rules_say_why():
    raw = read_rule_results(H100 / "gemm_bf16_full.csv.gz", 0)  # ncu's raw page of the same launch
    assert raw.findings == () and "details page" in raw.reason
    custom = read_rule_results(fixture_path("rtx4090_torch_linear_sgemm.ncu-rep"), 1)
    assert custom.findings == () and "without rules" in custom.reason
    assert "standard input" in read_rule_results("-", 0).reason
    assert "no longer" in read_rule_results(H100 / "no_such_report.ncu-rep", 0).reason
    assert "no launch 7" in read_rule_results(GEMM_FULL, 7).reason


def test_a_file_that_changed_since_it_was_read_is_not_trusted(tmp_path):
    found = read_rule_results(GEMM_FULL, 0, kernel_full="some_other_kernel(float*)")
    assert found.findings == () and "changed" in found.reason
    # the right name: read
    name = read_report(GEMM_FULL).kernels["kernel_full"].iloc[0]
    assert len(read_rule_results(GEMM_FULL, 0, kernel_full=name).findings) == 14


def test_an_uncompressed_copy_reads_the_same(tmp_path):
    plain = plain_copy(GEMM_FULL, tmp_path)
    assert read_rule_results(plain, 0).findings == read_rule_results(GEMM_FULL, 0).findings


def test_by_speedup_puts_global_before_local_and_estimates_before_none():
    found = read_rule_results(GEMM_FULL, 0).findings
    again = by_speedup(list(reversed(found)))
    assert [(f.speedup_type, f.speedup_pct, f.kind) for f in again] == [
        (f.speedup_type, f.speedup_pct, f.kind) for f in found
    ]
    globals_ = [f.speedup_pct for f in found if f.speedup_type == "global"]
    assert globals_ == sorted(globals_, reverse=True)
    assert [f.kind for f in found if f.speedup_pct is None] == ["OPT", "INF"]


def test_a_utf16_copy_of_the_details_csv_reads_the_same(tmp_path):
    """Windows PowerShell's `>` writes ncu's CSV as UTF-16 with a byte-order mark."""
    text = gzip.decompress((H100 / "gemm_bf16_full.details.csv.gz").read_bytes()).decode()
    copy = tmp_path / "details.csv"
    copy.write_text(text, encoding="utf-16")
    found = read_rule_results(copy, 0).findings
    assert len(found) == 14
    assert found == read_rule_results(H100 / "gemm_bf16_full.details.csv.gz", 0).findings
