"""One row (a kernel group or a launch): every metric, in sections, and its place on a small roofline."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, ClassVar, cast

import pandas as pd
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import get_current_worker

from ....core import FMA_CONVENTION
from ....core.common import display_text, find_gpu, is_missing
from ....core.ncu import ASK_FOR_TENSOR_COUNTERS, WHICH_TENSOR_COUNTERS
from ....core.report import Report
from ....core.table import COLLECTED, FLOP_PARTS, SIMT_FLOP, TENSOR_TYPES, Ceiling, collecting
from ...presentation import format as fmt
from ...presentation.reprofile import reprofile_advice
from ...presentation.rules import row_rule_results, rule_items, rules_table
from ...presentation.warnings import FLOPSCOPE_METRICS
from ..widgets.breadcrumb import Breadcrumb
from ..widgets.footer import KeyFooter
from ..widgets.roofline_plot import Roofline, RooflinePlot, roofline_from
from .copy_name import copy_full_name
from .export import ask_export
from .keys import BACK, COPY_NAME, EXPORT

if TYPE_CHECKING:
    from ..app import FlopscopeApp

WIDE = 110  # from this many columns, metrics and roofline sit side by side


def _v(row: pd.Series, name: str):
    value = row.get(name)
    return None if is_missing(value) else value


def sections(row: pd.Series, launches: pd.DataFrame | None = None) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section title, [(label, value)]) for every metric the row holds; missing numbers say why.
    `launches`: the launches of the row's report, whose earlier launches of the same function the advice for
    a launch ncu did not profile skips (`--launch-skip`); None: not known."""

    measured = _measured(row)

    def num(name: str, render, unit: str = "") -> str:
        value = _v(row, name)
        if value is None:
            return why_empty(row, name) if measured else "not measured"
        if isinstance(value, str):  # a group whose launches differ says "(mixed)"
            return value
        return render(value, unit) if unit else render(value)

    count = _v(row, "count") or 1
    duration = _v(row, "duration_s")
    # Launches ncu did not profile have no time: the total is the others' (`≥`), the mean is over the others.
    unprofiled = int(_v(row, "not_profiled") or 0)
    timed = count - unprofiled
    lower = unprofiled > 0 and duration is not None
    time = [
        ("Total time", fmt.at_least(num("duration_s", fmt.seconds), lower)),
        ("Share of kernel time", num("pct_time", fmt.pct)),  # of the known time
        ("Launches", fmt.integer(count) + (f" ({fmt.integer(unprofiled)} not profiled)" if lower else "")),
    ]
    if duration is not None and timed > 1:
        time.append(
            ("Mean per launch" + (f" (of {fmt.integer(timed)} timed)" if lower else ""), fmt.seconds(duration / timed))
        )
    time.append(("SM clock", num("sm_clock_hz", fmt.si, "Hz")))

    compute = [("All FLOPs", num("flop", fmt.si, "FLOP")), ("FLOP/s", num("flop_per_s", fmt.si, "FLOP/s"))]
    compute += [(f"{c.removeprefix('flop_').upper()} SIMT", num(c, fmt.si, "FLOP")) for c in SIMT_FLOP]
    compute.append(("Tensor, all types", num("flop_tensor", fmt.si, "FLOP")))
    # Spelled as the table's Prec column and the sort list spell it (`TC fp16/acc16`), not a third way.
    compute += [
        (fmt.precision(f"tensor_{d}"), num(f"flop_tensor_{d}", fmt.si, "FLOP"))
        for d in TENSOR_TYPES
        if _v(row, f"flop_tensor_{d}")
    ]
    judged = _precision(_v(row, "precision")) or (why_empty(row, "precision") if measured else "unknown")
    compute += [
        ("Precision judged", judged),
        ("% of peak", num("pct_of_peak", fmt.pct) + _of_roof(row)),
        ("% of roof", num("pct_of_roof", fmt.pct)),
        ("Attainable", num("attainable_flop_per_s", fmt.si, "FLOP/s")),
        ("Bound", _bound(row)),
    ]

    memory = [
        ("DRAM read", num("dram_read_bytes", fmt.si, "B")),
        ("DRAM write", num("dram_write_bytes", fmt.si, "B")),
        ("DRAM total", num("dram_bytes", fmt.si, "B")),
        ("DRAM bandwidth", num("dram_bytes_per_s", fmt.si, "B/s")),
        ("L2", num("l2_bytes", fmt.si, "B")),
        ("L1/TEX", num("l1_bytes", fmt.si, "B")),
        ("AI vs DRAM", num("ai_dram", _intensity)),
        ("AI vs L2", num("ai_l2", _intensity)),
        ("AI vs L1", num("ai_l1", _intensity)),
    ]

    launch = [
        ("Grid", fmt.text(_v(row, "grid"))),
        ("Block", fmt.text(_v(row, "block"))),
        ("Registers/thread", num("registers", fmt.integer)),
        ("Stream", num("stream", fmt.integer)),
        ("Device", num("device", fmt.integer)),
        ("Process", fmt.text(_v(row, "process"))),
        ("NVTX", fmt.text(_v(row, "nvtx"))),
        ("First launch ID", num("launch_id", fmt.integer)),
        ("GPU", _gpu(row)),
    ]

    peak, bw = _v(row, "peak_flop_per_s"), _v(row, "peak_dram_bytes_per_s")
    ceilings = [
        ("Compute ceiling", num("peak_flop_per_s", fmt.si, "FLOP/s") + _datasheet_beside(row)),
        ("DRAM ceiling", num("peak_dram_bytes_per_s", fmt.si, "B/s")),
        ("L2 ceiling", num("peak_l2_bytes_per_s", fmt.si, "B/s")),
        ("L1 ceiling", num("peak_l1_bytes_per_s", fmt.si, "B/s")),
        ("Ridge point", f"{fmt.ratio(peak / bw)} FLOP/B" if peak and bw else "n/a"),
        ("Ceiling source", fmt.text(_v(row, "peak_source")) or _no_source(row)),
    ]

    # An empty estimated/provenance means "all counted" only where ncu measured something.
    nothing = "nothing measured: ncu recorded no values"
    notes = [
        ("Status", fmt.text(_v(row, "status")) or "ok"),
        ("To collect", _to_collect(row, measured, launches)),
        ("Estimated", fmt.text(_v(row, "estimated")) or (_nothing_estimated(row) if measured else nothing)),
        ("Provenance", fmt.text(_v(row, "provenance")) or ("counted .sum metrics" if measured else nothing)),
        ("Convention", FMA_CONVENTION),
    ]
    identity = [
        ("Name", fmt.text(_v(row, "kernel_full")) or fmt.text(_v(row, "kernel"))),
        ("Short name", fmt.text(_v(row, "kernel"))),
    ]
    # The full name last: a template instantiation can fill a screen on its own.
    return [
        ("Time", time),
        ("Compute", compute),
        ("Memory", memory),
        *ncu_sections(row),
        ("Launch configuration", launch),
        ("Ceilings", ceilings),
        ("Provenance", notes),
        ("Kernel", identity),
    ]


_SPEED_OF_LIGHT = [
    ("SM (compute)", "sol_sm_pct"),
    ("Memory", "sol_memory_pct"),
    ("DRAM", "sol_dram_pct"),
    ("L2", "sol_l2_pct"),
    ("L1/TEX", "sol_l1_pct"),
]
_PIPES = [
    ("Tensor pipe", "pipe_tensor_pct"),
    ("Tensor pipe tcgen05", "pipe_tc_pct"),  # Blackwell's 5th-generation tensor core
    ("TMEM pipe", "pipe_tmem_pct"),  # Blackwell's tensor memory
    ("FMA pipe", "pipe_fma_pct"),
    ("ALU pipe", "pipe_alu_pct"),
    ("FP64 pipe", "pipe_fp64_pct"),
    ("LSU pipe", "pipe_lsu_pct"),
    ("XU pipe", "pipe_xu_pct"),
    ("Uniform pipe", "pipe_uniform_pct"),
]


def ncu_sections(row: pd.Series) -> list[tuple[str, list[tuple[str, str]]]]:
    """ncu's own per-launch figures the report holds (speed of light, occupancy, waves, pipes), each section only
    where the report has some of it. A group's numbers are its launches' time-weighted means, and say so."""
    count = _v(row, "count") or 1
    per = [("Per launch", f"time-weighted mean of {fmt.integer(count)} launches")] if count > 1 else []

    def pcts(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(label, _percent(_v(row, name))) for label, name in items if _v(row, name) is not None]

    out = []
    light = pcts(_SPEED_OF_LIGHT)
    if light:
        out.append(("Speed of light", per + light))  # % of peak, ncu's GPU Speed Of Light section
    occupancy = pcts([("Achieved", "occupancy_achieved_pct"), ("Theoretical", "occupancy_theoretical_pct")])
    limiter, blocks = _v(row, "occupancy_limiter"), _v(row, "occupancy_limit_blocks")
    if limiter is not None:
        allows = f" ({fmt.integer(blocks)} blocks/SM)" if isinstance(blocks, (int, float)) else ""
        occupancy.append(("Limited by", fmt.text(limiter) + allows))
    if _v(row, "waves_per_sm") is not None:
        occupancy.append(("Waves per SM", fmt.ratio(_v(row, "waves_per_sm"))))
    if occupancy:
        out.append(("Occupancy", per + occupancy))
    pipes = pcts(_PIPES)
    if pipes:
        out.append(("Pipe utilisation", per + pipes))  # % of peak while the SM was active
    return out


def _percent(value) -> str:
    """ncu's percentages to one decimal, as its own sections print them."""
    return value if isinstance(value, str) else fmt.pct(value)


def _of_roof(row: pd.Series) -> str:
    """` (measured)`: the roof the % of peak is of (issue 22), where there is one."""
    roof = fmt.peak_roof(_v(row, "peak_source"))
    return f" ({roof})" if roof and _v(row, "pct_of_peak") is not None else ""


def _to_collect(row: pd.Series, measured: bool, launches: pd.DataFrame | None) -> str:
    if not measured:
        return reprofile_advice(row, launches)
    cc = _v(row, "cc")  # the tensor counters to name are this GPU's
    option = collecting([c for c in COLLECTED if _v(row, c) is None], [] if cc is None else [cc])
    if option and ASK_FOR_TENSOR_COUNTERS in option:  # a GPU whose tensor counters flopscope does not know
        option += f" ({WHICH_TENSOR_COUNTERS})"
    if option:  # one line for all: flopscope's own option collects them as ncu's would
        return option.replace("ncu --metrics", FLOPSCOPE_METRICS, 1)
    return "nothing: every counter flopscope reads is here"


# What a derived number is computed from: where one is empty, the first of these that is empty says why.
_NEEDS = {
    "flop_per_s": ("flop", "duration_s"),
    "dram_bytes_per_s": ("dram_bytes", "duration_s"),
    "ai_dram": ("flop", "dram_bytes"),
    "ai_l2": ("flop", "l2_bytes"),
    "ai_l1": ("flop", "l1_bytes"),
    "pct_of_peak": ("flop", "duration_s", "peak_flop_per_s"),
    "attainable_flop_per_s": ("flop", "dram_bytes", "peak_flop_per_s", "peak_dram_bytes_per_s"),
    "pct_of_roof": ("duration_s", "flop", "dram_bytes", "peak_flop_per_s", "peak_dram_bytes_per_s"),
    "bound": ("flop", "dram_bytes", "peak_flop_per_s", "peak_dram_bytes_per_s"),
    "dram_bytes": ("dram_read_bytes",),
    "flop": FLOP_PARTS,
    "precision": FLOP_PARTS,
}
_JUDGED_BY_FLOPS = {"precision", "pct_of_peak", "attainable_flop_per_s", "peak_flop_per_s", "pct_of_roof", "bound"}
_NO_CEILING = {
    "peak_flop_per_s": "none: no peak for this GPU (pass --gpu NAME to judge it against one)",
    "peak_dram_bytes_per_s": "none: no DRAM peak for this GPU (pass --gpu NAME to judge it against one)",
    "peak_l2_bytes_per_s": "none: the report has no L2 peak counter (ncu's --set full has it)",
    "peak_l1_bytes_per_s": "none: ncu records no L1 peak rate, only its % of peak",
}


def why_empty(row: pd.Series, name: str) -> str:
    """Why a measured row has no `name`, in words: integer MMA has no FLOP ceiling, a kernel without FLOPs is
    judged by memory, a counter was not collected (the To collect line gives the one option for all), a GPU
    has no known peak."""
    if name in _JUDGED_BY_FLOPS and _integer_mma(row):
        return "none: integer MMA (IMMA) work has no FLOP ceiling"
    if name in _JUDGED_BY_FLOPS - {"pct_of_roof", "bound"} and _v(row, "flop") == 0:
        return "none: no FLOPs (judged by memory: % of roof, Bound)"
    if name in COLLECTED or name in ("dram_read_bytes", "dram_write_bytes", "sm_clock_hz"):
        return "not collected (To collect, below)"
    if name in _NO_CEILING:
        return _NO_CEILING[name]
    for need in _NEEDS.get(name, ()):
        if _v(row, need) is None:
            why = why_empty(row, need)
            return why if why.startswith("unknown") else f"unknown: {why}"
    if name == "bound" and _v(row, "flop") == 0:
        return "none: no FLOPs and no bytes moved"
    return "unknown"


def _datasheet_beside(row: pd.Series) -> str:
    """A datasheet ceiling scaled to the launch's measured clock, with NVIDIA's own figure beside it, so that
    1.07 PFLOP/s above the datasheet's 989 T reads as the faster clock it is, not as a bug."""
    gpu, name = find_gpu(fmt.text(_v(row, "gpu"))), fmt.text(_v(row, "precision")).split("+")[0]
    if "datasheet" not in fmt.text(_v(row, "peak_source")) or gpu is None or not name or math.isnan(gpu.peak(name)):
        return ""
    clock, quoted = _v(row, "sm_clock_hz"), gpu.clock_hz(name)
    scaled = f", x {fmt.si(clock, 'Hz')} measured / {fmt.si(quoted, 'Hz')}" if clock and quoted else ""
    return f" (datasheet {fmt.si(gpu.peak(name), 'FLOP/s')}{scaled})"


def row_ceilings(row: pd.Series, ceilings: list[Ceiling]) -> list[Ceiling]:
    """The ceilings the row's own numbers use (its launches' clock and peaks), for its plot: the run's are at
    the run's clock, and a plot drawn against them disagreed with the % of peak beside it (975 T vs 1.07 P)."""
    gpu = fmt.text(_v(row, "gpu"))
    mine = [c for c in ceilings if not c.gpu or c.gpu == gpu] or ceilings
    precision, clock = fmt.text(_v(row, "precision")).split("+")[0], _v(row, "sm_clock_hz")
    out = []
    for c in mine:
        value = c.value
        if c.bandwidth:
            value = _v(row, f"peak_{c.name}_bytes_per_s") or value
        elif c.name == precision and _v(row, "peak_flop_per_s"):
            value = _v(row, "peak_flop_per_s")
        elif clock and not math.isnan(c.sm_clock_hz):
            value = c.value * clock / c.sm_clock_hz  # at the launch's clock, as its own peak is
        out.append(dataclasses.replace(c, value=float(value), sm_clock_hz=clock or c.sm_clock_hz))
    return out


def _integer_mma(row: pd.Series) -> bool:
    value = _v(row, "integer_mma")
    return value is not None and bool(value)


def _no_source(row: pd.Series) -> str:
    if _integer_mma(row):
        return "none: integer MMA (IMMA) work has no FLOP ceiling"
    return "none: pass --gpu NAME"


def _nothing_estimated(row: pd.Series) -> str:
    """`nothing: all counted` only where every counter is there; a row lacking some says so."""
    absent = [c for c in COLLECTED if _v(row, c) is None]
    if not absent:
        return "nothing: all counted"
    if len(absent) == len(COLLECTED):
        return "nothing, and nothing counted: no counter flopscope reads is here (To collect, above)"
    return f"nothing; {len(absent)} of {len(COLLECTED)} counters not collected (To collect, above)"


def _measured(row: pd.Series) -> bool:
    """False for a launch ncu recorded no values for (a group is that only if all its launches are)."""
    return not (fmt.text(_v(row, "status")) or "ok").startswith("not profiled")


def _precision(label: object) -> str:
    """The table's short spelling, and the canonical label (--json's, export's) where it differs:
    `TC fp16/acc16+TC fp16 (tensor_fp16_acc16+tensor_fp16)`."""
    short = fmt.precision(label)
    return short if short == fmt.text(label) else f"{short} ({label})"


def _bound(row: pd.Series) -> str:
    """`compute`, or `memory (L2 roof)`: the ceiling of the hierarchical roofline that is lowest for it."""
    bound, roof = fmt.text(_v(row, "bound")), _v(row, "roof")
    return (
        f"{bound} ({fmt.roof(roof)} roof)" if bound == "memory" and fmt.roof(roof) else bound or why_empty(row, "bound")
    )


def _intensity(value: float) -> str:
    return f"{fmt.ratio(value)} FLOP/B"


def _gpu(row: pd.Series) -> str:
    """`NVIDIA A100 (CC 8.0)`; a report without the GPU's name (details CSV) says unknown, not a blank."""
    name, cc = fmt.text(_v(row, "gpu")) or "unknown", fmt.text(_v(row, "cc"))
    return f"{name} (CC {cc})" if cc else name


def section_table(title: str, items: list[tuple[str, str]]) -> Table:
    table = Table(box=None, show_header=False, title=Text(title, style="bold"), title_justify="left", pad_edge=False)
    table.add_column("what", no_wrap=True, style="dim")
    table.add_column("value", overflow="fold")
    for label, value in items:
        table.add_row(Text(label), Text(display_text(value)))  # Text: never markup; escapes: never a terminal code
    return table


class KernelScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        EXPORT,
        # The arrows, page keys, home and end scroll the focused body already; j/k/space as in the tables.
        Binding("j", "scroll('down')", "Scroll down", show=False, id="kernel.scroll_down"),
        Binding("k", "scroll('up')", "Scroll up", show=False, id="kernel.scroll_up"),
        Binding("space", "scroll('page_down')", "Page down", show=False, id="kernel.page_down"),
        COPY_NAME,
    ]

    def __init__(
        self,
        row: pd.Series,
        ceilings: list[Ceiling],
        name_column: str = "kernel",
        launches: pd.DataFrame | None = None,
        report: Report | None = None,
    ) -> None:
        """`launches`: the launches of the report `row` comes from (default: the app's report's), which the
        `--launch-skip` of the advice for an unprofiled launch counts; `report`: that report (default: the
        app's), whose file ncu's rule results are read from."""
        super().__init__()
        self.row = row
        self.name_column = name_column
        self.launches = launches
        self.report = report
        self.rules_read = False  # set once the "ncu rules" section shows what the file holds
        self.roofline: Roofline = roofline_from(
            row.to_frame().T.infer_objects(), row_ceilings(row, ceilings), name=name_column
        )
        self.title_text = fmt.text(_v(row, name_column) or _v(row, "kernel")) or "(unnamed)"

    @property
    def crumbs(self) -> list[str]:
        """Its part of the breadcrumb (after the Kernels screen's report and grouping): the row's name."""
        return [self.title_text]

    def compose(self) -> ComposeResult:
        yield Breadcrumb(id="kernel-title")
        # One scroll for everything: narrow terminals get the metrics, then the plot below them.
        with VerticalScroll(id="kernel-body"):
            with Vertical(id="metrics"):
                for title, items in sections(self.row, self._launches()):
                    if title == "Launch configuration":  # after ncu's own figures: its findings on them
                        yield Static(rules_table([("Launch", "reading the report…")]), id="rules", classes="section")
                    yield Static(section_table(title, items), classes="section")
            yield RooflinePlot(self.roofline, id="kernel-roofline")
        yield KeyFooter()

    def _launches(self) -> pd.DataFrame | None:
        report = getattr(self.app, "report", None)
        return self.launches if self.launches is not None else report.kernels if report is not None else None

    @work(thread=True, exclusive=True, group="kernel-rules")
    def _read_rules(self) -> None:
        """ncu's rule results for this row, read from the report file now (never part of the kernels table)."""
        report = self.report if self.report is not None else getattr(self.app, "report", None)
        if report is None:
            items = [("Findings", "none: no report file behind this row")]
        else:
            by = "nvtx" if self.name_column == "nvtx" else "name"
            items = rule_items(*row_rule_results(report, self.row, by))
        if not get_current_worker().is_cancelled:  # the screen closed meanwhile
            self.app.call_from_thread(self._show_rules, items)

    def _show_rules(self, items: list[tuple[str, str]]) -> None:
        if self.is_attached:  # `escape` before the file was read: nothing left to show them in
            self.query_one("#rules", Static).update(rules_table(items))
            self.rules_read = True

    def on_mount(self) -> None:
        self._read_rules()
        self.query_one("#kernel-body").set_class(self.app.size.width < WIDE, "narrow")
        self.query_one("#kernel-body").focus()
        if not self.roofline.points:
            self.query_one(RooflinePlot).styles.display = "none"
            self.query_one("#metrics").mount(
                Static(
                    Text("Not on the roofline: it needs counted FLOPs and DRAM bytes (both above zero).", style="dim")
                )
            )

    def on_resize(self, event: Resize) -> None:
        self.query_one("#kernel-body").set_class(event.size.width < WIDE, "narrow")

    def action_back(self) -> None:
        self.dismiss()

    def action_copy_name(self) -> None:
        copy_full_name(self.app, self.row, self.name_column)

    def action_scroll(self, how: str) -> None:
        body = self.query_one("#kernel-body", VerticalScroll)
        {"down": body.scroll_down, "up": body.scroll_up, "page_down": body.scroll_page_down}[how](animate=False)

    async def action_export(self) -> None:
        launch = _v(self.row, "launch_id")
        suffix = f"kernel-{int(launch)}" if launch is not None else "kernel"
        # `<suffix>.csv` where no report file names it (a diff's row)
        name = cast("FlopscopeApp", self.app).export_name(suffix)
        await ask_export(
            self.app, lambda: self.row.to_frame().T, name, what="metrics of this row", kernels_of_a_run=True
        )
