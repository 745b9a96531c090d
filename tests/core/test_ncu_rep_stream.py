"""The streaming .ncu-rep reader gives the table NVIDIA's ncu_report gives, on every real report the
project has (shared fixtures from ncu 2019-2025 and GPUs from V100 to H800, the H100 capture from
ncu 2025.3.1, the demo), and hands what it cannot vouch for to ncu_report instead of guessing."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core import FlopscopeError
from flopscope.core.readers import ncu_rep, read_metrics
from flopscope.core.readers.ncu_rep_stream import Damaged, Unsupported, message_classes, read_table

from ..conftest import FIXTURES
from ..helpers.real_files import DEMO, GPU_DATA, ROOT, plain_copy

CAPTURED = sorted(GPU_DATA.rglob("*.ncu-rep.xz")) + sorted(
    (ROOT / "tui" / "examples").glob("*.ncu-rep.xz")
)
SHARED = sorted(FIXTURES.glob("*.ncu-rep")) if FIXTURES.is_dir() else []


def _same(a: object, b: object) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    return a == b


def test_the_real_reports_are_all_here():
    """Without them the equality test below would pass on nothing."""
    assert len(CAPTURED) >= 25, CAPTURED
    if not SHARED:
        pytest.skip(f"shared ncu fixtures not found at {FIXTURES}")
    assert len(SHARED) >= 9


@pytest.mark.parametrize("report", SHARED + CAPTURED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_streaming_reader_equals_ncu_report_column_by_column(report, tmp_path):
    path = plain_copy(report, tmp_path)
    expected, meta = ncu_rep._read_with_ncu_report(path)
    assert meta["reader"] == "ncu_report"
    got = read_table(path)
    for col in expected.columns.difference(got.columns):  # identity ncu_rep adds as empty columns
        assert expected[col].isna().all(), col
        got[col] = None
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected) > 0
    for col in expected.columns:
        assert got[col].dtype == expected[col].dtype, col
        bad = [
            (i, a, b)
            for i, (a, b) in enumerate(zip(expected[col], got[col], strict=True))
            if not _same(a, b)
        ]
        assert not bad, (col, bad[:3])


def test_read_metrics_uses_the_streaming_reader_and_says_which(tmp_path):
    frame, meta = read_metrics(plain_copy(CAPTURED[0], tmp_path))
    assert meta["reader"] == "stream" and "note" not in meta
    assert len(frame) > 0


def test_the_ncu_report_reader_can_be_forced(tmp_path, monkeypatch):
    monkeypatch.setenv(ncu_rep.READER_ENV, "ncu_report")
    _, meta = read_metrics(plain_copy(CAPTURED[0], tmp_path))
    assert meta["reader"] == "ncu_report"


def _with_version(source: Path, out: Path, version: int) -> Path:
    data = source.read_bytes()
    (size,) = struct.unpack_from("<I", data, 4)
    header = message_classes()["FileHeader"](Version=version).SerializeToString()
    out.write_bytes(data[:4] + struct.pack("<I", len(header)) + header + data[8 + size :])
    return out


def test_an_unknown_file_version_is_read_by_ncu_report_with_a_note(tmp_path):
    """A newer ncu may store values differently: never guess, let NVIDIA's reader read it."""
    report = _with_version(plain_copy(CAPTURED[0], tmp_path), tmp_path / "v99.ncu-rep", 99)
    with pytest.raises(Unsupported, match="version 99"):
        read_table(report)
    frame, meta = read_metrics(report)
    assert meta["reader"] == "ncu_report" and "version 99" in meta["note"]
    assert len(frame) > 0


def test_a_truncated_report_is_refused_without_ncu_report(tmp_path, monkeypatch):
    """The fast reader finds the cut itself and says how many launches were whole; ncu_report is not
    asked (its C++ aborts the process on some damaged files)."""
    import re

    source = plain_copy(CAPTURED[-1], tmp_path)
    total = len(read_table(source))
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(source.read_bytes()[: source.stat().st_size * 2 // 3])
    with pytest.raises(Damaged):
        read_table(cut)
    monkeypatch.setattr(
        ncu_rep,
        "_read_with_ncu_report",
        lambda path, progress=None: pytest.fail("handed to ncu_report"),
    )
    with pytest.raises(FlopscopeError) as err:
        read_metrics(cut)
    found = re.search(r"truncated after (\d+) intact launch", err.value.line())
    assert found and 0 < int(found.group(1)) < total, err.value.line()


def test_a_report_with_its_result_blocks_repeated_reads_every_copy(tmp_path):
    """What the benchmark does to make a 10k-launch report: the copies read as launches of their
    own."""
    from benchmarks.make_big_report import repeat_launches

    source = plain_copy(DEMO, tmp_path)
    once = read_table(source)
    big = repeat_launches(source, tmp_path / "big.ncu-rep", copies=3)
    thrice = read_table(big)
    assert len(thrice) == 3 * len(once)
    again = thrice.iloc[len(once) : 2 * len(once)].reset_index(drop=True)
    pd.testing.assert_series_equal(again["gpu__time_duration.sum"], once["gpu__time_duration.sum"])
    assert (again["kernel_full"] == once["kernel_full"]).all()
    assert thrice["launch_id"].tolist() == list(range(len(thrice)))
    expected, _ = ncu_rep._read_with_ncu_report(big)
    assert len(expected) == len(thrice)


def test_the_fallback_note_is_one_line_on_stderr_and_in_json(tmp_path):
    import json

    from ..helpers.cli import run_cli

    report = _with_version(plain_copy(CAPTURED[0], tmp_path), tmp_path / "v99.ncu-rep", 99)
    done = run_cli("report", report, "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "version 99" in json.loads(done.stdout)["meta"]["reader_note"]
    notes = [line for line in done.stderr.splitlines() if "streaming reader" in line]
    assert len(notes) == 1 and str(report) in notes[0]


def _strings_moved_to_the_end(source: Path, out: Path) -> Path:
    """The same report with every string table moved, in order, into the last block's header: each
    launch then names metrics before any table has defined them (as the H800 fixture does for a
    few)."""
    kinds = message_classes()
    data = source.read_bytes()
    (size,) = struct.unpack_from("<I", data, 4)
    head, offset, blocks, strings = data[: 8 + size], 8 + size, [], []
    while offset < len(data):
        (size,) = struct.unpack_from("<I", data, offset)
        header = kinds["BlockHeader"].FromString(data[offset + 4 : offset + 4 + size])
        payload = data[offset + 4 + size : offset + 4 + size + header.PayloadSize]
        offset += 4 + size + header.PayloadSize
        strings += header.StringTable.Strings
        header.ClearField("StringTable")
        blocks.append((header, payload))
    blocks[-1][0].StringTable.Strings.extend(strings)
    body = b"".join(
        struct.pack("<I", len(h := header.SerializeToString())) + h + payload
        for header, payload in blocks
    )
    out.write_bytes(head + body)
    return out


def test_metrics_named_before_their_string_table_still_read(tmp_path):
    source = plain_copy(CAPTURED[-1], tmp_path)
    expected = read_table(source)
    moved = read_table(_strings_moved_to_the_end(source, tmp_path / "moved.ncu-rep"))
    assert "gpu__time_duration.sum" in moved
    pd.testing.assert_frame_equal(moved, expected)


def _results(path: Path) -> list[bytes]:
    """Every serialized ProfileResult of a report, in order, from its framing."""
    kinds = message_classes()
    data = path.read_bytes()
    (size,) = struct.unpack_from("<I", data, 4)
    offset, results = 8 + size, []
    while offset < len(data):
        (size,) = struct.unpack_from("<I", data, offset)
        header = kinds["BlockHeader"].FromString(data[offset + 4 : offset + 4 + size])
        cursor = offset + 4 + size
        for _ in range(header.NumSources):
            cursor += 4 + struct.unpack_from("<I", data, cursor)[0]
        for _ in range(header.NumResults):
            (n,) = struct.unpack_from("<I", data, cursor)
            results.append(data[cursor + 4 : cursor + 4 + n])
            cursor += 4 + n
        offset += 4 + size + header.PayloadSize
    return results


def _walk(results: list[bytes], lockstep: bool, cut: int | None = None):
    import numpy as np
    from flopscope.core.readers.ncu_rep_columns import PAD, walk_fields

    ends = np.cumsum([len(r) for r in results])
    starts = ends - [len(r) for r in results]
    if cut is not None:  # a message that ends in the middle of a field
        ends[cut] -= 3
    buf = np.frombuffer(b"".join([*results, PAD]), np.uint8)
    fields = walk_fields(buf, starts, ends, 13, (5, 6, 7, 21), (1, 2), lockstep=lockstep)
    order = np.lexsort((fields.repeated[1], fields.repeated[0]))
    return (
        [a[order].tolist() for a in fields.repeated],
        {f: [a.tolist() for a in pair] for f, pair in fields.spans.items()},
        {f: a.tolist() for f, a in fields.varints.items()},
        fields.broken,
    )


@pytest.mark.parametrize("report", SHARED + CAPTURED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_walk_of_all_launches_at_once_finds_what_one_at_a_time_finds(report, tmp_path):
    """The two ways ncu_rep_columns.walk_fields steps through results (in lockstep with numpy for
    many launches, in Python for a few) give the same fields, and stop at the same broken
    message."""
    results = _results(plain_copy(report, tmp_path))
    one_by_one = _walk(results, lockstep=False)
    assert one_by_one == _walk(results, lockstep=True)
    metrics = message_classes()["Result"].FromString(results[0]).MetricResults
    # the first launch's first metric, as protobuf reads it
    start, end = one_by_one[0][1][0], one_by_one[0][2][0]
    assert b"".join(results)[start:end] == metrics[0]
    assert one_by_one[3] is None
    broken = len(results) // 2
    assert (
        _walk(results, lockstep=False, cut=broken)[3]
        == _walk(results, lockstep=True, cut=broken)[3]
        == broken
    )


def _fields(data: bytes) -> list[bytes]:
    """A message's top-level fields, each whole (tag, length or value), in order."""
    from flopscope.core.readers.ncu_rep_columns import _varint

    view, fields, pos = memoryview(data + bytes(16)), [], 0
    while pos < len(data):
        tag, after = _varint(view, pos, 5)
        number, end = _varint(view, after, 10)
        end = {0: end, 1: after + 8, 2: end + number, 5: after + 4}[tag & 7]
        fields.append(data[pos:end])
        pos = end
    return fields


def _alike_but_other(result: bytes) -> tuple[bytes, bytes, int]:
    """Two messages of `result`'s size laid out otherwise: two of its metrics of different lengths
    swapped, and its first metric's one-byte name id changed (its framing kept) by 0x40; and that
    id as it was."""
    fields = _fields(result)
    metrics = [i for i, f in enumerate(fields) if f[0] == 0x6A and f[2] == 0x08 and f[3] < 0x80]
    a = metrics[0]
    b = next(i for i in metrics if len(fields[i]) != len(fields[a]))
    swapped = list(fields)
    swapped[a], swapped[b] = fields[b], fields[a]
    renamed = list(fields)
    renamed[a] = fields[a][:3] + bytes([fields[a][3] ^ 0x40]) + fields[a][4:]
    return b"".join(swapped), b"".join(renamed), fields[a][3]


def _walk_batches(results, batch, layouts, wanted=None):
    """walk_fields over `results` a batch at a time (each batch a buffer of its own, as a read
    gives it), as lists: (launch, the value's bytes) of the repeated field in message order, the
    spans' bytes, the varints, the first broken launch."""
    import numpy as np
    from flopscope.core.readers.ncu_rep_columns import PAD, walk_fields

    found, spans, varints = [], {}, {}
    for first in range(0, len(results), batch):
        part = results[first : first + batch]
        ends = np.cumsum([len(r) for r in part])
        starts = ends - [len(r) for r in part]
        raw = b"".join([*part, PAD])
        buf = np.frombuffer(raw, np.uint8)
        fields = walk_fields(buf, starts, ends, 13, (5, 6, 7, 21), (1, 2), True, wanted, layouts)
        if fields.broken is not None:
            return found, spans, varints, first + fields.broken
        launch, start, end = (a.tolist() for a in fields.repeated)
        found += sorted(
            (first + m, a, raw[a:b]) for m, a, b in zip(launch, start, end, strict=True)
        )
        for f, (a, b) in fields.spans.items():
            spans.setdefault(f, []).extend(
                raw[i:j] if i >= 0 else None for i, j in zip(a, b, strict=True)
            )
        for f, values in fields.varints.items():
            varints.setdefault(f, []).extend(values.tolist())
    return [(m, value) for m, _, value in found], spans, varints, None


def test_launches_laid_out_alike_are_read_off_their_layout(tmp_path, monkeypatch):
    """ncu_rep_columns.Layouts: messages of a size seen before are checked against that size's
    layouts and read off the one they match; messages of that size laid out otherwise (two metrics
    swapped, a metric's name id changed) and a broken one are walked. The same fields, the same
    broken launch and (with a `wanted` filter) the same wanted values as the lockstep walk."""
    import numpy as np
    from flopscope.core.readers import ncu_rep_columns
    from flopscope.core.readers.ncu_rep_columns import Layouts

    results = _results(plain_copy(DEMO, tmp_path))
    swapped, renamed, name_id = _alike_but_other(results[3])
    assert len(swapped) == len(renamed) == len(results[3]) and swapped != results[3]
    launches = results * 6 + [swapped, renamed, results[3]] + results
    checked, matched = [], []
    matches = ncu_rep_columns._matches

    def counted(buf, starts, layout):
        match = matches(buf, starts, layout)
        checked.append(len(match))
        matched.append(int(match.sum()))
        return match

    monkeypatch.setattr(ncu_rep_columns, "_matches", counted)
    monkeypatch.setattr(Layouts, "_BUDGET_FIRST", 1000)  # every size seen again has a layout
    plain = _walk_batches(launches, 91, None)
    assert _walk_batches(launches, 91, Layouts()) == plain
    assert sum(matched) > 5 * len(results)  # most launches after the first batch
    assert sum(checked) - sum(matched) >= 2  # the swapped and the renamed one
    # `wanted` a filter only: every value it does not rule out (by its first three bytes) is
    # found, and the launches read off a layout leave out those it does. The renamed metric's id
    # is wanted, the one it had not: a layout that did not check it would leave it out.
    wanted = np.ones(1 << 24, bool)
    unwanted_ids = np.arange(0x40) | (name_id & 0x40)
    wanted[0x08 | unwanted_ids << 8 | np.arange(256)[:, None] << 16] = False
    filtered = _walk_batches(launches, 91, Layouts(), wanted)
    unwanted = {
        (m, v) for m, v in plain[0] if len(v) >= 3 and not wanted[int.from_bytes(v[:3], "little")]
    }
    assert [p for p in filtered[0] if p not in unwanted] == [
        p for p in plain[0] if p not in unwanted
    ]
    assert set(filtered[0]) <= set(plain[0])
    assert len(unwanted - set(filtered[0])) > len(unwanted) // 4
    assert filtered[1:] == plain[1:]
    # a message cut short, of a size with a layout: broken where the lockstep walk finds it
    cut = len(results) * 5 + 5
    broken, last = list(launches), len(_fields(launches[cut])[-1])
    # its last field's head made a metric's, whose length runs past the message's end
    broken[cut] = launches[cut][:-last] + bytes([0x6A, 0x7F]).ljust(last, b"\0")
    assert _walk_batches(broken, 91, Layouts())[3] == cut
    assert _walk_batches(broken, 91, None)[3] == cut


def test_a_launch_with_a_damaged_metric_is_refused_and_counted(tmp_path):
    """A metric whose bytes do not parse (framing intact): Damaged, naming how many launches came
    before it, not a protobuf traceback."""
    source = plain_copy(DEMO, tmp_path)
    kinds = message_classes()
    data = bytearray(source.read_bytes())
    results = _results(source)
    damaged = 5
    first = kinds["Result"].FromString(results[damaged]).MetricResults[0]
    at = data.find(results[damaged]) + bytes(results[damaged]).find(first)
    assert first[0] == 0x08
    data[at] = 0x0F  # the name id's tag becomes wire type 7, which protobuf refuses
    bad = tmp_path / "bad.ncu-rep"
    bad.write_bytes(bytes(data))
    with pytest.raises(Damaged) as err:
        read_table(bad)
    assert err.value.launches == damaged
    with pytest.raises(FlopscopeError, match=r"cannot read this \.ncu-rep"):
        read_metrics(bad)


@pytest.mark.parametrize("report", SHARED + CAPTURED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_readers_shortcuts_change_no_cell(report, tmp_path, monkeypatch):
    """Two shortcuts of the 100k-launch read (issue 44) are shortcuts only: the lockstep walk's
    filter (metrics no column wants left out by their first three bytes) and the parse of a batch's
    alike text metrics once. With neither (nothing left out, every metric parsed alone) every real
    report, walked in lockstep whatever its size, reads to the same table cell for cell."""
    import numpy as np
    from flopscope.core.readers import ncu_rep_columns, ncu_rep_stream

    path = plain_copy(report, tmp_path)
    monkeypatch.setattr(ncu_rep_columns, "LOCKSTEP_FROM", 1)
    fast = read_table(path)
    monkeypatch.setattr(ncu_rep_stream, "wanted_starts", lambda metrics: np.ones(1 << 24, bool))
    monkeypatch.setattr(
        ncu_rep_columns, "_alike", lambda buf, launch, col, *_: [[i] for i in range(len(col))]
    )
    pd.testing.assert_frame_equal(fast, read_table(path), check_exact=True)


def test_block_headers_read_without_pread_give_the_same_table(tmp_path, monkeypatch):
    """The block headers are read by os.pread where there is one; without it (Windows), through
    the mapping: the same table."""
    from flopscope.core.readers import ncu_rep_stream

    path = plain_copy(DEMO, tmp_path)
    expected = read_table(path)
    monkeypatch.delattr(ncu_rep_stream.os, "pread")
    pd.testing.assert_frame_equal(read_table(path), expected, check_exact=True)


def test_the_heap_is_kept_only_while_a_report_of_several_batches_is_read(monkeypatch):
    """glibc's top pad is raised for a read of several batches and set back after it, also when
    the read fails; a report of one batch leaves it alone."""
    from flopscope.core.readers import ncu_rep_stream

    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(ncu_rep_stream, "_mallopt", lambda: lambda *args: calls.append(args))
    with ncu_rep_stream._heap_kept(ncu_rep_stream._BATCH_BYTES):
        assert calls == []
    with pytest.raises(Damaged), ncu_rep_stream._heap_kept(2 * ncu_rep_stream._BATCH_BYTES):
        assert calls == [(ncu_rep_stream._M_TOP_PAD, 64 << 20)]
        raise Damaged("cut short")
    assert calls[1:] == [(ncu_rep_stream._M_TOP_PAD, ncu_rep_stream._TOP_PAD_DEFAULT)]
