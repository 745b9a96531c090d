"""Damaged input never produces a traceback: either a Report or a one-line FlopscopeError; through
the CLI, exit 0 with a sane table or exit 2 with one line naming the file
(tests/helpers/fuzz_cases.py)."""

from __future__ import annotations

import bz2
import os
import random
from pathlib import Path

import pytest
from flopscope.core import FlopscopeError, read_report
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conftest import FIXTURES, fixture_path
from ..helpers import fuzz_cases

CSV_FIXTURES = [
    "b200_torch_sdpa_auto_raw.csv",
    "v100_cutlass_gemm_nersc_flops_details.csv",
    "rtx5090_dsocr_cutlass_gemm_details.csv",
    "t4_nsightful_copy_blocked_details.csv",
]
# About 700 damaged inputs per run through the reader: 200 edited real CSVs, 500 random byte
# strings, 12 damaged reports (the CLI suite below mutates every fixture more ways; 1,500 CSV edits
# here took 2 of CI's minutes).
CSV_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
SETTINGS = settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _read(path) -> None:
    try:
        report = read_report(path)
    except FlopscopeError as err:
        assert "\n" not in err.line()
        return
    report.group("name")
    report.summary()


def _sources() -> dict[str, str]:
    if not FIXTURES.is_dir():
        return {}
    return {n: (FIXTURES / n).read_text(encoding="utf-8-sig")[:20000] for n in CSV_FIXTURES}


SOURCES = _sources()
edits = st.lists(
    st.tuples(
        st.sampled_from(fuzz_cases.EDITS),
        st.floats(0, 1),
        st.text(alphabet='",\n\r=0123456789.,a/%n', max_size=6),
    ),
    min_size=1,
    max_size=8,
)


@pytest.mark.skipif(not SOURCES, reason=f"shared ncu fixtures not found at {FIXTURES}")
@CSV_SETTINGS
@given(name=st.sampled_from(CSV_FIXTURES), ops=edits)
def test_mutated_csv_never_tracebacks(tmp_path, name, ops):
    path = tmp_path / "fuzz.csv"
    path.write_text(fuzz_cases.edit_text(SOURCES[name], ops), encoding="utf-8")
    _read(path)


@SETTINGS
@given(st.binary(max_size=2000))
def test_random_bytes_never_traceback(tmp_path, data):
    path = tmp_path / "random.bin"
    path.write_bytes(data)
    _read(path)


@pytest.mark.parametrize("seed", range(12))
def test_bit_flipped_and_truncated_ncu_rep(tmp_path, seed):
    src = bytearray(fixture_path("t4_mlp_matadd_full.ncu-rep").read_bytes())
    rng = random.Random(seed)
    for _ in range(rng.choice([1, 8, 64])):
        i = rng.randrange(len(src))
        src[i] ^= 1 << rng.randrange(8)
    cut = rng.choice([len(src), rng.randrange(len(src))])
    path = tmp_path / "damaged.ncu-rep"
    path.write_bytes(bytes(src[:cut]))
    _read(path)


# --- The CLI over damaged copies of every real fixture (issue 20, item 3)
# ------------------------------------- Seeded (derandomized): CI runs the same cases each time.
# FLOPSCOPE_FUZZ_EXAMPLES sizes it; the long run with counts, worst time and memory is
# benchmarks/fuzz_long.py.
CLI_SETTINGS = settings(
    max_examples=int(os.environ.get("FLOPSCOPE_FUZZ_EXAMPLES", "60")),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


@pytest.mark.skipif(not fuzz_cases.SOURCES, reason=f"shared ncu fixtures not found at {FIXTURES}")
@CLI_SETTINGS
@given(rng=st.randoms(use_true_random=True))
def test_cli_on_damaged_fixtures(tmp_path_factory, rng):
    folder = tmp_path_factory.mktemp("fuzz")
    case = fuzz_cases.build(rng, folder)
    fuzz_cases.run(case, folder)


def test_every_fixture_passes_the_rule_undamaged(tmp_path):
    """The rule is not vacuous: each real fixture, untouched, exits 0 and passes every check."""
    if not fuzz_cases.SOURCES:
        pytest.skip(f"shared ncu fixtures not found at {FIXTURES}")
    for source in fuzz_cases.SOURCES:
        case = fuzz_cases.Case(source.name, "none", "none", "json", source)
        assert fuzz_cases.run(case, tmp_path)[0] == 0, source


def _special(tmp_path: Path, kind: str) -> Path:
    """Inputs that are not damaged files: folders, pipes, unreadable paths, bombs."""
    path = tmp_path / f"{kind}.csv"
    if kind == "empty_file":
        path.write_bytes(b"")
    elif kind == "folder":
        path.mkdir()
        (path / "other.txt").write_text("x")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "unreadable":
        path.write_bytes(b'"ID","Kernel Name"\n')
        path.chmod(0)
        if os.geteuid() == 0:  # root reads it anyway: a folder is unreadable as a file for everyone
            path.unlink()
            path.mkdir()
    elif kind == "bomb":
        path = tmp_path / "bomb.csv.bz2"
        # 64 MiB from ~200 bytes; capped at 8M below
        path.write_bytes(bz2.compress(b"0" * (16 << 20)) * 4)
    elif kind == "gzip_garbage":
        path.write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4)
    elif kind == "nul_bytes":
        path.write_bytes(b"\x00" * 5000)
    elif kind == "header_only":
        path.write_bytes(b'"ID","Kernel Name","gpu__time_duration.sum"\n"","","ns"\n')
    return path


@pytest.mark.parametrize("command", list(fuzz_cases.COMMANDS))
@pytest.mark.parametrize(
    "kind",
    [
        "empty_file",
        "folder",
        "fifo",
        "unreadable",
        "bomb",
        "gzip_garbage",
        "nul_bytes",
        "header_only",
        "missing",
    ],
)
def test_cli_on_what_is_no_report(tmp_path, kind, command):
    path = _special(tmp_path, kind)
    case = fuzz_cases.Case("-", kind, "none", command, path)
    code, _, err = fuzz_cases.run(case, tmp_path, env={"FLOPSCOPE_MAX_INPUT": "8M"})
    assert code == 2, err
