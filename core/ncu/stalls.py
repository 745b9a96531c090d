"""Why warps stall: ncu's warp state reasons, what each means and what usually helps, as data.

ncu's Warp State Statistics section breaks a warp's cycles between two issued instructions down by
reason: `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio` is the average number of
warps stalled for that reason per issue cycle, which ncu charts as cycles per issued instruction.
The words below follow NVIDIA's Kernel Profiling Guide (section "Warp Stall Reasons"), shortened to
one line each; the report's own metric descriptions say the same in ncu's terms."""

from __future__ import annotations

from typing import NamedTuple


class StallReason(NamedTuple):
    reason: str  # ncu's name, as in the metric
    title: str
    meaning: str
    fix: str


STALL_REASONS = (
    StallReason(
        "long_scoreboard",
        "Long scoreboard",
        "waiting for data from L1TEX: global, local, surface or texture memory",
        "coalesce and reuse accesses (shared memory), prefetch, more warps in flight to hide the"
        " latency",
    ),
    StallReason(
        "short_scoreboard",
        "Short scoreboard",
        "waiting for an MIO result: shared memory, or a special math function (sin, rsqrt, ...)",
        "avoid shared-memory bank conflicts, fewer special-function instructions",
    ),
    StallReason(
        "wait",
        "Wait",
        "waiting out a fixed-latency dependency between instructions",
        "more independent instructions between dependent ones (unroll, interleave), more warps",
    ),
    StallReason(
        "math_pipe_throttle",
        "Math pipe throttle",
        "the math pipe the instruction needs is busy",
        "the kernel is compute bound on that pipe: spread work to other pipes or do less of it",
    ),
    StallReason(
        "mio_throttle",
        "MIO throttle",
        "the memory input/output queue is full (shared memory, special math, dynamic branches)",
        "fewer, wider shared-memory accesses; fewer bank conflicts",
    ),
    StallReason(
        "lg_throttle",
        "LG throttle",
        "the local/global memory instruction queue is full",
        "fewer, wider (vectorized) global accesses; fewer register spills to local memory",
    ),
    StallReason(
        "tex_throttle",
        "TEX throttle",
        "the texture (L1TEX) unit's queue is full",
        "fewer texture requests, or combine them",
    ),
    StallReason(
        "barrier",
        "Barrier",
        "waiting at a block-wide barrier (__syncthreads) for sibling warps",
        "balance the work before barriers; fewer barriers; smaller blocks",
    ),
    StallReason(
        "membar",
        "Memory barrier",
        "waiting on a memory fence",
        "fewer fences, with the narrowest scope that is correct",
    ),
    StallReason(
        "branch_resolving",
        "Branch resolving",
        "waiting for a branch target to be computed",
        "fewer and more uniform branches across the warp",
    ),
    StallReason(
        "no_instruction",
        "No instruction",
        "no instruction fetched yet: an instruction cache miss, or just after a branch",
        "smaller hot loops and fewer jumps; at kernel start it is expected",
    ),
    StallReason(
        "imc_miss",
        "IMC miss",
        "waiting on an immediate constant cache miss",
        "fewer distinct constant addresses per warp; expected in very short kernels",
    ),
    StallReason(
        "gmma",
        "GMMA",
        "waiting for warpgroup MMA (wgmma) resources (Hopper)",
        "overlap wgmma with loads (a deeper software pipeline)",
    ),
    StallReason(
        "dispatch_stall",
        "Dispatch stall",
        "the dispatcher could not issue the selected instruction",
        "rare; usually a pipeline conflict the compiler cannot avoid",
    ),
    StallReason(
        "drain",
        "Drain",
        "waiting at exit for memory stores to drain",
        "expected at the end of a kernel that writes much",
    ),
    StallReason(
        "sleeping",
        "Sleeping",
        "the warp sleeps (nanosleep), or all its threads are blocked or yielded",
        "fewer sleeps or spin-waits",
    ),
    StallReason(
        "misc",
        "Misc",
        "a stall ncu does not name",
        "none specific",
    ),
    StallReason(
        "not_selected",
        "Not selected",
        "eligible, but another warp issued: the scheduler had warps to spare",
        "none needed: latency is hidden",
    ),
    StallReason(
        "selected",
        "Selected",
        "the cycle the warp issued its instruction (1 per instruction by definition)",
        "none: not a stall",
    ),
)

# PC sampling (ncu's SourceCounters) samples warps by the same reasons, plus Hopper's warpgroup
# arrive, which has no warp state metric (the warp state's `gmma` has no sample counter).
WARPGROUP_ARRIVE = StallReason(
    "warpgroup_arrive",
    "Warpgroup arrive",
    "waiting at a WARPGROUP.ARRIVE or WARPGROUP.WAIT for the warpgroup's MMA (Hopper)",
    "overlap wgmma with loads (a deeper software pipeline)",
)
SAMPLED_REASONS = (*STALL_REASONS, WARPGROUP_ARRIVE)

BY_REASON = {r.reason: r for r in SAMPLED_REASONS}
# The canonical table's column of each reason: cycles per issued instruction, as ncu charts it.
STALL_COLUMNS = {f"stall_{r.reason}": r for r in STALL_REASONS}


# A report with PC sampling but no warp state statistics: the samples of each reason over the
# launch's SASS addresses (ncu keeps their sum with the per-address values), shown as shares.
SAMPLE_COLUMNS = {f"samples_{r.reason}": r for r in SAMPLED_REASONS}
# Where the sample counter spells a reason otherwise than the warp state metric.
_SAMPLED_AS = {"no_instruction": "no_instructions"}


# The label of each reason's row in ncu's details page (`--page details --csv --print-details all`:
# the Warp State Statistics section's body, "Warp State (All Cycles)"), which the details reader
# reads as the reason's metric.
DETAILS_LABELS = {
    "Stall Long Scoreboard": "long_scoreboard",
    "Stall Short Scoreboard": "short_scoreboard",
    "Stall Wait": "wait",
    "Stall Math Pipe Throttle": "math_pipe_throttle",
    "Stall MIO Throttle": "mio_throttle",
    "Stall LG Throttle": "lg_throttle",
    "Stall Tex Throttle": "tex_throttle",
    "Stall Barrier": "barrier",
    "Stall Membar": "membar",
    "Stall Branch Resolving": "branch_resolving",
    "Stall No Instruction": "no_instruction",
    "Stall IMC Miss": "imc_miss",
    "Stall GMMA": "gmma",
    "Stall Dispatch Stall": "dispatch_stall",
    "Stall Drain": "drain",
    "Stall Sleeping": "sleeping",
    "Stall Misc": "misc",
    "Stall Not Selected": "not_selected",
    "Selected": "selected",
}


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def sample_metric(reason: str) -> str:
    """The PC-sampling counter of `reason`: warp samples stalled on it, all addresses summed."""
    return f"smsp__pcsamp_warps_issue_stalled_{_SAMPLED_AS.get(reason, reason)}"
