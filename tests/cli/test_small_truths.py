"""Issue 41.6's smaller untruths, as the command line prints them: each message reads right on a
real file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from flopscope.core import read_report
from flopscope.core.store.run_store import Store
from flopscope.tui.presentation import format as fmt

from ..conftest import fixture_path
from ..helpers.cli import run_cli
from ..helpers.mutate import read_table
from ..helpers.profile import make_ncu
from ..helpers.raw_csv import partial_warp_sgemm, raw_kernel_time_s

SWEEP_HOME = (
    Path(__file__).parents[1]
    / "data"
    / "gpu"
    / "nvidia_h100_80gb_hbm3"
    / "flopscope_sweep"
    / "home"
)


def test_unknown_tensor_flops_read_right_without_a_cc_column(tmp_path):
    """A details CSV without its CC column, tensor instructions counted with no checked factor: the
    message once ended `for CC )`."""
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


def test_report_takes_a_stored_runs_name_or_id_as_open_does(tmp_path):
    """`report RUN` once said "no such file" for a run `open RUN`, `diff` and `check` take."""
    home = tmp_path / "home"
    path = fixture_path("t4_mlp_matadd_full.ncu-rep")
    store = Store(home / "flopscope.db")
    store.save(read_report(path), "matadd")
    store.close()
    from_file = json.loads(run_cli("report", path, "--json", home=home).stdout)["rows"]
    for ref in ("matadd", "1"):
        out = run_cli("report", ref, "--json", home=home)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["rows"] == from_file
    printed = run_cli("report", "matadd", home=home)
    assert (
        printed.returncode == 0
        and printed.stdout == run_cli("open", "matadd", "--no-tui", home=home).stdout
    )
    one_line = run_cli("report", "nosuch", home=home)
    assert one_line.returncode == 2 and "run nosuch: no such run in the store" in one_line.stderr


DAY = 86400.0


def stored_out_of_order(home) -> list[str]:
    """Three real runs stored in an order other than their capture times (as `import` keeps a run's
    own time): the names newest capture first."""
    store = Store(home / "flopscope.db")
    report = read_report(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    for name, day in (("middle", 2), ("oldest", 1), ("newest", 3)):
        store.save(report, name, created=1_760_000_000 + day * DAY)
    store.close()
    return ["newest", "middle", "oldest"]


def test_runs_lists_newest_first_as_the_app_does(tmp_path):
    """`runs --no-tui` listed by id, oldest first, while the Runs screen said "newest first"."""
    home = tmp_path / "home"
    newest_first = stored_out_of_order(home)
    listed = json.loads(run_cli("runs", "--json", home=home).stdout)
    assert [r["name"] for r in listed] == newest_first
    assert [r["created"] for r in listed] == sorted((r["created"] for r in listed), reverse=True)
    printed = run_cli("runs", "--no-tui", home=home)
    assert printed.stderr.endswith("3 run(s) in " + str(home / "flopscope.db") + ", newest first\n")
    table = printed.stdout.splitlines()
    rows = [
        next(n for n in newest_first if f" {n} " in line)
        for line in table
        if any(f" {n} " in line for n in newest_first)
    ]
    assert rows == newest_first


def test_a_plan_for_a_named_gpu_needs_no_ncu(tmp_path):
    """`profile --plan --gpu h100-sxm` was refused with "ncu not found", though a plan runs nothing:
    it plans, from the passes recorded on an H100, and says the profile itself will need ncu."""
    no_ncu = {"PATH": str(tmp_path / "empty-bin")}  # nothing to find there
    home = tmp_path / "home"
    out = run_cli(
        "profile", "--plan", "--gpu", "h100-sxm", "--", "python3", "train.py", home=home, env=no_ncu
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "plan for `python3 train.py` on localhost (h100-sxm); nothing was run"
    passes = next(line for line in lines if line.startswith("passes "))
    assert "recorded on an NVIDIA H100" in passes and "unknown" not in passes
    assert lines[-1].startswith(
        "ncu       not found here (--ncu ncu, searched PATH): the plan needs none, the profile"
    )
    profile = run_cli("profile", "--no-tui", "--", "python3", "train.py", home=home, env=no_ncu)
    # the profile does need it
    assert profile.returncode == 2 and "ncu not found on this machine" in profile.stderr
    with_ncu = run_cli(
        "profile",
        "--plan",
        "--gpu",
        "h100-sxm",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "true",
        home=home,
    )
    assert with_ncu.returncode == 0 and "not found" not in with_ncu.stdout


def test_import_stores_a_bare_report_file_as_a_new_run(tmp_path):
    """`import FILE` said "a file, not a run folder": a report with no run folder around it (the
    bundled demo, compressed; a CSV) is stored as a run named after the file, at ncu's capture time,
    once."""
    home = tmp_path / "home"
    demo = Path(__file__).parents[2] / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"
    csv_report = fixture_path("h100pcie_robocache_cmdline_details.csv")
    for path, name in (
        (demo, "train_transformer_bf16_bs8"),
        (csv_report, "h100pcie_robocache_cmdline_details"),
    ):
        out = run_cli("import", path, home=home)
        assert out.returncode == 0, out.stderr
        assert f"stored {path} as run {name}" in out.stderr
        from_file = json.loads(run_cli("report", path, "--json", home=home).stdout)
        stored = json.loads(run_cli("report", name, "--json", home=home).stdout)
        assert stored["rows"] == from_file["rows"]
        listed = {r["name"]: r for r in json.loads(run_cli("runs", "--json", home=home).stdout)}
        if from_file["meta"].get("captured"):  # the .ncu-rep says when ncu captured it: listed then
            assert listed[name]["created"] == from_file["meta"]["captured"]
    assert set(listed) == {"train_transformer_bf16_bs8", "h100pcie_robocache_cmdline_details"}
    again = run_cli("import", demo, home=home)
    assert (
        again.returncode == 2 and "already stored as run train_transformer_bf16_bs8" in again.stderr
    )


def test_diff_signs_its_time_change_as_its_totals_line_does(tmp_path):
    """The project's H100 sweep, batch 8 against 16 and back: ΔTime read `288 ns` either way, while
    the totals line said `+288 ns`; it is signed: B - A from ncu's raw pages in the run folders."""
    shutil.copytree(SWEEP_HOME, tmp_path / "home")
    runs = ("linear_h100-batch_size=8", "linear_h100-batch_size=16")
    times = [raw_kernel_time_s(SWEEP_HOME / "runs" / run / "raw.csv") for run in runs]
    for (a, b), (ta, tb) in ((runs, times), (runs[::-1], times[::-1])):
        out = run_cli("diff", a, b, "--no-tui", home=tmp_path / "home")
        assert out.returncode == 0, out.stderr
        change = f"{'+' if tb > ta else '-'}{fmt.seconds(abs(tb - ta))}"
        (row,) = [line for line in out.stdout.splitlines() if line.startswith("sm80_xmma_gemm")]
        assert f" {change} " in row  # the ΔTime cell
        assert f"({change})" in out.stdout  # the totals line
