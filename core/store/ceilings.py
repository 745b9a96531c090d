"""Ceilings measured on a node (`flopscope ceilings`), kept in the run store per host + GPU +
driver.

Three kinds of roof judge a kernel, and every number must say which one it used: the datasheet
(core/common/gpus.py), the theoretical peak at the clock a launch ran at (the report's peak
counters), and what microbenchmarks reached on this node (here). Values are SI: bytes/s and FLOP/s.
The measurement itself is core/profiling/ceilings_bench.py, run on the target."""

from __future__ import annotations

import json
import math
import sqlite3
import time
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..common.errors import FlopscopeError
from ..common.gpus import find_gpu
from ..table.roofline import Roof
from .run_store import Store, default_path, store_error

if TYPE_CHECKING:
    from ..report.report import Report

# Each measured ceiling: (its key, what measured it, the datasheet peak of core/common/gpus.py it is
# compared with; None: the datasheet has no such figure).
KINDS = {
    "dram_bytes_per_s": (
        "DRAM: streaming copy, 2x L2 and at least 1 GiB, read + write bytes",
        "dram",
    ),
    "l2_bytes_per_s": (
        "L2: 64 copies of a working set a quarter of L2 in one CUDA graph, read + write bytes",
        None,
    ),
    "fp32_flop_per_s": (
        "FP32 FMA: 8 dependent FMA chains per element, unrolled (2 FLOPs each)",
        "fp32",
    ),
    "fp64_flop_per_s": (
        "FP64 FMA: 8 dependent FMA chains per element, unrolled (2 FLOPs each)",
        "fp64",
    ),
    "tensor_tf32_flop_per_s": ("TF32 GEMM (torch.matmul, fp32 with TF32 allowed)", "tensor_tf32"),
    "tensor_fp16_flop_per_s": ("FP16 GEMM (torch.matmul)", "tensor_fp16"),
    "tensor_bf16_flop_per_s": ("BF16 GEMM (torch.matmul)", "tensor_bf16"),
    "tensor_fp8_flop_per_s": ("FP8 e4m3 GEMM (torch._scaled_mm, bf16 out)", "tensor_fp8"),
}
SCHEMA = """CREATE TABLE IF NOT EXISTS ceilings (
    host TEXT NOT NULL, gpu TEXT NOT NULL, driver TEXT NOT NULL, measured REAL NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (host, gpu, driver))"""


@dataclass
class Ceilings:
    host: str
    gpu: str  # as the driver names it (torch.cuda.get_device_name)
    driver: str
    values: dict[str, float]  # KINDS key -> measured rate (SI)
    measured: float = field(default_factory=time.time)  # when (Unix time)
    # torch version, CUDA, sizes, repetitions: to redo it
    how: dict[str, str] = field(default_factory=dict)
    origin: str = "measured"  # "measured" on a node; anything else says where the numbers came from

    def of_datasheet(self, key: str) -> float | None:
        """This ceiling as a fraction of the datasheet's, when the GPU database knows this GPU and
        figure."""
        gpu, peak = find_gpu(self.gpu), KINDS[key][1]
        if gpu is None or peak is None or key not in self.values:
            return None
        datasheet = gpu.dram_bytes_per_s if peak == "dram" else gpu.peak(peak)
        return self.values[key] / datasheet if datasheet else None

    def clock_hz(self, key: str) -> float | None:
        """The SM clock nvidia-smi reported while `key` was measured (None for measurements made
        before the bench sampled it, or without nvidia-smi)."""
        try:
            mhz = json.loads(self.how.get("sm_clock_mhz", "{}") or "{}").get(key)
        except (ValueError, AttributeError):
            return None
        return float(mhz) * 1e6 if isinstance(mhz, (int, float)) and mhz > 0 else None

    def of_datasheet_at_clock(self, key: str) -> float | None:
        """This compute ceiling as a fraction of the datasheet's scaled to the clock it ran at: what
        the silicon delivered per clock, apart from how far power or a cap held the clock down. None
        for memory (DRAM bandwidth does not follow the SM clock) and where the clock or the
        datasheet's is unknown."""
        gpu, peak, clock = find_gpu(self.gpu), KINDS[key][1], self.clock_hz(key)
        ratio = self.of_datasheet(key)
        if gpu is None or peak in (None, "dram") or clock is None or ratio is None:
            return None
        quoted = gpu.clock_hz(peak)
        # NaN: not published
        return ratio * quoted / clock if not math.isnan(quoted) and quoted > 0 else None


def from_bench(host: str, doc: dict[str, Any]) -> Ceilings:
    """The bench script's JSON as Ceilings; a result without a GPU or a driver is refused."""
    if isinstance(doc, dict) and "error" in doc:
        raise FlopscopeError(
            f"ceilings on {host}",
            str(doc["error"]),
            "measure where torch with CUDA sees the GPU: `flopscope doctor` checks torch and its"
            " CUDA build there",
        )
    try:
        values = {k: float(v) for k, v in doc["values"].items() if k in KINDS and v}
        return Ceilings(
            host, str(doc["gpu"]), str(doc["driver"]), values, how=dict(doc.get("how", {}))
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FlopscopeError(
            f"ceilings on {host}",
            f"the measurement returned no usable result ({exc})",
            "`flopscope doctor` checks torch and its CUDA build there",
        ) from None


def save(store: Store, c: Ceilings) -> None:
    """Keep `c`, replacing what was measured before for the same host, GPU and driver."""
    doc = json.dumps({"values": c.values, "how": c.how, "origin": c.origin})
    try:
        with store.db:
            store.db.execute(SCHEMA)
            store.db.execute(
                "INSERT OR REPLACE INTO ceilings VALUES (?,?,?,?,?)",
                (c.host, c.gpu, c.driver, c.measured, doc),
            )
    except sqlite3.Error as exc:
        raise store_error(store.path, exc, "cannot store the ceilings") from None


def load_all(store: Store, host: str | None = None) -> list[Ceilings]:
    """Every stored measurement (of `host`), newest first."""
    try:
        store.db.execute(SCHEMA)
        rows = store.db.execute(
            "SELECT host, gpu, driver, measured, doc FROM ceilings"
            + (" WHERE host = ?" if host else "")
            + " ORDER BY measured DESC",
            (host,) if host else (),
        ).fetchall()
    except sqlite3.Error as exc:
        raise store_error(store.path, exc, "cannot read the ceilings") from None
    found = []
    for host_, gpu, driver, measured, text in rows:
        try:
            doc = json.loads(text)
            found.append(
                Ceilings(
                    host_,
                    gpu,
                    driver,
                    {k: float(v) for k, v in doc["values"].items()},
                    measured,
                    doc.get("how", {}),
                    doc.get("origin", "measured"),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a damaged row: the others still show
    return found


def for_gpu(store: Store, host: str, gpu: str) -> Ceilings | None:
    """The newest measurement of this GPU on this host (any driver): the roof `measured on this
    node`."""
    return next((c for c in load_all(store, host) if c.gpu == gpu), None)


def ceilings_json(c: Ceilings) -> dict[str, Any]:
    doc = asdict(c)
    doc["of_datasheet"] = {k: c.of_datasheet(k) for k in c.values}
    return doc


def as_roof(c: Ceilings, device: str = "") -> Roof:
    """`c` as the roof `measured on this node` for the launches on `device` (all where empty): each
    KINDS key as the ceiling it measures (`tensor_bf16_flop_per_s` -> `tensor_bf16`,
    `dram_bytes_per_s` -> `dram`)."""
    values = {
        key.removesuffix("_flop_per_s").removesuffix("_bytes_per_s"): v
        for key, v in c.values.items()
        if v > 0
    }
    when = time.strftime("%Y-%m-%d", time.localtime(c.measured))
    where = f"measured on {c.host}" if c.origin == "measured" else f"{c.origin} on {c.host}"
    return Roof("measured", values, device, f"{where} ({when}, driver {c.driver})")


def measured_roof(report: Report, store: Store | None = None) -> tuple[Roof | None, str]:
    """(the measured roof of the report's GPUs, "") from the newest stored ceilings of each:
    measured on the host the report was profiled on where there is one, else on any host (the source
    names it); or (None, why there is none, with the command that measures one). The main GPU (of
    most launches) must have ceilings; on a file of several GPUs, each other GPU with stored
    ceilings is judged by its own (`Roof.others`), the rest keep the clock roof."""
    gpu = report.meta.gpu
    if not gpu:
        return None, "the report names no GPU, so no measured ceilings can be matched to it"
    how = f"`flopscope ceilings [--host HOST]` on a node with {gpu} measures them"
    if store is None and not default_path().exists():
        return None, f"no ceilings measured for {gpu} are stored (no run store yet); {how}"
    try:
        own = store if store is not None else Store()
    except FlopscopeError as err:
        return None, f"the run store cannot be read ({err.line()})"
    try:
        stored = load_all(own)
    except FlopscopeError as err:
        return None, f"the stored ceilings cannot be read ({err.line()})"
    finally:
        if store is None:
            own.close()
    several = len(report.gpu_names) > 1
    roofs = {}
    for name in dict.fromkeys([str(gpu), *(report.gpu_names if several else [])]):
        chosen = _newest_for(stored, name, report.meta.params.get("host"))
        if chosen is not None:
            roofs[name] = as_roof(chosen, name if several else "")
    main = roofs.pop(str(gpu), None)
    if main is None:
        return None, f"no ceilings measured for {gpu} are stored; {how}"
    return replace(main, others=tuple(roofs.values())), ""


def _newest_for(stored: list[Ceilings], gpu: str, host: str | None) -> Ceilings | None:
    """The newest stored ceilings of `gpu`: of `host` where it has some, else of any host."""
    found = [c for c in stored if c.gpu.casefold() == gpu.casefold()]
    return next((c for c in found if host and c.host == host), found[0] if found else None)


def judged_by(report: Report, kind: str) -> Report:
    """`report` judged against the roof `--roof KIND` names (`report`, `export`, `open`, in the CLI
    and the app alike); itself for `clock`, the roof it was read with."""
    return report if kind == "clock" else report.against(roof_named(report, kind))


def roof_named(report: Report, kind: str, store: Store | None = None) -> Roof:
    """The roof `--roof KIND` names for `report`; `measured` refused (one line, with the command
    that measures one) where no ceilings of the report's GPU are stored."""
    if kind != "measured":
        return Roof(kind)
    roof, why = measured_roof(report, store)
    if roof is None:
        raise FlopscopeError(
            "--roof measured", why, "or use --roof clock (the default) or --roof datasheet"
        )
    return roof
