"""Shared test fixtures: the real ncu outputs in ../shared/fixtures/ncu (CI has them beside the
repo)."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from .helpers import collector

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu"

# Every test reads its files afresh (the CLI in subprocesses too): a table cached by one test would
# hide what another injects into a reader. tests/core/test_table_cache.py turns the cache on where
# it is the subject.
os.environ["FLOPSCOPE_NO_CACHE"] = "1"

# The Ctrl-C tests press Ctrl-C as in a terminal. A test run started in the background by a
# non-interactive shell (`nohup ... &`, some CI runners) inherits SIGINT ignored, and so would every
# flopscope it starts: the signal would never arrive. A handled signal reverts to its default in an
# exec'd child, an ignored one does not.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Likewise `nohup` leaves SIGHUP ignored, and flopscope keeps a stop signal it was started with
# ignored (as nohup asks): the hang-up tests need it to arrive. (A SIGHUP to the test run itself
# then ends it.)
for _stop in (signal.SIGHUP, signal.SIGTERM):
    if signal.getsignal(_stop) is signal.SIG_IGN:
        signal.signal(_stop, signal.SIG_DFL)


collector.watch()


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid, location) -> None:
    collector.freeze_survivors()


def pytest_sessionstart(session) -> None:
    """flopscope's modules compiled once, before the workers start: the suite's commands each import
    flopscope afresh (forked or in a new interpreter), and where PYTHONDONTWRITEBYTECODE is set (as
    on CI's machines) none writes the bytecode, so each compiled what it imported again."""
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker: its controller did it
        return
    import compileall

    for package in ("core", "tui"):
        compileall.compile_dir(Path(__file__).resolve().parents[1] / package, quiet=1)


def fixture_path(name: str) -> Path:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(
            f"shared ncu fixture {name} not found at {FIXTURES} (CI keeps ../shared beside the"
            " repo)"
        )
    return path


@pytest.fixture
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared ncu fixtures not found at {FIXTURES}")
    return FIXTURES


@pytest.fixture(scope="session")
def real_ncu(tmp_path_factory) -> list[str]:
    """The real ncu CLI (no GPU needed to import reports or parse arguments), as `env HOME=...
    ncu`."""
    ncu = os.environ.get("FLOPSCOPE_REAL_NCU")
    if not ncu or not shutil.which(ncu):
        pytest.skip(
            "no real ncu: set FLOPSCOPE_REAL_NCU to an ncu binary (.ci/fetch_ncu.sh unpacks one; no"
            " GPU needed)"
        )
    return ["env", f"HOME={tmp_path_factory.mktemp('ncuhome')}", ncu]


@pytest.fixture
def aggregated(monkeypatch) -> list:
    """The key of each grouping Report makes afresh from the launches, in order (a grouping read
    back from the report cache makes none)."""
    from flopscope.core.report import report as report_module

    calls = []
    real = report_module.aggregate

    def counting(kernels, key, by_gpu=False):
        calls.append(key)
        return real(kernels, key, by_gpu=by_gpu)

    monkeypatch.setattr(report_module, "aggregate", counting)
    return calls


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """CI names the tools it installed (FLOPSCOPE_MUST_RUN, `|`-separated words of their skip
    reasons): a test that would skip for one of them fails instead, so the SSH, tmux and real-ncu
    tests cannot drop out of CI unnoticed. Run by hand, a missing tool still only skips."""
    outcome = yield
    report = outcome.get_result()
    must = [word for word in os.environ.get("FLOPSCOPE_MUST_RUN", "").split("|") if word]
    if report.skipped and must and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        if any(word in reason for word in must):
            report.outcome = "failed"
            report.longrepr = f"skipped although CI provides it (FLOPSCOPE_MUST_RUN): {reason}"


async def settle(pilot, until=lambda: True, tries: int = 250) -> None:
    """Let a Pilot-driven app run until `until()` holds (workers finishing, screens mounting); fail
    after `tries` x 20 ms."""
    for _ in range(tries):
        await pilot.pause(0.02)
        if until():
            await pilot.pause()
            return
    raise AssertionError("the app never reached the expected state")


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--snapshot-update",
        action="store_true",
        help=(
            "rewrite tests/snapshots/*.svg from the screens as they are now (then review the diff)"
        ),
    )


@pytest.fixture
def snapshot_update(request) -> bool:
    """Whether screen snapshots are rewritten instead of compared: `pytest --snapshot-update` or
    FLOPSCOPE_SNAPSHOT_UPDATE=1."""
    return bool(
        request.config.getoption("--snapshot-update") or os.environ.get("FLOPSCOPE_SNAPSHOT_UPDATE")
    )


# `-m "not slow"` is the quick loop while working (about a minute and a half on 2 cores); CI runs
# all. Slow: every test of tests/cli (each starts the CLI as a process, ~0.6 s of start-up a call)
# and tests/app (the Textual app driven by Pilot, seconds a test), and the modules of tests/core
# that start real processes or servers (sshd, Slurm, ncu, torch, mypy) or read every large real
# report, at seconds a test.
SLOW_FOLDERS = {"app", "cli"}
SLOW_MODULES = {
    "test_fuzz", "test_sweep", "test_types", "test_layers", "test_store_damage",
    "test_module_ranges", "test_model", "test_gpu_reference", "test_names_that_differ",
    "test_input_limits", "test_memory_chart", "test_details_arrow_reader", "test_multi_gpu",
    "test_json_rows", "test_store", "test_real_ncu", "test_hierarchical_roofline",
    "test_warp_stalls", "test_source_page", "test_ceilings", "test_columns", "test_junk_inputs",
    "test_instruction_mix", "test_source_cuda", "test_written_names", "test_instanced_pages",
    "test_nvtx_groups", "test_over_ceiling", "test_table_cache", "test_opcode_mix",
    "test_details_clock",
}  # fmt: skip


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.path.stem in SLOW_MODULES or item.path.parent.name in SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)


def pytest_xdist_make_scheduler(config, log):
    """The tests run on one real report go to one worker (`ByReport`), unless another --dist is
    asked for."""
    if config.getvalue("dist") != "load":
        return None
    from .helpers.report_scheduling import ByReport

    return ByReport(config, log)
