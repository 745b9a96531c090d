"""Binding ids (issue 21): every key of the app has an id a `[keymap]` can remap it by,
`<screen>.<action>`, or `table.`/`screen.`/`app.` for a key declared once and shared; the keymap
file in FLOPSCOPE_HOME remaps one.

The bindings are found by walking the app's own classes here (not through keymap.py's walk), so a
screen added without ids fails this test whatever keymap.py does."""

from __future__ import annotations

import importlib
import pkgutil
import re
import shlex
import shutil
import sys
import time
from pathlib import Path

import flopscope.tui.app.screens
import flopscope.tui.app.widgets
import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.keymap import load_keymap
from flopscope.tui.app.launch import kernels_app
from flopscope.tui.app.screens.help import HelpScreen
from flopscope.tui.app.screens.roofline import RooflineScreen
from flopscope.tui.app.widgets.footer import KeyFooter
from textual.binding import Binding
from textual.dom import DOMNode

from ..conftest import fixture_path, settle
from ..helpers.app import H100, ready
from ..helpers.tmux import Tmux

# prefixes of keys declared once for several screens (screens/keys.py)
SHARED = {"app", "screen", "table"}


def app_classes() -> list[type]:
    """FlopscopeApp and every screen and widget class in the app's packages."""
    for package in (flopscope.tui.app.screens, flopscope.tui.app.widgets):
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
    found, todo = [FlopscopeApp], [DOMNode]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith(
                ("flopscope.tui.app.screens.", "flopscope.tui.app.widgets.")
            ):
                found.append(sub)
    return list(dict.fromkeys(found))


def declared() -> list[tuple[type, Binding]]:
    return [
        (cls, b)
        for cls in app_classes()
        for b in cls.__dict__.get("BINDINGS", [])
        if isinstance(b, Binding)
    ]


def screen_names(cls: type) -> set[str]:
    """`KernelsScreen` -> `kernels`, for the class and its bases (a PushedKernelsScreen lists the
    Kernels keys)."""
    return {c.__name__.removesuffix("Screen").lower() for c in cls.__mro__}


def test_the_walk_finds_the_screens():
    names = {cls.__name__ for cls in app_classes()}
    assert {
        "KernelsScreen",
        "RunsScreen",
        "DiffScreen",
        "SweepScreen",
        "RooflineScreen",
        "KernelScreen",
        "ReconcileScreen",
        "HelpScreen",
        "KernelTable",
        "FlopscopeApp",
    } <= names
    assert len(declared()) > 40


def test_every_binding_has_an_id_named_for_its_screen():
    for cls, binding in declared():
        assert binding.id is not None, (cls.__name__, binding)
        assert re.fullmatch(r"[a-z]+\.[a-z][a-z_]*", binding.id), (cls.__name__, binding.id)
        prefix = binding.id.split(".")[0]
        assert prefix in SHARED | screen_names(cls), (cls.__name__, binding.id)


def test_an_id_names_one_binding():
    """A remap of an id changes one key's meaning: the same id on two different bindings (another
    key, action or description) would remap both, so a shared key is one Binding object listed by
    each screen."""
    by_id: dict[str, set] = {}
    for _, b in declared():
        by_id.setdefault(b.id, set()).add(
            (b.key, b.action, b.description, b.show, b.priority, b.key_display)
        )
    assert {i: v for i, v in by_id.items() if len(v) > 1} == {}


async def test_a_keymap_remaps_a_key_on_its_screen():
    app = kernels_app(
        fixture_path(H100), report=read_report(fixture_path(H100)), keymap={"kernels.roofline": "R"}
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        footer = app.screen.query_one(KeyFooter)
        shown = {app.get_key_display(b): text for b, _, _, text in footer.keys(footer.size.width)}
        assert shown.get("R") == "Roofline" and "r" not in shown
        await pilot.press("r")  # the default key no longer opens it
        await pilot.pause(0.1)
        assert app.screen is app.kernels
        await pilot.press("question_mark")
        assert "R  Roofline  this screen" in app.screen.text()
        await pilot.press("escape", "R")
        await settle(pilot, lambda: isinstance(app.screen, RooflineScreen))


async def test_a_shared_id_remaps_the_key_on_every_screen():
    app = kernels_app(
        fixture_path(H100), report=read_report(fixture_path(H100)), keymap={"screen.back": "x"}
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        for key in ("r", "enter"):  # the Roofline and Kernel screens both bind BACK
            await pilot.press(key)
            await settle(pilot, lambda: app.screen is not app.kernels)
            await pilot.press("escape")
            await pilot.pause(0.1)
            assert app.screen is not app.kernels
            await pilot.press("x")
            await settle(pilot, lambda: app.screen is app.kernels)
        assert not isinstance(app.screen, HelpScreen)


def test_the_keymap_file_in_flopscope_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    assert load_keymap() == {}  # no file: the defaults
    (tmp_path / "config.toml").write_text(
        '[keymap]\n"kernels.roofline" = "R"\n"screen.export" = "x,ctrl+e"\n'
    )
    assert load_keymap() == {"kernels.roofline": "R", "screen.export": "x,ctrl+e"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '[keymap]\n"kernels.rooflin" = "R"\n',
            "names no binding 'kernels.rooflin'; did you mean 'kernels.roofline'?",
        ),
        (
            '[keymap]\n"open" = "R"\n',
            (
                "names no binding 'open'; use one of app.commands, app.help, app.picture, app.quit,"
                " columns.cancel,"
            ),
        ),
        ('[keymap]\n"kernels.roofline" = 3\n', "'kernels.roofline' is not a key string"),
        ("[keymap\n", "not TOML"),
        ('keymap = "R"\n', "`keymap` is not a table"),
    ],
)
def test_a_bad_keymap_file_is_one_line_naming_it(tmp_path, text, problem):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(FlopscopeError) as err:
        load_keymap(path)
    line = err.value.line()
    assert line.startswith(f"{path}: ") and problem in line and "\n" not in line


def _open_in_tmux(tmp_path, config: str) -> tuple[Tmux, Path]:
    """`flopscope open` in tmux at 80x24, `config` as FLOPSCOPE_HOME's config.toml; (tmux, the
    exit-code file)."""
    (tmp_path / "config.toml").write_text(config)
    tmux, status = Tmux(), tmp_path / "exit"
    command = (
        f"env FLOPSCOPE_HOME={shlex.quote(str(tmp_path))} TERM=xterm-256color"
        f" {shlex.quote(sys.executable)} -m flopscope.tui.cli open"
        f" {shlex.quote(str(fixture_path(H100)))}; echo $? > {shlex.quote(str(status))}; sleep 30"
    )
    tmux("new-session", "-d", "-s", "app", "-x", "80", "-y", "24", command)
    return tmux, status


def _exit_code(status: Path, timeout: float = 30) -> str | None:
    deadline = time.monotonic() + timeout
    while not status.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return status.read_text().strip() if status.exists() else None


tmux_only = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)"
)


@tmux_only
def test_flopscope_open_in_a_terminal_reads_the_keymap(tmp_path):
    tmux, status = _open_in_tmux(tmp_path, '[keymap]\n"kernels.roofline" = "R"\n"app.quit" = "Q"\n')
    try:
        assert "R Roofline" in tmux.wait_for("rows · by name")
        tmux("send-keys", "-t", "app", "R")
        tmux.wait_for("Previous")  # the Roofline screen's footer
        tmux("send-keys", "-t", "app", "Escape")
        tmux.wait_for("rows · by name")
        tmux("send-keys", "-t", "app", "q")  # no longer quits
        assert _exit_code(status, timeout=1) is None
        tmux("send-keys", "-t", "app", "Q")
        assert _exit_code(status) == "0"
    finally:
        tmux("kill-server")


@tmux_only
def test_flopscope_open_refuses_a_bad_keymap_in_one_line(tmp_path):
    tmux, status = _open_in_tmux(tmp_path, '[keymap]\n"kernels.rooflin" = "R"\n')
    try:
        assert _exit_code(status) == "2"
        lines = [
            line
            for line in tmux("capture-pane", "-p", "-J", "-t", "app").splitlines()
            if line.strip()
        ]
    finally:
        tmux("kill-server")
    config = tmp_path / "config.toml"
    assert lines == [
        f"flopscope: {config}: [keymap] names no binding 'kernels.rooflin'; did you mean"
        " 'kernels.roofline'?"
    ]
