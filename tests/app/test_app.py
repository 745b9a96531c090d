"""The terminal app, driven by Textual's Pilot: every binding, checked against the engine's own
numbers."""

from __future__ import annotations

import re
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from flopscope.core import Report, read_report
from flopscope.core.common.nvtx_stack import encode_stack
from flopscope.tui.app import app as app_module
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.help import HelpScreen
from flopscope.tui.app.screens.kernel import KernelScreen
from flopscope.tui.app.screens.kernels import KernelsScreen
from flopscope.tui.app.screens.prompt import PromptScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.screens.sort import SortScreen
from flopscope.tui.app.widgets.footer import KeyFooter
from flopscope.tui.app.widgets.kernel_table import KernelTable
from flopscope.tui.presentation import format as fmt
from flopscope.tui.presentation.kernel_sections import sections
from textual import events
from textual.widgets import Input, OptionList

from ..conftest import fixture_path, settle
from ..helpers.app import (
    H100,
    exited,
    focus_column,
    make_app,
    ready,
    regrouped,
    screen_lines,
    shows_path,
    summary_text,
)
from ..helpers.raw_csv import partial_warp_sgemm

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "ncu"


def fixture_file(name: str) -> Path:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(
            f"shared ncu fixture {name} not found at {FIXTURES} (CI keeps ../shared beside the"
            " repo)"
        )
    return path


@pytest.fixture(scope="module")
def h100() -> Report:
    """The H100 report with two NVTX ranges added (no fixture has more than one), so grouping by
    NVTX shows."""
    report = read_report(fixture_file(H100))
    kernels = report.kernels.copy()
    kernels["nvtx"] = np.where(np.arange(len(kernels)) < len(kernels) // 2, "setup", "solve")
    kernels["nvtx_stack"] = [encode_stack([("", [name])]) for name in kernels["nvtx"]]
    return Report(meta=report.meta, kernels=kernels, gpu=report.gpu, missing=report.missing)


def same_numbers(
    shown: pd.DataFrame, expected: pd.DataFrame, columns=("duration_s", "flop", "flop_per_s")
):
    assert shown["kernel_full"].tolist() == expected["kernel_full"].tolist()
    for col in columns:
        np.testing.assert_allclose(
            shown[col].to_numpy(float), expected[col].to_numpy(float), rtol=1e-12
        )


async def test_summary_names_the_device_and_the_gpu_whose_ceilings_judge_it():
    """--gpu l4 on an RTX 4090 report: the app's header says both, as `flopscope report` does."""
    app = make_app(read_report(fixture_file("rtx4090_torch_linear_sgemm.ncu-rep"), gpu="l4"))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app, pilot)
        text = "\n".join(screen_lines(app))
        assert "NVIDIA GeForce RTX 4090, judged against NVIDIA L4 ceilings (--gpu)" in text
        assert "from datasheet (NVIDIA L4)" in text


# -- loading
# -------------------------------------------------------------------------------------------
async def test_first_screen_shows_before_the_report_is_read(monkeypatch):
    path = fixture_file(H100)
    release = threading.Event()

    def slow_read(*args, **kwargs):
        release.wait(10)
        return read_report(*args, **kwargs)

    monkeypatch.setattr(app_module, "read_report", slow_read)
    app = kernels_app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.1)
        assert isinstance(app.screen, KernelsScreen)
        assert app.kernels.query_one(KernelTable).loading  # a label over the table
        assert any("Loading" in line for line in screen_lines(app))
        # What covers the table does not animate: Textual's spinner redrew 16 times a second, taking
        # the GIL from the read (a copy of it, mounted where the test can see it: Textual keeps the
        # cover private).
        cover = app.kernels.query_one(KernelTable).get_loading_widget()
        await app.screen.mount(cover)
        await pilot.pause()
        assert cover.auto_refresh is None and "loading" in str(cover.render())
        await cover.remove()
        release.set()
        screen = await ready(app, pilot)
        assert len(screen.model) == len(app.report.group("name"))
        text = "\n".join(screen_lines(app))
        assert "NVIDIA H100 PCIe" in text and "Ceilings at SM " in text and "FLOP %Peak" in text


async def test_unreadable_report_exits_with_code_2(tmp_path):
    bad = tmp_path / "broken.ncu-rep"
    bad.write_bytes(b"NVR\x00" + b"\x07" * 64)
    app = kernels_app(bad)
    async with app.run_test() as pilot:
        assert await exited(app, pilot, tries=100) == 2


@pytest.mark.parametrize(
    "error",
    [MemoryError(), RuntimeError("can't start new thread")],
    ids=["MemoryError", "no-thread"],
)
async def test_memory_running_out_after_the_read_exits_2_in_the_clis_one_line(
    error, capfd, monkeypatch
):
    """Counting, deriving or judging a big report can run out of memory once the reader (which words
    that itself) is done: the app ends with the CLI's one line and exit 2, not Textual's traceback.
    No memory limit makes it fail at one chosen point, so the judging step after the real read
    raises what Python and CPython's threads raise then."""

    def out_of_memory(report, roof):
        raise error

    monkeypatch.setattr(app_module, "judged_by", out_of_memory)
    path = fixture_path(H100)
    app = kernels_app(path)
    async with app.run_test() as pilot:
        assert await exited(app, pilot, tries=100) == 2
    # spaces out: the console wraps the line at its width
    said = "".join(capfd.readouterr().err.split())
    assert "".join(f"flopscope: {path}: out of memory reading it".split()) in said
    assert "Traceback" not in said


# -- kernels screen: sort, filter, grouping
# ----------------------------------------------------------
async def test_s_sorts_by_the_focused_column_and_flips(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        await focus_column(pilot, table, "flop_per_s")
        await pilot.press("s")
        same_numbers(screen.model.shown(), h100.view("name", sort="flop_per_s", descending=True))
        await pilot.press("s")
        same_numbers(screen.model.shown(), h100.view("name", sort="flop_per_s", descending=False))
        top = screen.model.shown().iloc[0]  # the first row on screen is the engine's first
        line = table.visible_text()[1]
        # the name as the table cuts it (where names differ, issue 41.5), then the row's time
        assert (
            line.startswith(table.shown_text("kernel", top["kernel"]))
            and f" {fmt.seconds(top['duration_s'])} " in line
        )


async def test_s_on_the_name_column_sorts_a_to_z(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await focus_column(pilot, screen.query_one(KernelTable), "kernel")
        await pilot.press("s")
        names = [str(n) for n in h100.group("name")["kernel"]]
        assert [str(n) for n in screen.model.shown()["kernel"]] == sorted(names)
        await pilot.press("s")
        assert [str(n) for n in screen.model.shown()["kernel"]] == sorted(names, reverse=True)


async def test_o_picks_the_sort_column_from_a_list(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("o")
        picker = app.screen
        assert isinstance(picker, SortScreen)
        options = picker.query_one(OptionList)
        names = [name for name, _ in picker.choices]
        assert "ai_dram" in names and "pct_of_roof" in names  # shown columns and the rest
        options.highlighted = names.index("ai_dram")
        await pilot.press("enter")
        assert isinstance(app.screen, KernelsScreen)
        same_numbers(
            screen.model.shown(), h100.view("name", sort="ai_dram"), columns=("ai_dram", "flop")
        )


async def test_the_sort_column_is_always_shown_even_at_80_columns(h100):
    """DRAM B drops first at 80 columns; sorted by it, it stays, and the values shown are the
    sort's."""
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        assert "dram_bytes" not in [c.name for _, c, _ in table.layout_columns]
        await pilot.press("o")
        names = [name for name, _ in app.screen.choices]
        app.screen.query_one(OptionList).highlighted = names.index("dram_bytes")
        await pilot.press("enter")
        await pilot.pause()
        shown = [c.name for _, c, _ in table.layout_columns]
        assert (
            "dram_bytes" in shown
            and sum(w for _, _, w in table.layout_columns) + len(shown) - 1 <= 80
        )
        column = shown.index("dram_bytes")
        cells = [
            table.model.cells(i)[table.layout_columns[column][0]] for i in range(len(table.model))
        ]
        expected = h100.view("name", sort="dram_bytes")["dram_bytes"]
        assert cells == [fmt.si(v, "B") for v in expected]


async def test_right_reaches_every_column_at_80_columns(h100):
    """Six columns drop at 80 columns; `right` moves through all of the table's columns, bringing a
    dropped one back in place of another, and `s` then sorts by it with its values on screen."""
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        hidden = {c.name for c in table.model.columns} - {
            c.name for _, c, _ in table.layout_columns
        }
        assert hidden
        seen = [table.focused_column.name]
        for _ in range(len(table.model.columns) - 1):
            await pilot.press("right")
            seen.append(table.focused_column.name)
            shown = [c.name for _, c, _ in table.layout_columns]
            assert (
                seen[-1] in shown
                and sum(w for _, _, w in table.layout_columns) + len(shown) - 1 <= 80
            )
        assert seen == [c.name for c in table.model.columns]
        while table.focused_column.name != "ai_dram":
            await pilot.press("left")
        await pilot.press("s")
        column = [c.name for _, c, _ in table.layout_columns].index("ai_dram")
        cells = [
            table.model.cells(i)[table.layout_columns[column][0]] for i in range(len(table.model))
        ]
        assert cells == [fmt.ratio(v) for v in h100.view("name", sort="ai_dram")["ai_dram"]]


async def test_slash_filters_by_regex_and_bound(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        rows = h100.group("name")
        await pilot.press("slash")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"AGENT", "enter")
        hits = rows[rows["kernel_full"].str.contains("agent", flags=re.IGNORECASE)]
        assert 0 < len(screen.model) == len(hits) < len(rows)
        assert set(screen.model.shown()["kernel_full"]) == set(hits["kernel_full"])
        table = screen.query_one(KernelTable)
        # as the table cuts them
        shown = {table.shown_text("kernel", name) for name in hits["kernel"]}
        assert all(
            any(line.startswith(s) for s in shown)
            for line in table.visible_text()[1:]
            if line.strip()
        )

        await pilot.press("slash")
        app.screen.query_one(Input).value = "bound:compute"
        await pilot.press("enter")
        assert len(screen.model) == (rows["bound"] == "compute").sum() > 0
        assert set(screen.model.shown()["bound"]) == {"compute"}

        await pilot.press("escape")  # clears the filter
        assert len(screen.model) == len(rows)


async def test_keys_typed_in_a_burst_after_slash_reach_the_prompt(h100):
    """Over SSH `/gemm⏎` arrives in one read: the keys after `/` are queued before the prompt
    exists. They used to find nothing focused (or the table) and vanish; now they are the filter."""
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        for key, char in [
            ("slash", "/"),
            ("d", "d"),
            ("e", "e"),
            ("v", "v"),
            ("i", "i"),
            ("c", "c"),
            ("e", "e"),
            ("enter", "\r"),
        ]:
            # queued at once, as the driver does with one read
            app.post_message(events.Key(key, char))
        await settle(pilot, lambda: screen.query_state.pattern == "device")
        assert app.screen is screen
        groups = h100.group("name")
        expected = groups["kernel_full"].str.lower().str.contains("device") | groups[
            "kernel"
        ].str.lower().str.contains("device")
        assert 0 < len(screen.model) == int(expected.sum()) < len(groups)


async def test_b_cycles_the_bound_filter(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        rows = h100.group("name")
        counts = []
        for _ in range(3):
            await pilot.press("b")
            counts.append((screen.model.query.bound, len(screen.model)))
        assert counts == [
            ("memory", (rows["bound"] == "memory").sum()),
            ("compute", (rows["bound"] == "compute").sum()),
            ("all", len(rows)),
        ]


async def test_bad_regex_keeps_the_dialog_open_with_the_reason_and_changes_nothing(h100):
    from flopscope.tui.app.screens.prompt import PromptScreen
    from textual.widgets import Input

    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("slash", "(", "enter")
        await pilot.pause()
        prompt = app.screen
        assert isinstance(prompt, PromptScreen) and "regular expression" in prompt.error
        assert prompt.query_one(Input).value == "("  # as typed: fix it, do not retype it
        await pilot.press("escape")
        assert app.screen is screen and len(screen.model) == len(h100.group("name"))


async def test_a_filter_matching_nothing_says_so(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("slash", *"zz_no_such_kernel", "enter")
        await pilot.pause()
        assert len(screen.model) == 0
        assert str(screen.query_one("#status").render()).startswith(
            "no rows match zz_no_such_kernel"
        )


async def test_g_cycles_grouping_name_launch_nvtx_then_the_module_tree(h100):
    from flopscope.tui.app.screens.module_tree import ModuleTreeScreen

    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        seen = [(screen.by, len(screen.model))]
        for by in ("launch", "nvtx", "name"):
            await pilot.press("g")
            # after NVTX ranges, the module tree; its `g` goes on to the kernel names
            if by == "name":
                await settle(pilot, lambda: isinstance(app.screen, ModuleTreeScreen))
                await pilot.press("g")
            await regrouped(app, pilot, by)
            seen.append((screen.by, len(screen.model)))
        assert seen == [("name", 7), ("launch", 18), ("nvtx", 2), ("name", 7)]
        assert [n for _, n in seen] == [
            len(h100.group(by)) for by in ("name", "launch", "nvtx", "name")
        ]


async def test_grouping_keeps_sort_and_filter(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("b")  # memory only
        await focus_column(pilot, screen.query_one(KernelTable), "flop_per_s")
        await pilot.press("s")
        await pilot.press("g")
        await regrouped(app, pilot, "launch")
        launches = h100.view("launch", sort="flop_per_s")
        same_numbers(
            screen.model.shown(), launches[launches["bound"] == "memory"].reset_index(drop=True)
        )


# -- export
# ------------------------------------------------------------------------------------------
async def test_e_exports_exactly_the_rows_shown(h100, tmp_path):
    app = make_app(h100)
    notes = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        app.notify = lambda message, **kw: notes.append(message)
        await pilot.press("b")  # memory-bound rows only
        await focus_column(pilot, screen.query_one(KernelTable), "flop_per_s")
        await pilot.press("s")
        await pilot.press("e")
        prompt = app.screen
        assert isinstance(prompt, PromptScreen)
        assert prompt.query_one(Input).value == str(Path.cwd() / f"{Path(H100).stem}-name.csv")
        out = tmp_path / "shown.csv"
        prompt.query_one(Input).value = str(out)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
    written = pd.read_csv(out)
    expected = h100.view("name", sort="flop_per_s")
    expected = expected[expected["bound"] == "memory"].reset_index(drop=True)
    assert len(written) == len(expected) == len(screen.model) > 0
    same_numbers(
        written, expected, columns=("duration_s", "flop", "flop_per_s", "dram_bytes", "ai_dram")
    )
    ((first, where),) = [note.split("\n") for note in notes]
    assert first == f"Exported {len(expected):,} rows to" and shows_path(where, out.resolve())


async def test_an_export_over_an_existing_file_says_it_replaced_it(h100, tmp_path):
    out = tmp_path / "old.csv"
    out.write_text("yesterday's numbers\n")
    app = make_app(h100)
    notes = []
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        app.notify = lambda message, **kw: notes.append(message)
        await pilot.press("e")
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert len(pd.read_csv(out)) == len(h100.group("name"))
    ((first, where),) = [note.split("\n") for note in notes]
    assert first == f"Exported {len(h100.group('name')):,} rows, replacing the file there, to"
    assert shows_path(where, out.resolve())


async def test_export_to_a_missing_folder_says_why_and_keeps_the_path(h100, tmp_path):
    """The reason shows in the dialog, which stays open with the path as typed: corrected, not
    retyped."""
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("e")
        prompt = app.screen
        typed = str(tmp_path / "nonexistent" / "dir" / "x.csv")
        prompt.query_one(Input).value = typed
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is prompt and prompt.query_one(Input).value == typed
        assert (
            prompt.error == f"{typed}: the folder does not exist; create it or choose another path"
        )
        # Wrapped in the dialog, whole: nothing cut at the edge of an 80-column screen.
        boxed = [
            line[line.index("│") + 1 : line.rindex("│")]
            for line in screen_lines(app)
            if line.count("│") >= 2
        ]
        assert "".join(prompt.error.split()) in "".join("".join(boxed).split())
        (tmp_path / "nonexistent" / "dir").mkdir(parents=True)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is app.kernels and len(pd.read_csv(typed)) == len(h100.group("name"))


# -- drill-down, roofline, help, quit
# ----------------------------------------------------------------
async def test_enter_opens_the_kernel_screen_and_escape_returns(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        await pilot.press("down", "enter")
        assert isinstance(app.screen, KernelScreen)
        row = h100.group("name").iloc[1]
        assert app.screen.row["kernel_full"] == row["kernel_full"]
        text = "\n".join(screen_lines(app))
        assert row["kernel"] in text and "Time" in text and "Compute" in text
        titles = [t for t, _ in sections(app.screen.row)]
        # A `--set full` capture: ncu recorded speed of light, occupancy and pipe utilisation for
        # every launch.
        assert titles == [
            "Time",
            "Compute",
            "Memory",
            "Speed of light",
            "Memory chart",
            "Occupancy",
            "Instruction mix",
            "Pipe utilisation",
            "Warp stalls, cycles per issued instruction",
            "Launch configuration",
            "Ceilings",
            "Provenance",
            "Kernel",
        ]
        # the panels scroll by keyboard, to the bottom of the longest column
        await pilot.press("end")
        body = app.screen.query_one("#kernel-body")
        assert body.scroll_y == body.max_scroll_y > 0
        await pilot.press("home")
        lines = screen_lines(app)
        while body.scroll_y < body.max_scroll_y:  # every panel, a page at a time
            await pilot.press("pagedown")
            lines += screen_lines(app)
        text = "\n".join(lines)
        assert "Provenance" in text and "FMA = 2 FLOPs" in text and row["kernel_full"][:40] in text
        await pilot.press("escape")
        assert app.screen is screen


async def test_kernel_screen_exports_its_row(h100, tmp_path):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("enter", "e")
        out = tmp_path / "one.csv"
        app.screen.query_one(Input).value = str(out)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
    written = pd.read_csv(out)
    assert len(written) == 1
    assert written["flop"].iloc[0] == pytest.approx(h100.group("name")["flop"].iloc[0], rel=1e-12)


async def test_r_opens_the_roofline_and_keys_move_the_selection(h100):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        roof = app.screen
        assert isinstance(roof, RooflineScreen)
        rows = h100.group("name")
        plotted = rows[(rows["ai_dram"] > 0) & (rows["flop_per_s"] > 0)]
        by_time = plotted.sort_values("pct_time", ascending=False)["kernel"].tolist()
        assert [p.label for p in roof.data.points] == by_time
        # The keys walk every row, plotted or on the strip, in the table's order (issue 41.1).
        every = rows.sort_values("pct_time", ascending=False, kind="stable")["kernel"].tolist()
        assert [k.label for k in roof.data.kernels] == every
        assert roof.selected == 0
        await pilot.press("right")
        assert roof.selected == 1
        await pilot.press(*["j"] * len(every))  # stops at the last row
        assert roof.selected == len(every) - 1
        await pilot.press("k", "left")
        assert roof.selected == len(every) - 3
        label = roof.data.kernels[roof.selected].label
        assert label[:60] in "\n".join(screen_lines(app))  # its name line (cut with … where longer)
        await pilot.press("enter")
        assert isinstance(app.screen, KernelScreen) and app.screen.row["kernel"] == label
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, KernelsScreen)


@pytest.mark.parametrize("keys", [(), ("enter",), ("r",)], ids=["kernels", "kernel", "roofline"])
async def test_question_mark_lists_every_binding_of_the_screen(h100, keys):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press(*keys)
        under = app.screen
        await pilot.press("question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen) and help_screen.target is under
        listed = help_screen.text()
        for binding in [*type(under).BINDINGS, *FlopscopeApp.BINDINGS]:
            # off here (`g`, next GPU, on one GPU's file)
            if under.check_action(binding.action, ()) is False:
                assert binding.description not in listed, binding
                continue
            assert binding.description in listed, binding
        if isinstance(under, KernelsScreen):  # the focused table's keys too
            assert "Row down" in listed and "Column right" in listed
        await pilot.press("escape")
        assert app.screen is under


async def test_q_quits(h100):
    app = make_app(h100)
    async with app.run_test() as pilot:
        await ready(app, pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
    assert app.return_code == 0


async def test_kernel_names_are_shown_verbatim_not_as_markup(h100):
    """`[with T = float]` and `[bold]` are parts of C++ names; Rich markup would eat them."""
    kernels = h100.kernels.copy()
    # may be categorical
    kernels[["kernel", "kernel_full"]] = kernels[["kernel", "kernel_full"]].astype(object)
    first = h100.group("name")["kernel_full"].iloc[0]
    mask = kernels["kernel_full"] == first
    kernels.loc[mask, "kernel"] = "scale<T>[with T = float]"
    kernels.loc[mask, "kernel_full"] = "void scale<T>(T *) [with T = float] [bold]x[/bold]"
    report = Report(meta=h100.meta, kernels=kernels, gpu=h100.gpu)
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        assert any("scale<T>[with T = float]" in line for line in screen_lines(app))
        await pilot.press("enter", "end")
        text = "\n".join(screen_lines(app))
        assert "scale<T>[with T = float]" in text and "[bold]x[/bold]" in text
        await pilot.press("escape", "r")
        assert "scale<T>[with T = float]" in "\n".join(screen_lines(app))


@pytest.mark.parametrize(
    "name",
    [
        H100,
        "a100pcie40_cub_radixsort_154k_basic.ncu-rep",
        "v100_cutlass_gemm_nersc_flops_details.csv",
        "b200_torch_sdpa_auto_raw.csv",
    ],
)
def test_every_row_of_every_grouping_has_a_kernel_screen(name):
    """Groups mix values ("(mixed)" registers), launches miss counters: the detail view takes them
    all."""
    report = read_report(fixture_file(name))
    for by in ("name", "launch", "nvtx"):
        rows = report.group(by)
        for i in range(len(rows)):
            screen = KernelScreen(
                rows.iloc[i], report.ceilings(), "nvtx" if by == "nvtx" else "kernel"
            )
            assert next(t for t, _ in sections(screen.row)) == "Time"
            assert all(isinstance(v, str) for _, items in sections(screen.row) for _, v in items)


def test_the_kernel_screen_names_the_ncu_metrics_a_row_lacks():
    """H800 full set: no lts__t_bytes/l1tex__t_bytes sums were collected (L2 and L1 bytes unknown),
    and ncu recorded nothing for flash_fwd_kernel. Each launch's screen says what to collect, from
    its own gaps."""
    report = read_report(fixture_file("h800_sglang_flashattn_full.ncu-rep"))
    for _, row in report.kernels.iterrows():
        told = dict(dict(sections(row))["Provenance"])["To collect"]
        if row["status"] != "ok":
            assert "ncu recorded nothing" in told
            continue
        assert ("lts__t_bytes.sum" in told) == pd.isna(row["l2_bytes"])
        assert ("l1tex__t_bytes.sum" in told) == pd.isna(row["l1_bytes"])
        assert ("gpu__time_duration.sum" in told) == pd.isna(row["duration_s"])
        # issue 19.3
        assert told.startswith("flopscope profile --metrics ") or told.startswith("nothing")


# -- layout at 80x24 and 120x40
# ---------------------------------------------------------------------- Each case saves Textual's
# own SVG screenshot and asserts on the screen's text and on widget regions, at two sizes;
# test_snapshots.py compares the demo's screens at 80x24 with stored SVGs.
def no_overlaps(app: FlopscopeApp) -> None:
    screen = app.screen
    widgets = [w for w in screen.children if w.display]
    for i, a in enumerate(widgets):
        assert screen.region.contains_region(a.region), f"{a} leaves the screen"
        for b in widgets[i + 1 :]:
            assert not a.region.overlaps(b.region), f"{a} overlaps {b}"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_screens_fit_without_overlap(h100, size, tmp_path):
    app = make_app(h100)
    width, height = size
    async with app.run_test(size=size) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        cases = {
            "kernels": (),
            "kernel": ("enter",),
            "roofline": ("escape", "r"),
            "help": ("question_mark",),
        }
        for name, keys in cases.items():
            await pilot.press(*keys)
            await pilot.pause()
            svg = Path(app.save_screenshot(f"{name}-{width}x{height}.svg", path=str(tmp_path)))
            assert svg.stat().st_size > 1000
            lines = screen_lines(app)
            assert len(lines) == height and all(len(line) <= width for line in lines)
            if name != "help":
                no_overlaps(app)
            if name == "kernels":
                header = next(line for line in lines if line.startswith("Kernel"))
                at = 0
                for _, column, _ in table.layout_columns:  # every fitted column's title, in order
                    at = header.index(column.title, at) + len(column.title)
                assert "? Help" in lines[-1]
            if name == "roofline":
                assert any("FLOP/s" in line for line in lines) and any(
                    "DRAM" in line for line in lines
                )
                assert any("1T" in line for line in lines)  # decade ticks
            if name == "help":
                assert any("Previous" in line for line in lines)  # over the roofline screen


async def test_columns_are_refitted_on_resize(h100):
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        narrow = [c.name for _, c, _ in table.layout_columns]
        await pilot.resize_terminal(160, 40)
        await pilot.pause()
        wide = [c.name for _, c, _ in table.layout_columns]
        assert (
            set(narrow) < set(wide)
            and "dram_bytes_per_s" in wide
            and "dram_bytes_per_s" not in narrow
        )
        assert "DRAM B/s" in table.visible_text()[0]
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert [c.name for _, c, _ in table.layout_columns] == narrow
        no_overlaps(app)


async def test_no_color_keeps_the_cursor_and_plot_legible(h100, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(h100)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        assert app.no_color
        cursor_styles = [seg.style for seg in table.render_line(1) if seg.style is not None]
        # reverse video, not colour, marks the row
        assert any(style.reverse for style in cursor_styles)
        await pilot.press("r")
        plot = app.screen.query_one("#roofline").render()
        assert not any(span.style and getattr(span.style, "color", None) for span in plot.spans)


# -- roofline at 80x24: the selected point's name on one line, its numbers always shown
# ------------------------------
async def test_roofline_at_80x24_keeps_the_numbers_line_under_a_long_name():
    """The H800 report's one plotted kernel has a 300-character template name."""
    report = read_report(fixture_file("h800_sglang_flashattn_full.ncu-rep"))
    launches = report.kernels[report.kernels["flop"] > 0]
    assert launches["kernel"].nunique() == 1 and len(str(launches["kernel"].iloc[0])) > 200
    # the group's AI from its launches' counts
    ai = launches["flop"].sum() / launches["dram_bytes"].sum()
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        roof = app.screen
        # to the one plotted
        while roof.data.kernels[roof.selected].label != launches["kernel"].iloc[0]:
            await pilot.press("j")
        lines = screen_lines(app)
        name = next(i for i, line in enumerate(lines) if " by time · " in line)
        assert (
            lines[name].rstrip().endswith("…")
            and str(launches["kernel"].iloc[0])[:30] in lines[name]
        )
        numbers = " ".join(lines[name + 1 : -1])
        assert f"AI {fmt.ratio(ai)} FLOP/B" in numbers and "dram-bound" in numbers
        assert "? Help" in lines[-1]


async def test_roofline_in_launch_grouping_names_each_points_launch(h100):
    launches = h100.kernels
    plotted = launches[(launches["flop"] > 0) & (launches["dram_bytes"] > 0)]
    by_time = (
        plotted.sort_values("duration_s", ascending=False, kind="stable")["launch_id"]
        .astype(int)
        .tolist()
    )
    app = make_app(h100, by="launch")
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        seen = []
        for _ in by_time:
            line = next(line for line in screen_lines(app) if " by time · launch " in line)
            seen.append(int(line.split(" by time · launch ")[1].split(" ")[0]))
            await pilot.press("right")
        assert seen == by_time and len(set(seen)) == len(seen) > 1


async def test_launch_grouping_at_80_columns_keeps_the_launch_id(h100):
    """Launches of one kernel share its name: at 80 columns the ID column is what tells the rows
    apart."""
    ids = (
        h100.kernels.sort_values("duration_s", ascending=False, kind="stable")["launch_id"]
        .astype(int)
        .tolist()
    )
    app = make_app(h100, by="launch")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        header, *rows = [line for line in table.visible_text() if line.strip()]
        names = [c.name for _, c, _ in table.layout_columns]
        assert "launch_id" in names
        # The ID cells' place on the line: the widths of the columns before it, one space between
        # each.
        start = sum(cells + 1 for _, _, cells in table.layout_columns[: names.index("launch_id")])
        width = table.layout_columns[names.index("launch_id")][2]
        assert header[start : start + width].strip() == "ID"
        shown = [int(row[start : start + width]) for row in rows]
        assert shown == ids[: len(shown)] and len(shown) >= 10


def on_screen(app) -> str:
    """The text inside a modal's border, its wrapping undone (the screen beneath shows left and
    right of it)."""
    inside = [
        line[line.index("│") + 1 : line.rindex("│")]
        for line in screen_lines(app)
        if line.count("│") >= 2
    ]
    return re.sub(r"\s+", " ", " ".join(inside))


async def shows(pilot, app, text: str) -> bool:
    """Whether `text` is on screen once the modal just opened has painted."""
    for _ in range(50):
        if text in on_screen(app):
            return True
        await pilot.pause(0.02)
    return False


async def test_at_80x24_prompts_show_their_whole_question_and_hint(h100):
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("slash")
        assert isinstance(app.screen, PromptScreen)
        # every word of it, wrapped in the dialog
        assert await shows(pilot, app, KernelsScreen.FILTER_HINT)
        await pilot.press("escape", "enter", "e")
        assert isinstance(app.screen, PromptScreen)
        assert await shows(
            pilot, app, "Export the metrics of this row to (.csv, .parquet or .json by extension):"
        )
        await pilot.press("escape", "escape", "e")
        assert await shows(
            pilot, app, "Export the rows shown to (.csv, .parquet or .json by extension):"
        )


# -- kernel screen: what an unprofiled launch, a missing number and a nameless GPU say
# ----------------------------
def items(row: pd.Series) -> dict[str, str]:
    return {label: value for _, section in sections(row) for label, value in section}


def test_a_launch_ncu_did_not_profile_says_nothing_was_measured():
    """H800: ncu recorded no values for the flash_fwd launch; nothing on its screen may claim it was
    counted."""
    report = read_report(fixture_file("h800_sglang_flashattn_full.ncu-rep"))
    for by in ("name", "launch"):
        rows = report.group(by)
        shown = items(rows[rows["kernel"].astype(str).str.startswith("flash_fwd")].iloc[0])
        assert shown["Status"].startswith("not profiled")
        assert (
            shown["Estimated"] == shown["Provenance"] == "nothing measured: ncu recorded no values"
        )
        assert shown["All FLOPs"] == shown["AI vs L2"] == shown["Total time"] == "not measured"
        # the GPU's, not the launch's
        own = {label: v for label, v in shown.items() if label != "Ridge point"}
        assert not any("FLOP/B" in v or "counted" in v for v in own.values())


def test_a_measured_row_keeps_its_units_and_a_missing_one_gets_none():
    report = read_report(fixture_file(H100))
    row = report.group("name").iloc[0]
    first = report.kernels[report.kernels["kernel_full"] == row["kernel_full"]]
    shown = items(row)
    assert (
        shown["AI vs DRAM"]
        == f"{fmt.ratio(first['flop'].sum() / first['dram_bytes'].sum())} FLOP/B"
    )
    assert shown["Estimated"] != "nothing measured: ncu recorded no values"
    # The A100 details CSV names no GPU (its CC column says 8.0). Its SGEMM's FLOPs are its FP32
    # count (its tensor-pipe instructions were register moves): AI vs L2 is 2 x FFMA over
    # lts__t_bytes (it once said "not collected", its FLOPs unknown).
    path = fixture_file("a100_gemm_printfp_details.csv")
    shown = items(read_report(path).group("name").iloc[0])
    assert shown["GPU"] == "unknown (CC 8.0)"
    raw = pd.read_csv(path, thousands=",").pivot_table(
        index="ID", columns="Metric Name", values="Metric Value"
    )
    ffma = raw.loc[2, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
    assert shown["AI vs L2"] == f"{fmt.ratio(2 * ffma / raw.loc[2, 'lts__t_bytes.sum'])} FLOP/B"


async def test_kernel_screen_of_an_unprofiled_launch_at_80x24():
    report = read_report(fixture_file("h800_sglang_flashattn_full.ncu-rep"))
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        names = screen.model.shown()["kernel"].astype(str).tolist()
        await pilot.press(
            *["down"] * next(i for i, n in enumerate(names) if n.startswith("flash_fwd")), "enter"
        )
        await pilot.press("end")
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        assert "nothing measured: ncu recorded no values" in text and "all counted" not in text


# -- the table at 80 columns: names stay apart, space goes to numbers, unprofiled rows say so
# ------------------
def name_cells(table: KernelTable) -> list[str]:
    """The name cell of each row on screen (the first column's cells, trailing padding removed)."""
    cells = table.layout_columns[0][2]
    return [line[:cells].rstrip() for line in table.visible_text()[1:] if line.strip()]


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40)])
@pytest.mark.parametrize(
    "name", ["a100pcie80_cutlass_gemm_full.ncu-rep", H100, "h800_sglang_flashattn_full.ncu-rep"]
)
async def test_different_kernels_never_look_alike(name, size):
    """B2bGemm and Gemm share their first 39 characters, the two thrust agents their first 95: cut
    at the end they read alike. Every row's name on screen differs from every other (as many
    distinct names as rows), and an elided template (`traits<…>`) is never followed by a second
    ellipsis."""
    report = read_report(fixture_file(name))
    app = make_app(report)
    async with app.run_test(size=size) as pilot:
        screen = await ready(app, pilot)
        shown = name_cells(screen.query_one(KernelTable))
        names = screen.model.shown()["kernel"].astype(str).tolist()
        assert len(shown) == len(names) == len(set(names)) and len(set(shown)) == len(shown)
        assert any(s != n for s, n in zip(shown, names, strict=True))  # some were cut
        assert all("……" not in s for s in shown)


async def test_the_name_column_is_as_wide_as_the_longest_name_and_numbers_get_the_rest():
    """MiniWeather's names are at most 28 characters: the name column takes 28 cells, not 36+, so at
    80 columns six numeric columns show (five before) and with 120 columns of its own every column
    does, DRAM B and Prec included (a 200-column terminal: the selected row's details take 40%
    beside the table)."""
    report = read_report(fixture_file("v100_ncar_miniweather_fp64_full.ncu-rep"))
    longest = max(len(str(n)) for n in report.group("name")["kernel"])
    assert longest == 28
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        table = (await ready(app, pilot)).query_one(KernelTable)
        assert table.layout_columns[0][2] == longest
        assert len([c for _, c, _ in table.layout_columns if c.numeric]) >= 6
        await pilot.resize_terminal(200, 40)
        await pilot.pause()
        assert table.region.width == 120
        assert [c.name for _, c, _ in table.layout_columns] == [c.name for c in table.model.columns]
        assert all(len(line) <= 200 for line in screen_lines(app))


async def test_a_launch_ncu_did_not_profile_is_marked_in_the_table():
    """H800: ncu recorded nothing for the flash_fwd launch. Its row is dim and says why where
    numbers would be, in both groupings; profiled rows are neither."""
    report = read_report(fixture_file("h800_sglang_flashattn_full.ncu-rep"))
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        for by in ("name", "launch"):
            if by == "launch":
                await pilot.press("g")
                await regrouped(app, pilot, "launch")
            table = screen.query_one(KernelTable)
            names = screen.model.shown()["kernel"].astype(str).tolist()
            at = next(i for i, n in enumerate(names) if n.startswith("flash_fwd"))
            await pilot.press("end" if at else "home")  # the cursor off the other rows
            lines = table.visible_text()
            assert "not profiled" in lines[at + 1] and not any(
                "not profiled" in line for line in lines[1 : at + 1]
            )
            styles = [s.style for s in table.render_line(at + 1) if s.style and s.text.strip()]
            assert styles and all(s.dim for s in styles)
            assert not any(s.style.dim for s in table.render_line(1 if at else 2) if s.style)


async def test_the_summary_takes_five_lines_at_80x24_and_names_the_ceiling_source_once():
    report = read_report(fixture_file("a100pcie80_cutlass_gemm_full.ncu-rep"))
    assert {c.source for c in report.ceilings()} == {"report counters x measured clock"}
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        text = summary_text(app)
        lines = screen_lines(app)
        assert len(text.splitlines()) == 5
        assert "\n".join(lines).count("report counters x measured clock") == 1
        # Its three INT8 (IMMA) GEMMs are judged by no FLOP ceiling: no launch for a FLOPS
        # efficiency.
        assert "FMA = 2 FLOPs" in text and "FLOP %Peak n/a" in text
        assert all(
            line.rstrip() == "" or not line.lstrip().startswith("·") for line in text.splitlines()
        )


async def test_the_summary_of_a_run_with_an_unprofiled_launch_gives_lower_bounds():
    """H800: flash_fwd was not profiled. The app's header read `Kernel time 87.1 us`, `FLOP 586 M`,
    as if complete; it gives the same lower bounds as the CLI, and says the efficiencies are of the
    known launches."""
    report = read_report(fixture_file("h800_sglang_flashattn_full.ncu-rep"))
    s = report.summary()
    known = report.kernels.loc[report.kernels["status"] == "ok", "duration_s"].sum()
    app = make_app(report)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app, pilot)
        text = " ".join(summary_text(app).split())
    assert f"Kernel time ≥ {fmt.seconds(known)}" in text
    assert f"FLOP ≥ {fmt.si(s.flop_counted)} (unknown for 1 launch of unknown time)" in text
    assert "(shares of the 4 launches of known time)" in text


async def test_at_60x20_the_footer_keeps_help_and_quit():
    app = make_app(read_report(fixture_file(H100)))
    async with app.run_test(size=(60, 20)) as pilot:
        await ready(app, pilot)
        footer = screen_lines(app)[-1]
        assert footer.rstrip().endswith("? Help q Quit")
        # every key of the screen, some without words
        for key in ("⏎", "s", "o", "/", "b", "g", "r", "e"):
            assert f" {key} " in f" {footer} "


async def test_a_click_on_a_footer_key_presses_it():
    """The footer is drawn as text (public Textual API only); a click on `? Help` opens the help as
    `?` does."""
    app = make_app(read_report(fixture_file(H100)))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        footer = screen_lines(app)[-1]
        await pilot.click(KeyFooter, offset=(footer.index("? Help") + 3, 0))
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)


async def test_a_report_without_flop_counters_says_what_to_collect(tmp_path):
    """Basic set: no FLOP or DRAM counters. One header line says so and starts the ncu option core
    gives."""
    report = read_report(fixture_file("a10_spyinfer_linear_105k_basic.ncu-rep"))
    fixes = {m.column: m.fix() for m in report.missing}
    assert "flop_fp32" in fixes and "dram_bytes" in fixes
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        hint = next(line for line in summary_text(app).splitlines() if "not collected" in line)
        assert hint.startswith(
            "FLOPs and DRAM bytes not collected: ncu --metrics smsp__sass_thread_inst_"
        )
        assert len(hint) <= 78 and hint.endswith("…")
        # The metrics named are the FP64 SIMT counters core lists first.
        assert fixes["flop_fp64"].startswith(hint.split(": ", 1)[1].rstrip("…"))
    app = make_app(read_report(fixture_file(H100)))  # all counters there: no hint
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        assert "not collected" not in summary_text(app)
    # one launch of three lacks tensor FLOPs: one HFMA short of its tensor-pipe instructions all
    # being moves
    report = read_report(
        partial_warp_sgemm(fixture_file("a100_gemm_printfp_details.csv"), tmp_path / "gemm.csv")
    )
    assert [(m.column, m.launches) for m in report.missing if m.column.startswith("flop")] == [
        ("flop_tensor", 1)
    ]
    app = make_app(report)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        assert (
            "tensor FLOPs not collected (1 of 3 launches): ncu --metrics sm__ops_path_tensor_"
            in summary_text(app)
        )


async def test_counts_in_the_header_and_status_have_thousands_separators(h100):
    report = Report(
        meta=replace(h100.meta, launches=150123),
        kernels=h100.kernels,
        gpu=h100.gpu,
        missing=h100.missing,
    )
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        assert "150,123 launches" in summary_text(app)


# -- sorting: `o` then `s`, columns outside the table, empty columns, back to the top
# ------------------------
async def test_after_o_picks_a_column_s_flips_it(h100):
    """The picker says `s` flips the order: the cursor lands on the picked column, so it does."""
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        await pilot.press("o")
        names = [name for name, _ in app.screen.choices]
        app.screen.query_one(OptionList).highlighted = names.index("duration_s")
        await pilot.press("enter")
        assert table.focused_column.name == "duration_s" and screen.query_state.descending
        await pilot.press("s")
        assert screen.query_state.sort == "duration_s" and not screen.query_state.descending
        assert "sort Time↑" in str(screen.query_one("#status").render())
        same_numbers(screen.model.shown(), h100.view("name", sort="duration_s", descending=False))


async def test_o_offers_columns_outside_the_table_by_title_and_shows_them_when_sorted(h100):
    """FP32 FLOP is no table column: sorted by it, it appears (its values the sort's),
    `left`/`right` reach it, and `s` flips it; sorted by something else, it goes again."""
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        await pilot.press("o")
        labels = dict(app.screen.choices)
        assert labels["flop_fp32"].startswith("FP32 FLOP · ")
        # never collected here
        assert "l1_bytes" not in labels and h100.kernels["l1_bytes"].isna().all()
        app.screen.query_one(OptionList).highlighted = list(labels).index("flop_fp32")
        await pilot.press("enter")
        shown = [c.name for _, c, _ in table.layout_columns]
        assert "flop_fp32" in shown and table.focused_column.name == "flop_fp32"
        column = table.layout_columns[shown.index("flop_fp32")]
        assert "FP32 FLOP" in table.visible_text()[0]
        expected = h100.view("name", sort="flop_fp32")["flop_fp32"]
        assert [table.model.cells(i)[column[0]] for i in range(len(table.model))] == [
            fmt.si(v) for v in expected
        ]
        await pilot.press("left", "right")
        assert table.focused_column.name == "flop_fp32"
        await pilot.press("s")
        assert screen.query_state == screen.query_state.__class__(
            sort="flop_fp32", descending=False
        )
        await pilot.press("home", "left")
        await pilot.press("s")  # sorted by the name now: FP32 FLOP leaves the table
        assert "flop_fp32" not in [c.name for c in table.model.columns]


async def test_columns_without_values_are_not_offered_and_s_on_one_says_so():
    """V100 CUTLASS details: DRAM read/write bytes were not collected (the CLI refuses `--sort
    dram_read_bytes`). The picker leaves them out and names them; `s` on an empty column of the
    basic-set A10 report says why it does not sort."""
    report = read_report(fixture_file("v100_cutlass_gemm_nersc_flops_details.csv"))
    assert report.group("name")["dram_read_bytes"].isna().all()
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("o")
        picker = app.screen
        assert (
            "dram_read_bytes" not in [n for n, _ in picker.choices] and "DRAM rd B" in picker.empty
        )
        assert "flop" in [n for n, _ in picker.choices]
        assert await shows(
            pilot, app, f"Not listed, no values in this report ({len(picker.empty)}): DRAM rd B"
        )
    app = make_app(read_report(fixture_file("a10_spyinfer_linear_105k_basic.ncu-rep")))
    notes = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(app, pilot)
        app.notify = lambda message, **kw: notes.append(message)
        await focus_column(pilot, screen.query_one(KernelTable), "flop_per_s")
        await pilot.press("s")
        assert screen.query_state.sort is None and notes == [
            "FLOP/s has no values in these rows: nothing to sort by."
        ]


async def test_after_a_sort_the_first_rows_are_on_screen(h100):
    """18 launches at 80x24: at the last row, `s` sorts and the view goes to the top, cursor on the
    first row."""
    app = make_app(h100, by="launch")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        await pilot.press("end")
        assert table.cursor_row == 17 and table.scroll_offset.y > 0
        await focus_column(pilot, table, "flop_per_s")
        await pilot.press("end", "s")
        first = screen.model.shown().iloc[0]
        assert table.cursor_row == 0 and table.scroll_offset.y == 0
        assert first["flop_per_s"] == h100.kernels["flop_per_s"].max()
        assert f" {fmt.si(first['flop_per_s'])} " in table.visible_text()[1]
        assert "row 1 " in str(screen.query_one("#status").render()) + " "


# -- help and footer of a Kernels screen opened from elsewhere
# ------------------------------------------------
async def test_kernels_opened_from_another_screen_keep_every_key_and_their_name(h100):
    from flopscope.tui.app.screens.kernels import PushedKernelsScreen

    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await PushedKernelsScreen.open(app, h100, "Run x", "x")
        await settle(pilot, lambda: app.screen.model is not None)
        footer = screen_lines(app)[-1]
        assert footer.rstrip().endswith("esc Back ? Help q Quit")
        for key in ("⏎", "s", "o", "/", "b", "g", "r", "e"):
            assert f" {key} " in f" {footer} "
        await pilot.press("question_mark")
        assert await shows(pilot, app, "Keys: Kernels screen")


@pytest.mark.parametrize("keys", [(), ("enter",), ("r",)], ids=["kernels", "kernel", "roofline"])
async def test_help_names_places_and_keys_in_words(h100, keys):
    app = make_app(h100)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await pilot.press(*keys, "question_mark")
        rows = app.screen.rows
        assert {where for where, _, _ in rows} <= {
            "this screen",
            "table",
            "scrolling pane",
            "all screens",
            "everywhere",
        }
        for _, _, what in rows:  # `Page up`, `Scroll left`: only the first word capitalised
            assert not any(w[:1].isupper() and w[1:].islower() for w in what.split()[1:]), what
        if not keys:  # the table scrolls no sideways: no `Page left` that would do nothing
            assert not any("left" in what.lower() and "Column" not in what for _, _, what in rows)


async def test_a_stored_warning_stays_in_the_capped_summary_of_a_small_terminal():
    """The summary's height is capped; the warning of a run whose program failed was placed after
    the FMA convention and fell off at 50x20, while the convention stayed."""
    report = read_report(fixture_file("v100_ncar_miniweather_fp64_full.ncu-rep"))
    # as the profiler stores it (test_profile)
    report.meta = replace(report.meta, warning="the command exited with code 3")
    app = make_app(report)
    async with app.run_test(size=(50, 20)) as pilot:
        await ready(app, pilot)
        assert any("Warning: the command exited" in line for line in screen_lines(app))


async def test_a_two_part_tensor_precision_reads_whole_at_80x24(tmp_path):
    """Before, Prec showed `tensor_fp16_acc1…`: which accumulator, and that there was a second part,
    was cut. Now its short spelling (`TC` = tensor core, `/acc16` = accumulating in FP16) fits whole
    at 80 columns, while the row keeps the canonical label (what --json and export write)."""
    from ..helpers.raw_csv import mixed_accumulate_hgemm

    report = read_report(mixed_accumulate_hgemm(tmp_path / "hgemm.csv"))
    app = make_app(report)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        # to the last column, Prec (80 columns drop it until then)
        for _ in range(len(table.model.columns)):
            await pilot.press("right")
        await pilot.pause()
        assert table.focused_column.name == "precision"
        header, row = table.visible_text()[:2]
        assert "Prec" in header and row.rstrip().endswith(" TC fp16/acc16+TC fp16")
        assert screen.model.row(0)["precision"] == "tensor_fp16_acc16+tensor_fp16"
        assert all(len(line) <= 80 for line in screen_lines(app))
        # The summary names its ceilings the same short way; the kernel's own screen links the two
        # spellings.
        assert "TC FP16/ACC16 330 TFLOP/s" in summary_text(app) and "TENSOR_" not in summary_text(
            app
        )
        items = dict(item for _, group in sections(screen.model.row(0)) for item in group)
        assert items["Precision judged"] == "TC fp16/acc16+TC fp16 (tensor_fp16_acc16+tensor_fp16)"


async def test_the_kernels_status_line_names_the_columns_80_columns_hide(h100):
    """Before: at 80x24 FLOP, DRAM B and others were dropped with nothing saying so (the CLI prints
    "Hidden at 80 columns"). Now the status line names them, in one line; `right` onto one brings it
    back and the list follows."""
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        table = screen.query_one(KernelTable)
        status = str(screen.query_one("#status").render()).rstrip()
        named = status.split("hidden: ")[1].split(" +")[0].split(", ")
        header = table.visible_text()[0]
        assert "FLOP" in named and all(f" {title} " not in f" {header} " for title in named)
        assert len(status) <= 78 and screen_lines(app)[-2].strip() == status.strip()
        while table.focused_column.name != "flop":
            await pilot.press("right")
        await pilot.pause()
        status = str(screen.query_one("#status").render())
        assert (
            " FLOP " in f" {table.visible_text()[0]} "
            and "FLOP," not in status
            and not status.endswith("FLOP")
        )


@pytest.mark.parametrize("size", [(80, 24), (60, 24)])
async def test_the_sort_picker_names_every_column_it_leaves_out_or_says_how_many_more(size):
    """Before: at 80 columns `Not listed, no values in this report (10):` showed 6 names and cut the
    rest off with no ellipsis. Now the names that fit two lines are whole and `+N more` counts the
    rest."""
    report = read_report(fixture_file("v100_cutlass_gemm_nersc_flops_details.csv"))
    rows = report.group("name")
    app = make_app(report)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.press("o")
        picker = app.screen
        assert await shows(pilot, app, "Not listed")
        await pilot.pause()
        text = on_screen(app)
        listed = re.search(r"Not listed, no values in this report \((\d+)\): (.*?) ▊", text)
        count, names = int(listed[1]), listed[2].split(", ")
        more = int(names.pop()[1:].split()[0]) if names[-1].startswith("+") else 0
        # Each name whole, one of the report's columns with no value in any row (the raw data says
        # so).
        assert names and all(name in picker.empty for name in names) and count == len(picker.empty)
        assert len(names) + more == count and more > 0
        assert rows["dram_read_bytes"].isna().all() and "DRAM rd B" in names


# What each summary line says, by its opening words, and the name a cut must give it.
SUMMARY_NAMES = {
    "FLOP ≥": "FLOP total",
    "FMA = 2": "FMA convention",
    "1 launch(es) without values": "notes",
    "Ceilings": "ceilings",
    "from report counters": "ceilings",
}


@pytest.mark.parametrize("size", [(80, 9), (60, 12)])
async def test_the_summary_cut_names_every_line_it_leaves_out_and_fits(size):
    """H800, one launch unprofiled. Before: `… not shown: notes, ceilings (5 lines)` left out the
    FLOP total line without naming it, and at 60 columns the marker itself was cut (`--no-tui prints
    a…`). Now it names what each line left out holds, and fits (the `--no-tui` pointer gives way
    first). Terminals this short: the summary may take all the room the table's two rows leave, so
    only they cut it."""
    from flopscope.tui.app.widgets.summary import Summary

    app = make_app(read_report(fixture_file("h800_sglang_flashattn_full.ncu-rep")))
    async with app.run_test(size=size) as pilot:
        screen = await ready(app, pilot)
        summary = screen.query_one(Summary)
        whole = summary.text(summary.content_size.width).plain.splitlines()  # uncapped: every line
        shown = screen_lines(app)[summary.region.y : summary.region.bottom]  # below the breadcrumb
        marker = shown[-1].strip()
        assert (
            marker.startswith("… not shown: ")
            and not marker.endswith("…")
            and len(shown[-1]) <= size[0]
        )
        left_out = whole[len(shown) - 1 :]
        assert f"({len(left_out)} lines)" in marker
        named = {
            name
            for line in left_out
            for start, name in SUMMARY_NAMES.items()
            if line.startswith(start)
        }
        assert "ceilings" in named and all(name in marker for name in named), (named, marker)
        if size == (80, 9):
            # the review's case: `FLOP ≥ 556 M` was among the lines cut
            assert "FLOP total" in marker


async def test_the_bundled_demo_drills_from_a_tensor_core_kernel_at_80x24():
    """`flopscope demo`'s capture (an H100 bf16 training step), keyboard only at 80x24: filter to
    the nvjet GEMMs, open the top one, and its screen shows the tensor-core FLOPs the engine counted
    for it."""
    from flopscope.tui.cli.main import bundled_example

    path = bundled_example()
    report = read_report(path)
    app = kernels_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        assert "NVIDIA H100 80GB HBM3" in "\n".join(screen_lines(app))
        await pilot.press("slash", *"nvjet", "enter")
        rows = report.group("name")
        nvjet = rows[rows["kernel_full"].str.startswith("nvjet")]
        assert len(screen.model) == len(nvjet) > 0
        top = screen.model.shown().iloc[0]
        await pilot.press("enter")
        assert isinstance(app.screen, KernelScreen)
        text = "\n".join(screen_lines(app))
        assert top["kernel"][:30] in text
        assert top["flop_tensor_bf16"] == top["flop"] > 0
        assert re.search(r"TC bf16 +" + re.escape(fmt.si(top["flop_tensor_bf16"], "FLOP")), text), (
            text
        )
        assert re.search(r"Precision judged +TC bf16", text)


async def test_the_header_leaves_the_table_its_rows_at_80x24():
    """Issue 19.9: the demo's header took 7 of 24 lines. At most 5 now (what does not fit is named
    by the cut marker), so the table shows the 16 rows left by the header, its title row, status and
    footer."""
    from flopscope.tui.app.widgets.summary import Summary

    demo = (
        Path(__file__).resolve().parents[2]
        / "tui"
        / "examples"
        / "train_transformer_bf16_bs8.ncu-rep.xz"
    )
    app = make_app(read_report(demo))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(app, pilot)
        assert screen.query_one(Summary).region.height <= 5
        rows = [line for line in screen.query_one(KernelTable).visible_text()[1:] if line.strip()]
        assert len(rows) >= 24 - 5 - 3
        assert any(line.strip().startswith("… not shown: ceilings") for line in screen_lines(app))


async def test_help_lists_no_key_that_does_nothing(h100):
    """Issue 19.7: help listed `^c Copy selected text`, which copies a mouse selection the app never
    makes (it never captures the mouse): a key that does nothing."""
    app = make_app(h100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.text()
        assert "Quit" in text and "Copy selected text" not in text
