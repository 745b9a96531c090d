"""Where ncu runs: this machine, or a remote host through the system OpenSSH client.

Remote commands are argument lists joined with `shlex.join`, so every user value reaches the remote program
as one literal argument: `;`, `$(...)`, backticks, quotes and newlines run nothing. OpenSSH is used as users
already have it (`~/.ssh/config`, ProxyJump, agent); flopscope adds a ControlMaster socket of its own so
the later copy of the report reuses the profiling connection.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import FlopscopeError

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SSH_LOST = 255  # ssh's own exit status for connection failures


def check_env(env: dict[str, str]) -> None:
    for name in env:
        if not _ENV_NAME.match(name):
            raise FlopscopeError(f"--env {name}=...", "not a valid environment variable name",
                                 "use NAME=VALUE with NAME made of letters, digits and _")


def env_argv(env: dict[str, str]) -> list[str]:
    """`env K=V ...` as arguments; names are checked so a value can never become a command."""
    check_env(env)
    return ["env", *(f"{k}={v}" for k, v in env.items())] if env else []


class LocalTransport:
    host = "localhost"

    def popen(self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None) -> subprocess.Popen:
        check_env(env or {})
        try:
            return subprocess.Popen(argv, cwd=cwd, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1)
        except FileNotFoundError:
            raise FlopscopeError(argv[0], "not found on this machine (searched PATH)",
                                 "install Nsight Compute or pass --ncu /usr/local/cuda/bin/ncu") from None
        except NotADirectoryError:
            raise FlopscopeError(cwd, "not a directory", "pass an existing --remote-cwd") from None

    def output(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        check_env(env or {})
        try:
            return subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60,
                                  env={**os.environ, **(env or {})})
        except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
            return subprocess.CompletedProcess(argv, 127, "", str(exc))

    def make_workdir(self) -> str:
        return tempfile.mkdtemp(prefix="flopscope.")

    def fetch(self, remote: str, local: Path) -> bool:
        if not Path(remote).is_file():
            return False
        shutil.copyfile(remote, local)
        return True

    def remove(self, workdir: str) -> None:
        shutil.rmtree(workdir, ignore_errors=True)

    def close(self) -> None:
        pass


class SshTransport:
    def __init__(self, host: str, *, connect_timeout: int = 10, ssh_config: str | None = None,
                 ssh: str = "ssh") -> None:
        if host.startswith("-"):
            raise FlopscopeError(f"--host {host}", "a host name cannot start with '-'", "pass a host name or alias")
        self.host = host
        self._control = tempfile.mkdtemp(prefix="fs-ssh.")
        self._base = [ssh, "-o", "BatchMode=yes", "-o", f"ConnectTimeout={connect_timeout}",
                      "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3",
                      "-o", "ControlMaster=auto", "-o", f"ControlPath={self._control}/%C",
                      "-o", "ControlPersist=30"]
        if ssh_config:
            self._base += ["-F", ssh_config]

    def _argv(self, remote: list[str], cwd: str | None = None) -> list[str]:
        line = shlex.join(remote)
        if cwd:
            line = f"cd -- {shlex.quote(cwd)} && exec {line}"
        return [*self._base, self.host, "--", line]

    def popen(self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None) -> subprocess.Popen:
        return subprocess.Popen(self._argv([*env_argv(env or {}), *argv], cwd), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                                errors="replace", bufsize=1)

    def output(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(self._argv([*env_argv(env or {}), *argv]), capture_output=True, text=True,
                                  errors="replace", stdin=subprocess.DEVNULL, timeout=120)
        except subprocess.TimeoutExpired as exc:
            return subprocess.CompletedProcess(argv, 124, "", f"no answer from {self.host} in {exc.timeout:g} s")

    def make_workdir(self) -> str:
        done = self.output(["mktemp", "-d", "-t", "flopscope.XXXXXX"])
        if done.returncode != 0 or not done.stdout.strip():
            raise FlopscopeError(f"--host {self.host}", f"cannot reach the host ({_ssh_reason(done.stderr)})",
                                 "check `ssh HOST` works without a password prompt (keys or agent)")
        return done.stdout.strip().splitlines()[-1]

    def fetch(self, remote: str, local: Path) -> bool:
        with local.open("wb") as handle:
            done = subprocess.run(self._argv(["cat", "--", remote]), stdout=handle, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, timeout=600)
        if done.returncode != 0:
            local.unlink(missing_ok=True)
            return False
        return True

    def remove(self, workdir: str) -> None:
        subprocess.run(self._argv(["rm", "-rf", "--", workdir]), capture_output=True, stdin=subprocess.DEVNULL,
                       timeout=60)

    def close(self) -> None:
        subprocess.run([*self._base, "-O", "exit", self.host], capture_output=True, timeout=10)
        shutil.rmtree(self._control, ignore_errors=True)


def _ssh_reason(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else "no answer"
