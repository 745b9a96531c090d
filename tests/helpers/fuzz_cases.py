"""Damaged inputs for the CLI fuzz suite (tests/core/test_fuzz.py, benchmarks/fuzz_long.py): every
real fixture, mutated the ways damaged or hostile files arrive, run through `report`, `report
--json`, `export` (CSV, JSON, Parquet) and `open --no-tui`, and the one rule they must keep: exit 0
with a sane table, or exit 2 with one line naming the file. Never a traceback, a hang, Infinity/NaN
in JSON, an infinite or negative number printed."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import math
import random
import re
import signal
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..conftest import FIXTURES
from .cli import run_in_process
from .mutate import read_table

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
# Every real fixture, and a few of the project's own H100 capture (compressed as they are stored).
SOURCES = sorted(p for p in FIXTURES.glob("*") if p.suffix != ".md") if FIXTURES.is_dir() else []
SOURCES += [
    H100 / n
    for n in (
        "elementwise_half.csv.gz",
        "gemm_bf16_4096x4096x4096.details.csv.gz",
        "elementwise_float.ncu-rep.xz",
    )
    if (H100 / n).exists()
]

COMMANDS = {
    "report": ["report"],
    "json": ["report", "--json"],
    "csv": ["export", "-o", "out.csv"],
    "json_export": ["export", "-o", "out.json"],
    "parquet": ["export", "-o", "out.parquet"],
    "open": ["open", "--no-tui"],
}
# fmt: off
NUMBERS = [
    "nan", "NaN", "inf", "-inf", "Infinity", "-1", "-0.0", "-177", "1e308",
    "1.7976931348623157e308", "1e400", "1e20", "18446744073709551615", "1e-300", "0", "", "n/a",
    "9" * 400,
]
UNITS = [
    "", "ns", "nsecond", "us", "usecond", "msecond", "second", "byte", "Kbyte", "Mbyte", "Gbyte",
    "Tbyte", "byte/s", "Gbyte/s", "byte/second", "hz", "Ghz", "Mhz", "cycle/second",
    "cycle/nsecond", "inst", "cycle", "inst/cycle", "byte/cycle", "%", "register/thread", "sector",
    "furlong", "Xbyte", "MB", "GHz", "1/s", "s/byte", "byte/furlong", "\x1b[2J", "é",
]
GARBAGE = [
    "", "x", '"', '","', "\n", "\r", "=1+1", "(mixed)", "\x00", "\ufeff", "1,2,3", "a" * 3000,
    "\u202e",
]
# fmt: on
CSV_KINDS = [
    "truncate",
    "bitflip",
    "drop_column",
    "dup_column",
    "dup_column_changed",
    "ragged_row",
    "garbage_cell",
    "number_cell",
    "number_column",
    "units_cell",
    "dup_row_changed",
    "text_edit",
    "utf16",
    "bom",
    "crlf",
    "empty",
]
BINARY_KINDS = ["truncate", "bitflip", "zero_block", "dup_block", "empty"]
WRAPS = ["none", "none", "none", "gzip", "bz2", "xz", "garbage_after_magic"]


@dataclass
class Case:
    source: str
    kind: str
    wrap: str
    command: str
    path: Path


def _plain_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz":
        return gzip.decompress(data)
    if path.suffix == ".xz":
        return lzma.decompress(data)
    return data


def _is_csv(data: bytes) -> bool:
    return not data.startswith(b"NVR\x00")


def build(rng: random.Random, folder: Path) -> Case:
    """One damaged input in `folder`. Every choice comes from `rng`, which the callers have
    hypothesis seed (st.randoms): choices spread evenly over sources, mutations and commands
    (hypothesis' own draws favour the first of each), and a seed replays a case."""
    source = rng.choice(SOURCES)
    data = _plain_bytes(source)
    if _is_csv(data):
        kind = rng.choice(CSV_KINDS)
        data = _mutate_csv(rng, data, kind)
    else:
        kind = rng.choice(BINARY_KINDS)
        data = _mutate_binary(rng, data, kind)
    wrap = rng.choice(WRAPS)
    data = _wrap(rng, data, wrap)
    path = folder / f"case{'.csv' if _is_csv(data) else '.ncu-rep'}"
    path.write_bytes(data)
    return Case(source.name, kind, wrap, rng.choice(list(COMMANDS)), path)


def _where(rng, n: int) -> int:
    return rng.randint(0, max(0, n - 1))


def _mutate_binary(rng, data: bytes, kind: str) -> bytes:
    buf = bytearray(data)
    if kind == "truncate":
        return bytes(buf[: _where(rng, len(buf))])
    if kind == "bitflip":
        for _ in range(rng.choice([1, 8, 64])):
            buf[_where(rng, len(buf))] ^= 1 << rng.randint(0, 7)
        return bytes(buf)
    if kind == "zero_block":
        at, size = _where(rng, len(buf)), rng.choice([16, 4096, 65536])
        buf[at : at + size] = bytes(len(buf[at : at + size]))
        return bytes(buf)
    if kind == "dup_block":
        at, size = _where(rng, len(buf)), rng.choice([16, 4096])
        return bytes(buf[:at] + buf[at : at + size] + buf[at:])
    return b""


def _mutate_csv(rng, data: bytes, kind: str) -> bytes:
    text = data.decode("utf-8", errors="replace")
    if kind in ("truncate", "bitflip", "empty"):
        return _mutate_binary(rng, data, kind)
    if kind == "text_edit":
        return _text_edit(rng, text).encode()
    if kind in ("utf16", "bom", "crlf"):
        return {
            "utf16": lambda: text.encode("utf-16"),
            "bom": lambda: b"\xef\xbb\xbf" + data,
            "crlf": lambda: text.replace("\n", "\r\n").encode(),
        }[kind]()
    table = read_table(_Text(text))
    rows, header = table.rows, table.header
    if not rows:
        return data
    r, c = _where(rng, len(rows)), _where(rng, len(header))
    if kind == "drop_column":
        for row in [header, table.units or [], *rows]:
            if c < len(row):
                del row[c]
    elif kind in ("dup_column", "dup_column_changed"):
        header.append(header[c])
        if table.units is not None:
            table.units.append(table.units[c] if c < len(table.units) else "")
        for row in rows:
            cell = row[c] if c < len(row) else ""
            row.append(rng.choice(NUMBERS) if kind == "dup_column_changed" else cell)
    elif kind == "ragged_row":
        rows[r] = (
            rows[r][: _where(rng, len(rows[r]))] if rng.random() < 0.5 else rows[r] + ["1"] * 3
        )
    elif kind == "garbage_cell":
        if c < len(rows[r]):
            rows[r][c] = rng.choice(GARBAGE)
    elif kind in ("number_cell", "number_column"):
        c = _numeric_column(rng, table)
        for row in rows if kind == "number_column" else [rows[r]]:
            if c < len(row):
                row[c] = rng.choice(NUMBERS)
    elif kind == "units_cell":
        if table.units is not None:
            table.units[c if c < len(table.units) else 0] = rng.choice(UNITS)
        elif "Metric Unit" in header:
            rows[r][header.index("Metric Unit")] = rng.choice(UNITS)
    elif kind == "dup_row_changed":
        twin = list(rows[r])
        c = _numeric_column(rng, table)
        if c < len(twin):
            twin[c] = rng.choice(NUMBERS)
        rows.insert(r + 1, twin)
    return table.text().encode()


def _numeric_column(rng, table) -> int:
    """A column of counter values: the details page's value column, else a metric column of the raw
    page."""
    if "Metric Value" in table.header:
        return table.header.index("Metric Value")
    metrics = [k for k, h in enumerate(table.header) if "__" in h] or [0]
    return rng.choice(metrics)


class _Text:
    """What mutate.read_table reads: a path-like with the text already decoded."""

    def __init__(self, text: str) -> None:
        self.text = text

    def read_text(self, encoding: str = "utf-8-sig") -> str:
        return self.text.lstrip("\ufeff")


EDITS = ["delete", "insert", "replace", "cut_line", "dup_line"]


def edit_text(text: str, edits: Iterable[tuple[str, float, str]]) -> str:
    """TEXT with each edit applied in turn: (one of EDITS, where as a fraction of the text, a chunk
    of text). `delete` removes len(chunk) + 1 characters, `insert` and `replace` put the chunk in,
    `cut_line` and `dup_line` drop or double the line there (test_fuzz draws the edits with
    hypothesis, `build` with rng)."""
    for op, where, chunk in edits:
        i = int(where * len(text))
        if op == "delete":
            text = text[:i] + text[i + len(chunk) + 1 :]
        elif op == "insert":
            text = text[:i] + chunk + text[i:]
        elif op == "replace":
            text = text[:i] + chunk + text[i + len(chunk) :]
        else:
            lines = text.split("\n")
            j = int(where * (len(lines) - 1))
            lines = (
                lines[:j] + lines[j + 1 :]
                if op == "cut_line"
                else lines[:j] + [lines[j]] * 2 + lines[j:]
            )
            text = "\n".join(lines)
    return text


def _text_edit(rng, text: str) -> str:
    """Insertions, deletions, replacements of CSV-ish characters; cut and doubled lines."""
    edits = []
    # drawn in the order they always were: a seed replays the same case
    for _ in range(rng.randint(1, 6)):
        op, where = rng.choice(EDITS), rng.random()
        edits.append(
            (
                op,
                where,
                "".join(rng.choice('",\n\r=0123456789.,a/%n-e') for _ in range(rng.randint(0, 6))),
            )
        )
    return edit_text(text, edits)


def _wrap(rng, data: bytes, wrap: str) -> bytes:
    if wrap == "gzip":
        return gzip.compress(data, 1)
    if wrap == "bz2":
        return bz2.compress(data, 1)
    if wrap == "xz":
        return lzma.compress(data, preset=0)
    if wrap == "garbage_after_magic":
        magic = rng.choice([b"\x1f\x8b\x08\x00", b"\xfd7zXZ\x00", b"BZh9", b"NVR\x00"])
        return magic + rng.randbytes(rng.randint(0, 200))
    return data


class Hang(BaseException):
    """A case past its time limit (BaseException: the CLI's OSError handlers must not swallow
    it)."""


def run(
    case: Case, folder: Path, limit_s: int = 60, env: dict | None = None
) -> tuple[int, str, str]:
    """Run the case's command in this process within `limit_s` seconds; check the rule; (code, out,
    err)."""
    args = [a if not a.startswith("out.") else str(folder / a) for a in COMMANDS[case.command]]
    args.insert(1, str(case.path))

    def alarm(signum, frame):
        raise Hang(f"{case} took over {limit_s} s")

    before = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(limit_s)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code, out, err = run_in_process(
                *args, env={"FLOPSCOPE_FIFO_WAIT": "0.3", **(env or {})}
            )
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    numpy_warnings = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not numpy_warnings, (case, numpy_warnings)
    check(case, folder, code, out, err)
    return code, out, err


# What must never show in a table or a warning line: infinite or NaN results, negative times.
_NOT_A_NUMBER = re.compile(
    r"∞ ?(B/s|FLOP/s|%)|\binf%|\bnan\b|NaN|(?<![\w.+-])-\d[\d.]*\s?(s|ms|us|ns|B|FLOP)\b"
)
_MAY_BE_NEGATIVE = {"launch_id"}


def check(case: Case, folder: Path, code: int, out: str, err: str) -> None:
    assert code in (0, 2), (case, code, err[-3000:])
    assert "Traceback" not in err, (case, err[-3000:])
    if code == 2:
        lines = err.strip("\n").split("\n")
        assert len(lines) == 1 and lines[0].startswith("flopscope: "), (case, err[-3000:])
        assert (
            str(case.path) in lines[0] or "standard input" in lines[0] or str(folder) in lines[0]
        ), (case, lines)
        assert out == "", (case, out[:500])
        return
    shown = out + err
    if case.command in ("report", "open", "csv", "json_export", "parquet"):
        bad = _NOT_A_NUMBER.search(_without_names(shown, case))
        assert bad is None, (case, bad, shown[max(0, bad.start() - 300) : bad.end() + 100])
    if case.command == "json":
        _check_rows(case, json.loads(out, parse_constant=_refuse_constant)["rows"])
    elif case.command == "json_export":
        _check_rows(
            case,
            json.loads((folder / "out.json").read_text(), parse_constant=_refuse_constant)["rows"],
        )
    elif case.command == "csv":
        pd.read_csv(folder / "out.csv")
    elif case.command == "parquet":
        pd.read_parquet(folder / "out.parquet")


def _without_names(text: str, case: Case) -> str:
    """The output without the file's own text (kernel names, NVTX ranges may hold anything, `nan`
    included): only lines that are not table rows are checked as a whole; table rows from their
    first number on."""
    # a doubled Kernel Name column may say `NaN`
    text_edited = ("garbage_cell", "text_edit", "dup_column_changed")
    return (
        re.sub(r"^.*?(?=\s\d)", "", text, flags=re.MULTILINE) if case.kind in text_edited else text
    )


def _refuse_constant(name: str):
    raise AssertionError(f"{name} in JSON: not strict JSON")


def _check_rows(case: Case, rows: list[dict]) -> None:
    for row in rows:
        for key, value in row.items():
            if isinstance(value, float) and key not in _MAY_BE_NEGATIVE:
                assert math.isfinite(value) and value >= 0, (case, key, value)
