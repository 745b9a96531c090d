"""Which ncu sections fill each panel of the Kernel screen beyond the roofline, as data: the Not
collected panel of a report profiled with fewer sections (`--set basic`) names them, and
tests/cli/test_full_set_panels.py checks that ncu's `full` set (what `flopscope profile --metrics
full` asks for) lists every one, and that a `--metrics full` capture fills every panel."""

from __future__ import annotations

# Panel title (as the Kernel screen names it) -> the ncu section identifiers (`ncu --list-sections`)
# whose metrics fill it. The Source page (`v`) is a panel too: its SASS lines' warp samples come
# from SourceCounters.
PANEL_SECTIONS: dict[str, tuple[str, ...]] = {
    "Speed of light": ("SpeedOfLight",),
    "Memory chart": ("MemoryWorkloadAnalysis_Chart", "MemoryWorkloadAnalysis_Tables"),
    "Occupancy": ("Occupancy", "LaunchStats"),
    "Instruction mix": ("InstructionStats", "ComputeWorkloadAnalysis", "SourceCounters"),
    "Pipe utilisation": ("ComputeWorkloadAnalysis",),
    "Warp stalls, cycles per issued instruction": ("WarpStateStats",),
    "Source": ("SourceCounters",),
}


# Where a report lacks a panel: one ncu option that collects them all.
EVERY_PANEL = "ncu --set full (flopscope profile --metrics full) collects them all"


def section_options(panel: str) -> str:
    """`ncu --section A --section B`: the ncu options that collect `panel`."""
    return "ncu " + " ".join(f"--section {s}" for s in PANEL_SECTIONS[panel])
