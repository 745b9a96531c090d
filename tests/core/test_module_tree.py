"""The module tree of a training step, against figures read from the capture's raw page with `csv`
alone: every module's forward and backward time, roll-ups that equal their parts, no launch lost or
counted twice."""

from __future__ import annotations

import csv
import gzip
import math
import re

import numpy as np
import pytest
from flopscope.core.table.module_tree import NODE_SEP, ROOT, module_tree

from ..helpers.raw_csv import SECONDS
from ..helpers.real_files import H100, file_id, real_files, report_of

PAGE = H100 / "train_transformer_bf16_bs8.csv.gz"
CAPTURE = H100 / "train_transformer_bf16_bs8.ncu-rep.xz"
MODULES = ("attn", "norm1", "norm2", "mlp.0", "mlp.1", "mlp.2")
_PUSHED = re.compile(r'"<default domain>:(.*?):none:none:none:none:none:none"')
_STARTED = re.compile(r'"\d+:<default domain>:(.*?):none:none:none:none:none:none"')


def _expected() -> dict[str, tuple[float, float]]:
    """Per module, (forward, backward) seconds: forward where its name is one of the launch's pushed
    ranges, backward where `backward/<name>` is the last module backward range started (the
    capture's own hooks)."""
    with gzip.open(PAGE, "rt", newline="") as f:
        header, units, *rows = csv.reader(f)
    pushed_col = next(i for i, h in enumerate(header) if "Push/Pop_Range" in h)
    started_col = next(i for i, h in enumerate(header) if "Start/Stop_Range" in h)
    time_col = header.index("gpu__time_duration.sum")
    scale = SECONDS[units[time_col]]
    out = {m: [0.0, 0.0] for m in MODULES}
    for row in rows:
        seconds = float(row[time_col].replace(",", "")) * scale
        pushed = _PUSHED.findall(row[pushed_col])
        started = [
            s.removeprefix("backward/")
            for s in _STARTED.findall(row[started_col])
            if s.startswith("backward/")
        ]
        if started and started[-1] in out:
            out[started[-1]][1] += seconds
        for m in MODULES:
            if m in pushed:
                out[m][0] += seconds
    return {m: (f, b) for m, (f, b) in out.items()}


@pytest.mark.parametrize("path", [PAGE, CAPTURE], ids=file_id)
def test_each_module_holds_its_forward_and_its_backward(path):
    report = report_of(path)
    tree = module_tree(report.kernels, report.judged_by).set_index("name")
    for module, (forward, backward) in _expected().items():
        assert tree.loc[module, "forward_duration_s"] == pytest.approx(
            forward, rel=1e-9, abs=1e-15
        ), module
        assert tree.loc[module, "backward_duration_s"] == pytest.approx(
            backward, rel=1e-9, abs=1e-15
        ), module
    assert (
        tree.loc["mlp.0", "backward_duration_s"] > 0 and tree.loc["attn", "backward_duration_s"] > 0
    )


def _children(tree, path: str):
    depth = 0 if path == "" else path.count(NODE_SEP) + 1
    prefix = path + NODE_SEP if path else ""
    return tree[(tree["depth"] == depth + 1) & tree["path"].str.startswith(prefix)]


NVTX_FILES = [p for p in real_files() if "train_" in p.name or "nvtx" in p.name]


@pytest.mark.parametrize("path", NVTX_FILES, ids=file_id)
def test_every_node_is_its_own_launches_plus_its_childrens_and_the_root_is_everything(path):
    report = report_of(path)
    k = report.kernels
    tree = module_tree(k, report.judged_by)
    root = tree.iloc[0]
    assert root["name"] == ROOT and root["depth"] == 0
    assert root["count"] == len(k)
    assert root["duration_s"] == pytest.approx(k["duration_s"].sum(), rel=1e-12)
    # each launch once
    assert tree["own_duration_s"].sum() == pytest.approx(k["duration_s"].sum(), rel=1e-12)
    for _, node in tree.iterrows():
        kids = _children(tree, node["path"])
        if len(kids):
            assert node["duration_s"] == pytest.approx(
                node["own_duration_s"] + kids["duration_s"].sum(), rel=1e-9
            )
        split = node["forward_duration_s"] + node["backward_duration_s"]
        assert split == pytest.approx(
            node["duration_s"] if not math.isnan(node["duration_s"]) else 0.0, rel=1e-9
        )
    if k["flop"].notna().all():
        assert root["flop"] == pytest.approx(float(np.sum(k["flop"])), rel=1e-12)


def test_a_report_without_nvtx_ranges_is_one_root():
    report = next(r for r in map(report_of, real_files()) if r.kernels["nvtx"].isna().all())
    tree = module_tree(report.kernels, report.judged_by)
    assert tree["name"].tolist() == [ROOT] and tree.iloc[0]["count"] == len(report.kernels)


PAIRS = [
    p
    for p in sorted(H100.parent.glob("*/*.csv.gz"))
    if p.with_name(p.name[:-7] + ".ncu-rep.xz").exists()
]


@pytest.mark.parametrize("page", PAIRS, ids=file_id)
def test_a_raw_page_gives_each_launch_the_nvtx_ranges_its_report_gives(page):
    """The raw page's NVTX cells hold every range (`aten::mm` holds colons): read whole, as the
    .ncu-rep readers read them, the tree is the same from either file (it was the outermost range
    alone, cut at a colon)."""
    report = report_of(page.with_name(page.name[:-7] + ".ncu-rep.xz"))
    assert report_of(page).kernels["nvtx"].tolist() == report.kernels["nvtx"].tolist()
