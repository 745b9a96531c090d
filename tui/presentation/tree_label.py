"""One line of the app's module tree: a module's name and roll-up (`mlp.0  64.4 us  12.2%  MFU krn
31.2% wall 4.1%  model 1.23 G ×0.97  fwd 19.1 us · bwd 45.3 us  %Roof 24.2% compute`), fitted to
the cells its indent leaves.

A Tree line that is too long is cut at the right edge, and at 80 columns a deep node's line lost
its MFU and model FLOPs that way. Fitted, the least telling parts drop whole first (the bound, then
the forward/backward split, then the share of the step); then the MFU keeps its kernel-time figure
alone; then a name that repeats its parent's (`encoder.layers.3.attn` under `encoder.layers.3`)
shows only its own part (`…attn`); then the name is cut in its middle. The time and the model's
FLOPs are never dropped."""

from __future__ import annotations

from collections.abc import Mapping

from rich.cells import cell_len
from rich.text import Text

from ...core.common import display_text
from . import format as fmt
from .names import cut_middle

# each part's rank: the higher, the sooner it drops or shortens (the time and the model's FLOPs
# never do)
TIME, MODEL, MFU, SHARE, SPLIT, ROOF = range(6)
DROPPED_FIRST = (ROOF, SPLIT, SHARE)
GAP = "  "
SHORTEST_NAME = 8  # cells a cut name keeps


def figures(node: Mapping[str, object]) -> list[tuple[int, str]]:
    """`MFU krn 31.2% wall 4.1%` with a timing file, `model 1.23 G ×0.97` with a model: the CLI's
    MFU krn, MFU wall, Model and /Model columns, where the node has them, each with its rank."""
    out = []
    if "mfu_kernel" in node:
        krn, wall = fmt.share(node.get("mfu_kernel")), fmt.share(node.get("mfu_wall"))
        out.append((MFU, f"MFU krn {krn or '-'} wall {wall or '-'}"))
    model = fmt.si(node.get("model_flop"))
    if model:
        out.append((MODEL, f"model {model} ×{fmt.ratio(node.get('flop_vs_model')) or '-'}"))
    return out


def short_mfu(node: Mapping[str, object]) -> str:
    """The MFU part where the line has no room for both: over kernel time alone (`MFU krn
    31.2%`)."""
    return f"MFU krn {fmt.share(node.get('mfu_kernel')) or '-'}"


def node_parts(node: Mapping[str, object]) -> list[tuple[int, str]]:
    """The roll-up's parts in the order shown, each with its rank (empty ones left out)."""
    parts = [(TIME, fmt.seconds(node.get("duration_s"))), (SHARE, fmt.pct(node.get("pct_time")))]
    parts += figures(node)
    parts.append(
        (
            SPLIT,
            f"fwd {fmt.seconds(node.get('forward_duration_s'))} · bwd"
            f" {fmt.seconds(node.get('backward_duration_s'))}",
        )
    )
    roof = fmt.pct(node.get("pct_of_roof"))
    if roof:
        parts.append((ROOF, f"%Roof {roof} {fmt.roof(node.get('roof'))}"))
    return [(rank, text) for rank, text in parts if text]


def own_part(name: str, parent: str | None) -> str:
    """A name without its parent's at its start: `encoder.layers.3.attn` under `encoder.layers.3`
    -> `…attn`; any other name as it is."""
    if parent and len(name) > len(parent) + 1 and name.startswith(parent + "."):
        return "…" + name[len(parent) + 1 :]
    return name


def fitted(
    name: str,
    parts: list[tuple[int, str]],
    room: int | None,
    parent: str | None = None,
    mfu: str = "",
) -> tuple[str, list[str]]:
    """The name and the parts kept in `room` cells (None: all of them, as they are); `mfu`: the
    MFU part's shorter form."""
    kept = list(parts)

    def width(shown: str) -> int:
        return cell_len(shown) + sum(len(GAP) + cell_len(text) for _, text in kept)

    if room is None or width(name) <= room:
        return name, [text for _, text in kept]
    for rank in DROPPED_FIRST:
        kept = [(r, text) for r, text in kept if r != rank]
        if width(name) <= room:
            return name, [text for _, text in kept]
    kept = [(r, mfu if r == MFU and mfu else text) for r, text in kept]
    if width(name) <= room:
        return name, [text for _, text in kept]
    name = own_part(name, parent)
    over = width(name) - room
    if over > 0:
        name = cut_middle(name, max(SHORTEST_NAME, cell_len(name) - over))
    return name, [text for _, text in kept]


def node_label(
    node: Mapping[str, object], room: int | None = None, parent: str | None = None
) -> Text:
    """The node's line: its name in bold, then its roll-up; fitted to `room` cells where given
    (`parent`: the name of the node it sits in)."""
    name, parts = fitted(
        display_text(str(node["name"])),
        node_parts(node),
        room,
        display_text(parent) if parent is not None else None,
        short_mfu(node) if "mfu_kernel" in node else "",
    )
    text = Text(name, style="bold")
    text.append(GAP + GAP.join(parts), style="")
    if node.get("dimmed"):  # shown only for the filtered nodes in it
        text.stylize("dim")
    return text


def guide_cells(width: int, deepest: int) -> int:
    """Cells of indent per level of a tree `width` cells wide whose deepest node is `deepest`
    levels down: Textual's 4, fewer (down to 2) where the deepest node's indent would take more
    than a third of the width, so that a deep node keeps room for its figures."""
    if deepest <= 0 or width <= 0:
        return 4
    return max(2, min(4, width // 3 // deepest))
