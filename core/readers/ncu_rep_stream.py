"""Binary `.ncu-rep` reports read directly, one result at a time: what flopscope uses, and nothing else.

`ncu_report` (NVIDIA's module, see ncu_rep.py) loads a whole report into memory first: 4.4 GB and 13 s for
10,000 launches. The file is a stream of protobuf messages, described by the `.proto` files Nsight Compute
ships in `extras/FileFormat` (not copied here: the messages below declare only the fields read, by the field
numbers those files give):

    "NVR\\0", uint32 n, FileHeader (n bytes), then blocks until the end of the file:
    uint32 n, BlockHeader (n bytes), then PayloadSize bytes: NumSources x (uint32 m, SourceData),
    NumResults x (uint32 m, ProfileResult), then range, command-list and graph results.

A block's string table extends the report's one table (metric names are ids into it). Each ProfileResult is
one launch: its metrics (device attributes included), grid, block, stream and NVTX state. The SASS and
source of every kernel (SourceData, most of a report's bytes) are skipped unparsed.

Anything this reader was not checked on (a file version other than `VERIFIED_VERSIONS`, range/graph results
of `--replay-mode range`, a report with no launch) raises `Unsupported`, and the caller reads the file with
`ncu_report` instead: a slower read, never a wrong number. A file of a known version whose framing is broken
(cut short, a message that does not parse) raises `Damaged`: the caller refuses it in one line.
tests/core/test_ncu_rep_stream.py checks the two readers
give the same table on every real report the project has.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd

from ..units import is_missing, metric_unit_factor
from .csv_text import DEFAULT_DOMAINS
from .wanted import MODIFIER_METRIC, OPCODE_METRIC, wanted

MAGIC = b"NVR\x00"
# FileHeader.Version of the reports the equality test covers (ncu 2019.5 to 2025.3 all write 7).
VERIFIED_VERSIONS = frozenset({7})
_U32 = struct.Struct("<I")
# Called as a long read goes: (launches read, launches in the file). The caller draws it (core draws nothing).
Progress = Callable[[int, int], None]


class Unsupported(Exception):
    """The file is not one this reader can vouch for; read it with ncu_report."""


class Damaged(Exception):
    """The file's framing is broken: a version this reader knows, whose bytes end mid-message, or hold a message
    that does not parse. Not handed to ncu_report, whose C++ aborts the whole process on some such files
    (tests/core/test_input_limits.py). `launches` is how many whole launches came before the damage."""

    def __init__(self, why: str, truncated: bool = False):
        super().__init__(why)
        self.truncated = truncated
        self.launches = 0


@dataclass(frozen=True)
class _Column:
    """How one metric name id becomes table cells, decided once per report (names repeat in every launch)."""

    name: str
    factor: float
    instanced: bool


def read_table(path: Path, progress: Progress | None = None) -> pd.DataFrame:
    """One row per profiled launch: identity columns and wanted metrics in SI units, columns in the order
    they first appear (as `pd.DataFrame(rows)` orders them). `progress(launches read, launches in the file)`
    is called after each launch. Raises Unsupported."""
    columns: dict[str, list] = {}
    count = 0
    try:
        for row in read_rows(path, progress):
            for name, value in row.items():
                cells = columns.get(name)
                if cells is None:
                    cells = columns[name] = [None] * count
                elif len(cells) < count:
                    cells.extend([None] * (count - len(cells)))
                cells.append(value)
            count += 1
    except Damaged as exc:
        exc.launches = count
        raise
    if not count:
        raise Unsupported("no launch in the file")  # ncu_report words why (cut short, or nothing profiled)
    for cells in columns.values():
        cells.extend([None] * (count - len(cells)))
    return pd.DataFrame(columns)


def read_rows(path: Path, progress: Progress | None = None) -> Iterator[dict]:
    """Each profiled launch as a row, one at a time. Raises Unsupported."""
    with path.open("rb") as handle, _mapped(handle) as data:
        try:
            yield from _launches(data, progress)
        except (IndexError, struct.error, UnicodeDecodeError) as exc:  # bytes cut or damaged mid-message
            raise Damaged(f"damaged data ({type(exc).__name__})") from None


def capture_time(path: Path) -> float | None:
    """When ncu started the capture (Unix seconds), from the first block's SessionDetails: what ncu's
    `--page session` prints as Created. None where the file does not say (or is not a version read here)."""
    try:
        with path.open("rb") as handle, _mapped(handle) as data:
            if data[:4] != MAGIC:
                return None
            header, first_block = _message(data, 4, "FileHeader")
            if header.Version not in VERIFIED_VERSIONS:
                return None
            block, _ = _message(data, first_block, "BlockHeader")
    except (OSError, Unsupported, Damaged, IndexError, struct.error):
        return None
    created = block.SessionDetails.CreationTime
    return float(created) if created else None


def _mapped(handle):
    try:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:  # an empty file cannot be mapped
        raise Unsupported("empty file") from None


def _launches(data, progress: Progress | None = None) -> Iterator[dict]:
    if data[:4] != MAGIC:
        raise Unsupported("no NVR magic")
    header, first_block = _message(data, 4, "FileHeader")
    if header.Version not in VERIFIED_VERSIONS:
        raise Unsupported(f"file format version {header.Version}")
    columns, total = _wanted_columns(data, first_block)
    index = 0
    for block, offset in _blocks(data, first_block):
        for _ in range(block.NumSources):
            offset = _skip(data, offset)
        for _ in range(block.NumResults):
            result, offset = _message(data, offset, "Result")
            yield _row(result, columns, index)
            index += 1
            if progress is not None:
                progress(index, total)


def _blocks(data, offset: int) -> Iterator[tuple[object, int]]:
    """Each BlockHeader and the offset of its payload."""
    while offset < len(data):
        block, offset = _message(data, offset, "BlockHeader")
        if block.NumRangeResults or block.NumCmdlistResults or block.NumGraphResults:
            raise Unsupported("range, command-list or graph results (--replay-mode range)")
        end = offset + block.PayloadSize
        if end > len(data):
            raise Damaged("a block runs past the end of the file", truncated=True)
        yield block, offset
        offset = end


def _wanted_columns(data, offset: int) -> tuple[dict[int, _Column], int]:
    """String id -> column, for the wanted metrics' names, from the whole report's string table, and the
    number of launches in the file. A block's table extends the report's, and a launch may name a metric that
    only a later block's table defines (seen in the H800 fixture): so the table is read first, from the block
    headers alone."""
    strings: list[str] = []
    launches = 0
    try:
        for block, _ in _blocks(data, offset):
            strings.extend(_text(name) for name in block.StringTable.Strings)
            launches += block.NumResults
    except Damaged:
        pass  # the reading pass meets it again after the launches before it, and says how many were whole
    return {i: column for i, name in enumerate(strings) if (column := _column(name)) is not None}, launches


def _message(data, offset: int, kind: str):
    """The length-prefixed message at `offset`, parsed as `kind`, and the offset after it."""
    start = offset + 4
    if start > len(data):
        raise Damaged("cut short inside a length prefix", truncated=True)
    (size,) = _U32.unpack_from(data, offset)
    if start + size > len(data):
        raise Damaged("cut short inside a message", truncated=True)
    from google.protobuf.message import DecodeError

    try:
        return message_classes()[kind].FromString(data[start : start + size]), start + size
    except DecodeError as exc:
        raise Damaged(f"a {kind} message does not parse ({exc})") from None


def _skip(data, offset: int) -> int:
    (size,) = _U32.unpack_from(data, offset)
    return offset + 4 + size


def _column(name: str) -> _Column | None:
    if not wanted(name):
        return None
    # Values are stored in the metric's base unit: a duration in nanoseconds, which metric_unit_factor assumes
    # for a blank unit; every other wanted metric's base unit is already SI (bytes, counts, hertz, /second).
    return _Column(name, metric_unit_factor(name, ""), name in (OPCODE_METRIC, MODIFIER_METRIC))


def _row(result, columns: dict[int, _Column], index: int) -> dict:
    base = _text(result.KernelFunctionName or result.KernelMangledName) or None
    # A kernel with C linkage (`extern "C"`, nvjet, cuBLAS' xmma) has no demangled name: ncu_report then
    # names it by its function name, and so does this reader.
    row: dict = {"launch_id": index, "kernel_base": base, "kernel_full": _text(result.KernelDemangledName) or base}
    found = []
    wanted_column = columns.get
    # Raw bytes, not parsed messages: parsing all ~400 metrics of a launch to keep ~50 took most of the time.
    # NameId is the message's first field, a varint: two bytes for ids under 16384 (inlined), else _name_id.
    for raw in result.MetricResults:
        low = raw[1]
        if raw[0] != 8 or (low > 127 and raw[2] > 127):
            column = wanted_column(_name_id(raw))
        else:
            column = wanted_column((low & 127) | (raw[2] << 7) if low > 127 else low)
        if column is not None:
            found.append((column.name, column, raw))
    found.sort(key=lambda item: item[0])  # ncu_report lists a launch's metrics by name; the table keeps that order
    parse = message_classes()["Metric"].FromString
    for name, column, raw in found:
        metric = parse(raw)
        if column.instanced:
            row.update(_instances(name, metric.MetricValueList))
            continue
        value = _value(metric.MetricValue)
        row[name] = value * column.factor if isinstance(value, float) else value
    fill_identity(row)
    row["nvtx"] = _nvtx(result.Nvtx, result.ThreadID) if result.HasField("Nvtx") else None
    return row


def _name_id(raw: bytes) -> int:
    """ProfileMetricResult.NameId (field 1, a varint, serialized first) read off the message's bytes."""
    if raw[:1] == b"\x08":
        value = shift = 0
        for byte in raw[1:11]:
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
    return message_classes()["Metric"].FromString(raw).NameId


def _value(value) -> float | str | None:
    """A ProfileMetricValue as ncu_report's `value()` gives it: numbers as float, text as text."""
    fields = value.ListFields()
    if not fields:
        return None
    raw = fields[0][1]
    return _text(raw) if isinstance(raw, (str, bytes)) else float(raw)


def _text(value: str | bytes) -> str:
    """A proto2 string field as text. protobuf hands back bytes where they are not UTF-8: ncu writes UTF-8, so
    the file is damaged."""
    if isinstance(value, bytes):
        raise Damaged("text that is not UTF-8")
    return value


def _instances(name: str, elements) -> dict:
    """Instanced metrics (one count per SASS opcode) as `name:OPCODE` columns."""
    out = {}
    for element in elements:
        key = _value(element.CorrelationId)
        if isinstance(key, float):
            key = str(int(key))
        out[f"{name}:{key}"] = float(_value(element.ElementValue) or 0.0)
    return out


def fill_identity(row: dict) -> None:
    """The identity columns of a launch's row, from its launch__/device__ metrics (both .ncu-rep readers)."""

    def dims(kind: str) -> str | None:
        vals = [row.get(f"launch__{kind}_dim_{a}") for a in "xyz"]
        if any(is_missing(v) for v in vals):
            return None
        return "(" + ", ".join(str(int(v)) for v in vals) + ")"

    row["grid"] = dims("grid")
    row["block"] = dims("block")
    row["registers"] = row.get("launch__registers_per_thread")
    row["stream"] = row.get("launch__stream_id")
    row["device"] = row.get("launch__device_id")
    row["gpu"] = row.get("device__attribute_display_name")
    major = row.get("device__attribute_compute_capability_major")
    minor = row.get("device__attribute_compute_capability_minor")
    row["cc"] = f"{int(major)}.{int(minor)}" if major is not None and minor is not None else None


def nvtx_path(domains: list[tuple[str, list[str]]]) -> str | None:
    """(domain name, its open ranges outermost first) per domain as one text, `domain:range/range | ...`; the
    default domain is not named (both .ncu-rep readers)."""
    parts = [("" if name in DEFAULT_DOMAINS else f"{name}:") + "/".join(stack) for name, stack in domains if stack]
    return " | ".join(parts) or None


def _nvtx(state, thread: int) -> str | None:
    """Push/pop ranges of the launching thread, then start/end ranges, per domain (as ncu_report gives them)."""
    pushed = {
        d.Id: [_text(r.Name) for r in d.Stack] for t in state.Threads if thread == t.TID for d in t.PushPopDomains
    }
    started = {d.Id: [_text(r.Name) for r in d.Ranges] for d in state.StartEndDomains}
    return nvtx_path([(_text(d.Name), pushed.get(d.Id, []) + started.get(d.Id, [])) for d in state.Domains])


@cache
def message_classes() -> dict[str, type]:
    """Message classes for the fields read, built from field numbers at first use (protobuf is imported only
    when a report is read). Every field is optional here: a file missing one parses, and the row says unknown.
    Fields not declared are kept as unknown fields, so a parsed message serializes back whole (the benchmark
    builds large reports this way)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field = descriptor_pb2.FieldDescriptorProto
    scalar = {
        "u32": field.TYPE_UINT32,
        "u64": field.TYPE_UINT64,
        "str": field.TYPE_STRING,
        "float": field.TYPE_FLOAT,
        "double": field.TYPE_DOUBLE,
        "bytes": field.TYPE_BYTES,
    }
    file = descriptor_pb2.FileDescriptorProto(name="flopscope_ncu_rep.proto", package="ncurep", syntax="proto2")
    for name, fields in _SCHEMA.items():
        message = file.message_type.add(name=name)
        for field_name, number, kind in fields:
            repeated = kind.startswith("*")
            kind = kind.lstrip("*")
            spec = message.field.add(
                name=field_name, number=number, label=field.LABEL_REPEATED if repeated else field.LABEL_OPTIONAL
            )
            if kind in scalar:
                spec.type = scalar[kind]
            else:
                spec.type, spec.type_name = field.TYPE_MESSAGE, f".ncurep.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"ncurep.{name}")) for name in _SCHEMA}


# Message -> (field, number, type); `*` repeated. Numbers from ProfilerReport.proto, ProfilerResultsCommon.proto,
# ProfilerReportCommon.proto, ProfilerStringTable.proto and Nvtx.proto of Nsight Compute 2024.1.
_SCHEMA = {
    "FileHeader": [("Version", 1, "u32")],
    "StringTable": [("Strings", 1, "*str")],
    "SessionDetails": [("CreationTime", 2, "u64")],
    "BlockHeader": [
        ("NumSources", 1, "u32"),
        ("NumResults", 2, "u32"),
        ("SessionDetails", 3, "SessionDetails"),
        ("StringTable", 4, "StringTable"),
        ("PayloadSize", 5, "u32"),
        ("NumRangeResults", 7, "u32"),
        ("NumCmdlistResults", 8, "u32"),
        ("NumGraphResults", 9, "u32"),
    ],
    "Value": [
        ("StringValue", 1, "str"),
        ("FloatValue", 2, "float"),
        ("DoubleValue", 3, "double"),
        ("Uint32Value", 4, "u32"),
        ("Uint64Value", 5, "u64"),
    ],
    "ListElement": [("CorrelationId", 1, "Value"), ("ElementValue", 2, "Value")],
    "Metric": [("NameId", 1, "u32"), ("MetricValue", 2, "Value"), ("MetricValueList", 3, "*ListElement")],
    "PushPopRange": [("Name", 1, "str")],
    "PushPopDomain": [("Id", 1, "u64"), ("Stack", 3, "*PushPopRange")],
    "StartEndRange": [("Id", 1, "u64"), ("Name", 2, "str")],
    "StartEndDomain": [("Id", 1, "u64"), ("Ranges", 3, "*StartEndRange")],
    "DomainInfo": [("Id", 1, "u64"), ("Name", 2, "str")],
    "Thread": [("TID", 1, "u32"), ("PushPopDomains", 2, "*PushPopDomain")],
    "Nvtx": [("Domains", 1, "*DomainInfo"), ("Threads", 2, "*Thread"), ("StartEndDomains", 3, "*StartEndDomain")],
    # ncu's rule results (RuleResults.proto, package NV.RuleSystem), read for one launch at a time by
    # ncu_rep_rules.py: never part of the table.
    "RuleMessage": [("Message", 1, "str"), ("Type", 2, "u32")],
    "RuleSpeedup": [("SpeedupType", 1, "u32"), ("Value", 2, "double")],
    "RuleItem": [("Message", 1, "RuleMessage"), ("Speedup", 10, "RuleSpeedup")],
    "RuleBody": [("Items", 1, "*RuleItem")],
    "Rule": [("Identifier", 1, "str"), ("DisplayName", 2, "str"), ("Body", 3, "RuleBody")],
    "Section": [("Identifier", 1, "str")],
    "RuleView": [
        ("KernelMangledName", 5, "str"),
        ("KernelFunctionName", 6, "str"),
        ("KernelDemangledName", 7, "str"),
        ("Sections", 17, "*Section"),
        ("RuleResults", 19, "*Rule"),
    ],
    "Result": [
        ("ThreadID", 1, "u32"),
        ("APICallID", 2, "u64"),
        ("KernelMangledName", 5, "str"),
        ("KernelFunctionName", 6, "str"),
        ("KernelDemangledName", 7, "str"),
        ("MetricResults", 13, "*bytes"),
        ("Nvtx", 21, "Nvtx"),
    ],
}
