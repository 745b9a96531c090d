"""`flopscope ceilings` on a target: the bench (ceilings_bench.py, standard library and torch) run
there, its answer read as the node's measured ceilings."""

from __future__ import annotations

from ..store.ceilings import Ceilings, from_bench
from .target_script import script_json
from .transport import Transport


def measure_ceilings(transport: Transport, device: int, python: str = "python3") -> Ceilings:
    """The ceilings of GPU `device` on the transport's host, measured by the bench run with `python`
    there."""
    try:
        transport.connect()
        doc = script_json(
            transport,
            python,
            "ceilings_bench.py",
            [str(device)],
            command="ceilings",
            problem="the measurement failed",
            fix="it needs torch with CUDA and a GPU there: `flopscope doctor` checks both",
        )
    finally:
        transport.close()
    return from_bench(transport.host, doc)
