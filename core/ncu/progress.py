"""ncu's console stream as events (a kernel profiled, warnings, errors), and errors turned into
fixes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..common.safe_text import display_text

_TAG = re.compile(r"^==(?P<tag>ERROR|WARNING|PROF)== ?")
_TAG_INSIDE = re.compile(r"==(?:ERROR|WARNING|PROF)== ")
# Matched on the line without its tag.
_PROFILING = re.compile(
    r'^Profiling "(?P<name>.*)" - (?P<index>\d+):.*?(?:- (?P<passes>\d+) pass(?:es)?)?\s*$'
)
_PROF_KINDS = (
    ("connected", re.compile(r"^Connected to process (?P<pid>\d+)(?: \((?P<exe>.*)\))?")),
    ("disconnected", re.compile(r"^Disconnected from process (?P<pid>\d+)")),
    ("report", re.compile(r"^Report: (?P<path>.+)$")),
)


@dataclass
class Event:
    # connected, kernel, disconnected, report, prof (other ==PROF== lines), warning, error, output
    kind: str
    # the line without ncu's `==PROF== ` / `==ERROR== ` / `==WARNING== ` tag (ncu.log keeps it)
    text: str
    name: str = ""
    index: int | None = None
    passes: int | None = None


def parse_lines(line: str) -> list[Event]:
    """The events of one line read from ncu's console: usually one. A program's output that did not
    end its line (a progress bar redrawn with `\r`, a block-buffered chunk cut mid-line) has ncu's
    next line glued to it, `epoch 1 50%==PROF== Profiling "gemm" - 3: ...`: that is the program's
    output, then ncu's event."""
    line = line.rstrip("\r\n")
    inside = _TAG_INSIDE.search(line, 1)
    if inside is None:
        return [parse_line(line)]
    return [Event("output", line[: inside.start()]), parse_line(line[inside.start() :])]


def parse_line(line: str) -> Event:
    line = line.rstrip("\r\n")
    tag = _TAG.match(line)
    if tag is None:
        return Event("output", line)
    text = line[tag.end() :]
    if tag.group("tag") != "PROF":
        return Event(tag.group("tag").lower(), text)
    if m := _PROFILING.match(text):
        passes = m.group("passes")
        return Event(
            "kernel",
            text,
            name=m.group("name"),
            index=int(m.group("index")),
            passes=int(passes) if passes else None,
        )
    for kind, pattern in _PROF_KINDS:
        if m := pattern.match(text):
            return Event(
                kind, text, name=m.groupdict().get("exe") or m.groupdict().get("path") or ""
            )
    return Event("prof", text)


def describe(event: Event) -> str:
    """The event as one line for people, the same in the CLI's progress and the app's log: `kernel
    3: gemm (31 passes)`, `ncu error: ...`, the program's own output as it printed it, its control
    characters (colour codes, a clear-screen) as visible escapes: the line is the program's or a
    remote host's text."""
    if event.kind == "kernel":
        passes = f" ({event.passes} passes)" if event.passes else ""
        return display_text(f"kernel {event.index}: {event.name}{passes}")
    if event.kind in ("error", "warning"):
        return display_text(f"ncu {event.kind}: {event.text}")
    return display_text(event.text)


_METRIC = re.compile(r"Failed to find metric (?:regex:)?\^?(?P<name>[\w.]+?)(?:\\\.|\.\(|\$|\s|$)")
_APP_RC = re.compile(r"The application returned an error code \((?P<rc>-?\d+)\)")
# ncu 2025.3.1 (captured on an H100, tests/data/gpu) and 2024.1.1 alike, before it starts anything.
_NO_PROGRAM = re.compile(r"^'.*' does not exist or is not an executable\.")


def explain(errors: list[str], host: str) -> str | None:
    """A fix for the ncu failures users hit most (from ncu's issue trackers), or None."""
    text = "\n".join(errors)
    where = f" on {host}" if host != "localhost" else ""
    if "ERR_NVGPUCTRPERM" in text:
        return (
            f"GPU performance counters are restricted to admin users{where}: run ncu with the"
            " needed privilege (e.g. sudo), or have an admin load the driver with"
            " NVreg_RestrictProfilingToAdminUsers=0"
            " (https://developer.nvidia.com/ERR_NVGPUCTRPERM); inside a container the host must"
            " grant it (e.g. docker --cap-add=SYS_ADMIN)"
        )
    if any(map(_NO_PROGRAM.match, errors)):
        return _program_fix(host)
    if m := _METRIC.search(text):
        return (
            f"metric {m.group('name')} does not exist for this GPU or ncu version{where}; drop it"
            " from --metrics (or use --metrics roofline); `ncu --query-metrics` lists what exists"
        )
    if re.search(
        r"LibraryNotLoaded|compatible driver|failed to connect to the CUDA driver|"
        r"(driver|version)[^\n]*(not supported|incompatible|mismatch|too old|newer)",
        text,
        re.I,
    ):
        return (
            f"ncu and the NVIDIA driver{where} do not match: use the ncu that ships with the"
            " installed CUDA toolkit (--ncu PATH) or update the driver"
        )
    return None


def _program_fix(host: str) -> str:
    """ncu's own advice (an absolute path) leaves out where a relative path starts from: on a remote
    host, the login folder, not the folder flopscope was started in."""
    start = f"the login folder on {host}" if host != "localhost" else "the folder flopscope runs in"
    return (
        f"ncu looks a bare name up on PATH and a relative path up from --remote-cwd (else {start}):"
        " pass the program's absolute path or --remote-cwd, and check that it is executable"
    )


def app_exit_code(errors: list[str]) -> int | None:
    for line in errors:
        if m := _APP_RC.search(line):
            return int(m.group("rc"))
    return None
