"""The CLI's one-line messages on stderr (no rich, no pandas: usage errors print them before
anything loads)."""

from __future__ import annotations

import sys
import threading

from ...core.common import FlopscopeError, OutOfMemory, display_text

# A sweep's threads say their lines at once (a Slurm job's state, a kernel): one write per line,
# under a lock, so no line is ever glued to another's middle.
_ONE_AT_A_TIME = threading.Lock()


def print_warning(message: str) -> None:
    """A warning of the engine's (a stored run left out of its sweep, say) as the CLI prints every
    warning."""
    say(f"flopscope: warning: {message}")


def say(line: str) -> None:
    """One line on stderr, as every CLI message goes: text from a report or a remote host in it (a
    kernel name, a path, ncu's output) shown with its control characters escaped
    (core/common/safe_text.py)."""
    with _ONE_AT_A_TIME:
        sys.stderr.write(display_text(line) + "\n")
        sys.stderr.flush()


def say_error(err: FlopscopeError) -> None:
    """The one line for `err`. Out of memory, native code may have left its own line unended
    (Arrow's `malloc of size N failed`, glibc's abort cut off mid-message): it starts a new one."""
    if isinstance(err, OutOfMemory):
        sys.stderr.write("\n")
    say(f"flopscope: {err.line()}")
