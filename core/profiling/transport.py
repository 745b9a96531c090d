"""Where ncu runs: this machine, or a remote host through the system OpenSSH client
(core/profiling/slurm.py wraps either to run it as a Slurm job).

Remote commands are argument lists joined with `shlex.join` into a POSIX `sh` script that travels on
ssh's standard input; the command line ssh hands to the remote login shell is only `sh -s`. So every
user value reaches the remote program as one literal argument whatever that login shell is (fish and
csh read quotes differently from sh): `;`, `$(...)`, backticks, quotes and newlines run nothing.
OpenSSH is used as users already have it (`~/.ssh/config`, ProxyJump, agent); flopscope adds a
ControlMaster socket of its own so the later copy of the report reuses the profiling connection.

A profile is a `Job`: stopping it (the app's stop key, Ctrl-C, SIGTERM, or flopscope dying) stops
ncu and the program under it, here or on the remote host, instead of leaving them to run on."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from ..common.disk import partial_file, write_error
from ..common.errors import FlopscopeError


@dataclass(frozen=True)
class JobState:
    """What a scheduler (core/profiling/slurm.py) says of a point's job: queued (PENDING, with its
    reason), RUNNING on a node, or its final state."""

    job: str
    state: str
    reason: str = ""
    node: str = ""

    @property
    def why(self) -> str:
        """The reason a pending job waits, "" where squeue/scontrol give none (`None`)."""
        return self.reason if self.reason not in ("", "None") else ""

    @property
    def where(self) -> str:
        """The node a job runs on, "" before Slurm names one (`(null)`)."""
        return self.node if self.node not in ("", "(null)") else ""

    @property
    def text(self) -> str:
        if self.state == "PENDING":
            return f"job {self.job} queued" + (f" ({self.why})" if self.why else "")
        if self.state == "RUNNING":
            return f"job {self.job} running" + (f" on {self.where}" if self.where else "")
        return f"job {self.job} {self.state.lower()}"


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SSH_LOST = 255  # ssh's own exit status for connection failures


def check_env(env: dict[str, str]) -> None:
    for name in env:
        if not _ENV_NAME.match(name):
            raise FlopscopeError(
                f"--env {name}=...",
                "not a valid environment variable name",
                "use NAME=VALUE with NAME made of letters, digits and _",
            )


def env_argv(env: dict[str, str]) -> list[str]:
    """`env K=V ...` as arguments; names are checked so a value can never become a command."""
    check_env(env)
    return ["env", *(f"{k}={v}" for k, v in env.items())] if env else []


def check_host(host: str) -> None:
    """A host ssh would read as an option, or no host at all, refused before anything runs."""
    if not host.strip():
        raise FlopscopeError(
            "--host ''", "an empty host name", "pass a host name or an alias from your ssh config"
        )
    if host.startswith("-"):
        raise FlopscopeError(
            f"--host {host}", "a host name cannot start with '-'", "pass a host name or alias"
        )


class RunningJob(Protocol):
    """What a transport's `popen` returns: a process here or over ssh (Job), or a Slurm job
    (core/profiling/slurm.py)."""

    on_state: Callable[[JobState], None]

    @property
    def stdout(self) -> Iterator[str]: ...

    @property
    def connection_lost(self) -> bool: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def terminate(self) -> None: ...


class Transport(Protocol):
    """Where a profile runs: LocalTransport, SshTransport, or SlurmTransport
    (core/profiling/slurm.py)."""

    @property
    def host(self) -> str: ...

    def connect(self) -> None: ...

    def popen(
        self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None
    ) -> RunningJob: ...

    def output(
        self, argv: list[str], env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]: ...

    def make_workdir(self) -> str: ...

    def fetch(self, remote: str, local: Path) -> bool: ...

    def remove(self, workdir: str) -> None: ...

    def close(self) -> None: ...


class Job:
    """A running command whose every process can be stopped: its output lines (stdout and stderr
    merged), its exit status, and `terminate()`."""

    def __init__(
        self, proc: subprocess.Popen[str], stop: Callable[[], None], exit_mark: str | None = None
    ) -> None:
        self._proc, self._stop, self._mark = proc, stop, exit_mark
        self._status: int | None = None
        # heard from a scheduler's job only (core/profiling/slurm.py)
        self.on_state: Callable[[JobState], None] = lambda state: None
        track(self)

    @property
    def stdout(self) -> Iterator[str]:
        assert self._proc.stdout is not None  # every transport's Popen pipes stdout
        mark = self._mark
        for line in self._proc.stdout:
            if not mark or (at := line.find(mark)) < 0:
                yield line
                continue
            self._status = int(line[at + len(mark) :].split()[0])
            if at:
                yield line[:at] + "\n"

    def wait(self, timeout: float | None = None) -> int:
        code = self._proc.wait(timeout)
        untrack(self)
        return self._status if self._status is not None else code

    @property
    def connection_lost(self) -> bool:
        """ssh exits 255 for a lost connection, but ncu does too, on a bad option: only the status
        line the remote script prints last tells them apart."""
        return self._mark is not None and self._status is None and self._proc.poll() == SSH_LOST

    def poll(self) -> int | None:
        return self._proc.poll()

    def terminate(self) -> None:
        if self._proc.poll() is None:
            stopped_running()
            self._stop()


_JOBS: set[RunningJob] = set()
_LOCK = threading.RLock()  # re-entrant: stop_all also runs from signal handlers
_STOPPING = threading.Event()
_STOPPED_RUNNING = threading.Event()  # a job (ncu and its program) was stopped while it ran


def track(job: RunningJob) -> None:
    """A job stop_all stops: a process here or on a host (Job), a Slurm job
    (core/profiling/slurm.py)."""
    with _LOCK:
        _JOBS.add(job)


def untrack(job: RunningJob) -> None:
    with _LOCK:
        _JOBS.discard(job)


def stopped_running() -> None:
    """A job is being stopped while it runs (see stopped_running_job)."""
    _STOPPED_RUNNING.set()


def stopped_running_job() -> bool:
    """Was ncu (a job) stopped while it ran? What a stop message may claim: `report` and `open`
    start none."""
    return _STOPPED_RUNNING.is_set()


def stop_all() -> None:
    """Stop every running job and refuse new ones: for Ctrl-C and SIGTERM, from any thread."""
    _STOPPING.set()
    with _LOCK:
        jobs = list(_JOBS)
    for job in jobs:
        job.terminate()


def stopping() -> bool:
    """Has flopscope been told to stop (stop_all)? Work that fails then failed because of the
    stop."""
    return _STOPPING.is_set()


def refuse_when_stopping() -> None:
    if _STOPPING.is_set():
        raise FlopscopeError("flopscope", "stopped", "run the command again")


class LocalTransport:
    host = "localhost"

    def popen(
        self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None
    ) -> Job:
        check_env(env or {})
        refuse_when_stopping()
        try:
            # A session of its own: a stop reaches the program ncu started, not just ncu.
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**os.environ, **(env or {})},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
                bufsize=1,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise FlopscopeError(
                argv[0],
                "not found on this machine (searched PATH)",
                "install Nsight Compute or pass --ncu /usr/local/cuda/bin/ncu",
            ) from None
        except NotADirectoryError:
            raise FlopscopeError(cwd, "not a directory", "pass an existing --remote-cwd") from None
        return Job(proc, lambda: _kill_group(proc.pid))

    def output(
        self, argv: list[str], env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        check_env(env or {})
        try:
            return subprocess.run(
                argv,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=60,
                env={**os.environ, **(env or {})},
                stdin=subprocess.DEVNULL,
            )
        except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
            return subprocess.CompletedProcess(argv, 127, "", str(exc))

    def connect(self) -> None:
        """Nothing to connect to: see SshTransport.connect."""

    def make_workdir(self) -> str:
        return tempfile.mkdtemp(prefix="flopscope.")

    def fetch(self, remote: str, local: Path) -> bool:
        """Copy the report into the run folder, whole or not at all: on a full disk it stays in its
        work folder (the caller keeps that) and the error says where."""
        if not Path(remote).is_file():
            return False
        try:
            with partial_file(local) as partial:
                shutil.copyfile(remote, partial)
        except OSError as exc:
            raise write_error(
                local,
                exc,
                "cannot copy the report here",
                f"the report is kept in {remote}: `flopscope open {remote}` opens it, `flopscope "
                f"import {Path(remote).parent} --name {local.parent.name}` stores it once there is "
                "room",
            ) from None
        return True

    def remove(self, workdir: str) -> None:
        shutil.rmtree(workdir, ignore_errors=True)

    def close(self) -> None:
        pass


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)


# Runs the command in a session of its own and stops that whole session when ssh's standard input
# ends: when flopscope closes it to stop the run, or when flopscope or the connection dies. Without
# a terminal, nothing else tells the remote host that nobody is waiting any more. `kill -s SIG --
# -PGID` is the form dash takes.
_WATCHED = """{{
exec 3<&0
s=; command -v setsid >/dev/null 2>&1 && s=setsid
{cd}$s {command} </dev/null 2>&1 &
job=$!
$s sh -c 'trap "exit 0" TERM; cat >/dev/null
  kill -s TERM -- -"$1" 2>/dev/null || kill -s TERM "$1"' \
  watchdog "$job" <&3 >/dev/null 2>&1 &
watch=$!
exec 3<&-
wait "$job"; status=$?
kill -s TERM -- -"$watch" 2>/dev/null || kill -s TERM "$watch" 2>/dev/null
printf '%s%s\\n' {mark} "$status"
exit "$status"
}}
"""


class SshTransport:
    def __init__(
        self,
        host: str,
        *,
        connect_timeout: int = 10,
        ssh_config: str | None = None,
        ssh: str = "ssh",
    ) -> None:
        check_host(host)
        self.host = host
        # ssh's stderr when the connection check failed (see connect)
        self._no_answer: str | None = None
        self._control = _control_dir()
        self._base = [
            ssh,
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={connect_timeout}",
            "-o",
            "ServerAliveInterval=2",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "ControlMaster=auto",
            "-o",
            f"ControlPath={self._control}/%C",
            "-o",
            "ControlPersist=30",
        ]
        if ssh_config:
            self._base += ["-F", ssh_config]

    def _ssh(self) -> list[str]:
        # The remote login shell sees `sh -s` and nothing else; the script comes on standard input.
        return [*self._base, self.host, "--", "sh -s"]

    def popen(
        self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None
    ) -> Job:
        refuse_when_stopping()
        mark = f"FLOPSCOPE-EXIT-{secrets.token_hex(8)}:"
        cd = f"cd -- {shlex.quote(cwd)} || exit 125\n" if cwd else ""
        script = _WATCHED.format(
            cd=cd, command=shlex.join([*env_argv(env or {}), *argv]), mark=mark
        )
        proc = subprocess.Popen(
            self._ssh(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
        )
        assert proc.stdin is not None  # stdin=PIPE above
        proc.stdin.write(script)
        proc.stdin.flush()  # kept open: closing it is how the remote side learns to stop
        return Job(proc, lambda: _hang_up(proc), exit_mark=mark)

    def output(
        self, argv: list[str], env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        mark = f"FLOPSCOPE-OUT-{secrets.token_hex(8)}"
        script = f"printf '%s\\n' {mark}\nexec {shlex.join([*env_argv(env or {}), *argv])}\n"
        try:
            done = subprocess.run(
                self._ssh(),
                input=script,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=120,
            )
        except subprocess.TimeoutExpired as exc:
            return subprocess.CompletedProcess(
                argv, 124, "", f"no answer from {self.host} in {exc.timeout:g} s"
            )
        before, found, after = done.stdout.partition(mark + "\n")
        # what the login shell printed before the command is not its output
        done.stdout = after if found else before
        return done

    def connect(self) -> None:
        """One connection check before anything else is asked of the host, so that a host that does
        not answer costs one ConnectTimeout, not one per question asked of it. The connection it
        opens is the ControlMaster every later command of the profile reuses."""
        # asked again (a sweep's worker, then its first point): not waited for twice
        if self._no_answer is not None:
            raise self._unreachable(self._no_answer)
        done = self.output(["true"])
        if done.returncode != 0:
            self._no_answer = done.stderr
            raise self._unreachable(done.stderr)

    def _unreachable(self, stderr: str) -> FlopscopeError:
        return FlopscopeError(
            f"--host {self.host}",
            f"cannot reach the host ({_ssh_reason(stderr)})",
            "check `ssh HOST` works without a password prompt (keys or agent)",
        )

    def make_workdir(self) -> str:
        done = self.output(["mktemp", "-d", "-t", "flopscope.XXXXXX"])
        if done.returncode != 0 or not done.stdout.strip():
            raise self._unreachable(done.stderr)
        return done.stdout.strip().splitlines()[-1]

    def fetch(self, remote: str, local: Path) -> bool:
        """Copy `remote` to `local`; False when it does not exist. Bytes a login script prints to
        standard output come before a marker and are dropped: they would otherwise open the
        report."""
        mark = f"FLOPSCOPE-DATA-{secrets.token_hex(8)}\n".encode()
        script = (
            f"[ -f {shlex.quote(remote)} ] || exit 3\nprintf '%s\\n' {mark.decode().strip()}\n"
            f"exec cat -- {shlex.quote(remote)}\n"
        )
        proc = subprocess.Popen(
            self._ssh(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        # all PIPE above
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(script.encode())
        proc.stdin.close()
        kept = (
            f"the report is kept on the host: `scp {shlex.quote(self.host)}:{shlex.quote(remote)}"
            " .` then `flopscope open report.ncu-rep`"
        )
        partial = local.with_name(local.name + ".partial")  # `local` appears whole or not at all
        try:
            try:
                with partial.open("wb") as handle:
                    copied = _copy_after(mark, proc.stdout, handle)
            # this disk is full: the copy stops, the report stays on the host
            except OSError as exc:
                proc.kill()
                proc.wait()
                raise write_error(local, exc, "cannot copy the report here", kept) from None
            code = proc.wait()
            stderr = proc.stderr.read().decode(errors="replace")
            if code == 0 and copied:
                os.replace(partial, local)
                return True
        finally:
            partial.unlink(missing_ok=True)
        if code == 3:
            return False
        raise FlopscopeError(
            f"{self.host}:{remote}", f"copying the report failed ({_ssh_reason(stderr)})", kept
        )

    def remove(self, workdir: str) -> None:
        self.output(["rm", "-rf", "--", workdir])

    def close(self) -> None:
        subprocess.run([*self._base, "-O", "exit", self.host], capture_output=True, timeout=10)
        shutil.rmtree(self._control, ignore_errors=True)


def _control_dir() -> str:
    """A folder for ssh's ControlMaster socket. A socket's path holds at most 104-108 bytes, and ssh
    puts its 40-character %C and a 17-character suffix under this folder: a long TMPDIR (macOS's, a
    test's) made every ssh command fail with "ControlPath too long", so /tmp is used then."""
    base = tempfile.gettempdir()
    return tempfile.mkdtemp(
        prefix="fs-ssh.", dir="/tmp" if len(base) > 30 and os.path.isdir("/tmp") else base
    )


def _hang_up(proc: subprocess.Popen[str]) -> None:
    """Close ssh's standard input, which stops the remote session; end ssh itself if the host does
    not answer."""
    assert proc.stdin is not None  # SshTransport.popen pipes it
    with contextlib.suppress(OSError):
        proc.stdin.close()

    def end_ssh() -> None:
        if proc.poll() is None:
            proc.terminate()

    timer = threading.Timer(15, end_ssh)
    timer.daemon = True
    timer.start()


def _copy_after(mark: bytes, source: IO[bytes], sink: IO[bytes]) -> bool:
    """Copy `source` to `sink` from after the first `mark`; False if the mark never came."""
    head = b""
    while True:
        chunk = source.read(1 << 16)
        if not chunk:
            return False
        head += chunk
        at = head.find(mark)
        if at >= 0:
            sink.write(head[at + len(mark) :])
            shutil.copyfileobj(source, sink, 1 << 20)
            return True
        head = head[-len(mark) :]


def _ssh_reason(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else "no answer"
