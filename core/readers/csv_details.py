"""`ncu --csv` details layout: one row per (launch, section, metric), in every header variant seen.

Read by Arrow and pivoted at once (`_read_arrow`); the row-by-row reader (`_read_rows`, the csv
module) defines the rules and reads the pages Arrow cannot (tests/core/test_details_arrow_reader.py
keeps the two equal)."""

from __future__ import annotations

import csv
import io
import math
from collections import OrderedDict

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..common.errors import FlopscopeError
from ..common.units import UnitError, is_time_unit, metric_unit_factor, parse_number, unit_dimension
from ..common.utf8_repair import Utf8Repaired
from ..ncu.metrics import OCCUPANCY_LIMITS, PC_SAMPLES
from ..ncu.stalls import DETAILS_LABELS, stall_metric
from .csv_text import IDENTITY_HEADERS, CsvText, nvtx_columns, nvtx_text, process_label
from .progress_file import ByteProgress, counted
from .result import MetricTable
from .wanted import IDENTITY, wanted

# One launch's cells by column, as the row-by-row reader builds them: text identity, metric values
# in SI units.
_Row = dict[str, str | float | None]

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
    "Theoretical Predicated-On FFMA Operations": (
        "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",
        None,
    ),
    "Theoretical Predicated-On DFMA Operations": (
        "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2",
        None,
    ),
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
    # the Warp State Statistics section's body (`--print-details all`): cycles per issued
    # instruction of each stall reason
    **{label: (stall_metric(reason), None) for label, reason in DETAILS_LABELS.items()},
}
# Labels in % (ncu's Speed Of Light and Occupancy sections). "Memory Throughput" in % is the speed
# of light's; in byte/s (DISPLAY) the Memory Workload Analysis' bandwidth.
PERCENT_DISPLAY = {
    "Compute (SM) Throughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "Memory Throughput": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "DRAM Throughput": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "L2 Cache Throughput": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "L1/TEX Cache Throughput": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "Achieved Occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "Theoretical Occupancy": "sm__maximum_warps_per_active_cycle_pct",
}


# ncu labels two clocks "SM Frequency": the Speed Of Light header's is the GPC clock
# (gpc__cycles_elapsed.avg.per_second in its SpeedOfLight.section), a roofline chart's body the SM
# clock (sm__/smsp__cycles_elapsed.avg.per_second). A launch whose page has both (`--print-details
# all`) takes the chart's, the metric its .ncu-rep holds; the header's stands in where it is alone.
CLOCK_LABEL = "SM Frequency"
HEADER_SECTION = "GPU Speed Of Light Throughput"


def _dimension_ok(required: str | None, unit: str) -> bool:
    if required is None:
        return unit != "%"
    if required == "time":
        return is_time_unit(unit)
    if required == "rate":
        return "/" in unit or unit.lower().endswith("hz")
    return "byte/" in unit  # byte-rate


def read_details(doc: CsvText, progress: ByteProgress | None = None) -> MetricTable:
    """One row per launch out of the page's rows per (launch, section, metric), by Arrow's reader
    and one pivot (`_read_arrow`); a page Arrow cannot read (rows of odd widths) row by row,
    below."""
    frame = _read_arrow(doc, progress)
    if frame is None:
        frame = _read_rows(doc)
    for name in IDENTITY:
        if name not in frame:
            frame[name] = None
    return MetricTable(frame, {"format": "csv-details"})


def _read_rows(doc: CsvText) -> pd.DataFrame:
    """The page row by row with the csv module: each metric row applied to its launch in file
    order."""
    header = doc.header
    col = {h: k for k, h in enumerate(header)}
    i_name, i_unit, i_value = col["Metric Name"], col["Metric Unit"], col["Metric Value"]
    nv = nvtx_columns(header)
    i_section = col.get("Section Name")
    launches: OrderedDict[tuple[str, str], _Row] = OrderedDict()
    # per launch: metric column -> (the row's metric name, its value)
    origins: dict[tuple[str, str], dict[str, tuple[str, float]]] = {}
    # each launch's (section, metric) rows, in file order
    sequences: OrderedDict[tuple[str, str], list[tuple[str, str]]] = OrderedDict()
    body = [cells for cells in csv.reader(io.StringIO(doc.body_text())) if len(cells) > i_value]
    charted = _charted_launches(body, col)
    for cells in body:
        key = (cells[0], cells[col["Process ID"]] if "Process ID" in col else "")
        if key in charted and _header_clock(cells, col):
            continue
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
    return pd.DataFrame(list(launches.values()))


def _header_clock(cells: list[str], col: dict[str, int]) -> bool:
    in_header = cells[col["Section Name"]] == HEADER_SECTION if "Section Name" in col else True
    return in_header and cells[col["Metric Name"]].strip() == CLOCK_LABEL


def _charted_launches(body: list[list[str]], col: dict[str, int]) -> set[tuple[str, str]]:
    """The launches with a chart's SM Frequency (CLOCK_LABEL): their header's is left out."""
    if "Section Name" not in col:
        return set()
    return {
        (cells[0], cells[col["Process ID"]] if "Process ID" in col else "")
        for cells in body
        if cells[col["Metric Name"]].strip() == CLOCK_LABEL
        and cells[col["Section Name"]] != HEADER_SECTION
    }


def _refuse_cut_launch(
    doc: CsvText, sequences: OrderedDict[tuple[str, str], list[tuple[str, str]]]
) -> None:
    """ncu writes each launch's metrics in one fixed order. A last launch whose (section, metric)
    rows are a strict prefix of an earlier launch's is a file cut at a line break inside it (a cut
    inside a row is caught before, by the readers' last-row check): its missing metrics would read
    as counters never collected."""
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


def _identity(cells: list[str], header: list[str], col: dict[str, int], nv: list[int]) -> _Row:
    row: _Row = {canon: cells[col[h]] or None for h, canon in IDENTITY_HEADERS.items() if h in col}
    row["process"] = process_label(
        cells[col["Process Name"]] if "Process Name" in col else None,
        cells[col["Process ID"]] if "Process ID" in col else None,
    )
    row["nvtx"] = nvtx_text(header, nv, [cells[k] for k in nv])
    return row


def _add_metric(
    row: _Row, name: str, unit: str, cell: str, origin: dict[str, tuple[str, float]], doc: CsvText
) -> None:
    if not name:
        return
    if wanted(name):
        target = name
    elif unit.strip() == "%" and name in PERCENT_DISPLAY:
        target = PERCENT_DISPLAY[name]
        # an ncu metric name beats a display label
        if target in row and origin.get(target, ("",))[0] != name:
            return
    elif name in DISPLAY:
        # a label is skipped for a known unit of another kind, never for a typo
        if unit_dimension(unit) is None:
            raise UnitError(name, unit, "a unit ncu prints")
        if not _dimension_ok(DISPLAY[name][1], unit):
            return
        target = DISPLAY[name][0]
        # an ncu metric name beats a display label
        if target in row and origin.get(target, ("",))[0] != name:
            return
    elif name in ("Block Size", "Grid Size"):
        row.setdefault("block" if name == "Block Size" else "grid", cell.replace(",", ""))
        return
    else:
        return
    value = parse_number(cell) * _factor(target, unit)
    if target in origin and origin[target][0] == name:
        _refuse_conflict(doc, row, name, origin[target][1], value)
    origin[target] = (name, value)
    row[target] = value


def _refuse_conflict(doc: CsvText, row: _Row, name: str, first: float, second: float) -> None:
    """One launch's metric printed twice (in two sections, or a duplicated row) must say one thing:
    ncu rounds each printing to its own unit (10.08 usecond, 10,080 nsecond), so values 1% apart are
    one value; more is a damaged or edited file, and picking either would be a guess."""
    if (math.isnan(first) and math.isnan(second)) or math.isclose(first, second, rel_tol=0.01):
        return
    raise FlopscopeError(
        doc.path,
        f"launch {row.get('launch_id')}: {name} appears twice with different values "
        f"({first:g} and {second:g} in SI units)",
        "re-export it with `ncu --import REPORT --csv --page details`, or remove the wrong row",
    )


# The vectorised reader: the same rules as `_read_rows` and `_add_metric`, decided once per distinct
# (metric name, unit) and applied to every row at once.
# a row's kind: an ncu metric, a display label, Block/Grid Size; 0 skipped
_WANTED, _LABEL, _SHAPE = 1, 2, 3


def _read_arrow(doc: CsvText, progress: ByteProgress | None = None) -> pd.DataFrame | None:
    """The page by Arrow's CSV reader, pivoted to one row per launch; None for a page it cannot
    read."""
    rows = _arrow_rows(doc, progress)
    if rows is None:
        return None
    header = doc.header
    col = {h: k for k, h in enumerate(header)}
    rows = _chart_clock_only(rows, col)
    name = pc.utf8_trim_whitespace(rows[str(col["Metric Name"])])
    unit = pc.utf8_trim_whitespace(rows[str(col["Metric Unit"])])
    pid = rows[str(col["Process ID"])] if "Process ID" in col else pa.repeat("", len(rows))
    launch = _codes(rows["0"], pid)
    section = rows[str(col["Section Name"])] if "Section Name" in col else pa.repeat("", len(rows))
    # launch codes follow first appearance: row of each launch
    firsts = np.unique(launch, return_index=True)[1]
    named = pc.not_equal(name, "").to_numpy(zero_copy_only=False)
    ids = _flat(rows["0"]).take(pa.array(firsts)).to_pylist()
    _refuse_cut(doc, launch[named], _codes(section, name)[named], ids)
    frame = _launch_identity(rows, header, col, firsts)
    metrics = _metrics(
        doc, launch, name, unit, rows[str(col["Metric Value"])], frame, "Block Size" in col
    )
    # Block or Grid Size both in the header and as metric rows (one of the two header columns
    # missing): the header's cell wins, as in `_read_rows`, rather than two columns of one name.
    metrics = metrics.drop(columns=[c for c in metrics.columns if c in frame.columns])
    return pd.concat([frame, metrics], axis=1) if len(metrics.columns) else frame


def _chart_clock_only(rows: pa.Table, col: dict[str, int]) -> pa.Table:
    """The rows less the header's SM Frequency of each launch that has a chart's (CLOCK_LABEL)."""
    if "Section Name" not in col:
        return rows
    name = pc.utf8_trim_whitespace(rows[str(col["Metric Name"])])
    in_header = pc.fill_null(pc.equal(rows[str(col["Section Name"])], HEADER_SECTION), False)
    clock = pc.fill_null(pc.equal(name, CLOCK_LABEL), False)
    header = pc.and_(clock, in_header).to_numpy(zero_copy_only=False)
    chart = pc.and_(clock, pc.invert(in_header)).to_numpy(zero_copy_only=False)
    if not chart.any():
        return rows
    pid = rows[str(col["Process ID"])] if "Process ID" in col else pa.repeat("", len(rows))
    launch = _codes(rows["0"], pid)
    drop = header & np.isin(launch, launch[chart])
    return rows.filter(pa.array(~drop)) if drop.any() else rows


def _flat(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _codes(*columns: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Codes of the rows' combinations of cells in `columns`, numbered in order of first
    appearance."""
    out = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        codes, distinct = pd.factorize(
            pd.Series(_flat(column).to_numpy(zero_copy_only=False), dtype=object)
        )
        # renumbered each step: stays below the rows
        out = pd.factorize(out * (len(distinct) + 1) + codes)[0]
    return out


def _refuse_cut(doc: CsvText, launch: np.ndarray, seq: np.ndarray, ids: list[str]) -> None:
    """`_refuse_cut_launch` on codes: `seq` holds each named row's (section, metric) code, `launch`
    its launch's code (`ids[code]` its ID); a last launch whose rows are a strict prefix of an
    earlier one's is a file cut short."""
    last = len(ids) - 1
    if last < 1:
        return
    mine = seq[launch == last]
    lengths = np.bincount(launch, minlength=len(ids))
    order = np.argsort(launch, kind="stable")
    starts = np.concatenate([[0], np.cumsum(lengths)])
    # the nearest launch first: likely the same kernel
    for code in np.flatnonzero(lengths[:last] > len(mine))[::-1]:
        theirs = seq[order[starts[code] : starts[code + 1]]]
        if np.array_equal(theirs[: len(mine)], mine):
            raise FlopscopeError(
                doc.path,
                f"ends inside launch {ids[last]}: it has {len(mine)} of the {len(theirs)} "
                f"metrics launch {ids[code]} has; the file looks cut short",
                "export it again (ncu --import REPORT --csv --page details) or copy it whole",
            )


def _arrow_rows(doc: CsvText, progress: ByteProgress | None) -> pa.Table | None:
    """Every cell of the metric rows as text. Skipped as `_read_rows` skips them: rows too short to
    hold a metric value, ncu's `==` lines, and rule rows (as wide as a header with rule columns,
    wider than the metric rows; they hold no metric). None where a row has another width (for
    `_read_rows`)."""
    import pyarrow.csv as pacsv

    header = doc.header
    i_value = header.index("Metric Value")
    # metric rows stop after the value (ncu 2023 on: one cell on)
    width = _first_row_width(doc) or len(header)
    if not i_value < width <= len(header):
        return None
    names = [str(k) for k in range(width)]
    wanted_cols = {
        "ID",
        "Process ID",
        "Process Name",
        "Section Name",
        "Metric Name",
        "Metric Unit",
        "Metric Value",
    }
    nv = nvtx_columns(header)
    keep = [
        k
        for k, h in enumerate(header[:width])
        if h in wanted_cols or h in IDENTITY_HEADERS or k in nv
    ]

    def odd_row(row: pacsv.InvalidRow) -> str:
        short = row.actual_columns <= i_value
        rule = row.actual_columns == len(header) > width
        return "skip" if short or rule else "error"

    try:
        with doc.path.open("rb") as handle:
            handle.seek(doc.data_offset)
            return pacsv.read_csv(
                # odd bytes in a rule row: no pyarrow noise
                Utf8Repaired(counted(handle, progress)),
                read_options=pacsv.ReadOptions(column_names=names),
                parse_options=pacsv.ParseOptions(
                    newlines_in_values=True, invalid_row_handler=odd_row
                ),
                convert_options=pacsv.ConvertOptions(
                    include_columns=[names[k] for k in keep],
                    column_types=dict.fromkeys((names[k] for k in keep), pa.string()),
                    strings_can_be_null=False,
                ),
            )
    except (ValueError, OSError):  # pyarrow.ArrowInvalid is a ValueError
        return None


def _first_row_width(doc: CsvText) -> int:
    """How many cells the page's first row has (0: none, or not one line)."""
    with doc.path.open("rb") as handle:
        handle.seek(doc.data_offset)
        line = handle.readline().decode("utf-8", errors="replace")
    return len(next(csv.reader([line]), [])) if line.startswith('"') else 0


def _launch_identity(
    rows: pa.Table, header: list[str], col: dict[str, int], firsts: np.ndarray
) -> pd.DataFrame:
    """Each launch's identity from its first row, as `_identity` makes it."""
    nv = nvtx_columns(header)
    first = rows.take(pa.array(firsts, type=pa.int64())).to_pylist()
    return pd.DataFrame(
        [
            _identity([cells.get(str(k), "") for k in range(len(header))], header, col, nv)
            for cells in first
        ]
    )


def _metrics(
    doc: CsvText,
    launch: np.ndarray,
    name: pa.ChunkedArray,
    unit: pa.ChunkedArray,
    cell: pa.ChunkedArray,
    identity: pd.DataFrame,
    has_shape: bool,
) -> pd.DataFrame:
    """The metric columns, one row per launch: each row's kind and target column decided once per
    distinct (name, unit); per (launch, column) the value `_add_metric` applied in file order would
    leave."""
    pairs = _codes(name, unit)
    first = np.unique(pairs, return_index=True)[1]
    names, units = (
        _flat(name).take(pa.array(first)).to_pylist(),
        _flat(unit).take(pa.array(first)).to_pylist(),
    )
    rules = [_rule(n, u, has_shape) for n, u in zip(names, units, strict=True)]
    kind = np.array([r[0] for r in rules], dtype=np.int8)[pairs]
    target = np.array([r[1] for r in rules], dtype=object)[pairs]
    used = np.flatnonzero(kind > 0)
    if not len(used):
        return pd.DataFrame(index=identity.index)
    t = pd.DataFrame(
        {
            "row": used,
            "launch": launch[used],
            "target": target[used],
            "name": np.asarray(_flat(name).take(pa.array(used)).to_pylist(), dtype=object),
            "kind": kind[used],
            "pair": pairs[used],
        }
    )
    t = _accepted(t)
    factor = _factors(rules, units, t)
    cells = _flat(cell).take(pa.array(t["row"].to_numpy()))
    shape = t["kind"].to_numpy() == _SHAPE
    value = np.full(len(t), np.nan)
    # 1e308 Gbyte is inf bytes, which values.refuse_impossible refuses
    with np.errstate(over="ignore"):
        value[~shape] = _parse_numbers(cells.filter(pa.array(~shape))) * factor[~shape]
    t["value"] = value
    _refuse_conflicts(doc, t, identity)
    return _pivot(t, cells, shape, len(identity))


def _rule(name: str, unit: str, has_shape: bool) -> tuple[int, str | None]:
    """What `_add_metric` does with a row of this name and unit: (kind, target column); (0, None) to
    skip it. The precedence of ncu names over labels depends on the launch's rows before it: see
    `_accepted`."""
    if not name:
        return 0, None
    if wanted(name):
        return _WANTED, name
    if unit == "%" and name in PERCENT_DISPLAY:
        return _LABEL, PERCENT_DISPLAY[name]
    if name in DISPLAY:
        # a label is skipped for a known unit of another kind, never for a typo
        if unit_dimension(unit) is None:
            raise UnitError(name, unit, "a unit ncu prints")
        return (_LABEL, DISPLAY[name][0]) if _dimension_ok(DISPLAY[name][1], unit) else (0, None)
    # else the identity column of that name set it
    if name in ("Block Size", "Grid Size") and not has_shape:
        return _SHAPE, "block" if name == "Block Size" else "grid"
    return 0, None


def _accepted(t: pd.DataFrame) -> pd.DataFrame:
    """The rows `_add_metric` applies, in file order: every ncu-name row; a label's rows only while
    the column holds no other name's value (the first label seen claims it until an ncu-name row
    takes it); Block/Grid Size's first row only."""
    group = t.groupby(["launch", "target"], sort=False)
    is_wanted = t["kind"].to_numpy() == _WANTED
    before_wanted = (
        ~pd.Series(is_wanted, index=t.index)
        .groupby([t["launch"], t["target"]], sort=False)
        .cummax()
    )
    before_wanted |= pd.Series(is_wanted, index=t.index)  # an ncu-name row itself is applied
    first_name = group["name"].transform("first")
    keep = np.where(
        is_wanted,
        True,
        (t["name"] == first_name)
        & before_wanted
        & ((t["kind"] != _SHAPE) | (group.cumcount() == 0)),
    )
    # A label row after an ncu-name row, or after another label claimed the column: skipped.
    return t[keep.astype(bool)].reset_index(drop=True)


def _factors(rules: list[tuple[int, str | None]], units: list[str], t: pd.DataFrame) -> np.ndarray:
    """Each applied row's factor to SI, once per (name, unit), in file order: a unit wrong for its
    metric raises at its first applied row, as `_add_metric` does (a row it skips raises
    nothing)."""
    factors: dict[int, float] = {}
    for pair in pd.unique(t["pair"]):
        kind, target = rules[pair]
        assert target is not None  # an applied row has a target column
        factors[pair] = 1.0 if kind == _SHAPE else _factor(target, units[pair])
    out: np.ndarray = t["pair"].map(factors).to_numpy(dtype=float)
    return out


# Warp sample counts, which the details page's Source Counters section labels `warp`, `inst`, or
# (ncu 2024.1, membar) `byte`: a count whatever the label, never converted.
_SAMPLE_COUNTS = frozenset(PC_SAMPLES.values())


def _factor(target: str, unit: str) -> float:
    return 1.0 if target in _SAMPLE_COUNTS else metric_unit_factor(target, unit)


def _parse_numbers(cells: pa.Array) -> np.ndarray:
    """`parse_number` of each cell, once per distinct cell."""
    codes, distinct = pd.factorize(pd.Series(cells.to_numpy(zero_copy_only=False), dtype=object))
    return (
        np.array([parse_number(c) for c in distinct], dtype=float)[codes]
        if len(codes)
        else np.zeros(0)
    )


def _refuse_conflicts(doc: CsvText, t: pd.DataFrame, identity: pd.DataFrame) -> None:
    """`_refuse_conflict` for every applied row after one of the same name in its launch and
    column."""
    same = t.groupby(["launch", "target", "name"], sort=False)
    before = same["value"].shift()
    has = before.notna() | (same.cumcount() > 0)
    a, b = before.to_numpy(dtype=float), t["value"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        close = (
            (a == b)
            | (np.isnan(a) & np.isnan(b))
            | (np.abs(a - b) <= 0.01 * np.maximum(np.abs(a), np.abs(b)))
        )
    bad = np.flatnonzero(has.to_numpy() & ~close)
    if len(bad):
        at = bad[np.argmin(t["row"].to_numpy()[bad])]
        _refuse_conflict(
            doc, identity.iloc[t["launch"].iloc[at]].to_dict(), t["name"].iloc[at], a[at], b[at]
        )


def _pivot(t: pd.DataFrame, cells: pa.Array, shape: np.ndarray, launches: int) -> pd.DataFrame:
    """One column per target, the last applied row's value per launch (NaN where none), in the order
    the columns first get a value (as a DataFrame of the per-launch dicts orders them)."""
    last = t.groupby(["launch", "target"], sort=False).tail(1)
    order = (
        t.groupby("target", sort=False)[["launch", "row"]]
        .min()
        .sort_values(["launch", "row"])
        .index
    )
    text = pd.Series(cells.to_numpy(zero_copy_only=False), dtype=object).str.replace(
        ",", "", regex=False
    )
    out: dict[str, pd.Series | np.ndarray] = {}
    for target in order:
        rows = last[last["target"] == target]
        if shape[rows.index[0]]:
            column = np.full(launches, None, dtype=object)
            column[rows["launch"].to_numpy()] = text.to_numpy()[rows.index.to_numpy()]
            out[target] = pd.Series(column).infer_objects()
        else:
            column = np.full(launches, np.nan)
            column[rows["launch"].to_numpy()] = rows["value"].to_numpy()
            out[target] = column
    return pd.DataFrame(out)
