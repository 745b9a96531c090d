"""`flopscope sweep --slurm` on a real private one-node Slurm cluster (tests/helpers/slurm.py), each
point's ncu the stand-in: points run as jobs and are stored as SSH sweep points are, with the same
analysis; their states show as they change; --resume submits only the points not stored; a stopped
sweep leaves no job in the queue; hostile values run nothing."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ..helpers.cli import CLI
from ..helpers.profile import make_ncu
from ..helpers.slurm import start_slurm
from ..helpers.sshd import start_sshd
from ..helpers.sweep import cli

ACTIVE = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = start_slurm(tmp_path_factory.mktemp("slurm"))
    yield cluster
    cluster.stop()


# sbatch reads %j in --output as the job id: the job's output file must still be found
HOME = "home%j"


def _env(cluster, tmp_path) -> dict:
    """The cluster's SLURM_CONF, a HOME of the test's own (the jobs' work folders are made there),
    fast polls."""
    (tmp_path / HOME).mkdir(exist_ok=True)
    return {
        "SLURM_CONF": cluster.env["SLURM_CONF"],
        "HOME": str(tmp_path / HOME),
        "FLOPSCOPE_SLURM_POLL": "0.1",
    }


def _runs(tmp_path, sweep: str) -> list[dict]:
    return json.loads(cli("runs", "--sweep", sweep, "--json", home=tmp_path / "store").stdout)


def test_points_run_as_jobs_stored_and_analysed_as_a_local_sweep_and_resume_submits_only_the_rest(
    cluster, tmp_path
):
    ncu = make_ncu(tmp_path, delay=1.0)  # each job runs long enough for a poll to see it running
    env = _env(cluster, tmp_path)
    before = len(cluster.jobs())
    out = cli(
        "sweep",
        "--slurm",
        "--partition",
        "debug",
        "--time",
        "5:00",
        "--param",
        "n=1,2",
        "--ncu",
        ncu,
        "--sweep-name",
        "onslurm",
        "--json",
        "--",
        "echo",
        "{n}",
        home=tmp_path / "store",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "2 of 2 point(s) stored" in out.stderr
    for n in (1, 2):  # each point's job said it was running, then that it completed, as it happened
        running = re.search(rf"^    n={n}: job (\d+) running on testnode$", out.stderr, re.M)
        assert running, out.stderr
        assert re.search(
            rf"^    n={n}: job {running.group(1)} completed$", out.stderr[running.end() :], re.M
        )
    points = json.loads(out.stdout)["runs"]
    assert sorted(r["params"]["n"] for r in points) == ["1", "2"] and {
        r["host"] for r in points
    } == {"slurm"}
    assert {r["status"] for r in points} == {"stored"}
    assert len(cluster.jobs("COMPLETED")) >= 2 and len(cluster.jobs()) == before + 2
    assert not list((tmp_path / HOME / ".cache" / "flopscope").iterdir())  # work folders removed

    local = cli(
        "sweep",
        "--param",
        "n=1,2",
        "--ncu",
        ncu,
        "--sweep-name",
        "localsweep",
        "--json",
        "--",
        "echo",
        "{n}",
        home=tmp_path / "store",
    )
    assert local.returncode == 0, local.stderr
    on_slurm = json.loads(out.stdout)["analyses"]
    here = json.loads(
        json.dumps(json.loads(local.stdout)["analyses"]).replace("localsweep", "onslurm")
    )
    # kernel groups come in the order the points were stored: jobs end in any
    for analysis in on_slurm + here:
        analysis["groups"].sort(key=lambda g: (g["n"], g["kernel"]))
    # same points, fits and findings as a sweep profiled here
    assert on_slurm == here and on_slurm[0]["points"]

    resumed = cli(
        "sweep",
        "--slurm",
        "--partition",
        "debug",
        "--param",
        "n=1,2,3",
        "--ncu",
        ncu,
        "--sweep-name",
        "onslurm",
        "--resume",
        "--",
        "echo",
        "{n}",
        home=tmp_path / "store",
        env=env,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.count("already stored, skipped") == 2
    assert len(cluster.jobs()) == before + 3  # one job more: the point not stored yet
    assert sorted(r["params"]["n"] for r in _runs(tmp_path, "onslurm")) == ["1", "2", "3"]


def test_jobs_are_submitted_on_a_login_node_over_ssh(cluster, tmp_path):
    login = start_sshd(
        tmp_path / "sshd",
        alias="login",
        set_env={
            "SLURM_CONF": cluster.env["SLURM_CONF"],
            "FLOPSCOPE_REAL_NCU": os.environ.get("FLOPSCOPE_REAL_NCU", ""),
        },
    )
    try:
        out = cli(
            "sweep",
            "--slurm",
            "--host",
            "login",
            "--ssh-config",
            login.config,
            "--param",
            "n=1,2",
            "--ncu",
            # a job that ends between two reads over SSH shows no state before
            make_ncu(tmp_path, delay=3.0),
            "--sweep-name",
            "vialogin",
            "--",
            "echo",
            "{n}",
            home=tmp_path / "store",
            env={"SLURM_CONF": "/nonexistent", "FLOPSCOPE_SLURM_POLL": "0.1"},
        )
    finally:
        login.stop()
    assert "2 of 2 point(s) stored" in out.stderr, out.stderr
    for n in (1, 2):  # each point's state, read over SSH as it changed
        assert re.search(rf"^    n={n}: job \d+ running on testnode$", out.stderr, re.M), out.stderr
        assert re.search(rf"^    n={n}: job \d+ completed$", out.stderr, re.M), out.stderr
    stored = _runs(tmp_path, "vialogin")
    assert sorted(r["params"]["n"] for r in stored) == ["1", "2"] and {
        r["host"] for r in stored
    } == {"slurm@login"}


def test_a_stopped_sweep_cancels_its_jobs(cluster, tmp_path):
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path / "store"), **_env(cluster, tmp_path)}
    proc = subprocess.Popen(
        [
            *CLI,
            "sweep",
            "--slurm",
            "--param",
            "n=40,41,42",
            "--ncu",
            make_ncu(tmp_path),
            "--sweep-name",
            "stopped",
            "--no-tui",
            "--",
            "sleep",
            "{n}",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    seen = []
    for line in proc.stderr:  # stopped once a job runs
        seen.append(line)
        if "running on" in line:
            break
    assert cluster.jobs(*ACTIVE), "".join(seen)
    proc.send_signal(signal.SIGTERM)
    rest = proc.stderr.read()
    assert proc.wait(30) != 0
    assert "stopped" in rest and "Traceback" not in rest, rest
    # scancel'ed, not left to sleep on (40 s): ended well within that, as cancelled (flopscope
    # does not wait for the job to end: it may be signalled or completing a moment longer)
    deadline = time.monotonic() + 20
    while (cluster.jobs(*ACTIVE, "SIGNALING") or not cluster.jobs("CANCELLED")) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.2)
    assert cluster.jobs(*ACTIVE) == [] and cluster.jobs("CANCELLED"), cluster.jobs()
    listed = cli("runs", "--json", home=tmp_path / "store")
    # nothing half-stored
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr


def test_hostile_values_run_nothing(cluster, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    env = _env(cluster, tmp_path)
    before = len(cluster.jobs())
    hostile = f"x;$(touch {sentinel})\n`touch {sentinel}`"
    out = cli(
        "sweep",
        "--slurm",
        "--partition",
        hostile,
        "--time",
        hostile,
        "--gres",
        hostile,
        "--param",
        "n=1",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "echo",
        "{n}",
        home=tmp_path / "store",
        env=env,
    )
    # (no accounts here: any --account goes)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith("flopscope: --slurm: sbatch on this machine refused the job"), (
        out.stderr
    )
    assert len(cluster.jobs()) == before  # refused before any job was submitted
    seen = tmp_path / "seen.txt"
    program = f"import sys; open({str(seen)!r}, 'a').write(sys.argv[1] + '\\n')"
    value = f"$(touch {sentinel});`touch {sentinel}`"
    out = cli(
        "sweep",
        "--slurm",
        "--account",
        hostile,
        "--sbatch-args",
        f"--comment='{hostile}'",
        "--param",
        f"v={value},'; touch {sentinel}'",
        "--ncu",
        make_ncu(tmp_path),
        "--remote-cwd",
        str(tmp_path),
        "--env",
        f"X=$(touch {sentinel})",
        "--",
        sys.executable,
        "-c",
        program,
        "{v}",
        home=tmp_path / "store",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert sorted(seen.read_text().splitlines()) == sorted([value, f"'; touch {sentinel}'"])
    assert not sentinel.exists()


def test_a_job_whose_program_fails_is_failed_and_its_point_warned_as_here(cluster, tmp_path):
    out = cli(
        "sweep",
        "--slurm",
        "--param",
        "code=3",
        "--ncu",
        make_ncu(tmp_path),
        "--",
        "sh",
        "-c",
        "exit {code}",
        home=tmp_path / "store",
        env=_env(cluster, tmp_path),
    )
    assert out.returncode == 1, out.stderr  # stored with a warning, as a profile here
    # ncu exited 1 in its job
    assert re.search(r"^    code=3: job \d+ failed$", out.stderr, re.M), out.stderr
    # among the point's warnings (the first of them, unless ncu's import failed too: no real ncu
    # here)
    stored = next(line for line in out.stderr.splitlines() if "code=3 on slurm: stored as" in line)
    assert "the command exited with code 3" in stored, out.stderr


def test_slurm_options_without_slurm_and_two_login_nodes_are_refused(tmp_path):
    out = cli("sweep", "--partition", "gpu", "--param", "n=1", "--", "echo", "{n}", home=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith(
        "flopscope: --partition: is an sbatch option"
    ), out.stderr
    out = cli(
        "sweep",
        "--slurm",
        "--host",
        "a",
        "--host",
        "b",
        "--param",
        "n=1",
        "--",
        "echo",
        "{n}",
        home=tmp_path,
    )
    assert out.returncode == 2 and "pass --host once" in out.stderr, out.stderr


def test_the_app_shows_each_jobs_state_and_q_cancels_the_jobs(cluster, tmp_path):
    """`flopscope sweep --slurm` in a real terminal: the live screen shows a point's job running on
    the node, `q` stops the sweep as Ctrl-C does (exit 130, the --resume line) and no job is left in
    the queue."""
    import shlex
    import shutil
    import time

    from ..helpers.tmux import Tmux

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    tmux, status = Tmux(), tmp_path / "exit"
    env = {
        "FLOPSCOPE_HOME": str(tmp_path / "store"),
        **_env(cluster, tmp_path),
        "TERM": "xterm-256color",
    }
    command = (
        shlex.join(
            [
                "env",
                *(f"{k}={v}" for k, v in env.items()),
                *CLI,
                "sweep",
                "--slurm",
                "--param",
                "n=40,41,42",
                "--ncu",
                str(make_ncu(tmp_path)),
                "--sweep-name",
                "livestop",
                "--",
                "sleep",
                "{n}",
            ]
        )
        + f"; echo $? > {shlex.quote(str(status))}; sleep 30"
    )
    tmux("new-session", "-d", "-s", "app", "-x", "120", "-y", "30", command)
    try:
        shown = tmux.wait_for("running on", timeout=60)
        assert "sweep livestop: 3 point(s)" in shown and re.search(
            r"n=4\d +slurm +running on \S+ \(job \d+\)", shown
        )
        assert cluster.jobs(*ACTIVE)
        tmux("send-keys", "-t", "app", "q")
        deadline = time.monotonic() + 60
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.read_text().strip() == "130"
        said = "".join(tmux.wait_for("stopped").splitlines())
    finally:
        tmux("kill-server")
    assert (
        "flopscope: sweep livestop stopped; `flopscope sweep --resume --sweep-name livestop ...`"
        in said
    )
    assert cluster.jobs(*ACTIVE) == []  # scancel'ed, not left to sleep on
    listed = cli("runs", "--json", home=tmp_path / "store")
    # nothing half-stored
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr


TIMED_PROGRAM = """
import os, sys, torch
from torch import nn

class Recorder:
    def range_push(self, name): pass
    def range_pop(self): pass
    def range_start(self, name): return 1
    def range_end(self, range_id): pass

torch.cuda.nvtx = Recorder()
# which run this is: the timing run is told where to write its step times
with open(sys.argv[1], "a") as log:
    log.write("timed\\n" if os.environ.get("FLOPSCOPE_STEP_TIMES") else "profiled\\n")
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    model(torch.ones(3, 4)).sum().backward()
    opt.step()
"""


def test_modules_timing_run_is_a_job_of_its_own_and_its_step_times_are_stored(cluster, tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not installed")
    script, runs = tmp_path / "train.py", tmp_path / "runs.log"
    script.write_text(TIMED_PROGRAM)
    out = cli(
        "sweep", "--slurm", "--partition", "debug", "--time", "5:00", "--param", "n=1", "--modules",
        "--ncu", make_ncu(tmp_path), "--sweep-name", "timed", "--json",
        "--", sys.executable, str(script), str(runs), "{n}",
        home=tmp_path / "store", env=_env(cluster, tmp_path),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert runs.read_text().splitlines() == ["profiled", "timed"]
    folder = next((tmp_path / "store" / "runs").iterdir())
    steps = json.loads((folder / "timing.json").read_text())["steps"]
    assert [s["step"] for s in steps] == [1, 2] and all(0 < s["wall_s"] < 60 for s in steps)
