"""Guards for a command's imports, in the main thread: stop signals blocked (native threads started
meanwhile inherit the block, so only the main thread ever takes a stop signal) and Python's cycle
collector paused."""

from __future__ import annotations

import gc
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextmanager
def stop_signals_blocked() -> Iterator[None]:
    """Imports that may start native threads go inside this, in the main thread: the threads inherit
    the block. A stop signal that arrives meanwhile waits, and is taken by the main thread once this
    ends."""
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
    """Imports that create many objects and no garbage (pandas and pyarrow: ~120k) go inside this:
    Python's cycle collector would otherwise walk them over and over as they pile up, a sizeable
    share of the import time. What they made is then frozen out
    of every later collection (it lives as long as the process)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
