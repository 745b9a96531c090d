"""Build `ncu --csv --page raw` text from real launches, in the layout variants ncu prints.

The values come from a real details-layout fixture (V100 CUTLASS GEMMs) parsed here with the csv
module, independently of the engine; only the layout around them changes."""

from __future__ import annotations

import csv
import io
from pathlib import Path

IDENT = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
]
# metric -> (base unit, auto-scaled unit, scale divisor)
UNITS = {
    "dram__bytes.sum": ("byte", "Mbyte", 1e6),
    "lts__t_bytes.sum": ("byte", "Gbyte", 1e9),
    "l1tex__t_bytes.sum": ("byte", "Kbyte", 1e3),
    "sm__cycles_elapsed.avg": ("cycle", "cycle", 1.0),
    "sm__cycles_elapsed.avg.per_second": ("cycle/second", "Ghz", 1e9),
    "sm__inst_executed_pipe_tensor.sum": ("inst", "inst", 1.0),
    # every SIMT counter: a precision with any of add/mul/fma missing has unknown FLOPs
    **{
        f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on.sum": ("inst", "inst", 1.0)
        for p in "dfh"
        for op in ("add", "mul", "fma")
    },
}

# A time unit in seconds, as ncu spells it (with `--print-units base` or without), for tests that
# read a raw page's durations without the engine.
SECONDS = {
    "ns": 1e-9,
    "nsecond": 1e-9,
    "us": 1e-6,
    "usecond": 1e-6,
    "ms": 1e-3,
    "msecond": 1e-3,
    "s": 1.0,
    "second": 1.0,
}


def launches(details: Path) -> list[dict]:
    lines = details.read_text(encoding="utf-8-sig").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    col = {h: k for k, h in enumerate(rows[0])}
    out: dict[str, dict] = {}
    for r in rows[1:]:
        launch = out.setdefault(r[0], {h: r[col[h]] for h in IDENT if h in col})
        if r[col["Metric Name"]] in UNITS:
            launch[r[col["Metric Name"]]] = float(r[col["Metric Value"]].replace(",", ""))
    return list(out.values())


def simt_flop(row: dict) -> float:
    """SIMT FLOPs of a launch read by `launches`: add + mul + 2 x fma per precision; the half
    counters count 2-lane instructions (x2)."""
    total = 0.0
    for letter, lanes in (("d", 1), ("f", 1), ("h", 2)):
        ops = {
            op: row[f"sm__sass_thread_inst_executed_op_{letter}{op}_pred_on.sum"]
            for op in ("add", "mul", "fma")
        }
        total += lanes * (ops["add"] + ops["mul"] + 2 * ops["fma"])
    return total


def raw_csv(
    rows: list[dict],
    *,
    scaled: bool = False,
    thousands: bool = False,
    blank_units: bool = False,
    prof_lines: bool = False,
    na_metric: str | None = None,
    extra_cols: dict | None = None,
) -> str:
    metrics = list(UNITS)
    extra_cols = extra_cols or {}
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    if prof_lines:
        buf.write("==PROF== Connected to process 24103 (/bin/app)\n")
    w.writerow(IDENT + list(extra_cols) + metrics)
    units = ["" if blank_units and not scaled else UNITS[m][1 if scaled else 0] for m in metrics]
    w.writerow([""] * (len(IDENT) + len(extra_cols)) + units)
    for i, row in enumerate(rows):
        cells = []
        for m in metrics:
            value = row[m] / (UNITS[m][2] if scaled else 1.0)
            if m == na_metric and i == 0:
                cells.append("n/a")
            elif thousands:
                cells.append(f"{value:,.2f}")
            else:
                cells.append(repr(value) if scaled else f"{value:.0f}")
        w.writerow(
            [row.get(h, "") for h in IDENT] + [v[i % len(v)] for v in extra_cols.values()] + cells
        )
        if prof_lines and i == 0:
            buf.write("==WARNING== Backing up device memory in system memory.\n")
    return buf.getvalue()


def one_launch(
    path: Path, cols: dict[str, tuple[str, float]], cc: str = "9.0", kernel: str = "kernel"
) -> Path:
    """A raw page (`ncu --csv --page raw --print-units base` layout) of one launch: metric -> (unit,
    value)."""
    values = ["0", "1", "python", "h", kernel, "1", "7", "(256, 1, 1)", "(132, 1, 1)", "0", cc]
    lines = [
        [*IDENT, *cols],
        [""] * len(IDENT) + [u for u, _ in cols.values()],
        values + [repr(v) for _, v in cols.values()],
    ]
    path.write_text("\n".join(",".join(f'"{c}"' for c in line) for line in lines) + "\n")
    return path


def page(
    path: Path, units: dict[str, str], rows: list[dict], gpu: str = "", cc: str = "8.0"
) -> Path:
    """A raw page (`--print-units base` layout) of several launches. `units`: metric -> unit; each
    row: metric -> value (absent or None: the cell ncu leaves empty), plus optional "kernel", "cc"
    and "gpu" (the device__attribute_display_name column, written when any launch names a GPU)."""
    named = bool(gpu) or any(r.get("gpu") for r in rows)
    extra = ["device__attribute_display_name"] if named else []
    head = [*IDENT, *extra, *units]
    lines = [head, [""] * (len(IDENT) + len(extra)) + list(units.values())]
    for i, row in enumerate(rows):
        ident = [
            str(i),
            "1",
            "app",
            "h",
            row.get("kernel", f"kernel_{i}"),
            "1",
            "7",
            "(256, 1, 1)",
            "(64, 1, 1)",
            "0",
            row.get("cc", cc),
        ]
        cells = ["" if row.get(m) is None else repr(float(row[m])) for m in units]
        lines.append(ident + ([row.get("gpu", gpu)] if named else []) + cells)
    path.write_text("\n".join(",".join(f'"{c}"' for c in line) for line in lines) + "\n")
    return path


def mixed_accumulate_hgemm(path: Path) -> Path:
    """One HGEMM launch on an RTX 4090 (1 s at 2.52 GHz), its tensor work accumulating 3/4 in FP16
    and 1/4 in FP32, counted as ncu names those counters; no SIMT work. Its precision is a two-part
    tensor label."""
    simt = {
        f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum": "inst"
        for p in "dfh"
        for op in ("add", "mul", "fma")
    }
    units = {
        "gpu__time_duration.sum": "nsecond",
        "smsp__cycles_elapsed.avg.per_second": "cycle/second",
        "sm__ops_path_tensor_src_fp16.sum": "",
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum": "",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": "",
        **simt,
    }
    row = {
        "gpu__time_duration.sum": 1e9,
        "smsp__cycles_elapsed.avg.per_second": 2.52e9,
        **dict.fromkeys(simt, 0),
        "sm__ops_path_tensor_src_fp16.sum": 4e14,
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum": 3e14,
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 1e14,
        "kernel": "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
    }
    return page(path, units, [row], gpu="NVIDIA GeForce RTX 4090", cc="8.9")


def with_details_cell(path: Path, out: Path, launch: int, metric: str, value: float) -> Path:
    """A copy of details CSV `path` at `out` with one launch's `metric` cell set to `value` (ncu's
    --print-fp form), the rest byte for byte: the real file with one counter changed."""
    lines = path.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    cell = f'"{metric}",'
    for i, line in enumerate(lines):
        if line.startswith(f'"{launch}",') and cell in line:
            lines[i] = line[: line.rindex(',"')] + f',"{value:,.2f}"\n'
    out.write_text("".join(lines), encoding="utf-8")
    return out


def partial_warp_sgemm(path: Path, out: Path) -> Path:
    """The A100 SGEMM CSV (a100_gemm_printfp_details.csv) with launch 2's HFMAs one short of 32 per
    tensor-pipe instruction: no longer provably all register moves, so its tensor FLOPs are unknown
    (no checked factor)."""
    hfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
    rows = csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig")))
    value = next(float(r[-1].replace(",", "")) for r in rows if r and r[0] == "2" and r[-3] == hfma)
    return with_details_cell(path, out, 2, hfma, value - 1)


def repeated_raw_page(source: Path, out: Path, launches: int) -> Path:
    """A big raw page: the launches of the real raw page `source` repeated to `launches` rows, each
    with a fresh ID, its header and units rows as ncu printed them."""
    lines = source.read_bytes().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(b'"ID"'))
    header, units, rows = lines[start], lines[start + 1], lines[start + 2 :]
    rows = [row.split(b",", 1)[1] for row in rows if row.startswith(b'"')]  # without their ID cell
    with out.open("wb") as handle:
        handle.write(header + units)
        handle.writelines(b'"%d",%s' % (i, rows[i % len(rows)]) for i in range(launches))
    return out


def raw_kernel_time_s(page: Path) -> float:
    """The kernel time of an ncu raw page (a run folder's raw.csv), summed with the csv module: its
    gpu__time_duration.sum column in the unit its units row names (ns), thousands separators
    dropped."""
    with page.open(newline="") as f:
        rows = list(csv.reader(f))
    at = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    column = rows[at].index("gpu__time_duration.sum")
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[rows[at + 1][column]]
    return sum(float(r[column].replace(",", "")) for r in rows[at + 2 :] if r) * scale
