"""Which ncu sections fill each panel of the Kernel screen beyond the roofline, as data: the "not collected"
hints name them, and tests/cli/test_full_set_panels.py checks that ncu's `full` set (what `flopscope profile
--metrics full` asks for) lists every one, and that a `--metrics full` capture fills every panel."""

from __future__ import annotations

# Panel title (as the Kernel screen names it) -> the ncu section identifiers (`ncu --list-sections`) whose
# metrics fill it. The Source page (`v`) is a panel too: its SASS lines' warp samples come from SourceCounters.
PANEL_SECTIONS: dict[str, tuple[str, ...]] = {
    "Speed of light": ("SpeedOfLight",),
    "Memory chart": ("MemoryWorkloadAnalysis_Chart", "MemoryWorkloadAnalysis_Tables"),
    "Occupancy": ("Occupancy", "LaunchStats"),
    "Instruction mix": ("InstructionStats", "ComputeWorkloadAnalysis", "SourceCounters"),
    "Pipe utilisation": ("ComputeWorkloadAnalysis",),
    "Warp stalls, cycles per issued instruction": ("WarpStateStats",),
    "Source": ("SourceCounters",),
}


def collect_hint(panel: str) -> str:
    """`not collected: ncu --section A --section B (all in --set full; flopscope profile --metrics full)`."""
    sections = " ".join(f"--section {s}" for s in PANEL_SECTIONS[panel])
    return f"not collected: ncu {sections} (all in --set full; flopscope profile --metrics full)"
