"""The one line a refused store command prints."""

from __future__ import annotations

import subprocess


# -- the store's own failures: one line with the fix for that cause, nothing stored lost
# -------------------------
def one_line(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]
