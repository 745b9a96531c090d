"""ncu's own CSV page of a real report (`ncu --import FILE --page PAGE --csv`), exported once per
test process: several test files check the engine against the same page of the same fixture."""

from __future__ import annotations

import subprocess
from pathlib import Path

# (ncu binary, report, page) -> what ncu printed; the binary's HOME (real_ncu's) changes nothing
_PRINTED: dict[tuple[str, Path, str], str] = {}


def ncu_csv(real_ncu: list[str], path: Path, page: str = "raw") -> str:
    """The page's text as the real ncu prints it (`real_ncu`: the fixture's command)."""
    key = (real_ncu[-1], Path(path), page)
    if key not in _PRINTED:
        out = subprocess.run(
            [*real_ncu, "--import", str(path), "--page", page, "--csv"],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert out.returncode == 0, out.stderr
        _PRINTED[key] = out.stdout
    return _PRINTED[key]
