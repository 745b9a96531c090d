"""The CLI's stderr lines stay whole when a sweep's threads say them at once (a Slurm job's state
from one point's thread while another point's thread reports a kernel): CI once saw two lines glued
together."""

from __future__ import annotations

import re
import sys
import threading

from flopscope.tui.presentation.messages import say


def test_lines_said_from_many_threads_at_once_stay_whole(capsys) -> None:
    before = sys.getswitchinterval()
    # switch threads as often as CPython allows: interleaving shows at once
    sys.setswitchinterval(1e-6)
    try:
        start = threading.Barrier(8)

        def talk(who: int) -> None:
            start.wait()
            for i in range(400):
                say(f"    n={who}: job {i} running on testnode")

        threads = [threading.Thread(target=talk, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(before)
    lines = capsys.readouterr().err.split("\n")
    assert lines.pop() == ""
    assert len(lines) == 8 * 400
    glued = [
        line for line in lines if not re.fullmatch(r"    n=\d: job \d+ running on testnode", line)
    ]
    assert not glued, glued[:3]
