"""`flopscope serve [PATH|RUN]`: the app in a browser (textual-serve), on localhost behind a
one-time token."""

from __future__ import annotations

import ipaddress
import shlex
import socket
import sys

from ...core import FlopscopeError
from ...core.store import Store
from ..presentation.text_report import say


def cmd_serve(args) -> int:
    from .main import _exists, bundled_example  # main imports this module to register the command

    path = args.path or bundled_example()
    if args.port > 65535:
        raise FlopscopeError(f"--port {args.port}", "not a TCP port", "pick a port from 1 to 65535")
    if not _exists(path):
        _refuse_unknown(path)
    # What textual-serve starts per browser connection (through a shell, hence quoted); no token on
    # it.
    command = shlex.join(
        [
            sys.executable,
            "-m",
            "flopscope.tui.cli",
            "open",
            path,
            *(["--gpu", args.gpu] if args.gpu else []),
        ]
    )
    loopback = _is_loopback(args.host)
    if not loopback:
        say(
            f"flopscope: warning: serving on {args.host}, plain HTTP to the network: the token and"
            " every page travel unencrypted; the default (localhost) with ssh -L is safer"
        )
    public = "localhost" if loopback else _url_host(args.host)
    from ..app.web_server import serve  # textual-serve and aiohttp only for this command

    try:
        serve(
            command,
            args.host,
            args.port,
            f"http://{public}:{args.port}",
            lambda url: _announce(url, args.port, loopback),
        )
    except OSError as err:
        raise FlopscopeError(
            f"{args.host}:{args.port}",
            f"cannot listen ({err.strerror or err})",
            "pick another --port (or --host)",
        ) from None
    return 0


def _announce(url: str, port: int, loopback: bool) -> None:
    print(f"flopscope serve: open {url}  (the token works once; Ctrl-C stops)", flush=True)
    if loopback:
        print(
            f"from another machine: ssh -L {port}:localhost:{port} {socket.gethostname()}, then"
            " open the URL there",
            flush=True,
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    """The host part of the URL to print: this machine's name for a wildcard address, [v6] in
    brackets."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if address.is_unspecified:
        return socket.gethostname()
    return f"[{host}]" if address.version == 6 else host


def _refuse_unknown(ref: str) -> None:
    """Neither a file nor a stored run or sweep: one line now, not a blank page in the browser
    later."""
    with Store() as store:
        if store.runs(ref).empty:
            try:
                store.resolve(ref)
            except FlopscopeError:
                raise FlopscopeError(
                    ref,
                    "no such file, stored run or sweep",
                    "check the path (`flopscope runs` lists the stored runs)",
                ) from None
