"""The output cache: what `report FILE` (and `open` or `demo` into a pipe) printed, printed again
while nothing it read has changed.

A small report's command is almost all start-up: importing pandas alone takes about as long as ncu's
own `--import` of the file. The same command on the same file prints the same bytes, so a repeat is
answered by the entry process before anything heavy loads (entry.py): it finds the entry, checks
what the first run read, and writes the output again, stdout and stderr in their order.

An entry is named by a digest of everything that shapes the output besides the files read: the
arguments, the folder, the environment (less what changes with each login), whether each standard
stream is a terminal and its size, the interpreter with its installed packages (the folders on
sys.path), and flopscope's own files (sizes and modification times). It holds what the first run
read, as Python's audit hooks saw it open files and list folders, with each file's folder: their
stat() when the run ended. A file changed, removed, or added beside one makes the entry stale.

Not kept: a run that wrote a file other than temporary and cache files, opened a database (the run
store), had native code write to stderr, failed (exit status not 0), read a file that changed while
it ran, or printed more than MAX_BYTES. `--no-cache` (FLOPSCOPE_NO_CACHE=1) neither reads nor keeps
an entry, nor does FLOPSCOPE_NO_OUTPUT_CACHE=1 (the table cache still works). Entries live in the
table cache's folder, evicted with its entries."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

FORMAT = 2
MAX_BYTES = 16 << 20  # a longer output is cheap to print again relative to its making
SUFFIX = ".out.json"
# Variables that change with each login or shell and that nothing flopscope prints depends on.
SESSION_ONLY = frozenset(
    {
        "_",
        "OLDPWD",
        "SHLVL",
        "SSH_AUTH_SOCK",
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_TTY",
        "TMUX_PANE",
        "WINDOWID",
        "XDG_SESSION_ID",
    }
)
# What the entry process answers from an entry: the commands that print a report.
COMMANDS = ("report", "open", "demo")
# Raised by native code's stderr passed on outside Python's streams (readers/ncu_rep.py): output
# this module cannot record.
NATIVE_STDERR_EVENT = "flopscope.native_stderr"
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


OFF_ENV = "FLOPSCOPE_NO_OUTPUT_CACHE"  # this cache only (the table cache stays): benchmarks


def enabled() -> bool:
    from ...core.common.home import caches_enabled

    return caches_enabled() and os.environ.get(OFF_ENV, "") in ("", "0")


def replayed(argv: list[str]) -> int | None:
    """Print what an entry for this command holds and return its exit status; None where there is
    no current entry (the command then runs)."""
    if not enabled() or not argv or "--no-cache" in argv:
        return None
    if argv[0] not in COMMANDS and not (argv[0] != "-" and os.path.isfile(argv[0])):
        return None
    try:
        entry = _entry_path(argv)
        with open(entry, encoding="utf-8") as handle:
            stored = json.load(handle)
        if stored.get("entry") != entry.name or stored.get("format") != FORMAT:
            return None
        if any(_stat(path) != info for path, info in stored["read"]):
            return None
    except Exception:  # absent, damaged or stale: the command runs
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # most recently used, for the cache's eviction
    return _written(stored["output"], int(stored["status"]))


def _written(output: list[list[Any]], status: int) -> int:
    streams = {1: sys.stdout, 2: sys.stderr}
    try:
        for fd, kind, text in output:
            stream = streams[fd]
            if kind == "b":
                stream.flush()
                stream.buffer.write(text.encode("utf-8", "surrogateescape"))
                stream.buffer.flush()
            else:
                stream.write(text)
                stream.flush()
    except BrokenPipeError:  # `| head`: as the command itself ends
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return 0
    except KeyboardInterrupt:  # Ctrl-C while a long output scrolls: as the command says it
        sys.stderr.write("\nflopscope: stopped\n")
        return 130
    return status


def _entry_path(argv: list[str]) -> Path:
    from ...core.common.home import home_folder

    return home_folder() / "cache" / f"{_key(argv)}{SUFFIX}"


def _key(argv: list[str]) -> str:
    parts = {
        "format": FORMAT,
        "argv": argv,
        "cwd": os.getcwd(),
        "env": sorted((k, v) for k, v in os.environ.items() if k not in SESSION_ONLY),
        "streams": [_stream(fd) for fd in (0, 1, 2)],
        # installing a package changes its folder's modification time (sys.path[0]: the script's
        # folder, or the working one under `python -m`)
        "python": [
            sys.executable,
            sys.version,
            sys.path[:1],
            [[p, _stat(p)] for p in sys.path[1:]],
        ],
        "code": _code_files(),
    }
    text = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _stream(fd: int) -> list[Any]:
    """Whether a standard stream is a terminal, and its size (what rich lays a table out for)."""
    try:
        if not os.isatty(fd):
            return [False]
        size = os.get_terminal_size(fd)
    except OSError:
        return [None]
    return [True, size.columns, size.lines]


def _stat(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _code_folders() -> list[str]:
    """flopscope's own folders (core/ and tui/ may lie apart: the package-dir remap)."""
    tui = Path(__file__).resolve().parents[1]
    core = tui.parent / "core"
    if not core.is_dir():  # a working copy installed editable maps flopscope.core elsewhere
        import importlib.util

        spec = importlib.util.find_spec("flopscope.core")
        core = Path(next(iter(spec.submodule_search_locations or [])) if spec else core)
    return [str(tui), str(core.resolve())]


def _code_files() -> list[list[Any]]:
    """Every file of flopscope's code and data, with its size and modification time."""
    found: list[list[Any]] = []
    pending = _code_folders()
    while pending:
        with os.scandir(pending.pop()) as items:
            for item in items:
                if item.is_dir(follow_symlinks=False):
                    if item.name != "__pycache__":
                        pending.append(item.path)
                    continue
                info = item.stat()
                found.append([item.path, info.st_size, info.st_mtime_ns])
    return sorted(found)


class _Recorder:
    """What a run printed, in order, and what it read, from Python's audit events."""

    def __init__(self, cache: Path, argv: list[str]) -> None:
        self.output: list[list[Any]] = []
        self.size = 0
        self.keep = True
        self.read: dict[str, list[int] | None] = {}  # a file -> its stat() when first opened
        self.folders: set[str] = set()
        self.active = True
        folders = [*_code_folders(), str(cache), sys.prefix, sys.base_prefix, sys.exec_prefix]
        # flopscope's code (the key has it), the cache's own entries, the libraries, the kernel's
        self._skip = (
            *{os.path.join(os.path.abspath(f), "") for f in folders},
            "/proc/",
            "/dev/",
            "/sys/",
        )
        self._scratch = os.path.abspath(tempfile.gettempdir()) + os.sep
        for arg in argv:  # the report named, wherever it lies (a scratch folder included)
            if os.path.isfile(arg):
                self._add(os.path.abspath(arg))

    def printed(self, fd: int, kind: str, text: str) -> None:
        """`text` written to stream `fd`: as text ("t"), or bytes to its buffer ("b")."""
        if not self.keep:
            return
        self.size += len(text)
        if self.size > MAX_BYTES:
            self.keep, self.output = False, []
            return
        self.output.append([fd, kind, text])

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            self._opened(args[0], args[1], args[2])
        elif event in ("os.listdir", "os.scandir"):
            self._listed(args[0])
        elif event in ("sqlite3.connect", NATIVE_STDERR_EVENT):
            self.keep = False

    def _opened(self, path: Any, mode: str | None, flags: int) -> None:
        if isinstance(path, int):
            return
        where = os.path.abspath(os.fsdecode(path))
        if where.startswith(self._skip) or where.startswith(self._scratch):
            return
        if (mode and any(c in mode for c in "wax+")) or flags & _WRITES:
            self.keep = False
            return
        self._add(where)

    def _add(self, path: str) -> None:
        if path not in self.read:
            self.read[path] = _stat(path)
            self.folders.add(os.path.dirname(path))

    def _listed(self, path: Any) -> None:
        if path is None or isinstance(path, int):
            path = "."
        where = os.path.abspath(os.fsdecode(path))
        if not os.path.join(where, "").startswith(self._skip):
            self.folders.add(where)

    def reads_now(self) -> list[list[Any]] | None:
        """What the run read with its stat() now; None if a file changed while it ran."""
        now = []
        for path, first in self.read.items():
            info = _stat(path)
            if info != first:
                return None
            now.append([path, info])
        return [*now, *([folder, _stat(folder)] for folder in sorted(self.folders))]


class _Tee(io.TextIOBase):
    """A standard stream that also hands what is written to the recorder: text, and bytes written to
    its buffer (the JSON writer's)."""

    def __init__(self, stream: TextIO, fd: int, recorder: _Recorder) -> None:
        self._stream, self._fd, self._recorder = stream, fd, recorder
        raw = getattr(stream, "buffer", None)
        self._buffer = None if raw is None else _TeeBytes(raw, fd, recorder)

    def write(self, text: str) -> int:
        self._recorder.printed(self._fd, "t", text)
        return self._stream.write(text)

    @property
    def buffer(self) -> Any:
        if self._buffer is None:
            raise AttributeError("buffer")
        return self._buffer

    @property
    def unrecorded(self) -> TextIO:
        """The stream itself, for what is drawn and erased (a read's progress line)."""
        return self._stream

    # io.TextIOBase's own answers would hide the stream's
    @property  # read-only here: the stream's own
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._stream.errors

    @property
    def closed(self) -> bool:
        return self._stream.closed

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def flush(self) -> None:
        self._stream.flush()

    def writable(self) -> bool:
        return True

    def close(self) -> None:  # the stream is the interpreter's, not this wrapper's
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _TeeBytes:
    def __init__(self, raw: Any, fd: int, recorder: _Recorder) -> None:
        self._raw, self._fd, self._recorder = raw, fd, recorder

    def write(self, data: bytes | memoryview) -> int:
        self._recorder.printed(self._fd, "b", bytes(data).decode("utf-8", "surrogateescape"))
        return int(self._raw.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def unrecorded(stream: TextIO) -> TextIO:
    """`stream` with nothing written to it recorded: a progress line is not output."""
    return getattr(stream, "unrecorded", stream)


def run_recorded(argv: list[str], wanted: bool, run: Callable[[], int]) -> int:
    """`run()`'s exit status. Where `wanted` (a command whose output depends only on what it reads)
    and the run qualifies (see the module's docstring), what it printed is kept for `replayed`."""
    if not (wanted and enabled()):
        return run()
    try:
        entry = _entry_path(argv)
    except Exception:  # no data home: nothing kept
        return run()
    recorder = _Recorder(entry.parent, argv)
    sys.addaudithook(recorder.audit)  # a hook cannot be removed: `active` ends it
    saved = sys.stdout, sys.stderr
    sys.stdout = _Tee(sys.stdout, 1, recorder)
    sys.stderr = _Tee(sys.stderr, 2, recorder)
    try:
        status = run()
    finally:
        recorder.active = False
        sys.stdout, sys.stderr = saved
    if status == 0 and recorder.keep:
        _save(entry, recorder)
    return status


def _save(entry: Path, recorder: _Recorder) -> None:
    """Store the entry atomically (a temporary file renamed into place); on any failure, none."""
    read = recorder.reads_now()
    if read is None:
        return
    doc = {
        "entry": entry.name,
        "format": FORMAT,
        "status": 0,
        "read": read,
        "output": recorder.output,
    }
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", dir=entry.parent, prefix=".tmp-", suffix=SUFFIX, delete=False, encoding="utf-8"
        ) as tmp:
            json.dump(doc, tmp)
        os.replace(tmp.name, entry)
        from ...core.readers.table_cache import evict  # imported by the run already

        evict(entry.parent)  # the cache's size cap holds for both kinds of entry
    except Exception:  # a read-only or full disk: the output was printed, only not kept
        if "tmp" in locals():
            Path(tmp.name).unlink(missing_ok=True)
