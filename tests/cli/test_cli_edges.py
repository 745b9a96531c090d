"""Issue 19.10: CLI edges found trying flopscope as a new user would."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import pytest

from ..helpers.cli import run_cli

H100_RUN = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "gpu"
    / "nvidia_h100_80gb_hbm3"
    / "flopscope_home"
    / "runs"
    / "linear_bs8"
)


def test_import_takes_a_run_folder_whose_report_is_compressed(tmp_path):
    """The project's own H100 run folder keeps `report.ncu-rep.xz`: import said `no
    report.ncu-rep`."""
    folder = shutil.copytree(H100_RUN, tmp_path / "linear_bs8")
    assert (folder / "report.ncu-rep.xz").is_file() and not (folder / "report.ncu-rep").exists()
    home = tmp_path / "home"
    done = run_cli("import", folder, home=home)
    assert done.returncode == 0, done.stderr
    listed = json.loads(run_cli("runs", "--json", home=home).stdout)
    # ncu's own page of the same launches, one row each
    with (folder / "raw.csv").open(newline="") as f:
        rows = [r for r in csv.reader(f) if r and r[0].isdigit()]
    assert [(r["name"], r["launches"]) for r in listed] == [
        ("linear_bs8", len({r[0] for r in rows}))
    ]
    again = run_cli("import", folder, home=home)  # the same file is still recognised as stored
    assert again.returncode == 2 and "already stored as run linear_bs8" in again.stderr


def test_import_takes_a_gzip_report_too(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    fixture = (
        Path(__file__).resolve().parents[3]
        / "shared"
        / "fixtures"
        / "ncu"
        / "t4_mlp_matadd_full.ncu-rep"
    )
    if not fixture.exists():
        pytest.skip("shared ncu fixtures not found")
    (folder / "report.ncu-rep.gz").write_bytes(gzip.compress(fixture.read_bytes()))
    done = run_cli("import", folder, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr


MODELS = """
import torch.nn as nn

def mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))

def gray():
    return nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU())
"""


@pytest.mark.parametrize(
    ("name", "suggested"), [("mlp", "--input-shape 32,784"), ("gray", "--input-shape 32,1,224,224")]
)
def test_model_suggests_a_shape_its_first_layer_takes(tmp_path, name, suggested):
    """A model whose first layer is Linear(784, ...) was offered `--input-shape 32,3,224,224`, which
    does not run."""
    pytest.importorskip("torch")
    (tmp_path / "models.py").write_text(MODELS)
    spec = f"{tmp_path / 'models.py'}:{name}"
    asked = run_cli("model", spec)
    assert asked.returncode == 2 and asked.stderr.strip().endswith(f"e.g. {suggested}"), (
        asked.stderr
    )
    taken = run_cli("model", spec, "--input-shape", suggested.split()[1], "--json")
    assert taken.returncode == 0, taken.stderr


def test_sweep_from_says_it_stores_nothing(tmp_path):
    """`sweep --from FILES` analysed the files and left the user guessing whether they were now
    stored runs."""
    gpu = Path(__file__).resolve().parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3"
    files = [gpu / f"linear_bs{n}.ncu-rep.xz" for n in (1, 8, 64)]
    home = tmp_path / "home"
    done = run_cli(
        "sweep",
        "--from",
        *files,
        "--param-from-name",
        r"bs(\d+)",
        "--param",
        "batch_size",
        "--no-tui",
        home=home,
    )
    assert done.returncode == 0, done.stderr
    assert "sweep --from read 3 point(s) and stored nothing" in done.stderr
    listed = run_cli("runs", "--json", home=home)
    assert json.loads(listed.stdout) == []


def test_a_report_named_like_an_option_is_read_after_double_dash(tmp_path):
    """`--` ends the options of every command (argparse's own rule); only profile and sweep read the
    program after it (it was refused: `the following arguments are required: path`)."""
    from ..helpers.real_files import H100

    shutil.copy(H100 / "linear_bs8.csv.gz", tmp_path / "-dash.csv.gz")
    done = run_cli("report", "--json", "--", "-dash.csv.gz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["meta"]["source"].endswith("-dash.csv.gz")


def test_serve_on_a_taken_port_is_one_line_and_prints_no_url():
    """The URL was printed once a connection to the port succeeded: on a port another server holds,
    it did at once, and the URL never worked."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = run_cli("serve", "--port", port, "--host", "127.0.0.1", timeout=60)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    (line,) = done.stderr.splitlines()
    assert f"127.0.0.1:{port}" in line and "cannot listen" in line
