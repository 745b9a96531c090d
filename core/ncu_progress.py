"""ncu's console stream as events (a kernel profiled, warnings, errors), and errors turned into fixes."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PROFILING = re.compile(
    r'^==PROF== Profiling "(?P<name>.*)" - (?P<index>\d+):.*?(?:- (?P<passes>\d+) pass(?:es)?)?\s*$')
_CONNECTED = re.compile(r"^==PROF== Connected to process (?P<pid>\d+)(?: \((?P<exe>.*)\))?")
_DISCONNECTED = re.compile(r"^==PROF== Disconnected from process (?P<pid>\d+)")
_REPORT = re.compile(r"^==PROF== Report: (?P<path>.+)$")
_TAGGED = re.compile(r"^==(?P<tag>ERROR|WARNING|PROF)== ?(?P<text>.*)$")


@dataclass
class Event:
    kind: str  # connected, kernel, disconnected, report, warning, error, output
    text: str
    name: str = ""
    index: int | None = None
    passes: int | None = None


def parse_line(line: str) -> Event:
    line = line.rstrip("\r\n")
    if m := _PROFILING.match(line):
        passes = m.group("passes")
        return Event("kernel", line, name=m.group("name"), index=int(m.group("index")),
                     passes=int(passes) if passes else None)
    for kind, pattern in (("connected", _CONNECTED), ("disconnected", _DISCONNECTED), ("report", _REPORT)):
        if m := pattern.match(line):
            return Event(kind, line, name=m.groupdict().get("exe") or m.groupdict().get("path") or "")
    if m := _TAGGED.match(line):
        return Event("error" if m.group("tag") == "ERROR" else "warning" if m.group("tag") == "WARNING" else "prof",
                     m.group("text"))
    return Event("output", line)


_METRIC = re.compile(r"Failed to find metric (?:regex:)?\^?(?P<name>[\w.]+?)(?:\\\.|\.\(|\$|\s|$)")
_APP_RC = re.compile(r"The application returned an error code \((?P<rc>-?\d+)\)")


def explain(errors: list[str], host: str) -> str | None:
    """A fix for the ncu failures users hit most (from ncu's issue trackers), or None."""
    text = "\n".join(errors)
    where = f" on {host}" if host != "localhost" else ""
    if "ERR_NVGPUCTRPERM" in text:
        return (f"GPU performance counters are restricted to admin users{where}: run ncu with the needed privilege "
                "(e.g. sudo), or have an admin load the driver with NVreg_RestrictProfilingToAdminUsers=0 "
                "(https://developer.nvidia.com/ERR_NVGPUCTRPERM); inside a container the host must grant it "
                "(e.g. docker --cap-add=SYS_ADMIN)")
    if m := _METRIC.search(text):
        return (f"metric {m.group('name')} does not exist for this GPU or ncu version{where}; "
                "drop it from --metrics (or use --metrics roofline); `ncu --query-metrics` lists what exists")
    if re.search(r"LibraryNotLoaded|compatible driver|failed to connect to the CUDA driver|"
                 r"(driver|version)[^\n]*(not supported|incompatible|mismatch|too old|newer)", text, re.I):
        return (f"ncu and the NVIDIA driver{where} do not match: use the ncu that ships with the installed CUDA "
                "toolkit (--ncu PATH) or update the driver")
    return None


def app_exit_code(errors: list[str]) -> int | None:
    for line in errors:
        if m := _APP_RC.search(line):
            return int(m.group("rc"))
    return None
