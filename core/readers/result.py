"""What every reader returns: the metric table (one row per launch, ncu metric columns in SI units,
the identity columns of `wanted.IDENTITY`) and what the reader learnt about the file beside it."""

from __future__ import annotations

from typing import NamedTuple, TypedDict

import pandas as pd


class ReaderMeta(TypedDict, total=False):
    format: str  # ncu-rep, csv-raw or csv-details: always set
    # for an .ncu-rep: "stream" (flopscope's own protobuf reader) or "ncu_report" (NVIDIA's module)
    reader: str
    captured: float | None  # when ncu captured the report (seconds since the epoch), where it says
    note: str  # why the report was read another way than usual, in words
    # a CSV's text before its header (a program's own output): the GPU is sometimes named there
    preamble: str


class MetricTable(NamedTuple):
    frame: pd.DataFrame
    meta: ReaderMeta
