"""Issue 38: two `flopscope import` of one run folder at once stored it twice (1 of 4 trials): each
looked for a run stored from that report before either had stored it. The look and the insert are
now one transaction."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from ..helpers.cli import CLI, run_cli

REPORT = (
    Path(__file__).parents[1]
    / "data"
    / "gpu"
    / "nvidia_h100_80gb_hbm3"
    / "gemm_bf16_4096x4096x4096.ncu-rep.xz"
)
TRIALS, AT_ONCE = 2, 3


def _imports_at_once(folder: Path, home: Path) -> list[subprocess.CompletedProcess]:
    """AT_ONCE real processes importing `folder` into one store, started together."""
    env = {**os.environ, "FLOPSCOPE_HOME": str(home)}
    procs = [
        subprocess.Popen(
            [*CLI, "import", str(folder)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(AT_ONCE)
    ]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def test_concurrent_imports_of_one_folder_store_it_once(tmp_path):
    for trial in range(TRIALS):
        folder = tmp_path / f"trial{trial}" / "gemm"
        folder.mkdir(parents=True)
        shutil.copyfile(REPORT, folder / "report.ncu-rep.xz")
        home = tmp_path / f"home{trial}"
        done = _imports_at_once(folder, home)
        listed = run_cli("runs", "--json", home=home)
        assert listed.returncode == 0, listed.stderr
        names = [r["name"] for r in json.loads(listed.stdout)]
        assert names == ["gemm"], (trial, names, [d.stderr for d in done])
        assert sorted(d.returncode for d in done) == [0] + [2] * (AT_ONCE - 1), [
            d.stderr for d in done
        ]
        for refused in (d for d in done if d.returncode == 2):
            lines = refused.stderr.strip().split("\n")
            assert len(lines) == 1 and "already stored as run gemm" in lines[0], refused.stderr
