"""The columns of the tables whose columns are their own (Runs, Diff), apart from their screens: the
column chooser's config (column_choice.py) checks a saved choice against them without importing a
screen."""

from __future__ import annotations

from ...presentation import format as fmt
from ...presentation.columns import Column, short_gpu
from ...presentation.diff_text import time_change

MARK = "[A] "  # before run A's name in the list: text, not colour, so it shows with NO_COLOR too


def run_columns(marked: str | None = None) -> list[Column]:
    """The list's columns; run A's name carries MARK. Priority decides what drops first at 80
    columns, as in the kernel table."""
    return [
        Column(
            "name",
            "Run",
            lambda v: f"{MARK}{v}" if marked is not None and v == marked else fmt.text(v),
            0,
            22,
            numeric=False,
        ),
        Column("created", "Created", fmt.when, 2, 16),
        Column("params_text", "Params", fmt.text, 1, 14, numeric=False),
        Column("gpu", "GPU", fmt.text, 3, 14, numeric=False),
        Column("launches", "Launches", fmt.integer, 3, 8),
        Column("total_time_s", "Time", fmt.seconds, 0, 9, at_least="time_at_least"),
        Column("total_flop", "FLOP", fmt.si, 1, 8, at_least="flop_at_least"),
        Column("sweep", "Sweep", fmt.text, 4, 12, numeric=False),
        Column("host", "Host", fmt.text, 5, 12, numeric=False),
        Column("id", "ID", fmt.integer, 5, 5),
    ]


def diff_columns(by: str, gpus: bool = False) -> list[Column]:
    """Priority decides what drops first (higher first), as in the kernel table: at 80 columns both
    times and the change fit beside the name, and `Only in` too unless a GPU column takes its room.
    A and B of a number (`pair`) drop and come back together, as in `flopscope diff --no-tui`: one
    side alone reads as the other run's number, and a group only that run ran would show none. Only
    the name and the change are never dropped, so that on a narrow terminal `left`/`right` still
    have room to show each other column beside them. `gpus`: groups matched on name and GPU (a run
    with launches on several), whose GPU, never dropped, tells two rows of a name apart."""
    # Short (`A100-PCIE-40GB`), as in the kernel table: with the full name `Time A`/`Time B` no
    # longer fit at 80.
    gpu = [Column("gpu", "GPU", short_gpu, 0, 16, numeric=False)] if gpus else []
    return [
        Column(
            "kernel",
            {"nvtx": "NVTX range", "module": "Module"}.get(by, "Kernel"),
            fmt.text,
            0,
            28,
            numeric=False,
        ),
        *gpu,
        Column("duration_s_a", "Time A", fmt.seconds, 1, 9, pair="time"),
        Column("duration_s_b", "Time B", fmt.seconds, 1, 9, pair="time"),
        Column("duration_s_delta", "ΔTime", time_change, 0, 9),
        Column("time_ratio", "B/A", fmt.ratio, 2, 6),
        Column("only_in", "Only in", fmt.text, 2, 7, numeric=False),
        Column("count_a", "N A", fmt.integer, 4, 6, pair="n"),
        Column("count_b", "N B", fmt.integer, 4, 6, pair="n"),
        Column("flop_a", "FLOP A", fmt.si, 3, 8, pair="flop"),
        Column("flop_b", "FLOP B", fmt.si, 3, 8, pair="flop"),
        Column("dram_bytes_a", "DRAM A", lambda v: fmt.si(v, "B"), 5, 8, pair="dram"),
        Column("dram_bytes_b", "DRAM B", lambda v: fmt.si(v, "B"), 5, 8, pair="dram"),
    ]
