"""The app's module tree from the structured NVTX stacks: a range named `attn/qkv:proj` is one node,
and a file of two GPUs opens with a node per GPU under the root."""

from __future__ import annotations

from flopscope.core import read_report

from ..helpers.app import make_app
from ..helpers.module_tree import open_tree, shown_names
from ..helpers.renamed_range import RENAMED, renamed_page
from ..helpers.two_gpu_capture import time_per_gpu, two_gpu_page


async def test_a_range_name_holding_a_slash_and_a_colon_is_one_node_of_the_tree(tmp_path):
    app = make_app(read_report(renamed_page(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_tree(app, pilot)
        await pilot.press("asterisk")
        await pilot.pause()
        names = shown_names(screen)
        assert names.count(RENAMED) == 1 and not {"attn", "qkv:proj", "proj"} & set(names)


async def test_two_gpus_open_as_a_node_each_under_the_root(tmp_path):
    page = two_gpu_page(tmp_path)
    app = make_app(read_report(page))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_tree(app, pilot)
        names = shown_names(screen)
        # each GPU's tree, open
        assert names[0] == "(all launches)" and names[2::2] == ["measure", "measure"]
        assert sorted(n.split(": ", 1)[1] for n in names[1::2]) == sorted(time_per_gpu(page))
