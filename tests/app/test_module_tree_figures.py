"""The app's module tree shows what `report --by module` prints: `t` the steps table (each step's
wall time, kernel time, idle share, FLOPs, MFU over wall and over kernel time, then the median step,
and where each number comes from), each node's MFU over its kernel time and its part of the median
step's over wall time, and after `m` and a model JSON each module's analytic FLOPs and measured /
analytic. Every figure is held to the CLI's `--json` for the same report and to one read here from
the raw page with the csv module and the timing file (tests/helpers/steps.py)."""

from __future__ import annotations

import json
import shutil
import statistics

import pytest
from flopscope.core import read_report
from flopscope.tui.app.screens.module_tree import ModuleTreeScreen
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.screens.sort import SortScreen
from flopscope.tui.app.screens.steps import StepsScreen
from flopscope.tui.presentation import format as fmt

from ..conftest import settle
from ..helpers.app import make_app, ready, screen_lines
from ..helpers.cli import run_cli as flopscope
from ..helpers.reconciled import WORKLOADS
from ..helpers.snapshots import SIZE, check
from ..helpers.steps import module_rows, page_steps, two_step_page, write_timing
from ..helpers.two_gpu_steps import two_gpu_step_page

# H100 SXM's dense TF32 tensor peak and the boost clock it is quoted at (NVIDIA H100 Tensor Core GPU
# whitepaper, table 3): a run's datasheet ceiling is scaled to its measured clock.
H100_TF32 = 494.7e12
H100_BOOST_HZ = 1.83e9
WALLS = {1: 0.0412, 2: 0.00311, 3: 0.00297}  # the first slow (warm-up)


@pytest.fixture
def steps_page(tmp_path):
    page = two_step_page(tmp_path / "raw.csv", steps=3)
    write_timing(tmp_path, WALLS)
    return page


def _cli_doc(page, *args) -> dict:
    out = flopscope("report", page, "--by", "module", "--json", *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _nodes(rows: list[dict]) -> list[dict]:
    return [n for row in rows for n in [row, *_nodes(row["children"])]]


def _at_peak(page, fp32: float, tf32: float) -> float:
    """The time FP32 and TF32 tensor FLOPs need at the H100's peaks, at the page's clock."""
    _, _, peak32, clock = page_steps(page)
    return fp32 / peak32 + tf32 / (H100_TF32 * clock / H100_BOOST_HZ)


async def _open_tree(app, pilot, report, tmp_path) -> ModuleTreeScreen:
    await ready(app, pilot)
    app.push_screen(ModuleTreeScreen(report, tmp_path / "modules.csv"))
    await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
    return app.screen


def _text(app) -> list[str]:
    """The screen's lines, spaces collapsed, without the focused pane's bar."""
    return [" ".join(line.replace("▌", " ").split()) for line in screen_lines(app)]


def _node_line(lines: list[str], module: str) -> str:
    """The tree's line of the node named `module` (after its branch and open/closed marks)."""
    return next(line for line in lines if f" {module} " in f" {line} ".replace("─", " "))


async def test_t_shows_each_step_as_the_cli_and_the_raw_page_have_it(steps_page, tmp_path):
    doc = _cli_doc(steps_page)["steps"]
    kernel, *_ = page_steps(steps_page)
    report = read_report(steps_page)
    app = make_app(report)
    async with app.run_test(size=SIZE) as pilot:
        await _open_tree(app, pilot, report, tmp_path)
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, StepsScreen))
        lines = _text(app)
    rows = {line.split()[0]: line for line in lines if line.split()[:1] in (["1"], ["2"], ["3"])}
    median = next(line for line in lines if line.startswith("median "))
    assert sorted(rows) == ["1", "2", "3"]
    for n, got in zip((1, 2, 3), doc["steps"], strict=True):
        wall, krn = WALLS[n], kernel[n]
        # the CLI's figures against the page's and the timing file's
        assert got["wall_s"] == wall and got["kernel_s"] == pytest.approx(krn, rel=1e-9)
        assert got["idle_share"] == pytest.approx((wall - krn) / wall, rel=1e-9)
        expected = [
            fmt.seconds(wall),
            fmt.seconds(krn),
            fmt.share((wall - krn) / wall),
            fmt.share(got["mfu_wall"]),
            fmt.share(got["mfu_kernel"]),
        ]
        assert all(cell in rows[str(n)] for cell in expected), (rows[str(n)], expected)
    wall = statistics.median([WALLS[2], WALLS[3]])  # step 1, the warm-up, left out
    krn = statistics.median([kernel[2], kernel[3]])
    assert doc["median"]["wall_s"] == pytest.approx(wall, rel=1e-12)
    for cell in (fmt.seconds(wall), fmt.seconds(krn), fmt.share(1 - krn / wall)):
        assert cell in median
    text = " ".join(lines)
    assert "wall: the timing run without ncu" in text and "median of 2 step(s)" in text
    assert "kernel time: ncu's" in text and "MFU: FLOPs (ncu) / (time x peak)" in text


async def test_each_node_shows_its_mfu_as_the_cli_and_the_raw_page_have_it(steps_page, tmp_path):
    nodes = {n["name"]: n for n in _nodes(_cli_doc(steps_page)["rows"])}
    report = read_report(steps_page)
    app = make_app(report)
    async with app.run_test(size=(160, 40)) as pilot:
        await _open_tree(app, pilot, report, tmp_path)
        await pilot.press("asterisk")
        await pilot.pause()
        lines = _text(app)
        await pilot.press("o")  # the MFU columns are sort choices too
        await settle(pilot, lambda: isinstance(app.screen, SortScreen))
        assert {"mfu_kernel", "mfu_wall"} <= {column for column, _ in app.screen.choices}
    wall = statistics.median([WALLS[2], WALLS[3]])
    for module in ("attn", "mlp"):
        seconds, fp32, tf32 = module_rows(steps_page, module)
        at_peak = _at_peak(steps_page, fp32, tf32)
        node = nodes[module]
        assert node["mfu_kernel"] == pytest.approx(at_peak / seconds, rel=1e-4)
        assert node["mfu_wall"] == pytest.approx(at_peak / 3 / wall, rel=1e-4)  # 3 steps
        line = _node_line(lines, module)
        shown = f"MFU krn {fmt.share(node['mfu_kernel'])} wall {fmt.share(node['mfu_wall'])}"
        assert shown in line, line


async def test_the_tree_with_its_mfu_fits_80x24(steps_page, tmp_path, monkeypatch, snapshot_update):
    """The median step's line above the tree and each node's MFU in its line, and `t`'s steps
    table with its sources, at 80x24."""
    shutil.copy(steps_page, tmp_path / "steps.csv")
    monkeypatch.chdir(tmp_path)
    report = read_report("steps.csv")
    app = make_app(report)
    async with app.run_test(size=SIZE) as pilot:
        await _open_tree(app, pilot, report, tmp_path)
        await pilot.pause(0.1)
        lines = screen_lines(app)
        svg = app.export_screenshot()
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, StepsScreen))
        await pilot.pause(0.1)
        steps = app.export_screenshot()
    assert all(len(line) <= 80 for line in lines)
    assert any("MFU krn" in line for line in lines)
    check("module-tree-mfu", svg, snapshot_update, tmp_path)
    check("module-tree-steps", steps, snapshot_update, tmp_path)


@pytest.fixture(scope="module")
def model_json(tmp_path_factory):
    pytest.importorskip("torch", reason="PyTorch is not installed")
    path = tmp_path_factory.mktemp("model") / "block.json"
    out = flopscope(
        "model", f"{WORKLOADS}:Block", "--input-shape", "8,128,512", "--train", "--json"
    )
    assert out.returncode == 0, out.stderr
    path.write_text(out.stdout)
    return path


async def test_m_puts_a_models_flops_beside_each_module_as_the_cli_does(
    steps_page, tmp_path, model_json
):
    nodes = {n["name"]: n for n in _nodes(_cli_doc(steps_page, "--model", model_json)["rows"])}
    analytic = {
        m["name"]: m["forward_flop"] + m["backward_flop"]
        for m in json.loads(model_json.read_text())["modules"]
    }
    bad = tmp_path / "not-a-model.json"
    bad.write_text('{"model": 1}')
    report = read_report(steps_page)
    app = make_app(report)
    async with app.run_test(size=(160, 40)) as pilot:
        await _open_tree(app, pilot, report, tmp_path)
        await pilot.press("m")
        await settle(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press(*str(bad), "enter")
        await pilot.pause()
        # refused in the dialog, with why, the text kept to correct
        assert isinstance(app.screen, PromptScreen)
        assert str(bad) in app.screen.error
        assert "not the JSON of `flopscope model --json`" in app.screen.error
        await pilot.press(*["backspace"] * len(str(bad)), *str(model_json), "enter")
        await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
        await pilot.press("asterisk")
        await pilot.pause()
        lines = _text(app)
    for module in ("attn", "mlp", "norm1", "norm2"):
        node = nodes[module]
        assert node["model_flop"] == 3 * analytic[module]  # three steps
        line = _node_line(lines, module)
        shown = f"model {fmt.si(3 * analytic[module])} ×{fmt.ratio(node['flop_vs_model'])}"
        assert shown in line, line


async def test_on_two_gpus_the_tree_and_the_steps_screen_are_per_gpu(tmp_path):
    """The two-GPU step page: a median-step line per GPU above the tree, and `t` lists each GPU's
    steps and median, the GPU first on each line, as the CLI's `--json` has them."""
    page = two_gpu_step_page(tmp_path)
    write_timing(tmp_path, WALLS)
    doc = _cli_doc(page)["steps"]
    report = read_report(page)
    app = make_app(report)
    async with app.run_test(size=(200, 40)) as pilot:
        await _open_tree(app, pilot, report, tmp_path)
        above = _text(app)[1:3]
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, StepsScreen))
        lines = _text(app)
    for median, line in zip(doc["medians"], above, strict=True):
        assert line.startswith(f"{median['gpu']}, step (median of 2): wall")
        assert f"kernel {fmt.seconds(median['kernel_s'])} (ncu)" in line
    for step in doc["steps"]:
        row = f"{step['gpu']} {step['step']} {fmt.seconds(step['wall_s'])}"
        assert any(line.startswith(row) for line in lines), row
    assert sum(line.startswith("GPU 0: ") and " median " in line for line in lines) == 2
