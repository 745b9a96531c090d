"""One launch's source page of an `.ncu-rep`, read on demand (the Kernel screen's `v`, `report
--source`): per SASS instruction its address, text, the instructions executed there, the warp
samples ncu took there (all, and those of warps not issuing) by stall reason, and the CUDA file and
line where the report resolves them.

ncu fills this page with its SourceCounters section (`--set full`, or `--section SourceCounters`);
PC sampling gives the samples, `-lineinfo` at compile time the CUDA lines. Read with NVIDIA's
ncu_report, which loads a report from a path: a compressed report is unpacked to a temporary file
first, as the readers do."""

from __future__ import annotations

import io
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..common.errors import FlopscopeError
from .junk import Watch, watch_for
from .limits import too_big, unpack_limit, write_copy

# What collects the page, in the words of ncu's options (a report without it says so).
COLLECT = (
    "profile with ncu's SourceCounters section (`flopscope profile --metrics full`, or ncu `--set"
    " full` or `--section SourceCounters`); for CUDA lines too, compile with `-lineinfo` (and ncu"
    " `--import-source yes` to embed the files)"
)
EXECUTED = "inst_executed"  # warp-level instructions executed, per SASS address
STALL = re.compile(r"^smsp__pcsamp_warps_issue_stalled_(\w+?)(_not_issued)?$")
# a branch target's label (`BRA `(.L_x_0) 0x...`): ncu prints the address alone
LABEL = re.compile(r"`\([^)]*\) ")


@dataclass(frozen=True)
class SourceLine:
    address: int
    sass: str
    executed: int | None  # warp-level instructions executed at this address (None: not collected)
    # warp samples taken at it, over every stall reason (ncu's "Warp Stall Sampling (All)")
    samples: int
    not_issued: int  # of them, samples of warps that did not issue (ncu's "(Not-issued Samples)")
    stalls: dict[str, int] = field(default_factory=dict)  # reason -> samples, those above zero
    file: str = ""  # the CUDA file, where the report resolves the address
    line: int | None = None

    @property
    def top_stall(self) -> str:
        """The reason most samples here stalled on, `selected` (the issue itself) aside."""
        stalls = {r: n for r, n in self.stalls.items() if r != "selected"}
        return max(stalls, key=lambda r: stalls[r]) if stalls else ""


@dataclass(frozen=True)
class SourcePage:
    launch_id: int
    kernel: str
    lines: tuple[SourceLine, ...] = ()  # in address order
    reason: str = ""  # why there are none, in words
    # CUDA file -> its text, where the report embeds it
    files: dict[str, str] = field(default_factory=dict)

    @property
    def samples(self) -> int:
        return sum(line.samples for line in self.lines)

    def hottest(self, top: int | None = None) -> list[SourceLine]:
        """The lines by samples, most first (then by instructions executed, then address)."""
        ranked = sorted(self.lines, key=lambda s: (-s.samples, -(s.executed or 0), s.address))
        return ranked[:top] if top is not None else ranked


def read_source(path: str | Path, launch_id: int) -> SourcePage:
    """The source page of launch `launch_id` (0-based, in file order, as the readers number
    launches)."""
    import ncu_report

    with plain_report(Path(path)) as plain:
        try:
            context = ncu_report.load_report(str(plain))
        except Exception as exc:  # ncu_report raises its own kinds for a file it cannot load
            raise FlopscopeError(
                path, f"ncu_report could not load it ({str(exc)[:120]})", "pass an .ncu-rep"
            ) from None
        action = _action(context, launch_id)
        if action is None:
            raise FlopscopeError(
                path,
                f"has no launch {launch_id}",
                "pass a launch ID that `report --by launch` lists",
            )
        return _page(action, launch_id)


def _action(context: Any, launch_id: int) -> Any:
    index = 0
    for r in range(context.num_ranges()):
        launches = context.range_by_idx(r)
        if launch_id < index + launches.num_actions():
            return launches.action_by_idx(launch_id - index)
        index += launches.num_actions()
    return None


def _page(action: Any, launch_id: int) -> SourcePage:
    kernel = str(action.name())
    executed = _per_address(action, EXECUTED)
    samples: dict[int, dict[str, int]] = {}
    not_issued: dict[int, int] = {}
    for name in action.metric_names():
        match = STALL.match(name)
        if not match:
            continue
        for address, value in _per_address(action, name).items():
            if match.group(2):
                not_issued[address] = not_issued.get(address, 0) + value
            elif value:
                samples.setdefault(address, {})[match.group(1)] = value
    addresses = sorted({*executed, *samples})
    if not addresses:
        return SourcePage(launch_id, kernel, reason=f"no source counters in this launch: {COLLECT}")
    # An address sampled but never counted as executed ran no instruction to completion there: 0, as
    # ncu prints.
    counted = (lambda a: executed.get(a, 0)) if executed else (lambda a: None)
    lines = tuple(
        _line(action, a, counted(a), samples.get(a, {}), not_issued.get(a, 0)) for a in addresses
    )
    return SourcePage(launch_id, kernel, lines, files=_files(action))


def _line(
    action: Any, address: int, executed: int | None, stalls: dict[str, int], not_issued: int
) -> SourceLine:
    info = action.source_info(address)
    return SourceLine(
        address=address,
        sass=LABEL.sub("", str(action.sass_by_pc(address) or "")).strip(),
        executed=executed,
        samples=sum(stalls.values()),
        not_issued=not_issued,
        stalls=stalls,
        file=str(info.file_name()) if info is not None else "",
        line=int(info.line()) if info is not None else None,
    )


def _per_address(action: Any, name: str) -> dict[int, int]:
    """An instanced metric as {SASS address: value}: ncu keys source counters by address."""
    metric = action.metric_by_name(name)
    if metric is None or not metric.has_correlation_ids():
        return {}
    ids = metric.correlation_ids()
    return {int(ids.as_uint64(i)): int(metric.as_uint64(i)) for i in range(metric.num_instances())}


def _files(action: Any) -> dict[str, str]:
    files = action.source_files()
    return {str(name): str(files[name]) for name in files} if files is not None else {}


@contextmanager
def plain_report(path: Path) -> Iterator[Path]:
    """`path`, or for a gzip/xz/bzip2 report a temporary unpacked copy of it (removed after)."""
    from . import _compressed  # the readers' own choice of format by magic bytes

    with path.open("rb") as handle:
        chosen = _compressed(handle.read(6))
    if chosen is None:
        yield path
        return
    cap = unpack_limit(path.stat().st_size)
    with tempfile.TemporaryDirectory(prefix="flopscope-source-") as folder:
        copy = Path(folder) / "report.ncu-rep"
        # The readers' caps and checks (junk.py, limits.py): stopped at the cap or where junk
        # starts, not after it, so a bomb fills no disk; a full disk is worded as the temporary
        # folder's.
        watch: Watch | None = None
        with chosen(path, "rb") as src, io.FileIO(copy, "wb") as dst:
            copied = 0
            while chunk := src.read(1 << 20):
                watch = watch or watch_for(chunk, path, "of what it unpacks to")
                watch.feed(chunk, copied)
                copied += len(chunk)
                if copied > cap:
                    raise too_big(path, cap, compressed=True)
                write_copy(dst, chunk, path, Path(folder).parent, unpacking=True)
        yield copy
