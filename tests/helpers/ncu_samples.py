"""One launch's warp samples by stall reason as NVIDIA's own CLI prints them (`ncu --import FILE
--page source --csv`: the whole page once per report, or `--launch-skip N --launch-count 1`), summed
over its SASS lines with the csv module, independently of flopscope's readers: what the stall
panel's PC-sampling fallback is checked against."""

from __future__ import annotations

import csv
import functools
import io
import subprocess
from pathlib import Path

from .ncu_pages import ncu_csv
from .ncu_source import sass_blocks, sass_page

# ncu's source-page column of each reason -> the reason as ncu's metric names spell it
# (smsp__pcsamp_warps_issue_stalled_<reason>), no_instructions as the warp state metric spells it.
COLUMN_REASON = {
    "stall_barrier": "barrier",
    "stall_branch_resolving": "branch_resolving",
    "stall_dispatch": "dispatch_stall",
    "stall_drain": "drain",
    "stall_imc": "imc_miss",
    "stall_lg": "lg_throttle",
    "stall_long_sb": "long_scoreboard",
    "stall_math": "math_pipe_throttle",
    "stall_membar": "membar",
    "stall_mio": "mio_throttle",
    "stall_misc": "misc",
    "stall_no_inst": "no_instruction",
    "stall_not_selected": "not_selected",
    "stall_selected": "selected",
    "stall_short_sb": "short_scoreboard",
    "stall_sleep": "sleeping",
    "stall_tex": "tex_throttle",
    "stall_wait": "wait",
}


def launch_samples(real_ncu, path, launch: int) -> tuple[int, dict[str, int]]:
    """(all samples, {reason: samples}) of launch `launch` (0-based, file order). ncu prints a
    launch's page twice (one block per view of the same function): each address counted once."""
    pages = _every_launch(tuple(real_ncu), Path(path))
    blocks = pages[launch] if pages else sass_blocks(_launch_page(real_ncu, path, launch))
    rows: dict[str, dict[str, str]] = {}
    for block in blocks:
        page = {
            r["Address"]: r for r in csv.DictReader(io.StringIO(block[block.index('"Address"') :]))
        }
        rows |= {a: r for a, r in page.items() if a not in rows}
    total, reasons = 0, {}
    for row in rows.values():
        total += _count(
            row.get(
                "Warp Stall Sampling (All Samples)", row.get("Warp Stall Sampling (All Cycles)")
            )
        )
        for column, reason in COLUMN_REASON.items():
            if column in row:
                reasons[reason] = reasons.get(reason, 0) + _count(row[column])
    return total, reasons


def _launch_page(real_ncu, path, launch: int) -> str:
    """ncu's SASS source page of one launch (`--launch-skip N --launch-count 1`)."""
    out = subprocess.run(
        [*real_ncu, "--import", str(path), "--page", "source", "--csv", "--print-source", "sass",
         "--launch-skip", str(launch), "--launch-count", "1"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout


@functools.cache
def _every_launch(real_ncu: tuple[str, ...], path: Path) -> list[list[str]] | None:
    """Each launch's blocks, from one print of the whole page (one ncu run a report, not one a
    launch): where ncu printed two blocks a launch, in file order (the launch count read from ncu's
    raw page), each pair under one kernel name. Otherwise None: each launch is printed alone."""
    raw = csv.reader(io.StringIO(ncu_csv(list(real_ncu), path)))
    launches = sum(1 for row in raw if row and row[0].isdigit())
    blocks = sass_blocks(sass_page(real_ncu, str(path)))
    pairs = [blocks[i : i + 2] for i in range(0, len(blocks), 2)]
    if len(blocks) != 2 * launches or any(a.split("\n")[0] != b.split("\n")[0] for a, b in pairs):
        return None
    return pairs


def _count(cell: str | None) -> int:
    return int(cell.replace(",", "")) if cell not in (None, "", "-") else 0
