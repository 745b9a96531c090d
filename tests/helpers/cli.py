"""The `flopscope` command line as the tests run it: a subprocess, stdin /dev/null, output captured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
) -> subprocess.CompletedProcess:
    """Run the CLI as a script would: never a terminal on stdin or stdout.

    `clean_env` starts from an empty environment (no PATH, no HOME): what the command needs must come from
    its arguments. `home` is FLOPSCOPE_HOME, the run store's folder."""
    base = {} if clean_env else dict(os.environ)
    base.update({"COLUMNS": str(columns)}, **({"PATH": ""} if clean_env else {}))
    if home is not None:
        base["FLOPSCOPE_HOME"] = str(home)
    base.update(env or {})
    return subprocess.run(
        [*CLI, *map(str, args)],
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
    """`flopscope ARGS` in this process (no interpreter start: 20x faster for the fuzz suite): (exit code,
    stdout, stderr). A traceback propagates, as it would print in the real CLI."""
    import contextlib
    import io

    from flopscope.tui.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
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
