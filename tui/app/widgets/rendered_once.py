"""A rich renderable drawn once per width: Textual renders a Static's rich content twice for one
frame (`RichVisual.get_height` to lay it out, `render_strips` to draw it), and the details pane's
dozen section tables take most of a key's frame on a big table."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment


class RenderedOnce:
    """`renderable`'s segments, kept per console and per option that can change them. The height
    Textual passes is left out of the key: it is only ever given to content that does not read it
    (rich tables render their cells with no height, text wraps to the width alone)."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._segments: dict[tuple, list[Segment]] = {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key = (
            id(console),
            options.min_width,
            options.max_width,
            options.justify,
            options.overflow,
            options.no_wrap,
            options.highlight,
            options.markup,
            options.ascii_only,
            options.encoding,
            options.legacy_windows,
            options.is_terminal,
        )
        if key not in self._segments:
            self._segments[key] = list(console.render(self.renderable, options))
        return iter(self._segments[key])

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)
