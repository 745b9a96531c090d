"""A report read under an address-space limit (`ulimit -v`, `prlimit --as`) too small for it: one
line naming the file, the limit and the fix, exit 2; never a traceback, nor a silent SIGABRT from
ncu_report's C++ (`std::bad_alloc` while flopscope's stderr is captured)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from ..conftest import fixture_path
from ..helpers.cli import CLI
from ..helpers.raw_csv import repeated_raw_page

# Imports what the read needs, then caps the address space a few MiB above what the process holds.
_CAPPED = """import sys
sys.argv = ['flopscope', 'report', {path!r}, '--no-cache']
from flopscope.tui.cli.main import build_parser, main
build_parser()
import flopscope.tui.cli.view  # `report`'s module and what it imports: the limit is for the read
import ncu_report, pyarrow, pandas, numpy, pickle, sqlite3
import flopscope.core.readers.ncu_rep_stream
vm = [int(line.split()[1]) for line in open('/proc/self/status')
      if line.startswith('VmSize')][0] * 1024
import resource
resource.setrlimit(resource.RLIMIT_AS, (vm + {mib} * 2**20,) * 2)
sys.exit(main())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads VmSize from /proc")
@pytest.mark.parametrize("reader", ["stream", "ncu_report"])
def test_a_read_out_of_memory_is_one_line_and_exit_2(reader, tmp_path):
    path = str(fixture_path("h800_sglang_flashattn_full.ncu-rep"))
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path), "FLOPSCOPE_NCU_REP_READER": reader}
    refused = 0
    # how far the read gets before the limit differs from run to run: try a few
    for mib in (0, 1, 2, 4):
        done = subprocess.run(
            [sys.executable, "-c", _CAPPED.format(path=path, mib=mib)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode == 0:
            continue
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, (
            f"{mib} MiB: exit {done.returncode}\n{done.stderr}"
        )
        assert (
            lines[0].startswith("flopscope: ")
            and "out of memory" in lines[0]
            and "ulimit -v" in lines[0]
        )
        refused += 1
        break
    assert refused, "no limit was small enough to hit"


# The imports of a `report` of a raw CSV, then the worker's address space: the limit is set a few
# MiB above it.
_WORKER_SIZE = """import flopscope.tui.cli.main, flopscope.tui.cli.view
import flopscope.core.readers.csv_raw, pyarrow.csv
vm = [int(line.split()[1]) for line in open('/proc/self/status')
      if line.startswith('VmSize')][0] * 1024
print(vm)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads VmSize from /proc")
def test_a_raw_csv_read_out_of_memory_is_one_line_and_exit_2_however_it_ends(tmp_path):
    """`prlimit --as=N flopscope report big.csv` as a user runs it. At different limits the read
    ends in a MemoryError, an abort in Arrow's CSV reader, a thread that cannot start, or glibc's
    `_exit(127)`: each must end in flopscope's one line and exit 2, never silently or in a
    traceback. Native code may print its own line first (Arrow's "Out of memory"): that is kept."""
    path = repeated_raw_page(
        fixture_path("b200_torch_sdpa_auto_raw.csv"), tmp_path / "big.csv", 20_000
    )
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path / "home")}
    vm = int(
        subprocess.run([sys.executable, "-c", _WORKER_SIZE], capture_output=True, text=True).stdout
    )
    ends = []
    for mib in (0, 4, 16, 32, 64, 96, 128):
        limit = vm + mib * 2**20
        done = subprocess.run(
            [*CLI, "report", str(path), "--by", "launch", "--no-cache"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=lambda limit=limit: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
        )
        if done.returncode == 0:
            continue
        ours = [line for line in done.stderr.splitlines() if line.startswith("flopscope: ")]
        assert done.returncode == 2 and len(ours) == 1, (
            f"{mib} MiB: exit {done.returncode}\n{done.stderr}"
        )
        assert done.stderr.rstrip().endswith(ours[0]) and "Traceback" not in done.stderr, (
            done.stderr
        )
        assert ours[0].startswith(f"flopscope: {path}: out of memory") and "ulimit -v" in ours[0]
        ends.append(ours[0])
    assert ends, "no limit was small enough to hit"


def test_the_out_of_memory_line_starts_a_line_of_its_own_after_a_native_librarys_unended_one(
    monkeypatch, capfd
):
    """Under an address-space limit Arrow's fatal message can reach stderr without a line end (`...
    malloc of size 1050944 failed`); flopscope's line came right after it, on the same line (seen
    once under two workers)."""
    from flopscope.core.common.memory import out_of_memory
    from flopscope.tui.cli import view
    from flopscope.tui.cli.main import main

    def short_of_memory(path, **_):
        os.write(
            2, b"/arrow/cpp/src/arrow/result.cc:27: Out of memory: malloc of size 1050944 failed"
        )
        raise out_of_memory(path)

    monkeypatch.setattr(view, "read_report", short_of_memory)
    assert main(["report", str(fixture_path("b200_torch_sdpa_auto_raw.csv"))]) == 2
    last = capfd.readouterr().err.splitlines()[-1]
    assert last.startswith("flopscope: ") and "out of memory" in last
