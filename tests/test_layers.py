"""Layer contracts, as tests: what the pyproject's import-linter contracts say statically, and what
each entry point actually loads at run time (deferred imports are allowed by the static rules, so
sys.modules is the truth for "the CLI never loads Textual")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers.linked_tree import linked_tree

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold(tmp_path):
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    tree = linked_tree(tmp_path)
    done = subprocess.run(
        [lint, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "broken" in done.stdout and "0 broken" in done.stdout


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _package_modules(package: str) -> str:
    return (
        f"import importlib, pkgutil, {package} as p\n"
        f"for m in pkgutil.walk_packages(p.__path__, '{package}.'):\n"
        "    importlib.import_module(m.name)"
    )


def _loaded(modules: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(
        m for m in modules if m.split(".")[0] in roots or any(m.startswith(r + ".") for r in roots)
    )


def test_the_engine_loads_no_ui_at_run_time():
    modules = _modules_after(_package_modules("flopscope.core"))
    assert "flopscope.core.readers.ncu_rep_stream" in modules  # the walk did import the engine
    assert _loaded(modules, ("textual", "rich", "flopscope.tui")) == []


def test_presentation_loads_no_textual_at_run_time():
    modules = _modules_after(_package_modules("flopscope.tui.presentation"))
    assert "flopscope.tui.presentation.text_report" in modules
    assert _loaded(modules, ("textual", "plotext", "flopscope.tui.app")) == []


def _cli_modules(*argv: str) -> set[str]:
    """sys.modules after the flopscope command ran with these arguments, through its real entry
    point."""
    code = (
        "import json, sys\n"
        "from flopscope.tui.cli import watcher\n"
        "from flopscope.tui.cli.entry import main\n"
        "def probe(code, leave=watcher._leave):\n"
        "    sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
        "    leave(code)\n"
        "watcher._leave = probe\n"
        f"sys.argv = ['flopscope', *{list(argv)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    probe(0, sys.exit)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    # The worker, which ran the command, prints them as it leaves (tui/cli/watcher.py); an argparse
    # exit (--help) leaves through SystemExit, unwatched or not.
    line = [x for x in done.stderr.splitlines() if x.startswith("MODULES ")]
    assert len(line) == 1, done.stderr
    return set(json.loads(line[0][len("MODULES ") :]))


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("--version",),
        ("report", "--help"),
        ("report", "demo"),
        ("report", "--json", "demo"),
        ("open", "--no-tui", "demo"),
        ("serve", "--help"),
    ],
    ids=lambda a: " ".join(a),
)
def test_the_cli_never_loads_textual(argv):
    from flopscope.tui.cli.main import bundled_example

    argv = tuple(str(bundled_example()) if a == "demo" else a for a in argv)
    modules = _cli_modules(*argv)
    assert "flopscope.tui.cli.main" in modules
    assert _loaded(modules, ("textual", "flopscope.tui.app")) == []


# What start-up must not load (issue 18.4): the data stack (seconds on a login node), the app, the
# report readers.
HEAVY = (
    "pandas",
    "pyarrow",
    "numpy",
    "textual",
    "ncu_report",
    "flopscope.core.readers",
    "flopscope.tui.app",
)


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("--version",),
        ("gpus",),
        ("gpus", "--json"),
        ("report", "--help"),
        ("report", "--bogus", "x"),
        ("sweep", "--tolerance", "-1"),
        ("frobnicate",),
    ],
    ids=lambda a: " ".join(a),
)
def test_start_up_loads_no_data_stack(argv):
    modules = _cli_modules(*argv)
    assert "flopscope.tui.cli.main" in modules
    assert _loaded(modules, HEAVY) == []


def test_the_start_up_probe_sees_the_data_stack_when_a_report_is_read():
    """The check above can fail: reading a report does load what --version must not."""
    from flopscope.tui.cli.main import bundled_example

    modules = _cli_modules("report", "--json", str(bundled_example()))
    assert {"pandas", "flopscope.core.readers"} <= modules


@pytest.mark.parametrize(
    "argv",
    [("export", "{demo}", "-o", "{out}"), ("report", "--json", "{demo}")],
    ids=["export", "--json"],
)
def test_outputs_without_a_table_load_no_table_renderer(argv, tmp_path):
    """`export` and `--json` write no table: rich (and the rule results' tables, stored sweeps) stay
    unloaded, ~60 ms of a 100k-launch export whose budget is 1.5x a bare read (issue 18). The probe
    can fail: the printed table loads rich."""
    from flopscope.tui.cli.main import bundled_example

    fill = {"demo": str(bundled_example()), "out": str(tmp_path / "kernels.csv")}
    modules = _cli_modules(*(a.format(**fill) for a in argv))
    assert "flopscope.core.export.write" in modules
    assert (
        _loaded(
            modules, ("rich", "flopscope.tui.presentation.text_report", "flopscope.tui.cli.sweep")
        )
        == []
    )
    assert "rich" in _cli_modules("report", fill["demo"])


def test_the_app_loads_no_plot_library_until_a_plot_is_drawn():
    """plotext takes ~0.3 s to import, a tenth of the 3 s budget of `open` on 100k launches; the
    Kernels screen draws no plot (the roofline's `r` does). The probe can fail: drawing a roofline
    loads it."""
    modules = _modules_after("import flopscope.tui.app.launch")
    assert "flopscope.tui.app.screens.kernels" in modules
    assert _loaded(modules, ("plotext",)) == []
    drawn = _modules_after(
        "from flopscope.tui.app.widgets.roofline_plot import Roofline, build_plot\n"
        "build_plot(Roofline(points=(), compute=(), dram=None), 40, 12)"
    )
    assert "plotext" in drawn


STAGES = ("common", "ncu", "table", "report", "export", "store", "profiling", "analysis")


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_package_exports_what_it_names(stage):
    """A stage's `__init__` names its public surface lazily: every name there must resolve to the
    module it says, and `__all__` must list exactly those names (mypy and readers of the package see
    `__all__`)."""
    import importlib

    package = importlib.import_module(f"flopscope.core.{stage}")
    assert sorted(package.__all__) == sorted(package._EXPORTS)
    for name, module in package._EXPORTS.items():
        defined = importlib.import_module(f"flopscope.core.{stage}.{module}")
        assert getattr(package, name) is getattr(defined, name), (stage, name)


def _cycles(graph, modules: set[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        for n in graph.find_modules_directly_imported_by(m) & modules:
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            component = []
            while True:
                n = stack.pop()
                component.append(n)
                if n == m:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return found


def test_no_import_cycle_anywhere(tmp_path, monkeypatch):
    """No module imports one that imports it back: nowhere at run time, and in the engine not even
    for types (its stages are layers a drawing shows). The app's screens name FlopscopeApp for the
    checker only, as Textual screens name their App."""
    grimp = pytest.importorskip("grimp")
    tree = linked_tree(tmp_path)
    monkeypatch.syspath_prepend(str(tree))
    for name in [m for m in sys.modules if m == "flopscope" or m.startswith("flopscope.")]:
        monkeypatch.delitem(sys.modules, name)
    at_run_time = grimp.build_graph("flopscope", cache_dir=None, exclude_type_checking_imports=True)
    assert _cycles(at_run_time, set(at_run_time.modules)) == []
    typed = grimp.build_graph("flopscope", cache_dir=None)
    assert _cycles(typed, {m for m in typed.modules if m.startswith("flopscope.core")}) == []
