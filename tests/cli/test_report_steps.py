"""`report --by module`'s per-step block: each training step's wall time (the timing file beside the
report), kernel time and FLOPs (ncu's launches under the step's range), idle share and MFU, checked
against the same figures read from the raw page with the csv module and the analytic FP32 peak
(tests/helpers/steps.py); a report without a timing file says how to get one, a damaged one is
refused with one line."""

from __future__ import annotations

import json
import statistics

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import one_error_line
from ..helpers.steps import module_rows, page_steps, two_step_page, without_cell, write_timing

# H100 SXM's dense TF32 tensor peak and the boost clock it is quoted at (NVIDIA H100 Tensor Core GPU
# whitepaper, table 3): a run's datasheet ceiling is scaled to its measured clock.
H100_TF32 = 494.7e12
H100_BOOST_HZ = 1.83e9


@pytest.fixture
def steps_page(tmp_path):
    """Three training steps as ncu would record them, and step wall times from a timing run: the
    first slow (warm-up), the others apart so a median that kept it would differ."""
    page = two_step_page(tmp_path / "raw.csv", steps=3)
    walls = {1: 0.0412, 2: 0.00311, 3: 0.00297}
    write_timing(tmp_path, walls)
    return page, walls


def _tf32_flop(page) -> dict[int, float]:
    """TF32 tensor FLOPs per step: sm__ops_path_tensor_src_tf32_dst_fp32.sum (one op, one FLOP), by
    the csv module."""
    import csv

    with page.open(newline="") as handle:
        rows = list(csv.reader(handle))
    col = rows[0].index("sm__ops_path_tensor_src_tf32_dst_fp32.sum")
    cell = next(i for i, h in enumerate(rows[0]) if "Start/Stop_Range" in h)
    out: dict[int, float] = {}
    for r in rows[2:]:
        step = int(r[cell].split(":step ", 1)[1].split(":", 1)[0])
        out[step] = out.get(step, 0.0) + float(r[col].replace(",", "") or 0)
    return out


def test_each_steps_mfu_and_idle_share_match_the_raw_page_and_the_timing_file(steps_page):
    page, walls = steps_page
    out = flopscope("report", page, "--by", "module", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["steps"]
    kernel, fp32, peak32, clock = page_steps(page)
    tf32 = _tf32_flop(page)
    peak_tf32 = H100_TF32 * clock / H100_BOOST_HZ
    for got in doc["steps"]:
        n = got["step"]
        at_peak = fp32[n] / peak32 + tf32[n] / peak_tf32
        assert got["wall_s"] == walls[n]
        assert got["kernel_s"] == pytest.approx(kernel[n], rel=1e-9)
        assert got["flop_by_precision"]["fp32"] == pytest.approx(fp32[n], rel=1e-9)
        assert got["flop_by_precision"]["tensor_tf32"] == pytest.approx(tf32[n], rel=1e-9)
        assert got["idle_share"] == pytest.approx((walls[n] - kernel[n]) / walls[n], rel=1e-9)
        assert got["mfu_wall"] == pytest.approx(at_peak / walls[n], rel=1e-4)
        assert got["mfu_kernel"] == pytest.approx(at_peak / kernel[n], rel=1e-4)
    assert [s["step"] for s in doc["steps"]] == [1, 2, 3]
    assert doc["median_of"] == [2, 3]  # step 1, the warm-up, left out
    median = statistics.median([walls[2], walls[3]])
    assert doc["median"]["wall_s"] == pytest.approx(median, rel=1e-12)
    assert doc["median"]["idle_share"] == pytest.approx(
        1 - statistics.median([kernel[2], kernel[3]]) / median
    )
    assert (
        "timing run without ncu" in doc["sources"]["wall"]
        and "median of 2" in doc["sources"]["wall"]
    )
    assert "ncu" in doc["sources"]["kernel"] and "serialises" in doc["sources"]["kernel"]


def test_the_printed_block_names_where_each_number_comes_from(steps_page):
    page, _ = steps_page
    out = flopscope("report", page, "--by", "module", "--depth", "0", columns=160)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:3] == ["Step", "Wall", "Kernel"])
    assert [line.split()[0] for line in lines[head + 1 : head + 5]] == ["1", "2", "3", "median"]
    # step 1's wall time as the timing file has it
    assert lines[head + 1].split()[1:3] == ["41.2", "ms"]
    # the notes wrap where the tmp path's length puts them
    text = " ".join(" ".join(lines[head:]).split())
    assert "wall: the timing run without ncu" in text and "step 1 (warm-up) left out" in text
    assert "kernel time: ncu's" in text and "serialises" in text
    assert "MFU: FLOPs (ncu) / (time x peak)" in text and "FP32" in text and "TC TF32" in text


def test_a_report_without_a_timing_file_says_how_to_get_one(tmp_path):
    page = two_step_page(tmp_path / "raw.csv")
    out = flopscope("report", page, "--by", "module", "--depth", "0")
    assert out.returncode == 0, out.stderr
    assert (
        "flopscope: no timing file" in out.stderr and "flopscope profile --modules --" in out.stderr
    )
    doc = json.loads(flopscope("report", page, "--by", "module", "--json").stdout)["steps"]
    assert doc["sources"]["timing_file"] is None and all(s["wall_s"] is None for s in doc["steps"])
    assert all(s["mfu_kernel"] > 0 for s in doc["steps"])  # kernel time and FLOPs are ncu's alone


@pytest.mark.parametrize(
    "text, problem",
    [
        ("not json", "not a JSON timing file"),
        ('{"steps": [{"step": 1, "wall_s": -1}]}', "step 1's wall_s is no number of seconds"),
        (
            '{"steps": [{"step": 1, "wall_s": 0.1}, {"step": 1, "wall_s": 0.1}]}',
            "no new step number",
        ),
        ('{"other": 1}', 'no "steps" list'),
    ],
)
def test_a_damaged_timing_file_is_one_line_naming_it(tmp_path, text, problem):
    page = two_step_page(tmp_path / "raw.csv")
    (tmp_path / "timing.json").write_text(text)
    line = one_error_line(flopscope("report", page, "--by", "module"))
    assert (
        str(tmp_path / "timing.json") in line
        and problem in line
        and "profile again with --modules" in line
    )


def test_a_timing_file_that_is_no_regular_file_is_one_line(tmp_path):
    page = two_step_page(tmp_path / "raw.csv")
    (tmp_path / "timing.json").mkdir()
    line = one_error_line(flopscope("report", page, "--by", "module"))
    assert f"{tmp_path / 'timing.json'}: not a regular file" in line


@pytest.mark.parametrize("module", ["attn", "mlp"])
def test_each_modules_mfu_over_its_kernel_time_and_its_part_of_the_steps_over_wall(
    steps_page, module
):
    page, walls = steps_page
    out = flopscope("report", page, "--by", "module", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    nodes = [n for row in doc["rows"] for n in _walk(row) if n["name"] == module]
    assert len(nodes) == 1
    _, _, peak32, clock = page_steps(page)
    seconds, fp32, tf32 = module_rows(page, module)
    at_peak = fp32 / peak32 + tf32 / (H100_TF32 * clock / H100_BOOST_HZ)
    assert nodes[0]["mfu_kernel"] == pytest.approx(at_peak / seconds, rel=1e-4)
    wall = statistics.median([walls[2], walls[3]])
    # the page holds 3 steps
    assert nodes[0]["mfu_wall"] == pytest.approx(at_peak / 3 / wall, rel=1e-4)


def _walk(row: dict):
    yield row
    for child in row["children"]:
        yield from _walk(child)


def test_a_step_with_a_launch_of_unknown_flops_reads_as_at_least(steps_page):
    """A step whose launch lacks an FP32 counter: its FLOPs and MFU are the known part, flagged,
    printed `≥`."""
    page, _ = steps_page
    fp32 = page_steps(page)[1]
    add = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
    launch, lost = next(
        (n, fp32_of)
        for n in range(81, 162)
        if (fp32_of := _launch_fp32(page, n)) > 0 and not _tensor(page, n)
    )  # a launch of step 2 with FP32 work and no tensor work
    without_cell(page, launch, add)
    doc = json.loads(flopscope("report", page, "--by", "module", "--json").stdout)["steps"]
    two = doc["steps"][1]
    assert two["flop_lower_bound"] and not doc["steps"][0]["flop_lower_bound"]
    assert two["flop_by_precision"]["fp32"] == pytest.approx(fp32[2] - lost, rel=1e-9)
    assert doc["median"]["flop_lower_bound"]  # steps 2 and 3
    out = flopscope("report", page, "--by", "module", "--depth", "0", columns=160)
    row = next(line for line in out.stdout.splitlines() if line.split()[:1] == ["2"])
    assert row.count("≥") == 3  # FLOP, MFU wall, MFU kernel


def _launch_fp32(page, launch: int) -> float:
    import csv

    with page.open(newline="") as handle:
        rows = list(csv.reader(handle))
    col = {h: i for i, h in enumerate(rows[0])}
    row = next(r for r in rows[2:] if r[0] == str(launch))
    name = "smsp__sass_thread_inst_executed_op_f{}_pred_on.sum"
    ops = [float(row[col[name.format(op)]].replace(",", "") or 0) for op in ("add", "mul", "fma")]
    return ops[0] + ops[1] + 2 * ops[2]


def _tensor(page, launch: int) -> bool:
    import csv

    with page.open(newline="") as handle:
        rows = list(csv.reader(handle))
    at = rows[0].index("sm__ops_path_tensor_src_tf32_dst_fp32.sum")
    return float(next(r for r in rows[2:] if r[0] == str(launch))[at].replace(",", "") or 0) > 0
