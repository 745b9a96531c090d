"""Issue 43.5: pictures to share. `report -o OUT.svg|.html|.txt` and `roofline -o` write what the
terminal would show (rich's own export), naming the run, GPU and roof; the app's ctrl+s saves the
screen (Textual's export)."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from flopscope.tui.presentation import format as fmt

from ..helpers.cli import run_cli
from ..helpers.real_files import DEMO


def svg_text(path) -> str:
    """The text an SVG shows, its cells joined (rich writes one <text> per run of a style)."""
    body = path.read_text(encoding="utf-8")
    return html.unescape(" ".join(re.findall(r"<text[^>]*>(.*?)</text>", body))).replace(
        "\xa0", " "
    )


def demo_rows() -> list[dict]:
    out = run_cli("report", DEMO, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["rows"]


@pytest.mark.parametrize("kind", ["svg", "html", "txt"])
def test_report_writes_the_printed_report_as_a_picture(tmp_path, kind):
    target = tmp_path / f"table.{kind}"
    out = run_cli("report", DEMO, "--top", "5", "-o", target, columns=160)
    assert out.returncode == 0 and out.stdout == "", out.stderr
    assert f"wrote {target}" in out.stderr
    text = svg_text(target) if kind == "svg" else html.unescape(target.read_text(encoding="utf-8"))
    assert "NVIDIA H100 80GB HBM3" in text and "Ceilings at SM" in text
    for row in demo_rows()[:5]:  # each row's time, as the table prints it
        assert fmt.seconds(row["duration_s"]) in text


def test_a_picture_of_another_kind_is_one_line_exit_2(tmp_path):
    out = run_cli("report", DEMO, "-o", tmp_path / "table.png")
    assert (
        out.returncode == 2
        and len(out.stderr.strip().splitlines()) == 1
        and "OUT.svg" in out.stderr
    )
    assert not (tmp_path / "table.png").exists()


def test_roofline_writes_the_roofline_screens_picture(tmp_path):
    target = tmp_path / "roof.svg"
    out = run_cli("roofline", DEMO, "-o", target, "--size", "140x44")
    assert out.returncode == 0, out.stderr
    text = svg_text(target)
    rows = demo_rows()
    flop = np.array([r["flop"] or 0 for r in rows], dtype=float)
    dram = np.array([r["dram_bytes"] or 0 for r in rows], dtype=float)
    plotted = int(((flop > 0) & (dram > 0)).sum())
    assert f"{plotted} plotted · {len(rows) - plotted} on the strip" in text
    assert (
        f"{DEMO.name} · NVIDIA H100 80GB HBM3 · by name · roof: theoretical at the measured clock"
        in text
    )
    assert "arithmetic intensity, FLOP/byte (DRAM)" in text


async def test_ctrl_s_saves_the_screen_as_an_svg_in_the_working_directory(tmp_path, monkeypatch):
    from ..helpers.app import make_app, ready
    from ..helpers.real_files import report_of

    monkeypatch.chdir(tmp_path)
    app = make_app(report_of(DEMO))
    app.path = DEMO
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
    written = tmp_path / f"{DEMO.stem}-kernels.svg"
    assert written.exists()
    assert "train_transformer_bf16_bs8" in svg_text(written) and "FLOP %Peak" in svg_text(written)
