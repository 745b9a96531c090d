"""The `flopscope` command's entry point: stop signals reach the main thread, never a worker.

Python runs signal handlers only in the main thread, and only when it runs. A SIGTERM or SIGINT the
kernel hands to another thread (any thread not blocking it may take a process's signal) is noted and
then waits until the main thread wakes: a main thread blocked in read(2) on a quiet pipe would sleep
through it, and the command would hang. Native threads started while the CLI's modules are imported
(pyarrow's allocator, BLAS pools) inherit the signal mask of the thread that starts them: with the
stop signals blocked during those imports, they can never take one. The main thread then unblocks
them for itself."""

from __future__ import annotations

from .import_guards import stop_signals_blocked


def main() -> int:
    """The `flopscope` command: the output kept from the same command, while still current
    (output_cache.py); else the work, in a watched worker process (see watcher.py)."""
    import sys

    from .output_cache import replayed

    status = replayed(sys.argv[1:])
    if status is not None:
        return status
    from .watcher import watched

    return watched(_work)


def _work() -> int:
    with stop_signals_blocked():
        from .main import main as cli_main
    return cli_main()
