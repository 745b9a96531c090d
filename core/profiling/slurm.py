"""Sweep points as Slurm jobs (`flopscope sweep --slurm`): a transport whose `popen` submits the ncu
command line as a batch job through the transport it wraps, this machine or a login node over SSH
(`--host`).

Everything but the job itself runs where sbatch runs: the work folder, reading the job's output,
copying the report back, `ncu --import`, and the checks before a profile. So the work folder is made
in the home folder there, which a cluster's compute nodes share (a node's /tmp is its own). The
command line reaches the job's shell through `sbatch --wrap`, quoted with shlex.join; sbatch's own
options are single arguments (`--partition=VALUE`), so no value given to flopscope runs anything.
The job's state comes from `scontrol` (sacct needs an accounting database many clusters lack), and
stopping it is `scancel`."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..common.errors import FlopscopeError
from .transport import (
    JobState,
    Transport,
    env_argv,
    refuse_when_stopping,
    stopped_running,
    stopping,
    track,
    untrack,
)

# Where a job is not over yet; every other state (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL,
# OUT_OF_MEMORY, PREEMPTED, ...) is final.
# fmt: off
ACTIVE = {
    "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "RESIZING",
    "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT", "RESV_DEL_HOLD",
}
# fmt: on
# jobs a sweep keeps submitted at once: the scheduler queues them, flopscope polls each
JOBS_AT_ONCE = 16
# scontrol failures in a row (the login node or slurmctld gone) after which the job counts as lost
GIVE_UP = 30
WORKDIR_SCRIPT = (
    'mkdir -p "$HOME/.cache/flopscope" && exec mktemp -d "$HOME/.cache/flopscope/slurm.XXXXXX"'
)


def poll_seconds() -> float:
    """How often a job's state and output are read: FLOPSCOPE_SLURM_POLL seconds (default 2:
    scontrol is a question to the cluster's controller, which many users share)."""
    try:
        return max(0.05, float(os.environ.get("FLOPSCOPE_SLURM_POLL", "2")))
    except ValueError:
        return 2.0


@dataclass(frozen=True)
class SlurmOptions:
    """sbatch's options for every point's job; None leaves the cluster's default."""

    partition: str | None = None
    gres: str | None = None
    time: str | None = None
    account: str | None = None
    extra: list[str] = field(default_factory=list)  # --sbatch-args, split like a shell would

    def sbatch_args(self) -> list[str]:
        given = {
            "partition": self.partition,
            "gres": self.gres,
            "time": self.time,
            "account": self.account,
        }
        return [f"--{name}={value}" for name, value in given.items() if value is not None] + list(
            self.extra
        )


class SlurmTransport:
    """A transport for `core.profiler.profile`: each `popen` is one batch job; the rest goes to
    `base`. One profile at a time, as every transport; a sweep makes one per job it keeps in the
    queue at once."""

    def __init__(self, base: Transport, options: SlurmOptions) -> None:
        self.base = base
        self.options = options
        self.host = "slurm" if base.host == "localhost" else f"slurm@{base.host}"
        self._refused: FlopscopeError | None = None
        self._workdir: str | None = None

    def connect(self) -> None:
        """The login node answers and takes these options: `sbatch --test-only` checks the
        partition, account, time and gres without submitting anything. Asked once."""
        if self._refused is not None:
            raise self._refused
        self.base.connect()
        done = self.base.output(
            ["sbatch", "--test-only", *self.options.sbatch_args(), "--wrap", "true"]
        )
        if done.returncode != 0:
            where = "this machine" if self.base.host == "localhost" else self.base.host
            self._refused = (
                FlopscopeError(
                    "--slurm",
                    f"sbatch not found on {where}",
                    "run flopscope where Slurm's commands are, or on a login node with --host"
                    " LOGIN",
                )
                if done.returncode == 127
                else FlopscopeError(
                    "--slurm",
                    f"sbatch on {where} refused the job: {_last_line(done.stderr or done.stdout)}",
                    "check --partition, --gres, --time and --account (`sinfo` lists the"
                    " partitions)",
                )
            )
            raise self._refused

    def output(
        self, argv: list[str], env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.base.output(argv, env)

    def make_workdir(self) -> str:
        done = self.base.output(["sh", "-c", WORKDIR_SCRIPT])
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise FlopscopeError(
                f"{self.host}: ~/.cache/flopscope",
                f"cannot make a work folder ({_last_line(done.stderr) or 'no output'})",
                "check the home folder is writable",
            )
        self._workdir = lines[-1]
        return self._workdir

    def popen(
        self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None
    ) -> SlurmJob:
        """Submit `argv` (in `cwd`, with `env`) as a batch job writing its output to the work
        folder."""
        log = f"{self._workdir or self.make_workdir()}/job.log"
        script = (
            f"cd -- {shlex.quote(cwd)} || exit 125\n" if cwd else ""
        ) + f"exec {shlex.join([*env_argv(env or {}), *argv])}"
        refuse_when_stopping()
        # sbatch reads %j, %N, ... in --output as patterns; %% is a literal %
        done = self.base.output(
            [
                "sbatch",
                "--parsable",
                "--job-name=flopscope",
                f"--output={log.replace('%', '%%')}",
                *self.options.sbatch_args(),
                "--wrap",
                script,
            ]
        )
        job = done.stdout.strip().split(";")[0]
        if done.returncode != 0 or not job.isdigit():
            raise FlopscopeError(
                "sbatch",
                _last_line(done.stderr or done.stdout) or f"exited {done.returncode}",
                "check --partition, --gres, --time and --account (`sinfo` lists the partitions)",
            )
        submitted = SlurmJob(self.base, job, log)
        if stopping():  # stopped while sbatch ran: stop_all did not see this job
            submitted.terminate()
        return submitted

    def fetch(self, remote: str, local: Path) -> bool:
        return self.base.fetch(remote, local)

    def remove(self, workdir: str) -> None:
        self.base.remove(workdir)
        self._workdir = None

    def close(self) -> None:
        """The base transport is the sweep's, shared by all its jobs: it closes it."""


class SlurmJob:
    """A submitted job as `transport.Job` is a process: its output lines as they are written, its
    exit status, `terminate()` (scancel). `on_state` hears each change of state (queued, running,
    done)."""

    def __init__(self, base: Transport, job: str, log: str) -> None:
        self.base, self.job, self.log = base, job, log
        self.on_state: Callable[[JobState], None] = lambda state: None
        self.connection_lost = False
        self._status: int | None = None
        self._seen: JobState | None = None
        self._failures = 0
        self._lines = 0  # whole lines of the log already handed out
        track(self)  # so that stop_all (Ctrl-C, SIGTERM) cancels it

    @property
    def stdout(self) -> Iterator[str]:
        while True:
            over = self._poll()
            yield from self._new_lines(final=over)
            if over:
                return
            time.sleep(poll_seconds())

    def _new_lines(self, final: bool) -> list[str]:
        done = self.base.output(["tail", "-n", f"+{self._lines + 1}", "--", self.log])
        if done.returncode != 0:
            return []  # not written yet (the job is queued) or not visible yet from here
        lines = done.stdout.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n") and not final:
            lines.pop()  # a line being written: read whole next time
        self._lines += len(lines)
        return lines

    def _poll(self) -> bool:
        """Ask the scheduler; True once the job is over (its status set)."""
        if self._status is not None:
            return True
        done = self.base.output(["scontrol", "-o", "show", "job", self.job])
        if done.returncode != 0:
            # forgotten by the controller (MinJobAge): over, status unknown
            if "Invalid job id" in done.stderr:
                self._status = 0
                return True
            self._failures += 1
            if self._failures >= GIVE_UP:
                self.connection_lost = True
                self.terminate()
                self._status = 255
            return self._status is not None
        self._failures = 0
        fields = _fields(done.stdout)
        state = JobState(
            self.job,
            fields.get("JobState", "UNKNOWN"),
            fields.get("Reason", ""),
            fields.get("NodeList", ""),
        )
        if state != self._seen:
            self._seen = state
            self.on_state(state)
        if state.state in ACTIVE:
            return False
        self._status = _exit_status(fields.get("ExitCode", "0:0"))
        return True

    def poll(self) -> int | None:
        return self._status

    def wait(self, timeout: float | None = None) -> int:
        start = time.monotonic()
        while not self._poll():
            if timeout is not None and time.monotonic() > start + timeout:
                raise subprocess.TimeoutExpired(f"job {self.job}", timeout)
            time.sleep(poll_seconds())
        untrack(self)
        assert self._status is not None  # _poll() is True only once the status is set
        return self._status

    def terminate(self) -> None:
        if self._status is None:
            stopped_running()
            self.base.output(["scancel", self.job])


def _fields(line: str) -> dict[str, str]:
    """`scontrol -o show job`'s `Key=Value ...`, each key's first value (JobState and ExitCode come
    before the fields a user's values can reach: WorkDir, Command)."""
    fields: dict[str, str] = {}
    for word in line.split():
        key, sep, value = word.partition("=")
        if sep:
            fields.setdefault(key, value)
    return fields


def _exit_status(code: str) -> int:
    """`ExitCode=N:S`: N, or 128+S when a signal ended it (as a shell says; core.profiler reads
    both)."""
    status, _, signal = code.partition(":")
    try:
        return 128 + int(signal) if int(signal or 0) else int(status)
    except ValueError:
        return 0


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""
