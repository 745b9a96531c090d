"""`flopscope ceilings --host HOST` over a real SSH server on loopback: the bench script travels
whole as one argument, runs there, and what it measured is stored for that host and judges its
reports.

The host has no GPU, so its `python3` is a stand-in that checks it was handed flopscope's bench
source, byte for byte, and prints what `flopscope ceilings --json` printed on the project's H100
(capture part e, tests/data/gpu/nvidia_h100_80gb_hbm3/ceilings/). Without the stand-in, the host's
own python3 runs the real bench, which finds no GPU (or no torch): one line, exit 2."""

from __future__ import annotations

import hashlib
import json
import sys
from importlib.resources import files
from pathlib import Path

import pytest

from ..helpers.ceilings import recorded_doc
from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import remote
from ..helpers.sshd import start_sshd

GEMM = (
    Path(__file__).parents[1]
    / "data"
    / "gpu"
    / "nvidia_h100_80gb_hbm3"
    / "gemm_fp32_4096x4096x4096.ncu-rep.xz"
)


@pytest.fixture(scope="module")
def gpu_host(tmp_path_factory):
    """A host whose python3 replays the H100's measurement, once it has checked its argv."""
    root = tmp_path_factory.mktemp("ceilings_host")
    bench = files("flopscope.core.profiling").joinpath("ceilings_bench.py").read_text()
    standin = root / "python3_standin.py"
    standin.write_text(
        "import hashlib, json, sys\nBENCH, ROOT, DOC ="
        f" {hashlib.sha256(bench.encode()).hexdigest()!r}, {str(root)!r}, {recorded_doc(1)!r}\nif"
        " sys.argv[1:2] != ['-c'] or hashlib.sha256(sys.argv[2].encode()).hexdigest() != BENCH:\n "
        "   sys.exit('python3 stand-in: not handed the ceilings bench: ' +"
        " repr(sys.argv[1:3])[:200])\nopen(ROOT + '/device', 'w').write(sys.argv[3])  # the"
        " --device asked for\nprint('torch: warming up')  # what a real run may print before its"
        " one JSON line\nprint(json.dumps(DOC))\n"
    )
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec {sys.executable} {standin} "$@"\n')
    (bin_dir / "python3").chmod(0o755)
    login = root / "login"
    login.write_text(f'#!/bin/sh\nPATH={bin_dir}:$PATH exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n')
    login.chmod(0o755)
    srv = start_sshd(root / "sshd", alias="gpubox", force_command=str(login))
    yield srv, root
    srv.stop()


def test_ceilings_measured_over_ssh_are_stored_for_that_host_and_judge_its_reports(
    gpu_host, tmp_path
):
    srv, root = gpu_host
    doc = recorded_doc(1)
    out = flopscope("ceilings", *remote(srv), "--device", "1", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    (stored,) = json.loads(out.stdout)
    assert (root / "device").read_text() == "1"
    assert (
        stored["host"] == srv.alias
        and stored["gpu"] == doc["gpu"]
        and stored["driver"] == doc["driver"]
    )
    assert stored["values"] == pytest.approx({k: v for k, v in doc["values"].items() if v})
    listed = flopscope("ceilings", "--list", "--host", srv.alias, home=tmp_path)
    assert listed.returncode == 0 and f"on {srv.alias}: {doc['gpu']}" in listed.stdout, (
        listed.stdout
    )
    if GEMM.exists():  # the H100's own FP32 GEMM, judged by what was measured on gpubox
        judged = flopscope("report", GEMM, "--json", "--roof", "measured", home=tmp_path)
        assert judged.returncode == 0, judged.stderr
        (row,) = json.loads(judged.stdout)["rows"]
        assert row["peak_flop_per_s"] == pytest.approx(doc["values"]["fp32_flop_per_s"])


def test_the_real_bench_on_a_host_without_a_gpu_is_one_line(tmp_path):
    srv = start_sshd(tmp_path / "sshd", alias="nogpu")
    try:
        out = flopscope("ceilings", *remote(srv), home=tmp_path / "home")
    finally:
        srv.stop()
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("flopscope: ceilings on nogpu: "), line
    assert "torch" in line  # no torch there, or torch that sees no CUDA GPU: the fix names both
