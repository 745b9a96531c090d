"""Training steps for the per-step MFU tests: a real H100 training step's raw page (tests/data/gpu)
played twice, each launch inside a `step N` start/end range as `profile --modules` opens one (ncu's
NVTX cell format), and the figures of each step read back from that page with the csv module alone,
independently of the engine."""

from __future__ import annotations

import csv
import gzip
import json
from collections import defaultdict
from pathlib import Path

from .raw_csv import SECONDS

TRAIN_STEP = (
    Path(__file__).parents[1] / "data/gpu/nvidia_h100_80gb_hbm3/train_transformer_bs8.csv.gz"
)
_START_STOP = "Start/Stop_Range"
_FFMA_PEAK = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"


def two_step_page(out: Path, steps: int = 2) -> Path:
    """The FP32 transformer step's launches STEPS times over, fresh IDs, each pass under its `step
    N` range."""
    with gzip.open(TRAIN_STEP, "rt", encoding="utf-8", newline="") as source:
        rows = list(csv.reader(source))
    header, units, launches = rows[0], rows[1], [r for r in rows[2:] if r]
    cell = next(i for i, h in enumerate(header) if _START_STOP in h)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerows([header, units])
        for n in range(1, steps + 1):
            for k, launch in enumerate(launches):
                row = list(launch)
                row[0] = str((n - 1) * len(launches) + k)
                step = f' "{1000 + n}:<default domain>:step {n}:none:none:none:none:none:none" '
                row[cell] = step + row[cell][1:] if row[cell] else step
                writer.writerow(row)
    return out


def write_timing(folder: Path, walls: dict[int, float]) -> Path:
    """A timing file as the hooks write it."""
    path = folder / "timing.json"
    path.write_text(json.dumps({"steps": [{"step": n, "wall_s": w} for n, w in walls.items()]}))
    return path


def page_steps(page: Path) -> tuple[dict[int, float], dict[int, float], float, float]:
    """Per step (from each launch's Start/Stop cell): the summed gpu__time_duration.sum in seconds
    and the FP32 FLOPs (add + mul + 2 x fma); and the FP32 peak: 2 x the FFMA peak per cycle x the
    SM clock (smsp__cycles_elapsed), time-weighted over the launches (how a run's ceiling is taken
    at its measured clock); and that clock in Hz."""
    with page.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, units = rows[0], rows[1]
    col = {h: i for i, h in enumerate(header)}
    cell = next(i for i, h in enumerate(header) if _START_STOP in h)
    duration = col["gpu__time_duration.sum"]
    scale = SECONDS[units[duration]]
    clock = col["smsp__cycles_elapsed.avg.per_second"]  # the SM clock the engine reads first
    clock_scale = {
        "Hz": 1.0,
        "hz": 1.0,
        "cycle/second": 1.0,
        "cycle/nsecond": 1e9,
        "Ghz": 1e9,
        "GHz": 1e9,
    }.get(units[clock], 1.0)
    time: dict[int, float] = defaultdict(float)
    flop: dict[int, float] = defaultdict(float)
    weighted = total = 0.0
    for r in rows[2:]:
        step = int(r[cell].split(":step ", 1)[1].split(":", 1)[0])
        seconds = float(r[duration].replace(",", "")) * scale
        time[step] += seconds
        name = "smsp__sass_thread_inst_executed_op_f{}_pred_on.sum"
        ops = [float(r[col[name.format(op)]].replace(",", "")) for op in ("add", "mul", "fma")]
        flop[step] += ops[0] + ops[1] + 2 * ops[2]
        weighted += float(r[clock].replace(",", "")) * clock_scale * seconds
        total += seconds
    clock_hz = weighted / total
    return (
        dict(time),
        dict(flop),
        2 * float(rows[2][col[_FFMA_PEAK]].replace(",", "")) * clock_hz,
        clock_hz,
    )


def module_rows(page: Path, module: str) -> tuple[float, float, float]:
    """A module's launches on the page, by their NVTX cells alone: forward ones inside its push/pop
    range (`<default domain>:attn:`), backward ones inside its start/end range (`backward/attn`, the
    capture's own hooks). Their summed seconds, FP32 FLOPs (add + mul + 2 x fma) and TF32 tensor
    FLOPs (ops, one FLOP each)."""
    with page.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, units = rows[0], rows[1]
    col = {h: i for i, h in enumerate(header)}
    push = next(i for i, h in enumerate(header) if "Push/Pop_Range" in h)
    start = next(i for i, h in enumerate(header) if _START_STOP in h)
    scale = SECONDS[units[col["gpu__time_duration.sum"]]]

    def number(r: list[str], name: str) -> float:
        return float(r[col[name]].replace(",", "") or 0)

    seconds = fp32 = tf32 = 0.0
    for r in rows[2:]:
        if (
            f"<default domain>:{module}:" in r[push]
            or f"<default domain>:backward/{module}:" in r[start]
        ):
            seconds += number(r, "gpu__time_duration.sum") * scale
            ops = [
                number(r, f"smsp__sass_thread_inst_executed_op_f{op}_pred_on.sum")
                for op in ("add", "mul", "fma")
            ]
            fp32 += ops[0] + ops[1] + 2 * ops[2]
            tf32 += number(r, "sm__ops_path_tensor_src_tf32_dst_fp32.sum")
    return seconds, fp32, tf32


def without_cell(page: Path, launch: int, metric: str) -> float:
    """Empty one launch's METRIC cell on the page (a counter ncu did not collect for it); the value
    it held."""
    with page.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    at = rows[0].index(metric)
    row = next(r for r in rows[2:] if r[0] == str(launch))
    value, row[at] = float(row[at].replace(",", "") or 0), ""
    with page.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return value
