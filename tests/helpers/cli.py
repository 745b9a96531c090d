"""The `flopscope` command line as the tests run it: a subprocess, stdin /dev/null, output
captured."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import forked_cli

CLI = (sys.executable, "-m", "flopscope.tui.cli")


def run_cli(
    *args,
    home: Path | str | None = None,
    env: dict | None = None,
    clean_env: bool = False,
    cwd: Path | str | None = None,
    columns: int = 200,
    timeout: float = 120,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.PIPE,
    umask: int = -1,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess:
    """Run the CLI as a script would: never a terminal on stdin or stdout.

    It runs as a child forked from a process with the libraries imported (`forked_cli`) where that
    is the same as a fresh interpreter, else as one. `clean_env` starts from an empty environment
    (no PATH, no HOME): what the command needs must come from its arguments. `home` is
    FLOPSCOPE_HOME, the run store's folder. `prefix` runs it under another command
    (`permissions_bind()`)."""
    base = {} if clean_env else dict(os.environ)
    # the suite's caches stay off (conftest.py) in a clean environment too: a command's output kept
    # in the user's data folder would answer another test's same command without running it
    base.update({k: os.environ[k] for k in ("FLOPSCOPE_NO_CACHE",) if k in os.environ})
    base.update({"COLUMNS": str(columns)}, **({"PATH": ""} if clean_env else {}))
    if home is not None:
        base["FLOPSCOPE_HOME"] = str(home)
    base.update(env or {})
    plain_streams = stdin == subprocess.DEVNULL and stdout == subprocess.PIPE
    if not prefix and plain_streams and forked_cli.can_fork(base):
        return forked_cli.run(
            list(map(str, args)), base, None if cwd is None else str(cwd), umask, timeout
        )
    return subprocess.run(
        [*prefix, *CLI, *map(str, args)],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=base,
        umask=umask,
        timeout=timeout,
    )


def run_in_process(*args, env: dict | None = None) -> tuple[int, str, str]:
    """`flopscope ARGS` in this process (no interpreter start: 20x faster for the fuzz suite): (exit
    code, stdout, stderr). A traceback propagates, as it would print in the real CLI."""
    import contextlib
    import io

    from flopscope.tui.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return code, out.getvalue(), err.getvalue()


# What lets root past file permissions: reading and writing anything, searching any folder.
_BYPASS = "-dac_override,-dac_read_search"


@functools.cache
def permissions_bind() -> tuple[str, ...] | None:
    """A command prefix under which file permissions bind, as they do for a user: none for a user;
    for root (CI runs as root), util-linux's setpriv without the capabilities that let root past
    them, still uid 0, so the interpreter in root's folders stays readable. None where root cannot
    drop them (no setpriv, a container without CAP_SETPCAP): checked on a folder without
    permissions, not assumed."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--bounding-set", _BYPASS, "--inh-caps", _BYPASS)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "f").write_text("x")
        os.chmod(folder, 0o600)
        try:
            probe = subprocess.run([*prefix, "cat", f"{folder}/f"], capture_output=True, timeout=30)
        except OSError:
            return None
        finally:
            os.chmod(folder, 0o700)
    return prefix if probe.returncode != 0 else None


def launches_json(path) -> list[dict]:
    """`report PATH --by launch --json`'s rows, in launch order (the order ncu_report walks a
    report's launches)."""
    out = run_cli("report", path, "--by", "launch", "--json")
    assert out.returncode == 0, out.stderr
    return sorted(json.loads(out.stdout)["rows"], key=lambda row: row["launch_id"])
