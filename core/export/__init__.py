"""Tables written out: CSV, Parquet or JSON, atomically, with cells a spreadsheet will not run as
formulas."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_exports

if TYPE_CHECKING:
    from .cells import json_ready, records
    from .json_writer import write_json_doc
    from .write import check_target, run_meta, write_table

_EXPORTS = {
    "write_json_doc": "json_writer",
    "check_target": "write",
    "json_ready": "cells",
    "records": "cells",
    "run_meta": "write",
    "write_table": "write",
}
__all__ = [
    "check_target",
    "json_ready",
    "records",
    "run_meta",
    "write_json_doc",
    "write_table",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
