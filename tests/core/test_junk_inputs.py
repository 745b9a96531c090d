"""Issue 38: junk in an input is refused where it starts, in about a second, with memory and $TMPDIR
bounded by the useful content: a real raw CSV padded with zero bytes (6.8x its size in RAM, exit 0),
a sparse file (12.6 GB RSS in 30 s), a compressed report followed by zeros (unpacked to GBs first),
a gzip bomb of text (4 GB written to $TMPDIR), and a full $TMPDIR (worded as a damaged file). Every
hostile input is built here from a real file."""

from __future__ import annotations

import gzip
import lzma
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..helpers.cli import CLI, run_cli, run_in_process
from ..helpers.peak_rss import run_measured

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
RAW = H100 / "train_transformer_bf16_bs8.csv.gz"  # ncu --csv --page raw, 1.1 MB
REPORT = H100 / "gemm_bf16_4096x4096x4096.ncu-rep.xz"
MIB = 1 << 20


def _one_line(code: int, out: str, err: str, *words: str) -> str:
    assert code == 2, (out, err)
    lines = err.strip().split("\n")
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _raw() -> bytes:
    return gzip.decompress(RAW.read_bytes())


@pytest.mark.parametrize("where", ["end", "middle"])
def test_a_raw_csv_padded_with_zeros_is_refused_where_they_start_in_bounded_memory(tmp_path, where):
    """Before: exit 0, the padding parsed as cells (64 MiB of zeros after line 40: 534 MB RSS)."""
    raw = _raw()
    head = raw if where == "end" else b"".join(raw.splitlines(keepends=True)[:40])
    padded = tmp_path / "padded.csv"
    padded.write_bytes(head + b"\0" * (64 * MIB) + raw[len(head) :])
    done, peak = run_measured("report", padded, "--no-cache", folder=tmp_path)
    _one_line(
        done.returncode,
        done.stdout,
        done.stderr,
        str(padded),
        f"zero bytes from byte {len(head):,} ",
    )
    assert peak < 300 * MIB, peak  # the interpreter with pandas is ~110 MB; the file is 65 MB


@pytest.mark.parametrize("content", ["report", "holes only"])
def test_a_sparse_file_is_refused_at_once(tmp_path, content):
    """`truncate -s 2G` after a real raw CSV: before, the reader ran past 60 s (12.6 GB RSS in 30
    s). Its hole is found without reading it (SEEK_HOLE), else by reading chunk by chunk."""
    raw = _raw() if content == "report" else b""
    sparse = tmp_path / "sparse.csv"
    sparse.write_bytes(raw)
    os.truncate(sparse, 2 << 30)
    start = time.monotonic()
    done, peak = run_measured("report", sparse, "--no-cache", folder=tmp_path)
    elapsed = time.monotonic() - start
    words = [f"zero bytes from byte {len(raw):,} "] if raw else ["unknown binary format"]
    _one_line(done.returncode, done.stdout, done.stderr, str(sparse), *words)
    assert elapsed < 20, elapsed  # ~1.5 s, most of it the interpreter's start
    assert peak < 300 * MIB, peak


def test_zeros_piped_in_are_refused_as_they_are_copied(tmp_path):
    """`cat padded.csv | flopscope report -`: the copy of standard input stops at the zeros."""
    raw = _raw()
    padded = tmp_path / "padded.csv"
    padded.write_bytes(raw + b"\0" * (64 * MIB))
    with padded.open("rb") as stdin:
        done = run_cli("report", "-", "--no-cache", stdin=stdin, env={"TMPDIR": str(tmp_path)})
    _one_line(
        done.returncode,
        done.stdout,
        done.stderr,
        "standard input",
        f"zero bytes from byte {len(raw):,} ",
    )


def test_a_utf16_csv_padded_with_zeros_is_refused_at_its_own_byte(tmp_path):
    """PowerShell's `>` writes UTF-16: the offset named is the file's, not its UTF-8 copy's, and no
    copy as big as the padding is made."""
    text = _raw().decode("utf-8").encode("utf-16")
    padded = tmp_path / "padded.csv"
    padded.write_bytes(text + b"\0" * (8 * MIB))
    # the last character, `\n` in UTF-16LE, ends with a zero byte
    first_zero = len(text.rstrip(b"\0"))
    _one_line(
        *run_in_process("report", padded, "--no-cache"), f"zero bytes from byte {first_zero:,} "
    )


def test_zeros_in_a_file_without_holes_are_found_by_reading(tmp_path):
    """A file system that does not say where its holes are (or zeros written out): the
    chunk-by-chunk read finds the run across a chunk boundary, naming its first byte."""
    from flopscope.core.common.errors import FlopscopeError
    from flopscope.core.readers.junk import refuse_junk_file

    raw = _raw()
    path = tmp_path / "r.csv"
    path.write_bytes(raw + b"\0" * 5000 + b'"1","x"\n')
    with pytest.raises(FlopscopeError, match=f"zero bytes from byte {len(raw):,} "):
        refuse_junk_file(path, chunk_size=len(raw) + 100)  # the run crosses the first chunk's end
    path.write_bytes(raw + b"\0" * 100 + raw)  # a few NULs (a hostile kernel name's) are no padding
    refuse_junk_file(path, chunk_size=1 << 16)


@pytest.mark.parametrize("compress", ["xz", "gzip"])
def test_a_compressed_report_followed_by_zeros_is_refused_while_unpacking(tmp_path, compress):
    """A real .ncu-rep then 1 GiB of zeros, compressed (a few hundred KB): before, all of it was
    unpacked to $TMPDIR (up to the cap: 2.1 GB and 55 s for the demo's) before the reader found the
    zero block."""
    report = lzma.decompress(REPORT.read_bytes())
    pack = lzma.compress if compress == "xz" else gzip.compress
    zeros = pack(b"\0" * (64 * MIB))
    path = tmp_path / f"padded.ncu-rep.{compress}"
    # concatenated streams: read as one by lzma and gzip
    path.write_bytes(pack(report) + zeros * 16)
    start = time.monotonic()
    done, peak = run_measured("report", path, "--no-cache", folder=tmp_path)
    _one_line(
        done.returncode,
        done.stdout,
        done.stderr,
        str(path),
        f"zero bytes where a block should start, at byte {len(report):,} of what it unpacks to",
    )
    assert time.monotonic() - start < 20
    assert peak < 300 * MIB, peak
    # the copy is gone
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("flopscope-")] == []


def test_a_gzip_bomb_of_one_endless_line_is_refused_at_the_line_cap(tmp_path, monkeypatch):
    """A raw CSV's header, then `a` with no line break (a gzip bomb): before, unpacked to the size
    cap (4 GB written to $TMPDIR for a 4 MB bomb). The line cap (64 MiB, 1 MiB here) stops it where
    the line starts."""
    from flopscope.core.readers import junk

    monkeypatch.setattr(junk, "MAX_LINE", MIB)
    raw = _raw()
    head = raw[: raw.index(b"\n", raw.index(b'"ID","')) + 1]
    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(head) + gzip.compress(b"a" * (8 * MIB)))
    _one_line(
        *run_in_process("report", bomb),
        str(bomb),
        f"a line of more than 1 MiB from byte {len(head):,} ",
    )


def test_a_gzip_bomb_of_one_row_repeated_is_refused(tmp_path, monkeypatch):
    """A raw CSV's header and units row, then its first launch's row over and over: before, read as
    thousands of launches with one ID (exit 0), or unpacked to the cap. Every ncu row carries its
    own ID: junk."""
    from flopscope.core.readers import junk

    monkeypatch.setattr(junk, "REPEATED_CHUNKS", 4)
    raw = _raw()
    header_end = raw.index(b"\n", raw.index(b'"ID","')) + 1
    units_end = raw.index(b"\n", header_end) + 1
    row = raw[units_end : raw.index(b"\n", units_end) + 1]
    bomb = tmp_path / "rows.csv.gz"
    bomb.write_bytes(gzip.compress(raw[:units_end] + row * (8 * MIB // len(row))))
    _one_line(
        *run_in_process("report", bomb),
        str(bomb),
        f"one line repeated over and over from byte {units_end:,} ",
    )


def test_real_reports_pass_the_junk_checks():
    """The checks are far from real output: the H100 capture's raw CSVs and compressed reports still
    open."""
    for name in ("train_transformer_bf16_bs8.csv.gz", "gemm_bf16_1000x1500x700.ncu-rep.xz"):
        code, _, err = run_in_process("report", H100 / name)
        assert code == 0, err


# -- a full $TMPDIR while unpacking
# ------------------------------------------------------------------------------
def test_a_full_tmpdir_while_unpacking_says_so(tmp_path):
    """A 64 KiB tmpfs as TMPDIR (needs root to mount): the 120 KB report cannot be unpacked there.
    Before: "damaged compressed file ([Errno 28] No space left on device)"."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True
    ).returncode:
        pytest.skip(
            "cannot mount a tmpfs here (needs root): the file size limit case below still runs"
        )
    try:
        done = subprocess.run(
            [*CLI, "report", str(REPORT), "--no-cache"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "TMPDIR": str(disk)},
        )
        line = _one_line(done.returncode, done.stdout, done.stderr)
        assert (
            line
            == f"flopscope: {REPORT}: cannot unpack it into {disk} (the temporary folder): no space"
            " left on device; free space there, or set TMPDIR to a folder on a disk with room"
        )
        assert list(disk.iterdir()) == []
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_file_size_limit_while_unpacking_says_so(tmp_path):
    """The same refusal from a file size limit (RLIMIT_FSIZE: EFBIG, any user)."""

    def limited() -> None:
        resource.setrlimit(
            resource.RLIMIT_FSIZE, (64 << 10, resource.getrlimit(resource.RLIMIT_FSIZE)[1])
        )

    done = subprocess.run(
        [sys.executable, "-m", "flopscope.tui.cli", "report", str(REPORT), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    line = _one_line(done.returncode, done.stdout, done.stderr)
    assert (
        line
        == f"flopscope: {REPORT}: cannot unpack it into {tmp_path} (the temporary folder): file too"
        " large for this file system or for the process's file size limit; raise the limit"
        " (`ulimit -f`), or set TMPDIR to a folder on a disk with room"
    )


def test_the_source_pages_unpacked_copy_takes_the_same_checks(tmp_path):
    """`report --source` and the Kernel screen's `v` unpack a compressed report again, for NVIDIA's
    ncu_report: before, padded with zeros, it was unpacked whole and handed over."""
    from flopscope.core.common.errors import FlopscopeError
    from flopscope.core.readers.ncu_rep_source import plain_report

    report = lzma.decompress(REPORT.read_bytes())
    path = tmp_path / "padded.ncu-rep.xz"
    path.write_bytes(lzma.compress(report + b"\0" * (16 * MIB), preset=1))
    expected = (
        f"zero bytes where a block should start, at byte {len(report):,} of what it unpacks to"
    )
    with pytest.raises(FlopscopeError, match=expected), plain_report(path):
        pass


def test_a_progress_bars_updates_are_no_endless_line(tmp_path, monkeypatch):
    """A program's progress bar (`\\r` updates, no line break) in ncu's console output ends lines as
    `\\n` does; `a` with neither is refused, naming where the line starts."""
    from flopscope.core.common.errors import FlopscopeError
    from flopscope.core.readers import junk

    monkeypatch.setattr(junk, "MAX_LINE", 1 << 16)
    raw = _raw()
    path = tmp_path / "console.csv"
    path.write_bytes(
        b"".join(b"\r%3d%%|###  | step %d" % (k % 100, k) for k in range(20000)) + b"\n" + raw
    )
    junk.refuse_junk_file(path, chunk_size=1 << 14)
    path.write_bytes(raw + b"a" * (1 << 17))
    with pytest.raises(
        FlopscopeError, match=f"a line of more than 0.0625 MiB from byte {len(raw):,} "
    ):
        junk.refuse_junk_file(path, chunk_size=1 << 14)


def test_a_compressed_report_followed_by_repeated_junk_is_refused_at_the_reports_end(tmp_path):
    """Junk that is not zeros (a pattern repeated: it compresses as well) read as the next block's
    length prefix: far longer than any block header ncu writes. Before: unpacked up to the cap."""
    report = lzma.decompress(REPORT.read_bytes())
    path = tmp_path / "junk.ncu-rep.xz"
    path.write_bytes(lzma.compress(report + b"ABCD" * (16 * MIB), preset=1))
    size = int.from_bytes(b"ABCD", "little")
    _one_line(
        *run_in_process("report", path, "--no-cache"),
        f"a header {size:,} bytes long at byte {len(report):,} of what it unpacks to",
    )
