"""Damaged input never produces a traceback: either a Report or a one-line FlopscopeError."""

from __future__ import annotations

import random

import pytest
from flopscope.core import FlopscopeError, read_report
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import FIXTURES, fixture_path

CSV_FIXTURES = ["b200_torch_sdpa_auto_raw.csv", "v100_cutlass_gemm_nersc_flops_details.csv",
                "rtx5090_dsocr_cutlass_gemm_details.csv", "t4_nsightful_copy_blocked_details.csv"]
# About 2,000 damaged inputs per run: 1,500 edited real CSVs, 500 random byte strings, 12 damaged reports.
CSV_SETTINGS = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


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
edits = st.lists(st.tuples(st.sampled_from(["delete", "insert", "replace", "cut_line", "dup_line"]),
                           st.floats(0, 1), st.text(alphabet='",\n\r=0123456789.,a/%n', max_size=6)),
                 min_size=1, max_size=8)


def _mutate(text: str, ops) -> str:
    for op, where, chunk in ops:
        i = int(where * len(text))
        if op == "delete":
            text = text[:i] + text[i + len(chunk) + 1:]
        elif op == "insert":
            text = text[:i] + chunk + text[i:]
        elif op == "replace":
            text = text[:i] + chunk + text[i + len(chunk):]
        else:
            lines = text.split("\n")
            j = int(where * (len(lines) - 1))
            lines = lines[:j] + lines[j + 1:] if op == "cut_line" else lines[:j] + [lines[j]] * 2 + lines[j:]
            text = "\n".join(lines)
    return text


@pytest.mark.skipif(not SOURCES, reason=f"shared ncu fixtures not found at {FIXTURES}")
@CSV_SETTINGS
@given(name=st.sampled_from(CSV_FIXTURES), ops=edits)
def test_mutated_csv_never_tracebacks(tmp_path, name, ops):
    path = tmp_path / "fuzz.csv"
    path.write_text(_mutate(SOURCES[name], ops), encoding="utf-8")
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
