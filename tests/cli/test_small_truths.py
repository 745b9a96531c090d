"""Issue 41.6's smaller untruths, as the command line prints them: each message reads right on a real file."""

from __future__ import annotations

from ..conftest import fixture_path
from ..helpers.cli import run_cli
from ..helpers.mutate import read_table
from ..helpers.raw_csv import partial_warp_sgemm


def test_unknown_tensor_flops_read_right_without_a_cc_column(tmp_path):
    """A details CSV without its CC column, tensor instructions counted with no checked factor: the message
    once ended `for CC )`."""
    source = fixture_path("a100_gemm_printfp_details.csv")
    table = read_table(partial_warp_sgemm(source, tmp_path / "sgemm.csv"))
    at = table.col("CC")
    table.header.pop(at)
    for row in table.rows:
        row.pop(at)
    path = table.write(tmp_path / "no_cc.csv")
    out = run_cli("report", path)
    assert out.returncode == 0, out.stderr
    (line,) = [ln for ln in out.stderr.splitlines() if "no checked FLOPs per instruction" in ln]
    assert "for CC )" not in line and "for CC " not in line
    assert "for an unknown compute capability: the report names none);" in line
    with_cc = run_cli("report", tmp_path / "sgemm.csv")  # the CC column kept: it is named
    assert "no checked FLOPs per instruction for CC 8.0)" in with_cc.stderr
