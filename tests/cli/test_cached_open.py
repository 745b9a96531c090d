"""A report opened again from the table and report caches (the output cache off, as the big-report
benchmark's cached open) prints what its first open printed and what a read with the caches off
prints, byte for byte: by kernel name, NVTX range and launch, as a table and as `--json`; and the
grouping its first open made is read back, not made again."""

from __future__ import annotations

import pytest
from flopscope.core.readers import table_cache

from ..helpers.cli import run_in_process
from ..helpers.real_files import H100, file_id, one_of_each_kind, real_files
from ..helpers.two_gpu_capture import two_gpu_page

COMMANDS = [
    [],
    ["--json"],
    ["--by", "nvtx"],
    ["--by", "nvtx", "--json"],
    ["--by", "launch", "--sort", "kernel", "--top", "40"],
    ["--by", "launch", "--json"],
    ["--sort", "count", "--asc", "--where", "time > 1us"],
]
# one file of each kind, the H100 transformer step the big-report benchmark repeats, every real
# file with FLOPSCOPE_EVERY_FILE=1
FILES = list(
    dict.fromkeys([*one_of_each_kind(real_files()), H100 / "train_transformer_bs8.ncu-rep.xz"])
)


@pytest.fixture
def caches_on(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(table_cache.NO_CACHE_ENV, raising=False)
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FLOPSCOPE_NO_OUTPUT_CACHE", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(table_cache, "MIN_REPORT_BYTES", 0)  # every real file, small ones too


def _uncached(*args) -> tuple[int, str, str]:
    return run_in_process(*args, env={table_cache.NO_CACHE_ENV: "1"})


def _same_opens(path, aggregated) -> None:
    """Each command: a read with the caches off, its first open with them on (for the commands
    after the first, the report's entry is there already, its grouping not) and the open again."""
    for args in COMMANDS:
        fresh = _uncached("report", path, *args)
        assert fresh[0] == 0, fresh[2]
        first = run_in_process("report", path, *args)
        made = len(aggregated)
        again = run_in_process("report", path, *args)
        assert first == fresh, args
        assert again == fresh, args
        assert len(aggregated) == made, f"{args}: the cached open grouped the launches again"


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_a_cached_open_prints_what_its_first_open_printed(path, caches_on, aggregated):
    if not path.exists():
        pytest.skip(f"{path} absent (../shared/fixtures/ncu)")
    _same_opens(path, aggregated)


def test_a_cached_open_of_launches_on_two_gpus_prints_the_same(tmp_path, caches_on, aggregated):
    """A kernel's launches on two GPUs are two rows: its groupings are kept so as well."""
    _same_opens(two_gpu_page(tmp_path), aggregated)
