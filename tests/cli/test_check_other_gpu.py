"""`check` of an H100 run against an H200 baseline: refused in one line (exit 2) naming both GPUs,
or with --allow-other-gpu judged on % of roof alone, each group against its own GPU's roof (issue
41: it said `20 of 22 regressed`, exit 1, and never that the GPUs differ)."""

from __future__ import annotations

import json

from ..helpers.cli import run_cli
from ..helpers.real_files import GPU_DATA, report_of

H100 = GPU_DATA / "nvidia_h100_80gb_hbm3" / "train_transformer_bf16_bs8.ncu-rep.xz"
H200 = GPU_DATA / "nvidia_h200" / "train_transformer_bf16_bs8.ncu-rep.xz"


def test_a_run_on_another_gpu_is_refused_in_one_line_naming_both():
    done = run_cli("check", H100, "--baseline", H200)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "NVIDIA H100 80GB HBM3 vs NVIDIA H200" in line and "--allow-other-gpu" in line


def test_allowed_it_is_judged_on_percent_of_roof_alone():
    done = run_cli("check", H100, "--baseline", H200, "--allow-other-gpu", "--json")
    assert done.returncode in (0, 1), done.stderr
    assert "other GPUs (NVIDIA H100 80GB HBM3 vs NVIDIA H200)" in done.stderr
    doc = json.loads(done.stdout)
    assert doc["judged_on"] == ["pct_of_roof"]
    # independently: per kernel name, % of roof of each report's own grouping (both GPUs judged on
    # their own)
    run, base = (report_of(p).group("name").set_index("kernel_full") for p in (H100, H200))
    total, checked = base["duration_s"].sum(), 0
    for row in doc["rows"]:
        if row["presence"] != "both":
            continue
        name = row["kernel"]
        match = run.index[run["kernel"] == name].intersection(base.index[base["kernel"] == name])
        if len(match) != 1:
            continue  # a short name two kernels share: the diff matched them on the full name
        change = run.loc[match[0], "pct_of_roof"] / base.loc[match[0], "pct_of_roof"] - 1
        judged = base.loc[match[0], "duration_s"] / total >= 0.01
        assert (row["verdict"] == "regressed") == (judged and change < -0.05), name
        checked += 1
    assert checked >= 10 and doc["regressed"] > 0


def test_a_run_on_the_same_gpu_says_nothing_of_gpus():
    done = run_cli("check", H100, "--baseline", H100)
    assert done.returncode == 0 and "GPU" not in done.stderr
