"""How `write_table` puts an export on disk: whole or not at all, and its pages sent to disk as they
are written, so the closing fsync of a 230 MB JSON export waits for its last few MB, not for all of
it."""

from __future__ import annotations

import itertools
import json
import os

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from flopscope.core.export import write as export
from flopscope.core.export.write import write_table


def _rows(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame({"kernel": [f"k{i % 13}" for i in range(n)], "flop": rng.random(n) * 1e12})


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="this OS has no posix_fadvise")
@pytest.mark.parametrize("suffix", [".json", ".csv", ".parquet"])
def test_pages_are_sent_to_disk_as_they_are_written(tmp_path, monkeypatch, suffix):
    advised: list[tuple[int, int]] = []
    real = os.posix_fadvise

    def spy(fd: int, offset: int, length: int, advice: int) -> None:
        assert advice == os.POSIX_FADV_DONTNEED
        advised.append((offset, length))
        real(fd, offset, length, advice)

    monkeypatch.setattr(os, "posix_fadvise", spy)
    # 64 KiB: a small table spans many
    monkeypatch.setattr(export._WrittenBackAsItGoes, "STEP", 64 << 10)
    rows = _rows(100_000)
    out = write_table(rows, tmp_path / f"k{suffix}", meta={"launches": len(rows)})

    size, sent = out.stat().st_size, advised[-1][0] + advised[-1][1] if advised else 0
    # back to back from the first byte, each at least a step, most of the file before the closing
    # fsync pyarrow's Parquet writer hands over a row group at once (in older releases, all of this
    # table)
    assert len(advised) >= (2 if suffix == ".parquet" else 3) and advised[0][0] == 0
    assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(advised))
    assert all(n >= 64 << 10 for _, n in advised)
    assert size / 2 < sent <= size
    if suffix == ".json":
        assert len(json.loads(out.read_text())["rows"]) == len(rows)
    elif suffix == ".csv":
        assert (
            pd.read_csv(out, float_precision="round_trip")["flop"].tolist() == rows["flop"].tolist()
        )
    else:
        assert pq.read_table(out).num_rows == len(rows)


def test_a_failed_write_leaves_no_file_and_the_old_export_as_it_was(tmp_path, monkeypatch):
    target = tmp_path / "k.json"
    target.write_text("old")

    def full(self, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export._WrittenBackAsItGoes, "write", full)
    with pytest.raises(export.FlopscopeError, match="No space left on device"):
        write_table(_rows(100), target)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["k.json"]
