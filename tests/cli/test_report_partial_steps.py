"""Steps ncu profiled only in part (issue 40): a profile cut with `-c N` leaves its last profiled
step short, and `-k REGEX` keeps a part of every step; such a step is flagged (`3*`, its kernel
time `≥`, its idle share `≤`, a line saying why) and left out of the median, rather than read as a
short kernel time and a GPU mostly idle. Found from the launches per step (counted here with `csv`)
and from the ncu argv the run folder's run.json records (the program's own arguments after it are
not ncu's)."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.steps import two_step_page, write_timing

WALLS = {1: 0.0412, 2: 0.00311, 3: 0.00297}
PROGRAM = ["python", "train.py", "-k", "3"]  # the program's own `-k`: not ncu's


def _cut(page, keep: int):
    """The page's first `keep` launches, as `ncu -c KEEP` profiles them; launches per step, by
    csv."""
    with page.open(newline="") as f:
        header, units, *rows = csv.reader(f)
    rows = rows[:keep]
    with page.open("w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([header, units, *rows])
    cell = next(i for i, h in enumerate(header) if "Start/Stop_Range" in h)
    return Counter(int(r[cell].split(":step ", 1)[1].split(":", 1)[0]) for r in rows)


def _run_json(folder, *ncu_options: str) -> None:
    argv = ["ncu", "--nvtx", *ncu_options, "-o", "report", *PROGRAM]
    (folder / "run.json").write_text(json.dumps({"ncu_argv": argv, "command": PROGRAM}))


def _steps(page) -> dict:
    out = flopscope("report", page, "--by", "module", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["steps"]


@pytest.fixture
def cut_page(tmp_path):
    page = two_step_page(tmp_path / "raw.csv", steps=3)
    write_timing(tmp_path, WALLS)
    return page, _cut(page, 200)


def test_a_step_cut_short_is_flagged_and_left_out_of_the_median(cut_page):
    page, counts = cut_page
    assert counts[1] == counts[2] > counts[3] > 0
    doc = _steps(page)
    three = doc["steps"][2]
    assert three["launches"] == counts[3]
    assert three["partial_profile"] == (
        f"{counts[3]} launches profiled, the fullest step has {counts[2]}"
    )
    assert three["kernel_time_lower_bound"] and three["flop_lower_bound"]
    assert [s["partial_profile"] for s in doc["steps"][:2]] == [None, None]
    assert doc["median_of"] == [2]  # step 1 the warm-up, step 3 partial
    out = flopscope("report", page, "--by", "module", "--depth", "0", columns=200)
    lines = out.stdout.splitlines()
    row = next(line for line in lines if line.split()[:1] == ["3*"])
    assert "≥" in row and "≤" in row
    text = " ".join(" ".join(lines).split())
    assert f"* step 3: {counts[3]} launches profiled, the fullest step has {counts[2]}" in text
    assert "left out of the median" in text


def test_run_json_names_the_cut_and_a_picking_filter_flags_every_step(cut_page, tmp_path):
    page, _ = cut_page
    _run_json(tmp_path, "-c", "200")
    doc = _steps(page)
    assert doc["steps"][2]["partial_profile"].endswith("(ncu ran with -c 200)")
    assert [s["partial_profile"] for s in doc["steps"][:2]] == [None, None]
    _run_json(tmp_path, "--kernel-name", "regex:gemm")
    doc = _steps(page)
    assert all(
        s["partial_profile"] == "ncu profiled only the launches --kernel-name regex:gemm picks"
        for s in doc["steps"]
    )
    assert doc["median"] is None and doc["median_of"] == []


def test_the_programs_tail_after_its_last_step_is_no_cut_step(tmp_path):
    """No timing file and no filters: the last step with fewer launches is the program's tail
    (after its last optimizer step), not flagged; the same page with a wall time for it is."""
    page = two_step_page(tmp_path / "raw.csv", steps=3)
    _cut(page, 200)
    assert [s["partial_profile"] for s in _steps(page)["steps"]] == [None, None, None]
    write_timing(tmp_path, WALLS)
    assert [bool(s["partial_profile"]) for s in _steps(page)["steps"]] == [False, False, True]
