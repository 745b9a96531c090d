"""`flopscope profile --plan`: the cost of a profile before it runs (core/profiling/plan.py), and
after it."""

from __future__ import annotations

import argparse
import shlex

from ...core.common import display_text
from ...core.ncu import ProfileOptions
from ...core.profiling import local_ncu_found, make_plan, plan_lines, target_gpu_name


def cmd_plan(args: argparse.Namespace, opts: ProfileOptions, transport) -> int:
    """Print the plan; the program does not run. Only nvidia-smi is asked (for the GPU's name),
    unless --gpu."""
    gpu = args.gpu
    if gpu is None:
        try:
            transport.connect()
            gpu = target_gpu_name(transport)
        finally:
            transport.close()
    print(
        display_text(
            f"plan for `{shlex.join(opts.command)}` on {transport.host}"
            + (f" ({gpu})" if gpu else "")
            + "; nothing was run"
        )
    )
    for line in plan_lines(make_plan(opts, transport.host, gpu)):
        print(display_text(line))
    # a plan needs none; the profile does
    if not args.host and not local_ncu_found(opts.ncu, [args.remote_cwd]):
        print(
            display_text(
                f"ncu       not found here (--ncu {opts.ncu}, searched PATH): the plan needs none,"
                " the profile will (pass --ncu /usr/local/cuda/bin/ncu, or wherever Nsight Compute"
                " is installed)"
            )
        )
    return 0
