"""ncu's rule results of one launch of an `.ncu-rep`, read on demand (the kernel screen, `report` of
one row).

The findings of ncu's guided analysis (OPT/WRN/INF messages, estimated speedups) are field 19 of a
launch's ProfileResult (`RuleResults.proto`). They are never part of the kernels table: a view asks
for the launch it shows, and only that launch's message is parsed. The file is read front to back
through any file object (plain, or a gzip/xz/bzip2 stream, without a temporary copy): block headers
and lengths are read, every other launch and all SASS are skipped unparsed, and the read stops at
the launch asked for."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, Literal, overload

from .ncu_rep_stream import MAGIC, VERIFIED_VERSIONS, Damaged, Unsupported, _text, message_classes

if TYPE_CHECKING:
    from google.protobuf.message import Message

# RuleResultMessageType (RuleResults.proto) in the words ncu's console prints before each message;
# None (0) it prints without one, and its CSV with an empty Rule Type.
KINDS = {0: "", 1: "INF", 2: "WRN", 3: "ERR", 4: "OPT"}
# RuleResultSpeedupType: Local is a unit's efficiency in isolation, Global the kernel's run time.
SPEEDUP_TYPES = {1: "local", 2: "global"}
# The section ncu files `--metrics` results under: a launch with it alone was profiled without
# sections.
METRICS_ONLY_SECTION = "section0"


@dataclass
class RawFinding:
    """One message of a rule, as the report holds it (text untouched: the caller renders ncu's
    markup)."""

    kind: str
    rule: str
    name: str
    message: str
    speedup: float | None
    speedup_type: str | None


@dataclass
class LaunchRules:
    """What the report holds for one launch: its names (to check it is the launch meant), its
    sections, the number of rules ncu ran on it, and their messages."""

    kernel_full: str
    function: str
    sections: list[str] = field(default_factory=list)
    rules_run: int = 0
    findings: list[RawFinding] = field(default_factory=list)


def launch_rules(handle: BinaryIO, launch_id: int) -> LaunchRules | None:
    """The rule results of launch `launch_id` (0-based, in file order, as the readers number
    launches) from a binary file object at its start; None when the file has fewer launches. Raises
    Unsupported for a file version or result kind the streaming reader was not checked on, Damaged
    for broken framing."""
    if handle.read(4) != MAGIC:
        raise Unsupported("no NVR magic")
    header = _message(handle, "FileHeader")
    if header.Version not in VERIFIED_VERSIONS:
        raise Unsupported(f"file format version {header.Version}")
    index = 0
    while True:
        size = _length(handle, end_ok=True)
        if size is None:
            return None
        block = _parse(_exactly(handle, size), "BlockHeader")
        if block.NumRangeResults or block.NumCmdlistResults or block.NumGraphResults:
            raise Unsupported("range, command-list or graph results (--replay-mode range)")
        if index + block.NumResults <= launch_id:  # not in this block: skip its payload whole
            _skip(handle, block.PayloadSize)
            index += block.NumResults
            continue
        for _ in range(block.NumSources):
            _skip(handle, _length(handle))
        for _ in range(launch_id - index):
            _skip(handle, _length(handle))
        return _launch(_parse(_exactly(handle, _length(handle)), "RuleView"))


def _launch(result: Message) -> LaunchRules:
    # _text: text that is not UTF-8 (protobuf hands it back as bytes) is a damaged file, as for the
    # table
    function = _text(result.KernelFunctionName or result.KernelMangledName)
    out = LaunchRules(
        kernel_full=_text(result.KernelDemangledName) or function,
        function=function,
        sections=[_text(s.Identifier) for s in result.Sections],
        rules_run=len(result.RuleResults),
    )
    for rule in result.RuleResults:
        for item in rule.Body.Items:
            text = _text(item.Message.Message) if item.HasField("Message") else ""
            if not text.strip():
                # a rule that ran and had nothing to say (ncu prints nothing for it either)
                continue
            speedup = item.Speedup if item.HasField("Speedup") else None
            out.findings.append(
                RawFinding(
                    kind=KINDS.get(item.Message.Type, ""),
                    rule=_text(rule.Identifier),
                    name=_text(rule.DisplayName or rule.Identifier),
                    message=text,
                    speedup=(
                        speedup.Value if speedup is not None and speedup.HasField("Value") else None
                    ),
                    speedup_type=(
                        SPEEDUP_TYPES.get(speedup.SpeedupType) if speedup is not None else None
                    ),
                )
            )
    return out


@overload
def _length(handle: BinaryIO, end_ok: Literal[False] = False) -> int: ...
@overload
def _length(handle: BinaryIO, end_ok: bool) -> int | None: ...
def _length(handle: BinaryIO, end_ok: bool = False) -> int | None:
    """The next length prefix; None at the end of the file only where `end_ok`."""
    prefix = handle.read(4)
    if not prefix and end_ok:
        return None
    if len(prefix) < 4:
        raise Damaged("cut short inside a length prefix", truncated=True)
    size: int = struct.unpack("<I", prefix)[0]
    return size


def _exactly(handle: BinaryIO, size: int) -> bytes:
    data = handle.read(size)
    if len(data) < size:
        raise Damaged("cut short inside a message", truncated=True)
    return data


def _skip(handle: BinaryIO, size: int) -> None:
    # seek() on a compressed stream decompresses forward; on a plain file it is free.
    before = handle.tell()
    if handle.seek(size, 1) - before < size:
        raise Damaged("cut short inside a message", truncated=True)


def _message(handle: BinaryIO, kind: str) -> Message:
    return _parse(_exactly(handle, _length(handle)), kind)


def _parse(data: bytes, kind: str) -> Message:
    from google.protobuf.message import DecodeError

    try:
        return message_classes()[kind].FromString(data)
    except DecodeError as exc:
        raise Damaged(f"a {kind} message does not parse ({exc})") from None
