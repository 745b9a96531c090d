"""The breadcrumb's line: the last part (what the screen shows) keeps its room; earlier parts are
cut first."""

from __future__ import annotations

from flopscope.tui.presentation.breadcrumb import SEP, crumbs
from rich.cells import cell_len


def test_parts_that_fit_are_left_whole():
    assert crumbs(["demo.ncu-rep", "by name", "nvjet_hsh"], 80) == [
        "demo.ncu-rep",
        "by name",
        "nvjet_hsh",
    ]


def test_earlier_parts_give_way_before_the_last():
    kernel = "at::native::elementwise_kernel<128, 4, direct_copy_kernel_cuda>"  # 62 cells
    parts = crumbs(["train_transformer_bf16_bs8.ncu-rep.xz", "by name", kernel], 80)
    assert parts[-1] == kernel and parts[1] == "by name"
    assert (
        parts[0]
        == "train_transformer_bf16_bs8.ncu-rep.xz"[: 80 - 3 - 7 - 3 - len(kernel) - 1] + "…"
    )
    assert cell_len(SEP.join(parts)) == 80


def test_the_last_part_is_cut_only_when_the_others_are_down_to_one_cell():
    parts = crumbs(["report", "by launch", "x" * 100], 40)
    assert parts[:2] == ["…", "…"] and parts[2].endswith("…") and cell_len(SEP.join(parts)) == 40


def test_control_characters_in_a_name_show_as_escapes():
    assert crumbs(["run\x1b[2J", "k"], 80) == ["run\\x1b[2J", "k"]
