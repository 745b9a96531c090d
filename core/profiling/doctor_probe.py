"""What `flopscope doctor` needs to know about a host, gathered by ONE process on that host.

This file is sent as it is to `python3 -c` on the target (over ssh: one connection), so it imports
nothing but the standard library and nothing of flopscope's, and runs on the Python 3.7 of older GPU
hosts. It only gathers facts and prints them as one JSON object; core/profiling/doctor.py judges
them. Every file and command is looked up under ROOT (argv[1], "" for the real host): tests point it
at a fabricated /proc-like tree with stand-in `nvidia-smi` and `ncu` executables.

argv: ROOT NCU MODE, MODE "fast" (ncu and the profiling permission: what `profile` checks before it
runs anything) or "all"."""

# annotations stay strings: `X | None` and `dict[...]` on Python 3.7
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

_GPU_FIELDS = "index,name,compute_cap,mig.mode.current,persistence_mode,driver_version"
_CAP_SYS_ADMIN = 21  # bit of CapEff (linux/capability.h)


def _read(root: str, path: str) -> str | None:
    try:
        with open(root + path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _which(root: str, name: str) -> str | None:
    """NAME as given when it is a path, else the first executable of that name on PATH, each folder
    under ROOT: the PATH ncu itself would be started with."""
    if "/" in name:
        return name if os.access(name, os.X_OK) and os.path.isfile(name) else None
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(root + folder, name) if folder else None
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _run(argv: list[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return done.returncode, done.stdout + done.stderr


def ncu_facts(root: str, ncu: str, ask_version: bool) -> dict[str, str | None]:
    path = _which(root, ncu)
    if path is None:
        usual = root + "/usr/local/cuda/bin/ncu"
        return {
            "path": None,
            "usual": "/usr/local/cuda/bin/ncu" if os.access(usual, os.X_OK) else None,
        }
    if not ask_version:  # the fast part: present is enough, ncu's start takes a while
        return {"path": path}
    _, out = _run([path, "--version"])
    version = re.search(r"Version (\d+\.\d+\.\d+(?:\.\d+)?)", out)
    return {
        "path": path,
        "version": version.group(1) if version else None,
        "version_output": out.strip()[-300:] if not version else "",
    }


def permission_facts(root: str) -> dict[str, bool | int | None]:
    params = _read(root, "/proc/driver/nvidia/params")
    admin_only = None
    if params is not None:
        found = re.search(r"^RmProfilingAdminOnly:\s*(\d+)", params, re.M)
        admin_only = bool(int(found.group(1))) if found else None
    status = _read(root, "/proc/self/status") or ""
    cap = re.search(r"^CapEff:\s*([0-9a-fA-F]+)", status, re.M)
    uid = re.search(r"^Uid:\s*\d+\s+(\d+)", status, re.M)  # real, effective, saved, fs
    cgroup = _read(root, "/proc/1/cgroup") or ""
    container = (
        os.path.exists(root + "/.dockerenv")
        or os.path.exists(root + "/run/.containerenv")
        or bool(re.search(r"docker|kubepods|containerd|lxc|podman", cgroup))
    )
    return {
        "params_found": params is not None,
        "admin_only": admin_only,
        "container": container,
        "euid": int(uid.group(1)) if uid else os.geteuid(),
        "sys_admin": bool(int(cap.group(1), 16) >> _CAP_SYS_ADMIN & 1) if cap else None,
    }


def gpu_facts(root: str) -> dict[str, object]:
    smi = _which(root, "nvidia-smi")
    gpus: list[dict[str, str]] = []
    smi_error: str | None = None
    if smi:
        code, out = _run([smi, f"--query-gpu={_GPU_FIELDS}", "--format=csv,noheader"])
        if code == 0:
            for line in out.strip().splitlines():
                cells = [c.strip() for c in line.split(",")]
                if len(cells) == 6:
                    gpus.append({key: cells[i] for i, key in enumerate(_GPU_FIELDS.split(","))})
        else:
            smi_error = out.strip().splitlines()[-1] if out.strip() else f"exit {code}"
    proc = _read(root, "/proc/driver/nvidia/version") or ""
    kernel_module = re.search(r"Kernel Module(?: for [\w-]+)?\s+(\d+\.\d+(?:\.\d+)?)", proc)
    return {
        "nvidia_smi": smi,
        "nvidia_smi_error": smi_error,
        "gpus": gpus,
        "proc_driver": kernel_module.group(1) if kernel_module else None,
    }


def writable_facts(root: str) -> dict[str, str | bool]:
    def writable(path: str) -> bool:
        return (
            bool(path) and os.path.isdir(root + path) and os.access(root + path, os.W_OK | os.X_OK)
        )

    tmp = os.environ.get("TMPDIR") or "/tmp"
    home = os.environ.get("HOME") or ""
    return {
        "tmp": tmp,
        "tmp_writable": writable(tmp),
        "home": home,
        "home_writable": writable(home),
    }


def torch_facts() -> dict[str, bool | str | None]:
    """torch's version and CUDA build from its files, without importing it (seconds, and a CUDA
    init)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return {"installed": False}
    text = _read("", os.path.join(next(iter(spec.submodule_search_locations)), "version.py")) or ""
    version = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", text, re.M)
    cuda = re.search(r"^cuda\s*(?::[^=]*)?=\s*(?:['\"]([^'\"]*)['\"]|None)", text, re.M)
    return {
        "installed": True,
        "version": version.group(1) if version else None,
        "cuda": cuda.group(1) if cuda and cuda.group(1) else None,
    }


def main(argv: list[str]) -> None:
    root, ncu, mode = argv[1], argv[2], argv[3]
    facts: dict[str, object] = {
        "ncu": ncu_facts(root, ncu, mode == "all"),
        "permission": permission_facts(root),
    }
    if mode == "all":
        facts.update(
            gpu=gpu_facts(root),
            writable=writable_facts(root),
            torch=torch_facts(),
            python=sys.version.split()[0],
        )
    print(json.dumps(facts))


if __name__ == "__main__":
    main(sys.argv)
