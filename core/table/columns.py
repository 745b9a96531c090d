"""The canonical kernels table: column names, units and meaning. Every view, export and script
agrees."""

from __future__ import annotations

from ..ncu.metrics import INSTRUCTION_MIX, MEMORY_CHART, PC_SAMPLES
from ..ncu.stalls import SAMPLE_COLUMNS, STALL_COLUMNS

# (name, unit, description). The order is the export order.
CANONICAL: list[tuple[str, str, str]] = [
    ("launch_id", "", "launch number in the report (ncu's ID); a group row: its first launch's"),
    ("kernel", "", "short kernel name (no return type, parameters or nested template arguments)"),
    ("kernel_full", "", "demangled kernel name as ncu printed it"),
    ("nvtx", "", "NVTX range(s) open at launch"),
    ("process", "", "process name (pid)"),
    ("device", "", "CUDA device index"),
    ("stream", "", "CUDA stream id"),
    ("grid", "", "grid size; a group row: '(mixed)' where its launches differ"),
    ("block", "", "block size; a group row: '(mixed)' where its launches differ"),
    ("registers", "", "registers per thread"),
    ("duration_s", "s", "kernel duration (gpu__time_duration.sum)"),
    ("flop_fp64", "FLOP", "FP64 SIMT FLOPs: add + mul + 2 x fma"),
    ("flop_fp32", "FLOP", "FP32 SIMT FLOPs: add + mul + 2 x fma"),
    ("flop_fp16", "FLOP", "FP16 SIMT FLOPs: add + mul + 2 x fma"),
    ("flop_tensor", "FLOP", "tensor-core FLOPs, all floating-point data types"),
    ("flop", "FLOP", "all FLOPs"),
    ("dram_read_bytes", "B", "DRAM bytes read"),
    ("dram_write_bytes", "B", "DRAM bytes written"),
    ("dram_bytes", "B", "DRAM bytes read + written"),
    ("l2_bytes", "B", "L2 bytes (lts__t_bytes.sum)"),
    ("l1_bytes", "B", "L1/TEX bytes (l1tex__t_bytes.sum)"),
    ("flop_per_s", "FLOP/s", "achieved FLOP rate"),
    ("dram_bytes_per_s", "B/s", "achieved DRAM bandwidth"),
    (
        "ai_dram",
        "FLOP/B",
        "arithmetic intensity against DRAM bytes (inf: FLOPs with no DRAM bytes)",
    ),
    ("ai_l2", "FLOP/B", "arithmetic intensity against L2 bytes"),
    ("ai_l1", "FLOP/B", "arithmetic intensity against L1 bytes"),
    (
        "peak_flop_per_s",
        "FLOP/s",
        "compute ceiling: FLOP-weighted harmonic mean of the peaks of the precisions run",
    ),
    ("peak_dram_bytes_per_s", "B/s", "DRAM bandwidth ceiling"),
    (
        "peak_l2_bytes_per_s",
        "B/s",
        "L2 bandwidth ceiling for l2_bytes (report peak counters; no datasheet has it)",
    ),
    (
        "peak_l1_bytes_per_s",
        "B/s",
        "L1/TEX bandwidth ceiling for l1_bytes (the report's peak counters)",
    ),
    (
        "attainable_flop_per_s",
        "FLOP/s",
        (
            "hierarchical roofline: min(peak, ai_dram x DRAM peak, ai_l2 x L2 peak, "
            "ai_l1 x L1 peak), each cache level where its bytes and peak are known"
        ),
    ),
    (
        "pct_of_peak",
        "%",
        "flop_per_s / peak_flop_per_s: time the FLOPs need at peak over the time taken",
    ),
    ("pct_of_roof", "%", "flop_per_s / attainable_flop_per_s"),
    (
        "bound",
        "",
        (
            "compute where the compute peak is the lowest ceiling of attainable_flop_per_s, else"
            " memory"
        ),
    ),
    (
        "roof",
        "",
        "what bounds the row: compute, or the memory level dram, l2 or l1 (dram on a tie)",
    ),
    ("estimated", "", "numbers of this row that were estimated, not counted"),
]
NAMES = [c[0] for c in CANONICAL]

# Extra columns after the canonical ones: where numbers and ceilings came from.
EXTRA: list[tuple[str, str, str]] = [
    ("count", "", "launches in the row (1 per launch; more when grouped)"),
    (
        "not_profiled",
        "",
        "launches in the row ncu did not profile: not in its time, which is then a lower bound",
    ),
    ("pct_time", "%", "share of total kernel time"),
    (
        "precision",
        "",
        "precisions whose ceilings judge the row, largest share of time at peak first",
    ),
    ("peak_source", "", "where peak_flop_per_s comes from: report counters or datasheet"),
    ("flop_tensor_fp64", "FLOP", "tensor FLOPs, FP64"),
    ("flop_tensor_tf32", "FLOP", "tensor FLOPs, TF32"),
    ("flop_tensor_fp16", "FLOP", "tensor FLOPs, FP16 (FP32 or unknown accumulator)"),
    ("flop_tensor_fp16_acc16", "FLOP", "tensor FLOPs, FP16 accumulating in FP16"),
    ("flop_tensor_bf16", "FLOP", "tensor FLOPs, BF16"),
    ("flop_tensor_fp8", "FLOP", "tensor FLOPs, FP8 (FP32 or unknown accumulator)"),
    ("flop_tensor_fp8_acc16", "FLOP", "tensor FLOPs, FP8 accumulating in FP16"),
    ("flop_tensor_fp6", "FLOP", "tensor FLOPs, FP6"),
    ("flop_tensor_fp4", "FLOP", "tensor FLOPs, FP4"),
    ("sm_clock_hz", "Hz", "measured SM clock"),
    ("gpu", "", "device name"),
    ("cc", "", "compute capability"),
    (
        "integer_mma",
        "",
        (
            "its work is integer tensor-core MMA (IMMA) and no floating-point MMA: no FLOP ceiling "
            "judges it, so % of peak, % of roof and bound are empty"
        ),
    ),
    ("sol_sm_pct", "%", "speed of light, SM: sm__throughput % of peak (ncu's Compute Throughput)"),
    (
        "sol_memory_pct",
        "%",
        (
            "speed of light, memory: gpu__compute_memory_throughput % of peak (ncu's Memory"
            " Throughput)"
        ),
    ),
    ("sol_dram_pct", "%", "DRAM throughput, % of peak"),
    ("sol_l2_pct", "%", "L2 throughput, % of peak"),
    ("sol_l1_pct", "%", "L1/TEX throughput, % of peak while active"),
    (
        "occupancy_achieved_pct",
        "%",
        "achieved occupancy: active warps per SM, % of the SM's maximum",
    ),
    (
        "occupancy_theoretical_pct",
        "%",
        "theoretical occupancy: the warps per SM the launch allows, % of the maximum",
    ),
    (
        "occupancy_limiter",
        "",
        "what limits theoretical occupancy: the resource(s) allowing the fewest blocks per SM",
    ),
    ("occupancy_limit_blocks", "", "blocks per SM the occupancy limiter allows"),
    ("waves_per_sm", "", "waves of blocks per SM (launch__waves_per_multiprocessor)"),
    ("pipe_alu_pct", "%", "ALU pipe utilisation, % of peak while active"),
    ("pipe_fma_pct", "%", "FMA pipe utilisation, % of peak while active"),
    ("pipe_fp64_pct", "%", "FP64 pipe utilisation, % of peak while active"),
    ("pipe_lsu_pct", "%", "LSU pipe utilisation, % of peak while active"),
    ("pipe_xu_pct", "%", "XU (transcendental) pipe utilisation, % of peak while active"),
    ("pipe_fp16_pct", "%", "FP16 pipe utilisation, % of peak while active"),
    (
        "pipe_adu_pct",
        "%",
        "ADU (address divergence: branches, jumps) pipe utilisation, % of peak while active",
    ),
    (
        "pipe_cbu_pct",
        "%",
        "CBU (convergence barrier: warp-level branches, barriers) pipe utilisation, % of peak",
    ),
    ("pipe_tex_pct", "%", "TEX (texture, surface) pipe utilisation, % of peak while active"),
    ("pipe_uniform_pct", "%", "uniform pipe utilisation, % of peak while active"),
    ("pipe_tensor_pct", "%", "tensor pipe utilisation: cycles active, % of peak while active"),
    (
        "pipe_tc_pct",
        "%",
        (
            "Blackwell 5th-generation tensor core pipe (tcgen05 MMA) utilisation: cycles active, %"
            " of peak while active"
        ),
    ),
    (
        "pipe_tmem_pct",
        "%",
        "Blackwell tensor memory (TMEM) pipe utilisation, % of peak while active",
    ),
    (
        "sm_busy_pct",
        "%",
        "SM busy: the busiest issue pipe's instruction throughput, % of peak while active",
    ),
    (
        "ipc_active",
        "",
        "warp instructions executed per cycle an SM was active (ncu's Executed Ipc Active)",
    ),
    *(
        (
            column,
            "cycles",
            (
                f"warp stall, {r.title.lower()}: cycles per issued instruction a warp spent"
                f" {r.meaning}"
            ),
        )
        for column, r in STALL_COLUMNS.items()
    ),
    ("mem_global_ld_requests", "", "global load requests to L1/TEX (memory chart)"),
    ("mem_global_ld_sectors", "", "32-byte sectors those loads touched in L1/TEX"),
    ("mem_global_ld_hit_sectors", "", "of those sectors, the ones that hit in L1/TEX"),
    ("mem_global_st_requests", "", "global store requests to L1/TEX"),
    ("mem_global_st_sectors", "", "32-byte sectors those stores touched"),
    ("mem_local_ld_sectors", "", "local-memory load sectors (register spills, local arrays)"),
    ("mem_local_st_sectors", "", "local-memory store sectors"),
    (
        "mem_shared_wavefronts",
        "",
        "shared-memory wavefronts (passes of the data pipe for shared loads and stores)",
    ),
    ("mem_shared_bank_conflicts", "", "shared-memory bank conflicts (extra wavefronts)"),
    ("mem_l2_to_l1_bytes", "B", "bytes L1/TEX read from L2 (through the crossbar)"),
    ("mem_l1_to_l2_bytes", "B", "bytes L1/TEX wrote to L2"),
    ("mem_l2_sectors", "", "32-byte sectors requested of L2, from every unit"),
    ("mem_l2_hit_sectors", "", "of those, the ones that hit in L2"),
    ("inst_executed", "", "warp-level instructions executed (ncu's Executed Instructions)"),
    ("inst_global_ld", "", "of those, global-memory loads"),
    ("inst_global_st", "", "global-memory stores"),
    ("inst_shared_ld", "", "shared-memory loads"),
    ("inst_shared_st", "", "shared-memory stores"),
    ("inst_local_ld", "", "local-memory loads (register spills, local arrays)"),
    ("inst_local_st", "", "local-memory stores"),
    ("inst_branch", "", "branch instructions"),
    *(
        (
            column,
            "",
            (
                f"PC samples of warps stalled on {r.title.lower()}, over the launch's SASS"
                " addresses (ncu's SourceCounters)"
            ),
        )
        for column, r in SAMPLE_COLUMNS.items()
    ),
    ("provenance", "", "numbers derived from rates or other exact sources"),
    ("status", "", "ok, or why ncu recorded no values for the launch"),
]
ALL = CANONICAL + EXTRA

# Internal columns, after all others in a launches or grouped table (and so in exports): the
# report's own ceilings per launch (peak per cycle x measured clock), which win over the datasheet
# in `roofline.derive`.
REPORT_PEAKS: list[tuple[str, str, str]] = [
    ("report_peak_fp64_flop_per_s", "FLOP/s", "FP64 SIMT ceiling from the report's peak counters"),
    ("report_peak_fp32_flop_per_s", "FLOP/s", "FP32 SIMT ceiling from the report's peak counters"),
    ("report_peak_fp16_flop_per_s", "FLOP/s", "FP16 SIMT ceiling from the report's peak counters"),
    (
        "report_peak_dram_bytes_per_s",
        "B/s",
        "DRAM bandwidth ceiling from the report's peak counters",
    ),
    (
        "report_peak_dram_own_bytes_per_s",
        "B/s",
        (
            "DRAM ceiling at the launch's own DRAM clock reading (a short "
            "launch's is noisy): the above-ceiling check's other bound"
        ),
    ),
    (
        "report_peak_l2_bytes_per_s",
        "B/s",
        "L2 bandwidth ceiling (lts__t_bytes) from the report's peak counters",
    ),
    (
        "report_peak_l1_bytes_per_s",
        "B/s",
        "L1/TEX bandwidth ceiling (l1tex__t_bytes) from the report's peak counters",
    ),
]
# The launch's NVTX stack, structured (core/common/nvtx_stack.py: names kept whole, parts apart by
# control characters): what the module tree reads. Exports and --json write the `nvtx` label in its
# place.
NVTX_STACK: list[tuple[str, str, str]] = [
    (
        "nvtx_stack",
        "",
        "NVTX ranges open at launch, per domain, each name whole (internal: the module tree's)",
    ),
    (
        "nvtx_ranges",
        "",
        (
            "a --by nvtx group's NVTX stack as --json writes it: per domain (null: the default"
            " one) its ranges outermost first, each name whole, emit_nvtx's arguments left out"
        ),
    ),
]
NOT_WRITTEN = ("nvtx_stack",)
# every column a kernels table (launches or groups) may hold
DECLARED = ALL + REPORT_PEAKS + NVTX_STACK
UNITS = {name: unit for name, unit, _ in DECLARED}
DESCRIPTIONS = {name: text for name, _, text in DECLARED}
# Whole numbers: exports write 7, not 7.0. How a kernels table groups: --by's choices -> the column
# a group shares (None: one row per launch).
GROUPINGS = {"name": "kernel_full", "nvtx": "nvtx", "launch": None}
INTEGER = ["launch_id", "device", "stream", "registers", "count", "not_profiled"]

# The counted columns, named once for every module that treats them alike.
SIMT_FLOP = ("flop_fp64", "flop_fp32", "flop_fp16")
TENSOR_TYPES = ("fp64", "tf32", "fp16", "fp16_acc16", "bf16", "fp8", "fp8_acc16", "fp6", "fp4")
# per data type; they add up to flop_tensor
TENSOR_FLOP = tuple(f"flop_tensor_{t}" for t in TENSOR_TYPES)
FLOP_PARTS = (*SIMT_FLOP, "flop_tensor")  # `flop` is their sum
# What ncu counts per launch, one ncu option each (counters.collecting names it): a launch without
# any of them was not profiled; a table lacking one says which counters to collect.
COLLECTED = ("duration_s", *FLOP_PARTS, "dram_bytes", "l2_bytes", "l1_bytes")
# Every per-launch amount: a group's value is the sum of its launches'.
COUNTED = (
    "duration_s",
    *FLOP_PARTS,
    "dram_read_bytes",
    "dram_write_bytes",
    "dram_bytes",
    "l2_bytes",
    "l1_bytes",
    *TENSOR_FLOP,
    *MEMORY_CHART,
    *INSTRUCTION_MIX,
    *PC_SAMPLES,
)
# Derived columns -> the counted columns they are computed from (a derived value is missing when one
# is).
NEEDS: dict[str, tuple[str, ...]] = {
    "flop": FLOP_PARTS,
    "flop_per_s": FLOP_PARTS,
    "pct_of_peak": FLOP_PARTS,
    "pct_of_roof": (*FLOP_PARTS, "dram_bytes"),
    "bound": (*FLOP_PARTS, "dram_bytes"),
    "roof": (*FLOP_PARTS, "dram_bytes"),
    "ai_dram": (*FLOP_PARTS, "dram_bytes"),
    "ai_l2": (*FLOP_PARTS, "l2_bytes"),
    "ai_l1": (*FLOP_PARTS, "l1_bytes"),
    "dram_bytes_per_s": ("dram_bytes",),
}

FMA_CONVENTION = "FMA = 2 FLOPs (FP16: ncu counts 2-lane HFMA2s, 4 FLOPs each)"
