"""`report --columns A,B,C` (issue 43.2): the printed table's columns, after the name, in the order
given, by title or --json key; one that names no column is one line, exit 2."""

from __future__ import annotations

from pathlib import Path

from flopscope.core import read_report

from ..helpers.cli import run_cli

DEMO = Path(__file__).parents[2] / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"


def test_columns_are_printed_in_the_order_given_by_title_or_key():
    done = run_cli(
        "report", DEMO, "--columns", "registers, %roof,Time,grid", "--top", "3", columns=160
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # the table's, not "Kernel time"
    header = next(line for line in lines if line.startswith("Kernel  "))
    assert header.split() == ["Kernel", "registers", "%Roof", "Time", "grid"]
    rows = read_report(DEMO).group("name").head(3)
    body = lines[lines.index(header) + 1 : lines.index(header) + 4]
    end = header.index("registers") + len("registers")  # a number's cell ends under its title's end
    for line, registers in zip(body, rows["registers"], strict=True):
        assert line[:end].split()[-1] == str(int(registers)), line


def test_a_column_that_is_none_is_one_line_exit_2():
    done = run_cli("report", DEMO, "--columns", "Time,regs")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "flopscope: --columns Time,regs: no column 'regs'; did you mean registers? use titles or"
        " --json keys, comma-separated"
    ]
    tree = run_cli("report", DEMO, "--by", "module", "--columns", "Time")
    assert tree.returncode == 2 and "not the module tree" in tree.stderr
