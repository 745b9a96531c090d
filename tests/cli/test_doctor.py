"""`flopscope doctor` and the pre-flight of `profile` and `sweep`, here and over a real loopback
sshd.

Each host is a fabricated tree (FLOPSCOPE_DOCTOR_ROOT): /proc files as the kernel writes them, and
`nvidia-smi` and `ncu` stand-ins that print what the H100 capture recorded
(tests/data/gpu/.../environment.txt: `nvidia-smi -q` and `ncu --version` on the device), changed one
fact at a time for each failure."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from ..helpers.cli import run_cli as flopscope
from ..helpers.profile import make_ncu

H100 = Path(__file__).parents[1] / "data" / "gpu" / "nvidia_h100_80gb_hbm3" / "environment.txt"
ROOT_ENV = "FLOPSCOPE_DOCTOR_ROOT"


def recorded() -> dict:
    """The H100's facts as the capture recorded them, read here independently of flopscope's
    probe."""
    text = H100.read_text()
    field = lambda label: re.search(rf"^\s*{label}\s*:\s*(.+)$", text, re.M).group(1).strip()  # noqa: E731
    mig = re.search(r"MIG Mode\s*\n\s*Current\s*:\s*(\w+)", text).group(1)
    cc = re.search(r"major=(\d+), minor=(\d+)", text)
    return {
        "name": field("Product Name"),
        "driver": field("Driver Version"),
        "persistence": field("Persistence Mode"),
        "mig": mig,
        "cc": f"{cc.group(1)}.{cc.group(2)}",
        "ncu_version": "\n".join(
            line
            for line in text.splitlines()
            if "Nsight Compute" in line
            or line.startswith(("Copyright (c) 2018-2025", "Version 20"))
        ),
        "ncu": re.search(r"^Version (\S+)", text, re.M).group(1),
    }


def _script(path: Path, output: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\ncat <<'EOF'\n" + output + "\nEOF\n")
    path.chmod(0o755)


def host_tree(
    tmp_path: Path,
    *,
    admin_only: int = 0,
    ncu: bool = True,
    ncu_version: str | None = None,
    driver: str | None = None,
    mig: str | None = None,
    home: bool = True,
    uid: int = 1000,
    container: bool = False,
    cap_eff: str = "00000000a80425fb",
) -> Path:
    """A host as doctor reads it, the recorded H100 by default."""
    h = recorded()
    root = tmp_path / "host"
    (root / "proc/driver/nvidia").mkdir(parents=True)
    (root / "proc/driver/nvidia/params").write_text(
        "ResmanDebugLevel: 4294967295\nRmLogonRC: 1\nRmProfilingAdminOnly:"
        f" {admin_only}\nNumVirtualFunctions: 0\n"
    )
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/status").write_text(
        f"Name:\tpython3\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nCapInh:\t0000000000000000\nCapEff:\t{cap_eff}\n"
    )
    (root / "proc/1").mkdir(parents=True)
    (root / "proc/1/cgroup").write_text("0::/\n")
    if container:
        (root / ".dockerenv").write_text("")
    _script(
        root / "usr/bin/nvidia-smi",
        f"0, {h['name']}, {h['cc']}, {mig or h['mig']}, {h['persistence']},"
        f" {driver or h['driver']}",
    )
    if ncu:
        version = (
            h["ncu_version"].replace(h["ncu"], ncu_version) if ncu_version else h["ncu_version"]
        )
        _script(root / "usr/bin/ncu", version)
    (root / "tmp").mkdir()
    if home:
        (root / str(Path.home()).lstrip("/")).mkdir(parents=True)
    return root


def where_args(request, where: str) -> list:
    if where == "local":
        return []
    srv = request.getfixturevalue("server")
    return ["--host", srv.alias, "--ssh-config", srv.config]


def doctor(root: Path, *args):
    return flopscope("doctor", *args, env={ROOT_ENV: str(root), "TMPDIR": "/tmp"})


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_the_recorded_h100_is_ready_to_profile(tmp_path, request, where):
    h = recorded()
    out = doctor(host_tree(tmp_path), *where_args(request, where))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert all(line.startswith(("OK", "WARN")) for line in lines[:-1]), out.stdout
    assert f"version {h['ncu']}" in out.stdout and h["driver"] in out.stdout
    assert f"{h['name']}, CC {h['cc']}, MIG off, persistence on" in out.stdout
    assert "(RmProfilingAdminOnly: 0)" in out.stdout
    assert lines[-1].endswith("ready to profile")


FAILURES = {  # what is wrong with the host: (tree, the failing check, words of its fix)
    "admin-only profiling": (
        dict(admin_only=1),
        "profiling permission",
        "NVreg_RestrictProfilingToAdminUsers=0",
    ),
    "no ncu": (dict(ncu=False), "ncu", "install Nsight Compute"),
    "old ncu for the driver": (
        dict(ncu_version="2025.3.1.0", driver="570.133.20"),
        "ncu and driver",
        "update the driver to >= 580",
    ),
    "MIG on": (dict(mig="Enabled"), "GPU 0", "nvidia-smi -i 0 -mig 0"),
    "no writable home": (dict(home=False), "home folder", "--env HOME="),
    "container without SYS_ADMIN": (
        dict(admin_only=1, uid=0, container=True),
        "container",
        "--cap-add=SYS_ADMIN",
    ),
}


@pytest.mark.parametrize("where", ["local", "ssh"])
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_gives_its_fix_and_exit_1(tmp_path, request, where, failure):
    tree, name, fix = FAILURES[failure]
    out = doctor(host_tree(tmp_path, **tree), *where_args(request, where), "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["ok"] is False
    bad = [c for c in doc["checks"] if c["status"] == "fail"]
    assert [c["name"] for c in bad] == [name]
    assert fix in bad[0]["fix"]
    text = doctor(host_tree(tmp_path / "again", **tree), *where_args(request, where))
    assert text.returncode == 1
    line = next(ln for ln in text.stdout.splitlines() if ln.startswith("FAIL"))
    assert name in line and f"fix: {bad[0]['fix']}" in line
    assert text.stdout.splitlines()[-1].endswith("1 problem(s) would stop ncu")


def test_root_with_counters_for_admins_may_profile(tmp_path):
    out = doctor(host_tree(tmp_path, admin_only=1, uid=0), "--json")
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert out.returncode == 0 and checks["profiling permission"]["status"] == "ok"
    assert "running as root" in checks["profiling permission"]["detail"]


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_profile_refuses_admin_only_counters_before_ncu_runs(tmp_path, request, where):
    ncu = make_ncu(tmp_path)
    out = flopscope(
        "profile",
        *where_args(request, where),
        "--ncu",
        ncu,
        "--no-tui",
        "--name",
        "r",
        "--",
        sys.executable,
        "-c",
        "print('the program ran')",
        home=tmp_path / "home",
        env={ROOT_ENV: str(host_tree(tmp_path, admin_only=1))},
    )
    assert out.returncode == 2, out.stderr
    errors = [
        ln for ln in out.stderr.splitlines() if ln.startswith("flopscope: profiling permission")
    ]
    assert len(errors) == 1 and "NVreg_RestrictProfilingToAdminUsers=0" in errors[0]
    assert "the program ran" not in out.stderr and "Connected to process" not in out.stderr
    assert not (tmp_path / "home" / "runs" / "r").exists()


def test_sweep_refuses_a_host_with_admin_only_counters_before_any_point(tmp_path):
    out = flopscope(
        "sweep",
        "--param",
        "n=1,2",
        "--ncu",
        make_ncu(tmp_path),
        "--no-tui",
        "--sweep-name",
        "s",
        "--",
        sys.executable,
        "-c",
        "print('point ran')",
        home=tmp_path / "home",
        env={ROOT_ENV: str(host_tree(tmp_path, admin_only=1))},
    )
    printed = out.stderr + out.stdout
    assert out.returncode != 0, printed
    assert "point ran" not in printed and "Connected to process" not in printed
    assert "NVreg_RestrictProfilingToAdminUsers=0" in printed


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2025.3.1.0", ("13.x", 580)),
        ("2025.3.0", ("13.x", 580)),
        ("2025.2.1.3", ("12.x", 525)),
        ("2022.4.0", ("12.x", 525)),
        ("2022.3.0.22", ("11.x", 450)),
        ("2020.2.0", ("11.x", 450)),
        ("2019.5.0", None),
    ],
)
def test_each_ncu_needs_the_driver_of_its_cuda_release(version, expected):
    """NVIDIA's conda labels (cuda-11.8.0 -> 2022.3.0, cuda-12.0.0 -> 2022.4.0, cuda-12.9.1 ->
    2025.2.1, cuda-13.0.0 -> 2025.3.0) and the CUDA 11.x/12.x/13.x driver floors 450/525/580."""
    from flopscope.core.profiling.doctor import ncu_needs

    assert ncu_needs(version) == expected


@pytest.mark.skipif(
    not os.environ.get("FLOPSCOPE_REAL_NCU"), reason="no real ncu: set FLOPSCOPE_REAL_NCU"
)
@pytest.mark.parametrize(("driver", "code"), [("550.54.15", 0), ("520.61.05", 1)])
def test_the_real_ncus_version_is_judged_against_the_driver(tmp_path, driver, code):
    """ncu 2024.1.1 (CUDA 12.4) as it prints its own version: fine on R550, too new for R520."""
    real = os.environ["FLOPSCOPE_REAL_NCU"]
    out = doctor(host_tree(tmp_path, driver=driver), "--ncu", real, "--json")
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert out.returncode == code, out.stdout
    assert checks["ncu"]["detail"] == f"{real}, version 2024.1.1.0"
    assert checks["ncu and driver"]["status"] == ("ok" if code == 0 else "fail")
    assert "525" in checks["ncu and driver"]["detail"]


DOCTOR_RUN = H100.parent / "doctor"  # `flopscope doctor` run on the H100 itself (capture part e)


def test_doctor_run_on_the_h100_found_it_ready_as_its_own_outputs_say():
    """What doctor printed on the real node: every check OK, its facts those nvidia-smi and ncu
    printed there (environment_e.txt, same call), and today's judgement of the facts its probe
    gathered there the same."""
    from flopscope.core.profiling.doctor import doctor_json, judge

    env = (H100.parent / "environment_e.txt").read_text()
    run = json.loads((DOCTOR_RUN / "doctor.json").read_text())
    assert run["ok"] and {c["status"] for c in run["checks"]} == {"ok"}
    ncu = re.search(r"^Version (\S+)", env, re.M).group(1)
    driver = re.search(r"^Driver Version\s*:\s*(\S+)", env, re.M).group(1)
    detail = {c["name"]: c["detail"] for c in run["checks"]}
    assert detail["ncu"].endswith(f"version {ncu}") and detail["driver"] == driver
    assert detail["GPU 0"] == "NVIDIA H100 80GB HBM3, CC 9.0, MIG off, persistence on"
    assert (DOCTOR_RUN / "doctor.txt").read_text().splitlines()[-2:] == [
        "localhost: ready to profile",
        "exit 0",
    ]
    facts = json.loads((DOCTOR_RUN / "doctor_facts.json").read_text())
    assert doctor_json("localhost", judge(facts)) == run


H200_RUN = H100.parent.parent / "nvidia_h200"  # `flopscope doctor` on an H200 (capture part h)


def test_doctor_run_on_the_h200_found_it_ready_and_its_facts_judge_the_same_today():
    """What doctor printed on a real H200 (doctor.txt) against today's judgement of the facts its
    probe gathered there (doctor_facts.json): every check OK with the same detail, the GPU as
    nvidia-smi named it there."""
    from flopscope.core.profiling.doctor import judge

    printed = (H200_RUN / "doctor.txt").read_text().splitlines()
    assert printed[-2:] == ["localhost: ready to profile", "exit 0"]
    checks = judge(json.loads((H200_RUN / "doctor_facts.json").read_text()))
    assert {c.status for c in checks} == {"ok"}
    for check in checks:
        assert any(
            ln.startswith("OK") and check.name in ln and ln.endswith(check.detail) for ln in printed
        ), check
    name = re.search(
        r"^    Product Name\s*:\s*(.+)$", (H200_RUN / "environment.txt").read_text(), re.M
    ).group(1)
    assert next(c.detail for c in checks if c.name == "GPU 0").startswith(f"{name}, CC 9.0")
