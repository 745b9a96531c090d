"""`flopscope doctor`: the pre-flight of a host (this one, or --host through ssh), one line per
check."""

from __future__ import annotations

import argparse
import json
import sys

from ...core.common import display_text
from ...core.profiling import (
    LocalTransport,
    SshTransport,
    check_host,
    doctor_json,
    failed,
    judge,
    probe,
)

FAILED = 1  # a blocking check failed: ncu would fail there


def cmd_doctor(args: argparse.Namespace) -> int:
    transport: SshTransport | LocalTransport
    if args.host:
        check_host(args.host)
        transport = SshTransport(
            args.host, connect_timeout=args.connect_timeout, ssh_config=args.ssh_config
        )
    else:
        transport = LocalTransport()
    try:
        transport.connect()
        checks = judge(probe(transport, args.ncu))
    finally:
        transport.close()
    if args.json:
        json.dump(doctor_json(transport.host, checks), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            line = f"{c.status.upper():4}  {c.name:{width}}  {c.detail}" + (
                f"; fix: {c.fix}" if c.fix else ""
            )
            print(display_text(line))  # details quote the host's own text
        bad = failed(checks)
        print(
            f"{transport.host}: "
            + (f"{len(bad)} problem(s) would stop ncu" if bad else "ready to profile")
        )
    return FAILED if failed(checks) else 0
