"""The ncu stand-in as an `ncu` script (make_ncu), the SSH options of a loopback server, one-line
errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..conftest import fixture_path

STANDIN = Path(__file__).parents[1] / "ncu_standin" / "ncu_standin.py"


def make_ncu(
    tmp_path: Path,
    report: str = "t4_mlp_matadd_full.ncu-rep",
    scenario: str = "ok",
    delay: float = 0.0,
) -> Path:
    """An `ncu` for --ncu: the stand-in, told which real report to hand back and what to replay."""
    return standin_script(
        tmp_path / f"ncu-{scenario}",
        "--standin-report",
        fixture_path(report),
        "--standin-scenario",
        scenario,
        "--standin-delay",
        delay,
    )


def standin_script(script: Path, *standin_args) -> Path:
    """An executable `ncu` at SCRIPT that runs the stand-in with STANDIN_ARGS before ncu's own
    arguments."""
    script.write_text(
        f'#!/bin/sh\nexec {sys.executable} {STANDIN} {" ".join(map(str, standin_args))} "$@"\n'
    )
    script.chmod(0o755)
    return script


def remote(server) -> list[str]:
    return ["--host", server.alias, "--ssh-config", server.config]


def one_error_line(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    return [
        ln
        for ln in out.stderr.splitlines()
        if ln.startswith("flopscope: ") and "run folder" not in ln
    ][-1]
