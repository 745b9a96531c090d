"""What every stage uses: errors as one line, units and SI prefixes, safe text for terminals, the
data home, disk and memory refusals, and the GPU datasheet database."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

if TYPE_CHECKING:
    from .errors import FlopscopeError, OutOfMemory, path_error
    from .gpus import Gpu, all_gpus, find_gpu, require_gpu
    from .home import data_home, home_folder
    from .memory import address_space_limit, out_of_memory, ran_out_of_memory
    from .safe_text import display_text, safe_file_name
    from .si_format import infinite, si, significant
    from .units import is_missing

_EXPORTS = {
    "FlopscopeError": "errors",
    "OutOfMemory": "errors",
    "path_error": "errors",
    "Gpu": "gpus",
    "all_gpus": "gpus",
    "find_gpu": "gpus",
    "require_gpu": "gpus",
    "data_home": "home",
    "home_folder": "home",
    "address_space_limit": "memory",
    "out_of_memory": "memory",
    "ran_out_of_memory": "memory",
    "display_text": "safe_text",
    "safe_file_name": "safe_text",
    "infinite": "si_format",
    "si": "si_format",
    "significant": "si_format",
    "is_missing": "units",
}
__all__ = [
    "FlopscopeError",
    "Gpu",
    "OutOfMemory",
    "address_space_limit",
    "all_gpus",
    "data_home",
    "display_text",
    "find_gpu",
    "home_folder",
    "infinite",
    "is_missing",
    "out_of_memory",
    "path_error",
    "ran_out_of_memory",
    "require_gpu",
    "safe_file_name",
    "si",
    "significant",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
