"""Many launches' ProfileResult messages decoded together with numpy: the streaming reader's hot
path.

A launch holds ~400 metrics (ProfileMetricResult messages, ~40 bytes each) and flopscope keeps ~50.
Parsing them one message at a time in Python would be most of a read: even protobuf's C parser
spends most of its time making a Python object of each. Here the serialized results of a batch of
launches sit in one buffer and are read in lockstep: `walk_fields` steps through the top-level
fields of every launch at once (one numpy pass per field position, not per launch), and
`MetricColumns` reads each metric's name id (field 1, a varint, first) and value (field 2, a
ProfileMetricValue holding exactly one double, float, uint32 or uint64) by vectorised byte
arithmetic. A metric in any other shape (text, per-instance values the table keeps as columns, an
encoding not expected here) goes to `cells`, the reader's message parser: the fast path takes only
what it reads exactly as protobuf would."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

# Wire types and bytes. A field's tag is (number << 3 | wire type).
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_NAME_ID = 0x08  # ProfileMetricResult.NameId, varint
_VALUE = 0x12  # ProfileMetricResult.MetricValue, length-delimited
_DOUBLE, _FLOAT, _UINT32, _UINT64 = 0x19, 0x15, 0x20, 0x28  # ProfileMetricValue's numeric fields
PAD = bytes(32)
_ODD = -2  # a metric's column not known from its first bytes: read byte by byte
LOCKSTEP_FROM = (
    # messages  # after a batch's last message: reading a few varints past an offset stays inside
    # the buffer
    64
)


@dataclass(frozen=True)
class Column:
    """How one metric name becomes table cells, decided once per report (names repeat in every
    launch)."""

    name: str
    factor: float
    instanced: bool


@dataclass
class Fields:
    """What `walk_fields` found in each message of a batch (index i: the i-th message)."""

    # (message, start, end) of each value of the repeated field; a message's values in the order it
    # holds them
    repeated: tuple[np.ndarray, np.ndarray, np.ndarray]
    # field -> (start, end) of its last value, -1 where absent
    spans: dict[int, tuple[np.ndarray, np.ndarray]]
    varints: dict[int, np.ndarray]  # field -> its last value, 0 where absent
    broken: int | None  # the first message whose fields do not follow protobuf's framing


def walk_fields(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    repeated: int,
    spans: tuple[int, ...],
    varints: tuple[int, ...],
    lockstep: bool | None = None,
    wanted: np.ndarray | None = None,
    layouts: Layouts | None = None,
) -> Fields:
    """The top-level fields of the messages at buf[starts[i]:ends[i]], all messages a field at a
    time: the values of length-delimited field `repeated` (under 16) in order, and the last value of
    each field in `spans` (length-delimited) and `varints`. A field of another wire type is skipped,
    as protobuf skips it. Most fields of a ProfileResult are its metrics, one after the other: a
    step where a message is at one (a length of one or two bytes) takes a few array operations; any
    other field goes through `_step`. `buf` must hold PAD after the last message. Under
    LOCKSTEP_FROM messages (a report of a few launches with thousands of metrics each: the `--set
    full`), or with `lockstep=False`, each message is walked on its own in Python instead: a step of
    array operations costs as much for one message as for thousands. `wanted`, a filter only (the
    caller decides on every value it gets again): a table over the three bytes a value under 128
    bytes starts with, False where the value is surely not wanted; such values are left out in
    lockstep, so that most metrics of a launch never reach an array of all its metrics. `layouts`
    (one per read, with the same fields and `wanted` each call): messages laid out as one seen
    before are checked against its layout instead of walked (Layouts)."""
    if not (len(starts) >= LOCKSTEP_FROM if lockstep is None else lockstep):
        return _walk_each(buf, starts, ends, repeated, spans, varints)
    if layouts is not None:
        return layouts.walk(buf, starts, ends, repeated, spans, varints, wanted)
    n = len(starts)
    walk = _Walk(
        pos=starts.astype(np.int64),
        ends=ends.astype(np.int64),
        repeated=repeated,
        found=[],
        spans={f: (np.full(n, -1, np.int64), np.full(n, -1, np.int64)) for f in spans},
        varints={f: np.zeros(n, np.uint64) for f in varints},
        broken=np.zeros(n, bool),
    )
    run_tag = repeated << 3 | _LENGTH
    quick_found = []
    live = np.flatnonzero(walk.pos < walk.ends)
    at, limit = walk.pos[live], walk.ends[live]
    words = _words(buf, 8)
    while len(live):
        word = words[at]
        # most steps: a metric, under 128 bytes, in each
        if ((word & 0x80FF) == run_tag).all():
            size = (word >> 8) & 0x7F
            end = at + size.view(np.int64)
            end += 2
            going = end < limit
            whole = going.all()
            if whole or (end <= limit).all():
                quick_found.append(_kept(wanted, word, size, live, at, end))
                at = end
                if not whole:
                    live, at, limit = live[going], at[going], limit[going]
                continue
        # the length: one byte, or two
        low, high = ((word >> 8) & 0xFF).view(np.int64), ((word >> 16) & 0xFF).view(np.int64)
        long = low >= 0x80
        start = at + 2 + long
        end = start + np.where(long, (low & 0x7F) | (high << 7), low)
        quick = ((word & 0xFF) == run_tag) & ((high < 0x80) | ~long) & (end <= limit)
        if quick.all():
            quick_found.append((live, start, end))
            at = end
        else:
            quick_found.append((live[quick], start[quick], end[quick]))
            walk.pos[live] = np.where(quick, end, at)
            _step(buf, live[~quick], walk)
            at = walk.pos[live]
        going = at < limit
        if not going.all():
            live, at, limit = live[going], at[going], limit[going]
    found = quick_found + walk.found
    at, start, end = (
        np.concatenate([f[k] for f in found]) if found else np.zeros(0, np.int64) for k in range(3)
    )
    first_broken = np.flatnonzero(walk.broken)
    return Fields(
        (at, start, end),
        walk.spans,
        walk.varints,
        int(first_broken[0]) if len(first_broken) else None,
    )


def _kept(
    wanted: np.ndarray | None,
    word: np.ndarray,
    size: np.ndarray,
    live: np.ndarray,
    at: np.ndarray,
    end: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(message, start, end) of the values one lockstep step found (each at `at`, its first 8 bytes
    `word`, `size` bytes long) that `wanted` keeps: a value under 3 bytes, or whose first three
    bytes `wanted` does not rule out."""
    if wanted is None:
        return live, at + 2, end
    keep = wanted[(word >> 16) & 0xFFFFFF] | (size < 3)
    if keep.all():
        return live, at + 2, end
    return live[keep], at[keep] + 2, end[keep]


def _walk_each(
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    repeated: int,
    spans: tuple[int, ...],
    varints: tuple[int, ...],
) -> Fields:
    """`walk_fields`, one message after the other."""
    data = buf.data  # memoryview(buf)
    n = len(starts)
    found: tuple[list[int], list[int], list[int]] = ([], [], [])
    span_at = {f: ([-1] * n, [-1] * n) for f in spans}
    value_of = {f: [0] * n for f in varints}
    broken = None
    for i, (pos, limit) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        while pos < limit:
            tag, after_tag = _varint(data, pos, 5)
            field, wire = tag >> 3, tag & 7
            number, after = _varint(data, after_tag, 10)
            end = {
                _VARINT: after,
                _FIXED64: after_tag + 8,
                _LENGTH: after + min(number, 1 << 40),
                _FIXED32: after_tag + 4,
            }
            pos = end.get(wire, limit + 1)
            if pos > limit or field == 0:
                broken = i
                break
            if wire == _LENGTH:
                if field == repeated:
                    found[0].append(i)
                    found[1].append(after)
                    found[2].append(pos)
                if field in span_at:
                    span_at[field][0][i], span_at[field][1][i] = after, pos
            elif wire == _VARINT and field in value_of:
                value_of[field][i] = number
        if broken is not None:
            break
    messages, value_starts, value_ends = (np.array(f, np.int64) for f in found)
    return Fields(
        (messages, value_starts, value_ends),
        {f: (np.array(a, np.int64), np.array(b, np.int64)) for f, (a, b) in span_at.items()},
        {f: np.array(v, np.uint64) for f, v in value_of.items()},
        broken,
    )


def _varint(data: memoryview, at: int, most: int) -> tuple[int, int]:
    """The varint at `at` (at most `most` bytes; 64 bits kept, as protobuf keeps them) and the
    offset after it; an offset past the end of the buffer where it is longer."""
    value = 0
    for k in range(most):
        byte = data[at + k]
        value |= (byte & 0x7F) << (7 * k)
        if byte < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, at + k + 1
    return 0, len(data) + 1


@dataclass
class _Walk:
    pos: np.ndarray  # where each message's next field starts
    ends: np.ndarray
    repeated: int
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    spans: dict[int, tuple[np.ndarray, np.ndarray]]
    varints: dict[int, np.ndarray]
    broken: np.ndarray


def _step(buf: np.ndarray, live: np.ndarray, walk: _Walk) -> None:
    """One field of each message in `live`, of any wire type; a message whose field does not fit its
    length, or has no valid wire type, is broken and stops there."""
    at, limit = walk.pos[live], walk.ends[live]
    tag, after_tag = _varints(buf, at, 5)
    field, wire = tag >> np.uint64(3), (tag & np.uint64(7)).astype(np.int64)
    number, after = _varints(buf, after_tag, 10)  # a varint field's value, or a length
    size = np.minimum(number, np.uint64(1 << 40)).astype(np.int64)
    end = np.select(
        [wire == _VARINT, wire == _FIXED64, wire == _LENGTH, wire == _FIXED32],
        [after, after_tag + 8, after + size, after_tag + 4],
        limit + 1,
    )
    bad = (end > limit) | (field == 0)
    walk.broken[live[bad]] = True
    walk.pos[live[bad]] = limit[bad]  # stops
    keep = ~bad
    live, end, field, wire, after, number = (
        a[keep] for a in (live, end, field, wire, after, number)
    )
    length = wire == _LENGTH
    hit = length & (field == walk.repeated)
    walk.found.append((live[hit], after[hit], end[hit]))
    for f, (first, last) in walk.spans.items():
        hit = length & (field == f)
        first[live[hit]] = after[hit]
        last[live[hit]] = end[hit]
    for f, values in walk.varints.items():
        hit = (wire == _VARINT) & (field == f)
        values[live[hit]] = number[hit]
    walk.pos[live] = end


@dataclass(frozen=True)
class _Layout:
    """Where one message's top-level fields start (offsets from its start) and what their heads
    hold: a message of the same size whose 8 bytes at each offset match `expect` under `mask` has
    the same fields at the same offsets (see Layouts)."""

    at: np.ndarray  # int64, each field's offset
    mask: np.ndarray  # uint64, the bits of the 8 bytes at `at` that must match
    expect: np.ndarray
    found: tuple[np.ndarray, np.ndarray]  # (start, end) of the repeated field's values kept
    spans: dict[int, tuple[int, int]]  # field -> (start, end) of its last value
    varints: dict[int, int]  # field -> where its last value starts


class Layouts:
    """Launches of one kernel are alike: the same metrics in the same order, each value of the same
    encoded length, so their messages have the same size and their fields the same offsets. A
    message of a size seen before is checked against the layouts of that size's messages, all its
    fields at once (one gather of the 8 bytes at every offset), and a match is read off the layout;
    the lockstep walk, one step per field, takes only the messages that match none. The check is
    exact: each field's tag and length bytes (a varint's continuation bits), and the first three
    bytes of each repeated value, which `wanted` decides on, are compared, so a message that
    matches is framed as the layout says and its fields are what the walk would find. Layouts are
    made (in Python, one message at a time) for the sizes seen again, within a budget that grows
    with the launches read: a report whose launches never match pays little."""

    _PER_SIZE = 4  # layouts of one size kept (a few kernels may share a size), the latest first
    _MOST = 4096  # sizes with layouts kept at most
    _BUDGET_FIRST, _BUDGET_PER = 16, 64  # layouts made: 16, and one per 64 messages walked

    def __init__(self) -> None:
        self._layouts: dict[int, list[_Layout]] = {}
        self._seen: set[int] = set()  # sizes of messages no layout matched
        self._budget = self._BUDGET_FIRST

    def walk(
        self,
        buf: np.ndarray,
        starts: np.ndarray,
        ends: np.ndarray,
        repeated: int,
        spans: tuple[int, ...],
        varints: tuple[int, ...],
        wanted: np.ndarray | None,
    ) -> Fields:
        """walk_fields' Fields of the messages at buf[starts[i]:ends[i]]."""
        n = len(starts)
        sizes = ends - starts
        out = Fields(
            (np.zeros(0, np.int64),) * 3,
            {f: (np.full(n, -1, np.int64), np.full(n, -1, np.int64)) for f in spans},
            {f: np.zeros(n, np.uint64) for f in varints},
            None,
        )
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        matched = np.zeros(n, bool)
        if self._layouts:
            uniq, which = np.unique(sizes, return_inverse=True)
            members = np.argsort(which, kind="stable")
            bounds = np.searchsorted(which[members], np.arange(len(uniq) + 1))
            for k, size in enumerate(uniq.tolist()):
                pending = members[bounds[k] : bounds[k + 1]]
                for layout in self._layouts.get(size, ()):
                    match = _matches(buf, starts[pending], layout)
                    _read_off(buf, starts, pending[match], layout, out, found)
                    matched[pending[match]] = True
                    pending = pending[~match]
                    if not len(pending):
                        break
        self._budget += n // self._BUDGET_PER
        rest = np.flatnonzero(~matched)
        if len(rest):
            walked = walk_fields(
                buf, starts[rest], ends[rest], repeated, spans, varints, wanted=wanted
            )
            at, start, end = walked.repeated
            found.append((rest[at], start, end))
            for f, (first, last) in walked.spans.items():
                out.spans[f][0][rest], out.spans[f][1][rest] = first, last
            for f, values in walked.varints.items():
                out.varints[f][rest] = values
            if walked.broken is not None:
                out.broken = int(rest[walked.broken])
            else:
                self._learn(buf, starts[rest], sizes[rest], repeated, spans, varints, wanted)
        if found:
            launch, start, end = (np.concatenate([f[k] for f in found]) for k in range(3))
            out.repeated = (launch, start, end)
        return out

    def _learn(
        self,
        buf: np.ndarray,
        starts: np.ndarray,
        sizes: np.ndarray,
        repeated: int,
        spans: tuple[int, ...],
        varints: tuple[int, ...],
        wanted: np.ndarray | None,
    ) -> None:
        """Layouts of the last message of each size seen again (before, or twice here) that no
        layout matched."""
        uniq, last, counts = np.unique(sizes[::-1], return_index=True, return_counts=True)
        again = [
            (size, len(sizes) - 1 - i)
            for size, i, count in zip(uniq.tolist(), last.tolist(), counts.tolist(), strict=True)
            if count > 1 or size in self._seen
        ]
        self._seen.update(uniq.tolist())
        if len(self._seen) > 16 * self._MOST:
            self._seen.clear()
        for size, i in again[: max(self._budget, 0)]:
            self._budget -= 1
            start = int(starts[i])
            message = buf[start : start + size + len(PAD)].tobytes()
            layout = _layout(message, size, repeated, spans, varints, wanted)
            if layout is not None:
                if size not in self._layouts and len(self._layouts) >= self._MOST:
                    self._layouts.clear()
                kept = self._layouts.setdefault(size, [])
                kept.insert(0, layout)
                del kept[self._PER_SIZE :]


def _matches(buf: np.ndarray, starts: np.ndarray, layout: _Layout) -> np.ndarray:
    """Which of the messages at `starts` (all of the layout's size) have its fields."""
    heads = _words(buf, 8)[starts[:, None] + layout.at]
    matched: np.ndarray = ((heads & layout.mask) == layout.expect).all(axis=1)
    return matched


def _read_off(
    buf: np.ndarray,
    starts: np.ndarray,
    match: np.ndarray,
    layout: _Layout,
    out: Fields,
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> None:
    """The fields of messages `match` (positions into `starts`), laid out as `layout` says, into
    `out` and `found`."""
    if not len(match):
        return
    base = starts[match]
    value_start, value_end = layout.found
    found.append(
        (
            np.repeat(match, len(value_start)),
            (base[:, None] + value_start).ravel(),
            (base[:, None] + value_end).ravel(),
        )
    )
    for f, (start, end) in layout.spans.items():
        if f in out.spans:
            out.spans[f][0][match], out.spans[f][1][match] = base + start, base + end
    for f, at in layout.varints.items():
        if f in out.varints:
            out.varints[f][match] = _varints(buf, base + at, 10)[0]


def _layout(
    message: bytes,
    size: int,
    repeated: int,
    spans: tuple[int, ...],
    varints: tuple[int, ...],
    wanted: np.ndarray | None,
) -> _Layout | None:
    """The layout of the message message[:size] (PAD after it), or None where a field's head is
    over 8 bytes or the message does not follow protobuf's framing."""
    data = memoryview(message)
    at: list[int] = []
    masks: list[int] = []
    value_start: list[int] = []
    value_end: list[int] = []
    span_of: dict[int, tuple[int, int]] = {}
    varint_of: dict[int, int] = {}
    run_tag = repeated << 3 | _LENGTH
    pos = 0
    while pos < size:
        if data[pos] == run_tag and data[pos + 1] < 0x80:  # most fields: a value under 128 bytes
            field, wire, after = repeated, _LENGTH, pos + 2
            end = after + data[pos + 1]
            exact = checked = min(after + 3, end)  # with the bytes `wanted` decides on
        else:
            head = _field_head(data, pos, size, repeated)
            if head is None:
                return None
            field, wire, after, end, exact, checked = head
        if end > size:
            return None
        at.append(pos)
        # the head's bytes exact; a varint value's continuation bits (its length)
        masks.append((1 << 8 * (exact - pos)) - 1 | _CONTINUATION[exact - pos][checked - pos])
        if wire == _LENGTH and field == repeated and _kept_value(wanted, data, after, end):
            value_start.append(after)
            value_end.append(end)
        if wire == _LENGTH and field in spans:
            span_of[field] = (after, end)
        if wire == _VARINT and field in varints:
            varint_of[field] = after
        pos = end
    offsets = np.array(at, np.int64)
    mask = np.array(masks, np.uint64)
    return _Layout(
        offsets,
        mask,
        _words(np.frombuffer(message, np.uint8), 8)[offsets] & mask,
        (np.array(value_start, np.int64), np.array(value_end, np.int64)),
        span_of,
        varint_of,
    )


# _CONTINUATION[a][b]: the top bit of bytes a to b-1 of an 8-byte word
_CONTINUATION = [[sum(0x80 << 8 * j for j in range(a, b)) for b in range(9)] for a in range(9)]


def _field_head(
    data: memoryview, pos: int, size: int, repeated: int
) -> tuple[int, int, int, int, int, int] | None:
    """The field at `pos` of a message `size` bytes long: (field, wire type, where its value starts,
    where it ends, where its head's exact bytes end, where its checked bytes end), or None where
    they do not fit in 8 bytes or do not follow protobuf's framing. A varint field's value is
    where it starts (`after`); its bytes up to `end` are checked for their continuation bits."""
    tag, after_tag = _varint(data, pos, 5)
    if after_tag > size:
        return None
    field, wire = tag >> 3, tag & 7
    if wire == _VARINT:
        _, end = _varint(data, after_tag, 10)
        after, exact, checked = after_tag, after_tag, end
    elif wire == _LENGTH:
        number, after = _varint(data, after_tag, 10)
        end = after + number
        exact = checked = min(after + 3, end) if field == repeated else after
    elif wire in (_FIXED64, _FIXED32):
        after = exact = checked = after_tag
        end = after_tag + (8 if wire == _FIXED64 else 4)
    else:
        return None
    if field == 0 or checked - pos > 8 or end > size:
        return None
    return field, wire, after, end, exact, checked


def _kept_value(wanted: np.ndarray | None, data: memoryview, start: int, end: int) -> bool:
    """What `_kept` decides on a value (a value under 3 bytes is kept)."""
    if wanted is None or end - start < 3:
        return True
    return bool(wanted[int.from_bytes(data[start : start + 3], "little")])


class MetricColumns:
    """The wanted metrics of every launch, added batch by batch, as one array (or list) per column.

    `columns` maps string-table ids to columns; `launches` is how many launches the file holds.
    `name_id(raw)` and `cells(raw, column)` parse one serialized metric as a message: its name id,
    and its cells as {column name: value} (a `name:INSTANCE` column per instance for an instanced
    metric)."""

    def __init__(
        self,
        columns: dict[int, Column],
        launches: int,
        name_id: Callable[[bytes], int],
        cells: Callable[[bytes, Column], Mapping[str, float | str | None]],
    ) -> None:
        self._columns = list({c.name: c for c in columns.values()}.values())  # one per name
        index = {c.name: k for k, c in enumerate(self._columns)}
        # the last slot: any id beyond
        self._lookup = np.full(max(columns, default=-1) + 2, -1, np.int64)
        for i, column in columns.items():
            self._lookup[i] = index[column.name]
        self.by_bytes = _by_bytes(self._lookup)
        self._factor = np.array([c.factor for c in self._columns] + [1.0])
        self._numeric = np.array([not c.instanced for c in self._columns] + [False])
        self._name_id, self._cells = name_id, cells
        self._launches = launches
        # float64 per launch, NaN where the launch has no value
        self._values: dict[str, np.ndarray] = {}
        self._objects: dict[str, dict[int, object]] = {}  # text (or an empty value) by launch
        # (first launch, row-order name, instance position)
        self._first: dict[str, tuple[int, str, int]] = {}
        self._parsed: dict[
            tuple[bytes, str], Mapping[str, float | str | None]
        ] = {}  # text metrics (the GPU's name) repeat in every launch
        # the launch whose metric is parsed as a message now (which one was damaged)
        self.decoding = launches

    def add(
        self, buf: np.ndarray, launch: np.ndarray, starts: np.ndarray, ends: np.ndarray
    ) -> None:
        """The metrics at buf[starts[i]:ends[i]], of launches `launch` (in order; the buffer ends in
        PAD)."""
        col, kept, after, plain = self._wanted(buf, launch, starts, ends)
        col, at, end, launch, starts = col[kept], after, ends[kept], launch[kept], starts[kept]
        values, done = _numbers(buf, at, end, plain & self._numeric[col])
        self._store(launch[done], col[done], values[done] * self._factor[col[done]])
        rest = np.flatnonzero(~done)
        for group in _alike(buf, launch[rest], col[rest], starts[rest], end[rest]):
            first = rest[group[0]]
            self.decoding = int(launch[first])
            raw = buf[starts[first] : end[first]].tobytes()
            self._store_cells(launch[rest[group]], self._columns[col[first]], raw)
        self.decoding = self._launches

    def _wanted(
        self, buf: np.ndarray, launch: np.ndarray, starts: np.ndarray, ends: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each metric's column (-1: not wanted); which metrics are wanted, where their value field
        starts, and which hold their name id first (the rest are parsed as messages). Most metrics
        are not wanted: one gather of the two bytes after each tag, looked up in `_by_bytes`, sorts
        them; only a metric that is not a name id of one or two bytes first, with room for it, is
        read byte by byte."""
        word = _words(buf, 4)[starts]
        col = self.by_bytes[(word >> 8) & 0xFFFF]
        odd = np.flatnonzero(((word & 0xFF) != _NAME_ID) | (ends - starts < 3) | (col == _ODD))
        odd_after, odd_plain = self._odd(buf, launch, starts[odd], ends[odd], col, odd)
        kept = np.flatnonzero(col >= 0)
        # the name id's second byte follows where its first has the continuation bit
        after = starts[kept] + 2 + ((word[kept] >> 15) & 1).astype(np.int64)
        plain = np.ones(len(kept), bool)
        if len(odd):
            wanted_odd = col[odd] >= 0
            at = np.searchsorted(kept, odd[wanted_odd])
            after[at], plain[at] = odd_after[wanted_odd], odd_plain[wanted_odd]
        return col, kept, after, plain

    def _odd(
        self,
        buf: np.ndarray,
        launch: np.ndarray,
        starts: np.ndarray,
        ends: np.ndarray,
        col: np.ndarray,
        odd: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The columns of metrics `_by_bytes` cannot place (written into `col` at `odd`): where
        their value starts, and whether their name id came first (else the metric was parsed as a
        message, and its value is read there)."""
        ids, after = _varints(buf, starts + 1, 5)
        plain = (buf[starts] == _NAME_ID) & (after <= ends)  # the name id first, as ncu writes it
        after[~plain] = starts[~plain]  # an offset inside the buffer: the value is not read there
        col[odd[plain]] = self._lookup[np.minimum(ids[plain], len(self._lookup) - 1)]
        for i in np.flatnonzero(~plain):  # any other field order: parsed as a message
            self.decoding = int(launch[odd[i]])
            found = self._name_id(buf[starts[i] : ends[i]].tobytes())
            col[odd[i]] = self._lookup[found] if 0 <= found < len(self._lookup) else -1
        return after, plain

    def order(self) -> list[str]:
        """Column names in the order rows built one launch at a time would first show them: by the
        launch that first holds each, then by name (a launch's metrics are listed by name,
        ncu_report's order), instances in the order the launch lists them."""
        return sorted(self._first, key=self._first.__getitem__)

    def first_launch(self, name: str) -> int:
        return self._first[name][0]

    def column(self, name: str, count: int) -> np.ndarray | list[object]:
        """The cells of `name` for the first `count` launches: a float64 array, or a list where some
        are text."""
        values = self._values.get(name)
        objects = self._objects.get(name)
        if objects is None:
            assert values is not None  # a name seen holds numbers where it holds no text
            return values[:count]
        numbers: list[object] = (
            [None] * count
            if values is None
            else [None if v != v else v for v in values[:count].tolist()]
        )
        for launch, value in objects.items():
            numbers[launch] = value
        return numbers

    def _store(self, launch: np.ndarray, col: np.ndarray, values: np.ndarray) -> None:
        if not len(col):
            return
        order = np.argsort(col, kind="stable")  # a launch's values stay in order: the last one wins
        launch, col, values = launch[order], col[order], values[order]
        bounds = [0, *(np.flatnonzero(np.diff(col)) + 1).tolist(), len(col)]
        for a, b in itertools.pairwise(bounds):
            name = self._columns[col[a]].name
            self._array(name)[launch[a:b]] = values[a:b]
            self._seen(name, int(launch[a:b].min()), name, -1)

    def _store_cells(self, launches: np.ndarray, column: Column, raw: bytes) -> None:
        """The cells of one serialized metric, held alike by `launches` (each once)."""
        key = (raw, column.name)
        cells = self._parsed.get(key)
        if cells is None:
            # bounded: metrics that differ in every launch gain nothing
            if len(self._parsed) > 4096:
                self._parsed.clear()
            cells = self._parsed[key] = self._cells(raw, column)
        first = int(launches.min())
        for position, (name, value) in enumerate(cells.items()):
            if isinstance(value, float):
                self._array(name)[launches] = value
                objects = self._objects.get(name)
                if objects:
                    for launch in launches.tolist():
                        objects.pop(launch, None)
            else:
                self._objects.setdefault(name, {}).update(dict.fromkeys(launches.tolist(), value))
            self._seen(name, first, column.name, position if column.instanced else -1)

    def _array(self, name: str) -> np.ndarray:
        values = self._values.get(name)
        if values is None:
            values = self._values[name] = np.full(self._launches, np.nan)
        return values

    def _seen(self, name: str, launch: int, row_name: str, position: int) -> None:
        first = self._first.get(name)
        if first is None or launch < first[0]:
            self._first[name] = (launch, row_name, position)


def _alike(
    buf: np.ndarray, launch: np.ndarray, col: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> list[np.ndarray]:
    """The metrics at buf[starts[i]:ends[i]] in groups of the same column and bytes (positions
    into the arguments, in order), groups in the order of their first metric: a text metric (the
    GPU's name) is parsed once per batch, not once per launch. Where a metric is over 63 bytes, or
    a launch holds one column twice (the order of their cells matters), each is a group alone."""
    n = len(col)
    sizes = ends - starts
    pairs = launch * (int(col.max(initial=0)) + 1) + col
    if n < 2 or (sizes > 63).any() or len(np.unique(pairs)) < n:
        return [np.array([i]) for i in range(n)]
    rows = np.zeros((n, 72), np.uint8)  # the column (8 bytes), the size, the bytes zero-padded
    rows[:, :8] = col.astype("<i8").view(np.uint8).reshape(n, 8)
    rows[:, 8] = sizes
    inside = np.arange(63) < sizes[:, None]
    rows[:, 9:][inside] = buf[(starts[:, None] + np.arange(63))[inside]]
    # each row as one opaque value: sorted by its bytes, far faster than unique rows (axis=0)
    keys = rows.view("V72").ravel()
    _, first, which = np.unique(keys, return_index=True, return_inverse=True)
    members = np.argsort(which.ravel(), kind="stable")  # by group, in order within each
    groups = np.split(members, np.flatnonzero(np.diff(which.ravel()[members])) + 1)
    return [groups[g] for g in np.argsort(first, kind="stable")]


def _by_bytes(lookup: np.ndarray) -> np.ndarray:
    """The column of a name id from the two bytes after a metric's first tag, as one little-endian
    16-bit number: a one-byte varint is the low byte alone (the high byte is the next field); a
    two-byte one both; a longer one is _ODD (read byte by byte)."""
    low, high = np.arange(1 << 16) & 0xFF, np.arange(1 << 16) >> 8
    ids = np.where(low < 0x80, low, (low & 0x7F) | (high << 7))
    out = lookup[np.minimum(ids, len(lookup) - 1)]
    out[(low >= 0x80) & (high >= 0x80)] = _ODD
    return out


def wanted_starts(metrics: MetricColumns) -> np.ndarray:
    """`walk_fields`' `wanted` table for metrics, indexed by a metric's first three bytes as one
    little-endian number: False where they are a name id tag (0x08) and a name id of one or two
    bytes that no column wants."""
    wanted = np.ones(1 << 24, bool)
    wanted[_NAME_ID | (np.arange(1 << 16) << 8)] = metrics.by_bytes != -1
    return wanted


def _words(buf: np.ndarray, width: int) -> np.ndarray:
    """The `width` bytes at every offset of `buf` as one little-endian number, a view (no copy):
    gathering it at some offsets reads each one's bytes at once. `buf` ends in PAD, longer than
    `width`, so every offset a message holds has one."""
    return np.ndarray((len(buf) - width + 1,), f"<u{width}", buffer=buf, strides=(1,))


def _varints(buf: np.ndarray, at: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray]:
    """The varints starting at offsets `at` (at most `most` bytes each): their values and the
    offsets after them; an offset past the end of the buffer where one is longer."""
    byte = buf[at]
    value = (byte & 0x7F).astype(np.uint64)
    after = np.where(byte < 0x80, at + 1, len(buf) + 1)
    going = np.flatnonzero(byte >= 0x80)
    for k in range(1, most):
        if not len(going):
            break
        byte = buf[at[going] + k]
        value[going] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        ends = byte < 0x80
        after[going[ends]] = at[going[ends]] + k + 1
        going = going[~ends]
    value[going] = 0
    return value, after


def _numbers(
    buf: np.ndarray, at: np.ndarray, end: np.ndarray, eligible: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The numeric values of the metrics whose MetricValue field starts at `at` (each metric ending
    at `end`): float64 values, and which were read. A value is read only where it is the one field
    of a length under 128."""
    head = _words(buf, 4)[at]  # the field's tag, its length, the value's tag
    size = ((head >> 8) & 0xFF).astype(np.int64)
    inner = at + 2
    ok = eligible & ((head & 0xFF) == _VALUE) & (size < 0x80) & (inner + size <= end)
    tag = (head >> 16) & 0xFF
    values = np.full(len(at), np.nan)
    double = ok & (tag == _DOUBLE) & (size == 9)
    values[double] = _words(buf, 8)[inner[double] + 1].view("<f8")
    single = ok & (tag == _FLOAT) & (size == 5)
    values[single] = _words(buf, 4)[inner[single] + 1].view("<f4")
    integer = np.flatnonzero(ok & ((tag == _UINT32) | (tag == _UINT64)))
    number, after = _varints(buf, inner[integer] + 1, 10)
    exact = (after == inner[integer] + size[integer]) & (
        (tag[integer] == _UINT64) | (number < 1 << 32)
    )
    values[integer[exact]] = number[exact].astype(np.float64)
    done = double | single
    done[integer[exact]] = True
    return values, done
