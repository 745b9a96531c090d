"""Issue 24: reading one input is bounded. Decompression bombs and endless streams stop at a cap
(one line, exit 2, memory flat), a named pipe nobody writes to is refused instead of blocking
forever, damaged compressed files and unreadable paths are one line, never a traceback."""

from __future__ import annotations

import bz2
import gzip
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import fixture_path
from ..helpers.cli import permissions_bind, run_cli, run_in_process

DETAILS = "t4_nsightful_copy_blocked_details.csv"


def _one_line(code: int, out: str, err: str, *words: str) -> str:
    assert code == 2, (out, err)
    lines = err.strip().split("\n")
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _bz2_bomb(path, gib: float) -> None:
    """`gib` GiB of CSV-like text as repeated bzip2 streams (bz2 reads concatenated streams as one
    file): a few KB. Text, since a stream whose first bytes are neither an .ncu-rep's nor text is
    refused at once."""
    one = bz2.compress(b'"1","k"\n' * (2 << 20))
    path.write_bytes(one * int(gib * 64))


def test_decompression_bomb_is_refused_within_a_memory_bound(tmp_path):
    """~64 KB of bzip2 that unpack to 1 GiB wrote all of it to $TMPDIR; now it is stopped (its one
    row repeated is junk; else the default cap, 1000x the file, at least 256 MiB, would stop it), in
    a process limited to 1.5 GiB of address space, with its temporary folder gone."""
    bomb = tmp_path / "report.csv.bz2"
    _bz2_bomb(bomb, 1)
    # ~64 KB: the cap is its floor, 256 MiB, not 1000x the file
    assert bomb.stat().st_size < 100_000
    temp = tmp_path / "tmp"
    temp.mkdir()
    limited = (
        "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 <<"
        " 20)); sys.argv = ['flopscope', 'report', sys.argv[1]];"
        " runpy.run_module('flopscope.tui.cli', run_name='__main__')"
    )
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", limited, str(bomb)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    # One row repeated: junk (junk.py), refused after 64 MiB, before the cap (256 MiB here) is
    # reached.
    line = _one_line(
        done.returncode, done.stdout, done.stderr, str(bomb), "one line repeated", "from byte 8 "
    )
    assert "MemoryError" not in line
    assert time.monotonic() - start < 60
    assert list(temp.iterdir()) == []  # the partial copy is gone


def test_cap_is_configurable(tmp_path):
    bomb = tmp_path / "r.bz2"
    _bz2_bomb(bomb, 1 / 16)  # 64 MiB: under the default floor, over a cap of 16M
    _one_line(*run_in_process("report", bomb, env={"FLOPSCOPE_MAX_INPUT": "16M"}), "16M")
    _one_line(
        *run_in_process("report", bomb, env={"FLOPSCOPE_MAX_INPUT": "lots"}),
        "FLOPSCOPE_MAX_INPUT=lots",
        "not a size",
    )


def test_real_compressed_reports_still_open(tmp_path):
    """The cap is far from real ratios: the H100 capture's xz report and gzip CSV open as before."""
    folder = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
    for name in ("gemm_fp16_1000x1500x700.ncu-rep.xz", "gemm_fp16_1000x1500x700.csv.gz"):
        code, _, err = run_in_process("report", folder / name)
        assert code == 0, err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_an_endless_device_of_junk_is_refused_at_its_first_bytes(device):
    """`report /dev/zero` copied 2.7 GB into $TMPDIR in 5 s, and on; later it stopped at the 4 GiB
    cap after ~20 s. Its first bytes are neither an .ncu-rep's nor text: refused before any copy
    grows."""
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    _one_line(*run_in_process("report", device), device, "is not an ncu report")


def test_an_endless_text_stream_is_capped():
    """Text that never ends (`yes` on standard input) stops at the size cap, one line."""
    writer = subprocess.Popen(["yes", '"1","k"'], stdout=subprocess.PIPE)
    try:
        done = run_cli(
            "report", "-", stdin=writer.stdout, env={"FLOPSCOPE_MAX_INPUT": "8M"}, timeout=60
        )
    finally:
        writer.kill()
        writer.wait()
    _one_line(done.returncode, done.stdout, done.stderr, "standard input", "8M")


def test_named_pipe_without_writer_is_refused(tmp_path):
    """`report FIFO` with no writer blocked forever (in `open`)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    start = time.monotonic()
    done = run_cli("report", fifo, env={"FLOPSCOPE_FIFO_WAIT": "0.5"}, timeout=60)
    _one_line(
        done.returncode, done.stdout, done.stderr, str(fifo), "named pipe", "FLOPSCOPE_FIFO_WAIT"
    )
    assert time.monotonic() - start < 30


def test_named_pipe_with_a_slow_writer_is_read(tmp_path):
    """A writer that opens the pipe and writes only later (ncu profiling first) is waited for."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; f = open(sys.argv[1], 'wb'); "
                "time.sleep(1.5); f.write(open(sys.argv[2], 'rb').read()); f.close()"
            ),
            str(fifo),
            str(fixture_path(DETAILS)),
        ]
    )
    try:
        done = run_cli("report", fifo, env={"FLOPSCOPE_FIFO_WAIT": "5"}, timeout=60)
    finally:
        writer.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    assert "copy_blocked" in done.stdout


def test_damaged_deflate_stream_is_one_line(tmp_path):
    """A gzip header over a damaged deflate stream raised zlib.error (not an OSError) from the
    copy."""
    path = tmp_path / "r.csv.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"\xff" * 100)
    _one_line(*run_in_process("report", path), str(path), "damaged compressed file")


@pytest.mark.parametrize("seed", range(16))
def test_bit_flips_in_a_gzip_compressed_ncu_rep(tmp_path, seed):
    """Bit flips inside a gzip-compressed .ncu-rep: a traceback from the compressed-input path in
    the first fuzz run. Every flip is a CRC or deflate error or a damaged report, in one line."""
    data = bytearray(gzip.compress(fixture_path("t4_mlp_matadd_full.ncu-rep").read_bytes(), 1))
    rng = random.Random(seed)
    for _ in range(rng.choice([1, 4, 32])):
        at = rng.randrange(10, len(data))
        data[at] ^= 1 << rng.randrange(8)
    path = tmp_path / "r.ncu-rep.gz"
    path.write_bytes(bytes(data))
    code, out, err = run_in_process("report", path)
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        _one_line(code, out, err, str(path))


def test_compressed_twice_is_refused(tmp_path):
    path = tmp_path / "r.csv.gz.gz"
    path.write_bytes(gzip.compress(gzip.compress(fixture_path(DETAILS).read_bytes())))
    _one_line(*run_in_process("report", path), "compressed twice")


def _permissions_bind() -> tuple[str, ...]:
    prefix = permissions_bind()
    if prefix is None:
        pytest.skip(
            "root cannot drop CAP_DAC_OVERRIDE here (no setpriv, or no CAP_SETPCAP): permissions"
            " never bind"
        )
    return prefix


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("report", "locked/r.csv"),
        ("open", "locked/r.csv"),
        ("report", "locked"),
        ("import", "locked"),
    ],
)
def test_folder_without_search_permission(tmp_path, command, target):
    """A report in a folder without x, or such a run folder itself: one line saying permission
    denied, never a traceback (Path.is_dir raises there) nor "no such run". As root (CI), run
    without the capabilities that let root into any folder."""
    prefix = _permissions_bind()
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "r.csv").write_bytes(fixture_path(DETAILS).read_bytes())
    (folder / "report.ncu-rep").write_bytes(fixture_path(DETAILS).read_bytes())
    folder.chmod(0o600)
    try:
        extra = ["--no-tui"] if command == "open" else []
        done = run_cli(command, tmp_path / target, *extra, home=tmp_path / "h", prefix=prefix)
    finally:
        folder.chmod(0o700)
    _one_line(done.returncode, done.stdout, done.stderr, str(folder), "permission denied")


def test_unreadable_file(tmp_path):
    """The same for a file without r."""
    prefix = _permissions_bind()
    path = tmp_path / "r.csv"
    path.write_bytes(fixture_path(DETAILS).read_bytes())
    path.chmod(0)
    done = run_cli("report", path, home=tmp_path / "h", prefix=prefix)
    _one_line(done.returncode, done.stdout, done.stderr, str(path), "permission denied")


@pytest.mark.parametrize("command", ["report", "open", "import", "export"])
def test_a_name_too_long_for_the_filesystem_is_one_line(tmp_path, command):
    """ENAMETOOLONG from Path.is_dir (which Python 3.11 raises, not answers) had been a
    traceback."""
    long = tmp_path / ("a" * 300 + ".csv")
    args = {
        "report": [long],
        "open": [long, "--no-tui"],
        "import": [long],
        "export": [fixture_path(DETAILS), "-o", long],
    }[command]
    done = run_cli(command, *args, home=tmp_path / "h")
    _one_line(done.returncode, done.stdout, done.stderr, str(long))
    # `open` looks for a stored run too
    assert "too long" in done.stderr or "no such file" in done.stderr


def test_a_folder_given_as_a_report_is_refused(tmp_path):
    path = tmp_path / "r.csv"
    path.mkdir()
    _one_line(*run_in_process("report", path), str(path), "folder")


def test_duplicated_block_in_an_ncu_rep_does_not_abort(tmp_path):
    """ncu_report's C++ (protobuf) aborts the process (SIGABRT, `Check failed: count >= 0`) in
    load_report on this damaged report, found by benchmarks/fuzz_long.py; the streaming reader
    checks the framing first and refuses it without handing it over."""
    data = fixture_path("rtx5060ti_transpose_45k_basic.ncu-rep").read_bytes()
    path = tmp_path / "r.ncu-rep"
    # 16 bytes at 277500 twice
    path.write_bytes(data[:277500] + data[277500:277516] + data[277500:])
    done = run_cli("report", path, timeout=120)
    _one_line(done.returncode, done.stdout, done.stderr, str(path))


def test_a_report_padded_with_zero_bytes_is_refused_where_the_padding_starts(tmp_path):
    """16 MiB of zeros after a real report: each 4 zero bytes read as an empty block (20 s, 560 MB
    for this one); no block ncu writes is empty, so the first is refused, naming where."""
    import lzma

    from ..helpers.real_files import DEMO

    real = lzma.decompress(DEMO.read_bytes())
    padded = tmp_path / "padded.ncu-rep"
    padded.write_bytes(real + b"\0" * (16 << 20))
    line = _one_line(
        *run_in_process("report", padded, "--no-cache"), "zero bytes where a block should start"
    )
    assert f"at byte {len(real):,}" in line
