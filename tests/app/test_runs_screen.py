"""The Runs screen (`flopscope runs` in a terminal) over a real store holding real reports: newest
first; enter opens a run's kernels, m + d compares two runs, w opens a run's sweep, s / e sort,
filter and export."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from flopscope.core import Report, read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.store.run_store import Store
from flopscope.tui.app.launch import runs_app
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.screens.runs import RunsScreen
from flopscope.tui.app.screens.sweep import SweepScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.presentation import format as fmt
from textual.widgets import Input

from ..conftest import fixture_path, settle
from ..helpers.app import pushed_kernels, screen_lines
from ..helpers.cli import run_cli as cli
from ..helpers.raw_csv import launches, raw_csv

SIZES = [(80, 24), (120, 40)]


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Report]:
    """Two real reports, and a batch sweep whose point N holds N real GEMM launches."""
    out = {
        "h100": read_report(fixture_path("h100pcie_ee384_cub_agents_full.ncu-rep")),
        "mw": read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")),
    }
    gemm = next(
        r
        for r in launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))
        if "tensorop_s884gemm" in r["Kernel Name"]
    )
    folder = tmp_path_factory.mktemp("runs")
    for n in (1, 2, 4):
        path = folder / f"gemm_bs{n}.csv"
        path.write_text(raw_csv([gemm] * n))
        out[f"gemm-bs{n}"] = read_report(path)
    return out


@pytest.fixture
def store_path(tmp_path, reports):
    store = Store(tmp_path / "runs.db")
    for name in ("h100", "mw"):
        store.save(reports[name], name)
    for n in (1, 2, 4):
        store.save(
            reports[f"gemm-bs{n}"],
            f"gemm-bs{n}",
            kind="sweep",
            sweep="gemm",
            params={"batch_size": str(n)},
        )
    store.close()
    return tmp_path / "runs.db"


def shown_names(app) -> list[str]:
    model = app.first.model
    return [str(model.row(i)["name"]) for i in range(len(model))]


def status(app) -> str:
    return str(app.first.query_one("#status").render())


@pytest.mark.parametrize("size", SIZES)
async def test_runs_are_listed_newest_first_and_fit(store_path, size):
    app = runs_app(store_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert shown_names(app) == ["gemm-bs4", "gemm-bs2", "gemm-bs1", "mw", "h100"]
        text = app.first.query_one(KernelTable).visible_text()
        assert "Run" in text[0] and "Time" in text[0]
        assert all(len(line) <= size[0] for line in text)
        assert "5/5 runs" in status(app) and "m marks run A" in status(app)


async def test_enter_opens_the_runs_kernels_and_escape_returns(store_path, reports):
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        table.cursor_row = shown_names(app).index("mw")
        await pilot.press("enter")
        await pushed_kernels(app, pilot)
        rows = app.screen.model.rows
        # The stored run's kernels, as reading the report file gives them.
        expected = reports["mw"].kernels
        assert rows["count"].sum() == len(expected)
        assert rows["duration_s"].sum() == pytest.approx(expected["duration_s"].sum(), rel=1e-12)
        assert "Run mw" in str(app.screen.query_one("#point-title").render())
        # at 80 columns every key shown is whole, `? Help` and `q Quit` too
        footer = screen_lines(app)[-1]
        assert footer.rstrip().endswith("esc Back ? Help q Quit") and "⏎ Open" in footer
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.first


async def test_m_then_d_compares_two_runs(store_path, reports):
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        await pilot.press("d")  # nothing marked: says what to do, opens nothing
        await pilot.pause()
        assert app.screen is app.first
        table.cursor_row = shown_names(app).index("h100")
        await pilot.press("m")
        assert "A = h100" in status(app)
        table.cursor_row = shown_names(app).index("mw")
        await pilot.press("d")
        await settle(pilot, lambda: isinstance(app.screen, DiffScreen))
        expected = diff_runs(reports["h100"], reports["mw"])
        grid = app.screen.query_one(KernelTable)
        # as the reports' files say
        assert app.screen.gpus == ("NVIDIA H100 PCIe", "Tesla V100-SXM2-32GB")
        assert len(grid.model) == len(expected)
        assert [str(grid.model.row(i)["kernel"]) for i in range(len(grid.model))] == expected[
            "kernel"
        ].astype(str).tolist()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.first


async def test_w_opens_the_sweep_of_the_run(store_path, reports):
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        table.cursor_row = shown_names(app).index("mw")
        await pilot.press("w")  # not in a sweep: says so and stays
        await pilot.pause(0.2)
        assert app.screen is app.first
        assert any("run mw is not part of a sweep" in n.message for n in app._notifications)
        table.cursor_row = shown_names(app).index("gemm-bs2")
        await pilot.press("w")
        await settle(pilot, lambda: isinstance(app.screen, SweepScreen))
        points = app.screen.analysis.table
        assert points["batch_size"].tolist() == [1, 2, 4]
        # Point N holds N launches of one GEMM: FLOPs grow with N exactly.
        one = reports["gemm-bs1"].summary().total_flop
        assert points["flop"].tolist() == pytest.approx([one, 2 * one, 4 * one], rel=1e-12)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.first


async def test_sort_filter_and_export_the_runs_shown(store_path, reports, tmp_path):
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        while table.focused_column.name != "total_time_s":
            await pilot.press("right")
        await pilot.press("s")
        times = {name: r.summary().total_time_s for name, r in reports.items()}
        assert shown_names(app) == sorted(times, key=times.get, reverse=True)
        # as the other tables say it
        assert "5/5 runs · m marks run A · sort Time↓ · row 1" in status(app)
        await pilot.press("slash")
        app.screen.query_one(Input).value = "^gemm"
        await pilot.press("enter")
        await pilot.pause()
        assert sorted(shown_names(app)) == ["gemm-bs1", "gemm-bs2", "gemm-bs4"]
        await pilot.press("e")
        assert isinstance(app.screen, PromptScreen)
        out = tmp_path / "runs.csv"
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot, out.exists)
        written = pd.read_csv(out)
        assert written["name"].tolist() == shown_names(app)
        # As `runs --json` gives them (a dict), as JSON text: a CSV cell holds no dict.
        assert [json.loads(p) for p in written["params"]] == [
            {"batch_size": str(n)} for n in (4, 2, 1)
        ]
        await pilot.press("escape")  # clears the filter
        await pilot.pause()
        assert len(shown_names(app)) == 5


def test_runs_table_prints_sweep_and_plain_runs(store_path, reports, monkeypatch, capsys):
    """`flopscope runs` without a terminal: the table, sweep runs and plain runs alike (a plain
    run's sweep is NULL in the store)."""
    from flopscope.tui.cli.main import main

    monkeypatch.setenv("FLOPSCOPE_HOME", str(store_path.parent))
    # pytest-xdist's workers set 80: GPU and Sweep would give way
    monkeypatch.delenv("COLUMNS", raising=False)
    store_path.rename(store_path.parent / "flopscope.db")
    assert main(["runs", "--no-tui"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # newest first, as the Runs screen lists them
    assert [line.split()[1] for line in lines[1:]] == [
        "gemm-bs4",
        "gemm-bs2",
        "gemm-bs1",
        "mw",
        "h100",
    ]
    assert "batch_size=4" in lines[1] and "gemm" in lines[1]


async def test_a_bound_filter_on_runs_is_refused_not_a_crash(store_path):
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        prompt = app.screen
        prompt.query_one(Input).value = "bound:memory"
        await pilot.press("enter")
        await pilot.pause()
        # The dialog stays, with the reason and the text as typed; escape leaves every run shown.
        assert app.screen is prompt and "runs have no bound" in prompt.error
        assert prompt.query_one(Input).value == "bound:memory"
        await pilot.press("escape")
        assert app.screen is app.first and len(shown_names(app)) == 5


def row_of(app, name: str) -> str:
    """The table line (as drawn) of run `name`."""
    table = app.first.query_one(KernelTable)
    return table.visible_text()[1 + shown_names(app).index(name)]


async def test_run_a_is_marked_in_the_list_and_d_on_it_says_to_move(store_path):
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        table.cursor_row = shown_names(app).index("mw")
        assert "[A]" not in "\n".join(table.visible_text())
        await pilot.press("m")
        await pilot.pause()
        assert row_of(app, "mw").startswith("[A] mw ")
        assert not any(row_of(app, n).startswith("[A]") for n in shown_names(app) if n != "mw")
        # marking keeps the cursor on the run
        assert table.cursor_row == shown_names(app).index("mw")
        await pilot.press("d")
        await pilot.pause()
        assert app.screen is app.first
        assert any(
            "this is run A (mw); move to another run" in n.message for n in app._notifications
        )
        await pilot.press("m")  # m on run A again unmarks it
        await pilot.pause()
        assert "[A]" not in "\n".join(table.visible_text()) and "m marks run A" in status(app)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("V100", ["mw"]),  # the GPU (the GEMM details CSVs name none)
        ("h100 pcie", ["h100"]),
        ("^gemm$", ["gemm-bs4", "gemm-bs2", "gemm-bs1"]),  # the sweep's name
        ("batch_size=2", ["gemm-bs2"]),  # the parameters as listed
    ],
)
async def test_slash_matches_name_gpu_sweep_and_parameters(store_path, reports, typed, expected):
    assert (
        reports["mw"].meta.gpu == "Tesla V100-SXM2-32GB"
        and reports["h100"].meta.gpu == "NVIDIA H100 PCIe"
    )
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        app.screen.query_one(Input).value = typed
        await pilot.press("enter")
        await pilot.pause()
        assert shown_names(app) == expected


async def test_a_filter_nothing_matches_says_so(store_path):
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"nothing-like-this", "enter")
        await pilot.pause()
        assert shown_names(app) == []
        assert status(app) == "no runs match nothing-like-this · escape shows all"
        await pilot.press("escape")
        assert len(shown_names(app)) == 5


def test_runs_table_never_cuts_a_number_at_80_columns(store_path, reports, monkeypatch, capsys):
    from flopscope.tui.cli.main import main
    from flopscope.tui.presentation import format as fmt

    monkeypatch.setenv("FLOPSCOPE_HOME", str(store_path.parent))
    monkeypatch.setenv("COLUMNS", "80")
    store_path.rename(store_path.parent / "flopscope.db")
    assert main(["runs", "--no-tui"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines) and "…" not in "".join(lines[1:6])
    for name, report in reports.items():
        line = next(line for line in lines if f" {name} " in line)
        s = report.summary()
        assert line.rstrip().endswith(f"{fmt.seconds(s.total_time_s)}  {fmt.si(s.total_flop)}")


async def test_an_empty_store_says_how_runs_get_there(tmp_path):
    app = runs_app(tmp_path / "empty.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "no runs stored yet" in status(app)
        for key in ("enter", "m", "d", "w", "s"):
            await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_a_run_of_one_sweep_only(store_path):
    app = runs_app(store_path, sweep="gemm")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert shown_names(app) == ["gemm-bs4", "gemm-bs2", "gemm-bs1"]
        assert "Runs of sweep gemm" in str(app.first.query_one("#runs-title").render())


async def test_exports_carry_the_meta_of_their_own_rows(store_path, reports, tmp_path):
    """Before: every app export wrote the meta of the last run opened, so the run list exported
    after opening `mw` claimed mw's source, totals and ceilings. Now a run's kernels carry that
    run's meta, the list none."""
    app = runs_app(store_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        table.cursor_row = shown_names(app).index("mw")
        await pilot.press("enter")
        await pushed_kernels(app, pilot)
        kernels = tmp_path / "mw.json"
        await pilot.press("e")
        app.screen.query_one(Input).value = str(kernels)
        await pilot.press("enter")
        await settle(pilot, kernels.exists)
        meta = json.loads(kernels.read_text())["meta"]
        assert meta["launches"] == len(reports["mw"].kernels)
        assert meta["summary"]["total_time_s"] == pytest.approx(
            reports["mw"].kernels["duration_s"].sum()
        )
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is app.first)
        listed = tmp_path / "runs.json"
        await pilot.press("e")
        app.screen.query_one(Input).value = str(listed)
        await pilot.press("enter")
        await settle(pilot, listed.exists)
        doc = json.loads(listed.read_text())
        assert doc["meta"] == {} and len(doc["rows"]) == 5


def _known_time_and_flops(path) -> tuple[float, float, int]:
    """The H800 report's profiled launches, read with NVIDIA's own ncu_report: their kernel time,
    their FP32 FLOPs from the full set's per-cycle rates (the RNG kernels' only floating-point work)
    and how many launches have no values at all (ncu failed to profile them)."""
    from ..helpers.accounting import counter, rate_flops, report_actions

    time = flop = 0.0
    unprofiled = 0
    for action in report_actions(path):
        duration = counter(action, "gpu__time_duration.sum")  # ns; NaN where ncu recorded no value
        if duration is None or math.isnan(duration):
            unprofiled += 1
            continue
        time += duration * 1e-9
        flop += rate_flops(action, "f")
    return time, flop, unprofiled


async def test_a_run_with_an_unprofiled_launch_lists_its_known_totals_as_lower_bounds(
    tmp_path, reports
):
    """H800: ncu failed to profile flash_fwd_kernel, so the run's time and FLOPs are only known in
    part. Before, the list gave the known time as if it were all of it and no FLOPs at all (blank),
    and `diff --json` a null time beside the totals line's known one. Now every view gives the known
    part, marked `≥`."""
    path = fixture_path("h800_sglang_flashattn_full.ncu-rep")
    time, flop, unprofiled = _known_time_and_flops(path)
    assert unprofiled == 1 and time > 0 and flop > 0
    with Store(tmp_path / "flopscope.db") as store:
        store.save(read_report(path), "h800")
        store.save(reports["mw"], "mw")
    listed = {r["name"]: r for r in json.loads(cli("runs", "--json", home=tmp_path).stdout)}
    assert listed["h800"]["total_time_s"] == pytest.approx(time, rel=1e-9)
    assert listed["h800"]["total_flop"] == pytest.approx(flop, rel=1e-6)
    assert (
        listed["h800"]["lower_bounds"] == ["total_time_s", "total_flop"]
        and listed["mw"]["lower_bounds"] == []
    )
    table = cli("runs", "--no-tui", home=tmp_path).stdout
    h800, mw = (
        next(line for line in table.splitlines() if f" {n} " in line) for n in ("h800", "mw")
    )
    assert f"≥ {fmt.seconds(time)}" in h800 and f"≥ {fmt.si(flop)}" in h800 and "≥" not in mw
    diff = json.loads(cli("diff", "h800", "mw", "--json", home=tmp_path).stdout)
    assert (
        diff["total_time_s_a"] == pytest.approx(time, rel=1e-9)
        and diff["not_profiled_a"] == unprofiled
    )
    assert diff["not_profiled_b"] == 0
    app = runs_app(tmp_path / "flopscope.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = app.first.query_one(KernelTable).visible_text()
        row = next(line for line in text if "h800" in line)
        assert f"≥ {fmt.seconds(time)}" in row and f"≥ {fmt.si(flop)}" in row
        assert "≥" not in next(line for line in text if " mw " in f" {line} ")


async def test_a_diff_export_names_the_runs_it_compares_as_diff_json_does(tmp_path, reports):
    """Before: `e` on the Diff screen wrote `"meta": {}`, so the file did not say which runs, GPUs
    or totals it compared. Now JSON and Parquet exports carry what `flopscope diff A B --json` gives
    beside its rows."""
    import pyarrow.parquet as pq

    path = fixture_path("h800_sglang_flashattn_full.ncu-rep")
    time, _, unprofiled = _known_time_and_flops(path)
    with Store(tmp_path / "flopscope.db") as store:
        store.save(read_report(path), "h800")
        store.save(reports["mw"], "mw")
    cli_meta = json.loads(cli("diff", "h800", "mw", "--json", home=tmp_path).stdout)
    cli_meta.pop("rows")
    # The CLI's own numbers checked against the raw report, so that agreeing with it means
    # something.
    assert (
        cli_meta["a"] == "h800" and cli_meta["b"] == "mw" and cli_meta["a_id"] != cli_meta["b_id"]
    )
    assert (
        cli_meta["total_time_s_a"] == pytest.approx(time, rel=1e-9)
        and cli_meta["not_profiled_a"] == unprofiled
    )
    assert cli_meta["gpu_b"] == "Tesla V100-SXM2-32GB"
    app = runs_app(tmp_path / "flopscope.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.first.query_one(KernelTable)
        table.cursor_row = shown_names(app).index("h800")
        await pilot.press("m")
        table.cursor_row = shown_names(app).index("mw")
        await pilot.press("d")
        await settle(pilot, lambda: isinstance(app.screen, DiffScreen))
        for out in (tmp_path / "diff.json", tmp_path / "diff.parquet"):
            await pilot.press("e")
            app.screen.query_one(Input).value = str(out)
            await pilot.press("enter")
            await settle(pilot, lambda out=out: out.exists() and isinstance(app.screen, DiffScreen))
    assert json.loads((tmp_path / "diff.json").read_text())["meta"] == cli_meta
    schema = pq.read_schema(tmp_path / "diff.parquet")
    assert json.loads(schema.metadata[b"flopscope"]) == cli_meta


async def test_the_runs_export_writes_the_rows_runs_json_gives(store_path, tmp_path):
    """Before: the export wrote `params` as display text (`batch_size=8`) where `runs --json` gives
    a dict, and added the screen's own `time_at_least`/`flop_at_least` columns (a Parquet export
    failed outright on the `lower_bounds` lists). Now its rows are `runs --json`'s, in the order
    shown."""
    import shutil

    import pyarrow.parquet as pq

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(store_path, home / "flopscope.db")
    listed = json.loads(cli("runs", "--json", home=home).stdout)
    # the independent source has the dicts
    assert {"batch_size": "4"} in [r["params"] for r in listed]
    app = runs_app(home / "flopscope.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for out in (tmp_path / "runs.json", tmp_path / "runs.csv", tmp_path / "runs.parquet"):
            await pilot.press("e")
            app.screen.query_one(Input).value = str(out)
            await pilot.press("enter")
            await settle(pilot, lambda out=out: out.exists() and app.screen is app.first)
    # `runs --json`'s order too
    newest_first = sorted(listed, key=lambda r: r["created"], reverse=True)
    assert listed == newest_first
    assert json.loads((tmp_path / "runs.json").read_text())["rows"] == newest_first
    for written in (pd.read_csv(tmp_path / "runs.csv"), pd.read_parquet(tmp_path / "runs.parquet")):
        assert written.columns.tolist() == list(listed[0])
        assert [json.loads(p) for p in written["params"]] == [r["params"] for r in newest_first]
        assert [json.loads(b) for b in written["lower_bounds"]] == [
            r["lower_bounds"] for r in newest_first
        ]
    assert pq.read_schema(tmp_path / "runs.parquet").names == list(listed[0])


async def test_the_status_line_names_the_columns_80_columns_hide(tmp_path, reports):
    """Before: at 80x24 the list dropped Host and ID (what `open` and `diff` take) with nothing
    saying so. Now the status line names them, one line (the table keeps every row it had),
    shortened where room is short."""
    with Store(tmp_path / "runs.db") as store:
        for n, name in enumerate(("h100", "mw")):  # what the review had: sweep points, with a host
            store.save(
                reports[name],
                name,
                host=f"gpu-node-{n}",
                kind="sweep",
                sweep="bs",
                params={"batch_size": str(8 << n)},
            )
    app = runs_app(tmp_path / "runs.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        header = app.first.query_one(KernelTable).visible_text()[0].split()
        # Each title the header lacks, of the list's columns that have values here (every one of
        # them does).
        left_out = [
            t
            for t in (
                "Run",
                "Created",
                "Params",
                "GPU",
                "Launches",
                "Time",
                "FLOP",
                "Sweep",
                "Host",
                "ID",
            )
            if t not in header
        ]
        assert {"Host", "ID"} <= set(left_out)
        # Every name, whole (`(←/→)` gives way first: `? Help` lists the keys).
        assert status(app).rstrip().endswith(f"hidden: {', '.join(left_out)}")
        lines = screen_lines(app)
        assert (
            lines[-2].strip() == status(app).strip()
            and app.first.query_one(KernelTable).size.height == 21
        )
        # a longer status: the note shortens, the line stays one line of 78 cells
        await pilot.press("m")
        await pilot.pause()
        assert len(status(app).rstrip()) <= 78 and "hidden" in status(app)
    app = runs_app(tmp_path / "runs.db")
    async with app.run_test(size=(160, 24)) as pilot:  # room for every column: nothing to say
        await pilot.pause()
        assert "hidden" not in status(app)


async def test_a_store_under_a_deep_folder_keeps_the_title_to_one_line(tmp_path, reports):
    """The title names the store; a path longer than the line is cut in its middle (its file name
    kept), so the table keeps its rows at 80x24: it once wrapped to three lines and took two of
    them."""
    deep = tmp_path / ("a-folder-whose-name-is-longer-than-a-line-of-the-screen-" * 2)
    deep.mkdir()
    with Store(deep / "runs.db") as store:
        store.save(reports["h100"], "h100")
    app = runs_app(deep / "runs.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        first, second = screen_lines(app)[:2]
        assert (
            first.startswith("Runs in /") and first.rstrip().endswith("/runs.db") and "…" in first
        )
        assert second.split()[:2] == ["Run", "Created"]  # the table's header, right under the title
        assert app.first.query_one(KernelTable).size.height == 21
