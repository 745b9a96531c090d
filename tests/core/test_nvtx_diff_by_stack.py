"""Issue 40: `diff --by nvtx`, `check --by nvtx` and the app's Diff screen match NVTX groups by
their structured stack, not the joined label: a range named `forward/attn` (one range) is not the
range `forward` holding `attn`, though both read `measure/forward/attn/...`. The pages are the H100
step's raw page and the same with `forward` > `attn` merged into one range (tests/helpers/
merged_ranges.py); every expected group and count is read from the pages with `csv` alone."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from flopscope.core import read_report
from flopscope.core.analysis.diff import diff_runs
from flopscope.core.store.run_store import Store
from flopscope.tui.app.app import FlopscopeApp
from flopscope.tui.app.screens.diff import DiffScreen
from flopscope.tui.app.screens.kernel_pair import KernelPairScreen
from flopscope.tui.app.widgets.kernel_table import KernelTable

from ..conftest import settle
from ..helpers.app import screen_lines
from ..helpers.cli import run_cli
from ..helpers.merged_ranges import (
    MERGED,
    joined,
    json_key,
    merged_page,
    page_groups,
    source_page,
)


@pytest.fixture
def pages(tmp_path):
    """The captured page, the page with every `forward` > `attn` merged, and the page with only
    every other such launch merged (both spellings in one run)."""
    return (
        source_page(tmp_path),
        merged_page(tmp_path, "merged.csv"),
        merged_page(tmp_path, "mixed.csv", lambda n: n % 2 == 0),
    )


def _merged_keys(groups: Counter) -> set:
    return {k for k in groups if any(MERGED in names for _, names in k)}


def test_the_pages_differ_in_ranges_only_not_in_labels(pages):
    """The premise: merged stacks exist, and each reads exactly like a captured one."""
    captured, merged, mixed = (page_groups(p) for p in pages)
    assert _merged_keys(merged) and _merged_keys(mixed)
    assert {joined(k) for k in _merged_keys(merged)} <= {joined(k) for k in captured}
    assert sum(captured.values()) == sum(merged.values()) == sum(mixed.values()) == 91


def _diff_json(a, b, home) -> list[dict]:
    with Store(home / "flopscope.db") as store:
        store.save(read_report(a), "a")
        store.save(read_report(b), "b")
    done = run_cli("diff", "a", "b", "--by", "nvtx", "--json", home=home)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["rows"]


@pytest.mark.parametrize("b", [1, 2], ids=["merged", "both-spellings-in-b"])
def test_diff_by_nvtx_matches_stacks_not_labels(pages, b, tmp_path):
    """Each row is one stack of either page: `both` exactly where both pages have that stack, with
    each page's launches under it; a merged stack is only in B although A has its label; two rows
    never read alike."""
    a_groups, b_groups = page_groups(pages[0]), page_groups(pages[b])
    rows = _diff_json(pages[0], pages[b], tmp_path)
    got = {json_key(r["nvtx_ranges"]): r for r in rows}
    assert len(got) == len(rows) == len(set(a_groups) | set(b_groups))
    for key, row in got.items():
        expected = (
            "both" if key in a_groups and key in b_groups else
            "only in A" if key in a_groups else "only in B"
        )  # fmt: skip
        assert row["presence"] == expected, (joined(key), row["presence"])
        assert (row["count_a"] or 0) == a_groups.get(key, 0)
        assert (row["count_b"] or 0) == b_groups.get(key, 0)
        assert row["nvtx"] == (joined(key) or "(no NVTX range)")
        assert "nvtx_stack" not in row  # its separators are control characters
    merged = _merged_keys(b_groups)
    assert merged and all(got[k]["presence"] == "only in B" for k in merged)
    assert len({r["kernel"] for r in rows}) == len(rows)
    # where a label is both spellings', the row names its ranges whole
    alike = [r for r in rows if sum(r2["nvtx"] == r["nvtx"] for r2 in rows) > 1]
    assert alike and all(" > " in r["kernel"] for r in alike)
    assert any(f" > {MERGED} > " in r["kernel"] for r in alike)


def test_check_by_nvtx_judges_only_the_same_stacks(pages):
    """`check --by nvtx` of the merged page against the captured one: the merged stacks are new,
    the nested ones vanished, none judged against the other; the rest match and pass."""
    a_groups, b_groups = page_groups(pages[0]), page_groups(pages[1])
    done = run_cli("check", pages[1], "--baseline", pages[0], "--by", "nvtx", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(done.stdout)["rows"]
    verdicts = {json_key(r["nvtx_ranges"]): r["verdict"] for r in rows}
    assert len(verdicts) == len(rows)
    assert {k for k, v in verdicts.items() if v == "new"} == set(b_groups) - set(a_groups)
    assert {k for k, v in verdicts.items() if v == "vanished"} == set(a_groups) - set(b_groups)
    assert _merged_keys(b_groups) <= {k for k, v in verdicts.items() if v == "new"}
    judged = {k for k, v in verdicts.items() if v not in ("new", "vanished")}
    assert judged == set(a_groups) & set(b_groups)


async def test_the_diff_screen_opens_each_spelling_with_its_own_launches(pages):
    """The Diff screen by NVTX range of the captured page against the one holding both spellings:
    the two rows of one label read apart on the screen, and `enter` on the nested one's row opens
    A's and B's group of that stack, each with the page's launches under it."""
    a, b = read_report(pages[0]), read_report(pages[2])
    a_groups, b_groups = page_groups(pages[0]), page_groups(pages[2])
    merged = sorted(_merged_keys(b_groups), key=lambda k: -b_groups[k])[0]
    nested = next(k for k in b_groups if k in a_groups and joined(k) == joined(merged))
    app = FlopscopeApp(DiffScreen(diff_runs(a, b, by="nvtx"), "a", "mixed", reports=(a, b)))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = app.screen
        await settle(pilot, lambda: screen.model is not None)
        rows = screen.model.rows
        keys = [json_key(r) for r in rows["nvtx_ranges"]]
        names = {k: rows["kernel"].iloc[n] for n, k in enumerate(keys)}
        assert names[merged] != names[nested]
        table = screen.query_one(KernelTable)
        shown = []
        for key in (merged, nested):  # the cursor's row is scrolled into view
            table.cursor_row = list(screen.model.order).index(keys.index(key))
            await pilot.pause()
            shown.append("\n".join(screen_lines(app)))
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, KernelPairScreen))
        row_a, row_b = app.screen.rows
    assert names[merged][:20] in shown[0] and names[nested][:20] in shown[1]
    assert (row_a["count"], row_b["count"]) == (a_groups[nested], b_groups[nested])
    assert json_key(row_b["nvtx_ranges"]) == nested
