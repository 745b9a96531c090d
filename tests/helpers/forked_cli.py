"""The `flopscope` CLI as a child forked from a warm process, for the tests: what `python -m
flopscope.tui.cli` does, without starting an interpreter and importing pandas, numpy, pyarrow, rich
and the others again for every command (the suite runs well over a thousand).

One server process per test process imports those libraries, never flopscope, and forks a child per
command. torch (with what its FLOP counter imports on its first count), which only `model`'s
commands need, is another server's: torch is slow to import,
and a command forked from a process that has it can be slower to end (its interpreter finalises
torch's modules). `model` runs there, and so does any other command once its first run has imported
torch (noted as it went to import it); a test process that runs none never starts it. Each child
takes the command's environment, folder, umask, standard streams and arguments and runs the
`flopscope.tui.cli` module as `-m` would. The server has imported the flopscope modules that reading
and printing a report takes (FLOPSCOPE_PRELOADED: the CLI's entry, the engine's stages, the text
report), never Textual or torch: flopscope reads its environment and home when a command runs, not
when a module is imported, so a command forked after those imports runs as one that made them.
Only what the interpreter decides at its start cannot differ from the server's (its PYTHON*/LD_*
variables, its locale): `cli.run_cli` starts a real interpreter for those commands, for commands run
under another program, and for streams other than /dev/null in and captured out."""

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
# What flopscope's commands import besides flopscope itself (the standard library's slower modules
# among them); a missing optional one is skipped.
# fmt: off
PRELOADED = (
    "pandas", "numpy", "pyarrow", "pyarrow.csv", "pyarrow.parquet", "pyarrow.dataset",
    "pyarrow.json", "rich.console", "rich.table", "google.protobuf.message",
    "google.protobuf.descriptor_pb2", "platformdirs", "sqlite3", "argparse", "difflib", "gettext",
    "termios",
)
# flopscope's modules a report's read and print imports (in the worker `tui/cli/watcher.py` forks),
# which most of the suite's commands do: imported once, not once a command.
FLOPSCOPE_PRELOADED = (
    "flopscope.tui.cli.main", "flopscope.tui.cli.view", "flopscope.tui.cli.export",
    "flopscope.tui.cli.runs", "flopscope.core.readers", "flopscope.core.table",
    "flopscope.core.report", "flopscope.core.export", "flopscope.core.store",
    "flopscope.tui.presentation.text_report",
)
# fmt: on
# Imported by the second server only, which runs the commands that imported them
# (`_NoteLazyImports`).
LAZY = ("torch",)
# What the FLOP counter's first count imports besides (sympy, torch.distributed, torch.onnx: ~1 s a
# command); the second server imports it too, so each `model` command does not.
WITH_LAZY = ("torch._dynamo",)


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
    def __init__(self, lazy: bool) -> None:
        code = f"from tests.helpers.forked_cli import serve; serve(lazy={lazy})"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
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


# The servers, without and with the LAZY modules; the commands (first argument) that imported them.
_servers: dict[bool, _Server] = {}
_lazy_commands: set[str] = {"model"}  # flopscope's FLOP counter runs the model in torch


def _server(lazy: bool) -> _Server:
    if lazy not in _servers or _servers[lazy].process.poll() is not None:
        _servers[lazy] = _Server(lazy)
    return _servers[lazy]


def run(
    argv: list[str], env: Mapping[str, str], cwd: str | None, umask: int, timeout: float
) -> subprocess.CompletedProcess:
    """`python -m flopscope.tui.cli ARGV` as a forked child: stdin /dev/null, stdout and stderr
    captured. `preloaded` on the result: the LAZY modules the command found imported."""
    command = argv[0] if argv else ""
    with tempfile.TemporaryDirectory(prefix="flopscope-cli-") as folder:
        out, err, note = (Path(folder, name) for name in ("stdout", "stderr", "imported"))
        request = {"argv": argv, "env": dict(env), "cwd": cwd, "umask": umask, "timeout": timeout}
        streams = {"stdout": str(out), "stderr": str(err), "imported": str(note)}
        answer = _server(command in _lazy_commands).run({**request, **streams})
        stdout, stderr = _text(out.read_bytes()), _text(err.read_bytes())
        if note.exists():
            _lazy_commands.add(command)
    args = [sys.executable, "-m", "flopscope.tui.cli", *argv]
    if answer["timed_out"]:
        raise subprocess.TimeoutExpired(args, timeout, stdout, stderr)
    done = subprocess.CompletedProcess(args, answer["returncode"], stdout, stderr)
    done.preloaded = answer["had"]  # type: ignore[attr-defined]
    return done


def _text(data: bytes) -> str:
    """As `subprocess.run(text=True)` reads a stream: the locale's encoding, strict, newlines
    translated."""
    import locale

    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def serve(lazy: bool) -> None:
    """The server: import the libraries (and the LAZY ones: `lazy`), then one forked child per
    request line; answer its exit status."""
    import importlib

    for name in (*PRELOADED, *((*LAZY, *WITH_LAZY) if lazy else ())):
        with contextlib.suppress(ImportError):  # torch is optional
            importlib.import_module(name)
    for name in FLOPSCOPE_PRELOADED:
        importlib.import_module(name)
    assert "textual" not in sys.modules, "a command would find Textual imported"
    for line in sys.stdin:
        print(json.dumps(_fork_one(json.loads(line))), flush=True)


def _fork_one(request: dict) -> dict:
    import signal

    had = [name for name in LAZY if name in sys.modules]  # what the child starts with
    pid = os.fork()
    if pid == 0:
        _child(request)
    if not _ended_within(pid, request["timeout"]):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return {"returncode": -signal.SIGKILL, "timed_out": True, "had": had}
    _, status = os.waitpid(pid, 0)
    return {"returncode": _returncode(status), "timed_out": False, "had": had}


def _ended_within(pid: int, timeout: float) -> bool:
    """Whether the child `pid` ends within `timeout` seconds: woken by its end (a pidfd), not by
    polling its status."""
    import select

    pidfd = os.pidfd_open(pid)
    try:
        readable, _, _ = select.select([pidfd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(pidfd)


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
    sys.meta_path.insert(0, _NoteLazyImports(request["imported"]))
    if request["umask"] >= 0:
        os.umask(request["umask"])
    if request["cwd"]:
        os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["-m", *request["argv"]]
    runpy.run_module("flopscope.tui.cli", run_name="__main__", alter_sys=True)
    raise SystemExit(0)


class _NoteLazyImports:
    """A meta path finder that finds nothing: it notes each LAZY module the command (or the worker
    it forks: flopscope works in a forked child) goes to import, for `run`."""

    def __init__(self, note: str) -> None:
        self.note = note

    def find_spec(self, name: str, path=None, target=None) -> None:
        if name in LAZY:
            with contextlib.suppress(OSError), open(self.note, "a", encoding="utf-8") as out:
                out.write(name + "\n")
