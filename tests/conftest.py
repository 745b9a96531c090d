"""Shared test fixtures: the real ncu outputs in ../shared/fixtures/ncu (CI has them beside the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu"


def fixture_path(name: str) -> Path:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"shared ncu fixture {name} not found at {FIXTURES} (CI keeps ../shared beside the repo)")
    return path


@pytest.fixture
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared ncu fixtures not found at {FIXTURES}")
    return FIXTURES
