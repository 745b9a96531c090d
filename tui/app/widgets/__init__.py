"""Widgets of the terminal app: the virtualised kernel table and the roofline plot."""
