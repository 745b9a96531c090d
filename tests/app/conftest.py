"""Fixtures the app's tests share."""

from pathlib import Path

import pytest

from ..helpers.real_files import DEMO, report_of

# (a fixture: a batch-size sweep of real launches)
from ..helpers.sweep_reports import reports  # noqa: F401


@pytest.fixture
def demo():
    """The bundled demo report, read once per test process (the tests only read it)."""
    return report_of(DEMO)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """flopscope's home (runs, config.toml, filter history) in the test's own folder."""
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path))
    return tmp_path
