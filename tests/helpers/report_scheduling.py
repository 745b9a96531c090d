"""How pytest-xdist hands the suite to its workers: every test run on one real report to the same
worker, which then reads the report, exports ncu's pages of it and groups it once for all of them
(real_files.report_of, ncu_pages.ncu_csv: once per process), where each of three workers did.
`--dist loadgroup` would do it from marks, but with pytest 9.2 it groups nothing
(pytest-dev/pytest-xdist#1386)."""

from __future__ import annotations

from functools import cached_property

from xdist.scheduler import LoadScopeScheduling

from .real_files import file_id, real_files


class ByReport(LoadScopeScheduling):
    """xdist's scope scheduling with a test's scope the real report named in its id (`[file]`,
    `[gpu/file]`, `[file-80]`), else the test itself."""

    @cached_property
    def reports(self) -> list[str]:
        # longest first: the demo's name is also the end of the H200 capture's id
        return sorted({file_id(path) for path in real_files()}, key=len, reverse=True)

    def _split_scope(self, nodeid: str) -> str:
        params = nodeid.partition("[")[2]
        return next((name for name in self.reports if name in params), nodeid)
