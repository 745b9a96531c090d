"""The `flopscope` command's entry point: stop signals reach the main thread, never a worker.

Python runs signal handlers only in the main thread, and only when it runs. A SIGTERM or SIGINT the kernel
hands to another thread (any thread not blocking it may take a process's signal) is noted and then waits until
the main thread wakes: a main thread blocked in read(2) on a quiet pipe slept through it, and a CI run hung so.
Native threads started while the CLI's modules are imported (pyarrow's allocator, BLAS pools) inherit the
signal mask of the thread that starts them: with the stop signals blocked during those imports, they can never
take one. The main thread then unblocks them for itself.
"""

from __future__ import annotations

import gc
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextmanager
def stop_signals_blocked() -> Iterator[None]:
    """Imports that may start native threads go inside this, in the main thread: the threads inherit the block.
    A stop signal that arrives meanwhile waits, and is taken by the main thread once this ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Imports that create many objects and no garbage (pandas and pyarrow: ~120k) go inside this: Python's
    cycle collector would otherwise walk them over and over as they pile up, 30-60 ms of their ~0.3 s (summed by
    gc.callbacks in a 100k-launch export). What they made is then frozen out of every later collection (it lives
    as long as the process)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def main() -> int:
    """The `flopscope` command: the work runs in a watched worker process (see watcher.py)."""
    from .watcher import watched

    return watched(_work)


def _work() -> int:
    with stop_signals_blocked():
        from .main import main as cli_main
    return cli_main()
