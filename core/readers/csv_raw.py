"""`ncu --csv --page raw`: a header of metric names, a units row, one row per launch."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd

from ..units import parse_number, unit_factor
from .csv_text import IDENTITY_HEADERS, CsvText, nvtx_columns, nvtx_label, process_label
from .wanted import IDENTITY, wanted


def read_raw(doc: CsvText) -> tuple[pd.DataFrame, dict]:
    header = doc.header
    units_line, data = _units_row(doc)
    units = next(csv.reader([units_line])) if units_line else []
    units += [""] * (len(header) - len(units))
    keep = [k for k, h in enumerate(header)
            if h in IDENTITY_HEADERS or h in ("Process ID", "Process Name") or wanted(h)]
    keep += [k for k in nvtx_columns(header) if k not in keep]
    names = [f"c{k}" for k in range(len(header))]
    frame = pd.read_csv(io.StringIO(data), header=None, names=names,
                        usecols=[names[k] for k in keep], dtype=str, keep_default_na=False,
                        engine="c", on_bad_lines="skip")
    out = pd.DataFrame(index=frame.index)
    for k in sorted(keep):
        col, name = frame[names[k]], header[k]
        if name in IDENTITY_HEADERS:
            out[IDENTITY_HEADERS[name]] = col.replace("", None)
        elif name == "device__attribute_display_name":
            out["gpu"] = col.replace("", None)
        elif wanted(name):
            out[name] = _numeric(col, name) * unit_factor(units[k])
    out["process"] = _process(frame, header, names)
    nv = nvtx_columns(header)
    out["nvtx"] = [
        " | ".join(filter(None, (nvtx_label(header[k], frame[names[k]].iat[r]) for k in nv))) or None
        for r in range(len(frame))
    ] if nv else None
    for col in IDENTITY:
        if col not in out:
            out[col] = None
    return out, {"format": "csv-raw"}


def _units_row(doc: CsvText) -> tuple[str, str]:
    """ncu prints a units row right after the header; its first cell (the ID) is empty."""
    if doc.body.startswith('"",'):
        end = doc.body.find("\n")
        end = len(doc.body) if end < 0 else end
        return doc.body[:end], doc.body[end + 1:]
    return "", doc.body


def _numeric(col: pd.Series, name: str) -> pd.Series:
    values = pd.to_numeric(col, errors="coerce")
    needs_help = values.isna() & (col != "")
    if needs_help.any():  # thousands separators and n/a take the slow path, only where present
        values[needs_help] = col[needs_help].map(parse_number)
    return values.astype(np.float64)


def _process(frame: pd.DataFrame, header: list[str], names: list[str]) -> pd.Series | None:
    def col(title: str) -> pd.Series | None:
        return frame[names[header.index(title)]] if title in header else None

    pname, pid = col("Process Name"), col("Process ID")
    if pname is None and pid is None:
        return None
    pname = pname if pname is not None else pd.Series([""] * len(frame), index=frame.index)
    pid = pid if pid is not None else pd.Series([""] * len(frame), index=frame.index)
    return pd.Series([process_label(a, b) for a, b in zip(pname, pid, strict=True)], index=frame.index)
