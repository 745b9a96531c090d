"""Issue 38.1a: bytes that are no UTF-8 in a CSV (a kernel name, an NVTX range or a program's own
line holds whatever bytes it was given) are read, shown as U+FFFD, and nothing else reaches stderr:
pyarrow's CSV reader printed "Exception ignored ... UnicodeDecodeError" when such a row was one it
had to hand to its handler."""

from __future__ import annotations

import csv
import io
import json

import pytest
from flopscope.core.common.utf8_repair import Utf8Repaired

from ..conftest import fixture_path
from ..helpers.cli import run_cli

# rule rows (wider than metric rows) in every launch
DETAILS = "t4_nsightful_copy_blocked_details.csv"
RAW = "b200_torch_sdpa_auto_raw.csv"  # ncu's ==PROF== lines before the header


def _with_bad_name(data: bytes) -> bytes:
    """Every row's kernel name (the fifth cell) with 0xFF 0xC3 in it: no UTF-8 (a lone lead byte, a
    cut one)."""
    lines = data.split(b"\n")
    for k, line in enumerate(lines[1:], 1):
        cells = line.split(b'","')
        if len(cells) > 5:
            cells[4] = cells[4][:4] + b"\xff\xc3" + cells[4][4:]
            lines[k] = b'","'.join(cells)
    return b"\n".join(lines)


def _durations_ns(text: str) -> list[float]:
    """gpu__time_duration.sum of each launch of the details page, by Python's csv (every value there
    is in ns)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["Metric Unit"] for r in rows if r["Metric Name"] == "Duration"} == {"ns"}
    return [
        float(r["Metric Value"].replace(",", "")) for r in rows if r["Metric Name"] == "Duration"
    ]


def _clean_run(path, tmp_path) -> tuple[int, str]:
    """`flopscope report --json PATH` in its own process (pytest catches unraisable exceptions in
    its own); (exit code, stdout), stderr holding nothing of Python's."""
    done = run_cli("report", "--json", path, home=tmp_path / "home")
    for said in ("UnicodeDecodeError", "Exception ignored", "Traceback"):
        assert said not in done.stderr, done.stderr
    return done.returncode, done.stdout


def test_details_page_with_bytes_that_are_no_utf8_reads_with_replacements(tmp_path):
    source = fixture_path(DETAILS).read_bytes()
    path = tmp_path / "odd_bytes.csv"
    path.write_bytes(_with_bad_name(source))
    code, out = _clean_run(path, tmp_path)
    assert code == 0
    report = json.loads(out)
    assert report["rows"] and all("\ufffd" in row["kernel_full"] for row in report["rows"])
    expected = _durations_ns(source.decode("utf-8-sig"))
    assert report["meta"]["launches"] == len(expected)
    assert report["meta"]["summary"]["total_time_s"] == pytest.approx(sum(expected) * 1e-9)


def test_raw_page_with_a_program_line_that_is_no_utf8(tmp_path):
    """A `==PROF==` line (skipped by the reader) carrying a program's path in another encoding."""
    lines = fixture_path(RAW).read_bytes().split(b"\n")
    lines.insert(4, b"==PROF== Connected to process 7 (/home/j\xe9r\xf4me/run\xff)")
    path = tmp_path / "odd_line.csv"
    path.write_bytes(b"\n".join(lines))
    code, out = _clean_run(path, tmp_path)
    assert code == 0
    table = [
        r
        for r in csv.reader(io.StringIO(fixture_path(RAW).read_text()))
        if r and not r[0].startswith("==")
    ]
    assert len(json.loads(out)["rows"]) == len({r[4] for r in table[2:]})  # one row per kernel name


def test_repaired_stream_keeps_reads_within_the_size_asked():
    """Arrow refuses a Python file whose read(n) returns more than n bytes: a replaced byte grows to
    three."""
    # ends inside a character
    source = io.BytesIO(b"ab\xff\xfe\xfdcd" * 1000 + "é".encode() + b"\xe2\x82")
    stream = Utf8Repaired(source)
    pieces = []
    while piece := stream.read(5):
        assert len(piece) <= 5
        pieces.append(piece)
    text = b"".join(pieces).decode("utf-8")  # valid UTF-8, or this raises
    assert text == ("ab\ufffd\ufffd\ufffdcd" * 1000) + "é\ufffd"
