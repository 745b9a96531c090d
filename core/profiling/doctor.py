"""`flopscope doctor`: what would stop ncu on a host, found before a long launch, each finding with
its fix.

The facts come from core/profiling/doctor_probe.py, run as one `python3 -c` on the target through
the profile's own transport (one ssh connection); this module only judges them. `preflight` is the
fast part `profile` and `sweep` run first: ncu present, and GPU counters not restricted to admin
users."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..common.errors import FlopscopeError
from .target_script import script_json

if TYPE_CHECKING:
    from .transport import Transport

# tests: read every file and command under this prefix (fabricated trees)
ROOT_ENV = "FLOPSCOPE_DOCTOR_ROOT"
# the probe's JSON object (doctor_probe.py): its shape is that script's, read by key
Facts = dict[str, Any]

# The driver each ncu needs: ncu YEAR.N ships with one CUDA toolkit (NVIDIA's conda channel labels
# each nsight-compute build with its toolkit: cuda-11.8.0 -> 2022.3.0, cuda-12.0.0 -> 2022.4.0,
# cuda-12.9.1 -> 2025.2.1, cuda-13.0.0 -> 2025.3.0, https://anaconda.org/nvidia/nsight-compute), and
# a toolkit of CUDA 11.x, 12.x, 13.x needs a driver >= 450, 525, 580 ("CUDA Toolkit Driver Version
# Ranges", https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
# (first ncu, CUDA, driver)
NCU_DRIVER = [((2025, 3), "13.x", 580), ((2022, 4), "12.x", 525), ((2020, 2), "11.x", 450)]

_FIX_ADMIN = (
    "as root, add `options nvidia NVreg_RestrictProfilingToAdminUsers=0` to a file in"
    " /etc/modprobe.d/ and reboot (or reload the nvidia module), or run the profile as root"
    " (https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
)


@dataclass
class Check:
    name: str
    # ok, warn (worth knowing, profiling can go on), fail (ncu would fail: doctor exits 1)
    status: str
    detail: str
    fix: str = ""


def root_prefix() -> str:
    return os.environ.get(ROOT_ENV, "").rstrip("/")


def probe(transport: Transport, ncu: str, mode: str = "all") -> Facts:
    """The probe's facts from the target: one command, whatever the transport."""
    python = sys.executable if transport.host == "localhost" else "python3"
    facts: Facts = script_json(
        transport,
        python,
        "doctor_probe.py",
        [root_prefix(), ncu, mode],
        command="doctor",
        problem="the check did not run",
        fix=(
            "doctor runs python3 on the host: install it or put it on the PATH of a non-interactive"
            " shell"
        ),
    )
    return facts


def ncu_check(facts: Facts) -> Check:
    ncu = facts["ncu"]
    if not ncu.get("path"):
        if ncu.get("usual"):
            return Check(
                "ncu",
                "fail",
                f"not on PATH, but {ncu['usual']} exists",
                f"pass --ncu {ncu['usual']}",
            )
        return Check(
            "ncu",
            "fail",
            "not found (searched the PATH of a non-interactive shell)",
            "install Nsight Compute (it comes with the CUDA toolkit) or pass --ncu PATH",
        )
    if "version" not in ncu:  # the fast part does not ask
        return Check("ncu", "ok", ncu["path"])
    if not ncu["version"]:
        said = ncu.get("version_output") or "nothing"
        return Check(
            "ncu",
            "fail",
            f"{ncu['path']} did not print its version ({said})",
            "check that it is Nsight Compute's ncu and that it runs: `ncu --version`",
        )
    return Check("ncu", "ok", f"{ncu['path']}, version {ncu['version']}")


def permission_checks(facts: Facts) -> list[Check]:
    perm = facts["permission"]
    checks = []
    if perm["admin_only"] is None:
        checks.append(
            Check(
                "profiling permission",
                "warn",
                "cannot tell: no RmProfilingAdminOnly in /proc/driver/nvidia/params (no NVIDIA"
                " driver loaded here?)",
                "if ncu then says ERR_NVGPUCTRPERM: " + _FIX_ADMIN,
            )
        )
    elif not perm["admin_only"]:
        checks.append(
            Check(
                "profiling permission",
                "ok",
                "any user may read GPU counters (RmProfilingAdminOnly: 0)",
            )
        )
    elif perm["euid"] == 0:
        checks.append(
            Check(
                "profiling permission",
                "ok",
                "counters are for admin users (RmProfilingAdminOnly: 1); running as root",
            )
        )
    else:
        checks.append(
            Check(
                "profiling permission",
                "fail",
                "GPU counters are restricted to admin users "
                "(RmProfilingAdminOnly: 1) and this user is not root: ncu would fail with "
                "ERR_NVGPUCTRPERM",
                _FIX_ADMIN,
            )
        )
    if perm["container"]:
        checks.append(_container_check(perm))
    return checks


def _container_check(perm: dict[str, Any]) -> Check:
    has = {True: "has", False: "lacks", None: "cannot tell whether it has"}[perm["sys_admin"]]
    if perm["admin_only"] and perm["sys_admin"] is not True:
        return Check(
            "container",
            "fail",
            f"inside a container that {has} CAP_SYS_ADMIN, with counters for admin users only",
            "start the container with --cap-add=SYS_ADMIN, or have the host's admin "
            "allow counters for all users (NVreg_RestrictProfilingToAdminUsers=0)",
        )
    why = {
        False: " (not needed: counters are open to all users)",
        None: " (needed only where counters are for admin users)",
    }.get(perm["admin_only"], "")
    return Check("container", "ok", f"inside a container that {has} CAP_SYS_ADMIN{why}")


def driver_version(facts: Facts) -> str | None:
    gpus = facts["gpu"]["gpus"]
    driver: str | None = (gpus[0]["driver_version"] if gpus else None) or facts["gpu"][
        "proc_driver"
    ]
    return driver


def driver_checks(facts: Facts) -> list[Check]:
    driver = driver_version(facts)
    if driver is None:
        why = facts["gpu"]["nvidia_smi_error"] or "no nvidia-smi and no /proc/driver/nvidia/version"
        return [
            Check(
                "driver",
                "fail",
                f"no NVIDIA driver found ({why})",
                "install the NVIDIA driver (or run doctor on the GPU host: --host HOST)",
            )
        ]
    checks = [Check("driver", "ok", driver)]
    need = ncu_needs(facts["ncu"].get("version"))
    if need:
        cuda, least = need
        major = int(driver.split(".")[0])
        if major < least:
            checks.append(
                Check(
                    "ncu and driver",
                    "fail",
                    f"ncu {facts['ncu']['version']} is from CUDA {cuda}, "
                    f"which needs driver >= {least}; this host has {driver}",
                    f"update the driver to >= {least}, or pass --ncu the ncu of an older CUDA"
                    " toolkit that this driver supports (e.g. /usr/local/cuda-12.x/bin/ncu for"
                    " driver 525-579)",
                )
            )
        else:
            checks.append(
                Check(
                    "ncu and driver",
                    "ok",
                    f"ncu {facts['ncu']['version']} (CUDA {cuda}) needs driver >= {least}",
                )
            )
    return checks


def ncu_needs(version: str | None) -> tuple[str, int] | None:
    """(CUDA release, least driver major) for an ncu version; None when unknown (older than the
    table)."""
    found = re.match(r"(\d+)\.(\d+)", version or "")
    if not found:
        return None
    have = (int(found.group(1)), int(found.group(2)))
    return next(((cuda, least) for first, cuda, least in NCU_DRIVER if have >= first), None)


def gpu_checks(facts: Facts) -> list[Check]:
    checks = []
    for gpu in facts["gpu"]["gpus"]:
        name = f"GPU {gpu['index']}"
        mig = gpu["mig.mode.current"].lower() == "enabled"
        persistent = gpu["persistence_mode"].lower() == "enabled"
        detail = (
            f"{gpu['name']}, CC {gpu['compute_cap']}, MIG {'on' if mig else 'off'}, "
            f"persistence {'on' if persistent else 'off'}"
        )
        if mig:
            checks.append(
                Check(
                    name,
                    "fail",
                    detail + ": ncu profiles one MIG instance at a time and cannot lock its clocks",
                    f"disable MIG (`sudo nvidia-smi -i {gpu['index']} -mig 0`, then a GPU reset) to"
                    " profile the whole GPU, or profile inside one MIG instance with"
                    " --clock-control none",
                )
            )
        elif not persistent:
            checks.append(
                Check(
                    name,
                    "warn",
                    detail + ": the driver unloads between programs, so each start pays its"
                    " initialisation",
                    f"`sudo nvidia-smi -i {gpu['index']} -pm 1`",
                )
            )
        else:
            checks.append(Check(name, "ok", detail))
    if not checks and facts["gpu"]["nvidia_smi"]:
        checks.append(
            Check(
                "GPUs",
                "fail",
                "nvidia-smi lists no GPU"
                + (
                    f" ({facts['gpu']['nvidia_smi_error']})"
                    if facts["gpu"]["nvidia_smi_error"]
                    else ""
                ),
                "check the driver with `nvidia-smi`; in a container, pass the GPUs in (--gpus all)",
            )
        )
    return checks


def writable_checks(facts: Facts) -> list[Check]:
    w = facts["writable"]
    checks = []
    for key, label, fix in (
        ("tmp", "temp folder", "--env TMPDIR=/a/writable/folder"),
        ("home", "home folder", "--env HOME=/a/writable/folder"),
    ):
        if w[f"{key}_writable"]:
            checks.append(Check(label, "ok", f"{w[key]} is writable"))
        else:
            checks.append(
                Check(
                    label,
                    "fail",
                    f"{w[key] or '(unset)'} is not a writable folder: ncu keeps its "
                    "section files and temporary data there",
                    f"pass {fix} to profile (or fix the folder's permissions)",
                )
            )
    return checks


def torch_check(facts: Facts) -> Check:
    torch = facts["torch"]
    if not torch["installed"]:
        return Check(
            "torch",
            "ok",
            f"not installed for python {facts['python']} (only `flopscope ceilings` uses it)",
        )
    if not torch["cuda"]:
        return Check(
            "torch",
            "warn",
            f"{torch['version']} without CUDA (a CPU build)",
            "install a CUDA build of torch for GPU work: https://pytorch.org/get-started/locally/",
        )
    return Check("torch", "ok", f"{torch['version']}, built with CUDA {torch['cuda']}")


def judge(facts: Facts) -> list[Check]:
    """Every check, in the order a user would fix them."""
    checks = [ncu_check(facts)]
    if "gpu" in facts:
        checks += driver_checks(facts) + gpu_checks(facts)
    checks += permission_checks(facts)
    if "writable" in facts:
        checks += [*writable_checks(facts), torch_check(facts)]
    return checks


def failed(checks: list[Check]) -> list[Check]:
    return [c for c in checks if c.status == "fail"]


def doctor_json(host: str, checks: list[Check]) -> dict[str, Any]:
    return {"host": host, "ok": not failed(checks), "checks": [asdict(c) for c in checks]}


def preflight(transport: Transport, ncu: str) -> None:
    """The fast part of doctor, before a profile starts anything: raises the first blocking finding
    with its fix. A host without python3 (the probe cannot run) is not refused: ncu's own errors are
    explained after."""
    try:
        facts = probe(transport, ncu, "fast")
    except FlopscopeError:
        return
    checks = judge(facts)
    # relative to --remote-cwd: only ncu's own start can tell
    if "/" in ncu and not ncu.startswith("/"):
        checks = checks[1:]
    where = "this machine" if transport.host == "localhost" else transport.host
    for check in failed(checks):
        path = f"--ncu {ncu}" if check.name == "ncu" else f"{check.name} on {where}"
        problem = f"{check.detail} on {where}" if check.name == "ncu" else check.detail
        raise FlopscopeError(path, problem, f"{check.fix} (`flopscope doctor` checks the rest)")
