"""`flopscope ARGS` in a child process whose own peak resident memory is reported: RUSAGE_CHILDREN
would give the largest child this test process ever waited for, not this one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The command's main, not its entry: the entry forks a watched worker, whose memory this process
# would not count. Its peak is VmHWM, the high-water mark of the memory this program maps:
# getrusage's ru_maxrss keeps, across exec, the peak of the process that started it (the test's,
# where subprocess uses vfork).
_MEASURED = (
    "import sys\n"
    "from flopscope.tui.cli.main import main\n"
    "code = main(sys.argv[2:])\n"
    "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
    "open(sys.argv[1], 'w').write(hwm.split()[1])\n"
    "sys.exit(code)\n"
)


def run_measured(
    *args: object, folder: Path, env: dict | None = None
) -> tuple[subprocess.CompletedProcess, int]:
    """(the finished process, its peak RSS in bytes); `folder` holds the number it writes and is its
    TMPDIR."""
    out = folder / "peak_rss"
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, str(out), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(folder), **(env or {})},
    )
    return done, int(out.read_text()) * 1024  # Linux: KiB
