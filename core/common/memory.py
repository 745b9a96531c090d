"""Memory that ran out: what bounded it (`ulimit -v`, or the machine), how Python and the libraries
say so, and the one line for the user. Light: the `flopscope` command's watcher imports
it after a crash."""

from __future__ import annotations

import errno

from .errors import FlopscopeError, OutOfMemory


def address_space_limit() -> int | None:
    """The address-space limit in bytes (`ulimit -v`, `prlimit --as`), or None where none is set."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):  # no resource module (Windows)
        return None
    return None if soft in (-1, resource.RLIM_INFINITY) else soft


def memory_limit() -> str:
    """What bounded the memory a read ran out of: the address-space limit when one is set, else the
    machine's memory."""
    limit = address_space_limit()
    if limit is not None:
        return f"the address-space limit, ulimit -v, is {limit / 2**30:.2g} GiB"
    return "the machine's free memory ran out"


def out_of_memory(path: object, problem: str = "") -> OutOfMemory:
    """Reading `path` ran out of memory (a MemoryError, or `problem` as the caller saw it): one line
    with the limit hit and the fixes."""
    return OutOfMemory(
        path,
        problem or f"out of memory reading it ({memory_limit()})",
        "raise the limit or read it where more memory is free; a kernels table by name "
        "(`report --by name`, the default) needs no more than the read itself",
    )


# How libraries word an allocation that failed, where they raise no MemoryError: CPython's and
# Arrow's threads (a stack that cannot be mapped), Arrow's Status, an OS error's text.
_NO_MEMORY = (
    "can't start new thread",
    "failed to launch worker thread",
    "out of memory",
    "cannot allocate memory",
)


def ran_out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` says memory ran out: MemoryError, an mmap or read refused with ENOMEM, or a
    library's error worded so (a thread that could not start, Arrow's "Out of memory")."""
    if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM):
        return True
    return not isinstance(exc, FlopscopeError) and any(
        words in str(exc).lower() for words in _NO_MEMORY
    )
