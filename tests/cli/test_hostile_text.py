"""Reports are untrusted input: kernel names and paths that carry terminal escape sequences, bidi
overrides, line breaks, Rich markup or spreadsheet formulas reach no terminal and no spreadsheet as
such, while JSON and Parquet keep them exactly.

The hostile pages are the real V100 CUTLASS launches (raw page and details page, from the shared
fixture) with their kernel names replaced. What a name must look like on screen is computed here
with Python's own `ascii()` escapes, not with the code under test."""

from __future__ import annotations

import csv
import io
import json
import shlex
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.core.common.safe_text import display_text
from flopscope.core.export.write import write_table
from flopscope.core.ncu.progress import describe, parse_line

from ..conftest import fixture_path, settle
from ..helpers.cli import run_cli
from ..helpers.raw_csv import launches, raw_csv

DETAILS = "v100_cutlass_gemm_nersc_flops_details.csv"  # 11 launches

HOSTILE = [
    "clear\x1b[2J\x1b[Hscreen",  # CSI: clear the screen, cursor home
    "title\x1b]0;pwned\x07",  # OSC 0: retitle the window
    "link\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",  # OSC 8: a forged link
    "clip\x1b]52;c;cHduZWQ=\x07",  # OSC 52: write the clipboard
    "bidi\u202eexe.cu",  # right-to-left override: shows as `bidiuc.exe`
    "two\nlines",  # a newline inside a quoted name
    "[red]x[/red] [link=http://evil.example]y[/link]",  # Rich markup
    '=HYPERLINK("http://x","y")',  # spreadsheet formulas (OWASP CSV injection)
    "+cmd|' /C calc'!A0",
    "@SUM(1)",
    # formula, an 8-bit CSI (C1), DEL, NUL, zero-width space and BOM
    "-2+3\x9b2J\x7f\x00nul\u200bzw\ufeff",
]
FORMULAS = {"=HYPERLINK(", "+cmd|", "@SUM(1)", "-2+3"}

# What may never reach a terminal: C0 controls but the newline that ends a line, DEL, C1, bidi
# controls and marks, line and paragraph separators.
UNSAFE = {
    *map(chr, range(0x20)),
    "\x7f",
    *map(chr, range(0x80, 0xA0)),
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    "\u2028",
    "\u2029",
    *"\u200b\u200c\u200d\u2060\ufeff",  # zero-width: two names that look the same, a row shifted
}


def escaped(text: str) -> str:
    """`text` as it must show: each unsafe character as Python writes it in an ASCII literal
    (`\\x1b`, `\\u202e`, `\\n`)."""
    return "".join(ascii(c)[1:-1] if c in UNSAFE else c for c in text)


def assert_clean(output: str) -> None:
    found = sorted({f"U+{ord(c):04X}" for c in output if c in UNSAFE and c != "\n"})
    assert not found, f"control characters reached the output: {found}"


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """The raw page and the details page, every launch renamed; the raw page also under a file name
    that itself retitles the terminal (a path is shown in headers and error lines)."""
    details = fixture_path(DETAILS)
    folder = tmp_path_factory.mktemp("hostile")
    rows = launches(details)
    assert len(rows) == len(HOSTILE)
    for row, name in zip(rows, HOSTILE, strict=True):
        row["Kernel Name"] = name
    raw = folder / "raw.csv"
    raw.write_text(raw_csv(rows))
    named = folder / "r\x1b]0;pwned\x07\u202e.csv"
    named.write_text(raw.read_text())
    return {
        "raw": raw,
        "details": _renamed_details(details, folder / "details.csv"),
        "named": named,
    }


def _renamed_details(path: Path, out: Path) -> Path:
    """The details CSV with launch N's kernel named HOSTILE[N], every other byte of each row as ncu
    wrote it (its preamble lines included), re-quoted by the csv module."""
    lines = path.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(rows[0])
    for row in rows[1:]:
        writer.writerow([*row[:4], HOSTILE[int(row[0])], *row[5:]])
    out.write_text("".join(lines[:start]) + buf.getvalue(), encoding="utf-8")
    return out


# -- the sanitiser ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "char",
    [
        "\x00",
        "\x07",
        "\x08",
        "\x1b",
        "\x0b",
        "\x0c",
        "\x1f",  # C0
        "\n",
        "\t",
        "\r",  # short escapes
        "\x7f",
        "\x80",
        "\x85",
        "\x9b",
        "\x9f",  # DEL, C1 (0x85: NEL, 0x9b: 8-bit CSI)
        "\u202a",
        "\u202b",
        "\u202c",
        "\u202d",
        "\u202e",
        "\u2066",
        "\u2067",
        "\u2068",
        "\u2069",  # bidi controls
        "\u200e",
        "\u200f",
        "\u061c",  # bidi marks
        "\u2028",
        "\u2029",  # line and paragraph separators
        "\u200b",
        "\u200c",
        "\u200d",
        "\u2060",
        "\ufeff",  # zero-width
    ],
)
def test_each_unsafe_character_becomes_its_python_escape(char):
    assert display_text(f"a{char}b") == f"a{ascii(char)[1:-1]}b"


def test_safe_text_is_unchanged_and_escaping_twice_changes_nothing():
    for text in [
        "void gemm<float, (int)128>(T1 *, int)",
        "µs ≥ 1.2 · 日本",
        "[bold]x[/bold]",
        "C:\\path\\x1b",
    ]:
        assert display_text(text) == text
    # invisible: two names would look alike
    assert display_text("zero\u200bwidth") == "zero\\u200bwidth"
    once = display_text(HOSTILE[0])
    assert once == "clear\\x1b[2J\\x1b[Hscreen" and display_text(once) == once
    assert display_text("a\x1b\nb\tc", keep_newlines=True) == "a\\x1b\nb\\tc"


def test_an_error_line_quoting_a_hostile_path_is_escaped():
    err = FlopscopeError("r\x1b]0;x\x07.csv", "bad cell \x1b[2J", "fix\u202e it")
    assert err.line() == "r\\x1b]0;x\\x07.csv: bad cell \\x1b[2J; fix\\u202e it"
    assert err.path == "r\x1b]0;x\x07.csv"  # the data keeps the original


def test_ncu_progress_lines_from_the_program_and_ncu_are_escaped():
    kernel = parse_line('==PROF== Profiling "k\x1b]0;x\x07" - 0: 0%....50%....100% - 9 passes')
    assert kernel.name == "k\x1b]0;x\x07"
    assert describe(kernel) == "kernel 0: k\\x1b]0;x\\x07 (9 passes)"
    assert (
        describe(parse_line("\x1b[31mred\x1b[0m program output\r\n"))
        == "\\x1b[31mred\\x1b[0m program output"
    )
    assert (
        describe(parse_line("==ERROR== bad \x1b]52;c;eA==\x07"))
        == "ncu error: bad \\x1b]52;c;eA==\\x07"
    )


# -- the command line
# --------------------------------------------------------------------------------
@pytest.mark.parametrize("page", ["raw", "details"])
@pytest.mark.parametrize("command", [["report"], ["open", "--no-tui"]])
def test_the_table_escapes_every_name_and_shows_every_row(pages, page, command):
    done = run_cli(*command, pages[page])
    assert done.returncode == 0, done.stderr
    assert_clean(done.stdout + done.stderr)
    kernels = read_report(pages[page]).group("name")["kernel"]
    table = done.stdout.split("\n\n", 1)[1].splitlines()
    body = table[1 : 1 + len(HOSTILE)]  # under the titles, one line per name: none split in two
    assert f"{len(HOSTILE)} row(s)" in table[1 + len(HOSTILE)]
    for name in kernels:
        assert sum(line.startswith(escaped(name) + " ") for line in body) == 1, escaped(name)


def test_a_hostile_file_name_is_escaped_in_the_header_and_in_error_lines(pages, tmp_path):
    done = run_cli("report", pages["named"])
    assert done.returncode == 0, done.stderr
    assert_clean(done.stdout + done.stderr)
    assert escaped(str(pages["named"])) in done.stdout
    missing = tmp_path / "gone\x1b[2J\x1b]0;pwned\x07.csv"
    for args in (["report", missing], [missing]):
        done = run_cli(*args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1
        assert_clean(done.stderr)
        assert "gone\\x1b[2J\\x1b]0;pwned\\x07.csv" in done.stderr


@pytest.mark.parametrize("page", ["raw", "details"])
def test_json_keeps_the_exact_names(pages, page):
    done = run_cli("report", pages[page], "--json")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout  # JSON escapes it: \u001b
    rows = json.loads(done.stdout)["rows"]
    assert sorted(r["kernel_full"] for r in rows) == sorted(HOSTILE)


def test_exports_csv_defused_json_and_parquet_exact(pages, tmp_path):
    for suffix in ("csv", "json", "parquet"):
        done = run_cli("export", pages["raw"], "-o", tmp_path / f"out.{suffix}")
        assert done.returncode == 0, done.stderr
        assert_clean(done.stderr)
    rows = _csv_rows(tmp_path / "out.csv")
    for row in rows:
        original = next(n for n in HOSTILE if n == row["kernel_full"].removeprefix("'"))
        formula = any(original.startswith(f) for f in FORMULAS)
        assert row["kernel_full"] == ("'" + original if formula else original)
        # numbers stay numbers
        assert float(row["duration_s"]) > 0 and not row["duration_s"].startswith("'")
    assert sorted(
        r["kernel_full"] for r in json.loads((tmp_path / "out.json").read_text())["rows"]
    ) == sorted(HOSTILE)
    assert sorted(pd.read_parquet(tmp_path / "out.parquet")["kernel_full"]) == sorted(HOSTILE)
    done = run_cli("export", pages["raw"], "-o", tmp_path / "raw.csv", "--raw-csv")
    assert done.returncode == 0, done.stderr
    raw = _csv_rows(tmp_path / "raw.csv")
    assert sorted(r["kernel_full"] for r in raw) == sorted(HOSTILE)


def _csv_rows(path: Path) -> list[dict]:
    with open(path, newline="") as handle:  # a newline inside a quoted name stays in its cell
        return list(csv.DictReader(handle))


def test_csv_defuses_text_cells_only_never_a_negative_number(tmp_path):
    frame = pd.DataFrame(
        {
            "name": ["-cmd", "=1+1", "\tx", "\r=x", "ok", "-5", "+1e3", None],
            "delta_s": [-1.5, -2.0, 0.0, 1.0, -3e-9, 2.0, 3.0, -4.0],
            "kind": pd.Categorical(["@SUM(1)", "a", "a", "a", "b", "b", "b", "b"]),
        }
    )
    write_table(frame, tmp_path / "out.csv")
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert lines[0] == "name,delta_s,kind"
    assert [next(csv.reader([line])) for line in lines[1:3]] == [
        ["'-cmd", "-1.5", "'@SUM(1)"],
        ["'=1+1", "-2.0", "a"],
    ]
    with open(tmp_path / "out.csv", newline="") as handle:
        text = handle.read()
    # a CR quoted (a bare one ends the row), the line after it defused too
    assert "\n\"'\r'=x\"," in text
    cells = list(csv.reader(io.StringIO(text, newline="")))[1:]
    assert [c[0] for c in cells] == ["'-cmd", "'=1+1", "'\tx", "'\r'=x", "ok", "-5", "+1e3", ""]
    assert [float(c[1]) for c in cells] == list(frame["delta_s"])
    write_table(frame, tmp_path / "raw.csv", raw_csv=True)
    with open(tmp_path / "raw.csv", newline="") as handle:
        raw = handle.read()
    assert all(
        f"\n{line}" in raw for line in ["-cmd,-1.5,@SUM(1)\n", "=1+1,", "\tx,", '"\r=x",', "-5,"]
    )


# -- the app
# ----------------------------------------------------------------------------------------
async def test_the_app_shows_every_row_escaped_and_notifications_as_plain_text(pages, monkeypatch):
    from flopscope.tui.app.launch import kernels_app
    from flopscope.tui.app.screens.kernel import KernelScreen
    from flopscope.tui.app.widgets.breadcrumb import Breadcrumb
    from flopscope.tui.app.widgets.kernel_table import KernelTable
    from flopscope.tui.app.widgets.summary import Summary
    from textual.app import App
    from textual.widgets import Input, Static

    report = read_report(pages["named"])
    app = kernels_app(pages["named"], report=report)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(
            pilot,
            lambda: (
                app.kernels.model is not None and not app.kernels.query_one(KernelTable).loading
            ),
        )
        lines = app.kernels.query_one(KernelTable).visible_text()
        assert_clean("\n".join(lines))
        for name in report.group("name")["kernel"]:
            assert sum(line.startswith(escaped(name)[:30]) for line in lines[1:]) == 1, escaped(
                name
            )
        # the header names the file
        shown = "\n".join(str(w.render()) for w in app.screen.query(Summary))
        assert_clean(shown)
        assert escaped(pages["named"].name) in shown
        notes = []
        monkeypatch.setattr(App, "notify", lambda self, message, **kw: notes.append((message, kw)))
        app.notify("run a\x1b]0;x\x07 [bold]b[/bold]", title="t\x1b[2J")
        assert notes == [
            (
                # the title leads the message's line
                "t\\x1b[2J: run a\\x1b]0;x\\x07 [bold]b[/bold]",
                {"title": "", "severity": "information", "timeout": None, "markup": False},
            )
        ]
        # the export dialog proposes a file named after the report: made safe
        await pilot.press("e")
        await settle(pilot, lambda: app.screen.query(Input))
        proposed = app.screen.query_one(Input).value
        assert_clean(proposed)
        stem = "".join("_" if c in UNSAFE else c for c in pages["named"].stem)
        assert Path(proposed).name == f"{stem}-name.csv" and stem == "r_]0;pwned__"
        await pilot.press("escape")
        row = app.kernels.model.row(0)
        await app.push_screen(KernelScreen(row, report.ceilings()))
        await pilot.pause(0.1)
        text = "\n".join(
            str(w.render()) for w in [*app.screen.query(Static), *app.screen.query(Breadcrumb)]
        )
        assert_clean(text)
        assert escaped(row["kernel"]) in text


def test_roofline_labels_are_escaped(pages):
    from flopscope.tui.app.screens.roofline import describe as describe_point
    from flopscope.tui.app.widgets.roofline_plot import roofline_from

    report = read_report(pages["raw"])
    data = roofline_from(report.group("name"), report.ceilings())
    labels = [describe_point(data, i).renderables[0].plain for i in range(len(data.points))]
    assert data.points and all("\x1b" not in label and "\u202e" not in label for label in labels)
    assert any("bidi\\u202eexe.cu" in label for label in labels)  # the names with FLOPs are plotted
    assert any("two\\nlines" in label for label in labels) and any(
        "-2+3\\x9b2J\\x7f" in label for label in labels
    )


@pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)"
)
def test_the_app_in_tmux_keeps_the_pane_title_and_shows_every_row(pages, tmp_path):
    """A real terminal: the OSC 0 in the file name and in a kernel name would retitle the pane, the
    CSI in another would clear the table."""
    from ..helpers.tmux import Tmux

    tmux = Tmux()
    status = tmp_path / "exit"
    command = (
        f"env -u COLORTERM TERM=xterm-256color {shlex.quote(sys.executable)} -m flopscope.tui.cli"
        f" open {shlex.quote(str(pages['named']))}; echo $? > {shlex.quote(str(status))}; sleep 30"
    )
    tmux("new-session", "-d", "-s", "app", "-x", "160", "-y", "30", "sleep 60")
    try:
        tmux("select-pane", "-t", "app", "-T", "before")
        tmux("respawn-pane", "-k", "-t", "app", command)
        shown = tmux.wait_for("11/11 rows")
        time.sleep(0.5)  # a late frame would still bring any title change
        assert tmux("display", "-p", "-t", "app", "#{pane_title}").strip() == "before"
        shown = tmux.screen()
        for name in read_report(pages["raw"]).group("name")["kernel"]:
            assert escaped(name)[:30] in shown, escaped(name)
        assert "r\\x1b]0;pwned\\x07\\u202e.csv" in shown
        tmux("send-keys", "-t", "app", "q")
        deadline = time.monotonic() + 10
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.read_text().strip() == "0"
    finally:
        tmux("kill-server")


# -- stored runs: runs, diff and sweep views
# --------------------------------------------------------------
@pytest.fixture(scope="module")
def stored(pages, tmp_path_factory) -> Path:
    """A store holding the hostile raw page twice (runs `a` and `b`, hostile names, a hostile GPU
    name)."""
    from flopscope.core import Report
    from flopscope.core.store.run_store import Store

    home = tmp_path_factory.mktemp("store")
    report = read_report(pages["raw"])
    meta = replace(report.meta, gpu="GPU\x1b]0;pwned\x07")
    with Store(home / "flopscope.db") as store:
        for name in ("a", "b"):
            store.save(
                Report(meta=meta, kernels=report.kernels, gpu=report.gpu, missing=report.missing),
                name,
            )
    return home


def test_runs_and_diff_print_escaped_names(stored):
    for args in (["runs", "--no-tui"], ["diff", "a", "b", "--no-tui"]):
        done = run_cli(*args, home=stored)
        assert done.returncode == 0, done.stderr
        assert_clean(done.stdout + done.stderr)
    assert "GPU\\x1b]0;pwned\\x07" in done.stdout and "clear\\x1b[2J\\x1b[Hscreen" in done.stdout


def test_a_sweep_from_hostile_files_prints_escaped_names(pages, tmp_path):
    """At the second size one kernel has another (hostile) name: the finding that names it is
    escaped."""
    files = []
    for size in (1, 2):
        path = tmp_path / f"bs{size}\x1b[2J.csv"
        text = pages["raw"].read_text()
        path.write_text(
            text if size == 1 else text.replace('"@SUM(1)"', '"@SUM(2)\x1b]0;pwned\x07"')
        )
        files.append(path)
    done = run_cli(
        "sweep", "--from", *files, "--param-from-name", r"bs(\d+)", "--no-tui", home=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert_clean(done.stdout + done.stderr)
    assert "kernel @SUM(2)\\x1b]0;pwned\\x07 runs only at" in done.stdout


async def test_the_diff_screen_shows_escaped_names(stored):
    from flopscope.core.analysis.diff import diff_runs
    from flopscope.core.store.run_store import Store
    from flopscope.tui.app.app import FlopscopeApp
    from flopscope.tui.app.screens.diff import DiffScreen
    from flopscope.tui.app.widgets.kernel_table import KernelTable
    from textual.widgets import Static

    with Store(stored / "flopscope.db") as store:
        a, b = store.load("a"), store.load("b")
    app = FlopscopeApp(
        DiffScreen(diff_runs(a, b), "a", "b", ("GPU\x1b]0;x\x07", "GPU\x1b]0;x\x07"), (a, b))
    )
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(
            pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.query(KernelTable)
        )
        await pilot.pause(0.1)
        lines = app.screen.query_one(KernelTable).visible_text()
        title = str(app.screen.query_one("#diff-title", Static).render())
        assert_clean("\n".join(lines) + title)
        assert "GPU\\x1b]0;x\\x07" in title
        assert sum(line.startswith("clear\\x1b[2J") for line in lines) == 1


async def test_the_live_profile_screen_escapes_ncu_and_program_output():
    """ncu's lines and the program's own, as the profile job hands them over (parsed from the
    console stream): a kernel name retitling the terminal, colour codes, an OSC 52 in an error, then
    the failure."""
    from flopscope.tui.app.launch import kernels_app
    from flopscope.tui.app.screens.profile import ProfileScreen
    from textual.widgets import DataTable

    from ..helpers.app import screen_lines

    stream = [
        "==PROF== Connected to process 7 (/bin/app\x1b]0;pwned\x07)",
        '==PROF== Profiling "gemm\x1b]0;pwned\x07\u202e" - 0: 0%....50%....100% - 9 passes',
        "\x1b[2J\x1b[31mprogram output\x1b[0m",
        "==ERROR== bad \x1b]52;c;cHduZWQ=\x07",
    ]

    def job(on_event, on_process):
        for line in stream:
            on_event(parse_line(line))
        raise FlopscopeError("host\x1b[2J", "ncu failed \x1b]0;pwned\x07")

    screen = ProfileScreen(job, "ncu on host\x1b]0;pwned\x07: app")
    app = kernels_app("report.ncu-rep", live=screen)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot, lambda: screen.failed is not None)
        await pilot.pause(0.1)
        text = "\n".join(screen_lines(app))
        assert_clean(text)
        for shown in (
            "gemm\\x1b]0;pwned\\x07\\u202e",
            "\\x1b[2J\\x1b[31mprogram output\\x1b[0m",
            "bad \\x1b]52;c;cHduZWQ=\\x07",
            "host\\x1b]0;pwned\\x07: app",
            "host\\x1b[2J",
        ):
            assert shown in text, shown
        assert screen.query_one(DataTable).get_row_at(0)[0].plain == "gemm\\x1b]0;pwned\\x07\\u202e"


async def test_the_runs_and_sweep_screens_show_escaped_names(stored, pages, tmp_path):
    """The Runs screen lists the hostile GPU name; the Sweep screen's findings name a hostile
    kernel."""
    from flopscope.core.analysis.scaling import Slice
    from flopscope.tui.app.launch import runs_app, sweep_app
    from flopscope.tui.app.widgets.kernel_table import KernelTable

    from ..helpers.app import screen_lines

    app = runs_app(stored / "flopscope.db")
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot, lambda: app.first.model is not None)
        text = "\n".join(screen_lines(app))
        assert_clean(text)
        assert "GPU\\x1b]0;pwned\\x07" in text and str(stored).split("/")[-1] in text
    renamed = tmp_path / "two.csv"
    renamed.write_text(pages["raw"].read_text().replace('"@SUM(1)"', '"@SUM(1)\x1b]0;pwned\x07"'))
    one, two = read_report(pages["raw"]), read_report(renamed)
    app = sweep_app([Slice("batch_size", {}, [(1.0, one), (2.0, two)])], "sweep\x1b[2J")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, lambda: app.screen.query(KernelTable))
        await pilot.pause(0.1)
        text = "\n".join(screen_lines(app))
        assert_clean(text)
        assert "Sweep sweep\\x1b[2J" in text and "@SUM(1)\\x1b]0;pwned\\x07" in text


async def test_the_reconcile_screen_escapes_module_names_and_notes():
    """Module names come from the report's NVTX ranges; the title names the report file."""
    from flopscope.core.analysis.reconciliation import ModuleRow, Reconciliation
    from flopscope.tui.app.app import FlopscopeApp
    from flopscope.tui.app.screens.reconcile import ReconcileScreen

    from ..helpers.app import screen_lines

    module = ModuleRow("layer1\x1b[2J\u202e", "Linear", 2.0e9, None, 2.0e9, None, 1.0, None, "ok")
    result = Reconciliation(
        "m", "r.ncu-rep", 0.1, 1, [module], {}, None, None, None, "", None, "fp32", None, None, None
    )
    screen = ReconcileScreen(
        "Reconcile r\x1b]0;pwned\x07.ncu-rep", result, ["note \x1b]52;c;eA==\x07"], False
    )
    app = FlopscopeApp(screen)
    async with app.run_test(size=(120, 20)) as pilot:
        await settle(pilot, lambda: app.screen is screen)
        await pilot.pause(0.1)
        text = "\n".join(screen_lines(app))
        assert_clean(text)
        for shown in (
            "r\\x1b]0;pwned\\x07.ncu-rep",
            "layer1\\x1b[2J\\u202e",
            "note \\x1b]52;c;eA==\\x07",
        ):
            assert shown in text, shown
