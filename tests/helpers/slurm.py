"""A real private Slurm cluster for tests: munged, slurmctld and slurmd as the current user on
127.0.0.1, one node with 4 CPUs, everything (config, state, logs, munge key and socket) in one
folder. Debian's slurm-wlm 22.05 and munge 0.5; `.ci/run` installs them."""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SBIN = Path("/usr/sbin")  # the daemons: not on a non-root user's PATH
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")

CONF = """\
ClusterName=flopscope-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=sched_interval=1
SlurmdParameters=config_overrides
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=300
KillWait=2
InactiveLimit=0
NodeName=testnode NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=testnode Default=YES MaxTime=INFINITE State=UP
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SlurmCluster:
    folder: Path
    env: dict[str, str]  # SLURM_CONF for the client commands
    processes: list[subprocess.Popen]

    def jobs(self, *states: str) -> list[str]:
        """`squeue`'s lines (id and state) for this user's jobs, all states when none is named."""
        done = subprocess.run(
            [
                "squeue",
                "-h",
                "-u",
                getpass.getuser(),
                "-t",
                ",".join(states) or "all",
                "-o",
                "%i %T",
            ],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split("\n")[:-1]

    def stop(self) -> None:
        """Cancel every job and wait for them to end (a job's slurmstepd outlives a stopped slurmd),
        then stop the daemons."""
        subprocess.run(["scancel", "--user", getpass.getuser()], env=self.env, capture_output=True)
        deadline = time.monotonic() + 15
        # slurmctld gone: nothing to wait for
        with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
            while time.monotonic() < deadline and self.jobs(
                "PENDING", "CONFIGURING", "RUNNING", "COMPLETING"
            ):
                time.sleep(0.2)
        for proc in reversed(self.processes):
            proc.terminate()
        for proc in reversed(self.processes):
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start_slurm(folder: Path) -> SlurmCluster:
    """Start the cluster in FOLDER (keep its path short: the munge socket's path holds at most 108
    bytes), or skip the test with the reason."""
    missing = [d for d in DAEMONS if not (SBIN / d).exists()] + [
        c for c in CLIENTS if shutil.which(c) is None
    ]
    if missing:
        pytest.skip(
            f"Slurm is not installed ({', '.join(missing)} missing: apt-get install slurmctld"
            " slurmd slurm-client munge)"
        )
    for sub in ("state", "spool", "log", "munge"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "munge").chmod(0o700)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    socket_path = folder / "munge" / "munge.socket"
    processes = [
        subprocess.Popen(
            [
                SBIN / "munged",
                "--foreground",
                "--force",
                f"--socket={socket_path}",
                f"--key-file={key}",
                f"--pid-file={folder}/munge/munged.pid",
                f"--log-file={folder}/log/munged.log",
                f"--seed-file={folder}/munge/munged.seed",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    cluster = SlurmCluster(
        folder, {**os.environ, "SLURM_CONF": str(folder / "slurm.conf")}, processes
    )
    try:
        _wait(lambda: socket_path.exists(), "munged did not start", cluster)
        (folder / "slurm.conf").write_text(
            CONF.format(
                ctld_port=_free_port(), slurmd_port=_free_port(), user=getpass.getuser(), d=folder
            )
        )
        processes.append(
            subprocess.Popen(
                [SBIN / "slurmctld", "-D", "-f", folder / "slurm.conf"],
                env=cluster.env,
                stdout=(folder / "log" / "slurmctld.out").open("w"),
                stderr=subprocess.STDOUT,
            )
        )
        processes.append(
            subprocess.Popen(
                [SBIN / "slurmd", "-D", "-N", "testnode", "-f", folder / "slurm.conf"],
                env=cluster.env,
                stdout=(folder / "log" / "slurmd.out").open("w"),
                stderr=subprocess.STDOUT,
            )
        )
        _wait(
            lambda: (
                subprocess.run(
                    ["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=cluster.env
                ).stdout.strip()
                == "idle"
            ),
            "the node never became idle",
            cluster,
        )
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _wait(ready, what: str, cluster: SlurmCluster, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline or any(p.poll() is not None for p in cluster.processes):
            logs = sorted((cluster.folder / "log").glob("*"))
            tail = " | ".join(
                ln for f in logs for ln in f.read_text(errors="replace").splitlines()[-2:]
            )
            pytest.skip(f"the private Slurm cluster could not start: {what} ({tail[-300:]})")
        time.sleep(0.1)
