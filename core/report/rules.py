"""ncu's rule results for one launch: the findings of its guided analysis (OPT, WRN, INF messages,
each with the speedup ncu estimates), read from the report file when a view asks, or why there are
none, in words.

Rules run where ncu collects sections (`--set full`, `--section NAME`): a report of `--metrics`
alone (every metric set of flopscope's but `full`) holds none. They are read lazily, one launch at a
time, never into the kernels table: `.ncu-rep` by `readers/ncu_rep_rules.py`, ncu's details CSV by
`readers/csv_rules.py`, a compressed file as it unpacks. The messages are text from the report:
views pass them through `display_text`."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import math
import re
import stat
import zlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from ..readers.csv_rules import NoRuleColumns, csv_launch_rules
from ..readers.ncu_rep_rules import METRICS_ONLY_SECTION, LaunchRules, RawFinding, launch_rules
from ..readers.ncu_rep_stream import MAGIC, Damaged, Unsupported

# What to run for a report that has none (`flopscope profile --metrics full` is ncu's `--set full`).
COLLECT = "profile with ncu's sections (`flopscope profile --metrics full`, or ncu `--set full`)"
_METRICS_ALONE = (
    "ncu applies its rules only to sections, and this launch was profiled with metrics alone (ncu"
    f" --metrics, as flopscope's roofline, flops and memory sets do); {COLLECT}"
)
NO_SECTIONS = f"none: {_METRICS_ALONE}"


@dataclass(frozen=True)
class Finding:
    """One rule message. `speedup_pct`: ncu's estimate, in %; `speedup_type` `global` (of the
    kernel's run time) or `local` (of one unit's efficiency in isolation, not of the run time); both
    None without one."""

    kind: str  # OPT, WRN, INF or ERR, as ncu's console prints it; empty where ncu gives none
    rule: str  # ncu's rule identifier (`SOLBottleneck`)
    name: str  # its display name (`Bottleneck`); a CSV has only the identifier
    # ncu's text, its section and URL links as ncu's console prints them, whitespace as spaces
    message: str
    speedup_pct: float | None
    speedup_type: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LaunchFindings:
    """The findings for launch `launch_id` of `source`, largest estimated speedup first
    (`by_speedup`); `reason` says why there are none where there are none."""

    source: str
    launch_id: int | None
    findings: tuple[Finding, ...] = ()
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "launch_id": self.launch_id,
            "findings": [f.as_dict() for f in self.findings],
            "reason": self.reason,
        }


def read_rule_results(
    path: str | Path, launch_id: int | None, kernel_full: str | None = None
) -> LaunchFindings:
    """ncu's findings for launch `launch_id` (as the kernels table numbers launches) of the report
    at `path`. `kernel_full`: the launch's name as it was read, to notice a file that changed since.
    Never raises for a file that holds none or cannot be read again: `reason` says why in words."""
    source = str(path)

    def none(reason: str) -> LaunchFindings:
        return LaunchFindings(source, launch_id, (), reason)

    if launch_id is None:
        return none("none: the row names no launch of a report")
    if source == "-":
        return none(
            "not kept: the report was read from standard input; open the file itself to see them"
        )
    path = Path(path)
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            return none(
                "not kept: the report was read from a pipe; open the file itself to see them"
            )
        with path.open("rb") as raw:
            head = raw.read(4)
            raw.seek(0)
            opener = _opener(head)
            handle = opener(raw) if opener else raw
            with handle:
                if (_peek(handle) if opener else head) == MAGIC:
                    return _from_ncu_rep(source, launch_id, kernel_full, handle)
                # Windows PowerShell's `>` writes UTF-16 with a byte-order mark; ncu itself writes
                # UTF-8
                utf16 = head[:2] in (b"\xff\xfe", b"\xfe\xff") and not opener
                text = io.TextIOWrapper(
                    handle, encoding="utf-16" if utf16 else "utf-8", errors="replace", newline=""
                )
                return _from_csv(source, launch_id, kernel_full, text)
    except FileNotFoundError:
        return none(f"not read: the report file is no longer at {source}")
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        return none(f"not read: {getattr(exc, 'strerror', None) or exc}")


def by_speedup(findings: list[Finding] | tuple[Finding, ...]) -> list[Finding]:
    """Global estimates first, largest first (the run time a fix could save), then local ones (a
    unit's efficiency, not comparable with the run time), then messages without an estimate: OPT,
    WRN, ERR, INF, and those ncu gives no kind; file order among equals."""
    order = {"OPT": 0, "WRN": 1, "ERR": 2, "INF": 3}

    def key(f: Finding) -> tuple[int, float, int]:
        tier = (
            {"global": 0, "local": 1}.get(f.speedup_type or "", 2)
            if f.speedup_pct is not None
            else 2
        )
        return (tier, -(f.speedup_pct or 0.0), order.get(f.kind, 4))

    return sorted(findings, key=key)


_SECTION_LINK = re.compile(r"@section:[^:@]*:([^@]*)@")
_URL_LINK = re.compile(r"@url:([^:@]*):([^@]*)@")


def plain_message(text: str) -> str:
    """ncu's rule text as its console prints it: `@section:ID:Launch Statistics@` -> `Launch
    Statistics`, `@url:fused:https://...@` -> `fused (https://...)`; runs of whitespace (line breaks
    too) as one space."""
    text = _SECTION_LINK.sub(r"\1", text)
    text = _URL_LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    return " ".join(text.split())


def _from_ncu_rep(
    source: str, launch_id: int, kernel_full: str | None, handle: BinaryIO
) -> LaunchFindings:
    try:
        launch = launch_rules(handle, launch_id)
    except Unsupported as why:
        return LaunchFindings(
            source, launch_id, (), f"not read: flopscope's report reader does not read {why}"
        )
    except Damaged as why:
        return LaunchFindings(source, launch_id, (), f"not read: the report is damaged ({why})")
    if launch is None:
        return LaunchFindings(
            source, launch_id, (), f"not read: the report has no launch {launch_id} (changed?)"
        )
    if kernel_full and kernel_full not in (launch.kernel_full, launch.function):
        return LaunchFindings(source, launch_id, (), _changed(launch_id))
    findings = tuple(by_speedup([_finding(f) for f in launch.findings]))
    return LaunchFindings(source, launch_id, findings, None if findings else _why_none(launch))


def _from_csv(
    source: str, launch_id: int, kernel_full: str | None, lines: Iterable[str]
) -> LaunchFindings:
    try:
        found = csv_launch_rules(lines, launch_id)
    except csv.Error as exc:
        return LaunchFindings(source, launch_id, (), f"not read: a malformed CSV ({exc})")
    except NoRuleColumns:
        return LaunchFindings(
            source,
            launch_id,
            (),
            "none in this file: ncu prints rule results on its details page (`ncu --import"
            " R.ncu-rep --csv --page details`) and keeps them in the .ncu-rep",
        )
    if found is None:
        return LaunchFindings(
            source, launch_id, (), f"not read: the file has no launch {launch_id} (changed?)"
        )
    name, raw = found
    if kernel_full and name and name != kernel_full:
        return LaunchFindings(source, launch_id, (), _changed(launch_id))
    findings = tuple(by_speedup([_finding(f) for f in raw]))
    reason = (
        None
        if findings
        else f"none: ncu printed no rule results for this launch ({_METRICS_ALONE})"
    )
    return LaunchFindings(source, launch_id, findings, reason)


def _why_none(launch: LaunchRules) -> str:
    if not [s for s in launch.sections if s != METRICS_ONLY_SECTION]:
        return NO_SECTIONS
    if not launch.rules_run:
        return (
            "none: ncu ran this launch's sections without rules (`--apply-rules no`, or sections"
            " that have none); " + COLLECT
        )
    return f"none: ncu's rules ran on this launch ({launch.rules_run}) and reported nothing"


def _changed(launch_id: int) -> str:
    return (
        f"not read: launch {launch_id} of the file is another kernel now (the file changed since it"
        " was read)"
    )


def _finding(raw: RawFinding) -> Finding:
    speedup = raw.speedup if raw.speedup is not None and math.isfinite(raw.speedup) else None
    return Finding(
        kind=raw.kind,
        rule=raw.rule,
        name=raw.name,
        message=plain_message(raw.message),
        speedup_pct=speedup,
        speedup_type=raw.speedup_type if speedup is not None else None,
    )


def _opener(head: bytes) -> Callable[[BinaryIO], BinaryIO] | None:
    """The stdlib opener for a gzip, xz or bzip2 file (by magic bytes), which also takes an open
    file, or None."""
    for magic, opener in ((b"\x1f\x8b", gzip.open), (b"\xfd7zX", lzma.open), (b"BZh", bz2.open)):
        if head.startswith(magic):
            # its GzipFile, LZMAFile or BZ2File reads as a binary file does (typeshed derives them
            # from io.BufferedIOBase, not typing.BinaryIO)
            return cast("Callable[[BinaryIO], BinaryIO]", opener)
    return None


def _peek(handle: BinaryIO) -> bytes:
    """The first 4 bytes of a decompressing stream, which is then back at its start."""
    head = handle.read(4)
    handle.seek(0)
    return head
