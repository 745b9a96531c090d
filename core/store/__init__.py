"""The run store: stored runs in SQLite, their folders and names, and recovery of a damaged
store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy import lazy_exports

if TYPE_CHECKING:
    from .ceilings import (
        KINDS,
        Ceilings,
        ceilings_json,
        from_bench,
        judged_by,
        load_all,
        measured_roof,
        save,
    )
    from .recover import recover_store
    from .run_folders import check_run_name, discard_unfinished, new_run_dir
    from .run_store import AlreadyStored, Store, StoreError, default_path, newest_first

_EXPORTS = {
    "KINDS": "ceilings",
    "Ceilings": "ceilings",
    "ceilings_json": "ceilings",
    "from_bench": "ceilings",
    "judged_by": "ceilings",
    "load_all": "ceilings",
    "measured_roof": "ceilings",
    "save": "ceilings",
    "recover_store": "recover",
    "check_run_name": "run_folders",
    "discard_unfinished": "run_folders",
    "new_run_dir": "run_folders",
    "AlreadyStored": "run_store",
    "Store": "run_store",
    "StoreError": "run_store",
    "default_path": "run_store",
    "newest_first": "run_store",
}
__all__ = [
    "KINDS",
    "AlreadyStored",
    "Ceilings",
    "Store",
    "StoreError",
    "ceilings_json",
    "check_run_name",
    "default_path",
    "discard_unfinished",
    "from_bench",
    "judged_by",
    "load_all",
    "measured_roof",
    "new_run_dir",
    "newest_first",
    "recover_store",
    "save",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
