"""A real OpenSSH server on 127.0.0.1 for tests, as the current user, with keys made for the
test."""

from __future__ import annotations

import getpass
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD = Path("/usr/sbin/sshd")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SshServer:
    alias: str
    port: int
    config: Path  # client config to pass as `--ssh-config`
    process: subprocess.Popen

    def drop_sessions(self) -> int:
        """Kill this server's per-connection processes: the client sees its connection die."""
        killed = 0
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.process.pid:
                os.kill(int(proc.name), signal.SIGKILL)
                killed += 1
        return killed

    def stop(self) -> None:
        self.drop_sessions()
        self.process.terminate()
        self.process.wait(timeout=10)


def start_sshd(
    root: Path,
    alias: str = "gpubox",
    force_command: str | None = None,
    set_env: dict[str, str] | None = None,
) -> SshServer:
    """`force_command`: what sshd runs instead of the login shell (it finds the client's command
    line in $SSH_ORIGINAL_COMMAND), to stand for login shells and login scripts of other hosts.
    `set_env`: variables every session gets (a login node's SLURM_CONF)."""
    if not SSHD.exists():
        pytest.skip(
            "OpenSSH server not installed (Debian package openssh-server; .ci/run installs it)"
        )
    root.mkdir(parents=True, exist_ok=True)
    for key in ("host_key", "client_key"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / key)], check=True
        )
    (root / "authorized_keys").write_text((root / "client_key.pub").read_text())
    os.chmod(root / "authorized_keys", 0o600)
    port = _free_port()
    if os.geteuid() == 0:
        # privilege separation directory sshd insists on as root
        Path("/run/sshd").mkdir(exist_ok=True)
    (root / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host_key'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nPidFile {root / 'sshd.pid'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
        "PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nLogLevel ERROR\n"
        + (f"ForceCommand {force_command}\n" if force_command else "")
        + (f"SetEnv {' '.join(f'{k}={v}' for k, v in set_env.items())}\n" if set_env else "")
    )
    process = subprocess.Popen(
        [str(SSHD), "-D", "-e", "-f", str(root / "sshd_config")],
        stdout=subprocess.DEVNULL,
        stderr=(root / "sshd.log").open("w"),
    )
    config = root / "ssh_config"
    config.write_text(
        f"Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {root / 'client_key'}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return SshServer(alias, port, config, process)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    pytest.fail(f"sshd did not start: {(root / 'sshd.log').read_text()}")
