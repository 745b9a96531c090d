"""Python's cycle collector in a test process: what survives its full collections is frozen out of
the next ones.

A test process holds a large heap for its whole life (the real reports it read, ncu's pages of them,
pandas and Textual themselves), and Python's full collection walks every object of it each time:
~0.5 CPU-s a walk, dozens of walks a worker. After a test, once a full collection has run since the
last freeze, the process collects what the tests left (that walk skips the frozen objects) and
freezes the rest: later full collections walk only what came after. An object frozen is still freed
when its last reference goes; only a cycle frozen before it became garbage stays (hence the
collection before each freeze: no test's garbage is frozen)."""

from __future__ import annotations

import gc

_full_since_freeze = False


def _note_full_collection(phase: str, info: dict) -> None:
    global _full_since_freeze
    if phase == "stop" and info["generation"] == 2:
        _full_since_freeze = True


def watch() -> None:
    if _note_full_collection not in gc.callbacks:
        gc.callbacks.append(_note_full_collection)


def freeze_survivors() -> None:
    """Between tests: collect, then freeze, where a full collection ran since the last freeze."""
    global _full_since_freeze
    if _full_since_freeze:
        gc.collect()
        gc.freeze()
        _full_since_freeze = False
