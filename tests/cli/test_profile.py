"""`flopscope profile` end to end: locally and over a real loopback SSH server, ncu replaced by the
stand-in (tests/ncu_standin/, which replays captured ncu output; see its PROVENANCE.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flopscope.core import read_report
from flopscope.core.ncu.progress import describe, parse_line, parse_lines

from ..conftest import fixture_path
from ..helpers.cli import CLI
from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import make_ncu, one_error_line, remote


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_profile_shows_the_kernels_of_the_real_report(tmp_path, request, where):
    ncu = make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep")
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    out = flopscope(
        "profile",
        *host,
        "--ncu",
        ncu,
        "--no-tui",
        "--json",
        "--name",
        "mw",
        "--",
        sys.executable,
        "-c",
        "print('hello from the app')",
        home=tmp_path / "home",
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    expected = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")).group("name")
    assert [r["kernel"] for r in doc["rows"]] == list(expected["kernel"])
    assert [r["flop"] for r in doc["rows"]] == pytest.approx(list(expected["flop"]))
    assert "kernel 0: set_halo_values_x_396_gpu (31 passes)" in out.stderr
    assert "hello from the app" in out.stderr
    run = Path(doc["meta"]["run_dir"])
    assert run.name == "mw"
    assert (run / "report.ncu-rep").read_bytes() == fixture_path(
        "v100_ncar_miniweather_fp64_full.ncu-rep"
    ).read_bytes()
    log = (run / "ncu.log").read_text()
    # ncu.log keeps ncu's lines as printed; the progress drops the tag
    assert "==PROF== Connected" in log
    for line in log.splitlines():
        if line.startswith("==PROF== ") and not line.startswith("==PROF== Profiling"):
            assert f"s] {line.removeprefix('==PROF== ')}\n" in out.stderr
    assert "==PROF==" not in out.stderr
    meta = json.loads((run / "run.json").read_text())
    assert meta["kernels_profiled"] == 5 and meta["ncu_exit"] == 0
    argv = meta["ncu_argv"]
    metrics = argv[argv.index("--metrics") + 1].split(",")
    assert (
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in metrics
        and "dram__bytes_read.sum" in metrics
    )
    # the stand-in imports with the real ncu
    if where == "local" and os.environ.get("FLOPSCOPE_REAL_NCU"):
        assert len(read_report(run / "raw.csv").kernels) == 5
    else:  # over ssh the stand-in has no real ncu (the session does not pass the variable on)
        assert "raw CSV page not saved" in out.stderr


@pytest.mark.parametrize("scenario", ["ok", "perm", "driver"])
def test_events_are_ncus_lines_without_its_tag(tmp_path, scenario):
    """Whatever the kind (connected, kernel, report, error...), an event's text is ncu's line
    without its `==PROF== `/`==ERROR== ` tag, and the line the CLI and the app show for it carries
    no tag either."""
    ncu = make_ncu(tmp_path, scenario=scenario)
    out = subprocess.run(
        [
            str(ncu),
            "--export",
            str(tmp_path / "r"),
            sys.executable,
            "-c",
            "import sys; sys.exit(3)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = out.stdout.splitlines()
    assert len(lines) >= 3 and all(re.match(r"==(PROF|ERROR)== ", line) for line in lines)
    events = [parse_line(line) for line in lines]
    assert [e.text for e in events] == [line.split("== ", 1)[1] for line in lines]
    assert not [d for d in map(describe, events) if "==" in d]
    assert events[0].kind == "connected" and describe(events[0]) == lines[0].removeprefix(
        "==PROF== "
    )
    if scenario == "ok":
        assert [e.kind for e in events] == [
            "connected",
            "kernel",
            "disconnected",
            "error",
            "report",
        ]
        assert describe(events[1]) == "kernel 0: matrix_addition2D (31 passes)"
        assert describe(events[3]) == "ncu error: The application returned an error code (3)."
        assert events[4].name == f"{tmp_path / 'r'}.ncu-rep"


def test_ncu_filters_pass_through_with_ncu_names(tmp_path):
    ncu = make_ncu(tmp_path)
    out = flopscope(
        "profile",
        "--ncu",
        ncu,
        "--no-tui",
        "-k",
        "regex:add",
        "--nvtx-include",
        "fwd/",
        "--launch-skip",
        "2",
        "--launch-count",
        "3",
        "--replay-mode",
        "application",
        "--clock-control",
        "none",
        "--target-processes",
        "all",
        "--metrics",
        "flops",
        "--ncu-args",
        "--section SpeedOfLight",
        "--name",
        "f",
        "--",
        "true",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    argv = json.loads((tmp_path / "runs" / "f" / "run.json").read_text())["ncu_argv"]
    joined = " ".join(argv)
    for part in (
        "--kernel-name regex:add",
        "--nvtx --nvtx-include fwd/",
        "--launch-skip 2",
        "--launch-count 3",
        "--replay-mode application",
        "--clock-control none",
        "--target-processes all",
        "--section SpeedOfLight true",
    ):
        assert part in joined
    assert "--" not in argv  # real ncu refuses it (tests/data/ncu_cli/dashdash.stream.txt)
    assert "dram__bytes_read.sum" not in joined  # the flops set leaves memory counters out
    # Tensor counters come from the target's catalogue (the stand-in replays GH100's): the aggregate
    # FP16 counter GH100 has, not Ampere's per-destination ones.
    metrics = argv[argv.index("--metrics") + 1].split(",")
    assert (
        "sm__ops_path_tensor_src_fp16.sum" in metrics
        and "sm__ops_path_tensor_src_fp8.sum" in metrics
    )
    assert not [m for m in metrics if "_dst_fp16" in m or "fp64_dst" in m]


def test_double_dash_is_what_real_ncu_refuses(tmp_path):
    """Why flopscope never passes `--`: the stand-in replays ncu 2024.1.1's answer to it."""
    ncu = make_ncu(tmp_path)
    out = subprocess.run(
        [str(ncu), "--metrics", "gpu__time_duration.sum", "--", "true"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1 and "option is ambiguous" in out.stdout


def test_without_a_catalogue_the_profile_runs_and_says_tensor_counters_are_missing(tmp_path):
    ncu = make_ncu(tmp_path, scenario="nocatalogue")
    out = flopscope("profile", "--ncu", ncu, "--no-tui", "--name", "n", "--", "true", home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (
        "tensor op counters not collected" in out.stderr
        and "Driver could not be loaded" in out.stderr
    )
    argv = json.loads((tmp_path / "runs" / "n" / "run.json").read_text())["ncu_argv"]
    assert "sm__ops_path_tensor" not in " ".join(argv)


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_the_catalogue_is_asked_with_the_profiles_env(tmp_path, request, where):
    """On a host with an A100 beside an H100, `--env CUDA_VISIBLE_DEVICES=1` profiles the A100: its
    counters are the ones to ask for. The stand-in answers the catalogue query as the GPU the
    variable selects."""
    standin = make_ncu(tmp_path)
    ncu = tmp_path / "ncu-two-gpus"
    ncu.write_text(
        '#!/bin/sh\ncase "$CUDA_VISIBLE_DEVICES" in 1) chip=ga100;; *) chip=gh100;; esac\n'
        f'exec {standin} --standin-chip "$chip" "$@"\n'
    )
    ncu.chmod(0o755)
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    for visible, chip in (("0", "gh100"), ("1", "ga100")):
        out = flopscope(
            "profile",
            *host,
            "--ncu",
            ncu,
            "--no-tui",
            "--env",
            f"CUDA_VISIBLE_DEVICES={visible}",
            "--name",
            chip,
            "--",
            "true",
            home=tmp_path / "home",
        )
        assert out.returncode == 0, out.stderr
        argv = json.loads((tmp_path / "home" / "runs" / chip / "run.json").read_text())["ncu_argv"]
        metrics = argv[argv.index("--metrics") + 1]
        # GH100 has only the FP16 aggregate; GA100 splits FP16 by accumulator type.
        assert ("src_fp16_dst_fp32.sum" in metrics) == (chip == "ga100"), metrics
        assert ("sm__ops_path_tensor_src_fp16.sum" in metrics) == (chip == "gh100"), metrics


HOSTILE = [
    "; touch {s}",
    "$(touch {s})",
    "`touch {s}`",
    "'\"; touch {s}; echo '",
    "a\nb; touch {s}",
    "&& touch {s} #",
]


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_hostile_values_stay_inert(tmp_path, request, where):
    sentinel = tmp_path / "SENTINEL"
    values = [v.format(s=sentinel) for v in HOSTILE]
    seen = tmp_path / "argv.json"
    cwd = tmp_path / "dir with 'quote' and $(touch SENTINEL_CWD); `touch SENTINEL_CWD`"
    cwd.mkdir()
    program = (
        "import json, os, sys; json.dump({'argv': sys.argv[1:], 'env': os.environ.get('HOSTILE'), "
        f"'cwd': os.getcwd()}}, open({str(seen)!r}, 'w'))"
    )
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    out = flopscope(
        "profile",
        *host,
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--env",
        f"HOSTILE={values[1]}",
        "--remote-cwd",
        cwd,
        "--",
        sys.executable,
        "-c",
        program,
        *values,
        home=tmp_path / "home",
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(seen.read_text())
    assert got["argv"] == values
    assert got["env"] == values[1]
    assert got["cwd"] == str(cwd)
    assert not sentinel.exists()
    assert not any((d / "SENTINEL_CWD").exists() for d in (tmp_path, cwd, Path.home(), Path.cwd()))


def test_env_name_must_be_a_name(tmp_path):
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--env",
        "A;touch x=1",
        "--",
        "true",
        home=tmp_path,
    )
    assert out.returncode == 2 and "not a valid environment variable name" in out.stderr


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_counter_permission_error_explains_the_fix(tmp_path, request, where):
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    out = flopscope(
        "profile",
        *host,
        "--ncu",
        make_ncu(tmp_path, scenario="perm"),
        "--no-tui",
        "--",
        "true",
        home=tmp_path,
    )
    line = one_error_line(out)
    assert "ERR_NVGPUCTRPERM" in line and "NVreg_RestrictProfilingToAdminUsers=0" in line
    assert "container" in line


def test_driver_mismatch_says_which_ncu_to_use(tmp_path):
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path, scenario="driver"),
        "--no-tui",
        "--",
        "sleep",
        "5",
        home=tmp_path,
    )
    line = one_error_line(out)
    assert "LibraryNotLoaded" in line and "do not match" in line and "--ncu PATH" in line


def test_unknown_metric_is_named(tmp_path):
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--metrics",
        "gpu__time_duration.sum,sm__ops_path_tensor_src_fp8_dst_fp32.sum",
        "--",
        "true",
        home=tmp_path,
    )
    line = one_error_line(out)
    assert "metric sm__ops_path_tensor_src_fp8_dst_fp32 does not exist" in line


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_ncu_not_found_says_where_it_looked(tmp_path, request, where):
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    out = flopscope(
        "profile", *host, "--ncu", "/nonexistent/ncu", "--no-tui", "--", "true", home=tmp_path
    )
    line = one_error_line(out)
    assert "--ncu" in line and "not found" in line


def test_failing_command_keeps_what_was_profiled_and_exits_1(tmp_path):
    """Before: exit 0, while `sweep` exits 1 for such a point: a script could not tell a crash from
    a run."""
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--",
        sys.executable,
        "-c",
        "import sys; sys.exit(3)",
        home=tmp_path,
    )
    assert out.returncode == 1, out.stderr
    assert "the command exited with code 3" in out.stderr
    assert "matrix_addition2D" in out.stdout
    [run] = json.loads(flopscope("runs", "--json", home=tmp_path).stdout)
    # the store remembers why to doubt it
    reopened = flopscope("open", run["name"], "--no-tui", home=tmp_path)
    assert "Warning: the command exited with code 3" in reopened.stdout, reopened.stdout


def test_unreachable_host_fails_fast_with_ssh_message(tmp_path, server):
    config = tmp_path / "cfg"
    closed = server.port + 1 if server.port < 65535 else server.port - 1
    config.write_text(server.config.read_text().replace(f"Port {server.port}", f"Port {closed}"))
    start = time.monotonic()
    out = flopscope(
        "profile",
        "--host",
        server.alias,
        "--ssh-config",
        config,
        "--connect-timeout",
        "3",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--",
        "true",
        home=tmp_path,
    )
    assert time.monotonic() - start < 15
    line = one_error_line(out)
    assert "cannot reach the host" in line and "Connection refused" in line


def test_auth_failure_is_one_line(tmp_path, server):
    config = tmp_path / "cfg"
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    text = server.config.read_text()
    config.write_text(
        "\n".join(
            ln if "IdentityFile" not in ln else f"  IdentityFile {other}"
            for ln in text.splitlines()
        )
        + "\n"
    )
    out = flopscope(
        "profile",
        "--host",
        server.alias,
        "--ssh-config",
        config,
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--",
        "true",
        home=tmp_path,
    )
    assert "Permission denied" in one_error_line(out)


def test_connection_lost_mid_run_is_reported_within_10_s(tmp_path, server):
    ncu = make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep", delay=3.0)
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [*CLI, "profile", *remote(server), "--ncu", ncu, "--no-tui", "--", "sleep", "60"],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "kernel 0:" in line:
            break
    assert server.drop_sessions() > 0
    dropped = time.monotonic()
    stderr = proc.stderr.read()
    rc = proc.wait(timeout=30)
    assert time.monotonic() - dropped <= 10
    assert rc == 2 and "Traceback" not in stderr
    assert "connection to gpubox lost after 1 kernel(s) profiled" in stderr


def test_profile_keeps_ncus_own_raw_page(tmp_path, real_ncu, monkeypatch):
    """The stand-in hands `--import` to the real ncu: the raw page flopscope saves reads like the
    report."""
    monkeypatch.setenv("FLOPSCOPE_REAL_NCU", real_ncu[-1])
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path, report="rtx4090_torch_linear_sgemm.ncu-rep"),
        "--metrics",
        "full",
        "--no-tui",
        "--name",
        "raw",
        "--",
        "true",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    run = tmp_path / "runs" / "raw"
    assert "raw CSV page not saved" not in out.stderr
    from_csv, from_rep = (
        read_report(run / "raw.csv").kernels,
        read_report(run / "report.ncu-rep").kernels,
    )
    assert list(from_csv["flop_fp32"]) == list(from_rep["flop_fp32"])  # per-opcode counts: exact


def test_an_ncu_without_instance_details_still_saves_the_raw_page(tmp_path, real_ncu, monkeypatch):
    """ncu 2022.3 refuses `--print-metric-instances details` (captured); flopscope asks again
    without it."""
    monkeypatch.setenv("FLOPSCOPE_REAL_NCU", real_ncu[-1])
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path, scenario="ncu2022"),
        "--metrics",
        "full",
        "--no-tui",
        "--name",
        "old",
        "--",
        "true",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "raw CSV page not saved" not in out.stderr
    assert len(read_report(tmp_path / "runs" / "old" / "raw.csv").kernels) == 1


# -- checks before anything runs, and a store that fails after ncu has finished
# ----------------------------------
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--", "--help"], "the command starts with '--help'"),
        (["--metrics", ",", "--", "true"], "--metrics: no metric names given"),
        (["--launch-count", "-1", "--", "true"], "argument --launch-count: -1 is below 1"),
        (["--launch-skip", "-2", "--", "true"], "argument --launch-skip: -2 is below 0"),
        (["--connect-timeout", "-5", "--", "true"], "argument --connect-timeout: -5 is below 1"),
        (
            ["--ncu-args", '"abc', "--", "true"],
            '--ncu-args "abc: cannot be split into arguments (No closing quotation)',
        ),
        (["--ncu", "", "--", "true"], "--ncu '': an empty path"),
        (
            ["--remote-cwd", "/nonexistent", "--", "true"],
            "--remote-cwd /nonexistent: no such folder on this machine",
        ),
        (
            ["--ncu", "/nonexistent/ncu", "--", "true"],
            "--ncu /nonexistent/ncu: ncu not found on this machine",
        ),
        # Before: ncu and the program ran, then `--gpu nosuch` was refused and the run folder left
        # unstored.
        (
            ["--gpu", "nosuch", "--", "true"],
            "--gpu nosuch: not in the GPU database; run `flopscope gpus`",
        ),
        # Before: each of these left an empty run folder that took the name (the next --name h was
        # h-1).
        (["--host=-bad", "--", "true"], "--host -bad: a host name cannot start with '-'"),
        (["--host", "", "--", "true"], "--host '': an empty host name"),
        (
            ["--host", "gpubox", "--ssh-config", "/nonexistent", "--", "true"],
            "--ssh-config /nonexistent: no such file",
        ),
        # Before: 300 letters blamed FLOPSCOPE_HOME, '' fell back to the default name, café was
        # stored as `caf`.
        (
            ["--name", "a" * 300, "--", "true"],
            (
                "a name of 300 characters is too long for its run folder; pass a shorter --name (at"
                " most 200 characters)"
            ),
        ),
        (["--name", "", "--", "true"], "--name '': an empty name"),
        (
            ["--name", "café", "--", "true"],
            (
                "--name café: a name is stored as typed, and so takes only letters, digits "
                "and . _ = - (not first); e.g. --name caf"
            ),
        ),
        (["--name", "a/b", "--", "true"], "--name a/b: a name is stored as typed"),
        (["--name", "x; touch SENTINEL", "--", "true"], "e.g. --name x_touch_SENTINEL"),
        # Before: passed to ncu, which wrote the report elsewhere, printed tables or refused a
        # repeated option.
        (
            ["--ncu-args", "--export /tmp/elsewhere", "--", "true"],
            (
                "--ncu-args --export: flopscope sets ncu's --export itself; leave it out: "
                "the report goes to the run folder"
            ),
        ),
        (["--ncu-args", "-o /tmp/elsewhere", "--", "true"], "flopscope sets ncu's --export itself"),
        (
            ["--ncu-args=--export=/tmp/elsewhere", "--", "true"],
            "flopscope sets ncu's --export itself",
        ),
        (["--ncu-args=-f", "--", "true"], "flopscope sets ncu's --force-overwrite itself"),
        (
            ["--ncu-args=--csv", "--", "true"],
            (
                "--ncu-args --csv: flopscope sets ncu's --csv itself; leave it out: flopscope"
                " prints the report itself"
            ),
        ),
        (["--ncu-args", "--page raw", "--", "true"], "flopscope sets ncu's --page itself"),
        (
            ["--ncu-args", "--print-summary per-kernel", "--", "true"],
            "flopscope sets ncu's --print-summary itself",
        ),
        (["--ncu-args", "--log-file /tmp/l", "--", "true"], "keeps it in the run folder's ncu.log"),
        (
            ["--ncu-args", "--metrics gpu__time_duration.sum", "--", "true"],
            "flopscope's --metrics roofline|flops|",
        ),
        (["--ncu-args", "--set full", "--", "true"], "flopscope's --metrics full (ncu's full set)"),
        (
            ["-k", "regex:gemm", "--ncu-args=-k regex:conv", "--", "true"],
            (
                "--ncu-args -k: flopscope's --kernel-name is given too, and flopscope passes it to"
                " ncu; pass it once"
            ),
        ),
        (
            ["--launch-count", "1", "--ncu-args=-c5", "--", "true"],
            "--ncu-args -c5: flopscope's --launch-count is given",
        ),
        # ncu takes an option's unambiguous beginning for it (`--expo` is --export): refused as the
        # whole name is.
        (
            ["--ncu-args", "--expo /tmp/elsewhere", "--", "true"],
            "--ncu-args --expo: flopscope sets ncu's --export itself",
        ),
        (
            ["--ncu-args=--metr=gpu__time_duration.sum", "--", "true"],
            "flopscope sets ncu's --metrics itself",
        ),
        (
            ["--nvtx-include", "fwd/", "--ncu-args", "--nvtx-inc bwd/", "--", "true"],
            "--ncu-args --nvtx-inc: flopscope's --nvtx-include is given too",
        ),
    ],
)
def test_a_refused_invocation_leaves_nothing_behind(tmp_path, args, needle):
    """Before: a run folder was made and "profiling on ..." printed before the error (or a
    traceback)."""
    ncu = [] if "--ncu" in args else ["--ncu", make_ncu(tmp_path)]
    out = flopscope("profile", *ncu, "--no-tui", "--name", "x", *args, home=tmp_path / "home")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.stderr
    assert not (tmp_path / "home" / "runs").exists()


def test_an_option_named_whole_or_ambiguous_is_ncus_to_judge(tmp_path):
    """`--nvtx` is an ncu option of its own, not the beginning of --nvtx-include; `--c` begins eight
    options, which ncu refuses by itself. Neither is flopscope's to refuse."""
    for given in ("--nvtx", "--c"):
        out = flopscope(
            "profile",
            "--ncu",
            make_ncu(tmp_path),
            "--no-tui",
            "--json",
            "--nvtx-include",
            "fwd/",
            f"--ncu-args={given}",
            "--name",
            f"n{len(given)}",
            "--",
            "true",
            home=tmp_path,
        )
        assert "flopscope sets" not in out.stderr and "is given too" not in out.stderr, out.stderr


def test_ncu_options_flopscope_does_not_set_still_pass_through(tmp_path):
    """The refusal is of what flopscope sets: -k alone in --ncu-args (no flopscope -k) reaches
    ncu."""
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--json",
        "--ncu-args=-k regex:mat -c 1",
        "--name",
        "k",
        "--",
        "true",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    argv = json.loads((tmp_path / "runs" / "k" / "run.json").read_text())["ncu_argv"]
    assert argv[argv.index("-k") : argv.index("-k") + 4] == ["-k", "regex:mat", "-c", "1"]


def test_gpu_unknown_is_refused_as_report_refuses_it(tmp_path):
    """One message for one mistake, whichever command it is given to."""
    report = flopscope(
        "report", fixture_path("t4_mlp_matadd_full.ncu-rep"), "--gpu", "nosuch", home=tmp_path
    )
    profiled = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--gpu",
        "nosuch",
        "--",
        "true",
        home=tmp_path,
    )
    assert report.returncode == profiled.returncode == 2
    assert profiled.stderr == report.stderr and len(profiled.stderr.splitlines()) == 1, (
        profiled.stderr
    )


def test_gpu_of_another_compute_capability_keeps_the_run_judged_by_its_own_gpu(tmp_path):
    """Before: ncu and the program ran, then `--gpu a100-pcie-80gb` (CC 8.0) on a T4 (CC 7.5) exited
    2, the report left in an unstored run folder the message did not name. Now the run is stored,
    judged by the GPU it ran on, a warning says so and how to judge it again, and the exit is 1
    (stored with a warning)."""
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--json",
        "--gpu",
        "a100-pcie-80gb",
        "--name",
        "cc",
        "--",
        "true",
        home=tmp_path,
    )
    assert out.returncode == 1, out.stderr
    warning = next(ln for ln in out.stderr.splitlines() if "warning: --gpu" in ln)
    assert (
        "--gpu a100-pcie-80gb: NVIDIA A100 80GB PCIe is compute capability 8.0, but the report's"
        " launches ran on CC 7.5; judged against its own GPU's ceilings instead (Tesla T4)"
        in warning
    ), warning
    assert "`flopscope open RUN --gpu NAME` judges it again (GPUs of CC 7.5: t4)" in warning
    assert json.loads(out.stdout)["meta"]["gpu_database_key"] == "t4"
    assert "stored as run cc" in out.stderr
    stored = json.loads(flopscope("open", "cc", "--json", home=tmp_path).stdout)
    assert stored["meta"]["gpu_database_key"] == "t4" and stored["meta"]["gpu_source"] == "report"


def test_a_failure_without_a_report_leaves_no_run_folder(tmp_path):
    """Before: an unreachable host or ncu refusing to profile left an empty runs/NAME, so the next
    `--name NAME` became NAME-1."""
    home = tmp_path / "home"
    unreachable = flopscope(
        "profile",
        "--host",
        "nosuchhost.invalid",
        "--connect-timeout",
        "3",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--name",
        "h",
        "--",
        "true",
        home=home,
    )
    assert "--host nosuchhost.invalid: cannot reach the host" in one_error_line(unreachable)
    refused = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path, scenario="perm"),
        "--no-tui",
        "--name",
        "h",
        "--",
        "true",
        home=home,
    )
    assert "ERR_NVGPUCTRPERM" in one_error_line(refused)
    assert list((home / "runs").iterdir()) == []
    out = flopscope(
        "profile", "--ncu", make_ncu(tmp_path), "--no-tui", "--name", "h", "--", "true", home=home
    )
    assert out.returncode == 0 and "stored as run h " in out.stderr, out.stderr


def test_a_run_name_is_stored_as_typed_or_refused_by_every_command(tmp_path):
    """Before: `profile --name a/b` stored `a_b` while `import --name a/b` kept the slash, and
    `import --name ''` took the folder's name."""
    out = flopscope(
        "profile",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--name",
        "Run.2_b=1-x",
        "--",
        "true",
        home=tmp_path,
    )
    assert (
        out.returncode == 0 and (tmp_path / "runs" / "Run.2_b=1-x" / "report.ncu-rep").exists()
    ), out.stderr
    folder = tmp_path / "my run"
    folder.mkdir()
    (folder / "report.ncu-rep").write_bytes(fixture_path("t4_mlp_matadd_full.ncu-rep").read_bytes())
    for name, needle in (
        ("a/b", "--name a/b: a name is stored as typed"),
        ("", "--name '': an empty name"),
    ):
        assert needle in one_error_line(flopscope("import", folder, "--name", name, home=tmp_path))
    assert f"{folder} (its name): a name is stored as typed" in one_error_line(
        flopscope("import", folder, home=tmp_path)
    )
    assert flopscope("import", folder, "--name", "my_run", home=tmp_path).returncode == 0
    names = [r["name"] for r in json.loads(flopscope("runs", "--json", home=tmp_path).stdout)]
    assert sorted(names) == ["Run.2_b=1-x", "my_run"]


def full_disk_store(monkeypatch) -> None:
    """Every store connection as on a full disk: SQLite's page limit at the database's current
    size."""
    from flopscope.core.store.run_store import Store

    opened = Store.__init__

    def init(self, *args, **kwargs) -> None:
        opened(self, *args, **kwargs)
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        self.db.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(Store, "__init__", init)


def test_a_store_full_after_profiling_keeps_the_run_and_says_how_to_store_it(
    tmp_path, monkeypatch, capsys
):
    """Before: `sqlite3.OperationalError: database or disk is full` traceback, the profile's report
    unseen."""
    from flopscope.tui.cli import main as cli

    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    with monkeypatch.context() as patch:
        full_disk_store(patch)
        code = cli.main(
            [
                "profile",
                "--ncu",
                str(make_ncu(tmp_path)),
                "--no-tui",
                "--json",
                "--name",
                "full",
                "--",
                "true",
            ]
        )
    out = capsys.readouterr()
    assert code == 2 and "Traceback" not in out.err
    # the profile still shows
    assert [r["kernel"] for r in json.loads(out.out)["rows"]] == ["matrix_addition2D"]
    run = tmp_path / "runs" / "full"
    line = next(ln for ln in out.err.splitlines() if "disk is full" in ln)
    assert "cannot store run full: the disk is full" in line and f"`flopscope import {run}`" in line
    assert f"`flopscope open {run / 'report.ncu-rep'}`" in line and "move it aside" not in line
    assert (run / "report.ncu-rep").read_bytes() == fixture_path(
        "t4_mlp_matadd_full.ncu-rep"
    ).read_bytes()
    # room again: the run goes in under its folder's name
    assert cli.main(["import", str(run)]) == 0
    assert cli.main(["runs", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["host"], r["launches"]) for r in listed] == [("full", "localhost", 1)]


def test_an_ncu_line_glued_to_unfinished_program_output_is_still_ncus():
    """A progress bar redrawn with `\\r` (tqdm) or a block-buffered chunk cut mid-line leaves the
    line open, and ncu's next line lands on it: the program's part stays output, ncu's part is its
    event."""
    glued = parse_lines(
        '\r epoch 1:  50%|#####     |==PROF== Profiling "gemm" - 3: 0%....50%....100% - 7 passes\n'
    )
    assert (glued[0].kind, glued[0].text) == ("output", "\r epoch 1:  50%|#####     |")
    assert (glued[1].kind, glued[1].name, glued[1].index, glued[1].passes) == (
        "kernel",
        "gemm",
        3,
        7,
    )
    rc = parse_lines("lin==ERROR== The application returned an error code (3).")
    assert [e.kind for e in rc] == ["output", "error"] and rc[1].text.endswith("error code (3).")
    assert [e.kind for e in parse_lines("==PROF== Disconnected from process 7\n")] == [
        "disconnected"
    ]
    assert [(e.kind, e.text) for e in parse_lines("loss 0.31 == PROF == fine\n")] == [
        ("output", "loss 0.31 == PROF == fine")
    ]


def test_kernels_profiled_while_the_program_leaves_its_line_open_are_all_counted(tmp_path):
    """End to end: the program prints a progress line without ending it and keeps running while ncu
    profiles: every kernel ncu names is counted, and the program's text is its output."""
    from flopscope.core.ncu.command import ProfileOptions
    from flopscope.core.profiling.profiler import profile
    from flopscope.core.profiling.transport import LocalTransport

    opts = ProfileOptions(
        command=["sh", "-c", "printf 'epoch 1: 10%%'; sleep 2"],
        ncu=str(make_ncu(tmp_path, "v100_ncar_miniweather_fp64_full.ncu-rep", delay=0.2)),
    )
    (tmp_path / "run").mkdir()
    result = profile(opts, LocalTransport(), tmp_path / "run")
    kernels = read_report(fixture_path("v100_ncar_miniweather_fp64_full.ncu-rep")).kernels
    # glued to ncu's next line, as it came: `Connected` or a `Profiling` line, as the two processes
    # were timed
    assert "epoch 1: 10%==PROF== " in (tmp_path / "run" / "ncu.log").read_text()
    assert result.kernels_profiled == len(kernels)
    assert [e.text for e in result.events if e.kind == "output"] == ["epoch 1: 10%"]
