"""Screens of the terminal app, one job per module."""
