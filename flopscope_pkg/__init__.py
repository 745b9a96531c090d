"""flopscope: a terminal front-end for GPU kernel profiling."""

__version__ = "0.1.0"
