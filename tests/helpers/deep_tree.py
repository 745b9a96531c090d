"""A deep module tree from a real capture: the steps page (steps.py: the H100 FP32 transformer step
played three times, each pass a `step N` range, a timing file beside it) with the model's modules
pushed four levels further down, under ranges named as `profile --modules` names the modules of a
bigger model (`model`, `model.encoder`, ...). `mlp.0` then sits eight levels below the root, as a
real model's `encoder.layers.3.attn.q_proj` does."""

from __future__ import annotations

import csv
from pathlib import Path

from .steps import two_step_page, write_timing

LEVELS = ("model", "model.encoder", "model.encoder.layers", "model.encoder.layers.0")
WALLS = {1: 0.0412, 2: 0.00311, 3: 0.00297}  # the first slow (warm-up)
_FORWARD = '"<default domain>:forward:none:none:none:none:none:none"'


def _pushed(name: str) -> str:
    return f'"<default domain>:{name}:none:none:none:none:none:none"'


def deep_steps_page(folder: Path) -> Path:
    """The page (its launches under `forward` also under LEVELS, in that order) and its timing
    file, in `folder`."""
    page = two_step_page(folder / "deep.csv", steps=3)
    with page.open(newline="") as f:
        rows = list(csv.reader(f))
    cell = next(k for k, h in enumerate(rows[0]) if "Push/Pop_Range" in h)
    deeper = "  ".join([_FORWARD, *map(_pushed, LEVELS)])
    moved = 0
    for row in rows[2:]:
        if _FORWARD in row[cell]:
            row[cell] = row[cell].replace(_FORWARD, deeper)
            moved += 1
    assert moved, "the page has no launch under `forward` any more"
    with page.open("w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    write_timing(folder, WALLS)
    return page
