"""`flopscope profile` against the project's own H100 captures
(tests/data/gpu/nvidia_h100_80gb_hbm3/, ncu 2025.3.1), replayed line for line by the ncu stand-in:
flopscope must print, store and show what it printed, stored and showed on the GPU. Expected values
come from the captured files, never from the code under test."""

from __future__ import annotations

import csv
import gzip
import json
import lzma
import os
import re
import subprocess
from pathlib import Path

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.h100_replay import H100, LINEAR_BS8, RUN, WORKLOADS, replay_ncu
from ..helpers.profile import make_ncu, one_error_line, remote

# no real ncu to import with (over ssh, or none installed)
RAW_NOTE = "flopscope: raw CSV page not saved"
# the time and passes a run took (tests/test_plan.py), printed since the capture
COST_NOTE = "flopscope: profiled "
WIDTH = 160  # the table's width on the H100: printed to a file, flopscope takes 160 columns


def captured_flopscope() -> tuple[list[str], list[str]]:
    """What flopscope printed on the H100 (2>&1): its stderr up to the stored-run line, then the
    table."""
    lines = (H100 / "flopscope_profile.stream.txt").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if line.startswith("flopscope: stored as run")) + 1
    return lines[:cut], lines[cut:]


def normalized(lines: list[str], home: str) -> list[str]:
    """Without what differs from run to run: elapsed times, the host's name, ncu's temporary work
    folder, the store's folder."""
    out = []
    for line in lines:
        line = re.sub(r"^\[\s*\d+\.\ds\] ", "", line)
        line = re.sub(r"^flopscope: profiling on \S+;", "flopscope: profiling on HOST;", line)
        line = re.sub(r"\S*/flopscope\.\w+/report\.ncu-rep", "WORKDIR/report.ncu-rep", line)
        out.append(line.replace(home, "HOME"))
    return out


def table(lines: list[str]) -> list[str]:
    """A printed report from its ceilings line on (the line above names the file it was read from),
    the run's clock as the H100 printed it then (at the end, `(SM 1.97 GHz)`; now once, at the
    start: issue 41.2)."""
    lines = lines[next(i for i, line in enumerate(lines) if line.startswith("Ceilings")) :]
    clock = re.match(r"Ceilings at SM (\S+ [GM]Hz): ", lines[0])
    if clock:
        lines[0] = lines[0].replace(clock.group(0), "Ceilings: ")
        at = next(
            i for i, line in enumerate(lines) if "from report counters x measured clock" in line
        )
        lines[at] = lines[at].replace("measured clock", f"measured clock (SM {clock.group(1)})", 1)
    return lines


def bound_words(lines: list[str]) -> list[str]:
    """The captured table in today's Bound words: the export's `roof` words (`dram`, not `DRAM`;
    issue 19.4)."""
    return [
        re.sub(r"(?<=  )(DRAM|L2|L1)(?=  )", lambda m: m.group(0).lower(), line) for line in lines
    ]


# The header's run-level figures as the H100 printed them, and as they are named today (issue 41.4).
RUN_FIGURES = {
    "FLOPS eff": "FLOP %Peak",
    "compute eff": "arith. time",
    "bandwidth eff": "DRAM %Peak",
}


def today(lines: list[str]) -> list[str]:
    """The captured report in today's words (bound_words) and run-level figures' names (issue 41.4),
    without its judged column: the H100 printed %Peak where today's table has %Roof (another number,
    same width)."""
    lines = bound_words(lines)
    for then, now in RUN_FIGURES.items():
        lines = [line.replace(f" {then} ", f" {now} ") for line in lines]
    return without_judged_column(lines)


def without_judged_column(lines: list[str]) -> list[str]:
    """The table's lines without its %Peak or %Roof column (right-aligned: its cells end where its
    title does)."""
    # the titles, not `Kernel time`
    at = next(i for i, line in enumerate(lines) if line.startswith("Kernel  "))
    end = next(i for i in range(at, len(lines)) if " row(s) · " in lines[i])
    title = re.search(r"(?<=  )(%Peak|%Roof)(?=  )", lines[at])
    stop = title.end()
    width = max(len(lines[r][:stop].split()[-1]) for r in range(at, end))
    return [
        line[: stop - width - 2] + line[stop:] if at <= i < end else line
        for i, line in enumerate(lines)
    ]


def decompressed(xz: Path) -> bytes:
    return lzma.decompress(xz.read_bytes())


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_profile_prints_stores_and_shows_what_it_did_on_the_h100(tmp_path, request, where):
    ncu = replay_ncu(tmp_path, RUN / "ncu.log", RUN / "report.ncu-rep.xz")
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    home = tmp_path / "home"
    out = flopscope(
        "profile",
        *host,
        "--ncu",
        ncu,
        "--no-tui",
        "--clock-control",
        "none",
        "--name",
        "linear_bs8",
        "--",
        *LINEAR_BS8,
        home=home,
        columns=WIDTH,
    )
    assert out.returncode == 0, out.stderr
    progress, shown = captured_flopscope()
    captured_home = re.search(r"run folder (\S+)/runs/linear_bs8$", progress[0]).group(1)
    printed = [
        line for line in out.stderr.splitlines() if not line.startswith((RAW_NOTE, COST_NOTE))
    ]
    assert normalized(printed, str(home)) == normalized(progress, captured_home)
    assert without_judged_column(table(out.stdout.splitlines())) == today(table(shown))
    run = home / "runs" / "linear_bs8"
    assert (run / "report.ncu-rep").read_bytes() == decompressed(RUN / "report.ncu-rep.xz")
    assert (run / "ncu.log").read_text().splitlines()[:-1] == (
        RUN / "ncu.log"
    ).read_text().splitlines()[:-1]
    assert_same_ncu_argv(run / "run.json")


def assert_same_ncu_argv(run_json: Path) -> None:
    """The ncu command line flopscope builds today is the one it built on the H100, up to the ncu it
    was given, the temporary report stem and where workloads.py is."""

    def shape(path: Path) -> tuple[list[str], int, int]:
        meta = json.loads(path.read_text())
        argv = meta["ncu_argv"]
        argv = [a if a != argv[argv.index("--export") + 1] else "STEM" for a in argv[1:]]
        return (
            [re.sub(r"^/\S+/tests/data/gpu/workloads\.py$", "WORKLOADS", a) for a in argv],
            meta["ncu_exit"],
            meta["kernels_profiled"],
        )

    assert shape(run_json) == shape(RUN / "run.json")


def test_the_stored_run_is_the_captured_report(tmp_path):
    """`open` of the replayed run and `report` of the captured report: one table, and the table
    flopscope printed on the H100."""
    home = tmp_path / "home"
    ncu = replay_ncu(tmp_path, RUN / "ncu.log", RUN / "report.ncu-rep.xz")
    out = flopscope(
        "profile",
        "--ncu",
        ncu,
        "--no-tui",
        "--clock-control",
        "none",
        "--name",
        "linear_bs8",
        "--",
        *LINEAR_BS8,
        home=home,
    )
    assert out.returncode == 0, out.stderr
    assert [r["name"] for r in json.loads(flopscope("runs", "--json", home=home).stdout)] == [
        "linear_bs8"
    ]
    opened = flopscope("open", "linear_bs8", "--no-tui", home=home, columns=WIDTH)
    captured = flopscope("report", RUN / "report.ncu-rep.xz", home=home, columns=WIDTH)
    assert opened.returncode == captured.returncode == 0, opened.stderr + captured.stderr
    printed_on_h100 = today(table(captured_flopscope()[1]))
    assert table(opened.stdout.splitlines()) == table(captured.stdout.splitlines())
    assert without_judged_column(table(opened.stdout.splitlines())) == printed_on_h100
    as_json = [
        json.loads(flopscope(*cmd, "--json", home=home).stdout)["rows"]
        for cmd in (("open", "linear_bs8"), ("report", RUN / "report.ncu-rep.xz"))
    ]
    assert [(r["kernel_full"], r["flop"], r["duration_s"]) for r in as_json[0]] == [
        (r["kernel_full"], r["flop"], r["duration_s"]) for r in as_json[1]
    ]


def test_the_replay_is_the_capture_line_for_line(tmp_path):
    """The stand-in's own output: ncu.log on stdout (ncu 2025.3.1 writes all its lines there, stderr
    stayed empty on the H100), the report written where --export says and named in the last line."""
    ncu = replay_ncu(tmp_path, RUN / "ncu.log", RUN / "report.ncu-rep.xz")
    out = subprocess.run(
        [str(ncu), "--export", str(tmp_path / "r"), "--force-overwrite", *LINEAR_BS8],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (out.returncode, out.stderr) == (0, "")
    *same, report = (RUN / "ncu.log").read_text().splitlines()
    assert out.stdout.splitlines() == [*same, f"==PROF== Report: {tmp_path / 'r'}.ncu-rep"]
    # the captured line, for its path alone
    assert report.startswith("==PROF== Report: /tmp/flopscope.")
    assert (tmp_path / "r.ncu-rep").read_bytes() == decompressed(RUN / "report.ncu-rep.xz")


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_a_program_that_does_not_exist_is_one_line_naming_it(tmp_path, request, where):
    """ncu 2025.3.1's own answer (fail_no_app.stream.txt): one ==ERROR== line, exit 1, no report.
    flopscope says it in one line with where a relative path is looked up from, and keeps no run
    folder."""
    ncu_line = (
        (H100 / "fail_no_app.stream.txt").read_text().splitlines()[0].removeprefix("==ERROR== ")
    )
    program = re.match(r"'(.+?)'", ncu_line).group(1)
    host = remote(request.getfixturevalue("server")) if where == "ssh" else []
    home = tmp_path / "home"
    out = flopscope(
        "profile",
        *host,
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--name",
        "np",
        "--",
        program,
        "x",
        home=home,
    )
    line = one_error_line(out)
    assert ncu_line in line and f"'{program}'" in line
    assert "--remote-cwd" in line and "absolute path" in line
    assert ("the login folder on gpubox" in line) == (where == "ssh")
    # before: advice to run again as it had just been run
    assert "prints every line ncu wrote" not in line
    assert not (home / "runs").exists() or not list((home / "runs").iterdir())


def unknown_metric_capture() -> tuple[list[str], list[str], dict[str, float]]:
    """The metrics asked for on the H100 with one name misspelled, those its raw page lacks, and
    each kernel's gpu__time_duration.sum (ns) from that page."""
    asked = (H100 / "unknown_metric.metrics.txt").read_text().strip().split(",")
    with gzip.open(H100 / "unknown_metric.csv.gz", "rt") as f:
        header, units, *rows = list(csv.reader(f))
    at, name = header.index("gpu__time_duration.sum"), header.index("Kernel Name")
    assert units[at] == "ns"
    times: dict[str, float] = {}
    for row in rows:  # ncu prints `2,944`: thousands separated
        times[row[name]] = times.get(row[name], 0.0) + float(row[at].replace(",", ""))
    return asked, [m for m in asked if m not in header], times


def test_an_unknown_metric_that_ncu_profiles_past_is_named(tmp_path):
    """ncu 2025.3.1 given a metric it does not know profiles anyway and exits 0 (captured on the
    H100: fail_bad_metric, and unknown_metric, flopscope's own roofline list with the FFMA counter
    misspelled). Before: exit 0, the misspelled name never mentioned. Now: a warning names it, the
    FLOPs it would have counted are unknown (not 0) with the ncu option that collects them, and the
    run is stored with exit 1."""
    asked, unknown, times = unknown_metric_capture()
    assert len(unknown) == 1
    # the list as flopscope built it on the H100
    argv = json.loads((RUN / "run.json").read_text())["ncu_argv"]
    needed = [m for m in argv[argv.index("--metrics") + 1].split(",") if m not in asked]
    home = tmp_path / "home"
    ncu = replay_ncu(
        tmp_path, H100 / "unknown_metric.stream.txt", H100 / "unknown_metric.ncu-rep.xz"
    )
    out = flopscope(
        "profile",
        "--ncu",
        ncu,
        "--no-tui",
        "--json",
        "--clock-control",
        "none",
        "--metrics",
        ",".join(asked),
        "--name",
        "typo",
        "--",
        *LINEAR_BS8,
        home=home,
    )
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    warning = [line for line in out.stderr.splitlines() if "warning: --metrics" in line]
    assert (
        len(warning) == 1
        and f"--metrics {unknown[0]}: ncu collected no value for it (n/a)" in warning[0]
    )
    missing = [line for line in out.stderr.splitlines() if "not collected" in line]
    assert (
        len(missing) == 1 and f"collect it with `ncu --metrics {','.join(needed)}`" in missing[0]
    ), missing
    rows = json.loads(out.stdout)["rows"]
    assert [r["flop"] for r in rows] == [None, None]  # unknown, not zero
    # The rest of the profile is there: each kernel's time is the raw page's (names are shortened,
    # so sorted).
    assert sorted(r["duration_s"] for r in rows) == pytest.approx(
        sorted(t * 1e-9 for t in times.values())
    )
    assert "typo" in [r["name"] for r in json.loads(flopscope("runs", "--json", home=home).stdout)]


def test_a_sweep_with_an_unknown_metric_exits_1_as_profile_does(tmp_path):
    """The same replayed profile at two points of a sweep: both stored and analysed, each point's
    line names the metric ncu profiled past, and the sweep counts them as points with a warning
    (exit 1, not 0)."""
    asked, unknown, _ = unknown_metric_capture()
    ncu = replay_ncu(
        tmp_path, H100 / "unknown_metric.stream.txt", H100 / "unknown_metric.ncu-rep.xz"
    )
    out = flopscope(
        "sweep",
        "--param",
        "batch_size=8,16",
        "--ncu",
        ncu,
        "--no-tui",
        "--clock-control",
        "none",
        "--metrics",
        ",".join(asked),
        "--",
        *LINEAR_BS8[:-1],
        "{batch_size}",
        home=tmp_path / "home",
    )
    assert out.returncode == 1, out.stderr
    assert "2 of 2 point(s) stored, 2 with a warning" in out.stderr
    assert (
        sum(
            f"--metrics {unknown[0]}: ncu collected no value" in line
            for line in out.stderr.splitlines()
        )
        == 2
    )


def test_only_names_the_report_lacks_in_every_form_are_unknown(tmp_path):
    """A base name is held by its rollups (ncu collects `dram__bytes_read` as `.sum`, `.avg`, ...);
    a regex cannot be checked by name. Only the misspelled name is absent from the H100 report."""
    from flopscope.core.readers.ncu_rep import absent_metrics

    _, unknown, _ = unknown_metric_capture()
    report = tmp_path / "unknown_metric.ncu-rep"
    report.write_bytes(decompressed(H100 / "unknown_metric.ncu-rep.xz"))
    names = [
        "dram__bytes_read",
        "dram__bytes_read.sum",
        "regex:^nothing$",
        *unknown,
        "dram__bytes_rea",
    ]
    assert absent_metrics(report, names) == [*unknown, "dram__bytes_rea"]


def test_a_training_step_replays_every_kernel(tmp_path):
    """The bf16 transformer step (91 kernels, a Python warning of the program's own among ncu's
    lines): one progress line per kernel as ncu announced it, and the stored run is the captured
    report."""
    stream = H100 / "train_transformer_bf16_bs8.stream.txt"
    announced = [
        m.groups()
        for m in re.finditer(
            r'^==PROF== Profiling "(.*)" - (\d+): .* - (\d+) passes$', stream.read_text(), re.M
        )
    ]
    home = tmp_path / "home"
    ncu = replay_ncu(tmp_path, stream, H100 / "train_transformer_bf16_bs8.ncu-rep.xz")
    command = [
        "python3",
        str(WORKLOADS),
        "train",
        "--model",
        "transformer",
        "--batch-size",
        "8",
        "--amp",
        "bf16",
    ]
    out = flopscope(
        "profile",
        "--ncu",
        ncu,
        "--no-tui",
        "--json",
        "--name",
        "step",
        "--",
        *command,
        home=home,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    progress = re.findall(
        r"^\[\s*\d+\.\ds\] kernel (\d+): (.*) \((\d+) passes\)$", out.stderr, re.M
    )
    assert len(announced) == 91 and progress == [(i, name, passes) for name, i, passes in announced]
    assert "sys:1: UserWarning: Full backward hook is firing" in out.stderr
    reported = json.loads(
        flopscope(
            "report", H100 / "train_transformer_bf16_bs8.ncu-rep.xz", "--json", home=home
        ).stdout
    )["rows"]
    assert [(r["kernel_full"], r["flop"]) for r in json.loads(out.stdout)["rows"]] == [
        (r["kernel_full"], r["flop"]) for r in reported
    ]


@pytest.mark.skipif(
    not os.environ.get("FLOPSCOPE_REAL_NCU"), reason="no real ncu: set FLOPSCOPE_REAL_NCU"
)
def test_the_raw_page_of_the_replayed_run_reads_as_the_captured_one(tmp_path):
    """With a real ncu to import with, the raw page flopscope saves holds the H100 run's numbers."""
    from flopscope.core import read_report

    home = tmp_path / "home"
    ncu = replay_ncu(tmp_path, RUN / "ncu.log", RUN / "report.ncu-rep.xz")
    out = flopscope(
        "profile",
        "--ncu",
        ncu,
        "--no-tui",
        "--clock-control",
        "none",
        "--name",
        "linear_bs8",
        "--",
        *LINEAR_BS8,
        home=home,
    )
    assert out.returncode == 0 and RAW_NOTE not in out.stderr, out.stderr
    columns = ["flop", "duration_s", "dram_bytes"]
    saved, captured = (
        read_report(p).kernels[columns].to_numpy()
        for p in (home / "runs" / "linear_bs8" / "raw.csv", RUN / "raw.csv")
    )
    assert saved == pytest.approx(captured, rel=1e-6)
