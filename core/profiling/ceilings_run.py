"""`flopscope ceilings` on a target: the bench (ceilings_bench.py, standard library and torch) sent there as one
`python3 -c` through the transport, its last output line read as the measurement."""

from __future__ import annotations

import json
from importlib.resources import files

from ..common.errors import FlopscopeError
from ..store.ceilings import Ceilings, from_bench
from .transport import Transport


def measure_ceilings(transport: Transport, device: int, python: str = "python3") -> Ceilings:
    """The ceilings of GPU `device` on the transport's host, measured by the bench run with `python` there."""
    source = files(__package__).joinpath("ceilings_bench.py").read_text()
    try:
        transport.connect()
        done = transport.output([python, "-c", source, str(device)])
    finally:
        transport.close()
    try:
        doc = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        last = (done.stderr or done.stdout).strip().splitlines()
        why = last[-1] if last else "no output"
        raise FlopscopeError(
            f"ceilings on {transport.host}",
            f"the measurement failed ({why})",
            "it needs torch with CUDA and a GPU there: `flopscope doctor` checks both",
        ) from None
    return from_bench(transport.host, doc)
