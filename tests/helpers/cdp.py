"""A real headless browser for tests: Debian's chromium driven over the DevTools protocol (CDP) with
aiohttp, no browser-automation package.

    async with Browser() as page:
        await page.send("Page.navigate", url=url)
        text = await page.eval("document.title")
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import shutil
import tempfile

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One CDP session on a page: `send` a method, `eval` an expression (its JSON value)."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws, self.ids, self.pending = ws, itertools.count(1), {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if data.get("id") in self.pending:
                self.pending.pop(data["id"]).set_result(data)

    async def send(self, method: str, **params) -> dict:
        number = next(self.ids)
        reply = self.pending[number] = asyncio.get_running_loop().create_future()
        await self.ws.send_json({"id": number, "method": method, "params": params})
        answer = await asyncio.wait_for(reply, 30)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    async def eval(self, expression: str):
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")


class Browser:
    """Headless chromium with a throwaway profile; entering gives a Page on its first tab."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        self.size = f"{width},{height}"

    async def __aenter__(self) -> Page:
        # Short and in /tmp: chromium puts a unix socket in it (108 bytes at most; pytest's tmp_path
        # is longer)
        self.folder = tempfile.mkdtemp(prefix="cdp-")
        self.proc = await asyncio.create_subprocess_exec(
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--window-size={self.size}",
            f"--user-data-dir={self.folder}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "TMPDIR": str(self.folder)},
        )  # chromium leaves a socket folder in $TMPDIR
        port = await self._devtools_port()
        self.drain = asyncio.create_task(self._drain())  # a full stderr pipe would stall chromium
        self.http = aiohttp.ClientSession()
        async with self.http.get(f"http://127.0.0.1:{port}/json/list") as answer:
            target = next(t for t in await answer.json() if t["type"] == "page")
        self.ws = await self.http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
        return Page(self.ws)

    async def _devtools_port(self) -> int:
        said = []
        while True:  # chromium says where DevTools listens on stderr
            line = (await asyncio.wait_for(self.proc.stderr.readline(), 30)).decode()
            if not line:
                raise RuntimeError(
                    "chromium exited before DevTools came up: " + "".join(said[-10:])
                )
            said.append(line)
            found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if found:
                return int(found.group(1))

    async def _drain(self) -> None:
        while await self.proc.stderr.readline():
            pass

    async def __aexit__(self, *exc) -> None:
        for closing in (getattr(self, "ws", None), getattr(self, "http", None)):
            if closing is not None:
                await closing.close()
        self.proc.terminate()
        await self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
