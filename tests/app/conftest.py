"""Fixtures the app's tests share."""

# (a fixture: a batch-size sweep of real launches)
from ..helpers.sweep_reports import reports  # noqa: F401
