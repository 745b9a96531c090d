"""A host that does not answer costs one connection timeout per remote command, not one per step.

The "host" is a real TCP listener on 127.0.0.1 that accepts and never speaks, so the real OpenSSH
client waits out its ConnectTimeout on the banner exchange, as it would for a host behind a firewall
that drops packets; the listener counts the connections ssh made. The reachable case runs over the
real loopback sshd."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import make_ncu, one_error_line


class SilentHost:
    """Accepts TCP connections on 127.0.0.1 and never answers; `connections` counts them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=16)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    @property
    def connections(self) -> int:
        return len(self.accepted)

    def close(self) -> None:
        for conn in self.accepted:
            conn.close()
        self.sock.close()


class CountingProxy(SilentHost):
    """Forwards every connection to `port` on 127.0.0.1 and counts them: how many ssh connections a
    command made."""

    def __init__(self, port: int) -> None:
        self.target = port
        super().__init__()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def silent(tmp_path, server):
    """An ssh config whose host `gpubox` is the loopback sshd's entry with its port pointed at a
    SilentHost."""
    host = SilentHost()
    config = tmp_path / "silent_config"
    config.write_text(server.config.read_text().replace(f"Port {server.port}", f"Port {host.port}"))
    yield host, config
    host.close()


@pytest.mark.parametrize("command", ["profile", "sweep"])
def test_a_host_that_never_answers_costs_one_connection_timeout(tmp_path, silent, command):
    """Before: three ssh connections, each waiting out --connect-timeout (the GPU's compute
    capability, the tensor counter catalogue, then the work folder: 33 s at the default 10 s)."""
    host, config = silent
    remote = [
        "--host",
        "gpubox",
        "--ssh-config",
        config,
        "--connect-timeout",
        "1",
        "--ncu",
        make_ncu(tmp_path),
    ]
    points = ["--param", "n=1", "--no-tui"] if command == "sweep" else ["--no-tui"]
    out = flopscope(command, *remote, *points, "--", "true", "{n}", home=tmp_path / "home")
    assert host.connections == 1
    if command == "profile":
        line = one_error_line(out)
        assert "--host gpubox: cannot reach the host" in line and "timed out" in line, line
    else:
        assert (
            out.returncode != 0
            and "cannot reach the host" in out.stderr
            and "Traceback" not in out.stderr
        )


def test_a_reachable_host_still_profiles_with_hostile_values_inert(tmp_path, server):
    """The connection check goes through the same `sh -s` script path: arguments stay literal."""
    seen = tmp_path / "argv.txt"
    hostile = ["'; touch PWNED; #", "$(touch PWNED)", "`touch PWNED`", "a b"]
    program = f"import sys; open({str(seen)!r}, 'w').write(repr(sys.argv[1:]))"
    out = flopscope(
        "profile",
        "--host",
        server.alias,
        "--ssh-config",
        server.config,
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--json",
        "--",
        sys.executable,
        "-c",
        program,
        *hostile,
        home=tmp_path / "home",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert seen.read_text() == repr(hostile)
    assert not (tmp_path / "PWNED").exists()


def test_a_profile_over_ssh_makes_one_connection(tmp_path, server):
    """Every remote step of a profile (the check, compute capability, catalogue, work folder, ncu,
    the copy, the raw page, the clean-up) goes over the one ControlMaster connection the check
    opened."""
    proxy = CountingProxy(server.port)
    config = tmp_path / "proxy_config"
    config.write_text(
        server.config.read_text().replace(f"Port {server.port}", f"Port {proxy.port}")
    )
    try:
        out = flopscope(
            "profile",
            "--host",
            server.alias,
            "--ssh-config",
            config,
            "--ncu",
            make_ncu(tmp_path),
            "--no-tui",
            "--json",
            "--",
            "true",
            home=tmp_path / "home",
        )
        assert out.returncode == 0, out.stderr
        assert proxy.connections == 1
    finally:
        proxy.close()


def test_a_long_tmpdir_does_not_break_ssh(tmp_path, server):
    """Before: TMPDIR of 60+ characters (macOS's is about 50) put ssh's control socket past the
    108-byte limit of a socket's path: "cannot reach the host (ControlPath too long ...)" for every
    --host."""
    tmpdir = tmp_path / ("long-temporary-folder-" * 3)
    tmpdir.mkdir()
    out = flopscope(
        "profile",
        "--host",
        server.alias,
        "--ssh-config",
        server.config,
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--json",
        "--",
        "true",
        home=tmp_path / "home",
        env={"TMPDIR": str(tmpdir)},
    )
    assert out.returncode == 0, out.stderr
