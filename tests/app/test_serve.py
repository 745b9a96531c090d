"""`flopscope serve`: the demo in a real headless chromium (CDP), behind its one-time token.

textual.js draws the terminal on <canvas>, so the page's DOM holds no text: an init script catches
textual.js's xterm Terminal as its constructor assigns `this.fitAddon` (textual-serve 1.1.x;
pyproject pins it) and the test reads the screen through xterm's public buffer API."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time

import aiohttp
import pytest
from yarl import URL

from ..helpers.cdp import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
)

# Before textual.js runs: a one-shot setter on Object.prototype keeps the object that gets a
# `fitAddon`.
CATCH_TERMINAL = """
Object.defineProperty(Object.prototype, "fitAddon", {configurable: true, set(value) {
  Object.defineProperty(
    this, "fitAddon", {value, writable: true, configurable: true, enumerable: true});
  window.__terminals = (window.__terminals || []).concat([this]);
}});
"""

SCREEN_TEXT = """(() => {
  const t = (window.__terminals || [])[0];
  if (!t || !t.terminal) return "";
  const buffer = t.terminal.buffer.active, rows = [];
  for (let y = 0; y < t.terminal.rows; y++) {
    const line = buffer.getLine(y);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
})()"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _demo() -> str:
    from flopscope.tui.cli.main import bundled_example

    return bundled_example()


@pytest.fixture
def served(tmp_path):
    """`flopscope serve` on the demo, on a free port: (its one-time URL, its port)."""
    port = _free_port()
    env = {**os.environ, "FLOPSCOPE_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "flopscope.tui.cli", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline()  # printed once listening
        found = re.search(r"open (http://\S+)", line)
        assert found, line or proc.stderr.read()  # nothing printed: why it ended
        yield found.group(1), port
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()


def _demo_facts() -> tuple[str, int]:
    """From the report itself: the demo's kernel with the most time whose name is short enough to be
    shown whole, and how many launches it holds."""
    from flopscope.core import read_report

    kernels = read_report(_demo()).kernels
    time_by_name = kernels.groupby("kernel")["duration_s"].sum().sort_values(ascending=False)
    return next(name for name in time_by_name.index[:10] if len(name) <= 45), len(kernels)


async def _status(url: str, **kwargs) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.get(url, allow_redirects=False, **kwargs) as answer,
    ):
        return answer.status


async def _screen_with(page, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = await page.eval(SCREEN_TEXT) or ""
        if text in screen:
            return screen
        await asyncio.sleep(0.1)
    raise AssertionError(f"{text!r} never showed; the screen:\n{screen}")


async def test_the_browser_shows_the_demo_table_once_per_token(served):
    url, _ = served
    name, launches = _demo_facts()
    async with Browser() as page:
        await page.send("Page.enable")  # before the init script, or it may not run
        await page.send("Page.addScriptToEvaluateOnNewDocument", source=CATCH_TERMINAL)
        await page.send("Page.navigate", url=url)
        # Its end: the table beside the selected row's details (the browser's terminal is wider than
        # 120 columns) cuts a 39-cell name in its middle, keeping start and end
        # (`nvjet_sm90_tst_64…x13_2x1_v_bz_NNT`).
        screen = await _screen_with(page, name[-16:])
    # the header, the kernel table's header
    assert f"{launches} launches" in screen and "Time" in screen
    assert await _status(url) == 403  # the token was used


async def test_no_token_a_wrong_token_and_a_websocket_without_the_session_are_refused(served):
    url, port = served
    base = f"http://localhost:{port}"
    assert await _status(f"{base}/") == 403
    assert await _status(f"{base}/?token=not-the-token") == 403
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(f"{base}/ws?width=80&height=24")
    assert refused.value.status == 403
    async with aiohttp.ClientSession() as http:
        async with http.get(url) as answer:  # the right token still works after the wrong ones
            assert answer.status == 200
        assert http.cookie_jar.filter_cookies(URL(base))  # the session cookie
        # the cookie, from another site's page
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(f"{base}/ws?width=80&height=24", origin="http://attacker.example")
    assert refused.value.status == 403


async def test_static_files_and_downloads_want_the_session_too(served):
    """textual.js, its fonts and /download are served to the session only: none of it without the
    token's cookie (textual-serve itself guards nothing)."""
    url, port = served
    base = f"http://localhost:{port}"
    guarded = [
        f"{base}/static/js/textual.js",
        f"{base}/static/",
        f"{base}/download/any-key",
        f"{base}/nothing",
    ]
    for path in guarded:
        assert await _status(path) == 403, path
        assert await _status(path, cookies={"flopscope_session": "not-the-session"}) == 403, path
    async with aiohttp.ClientSession() as http:
        async with http.get(url) as answer:  # the token sets the cookie
            assert answer.status == 200
        async with http.get(f"{base}/static/js/textual.js") as answer:  # what the page itself loads
            assert answer.status == 200 and "Terminal" in await answer.text()


def _serve(*args: str, home, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flopscope.tui.cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "FLOPSCOPE_HOME": str(home)},
    )


def test_a_missing_report_and_a_taken_port_are_one_line_errors(tmp_path):
    done = _serve("no-such-run", home=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.count("\n") == 1
        and "no-such-run: no such file, stored run or sweep" in done.stderr
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve("--host", "127.0.0.1", "--port", str(port), home=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and f"127.0.0.1:{port}: cannot listen" in done.stderr, (
        done.stderr
    )
    assert "Traceback" not in done.stderr
