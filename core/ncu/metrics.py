"""The ncu metric names flopscope uses, in one table: what `flopscope profile --metrics SET` asks
ncu for (METRIC_SETS), which metrics the readers keep (`READ`, everything else in a report is
skipped for speed), and which metrics fill each counted column of the kernels table (COLUMN_METRICS:
the "collect it with" hints). tests/core/test_ncu_metrics.py checks that they agree: every metric a
set collects is read, and every metric a column is filled from is in a set or named here as
collected only on request.
"""

from __future__ import annotations

import re

from .stalls import SAMPLE_COLUMNS, STALL_COLUMNS, sample_metric, stall_metric

PRECISION_LETTER = {"fp64": "d", "fp32": "f", "fp16": "h"}  # ncu's letter for a SIMT precision
SIMT_OPS = ("add", "mul", "fma")

DURATION = "gpu__time_duration.sum"
SM_CLOCK = "smsp__cycles_elapsed.avg.per_second"
# The SIMT add/mul/fma thread-instruction counters of each precision (FLOPs come from them, FMA =
# 2).
SIMT = {
    p: [f"smsp__sass_thread_inst_executed_op_{letter}{op}_pred_on.sum" for op in SIMT_OPS]
    for p, letter in PRECISION_LETTER.items()
}
TENSOR_INSTRUCTIONS = "sm__inst_executed_pipe_tensor.sum"
# Tensor FLOPs come from op counters named per chip (ncu_catalogue picks the target's); these are
# GA100's, the hint's example where no chip is known. Collected only on request: another chip's
# names make ncu refuse.
TENSOR_OPS_GA100 = [
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
]
DRAM_BYTES = ["dram__bytes_read.sum", "dram__bytes_write.sum"]
L2_BYTES = ["lts__t_bytes.sum"]
L1_BYTES = ["l1tex__t_bytes.sum"]

TIME = [
    DURATION,
    "smsp__cycles_elapsed.avg",
    SM_CLOCK,
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "device__attribute_display_name",
]
# + the target's tensor ops
FLOPS = [*(m for p in PRECISION_LETTER for m in SIMT[p]), TENSOR_INSTRUCTIONS]
MEMORY = [*DRAM_BYTES, *L2_BYTES, *L1_BYTES]
DRAM_PEAKS = ["dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second"]
PEAKS = [
    f"sm__sass_thread_inst_executed_op_{letter}fma_pred_on.sum.peak_sustained" for letter in "dfh"
] + DRAM_PEAKS
# The L2 and L1 ceilings of the hierarchical roofline: the peak rate of the counters MEMORY reads,
# at their clocks.
CACHE_PEAKS = [
    m
    for unit in ("lts", "l1tex")
    for m in (f"{unit}__t_bytes.sum.peak_sustained", f"{unit}__cycles_elapsed.avg.per_second")
]
METRIC_SETS = {
    "roofline": [*TIME, *FLOPS, *MEMORY, *PEAKS, *CACHE_PEAKS],
    "flops": [*TIME, *FLOPS, *PEAKS],
    "memory": [*TIME, *MEMORY, *DRAM_PEAKS, *CACHE_PEAKS],
}

# The ncu metrics that fill each counted column of the kernels table, named in "collect it with"
# hints.
COLUMN_METRICS = {
    "duration_s": [DURATION],
    **{f"flop_{p}": SIMT[p] for p in PRECISION_LETTER},
    "flop_tensor": [*TENSOR_OPS_GA100, TENSOR_INSTRUCTIONS],
    "dram_bytes": DRAM_BYTES,
    "l2_bytes": L2_BYTES,
    "l1_bytes": L1_BYTES,
}
# Metrics a column is filled from that no set collects as named (the target's tensor op counters
# replace them).
ON_REQUEST = frozenset(TENSOR_OPS_GA100)

# Rate forms of each counted column: with them but no duration, the duration is what is missing.
RATE_FORMS = {
    **{
        f"flop_{p}": re.compile(
            rf"^smsp?__sass_thread_inst_executed_op_{letter}(add|mul|fma)_pred_on\.sum\.per_"
        )
        for p, letter in PRECISION_LETTER.items()
    },
    "dram_bytes": re.compile(r"^dram__bytes\w*\.sum\.per_second$"),
    "l2_bytes": re.compile(r"^lts__t_bytes\.sum\.per_second$"),
    "l1_bytes": re.compile(r"^l1tex__t_bytes\.sum\.per_second$"),
}

# What ncu's own sections show beside the roofline, read where the report has them (`--set full`, or
# the launch statistics every report holds) and kept per launch as canonical columns: column -> its
# ncu metrics, the first one a launch has wins. All are % of peak, except the waves (a count).
SPEED_OF_LIGHT = {
    "sol_sm_pct": ["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
    "sol_memory_pct": ["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"],
    "sol_dram_pct": [
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    ],
    "sol_l2_pct": ["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
    "sol_l1_pct": ["l1tex__throughput.avg.pct_of_peak_sustained_active"],
}
OCCUPANCY = {
    "occupancy_achieved_pct": ["sm__warps_active.avg.pct_of_peak_sustained_active"],
    "occupancy_theoretical_pct": ["sm__maximum_warps_per_active_cycle_pct"],
    "waves_per_sm": ["launch__waves_per_multiprocessor"],
}
# Blocks per SM each resource allows (ncu's Occupancy section): the smallest is the occupancy
# limiter.
OCCUPANCY_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared memory": "launch__occupancy_limit_shared_mem",
    "warps": "launch__occupancy_limit_warps",
    "blocks": "launch__occupancy_limit_blocks",
    "barriers": "launch__occupancy_limit_barriers",
}
# Pipe utilisation, % of peak while the SM was active (ncu's Compute Workload Analysis). The uniform
# pipe is in Turing's and later reports' full set; the TMEM pipe (tcgen05 loads and stores of tensor
# memory) and the 5th-generation tensor core's own pipe `tc` (tcgen05 MMA, beside the mma.sync
# `tensor` pipe) only on Blackwell (CC 10.x): a report without them leaves them empty, and the
# kernel screen shows no row for them.
PIPES = {
    f"pipe_{pipe}_pct": [f"sm__inst_executed_pipe_{pipe}.avg.pct_of_peak_sustained_active"]
    for pipe in ("alu", "fma", "fp64", "fp16", "lsu", "xu", "adu", "cbu", "tex", "uniform", "tmem")
}
PIPES["pipe_tensor_pct"] = ["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"]
PIPES["pipe_tc_pct"] = ["sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active"]
# Why warps stall, per reason: cycles per issued instruction (ncu's Warp State Statistics;
# core/ncu/stalls.py).
STALLS = {column: [stall_metric(r.reason)] for column, r in STALL_COLUMNS.items()}
# How busy the SM's issue was (ncu's Compute Workload Analysis): SM Busy %, and instructions
# executed per active cycle (Executed Ipc Active).
ISSUE = {
    "sm_busy_pct": ["sm__instruction_throughput.avg.pct_of_peak_sustained_active"],
    "ipc_active": ["sm__inst_executed.avg.per_cycle_active"],
}
INSIGHT = {**SPEED_OF_LIGHT, **OCCUPANCY, **PIPES, **ISSUE, **STALLS}
# The memory chart's counts (ncu's Memory Workload Analysis, `--set full`): column -> its ncu
# metric. Amounts, so a group's are its launches' sums; hit rates, sectors per request and bank
# conflicts per wavefront are ratios of them, made where they are shown.
MEMORY_CHART = {
    "mem_global_ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "mem_global_ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "mem_global_ld_hit_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "mem_global_st_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "mem_global_st_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "mem_local_ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "mem_local_st_sectors": "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "mem_shared_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "mem_shared_bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "mem_l2_to_l1_bytes": "l1tex__m_xbar2l1tex_read_bytes.sum",
    "mem_l1_to_l2_bytes": "l1tex__m_l1tex2xbar_write_bytes.sum",
    "mem_l2_sectors": "lts__t_sectors.sum",
    "mem_l2_hit_sectors": "lts__t_sectors_lookup_hit.sum",
}
# The instruction mix (ncu's Instruction Statistics and Memory Workload Analysis, `--set full`):
# warp-level instructions executed, in all and of each kind the full set counts per launch (ncu
# keeps no count per pipe, only each pipe's utilisation: PIPES). Amounts, summed per group like
# MEMORY_CHART.
INSTRUCTION_MIX = {
    "inst_executed": "smsp__inst_executed.sum",
    "inst_global_ld": "smsp__sass_inst_executed_op_global_ld.sum",
    "inst_global_st": "smsp__sass_inst_executed_op_global_st.sum",
    "inst_shared_ld": "smsp__sass_inst_executed_op_shared_ld.sum",
    "inst_shared_st": "smsp__sass_inst_executed_op_shared_st.sum",
    "inst_local_ld": "smsp__sass_inst_executed_op_local_ld.sum",
    "inst_local_st": "smsp__sass_inst_executed_op_local_st.sum",
    "inst_branch": "smsp__inst_executed_op_branch.sum",
}
# Warp samples by stall reason (ncu's SourceCounters, PC sampling), each the launch's sum over its
# SASS addresses: counts, summed per group; the stall panel's fallback where a report has no warp
# state statistics.
PC_SAMPLES = {column: sample_metric(r.reason) for column, r in SAMPLE_COLUMNS.items()}
_INSIGHT_METRICS = frozenset(
    [
        *(m for names in INSIGHT.values() for m in names),
        *OCCUPANCY_LIMITS.values(),
        *MEMORY_CHART.values(),
        *INSTRUCTION_MIX.values(),
        *PC_SAMPLES.values(),
    ]
)

# Warp instructions executed per SASS opcode (InstructionStats), read on demand for the Instruction
# mix panel (core/readers/opcode_mix.py), not by the table's readers.
INST_PER_OPCODE = "sass__inst_executed_per_opcode"
OPCODE_METRIC = "sass__thread_inst_executed_true_per_opcode"  # instanced: one value per SASS opcode
# the same per opcode and modifiers (HFMA2.MMA)
MODIFIER_METRIC = OPCODE_METRIC + "_with_modifier_all"

# Every metric the readers keep (besides INSIGHT's and OCCUPANCY_LIMITS'): the sets' metrics, and
# the other spellings of them that ncu's --set full, older ncu versions and CSV pages carry (sm__ vs
# smsp__, rates, % of peak, per-opcode counts, launch ids).
READ = re.compile(
    r"^(?:gpu__time_duration\.(?:sum|avg)"
    r"|sm(?:sp)?__sass_thread_inst_executed_op_[dfh](?:add|mul|fma)_pred_on\.sum(?:\.per_cycle_elapsed|\.per_second|\.peak_sustained)?"
    r"|sm(?:sp)?__cycles_elapsed\.avg(?:\.per_second)?"
    r"|sm__ops_path_tensor_src_\w+?(?:\.sum)?"
    r"|sm(?:sp)?__inst_executed_pipe_tensor(?:_op_\w+)?\.sum"
    r"|dram__bytes(?:_op)?(?:_read|_write)?\.sum(?:\.per_second|\.peak_sustained)?"
    r"|dram__cycles_elapsed\.avg\.per_second"
    r"|(?:lts|l1tex)__t_(?:bytes|sectors)\.sum(?:\.per_second|\.peak_sustained)?"
    r"|(?:lts|l1tex)__t_sectors\.(?:sum|avg)\.pct_of_peak_sustained_elapsed"
    r"|(?:lts|l1tex)__cycles_elapsed\.avg\.per_second"
    r"|derived__sm__sass_thread_inst_executed_op_[dfh]fma_pred_on_x[24]"
    r"|sass__thread_inst_executed_true_per_opcode(?:_with_modifier_all)?"
    r"|sm__inst_executed_pipe_tensor\w*\.avg\.pct_of_peak_sustained_active"
    r"|sm__pipe_tensor\w*cycles_active\.avg\.pct_of_peak_sustained_active"
    r"|launch__(?:grid_dim_[xyz]|block_dim_[xyz]|registers_per_thread|stream_id|device_id|block_size|grid_size)"
    r"|device__attribute_(?:display_name|compute_capability_major|compute_capability_minor|multiprocessor_count))$"
)


def is_read(name: str) -> bool:
    """Whether the readers keep this ncu metric."""
    return bool(READ.match(name)) or name in _INSIGHT_METRICS
