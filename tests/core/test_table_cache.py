"""The table cache: a second read of a report comes from Parquet, equal to the first; a changed
file, a killed writer, a damaged entry and --no-cache all give the table read afresh."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from flopscope.core.readers import ncu_rep, read_metrics, table_cache
from flopscope.core.report import report as report_module
from flopscope.core.report.report import read_report

from ..conftest import FIXTURES
from ..helpers.real_files import DEMO, H100, plain_copy


@pytest.fixture
def cache_on(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv(table_cache.NO_CACHE_ENV, raising=False)
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path / "home"))
    return tmp_path / "home" / "cache"


@pytest.fixture
def report(tmp_path) -> Path:
    return plain_copy(DEMO, tmp_path)


def _count_reads(monkeypatch) -> list:
    calls = []
    real = ncu_rep.read_table

    def counting(path, progress=None):
        calls.append(path)
        return real(path, progress)

    monkeypatch.setattr(ncu_rep, "read_table", counting)
    return calls


def _real_files() -> list[Path]:
    shared = (
        sorted(p for p in FIXTURES.glob("*") if p.stat().st_size >= table_cache.MIN_REPORT_BYTES)
        if FIXTURES.is_dir()
        else []
    )
    return [DEMO, *shared]


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name)
def test_a_cached_table_equals_the_table_read(path, cache_on, monkeypatch):
    monkeypatch.setenv(table_cache.NO_CACHE_ENV, "1")
    fresh, fresh_meta = read_metrics(path)
    monkeypatch.delenv(table_cache.NO_CACHE_ENV)
    read_metrics(path)  # writes the entry
    assert len(list(cache_on.glob("*.parquet"))) == 1
    cached, cached_meta = read_metrics(path)
    pd.testing.assert_frame_equal(cached, fresh)
    assert cached_meta == fresh_meta


def test_the_second_read_does_not_parse_the_report(report, cache_on, monkeypatch):
    calls = _count_reads(monkeypatch)
    first, _ = read_metrics(report)
    second, _ = read_metrics(report)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(first, second)


def test_a_changed_report_is_read_again(report, cache_on, monkeypatch):
    calls = _count_reads(monkeypatch)
    read_metrics(report)
    data = report.read_bytes()
    report.write_bytes(data)  # same bytes, new modification time: could be another report
    os.utime(report, ns=(time.time_ns(), time.time_ns() + 10**9))
    read_metrics(report)
    assert len(calls) == 2


def test_a_table_read_by_other_reader_code_is_read_again(report, cache_on, monkeypatch):
    """A cache written by another flopscope (or a working copy being edited) is never handed back:
    its key holds a digest of the readers' code."""
    calls = _count_reads(monkeypatch)
    read_metrics(report)
    monkeypatch.setattr(table_cache, "readers_code", lambda: "other-code")
    read_metrics(report)
    assert len(calls) == 2


def test_no_cache_bypasses_it(report, cache_on, monkeypatch):
    calls = _count_reads(monkeypatch)
    monkeypatch.setenv(table_cache.NO_CACHE_ENV, "1")
    read_metrics(report)
    read_metrics(report)
    assert len(calls) == 2
    assert not cache_on.exists() or not list(cache_on.glob("*.parquet"))


@pytest.mark.parametrize(
    "name", ["gemm_bf16_4096x4096x4096.csv.gz", "gemm_bf16_4096x4096x4096.details.csv.gz"]
)
def test_a_csv_gets_only_its_finished_report_entry(name, cache_on, monkeypatch):
    """A CSV's metric table is not kept (it parses about as fast as an entry is written and read
    back), but its finished report is: a second open neither parses nor counts, and another --gpu
    parses it again."""
    monkeypatch.setattr(table_cache, "MIN_REPORT_BYTES", 0)  # the capture's pages are small
    parsed = []
    real = report_module.read_metrics
    monkeypatch.setattr(
        report_module, "read_metrics", lambda *a, **k: parsed.append(a) or real(*a, **k)
    )
    looked_up = []
    real_load = table_cache.load
    monkeypatch.setattr(
        table_cache, "load", lambda entry: looked_up.append(entry) or real_load(entry)
    )
    fresh = read_report(H100 / name)
    assert len(list(cache_on.glob("*.parquet"))) == 1  # the finished report's, no metric table's
    # the finished report's
    assert len(looked_up) == 1, "a metric table the CSV never gets was looked for"
    again = read_report(H100 / name)
    assert len(parsed) == 1, "the second open parsed the CSV again"
    pd.testing.assert_frame_equal(again.kernels, fresh.kernels, check_exact=True)
    read_report(H100 / name, gpu="h100-pcie")
    assert len(parsed) == 2 and len(list(cache_on.glob("*.parquet"))) == 2


def test_a_damaged_entry_is_read_past_and_replaced(report, cache_on, monkeypatch):
    read_metrics(report)
    (entry,) = cache_on.glob("*.parquet")
    entry.write_bytes(entry.read_bytes()[:100])
    calls = _count_reads(monkeypatch)
    frame, _ = read_metrics(report)
    assert len(calls) == 1 and len(frame) == 91
    assert table_cache.load(entry) is not None  # rewritten whole


def test_a_killed_writer_leaves_a_usable_cache(report, cache_on, tmp_path):
    """SIGKILL a process while it writes entries: what it leaves is whole entries and temporary
    files, and the next read works (and removes the temporary files once they are stale)."""
    script = tmp_path / "writer.py"
    script.write_text(
        "import sys\nfrom pathlib import Path\nfrom flopscope.core.readers import table_cache\nfrom"
        " flopscope.core.readers import read_metrics\nframe, meta ="
        " read_metrics(sys.argv[1])\nentry ="
        " table_cache.entry_for(Path(sys.argv[1]))\nprint('ready', flush=True)\nwhile True:\n   "
        " table_cache.save(entry, frame, meta)\n"
    )
    env = {**os.environ, "FLOPSCOPE_HOME": str(cache_on.parent)}
    env.pop(table_cache.NO_CACHE_ENV, None)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(report)], stdout=subprocess.PIPE, env=env, text=True
    )
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # pathlib's glob matches dot files too: a write the kill interrupted is a `.tmp-*.parquet`, not
    # an entry
    entries = [path for path in cache_on.glob("*.parquet") if not path.name.startswith(".tmp-")]
    assert len(entries) == 1
    frame, _ = read_metrics(report)
    assert len(frame) == 91
    for leftover in cache_on.glob(".tmp-*"):
        os.utime(leftover, (0, 0))
    table_cache.evict(cache_on)
    assert not list(cache_on.glob(".tmp-*"))


def test_the_cache_stays_under_its_cap(cache_on, tmp_path):
    cache_on.mkdir(parents=True)
    for i in range(5):
        (cache_on / f"{i}.parquet").write_bytes(b"x" * 1000)
        os.utime(cache_on / f"{i}.parquet", (i, i))
    table_cache.evict(cache_on, max_bytes=2500)
    assert sorted(p.name for p in cache_on.glob("*.parquet")) == ["3.parquet", "4.parquet"]


def test_a_read_only_data_home_only_means_no_cache(report, tmp_path, monkeypatch):
    home = tmp_path / "ro"
    home.write_text("a file where the data folder would be")
    monkeypatch.delenv(table_cache.NO_CACHE_ENV, raising=False)
    monkeypatch.setenv("FLOPSCOPE_HOME", str(home))
    frame, _ = read_metrics(report)
    assert len(frame) == 91


def test_the_cli_caches_and_no_cache_bypasses(report, tmp_path):
    from ..helpers.cli import run_cli

    env = {table_cache.NO_CACHE_ENV: ""}
    home = tmp_path / "clihome"
    bypassed = run_cli("report", report, "--no-cache", home=home, env=env)
    assert bypassed.returncode == 0, bypassed.stderr
    assert not list((home / "cache").glob("*.parquet"))
    first = run_cli("report", report, "--json", home=home, env=env)
    # its metric table, the finished report, and its rows by kernel name
    assert len(list((home / "cache").glob("*.parquet"))) == 3
    # not the same arguments: the output cache (tui/cli/output_cache.py) would answer a repeat
    second = run_cli("report", report, "--json", "--by", "name", home=home, env=env)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout


def test_the_code_digests_cover_what_makes_a_table_wherever_the_modules_live():
    """The keys hash the code that made a cached table: after core/ moved into stage packages, a
    digest over the old paths would have hashed nothing of the readers and handed back tables made
    by other code."""
    sources = table_cache.reader_sources()
    assert all(p.is_file() for p in sources)
    names = {p.name for p in sources}
    assert {"ncu_rep_stream.py", "csv_raw.py", "metrics.py", "units.py"} <= names
    engine = Path(table_cache.__file__).parents[1]
    assert {p.name for p in engine.rglob("*.py")} >= {"counters.py", "roofline.py", "report.py"}


def test_an_entry_moved_over_another_reports_entry_is_not_handed_back(cache_on):
    """Each entry carries its own name, its key's digest: another report's table under this name is
    refused, and the report is read afresh (it showed the other report's table)."""
    first, second = (
        FIXTURES / name
        for name in (
            "h100pcie_ee384_cub_agents_full.ncu-rep",
            "v100_ncar_miniweather_fp64_full.ncu-rep",
        )
    )
    tables = {}
    for path in (first, second):
        frame, meta = read_metrics(path)
        entry = table_cache.entry_for(path)
        table_cache.save(entry, frame, meta)
        tables[path] = (entry, len(frame))
    (first_entry, _), (second_entry, second_rows) = tables[first], tables[second]
    # the first report's table now sits under the second's name
    os.replace(first_entry, second_entry)
    assert table_cache.load(second_entry) is None
    assert len(read_metrics(second)[0]) == second_rows
