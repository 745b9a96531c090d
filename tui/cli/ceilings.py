"""`flopscope ceilings`: measure a node's ceilings (core/profiling/ceilings_run.py) and keep them in
the run store per host + GPU + driver; `--list` shows what is stored."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from ...core.common import display_text
from ...core.profiling import LocalTransport, SshTransport, check_host

if TYPE_CHECKING:
    from ...core.store import Ceilings


def cmd_ceilings(args: argparse.Namespace) -> int:
    # Imported here: the store brings pandas, which `flopscope --help` must not wait for.
    from ...core.store import Store, ceilings_json, load_all, save

    if args.list:
        with Store() as store:
            found = load_all(store, args.host)
    else:
        found = [_measure(args)]
        with Store() as store:
            save(store, found[0])
    if args.json:
        json.dump([ceilings_json(c) for c in found], sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    if not found:
        print(
            "no ceilings stored"
            + (f" for {args.host}" if args.host else "")
            + "; `flopscope ceilings` measures"
        )
    for c in found:
        for line in ceilings_lines(c):
            print(display_text(line))
    return 0


def _measure(args: argparse.Namespace) -> Ceilings:
    from ...core.profiling import measure_ceilings

    transport: SshTransport | LocalTransport
    if args.host:
        check_host(args.host)
        transport = SshTransport(
            args.host, connect_timeout=args.connect_timeout, ssh_config=args.ssh_config
        )
    else:
        transport = LocalTransport()
    python = sys.executable if transport.host == "localhost" else "python3"
    return measure_ceilings(transport, args.device, python)


def ceilings_lines(c: Ceilings) -> list[str]:
    """One measurement as text: which roof it is (measured where, on what), then each ceiling beside
    the datasheet's."""
    from ...core.store import KINDS
    from ..presentation import format as fmt

    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.measured))
    head = f"{c.origin} on {c.host}: {c.gpu}, driver {c.driver}, {when}"
    lines = [head]
    for key, (what, _) in KINDS.items():
        if key not in c.values:
            continue
        unit = "B/s" if key.endswith("bytes_per_s") else "FLOP/s"
        ratio, clock = c.of_datasheet(key), c.clock_hz(key)
        versus = f"{ratio:.0%} of datasheet" if ratio is not None else "no datasheet figure"
        at = f"SM {clock / 1e9:.2f} GHz" if clock else "SM clock not sampled"
        if (scaled := c.of_datasheet_at_clock(key)) is not None:
            at += f", {scaled:.0%} at it"
        lines.append(f"  {fmt.si(c.values[key], unit):>12}  {versus:<19}  {at:<24}  {what}")
    errors = json.loads(c.how.get("errors", "{}") or "{}")
    lines += [f"  not measured: {key} ({why})" for key, why in errors.items()]
    return lines
