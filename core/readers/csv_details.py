"""`ncu --csv` details layout: one row per (launch, section, metric), in every header variant seen."""

from __future__ import annotations

import csv
import io
import math
from collections import OrderedDict

import pandas as pd

from ..errors import FlopscopeError
from ..ncu_metrics import OCCUPANCY_LIMITS
from ..units import UnitError, is_time_unit, metric_unit_factor, parse_number, unit_dimension
from .csv_text import IDENTITY_HEADERS, CsvText, nvtx_columns, nvtx_label, process_label
from .progress_file import ByteProgress
from .wanted import IDENTITY, wanted

_FLOP_OPS = {f"{p}{o}": f"{p.lower()}{o.lower()}" for p in "FDH" for o in ("FMA", "ADD", "MUL")}

# Section display names (ncu's human-readable labels) for the metrics the engine needs.
# A required dimension guards names that mean different things in different sections.
DISPLAY = {
    "Duration": ("gpu__time_duration.sum", "time"),
    "SM Frequency": ("smsp__cycles_elapsed.avg.per_second", "rate"),
    "DRAM Frequency": ("dram__cycles_elapsed.avg.per_second", "rate"),
    "Memory Frequency": ("dram__cycles_elapsed.avg.per_second", "rate"),
    "DRAM Bandwidth": ("dram__bytes.sum.per_second", "rate"),
    "Memory Throughput": ("dram__bytes.sum.per_second", "byte-rate"),
    "Theoretical DRAM Bytes Accessible": ("dram__bytes.sum.peak_sustained", None),
    "Registers Per Thread": ("launch__registers_per_thread", None),
    "Theoretical Predicated-On FFMA Operations": ("derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2", None),
    "Theoretical Predicated-On DFMA Operations": ("derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2", None),
    **{
        f"Predicated-On {op} Thread Instructions Executed Per Cycle": (
            f"smsp__sass_thread_inst_executed_op_{name}_pred_on.sum.per_cycle_elapsed",
            None,
        )
        for op, name in _FLOP_OPS.items()
    },
    "Waves Per SM": ("launch__waves_per_multiprocessor", None),
    **{
        f"Block Limit {label}": (OCCUPANCY_LIMITS[what], None)
        for label, what in (
            ("Registers", "registers"),
            ("Shared Mem", "shared memory"),
            ("Warps", "warps"),
            ("SM", "blocks"),
            ("Barriers", "barriers"),
        )
    },
}
# Labels in % (ncu's Speed Of Light and Occupancy sections). "Memory Throughput" in % is the speed of light's;
# in byte/s (DISPLAY) the Memory Workload Analysis' bandwidth.
PERCENT_DISPLAY = {
    "Compute (SM) Throughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "Memory Throughput": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "DRAM Throughput": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "L2 Cache Throughput": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "L1/TEX Cache Throughput": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "Achieved Occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "Theoretical Occupancy": "sm__maximum_warps_per_active_cycle_pct",
}


def _dimension_ok(required: str | None, unit: str) -> bool:
    if required is None:
        return unit != "%"
    if required == "time":
        return is_time_unit(unit)
    if required == "rate":
        return "/" in unit or unit.lower().endswith("hz")
    return "byte/" in unit  # byte-rate


def read_details(doc: CsvText, progress: ByteProgress | None = None) -> tuple[pd.DataFrame, dict]:
    header = doc.header
    col = {h: k for k, h in enumerate(header)}
    i_name, i_unit, i_value = col["Metric Name"], col["Metric Unit"], col["Metric Value"]
    nv = nvtx_columns(header)
    i_section = col.get("Section Name")
    launches: OrderedDict[tuple, dict] = OrderedDict()
    origins: dict[tuple, dict] = {}  # per launch: metric column -> (the row's metric name, its value)
    sequences: OrderedDict[tuple, list] = OrderedDict()  # each launch's (section, metric) rows, in file order
    for cells in csv.reader(io.StringIO(doc.body_text())):
        if len(cells) <= i_value:
            continue
        key = (cells[0], cells[col["Process ID"]] if "Process ID" in col else "")
        row = launches.get(key)
        if row is None:
            row = launches[key] = _identity(cells, header, col, nv)
            sequences[key] = []
            origins[key] = {}
        name = cells[i_name].strip()
        if name:
            sequences[key].append((cells[i_section] if i_section is not None else "", name))
        _add_metric(row, name, cells[i_unit].strip(), cells[i_value], origins[key], doc)
    _refuse_cut_launch(doc, sequences)
    frame = pd.DataFrame(list(launches.values()))
    for name in IDENTITY:
        if name not in frame:
            frame[name] = None
    return frame, {"format": "csv-details"}


def _refuse_cut_launch(doc: CsvText, sequences: OrderedDict[tuple, list]) -> None:
    """ncu writes each launch's metrics in one fixed order. A last launch whose (section, metric) rows are a
    strict prefix of an earlier launch's is a file cut at a line break inside it (a cut inside a row is caught
    before, by the readers' last-row check): its missing metrics would read as counters never collected."""
    if len(sequences) < 2:
        return
    *earlier, (last_key, last) = sequences.items()
    for key, seq in reversed(earlier):  # the nearest launch first: most likely the same kernel
        if len(last) < len(seq) and seq[: len(last)] == last:
            raise FlopscopeError(
                doc.path,
                f"ends inside launch {last_key[0]}: it has {len(last)} of the {len(seq)} "
                f"metrics launch {key[0]} has; the file looks cut short",
                "export it again (ncu --import REPORT --csv --page details) or copy it whole",
            )


def _identity(cells: list[str], header: list[str], col: dict, nv: list[int]) -> dict:
    row = {canon: (cells[col[h]] or None) for h, canon in IDENTITY_HEADERS.items() if h in col}
    row["process"] = process_label(
        cells[col["Process Name"]] if "Process Name" in col else None,
        cells[col["Process ID"]] if "Process ID" in col else None,
    )
    row["nvtx"] = " | ".join(filter(None, (nvtx_label(header[k], cells[k]) for k in nv))) or None
    return row


def _add_metric(row: dict, name: str, unit: str, cell: str, origin: dict, doc: CsvText) -> None:
    if not name:
        return
    if wanted(name):
        target = name
    elif unit.strip() == "%" and name in PERCENT_DISPLAY:
        target = PERCENT_DISPLAY[name]
        if target in row and origin.get(target, ("",))[0] != name:  # an ncu metric name beats a display label
            return
    elif name in DISPLAY:
        if unit_dimension(unit) is None:  # a label is skipped for a known unit of another kind, never for a typo
            raise UnitError(name, unit, "a unit ncu prints")
        if not _dimension_ok(DISPLAY[name][1], unit):
            return
        target = DISPLAY[name][0]
        if target in row and origin.get(target, ("",))[0] != name:  # an ncu metric name beats a display label
            return
    elif name in ("Block Size", "Grid Size"):
        row.setdefault("block" if name == "Block Size" else "grid", cell.replace(",", ""))
        return
    else:
        return
    value = parse_number(cell) * metric_unit_factor(target, unit)
    if target in origin and origin[target][0] == name:
        _refuse_conflict(doc, row, name, origin[target][1], value)
    origin[target] = (name, value)
    row[target] = value


def _refuse_conflict(doc: CsvText, row: dict, name: str, first: float, second: float) -> None:
    """One launch's metric printed twice (in two sections, or a duplicated row) must say one thing: ncu rounds
    each printing to its own unit (10.08 usecond, 10,080 nsecond), so values 1% apart are one value; more is a
    damaged or edited file, and picking either would be a guess."""
    if (math.isnan(first) and math.isnan(second)) or math.isclose(first, second, rel_tol=0.01):
        return
    raise FlopscopeError(
        doc.path,
        f"launch {row.get('launch_id')}: {name} appears twice with different values "
        f"({first:g} and {second:g} in SI units)",
        "re-export it with `ncu --import REPORT --csv --page details`, or remove the wrong row",
    )
