"""Names flopscope writes stay inside the data folder or where the user pointed: a run name, a sweep
name or an export path that tries to climb out (`../../x`), is absolute, or meets a symbolic link
planted beside it is refused or replaces the link, never followed into another folder."""

from __future__ import annotations

import pytest
from flopscope.core import FlopscopeError
from flopscope.core.store.run_folders import new_run_dir

from ..conftest import fixture_path
from ..helpers.cli import run_cli


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A data folder of its own, and a folder beside it that nothing may be written into."""
    monkeypatch.setenv("FLOPSCOPE_HOME", str(tmp_path / "home"))
    (tmp_path / "outside").mkdir()
    return tmp_path


def _outside_untouched(home) -> None:
    assert list((home / "outside").iterdir()) == []
    # the data folder, if made, and nothing else
    assert {p.name for p in home.iterdir()} <= {"home", "outside"}


@pytest.mark.parametrize(
    "name", ["../../x", "../outside/x", "runs/../../x", "a/b", "..", "ABSOLUTE"]
)
def test_a_run_folder_name_that_is_not_one_folder_name_is_refused(home, name):
    name = str(home / "outside" / "x") if name == "ABSOLUTE" else name
    with pytest.raises(FlopscopeError, match="one folder name"):
        new_run_dir(name, ["prog"])
    _outside_untouched(home)


def test_a_symlinked_runs_folder_is_refused_not_followed(home):
    (home / "home").mkdir()
    (home / "home" / "runs").symlink_to(home / "outside")
    with pytest.raises(FlopscopeError, match="symbolic link"):
        new_run_dir("run1", ["prog"])
    with pytest.raises(FlopscopeError, match="symbolic link"):
        new_run_dir(None, ["prog"])
    _outside_untouched(home)


def test_a_link_planted_under_a_run_name_is_passed_over(home):
    (home / "home" / "runs").mkdir(parents=True)
    (home / "home" / "runs" / "run1").symlink_to(home / "outside")
    made = new_run_dir("run1", ["prog"])
    assert made == home / "home" / "runs" / "run1-1" and made.is_dir() and not made.is_symlink()
    _outside_untouched(home)


@pytest.mark.parametrize("option", ["--name", "--sweep-name"])
@pytest.mark.parametrize("name", ["../../x", "/etc/x"])
def test_the_cli_refuses_a_run_or_sweep_name_with_a_path_in_it(home, option, name):
    command = "sweep" if option == "--sweep-name" else "profile"
    extra = ["--param", "n=1"] if command == "sweep" else []
    done = run_cli(command, *extra, option, name, "--no-tui", "--", "true", home=home / "home")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert name in done.stderr
    _outside_untouched(home)


def test_an_export_onto_a_planted_symlink_replaces_the_link_not_its_target(home):
    target = home / "outside" / "victim.csv"
    target.write_text("precious\n")
    link = home / "kernels.csv"
    link.symlink_to(target)
    done = run_cli("export", fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"), "-o", link)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "precious\n"
    assert not link.is_symlink() and "kernel_full" in link.read_text().splitlines()[0]
