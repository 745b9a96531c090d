"""`export --columns A,B,C` (issue 43.2): only those columns, after the name, in the order given, by
title or --json key, as `report --columns` takes them; the values are the full export's, row for row
(read back with Python's csv, not the engine); a name that is no column is one line, exit 2, and no
file."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ..helpers.cli import run_cli

DEMO = Path(__file__).parents[2] / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_export_writes_only_the_columns_named_in_their_order(tmp_path):
    full, chosen = tmp_path / "all.csv", tmp_path / "chosen.csv"
    where = ("--where", "time > 2us", "--sort", "registers")
    done = run_cli("export", DEMO, "-o", full, *where)
    assert done.returncode == 0, done.stderr
    done = run_cli("export", DEMO, "-o", chosen, "--columns", "registers, %roof,Time,grid", *where)
    assert done.returncode == 0, done.stderr
    with chosen.open(newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert header == ["kernel", "registers", "pct_of_roof", "duration_s", "grid"]
    every, picked = _read(full), _read(chosen)
    assert len(every) > 1 and len(picked) == len(every)  # the same rows, in the same order
    assert len(every[0]) > len(header)
    assert picked == [{k: row[k] for k in header} for row in every]


def test_export_columns_by_launch_and_to_json(tmp_path):
    out = tmp_path / "launches.json"
    done = run_cli("export", DEMO, "-o", out, "--by", "launch", "--columns", "count,Time")
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["rows"]
    # count: a launch's ID
    assert rows and all(list(r) == ["kernel", "launch_id", "duration_s"] for r in rows)


def test_export_a_column_that_is_none_is_one_line_exit_2(tmp_path):
    out = tmp_path / "x.csv"
    done = run_cli("export", DEMO, "-o", out, "--columns", "Time,regs")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "flopscope: --columns Time,regs: no column 'regs'; did you mean registers? use titles or"
        " --json keys, comma-separated"
    ]
    assert not out.exists()
    tree = run_cli("export", DEMO, "-o", out, "--by", "module", "--columns", "Time")
    assert tree.returncode == 2 and "not the module tree" in tree.stderr and not out.exists()
