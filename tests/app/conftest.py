"""Fixtures the app's tests share."""

from ..helpers.sweep_reports import reports  # noqa: F401  (a fixture: a batch-size sweep of real launches)
