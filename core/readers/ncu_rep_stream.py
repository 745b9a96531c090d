"""Binary `.ncu-rep` reports read directly, in batches of launches: what flopscope uses, and nothing
else.

`ncu_report` (NVIDIA's module, see ncu_rep.py) loads a whole report into memory first, every metric
of every launch: slow, and many times the memory of the table flopscope keeps. The file is a stream
of protobuf messages, described by the `.proto` files Nsight Compute ships in `extras/FileFormat`
(not copied here: the messages below declare only the fields read, by those files' field numbers):

    "NVR\\0", uint32 n, FileHeader (n bytes), then blocks until the end of the file:
    uint32 n, BlockHeader (n bytes), then PayloadSize bytes: NumSources x (uint32 m, SourceData),
    NumResults x (uint32 m, ProfileResult), then range, command-list and graph results.

A block's string table extends the report's one table (metric names are ids into it). Each
ProfileResult is one launch: its metrics (device attributes included), grid, block, stream and NVTX
state. The SASS and source of every kernel (SourceData, most of a report's bytes) are skipped
unparsed. The results of ~32 MB of launches are decoded together, column-wise, by
ncu_rep_columns.py; this module frames the file, names the columns and builds the table.

Anything this reader was not checked on (a file version other than `VERIFIED_VERSIONS`, range/graph
results of `--replay-mode range`, a report with no launch) raises `Unsupported`, and the caller
reads the file with `ncu_report` instead: a slower read, never a wrong number. A file of a known
version whose framing is broken (cut short, a message that does not parse) raises `Damaged`: the
caller refuses it in one line. tests/core/test_ncu_rep_stream.py checks the two readers give the
same table on every real report the project has."""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple, Protocol, cast

import numpy as np
import pandas as pd

from ..common.units import base_unit_factor, is_missing
from .csv_text import nvtx_path
from .ncu_rep_columns import PAD, Column, Layouts, MetricColumns, walk_fields, wanted_starts
from .wanted import MODIFIER_METRIC, OPCODE_METRIC, wanted

if TYPE_CHECKING:
    from google.protobuf.message import Message

MAGIC = b"NVR\x00"
# FileHeader.Version of the reports the equality test covers (ncu 2019.5 to 2025.3 all write 7).
VERIFIED_VERSIONS = frozenset({7})
_U32 = struct.Struct("<I")
# ProfileResult fields the table reads: its metrics (repeated), the kernel's mangled, function and
# demangled names, the NVTX state and the launching thread.
_METRICS, _NAMES, _NVTX, _THREAD = 13, (5, 6, 7), 21, 1
_BATCH_BYTES = 32 << 20  # results decoded together (~1,600 launches of the H100 capture)


class Progress(Protocol):
    """Called as a long read goes: (launches read, launches in the file); a CSV's read passes a
    third argument, `progress(bytes read, file size, "bytes")` (progress_file.py). The caller draws
    it (core draws nothing)."""

    def __call__(self, done: int, total: int, unit: str = "launches", /) -> None: ...


class Unsupported(Exception):
    """The file is not one this reader can vouch for; read it with ncu_report."""


class Damaged(Exception):
    """The file's framing is broken: a version this reader knows, whose bytes end mid-message, or
    hold a message that does not parse. Not handed to ncu_report, whose C++ aborts the whole process
    on some such files (tests/core/test_input_limits.py). `launches` is how many whole launches came
    before the damage."""

    def __init__(self, why: str, truncated: bool = False):
        super().__init__(why)
        self.truncated = truncated
        self.launches = 0


def read_table(path: Path, progress: Progress | None = None) -> pd.DataFrame:
    """One row per profiled launch: identity columns and wanted metrics in SI units, columns in the
    order they first appear (as `pd.DataFrame(rows)` of one dict per launch orders them).
    `progress(launches read, launches in the file)` is called after each launch. Raises
    Unsupported."""
    with path.open("rb") as handle, _mapped(handle) as data, _heap_kept(len(data)):
        launches = _Launches()
        try:
            launches.read(data, progress, _reader(handle, data))
        # bytes cut or damaged mid-message
        except (IndexError, struct.error, UnicodeDecodeError) as exc:
            damage = Damaged(f"damaged data ({type(exc).__name__})")
            damage.launches = launches.whole
            raise damage from None
        except Damaged as damage:
            damage.launches = launches.whole
            raise
    if not launches.count:
        # ncu_report words why (cut short, or nothing profiled)
        raise Unsupported("no launch in the file")
    return launches.frame()


class _Launches:
    """The launches of one report as they are read: their serialized results gathered into batches,
    each batch decoded at once (ncu_rep_columns.py), names and NVTX state into lists, metrics into
    MetricColumns."""

    def __init__(self) -> None:
        self.count = 0  # launches decoded
        self._whole = 0  # launches read whole before any damage found
        self.metrics: MetricColumns | None = None
        self._wanted: np.ndarray | None = None  # metrics the batch walk keeps
        self._layouts = Layouts()  # launches of one kernel are laid out alike
        self.kernel_base: list[str | None] = []
        self.kernel_full: list[str | None] = []
        self.nvtx: list[str | None] = []
        self._starts: list[int] = []  # where in the file the results read but not yet decoded are
        self._ends: list[int] = []
        self._pending_bytes = 0
        # kernel names repeat from launch to launch: one string each
        self._texts: dict[bytes, str] = {}
        self._nvtx_seen: dict[tuple[bytes, int], str | None] = {}  # and so do NVTX states

    def read(
        self, data: mmap.mmap, progress: Progress | None, read_at: Callable[[int, int], bytes]
    ) -> None:
        """The launches of the file mapped as `data`; `read_at(offset, n)` reads its bytes
        without the mapping."""
        if data[:4] != MAGIC:
            raise Unsupported("no NVR magic")
        header, first_block = _message(data, 4, "FileHeader")
        if header.Version not in VERIFIED_VERSIONS:
            raise Unsupported(f"file format version {header.Version}")
        columns, blocks, damage = _wanted_columns(read_at, len(data), first_block)
        total = sum(results for _, _, results in blocks)
        self.metrics = MetricColumns(columns, total, _name_id, _cells)
        try:
            for offset, sources, results in blocks:
                for _ in range(sources):
                    offset = _skip(data, offset)
                for _ in range(results):
                    start = offset + 4
                    (size,) = _U32.unpack_from(data, offset)
                    offset = start + size
                    if offset > len(data):
                        raise Damaged("cut short inside a message", truncated=True)
                    self._starts.append(start)
                    self._ends.append(offset)
                    self._pending_bytes += size
                    if self._pending_bytes >= _BATCH_BYTES:
                        self._flush(data)
                        _forget(data, offset)
                    if progress is not None:
                        progress(self.count + len(self._starts), total)
            if damage is not None:
                raise damage
        except Damaged:
            # the launches before the damage: a damaged one among them is the first damage
            self._flush(data)
            raise
        self._flush(data)

    @property
    def whole(self) -> int:
        """How many launches were read whole before the damage that stopped the read."""
        return min(self._whole, self.metrics.decoding) if self.metrics is not None else 0

    def _flush(self, data: mmap.mmap) -> None:
        """Decode the results read since the last flush, where they are in the mapped file (no
        copy); the last ones of the file are copied, with PAD after them."""
        if not self._starts:
            return
        # the results are copied out of the mapping where PAD cannot follow them
        raw: mmap.mmap | bytes = data
        starts, ends = np.array(self._starts, np.int64), np.array(self._ends, np.int64)
        if ends[-1] + len(PAD) > len(data):
            results = [data[a:b] for a, b in zip(self._starts, self._ends, strict=True)]
            ends = np.cumsum(ends - starts)
            starts = np.concatenate(([0], ends[:-1]))
            raw = b"".join([*results, PAD])
        self._starts, self._ends, self._pending_bytes = [], [], 0
        buf = np.frombuffer(raw, np.uint8)
        assert self.metrics is not None  # made by `read` before its first flush
        if self._wanted is None:
            self._wanted = wanted_starts(self.metrics)
        fields = walk_fields(
            buf,
            starts,
            ends,
            _METRICS,
            (*_NAMES, _NVTX),
            (_THREAD,),
            wanted=self._wanted,
            layouts=self._layouts,
        )
        if fields.broken is not None:
            self._whole = self.count + fields.broken
            _refuse_result(raw[starts[fields.broken] : ends[fields.broken]])
        threads = (fields.varints[_THREAD] & np.uint64(0xFFFFFFFF)).tolist()
        text = self._text
        spans = [zip(*(a.tolist() for a in fields.spans[f]), strict=True) for f in (*_NAMES, _NVTX)]
        for i, (mangled, function, demangled, state, thread) in enumerate(
            zip(*spans, threads, strict=True)
        ):
            self._whole = self.count + i
            # A kernel with C linkage (`extern "C"`, nvjet, cuBLAS' xmma) has no demangled name:
            # ncu_report then names it by its function name, and so does this reader.
            base = text(raw, *function) or text(raw, *mangled) or None
            self.kernel_base.append(base)
            self.kernel_full.append(text(raw, *demangled) or base)
            self.nvtx.append(None if state[0] < 0 else self._nvtx(raw[state[0] : state[1]], thread))
        # unless a metric of one of them is damaged (metrics.decoding)
        self._whole = self.count + len(starts)
        launch, metric_starts, metric_ends = fields.repeated
        self.metrics.add(buf, launch + self.count, metric_starts, metric_ends)
        self.count += len(starts)

    def _text(self, raw: mmap.mmap | bytes, start: int, end: int) -> str:
        if start < 0:
            return ""
        key = raw[start:end]
        text = self._texts.get(key)
        if text is None:
            # bounded: a report whose every launch differs gains nothing
            if len(self._texts) > 65536:
                self._texts.clear()
            try:
                text = self._texts[key] = key.decode()
            except UnicodeDecodeError:
                raise Damaged("text that is not UTF-8") from None
        return text

    def _nvtx(self, state: bytes, thread: int) -> str | None:
        key = (state, thread)
        if key not in self._nvtx_seen:
            if len(self._nvtx_seen) > 4096:
                self._nvtx_seen.clear()
            self._nvtx_seen[key] = _nvtx(_parse("Nvtx", state), thread)
        return self._nvtx_seen[key]

    def frame(self) -> pd.DataFrame:
        """The table: launch id and names, the metrics the first launch holds (by name), the
        identity columns, then the metrics later launches add, each where its first launch would
        list it."""
        count, metrics = self.count, self.metrics
        assert metrics is not None  # a table is made only of a file read, with a launch
        names = metrics.order()
        cells = {name: metrics.column(name, count) for name in names}
        columns: dict[str, np.ndarray | Sequence[object]] = {
            "launch_id": np.arange(count),
            "kernel_base": self.kernel_base,
        }
        columns["kernel_full"] = self.kernel_full
        columns.update((name, cells[name]) for name in names if metrics.first_launch(name) == 0)
        columns.update(identity_columns(cells, count))
        columns["nvtx"] = self.nvtx
        columns.update((name, cells[name]) for name in names if metrics.first_launch(name) > 0)
        return pd.DataFrame(columns)


_M_TOP_PAD = -2  # glibc's mallopt parameter
_TOP_PAD_DEFAULT = 128 << 10  # its value when unset (mallopt(3))


@contextmanager
def _heap_kept(size: int) -> Iterator[None]:
    """While a report of `size` bytes is read in batches, the C library keeps 64 MB of freed heap
    for the next allocation rather than handing it back: each batch's arrays (a few MB each) were
    otherwise handed back and asked for again, and every page asked for is zeroed by the kernel
    again, about a third of a 100k-launch read's system time. glibc only; a small report is read in
    one batch and changes nothing. glibc then keeps its threshold for handing big blocks to mmap
    where it is (it no longer moves with the sizes freed): the rest of the command allocates as
    the read left it."""
    mallopt = _mallopt() if size > _BATCH_BYTES else None
    if mallopt is None:
        yield
        return
    mallopt(_M_TOP_PAD, 64 << 20)
    try:
        yield
    finally:
        mallopt(_M_TOP_PAD, _TOP_PAD_DEFAULT)


def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's mallopt, or None under another C library."""
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return None
        import ctypes

        mallopt: Callable[[int, int], int] = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError, ValueError):  # no confstr, no such name: not glibc
        return None
    return mallopt


def _forget(data: mmap.mmap, end: int) -> None:
    """Hand the file's pages before `end` back (they are read): the mapped pages of a file read from
    end to end otherwise count in this process's memory, a 2 GB report's 2 GB. The kernel keeps them
    cached."""
    if hasattr(mmap, "MADV_DONTNEED"):  # not on Windows
        data.madvise(mmap.MADV_DONTNEED, 0, end - end % mmap.PAGESIZE)


def _refuse_result(raw: bytes) -> None:
    """A result whose top-level fields the batch walk could not follow: damaged if protobuf cannot
    parse it either, else encoded in a way this reader was not checked on (ncu_report reads it)."""
    _parse("Result", raw)
    raise Unsupported("a launch whose fields are encoded unlike ncu's")


def _parse(kind: str, raw: bytes) -> Message:
    from google.protobuf.message import DecodeError

    try:
        return message_classes()[kind].FromString(raw)
    except DecodeError as exc:
        raise Damaged(f"a {kind} message does not parse ({exc})") from None


def identity_columns(
    cells: Mapping[str, np.ndarray | Sequence[object]], count: int
) -> dict[str, np.ndarray | Sequence[object]]:
    """grid, block, registers, stream, device, gpu and cc of every launch from its launch__/device__
    metric columns: `fill_identity`, a table at a time."""

    def given(name: str) -> np.ndarray | Sequence[object]:
        return cells.get(name, [None] * count)

    return {
        "grid": _texts(_dims, *(given(f"launch__grid_dim_{a}") for a in "xyz")),
        "block": _texts(_dims, *(given(f"launch__block_dim_{a}") for a in "xyz")),
        "registers": given("launch__registers_per_thread"),
        "stream": given("launch__stream_id"),
        "device": given("launch__device_id"),
        "gpu": given("device__attribute_display_name"),
        "cc": _texts(
            _compute_capability,
            given("device__attribute_compute_capability_major"),
            given("device__attribute_compute_capability_minor"),
        ),
    }


def _texts(
    text: Callable[..., str | None], *columns: np.ndarray | Sequence[object]
) -> list[str | None]:
    """`text(*cells)` for every launch, computed once per distinct combination of cells."""
    seen: dict[tuple[object, ...], str | None] = {}
    out: list[str | None] = []
    for key in zip(*(c.tolist() if isinstance(c, np.ndarray) else c for c in columns), strict=True):
        if key not in seen:
            seen[key] = text(*key)
        out.append(seen[key])
    return out


def _dims(*vals: float | None) -> str | None:
    if any(is_missing(v) for v in vals):
        return None
    return "(" + ", ".join(str(int(cast(float, v))) for v in vals) + ")"  # none missing: numbers


def _compute_capability(major: float | None, minor: float | None) -> str | None:
    if is_missing(major) or is_missing(minor):
        return None
    return f"{int(cast(float, major))}.{int(cast(float, minor))}"  # neither missing: numbers


def capture_time(path: Path) -> float | None:
    """When ncu started the capture (Unix seconds), from the first block's SessionDetails: what
    ncu's `--page session` prints as Created. None where the file does not say (or is not a version
    read here)."""
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


@contextmanager
def _mapped(handle: BinaryIO) -> Iterator[mmap.mmap]:
    try:
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:  # an empty file cannot be mapped
        raise Unsupported("empty file") from None
    try:
        yield data
    finally:
        # An array over it may live on in the traceback of an error being raised: then it is
        # unmapped when that is freed.
        with suppress(BufferError):
            data.close()


class _Block(NamedTuple):
    """What the reader uses of a BlockHeader."""

    payload: int  # PayloadSize
    sources: int
    results: int
    strings: tuple[str, ...]  # its string table's additions


_HEAD_BYTES = 256  # read at each message: its length prefix and (most often) the whole message


def _reader(handle: BinaryIO, data: mmap.mmap) -> Callable[[int, int], bytes]:
    """`read_at(offset, n)`: the file's bytes, by pread where there is one. The block headers are
    read so: through the mapping, each header's page fault maps 64 kB around it, the whole file
    once for its headers and once again for its launches."""
    if hasattr(os, "pread"):
        fd = handle.fileno()
        return lambda offset, n: os.pread(fd, n, offset)
    return _mapped_reader(data)  # Windows


def _mapped_reader(data: mmap.mmap) -> Callable[[int, int], bytes]:
    """`read_at(offset, n)` through the mapping."""
    return lambda offset, n: data[offset : offset + n]


def _blocks(
    read_at: Callable[[int, int], bytes], length: int, offset: int
) -> Iterator[tuple[_Block, int]]:
    """Each block header of a file `length` bytes long and the offset of its payload. ncu writes a
    block per launch, whose headers differ in little but their payload's size: one parse per
    distinct header."""
    parsed: dict[bytes, _Block] = {}
    while offset < length:
        raw, after = _message_bytes(read_at, length, offset)
        # an empty header (a length prefix of zero bytes): no block ncu writes has none
        if not raw:
            raise Damaged(
                f"zero bytes where a block should start, at byte {offset:,} of {length:,} (a"
                " padded or damaged copy)"
            )
        offset = after
        block = parsed.get(raw)
        if block is None:
            # bounded: a report whose every header differs gains nothing
            if len(parsed) > 4096:
                parsed.clear()
            block = parsed[raw] = _block(raw)
        end = offset + block.payload
        if end > length:
            raise Damaged("a block runs past the end of the file", truncated=True)
        yield block, offset
        offset = end


def _block(raw: bytes) -> _Block:
    header = _parse("BlockHeader", raw)
    if header.NumRangeResults or header.NumCmdlistResults or header.NumGraphResults:
        raise Unsupported("range, command-list or graph results (--replay-mode range)")
    strings = tuple(_text(name) for name in header.StringTable.Strings)
    return _Block(header.PayloadSize, header.NumSources, header.NumResults, strings)


def _wanted_columns(
    read_at: Callable[[int, int], bytes], length: int, offset: int
) -> tuple[dict[int, Column], list[tuple[int, int, int]], Damaged | None]:
    """String id -> column, for the wanted metrics' names, from the whole report's string table;
    each block's (payload offset, sources, results); and the damage that ended the blocks early, if
    any. A block's table extends the report's, and a launch may name a metric that only a later
    block's table defines (seen in the H800 fixture): so the table is read first, from the block
    headers alone."""
    strings: list[str] = []
    blocks: list[tuple[int, int, int]] = []
    try:
        for block, at in _blocks(read_at, length, offset):
            if block.strings:  # most blocks add none
                strings.extend(block.strings)
            blocks.append((at, block.sources, block.results))
    # raised after the launches before it are read, to say how many were whole
    except Damaged as damage:
        return _columns(strings), blocks, damage
    return _columns(strings), blocks, None


def _columns(strings: list[str]) -> dict[int, Column]:
    return {i: column for i, name in enumerate(strings) if (column := _column(name)) is not None}


def _message(data: mmap.mmap, offset: int, kind: str) -> tuple[Message, int]:
    """The length-prefixed message at `offset`, parsed as `kind`, and the offset after it."""
    raw, end = _message_bytes(_mapped_reader(data), len(data), offset)
    return _parse(kind, raw), end


def _message_bytes(
    read_at: Callable[[int, int], bytes], length: int, offset: int
) -> tuple[bytes, int]:
    """The length-prefixed message at `offset` of a file `length` bytes long, unparsed, and the
    offset after it: its prefix and (most often) the whole message in one read."""
    head = read_at(offset, _HEAD_BYTES)
    start = offset + 4
    if start > length:
        raise Damaged("cut short inside a length prefix", truncated=True)
    (size,) = _U32.unpack_from(head)
    if start + size > length:
        raise Damaged("cut short inside a message", truncated=True)
    return (head[4 : 4 + size] if 4 + size <= len(head) else read_at(start, size)), start + size


def _skip(data: mmap.mmap, offset: int) -> int:
    size: int
    (size,) = _U32.unpack_from(data, offset)
    return offset + 4 + size


def _column(name: str) -> Column | None:
    if not wanted(name):
        return None
    # Values are stored in the metric's base unit: a duration in nanoseconds; every other wanted
    # metric's base unit is already SI (bytes, counts, hertz, /second).
    return Column(name, base_unit_factor(name), name in (OPCODE_METRIC, MODIFIER_METRIC))


def _cells(raw: bytes, column: Column) -> Mapping[str, float | str | None]:
    """A metric the column-wise decoder does not read itself (text, instances, any other encoding),
    parsed as a message: {column name: value}."""
    metric = _parse_metric(raw)
    if column.instanced:
        return _instances(column.name, metric.MetricValueList)
    value = _value(metric.MetricValue)
    return {column.name: value * column.factor if isinstance(value, float) else value}


def _parse_metric(raw: bytes) -> Message:
    return _parse("Metric", raw)


def _name_id(raw: bytes) -> int:
    """ProfileMetricResult.NameId (field 1, a varint, serialized first) read off the message's
    bytes."""
    if raw[:1] == b"\x08":
        value = shift = 0
        for byte in raw[1:11]:
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
    name_id: int = _parse_metric(raw).NameId
    return name_id


def _value(value: Message) -> float | str | None:
    """A ProfileMetricValue as ncu_report's `value()` gives it: numbers as float, text as text."""
    fields = value.ListFields()
    if not fields:
        return None
    raw = fields[0][1]
    return _text(raw) if isinstance(raw, (str, bytes)) else float(raw)


def _text(value: str | bytes) -> str:
    """A proto2 string field as text. protobuf hands back bytes where they are not UTF-8: ncu writes
    UTF-8, so the file is damaged."""
    if isinstance(value, bytes):
        raise Damaged("text that is not UTF-8")
    return value


def _instances(name: str, elements: Iterable[Message]) -> dict[str, float]:
    """Instanced metrics (one count per SASS opcode) as `name:OPCODE` columns."""
    out: dict[str, float] = {}
    for element in elements:
        key = _value(element.CorrelationId)
        if isinstance(key, float):
            key = str(int(key))
        out[f"{name}:{key}"] = float(_value(element.ElementValue) or 0.0)
    return out


def fill_identity(row: dict[str, Any]) -> None:
    """The identity columns of a launch's row, from its launch__/device__ metrics (both .ncu-rep
    readers)."""

    def dims(kind: str) -> str | None:
        vals = [row.get(f"launch__{kind}_dim_{a}") for a in "xyz"]
        if any(is_missing(v) for v in vals):
            return None
        # none missing: numbers
        return "(" + ", ".join(str(int(cast(float, v))) for v in vals) + ")"

    row["grid"] = dims("grid")
    row["block"] = dims("block")
    row["registers"] = row.get("launch__registers_per_thread")
    row["stream"] = row.get("launch__stream_id")
    row["device"] = row.get("launch__device_id")
    row["gpu"] = row.get("device__attribute_display_name")
    major = row.get("device__attribute_compute_capability_major")
    minor = row.get("device__attribute_compute_capability_minor")
    row["cc"] = f"{int(major)}.{int(minor)}" if major is not None and minor is not None else None


def _nvtx(state: Message, thread: int) -> str | None:
    """Push/pop ranges of the launching thread, then start/end ranges, per domain (as ncu_report
    gives them)."""
    pushed = {
        d.Id: [_text(r.Name) for r in d.Stack]
        for t in state.Threads
        if thread == t.TID
        for d in t.PushPopDomains
    }
    started = {d.Id: [_text(r.Name) for r in d.Ranges] for d in state.StartEndDomains}
    return nvtx_path(
        [(_text(d.Name), pushed.get(d.Id, []) + started.get(d.Id, [])) for d in state.Domains]
    )


@cache
def message_classes() -> dict[str, type[Message]]:
    """Message classes for the fields read, built from field numbers at first use (protobuf is
    imported only when a report is read). Every field is optional here: a file missing one parses,
    and the row says unknown. Fields not declared are kept as unknown fields, so a parsed message
    serializes back whole (the benchmark builds large reports this way)."""
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
    file = descriptor_pb2.FileDescriptorProto(
        name="flopscope_ncu_rep.proto", package="ncurep", syntax="proto2"
    )
    for name, fields in _SCHEMA.items():
        message = file.message_type.add(name=name)
        for field_name, number, kind in fields:
            repeated = kind.startswith("*")
            kind = kind.lstrip("*")
            spec = message.field.add(
                name=field_name,
                number=number,
                label=field.LABEL_REPEATED if repeated else field.LABEL_OPTIONAL,
            )
            if kind in scalar:
                spec.type = scalar[kind]
            else:
                spec.type, spec.type_name = field.TYPE_MESSAGE, f".ncurep.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"ncurep.{name}"))
        for name in _SCHEMA
    }


# Message -> (field, number, type); `*` repeated. Numbers from ProfilerReport.proto,
# ProfilerResultsCommon.proto, ProfilerReportCommon.proto, ProfilerStringTable.proto and Nvtx.proto
# of Nsight Compute 2024.1.
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
    "Metric": [
        ("NameId", 1, "u32"),
        ("MetricValue", 2, "Value"),
        ("MetricValueList", 3, "*ListElement"),
    ],
    "PushPopRange": [("Name", 1, "str")],
    "PushPopDomain": [("Id", 1, "u64"), ("Stack", 3, "*PushPopRange")],
    "StartEndRange": [("Id", 1, "u64"), ("Name", 2, "str")],
    "StartEndDomain": [("Id", 1, "u64"), ("Ranges", 3, "*StartEndRange")],
    "DomainInfo": [("Id", 1, "u64"), ("Name", 2, "str")],
    "Thread": [("TID", 1, "u32"), ("PushPopDomains", 2, "*PushPopDomain")],
    "Nvtx": [
        ("Domains", 1, "*DomainInfo"),
        ("Threads", 2, "*Thread"),
        ("StartEndDomains", 3, "*StartEndDomain"),
    ],
    # ncu's rule results (RuleResults.proto, package NV.RuleSystem), read for one launch at a time
    # by ncu_rep_rules.py: never part of the table.
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
