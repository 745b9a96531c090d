"""A command's imports run with Python's cycle collector paused
(tui/cli/import_guards.collector_paused): pandas' and pyarrow's ~120k objects would otherwise be
walked over and over as they pile up (30-40 ms of a 100k-launch export). The collector must be back
on for the command itself, which makes and drops big tables."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

from flopscope.tui.cli.import_guards import collector_paused
from flopscope.tui.cli.main import bundled_example


def test_the_collector_is_off_inside_on_again_after_and_what_was_made_is_frozen():
    assert gc.isenabled()
    before = gc.get_freeze_count()
    try:
        with collector_paused():
            assert not gc.isenabled()
            made = [[i] for i in range(1000)]  # tracked objects, alive past the block
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(made)
    finally:
        gc.unfreeze()


def test_a_collector_switched_off_before_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_real_command_runs_with_the_collector_on_and_its_imports_frozen(tmp_path):
    """Through the real entry point, in the worker that ran `report --json`, as the command
    returns."""
    code = (
        "import gc, json, sys\nfrom flopscope.tui.cli import watcher\nfrom flopscope.tui.cli.entry"
        " import main\ndef probe(code, leave=watcher._leave):\n    state = {'enabled':"
        " gc.isenabled(), 'frozen': gc.get_freeze_count(), 'pandas': 'pandas' in sys.modules}\n  "
        "  sys.stderr.write('GC ' + json.dumps(state) + '\\n')\n    leave(code)\nwatcher._leave ="
        " probe\nsys.argv = ['flopscope', 'report', '--json', '--no-cache',"
        f" {str(bundled_example())!r}]\nmain()\n"
    )
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    line = [x for x in done.stderr.splitlines() if x.startswith("GC ")]
    assert done.returncode == 0 and len(line) == 1, done.stderr
    state = json.loads(line[0][3:])
    assert state["pandas"] and state["enabled"]
    # pandas, numpy and pyarrow's objects, out of every later collection
    assert state["frozen"] > 50_000
