"""pyproject.toml's lower bounds and .ci/lowest.txt, which CI installs to run the tests against
them, are one list: a bound raised or a dependency added without its pin would leave its lowest
version untested."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _lower_bounds() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    bounds = {}
    for dep in deps:
        name, version = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)(,<[0-9.]+)?", dep).group(1, 2)
        bounds[name.lower()] = version
    return bounds


def _pins() -> dict[str, str]:
    lines = (ROOT / ".ci/lowest.txt").read_text().splitlines()
    pairs = (line.split("==") for line in lines if line.strip() and not line.startswith("#"))
    return {name.strip().lower(): version.strip() for name, version in pairs}


def _same(bound: str, pin: str) -> bool:
    """`>=2.2` allows 2.2.0; the pin may spell the trailing zeros."""
    a, b = ([int(x) for x in v.split(".")] for v in (bound, pin))
    width = max(len(a), len(b))
    return a + [0] * (width - len(a)) == b + [0] * (width - len(b))


def test_every_dependency_has_a_lower_bound_and_ci_pins_exactly_it():
    bounds, pins = _lower_bounds(), _pins()
    assert set(bounds) == set(pins)
    assert {n: (bounds[n], pins[n]) for n in bounds if not _same(bounds[n], pins[n])} == {}
