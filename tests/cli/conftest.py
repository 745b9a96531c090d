"""What the CLI tests share: a real OpenSSH server on loopback, one per test module that asks for
it."""

from __future__ import annotations

import pytest

from ..helpers.sshd import start_sshd


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield srv
    srv.stop()
