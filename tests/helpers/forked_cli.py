"""The `flopscope` CLI as a child forked from a warm process, for the tests: what `python -m
flopscope.tui.cli` does, without starting an interpreter and importing pandas, numpy, pyarrow, rich
and torch again for every command (about 0.6 s a command, 2-3 s with torch; the suite runs over a
thousand).

One server process per test process imports those libraries, never flopscope, and forks a child per
command: the child takes the command's environment, folder, umask, standard streams and arguments
and runs the `flopscope.tui.cli` module as `-m` would, so flopscope itself is imported afresh by
every command. Only what the interpreter decides at its start cannot differ from the server's (its
PYTHON*/LD_* variables, its locale): `cli.run_cli` starts a real interpreter for those commands, for
commands run under another program, and for streams other than /dev/null in and captured out."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

# Read by an interpreter at its start: a command whose environment changes one of them gets a real
# interpreter. (Writing bytecode and buffering stdout change nothing a test reads; an absent locale
# is coerced to UTF-8.)
STARTUP_PREFIXES = ("PYTHON", "LD_")
NO_EFFECT = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"}
PRELOADED = (
    "pandas",
    "numpy",
    "pyarrow",
    "pyarrow.csv",
    "pyarrow.parquet",
    "rich.console",
    "torch",
)


def _startup_env(env: Mapping[str, str]) -> dict[str, str]:
    read = {k: v for k, v in env.items() if k.startswith(STARTUP_PREFIXES) and k not in NO_EFFECT}
    utf8 = all(
        "utf-8" in v.lower() or "utf8" in v.lower()
        for k, v in env.items()
        if k.startswith(("LANG", "LC_"))
    )
    return {**read, "utf8": str(utf8)}


def can_fork(env: Mapping[str, str]) -> bool:
    """Whether a command with this environment runs alike forked from the server."""
    return os.environ.get("FLOPSCOPE_TEST_NO_FORK") != "1" and _startup_env(env) == _startup_env(
        os.environ
    )


class _Server:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from tests.helpers.forked_cli import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        atexit.register(self.process.kill)

    def run(self, request: dict) -> dict:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("the forking CLI server ended")
        return json.loads(answer)


_server: _Server | None = None


def run(
    argv: list[str], env: Mapping[str, str], cwd: str | None, umask: int, timeout: float
) -> subprocess.CompletedProcess:
    """`python -m flopscope.tui.cli ARGV` as a forked child: stdin /dev/null, stdout and stderr
    captured."""
    global _server
    if _server is None or _server.process.poll() is not None:
        _server = _Server()
    with tempfile.TemporaryDirectory(prefix="flopscope-cli-") as folder:
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        request = {"argv": argv, "env": dict(env), "cwd": cwd, "umask": umask, "timeout": timeout}
        answer = _server.run({**request, "stdout": str(out), "stderr": str(err)})
        stdout, stderr = _text(out.read_bytes()), _text(err.read_bytes())
    args = [sys.executable, "-m", "flopscope.tui.cli", *argv]
    if answer["timed_out"]:
        raise subprocess.TimeoutExpired(args, timeout, stdout, stderr)
    return subprocess.CompletedProcess(args, answer["returncode"], stdout, stderr)


def _text(data: bytes) -> str:
    """As `subprocess.run(text=True)` reads a stream: the locale's encoding, strict, newlines
    translated."""
    import locale

    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def serve() -> None:
    """The server: import the libraries, then one forked child per request line; answer its exit
    status."""
    import importlib

    for name in PRELOADED:
        with contextlib.suppress(ImportError):  # torch is optional
            importlib.import_module(name)
    for line in sys.stdin:
        print(json.dumps(_fork_one(json.loads(line))), flush=True)


def _fork_one(request: dict) -> dict:
    import signal
    import time

    pid = os.fork()
    if pid == 0:
        _child(request)
    deadline = time.monotonic() + request["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return {"returncode": _returncode(status), "timed_out": False}
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"returncode": -signal.SIGKILL, "timed_out": True}
        time.sleep(0.005)


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _child(request: dict) -> None:
    """Become the command: its streams, folder, umask and environment, then the CLI module as `-m`
    runs it. Its end (SystemExit, or an exception the interpreter prints) leaves through the
    server's own stack, which catches nothing: the child ends as an interpreter does, exit handlers
    and stream flushes included."""
    import io
    import runpy

    os.setpgid(0, 0)  # a group of its own, as a command started from a shell
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        target = os.open(path, flags, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding="utf-8"
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    if request["umask"] >= 0:
        os.umask(request["umask"])
    if request["cwd"]:
        os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["-m", *request["argv"]]
    runpy.run_module("flopscope.tui.cli", run_name="__main__", alter_sys=True)
    raise SystemExit(0)
