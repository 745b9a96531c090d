"""The Kernels screen's `g` after NVTX ranges: the model's module tree (Report.module_tree), one
collapsible node per module, each with its rolled-up time, share, forward/backward split, %Roof and
bound. `o` sorts each node's children by a column (the tree's shape stays), `s` flips that order,
`r` draws the launches under the cursor's node on the Roofline screen, by kernel name. `/` filters
the nodes as the tables do (live_filter.py): a module name regex or an expression over the tree's
columns; the nodes that match show with the modules they sit in (dimmed where those do not match),
all open.

What `report --by module` adds to the tree shows here too: with a timing file beside the report,
each node's MFU over its kernel time and its part of the median step's MFU over wall time, and `t`
the steps table (steps.py); `m` asks for a model JSON (`flopscope model ... --json`) and puts each
module's analytic FLOPs and measured / analytic beside its measured ones."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import pandas as pd
from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from ....core.analysis.model_flops import ModelFlops, load_model_json
from ....core.common import FlopscopeError, display_text
from ....core.report import by_time
from ....core.table.module_tree import NODE_SEP, path_names, sort_siblings, with_public_paths
from ...presentation.columns import Column
from ...presentation.module_figures import with_model, with_steps
from ...presentation.module_tree import (
    COLUMNS,
    MFU_COLUMNS,
    MODEL_COLUMNS,
    column_title,
    modules_hint,
    sort_choices,
)
from ...presentation.step_mfu import screen_line
from ...presentation.table_model import Query, TableModel
from ...presentation.tree_label import guide_cells, node_label
from ..widgets.breadcrumb import Breadcrumb
from ..widgets.footer import KeyFooter
from .export import ask_export
from .keys import BACK, EXPORT, FILTER
from .live_filter import LiveFilter
from .prompt import PromptScreen
from .roofline import RooflineScreen
from .sort import SortScreen
from .steps import StepsScreen

if TYPE_CHECKING:
    from ....core.analysis.step_mfu import StepMfu
    from ....core.report import Report


def tree_columns(tree: pd.DataFrame) -> list[Column]:
    """The tree's columns as a filter names them: `time > 50us`, `bound == dram`, `fwd > 10us`,
    `module ~ mlp`, and `mfu krn > 20%`, `/model < 0.9` where the tree has them."""
    extra = [c for c in (*MFU_COLUMNS, *MODEL_COLUMNS) if c[1] in tree]
    return [
        Column(column, title, render, priority, 10, numeric=right)
        for title, column, render, right, priority in (*COLUMNS, *extra)
    ]


class ModulesModel(TableModel):
    """The tree's nodes as a filter sees them: plain text matches a module's name."""

    def _name_columns(self) -> list[str]:
        return ["name"]


def with_ancestors(paths: list[str], matched: set[str]) -> set[str]:
    """The paths of the matched nodes and of every node they sit in (`a/b/c`: `a`, `a/b`), the
    root's ("")."""
    keep = {""}
    for path in paths:
        if path in matched:
            parts = path_names(path)
            keep.update(NODE_SEP.join(parts[:n]) for n in range(1, len(parts) + 1))
    return keep


class ModuleTree(Tree[dict[str, object]]):
    """The tree, each node's line fitted to the cells its indent leaves (tree_label.py), and its
    indent narrowed where the deepest node's would take too much of the width."""

    deepest = 0  # levels below the root of the deepest node

    def on_resize(self) -> None:
        self.guide_depth = guide_cells(self.size.width, self.deepest)

    def render_label(
        self, node: TreeNode[dict[str, object]], base_style: Style, style: Style
    ) -> Text:
        data = node.data
        if data is None:
            return super().render_label(node, base_style, style)
        icon = ""
        if node.allow_expand:
            icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
        width = self.size.width
        room = width - int(str(data["depth"])) * self.guide_depth - cell_len(icon)
        parent = node.parent.data if node.parent is not None else None
        text = node_label(
            data, room if width else None, str(parent["name"]) if parent is not None else None
        )
        text.stylize(style)
        return Text.assemble((icon, base_style + _TOGGLE), text)


# what Textual's own labels put on the open/close mark: a click there opens or closes the node
_TOGGLE = Style.from_meta({"toggle": True})


class ModuleTreeScreen(LiveFilter):
    FILTER_QUESTION = "Filter modules:"
    FILTER_HINT = (
        "a module name regex, or an expression: time > 50us, bound == dram, fwd > 10us · ↑↓ recent"
        " · empty: all"
    )
    DEFAULT_CSS = """
    ModuleTreeScreen #modules-status { height: 1; padding: 0 1; display: none; }
    ModuleTreeScreen #modules-status.shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        BACK,
        Binding("j", "move(1)", "Down", show=False, id="moduletree.down"),
        Binding("k", "move(-1)", "Up", show=False, id="moduletree.up"),
        Binding("l", "expand", "Expand", id="moduletree.expand"),
        Binding("h", "collapse", "Collapse", id="moduletree.collapse"),
        Binding("asterisk", "expand_all", "Expand all", id="moduletree.expand_all"),
        Binding("o", "sort_pick", "Sort…", id="moduletree.sort_pick"),
        Binding("s", "flip_sort", "Flip sort", id="moduletree.sort"),
        Binding("r", "roofline", "Roofline", id="moduletree.roofline"),
        Binding("t", "steps", "Steps", id="moduletree.steps"),
        Binding("m", "model", "Model…", id="moduletree.model"),
        Binding("g", "next_group", "Group", id="moduletree.group"),
        FILTER,
        EXPORT,
    ]
    DEFAULT_SORT = ("duration_s", True)  # Report.module_tree's order: siblings longest first

    def __init__(
        self, report: Report, export_to: Path, flop_model: ModelFlops | None = None
    ) -> None:
        """`flop_model`: analytic FLOPs to show beside each module from the start (`open
        --model`), as `m` puts them there."""
        super().__init__()
        self.report = report
        self.flop_model = flop_model  # `m`: the model JSON's analytic FLOPs
        self.sort = self.DEFAULT_SORT
        self.export_to = export_to
        self.no_ranges = bool(report.kernels["nvtx"].isna().all())
        self.query_state = Query()
        self.tree_rows, self.steps, self.steps_line = self._figured()
        self.model: TableModel | None = ModulesModel(self.tree_rows, tree_columns(self.tree_rows))
        self._opened: set[str] | None = None  # the nodes open before a filter opened them all

    def _figured(self) -> tuple[pd.DataFrame, StepMfu | None, str]:
        """The tree (its MFU and model columns where there are figures for them), in the sort
        chosen; the steps; the line above the tree: the median step, how to get one, or what is
        wrong with the timing file ("" for a report without steps)."""
        tree = self.report.module_tree()
        if self.flop_model is not None:
            tree = with_model(self.report, tree, self.flop_model)
        try:
            tree, steps = with_steps(self.report, tree)
        except FlopscopeError as err:  # the tree opens, the line says what is wrong
            return sort_siblings(tree, *self.sort), None, err.line()
        return sort_siblings(tree, *self.sort), steps, screen_line(steps, self.report.meta)

    @property
    def crumbs(self) -> list[str]:
        column, descending = self.sort
        order = (
            []
            if self.sort == self.DEFAULT_SORT
            else [f"sorted by {column_title(column)} {'↓' if descending else '↑'}"]
        )
        return ["by module", *order]

    def compose(self) -> ComposeResult:
        yield Breadcrumb(id="modules-title")
        # the median step's wall, kernel time, idle share and MFU (profile --modules)
        if self.steps_line:
            yield Static(Text(self.steps_line), id="modules-steps")
        if self.no_ranges:
            hint = modules_hint(self.report.meta)
            # Text: the command is verbatim
            yield Static(Text(f"This report has {hint}."), id="modules-empty")
        yield self._tree()
        yield Static(id="modules-status")  # what `/` keeps, while it keeps less than all
        yield KeyFooter()

    def _tree(self) -> ModuleTree:
        rows = self.tree_rows.to_dict(orient="records")
        tree = ModuleTree(node_label(rows[0]), data=rows[0], id="modules")
        tree.deepest = int(self.tree_rows["depth"].max())
        self._fill(tree, rows)
        tree.root.expand()
        for child in tree.root.children:
            child.expand()  # the first level open: the model's top modules at a glance
        return tree

    @staticmethod
    def _fill(
        tree: Tree[dict[str, object]], rows: list[dict[str, object]]
    ) -> dict[str, TreeNode[dict[str, object]]]:
        """The nodes below the root from the rows (depth first, the root first), by path."""
        at: list[TreeNode[dict[str, object]]] = [tree.root]
        by_path = {"": tree.root}
        for row in rows[1:]:
            depth = int(str(row["depth"]))
            del at[depth:]
            at.append(at[-1].add(node_label(row), data=row))
            by_path[str(row["path"])] = at[-1]
        return by_path

    def on_mount(self) -> None:
        self.query_one(Tree).focus()

    def _cursor(self) -> TreeNode[dict[str, object]] | None:
        return self.query_one(Tree).cursor_node

    def action_move(self, step: int) -> None:
        tree = self.query_one(Tree)
        tree.action_cursor_down() if step > 0 else tree.action_cursor_up()

    def action_expand(self) -> None:
        node = self._cursor()
        if node is not None:
            node.expand()

    def action_collapse(self) -> None:
        node = self._cursor()
        if node is None:
            return
        if node.is_expanded and node.children:
            node.collapse()
        elif node.parent is not None:  # on a closed node, `h` goes to its parent, as in a file tree
            self.query_one(Tree).move_cursor(node.parent)

    def action_expand_all(self) -> None:
        self.query_one(Tree).root.expand_all()

    # -- sort: `o` picks the column, `s` flips the order; children are reordered, the tree keeps its
    # shape ----
    def action_sort_pick(self) -> None:
        choices, empty = sort_choices(self.tree_rows)

        def picked(column: str | None) -> None:
            if column:  # numbers largest first, names from A
                self._resort(column, column not in ("name", "roof"))

        self.app.push_screen(SortScreen(choices, self.sort[0], empty), picked)

    def action_flip_sort(self) -> None:
        self._resort(self.sort[0], not self.sort[1])

    def _resort(self, column: str, descending: bool) -> None:
        """Each node's children in the new order; the nodes open stay open and the cursor stays on
        its node."""
        self.sort = (column, descending)
        self.tree_rows = sort_siblings(self.tree_rows, column, descending)
        self.model = ModulesModel(self.tree_rows, tree_columns(self.tree_rows), self.query_state)
        self._refill(self._open_paths())
        self.query_one(Breadcrumb).refresh()

    def _open_paths(self) -> set[str]:
        return {
            str(n.data["path"])
            for n in _walk(self.query_one(Tree).root)
            if n.is_expanded and n.data is not None
        }

    def _refill(self, opened: set[str] | None) -> None:
        """The tree again from `tree_rows`, only the nodes the filter keeps (and those they sit in);
        `opened`: the nodes to open (None: all); the cursor stays on its node where it is still
        shown."""
        tree = self.query_one(Tree)
        cursor = tree.cursor_node
        at = str(cursor.data["path"]) if cursor is not None and cursor.data is not None else ""
        rows = self.tree_rows.to_dict(orient="records")
        if self.filtered and self.model is not None:
            paths = [str(r["path"]) for r in rows]
            matched = {paths[i] for i in self.model.order}
            kept = with_ancestors(paths, matched)
            rows = [r for r in rows if str(r["path"]) in kept]
            for row in rows:
                row["dimmed"] = str(row["path"]) not in matched
        nodes = self._fill(tree.clear(), rows)
        for path, node in nodes.items():
            if opened is None or path in opened:
                node.expand()
        # lays out the lines, so that the node below has its line to move to
        tree.last_line  # noqa: B018
        tree.move_cursor(nodes.get(at, tree.root))

    def _requery(self, query: Query, top: bool = False) -> None:
        """The nodes `query` keeps, all open (escape shows the tree as it was, its nodes open as
        they were)."""
        if not self.filtered and query.filtered:
            self._opened = self._open_paths()
        self.query_state = query
        assert self.model is not None  # made with the screen
        self.model.apply(query)
        self._refill(None if query.filtered else self._opened)
        status = self.query_one("#modules-status", Static)
        text = query.text()
        matched = len(self.model)
        line = f"{matched}/{self.model.total} nodes" if matched else "no module matches"
        status.update(Text(display_text(f"{line} · filter {text} · escape shows all")))
        status.set_class(query.filtered, "shown")

    # -- other screens
    # --------------------------------------------------------------------------------------
    def action_roofline(self) -> None:
        """The launches under the cursor's node, by kernel name, on the Roofline screen (`c` judges
        them again)."""
        node = self._cursor()
        if node is None or node.data is None:
            return
        launches = self.report.under_module(str(node.data["path"]))
        rows = launches.group("name", time_order=False)
        self.app.push_screen(
            RooflineScreen(
                rows, by_time(rows), launches.ceilings(), "kernel", "name", report=launches
            )
        )

    def action_steps(self) -> None:
        """The steps table, as `report --by module` prints it; without steps, why not."""
        if self.steps is None:
            self.notify(
                self.steps_line or "no `step N` ranges and no timing file: no steps to show",
                title="Steps",
            )
            return
        self.app.push_screen(StepsScreen(self.steps, self.export_to.with_name("steps.csv")))

    def action_model(self) -> None:
        """Ask for a model JSON (`flopscope model ... --json > model.json`) and show each module's
        analytic FLOPs beside its measured ones; a file that is not one stays in the dialog with
        its reason."""
        loaded: list[ModelFlops] = []

        def check(text: str) -> str | None:
            try:
                loaded[:] = [load_model_json(Path(text).expanduser())]
            except FlopscopeError as err:
                return err.line()
            return None

        def done(text: str | None) -> None:
            if text and loaded:
                self.flop_model = loaded[0]
                self.tree_rows, self.steps, self.steps_line = self._figured()
                self.model = ModulesModel(
                    self.tree_rows, tree_columns(self.tree_rows), self.query_state
                )
                self.model.apply(self.query_state)
                self._refill(self._open_paths())
                self.notify(display_text(f"model FLOPs from {text}"), title="Model")

        self.app.push_screen(
            PromptScreen(
                "Model JSON (flopscope model ... --json):",
                hint="each module's analytic FLOPs beside the measured ones",
                check=check,
            ),
            done,
        )

    def action_next_group(self) -> None:
        """`g` goes on round the groupings: back to the Kernels screen, by kernel name."""
        self.dismiss()
        regroup = getattr(self.app.screen, "regroup", None)
        if callable(regroup):
            regroup("name")

    async def action_export(self) -> None:
        rows = with_public_paths(self.tree_rows)
        await ask_export(self.app, lambda: rows, self.export_to, what="module tree")


def _walk(node: TreeNode[dict[str, object]]) -> list[TreeNode[dict[str, object]]]:
    """A node and every node below it."""
    return [node, *(n for child in node.children for n in _walk(child))]
