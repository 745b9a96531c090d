"""The app in a browser (`flopscope serve`): textual-serve runs `flopscope open ...` per browser
connection, behind a one-time token.

textual-serve has no authentication, and every websocket to it starts a process that reads the
user's reports, so: the printed URL carries a random token that `/` accepts once, answering with a
session cookie (HttpOnly, SameSite=Strict, so no other site's page can use it); every other route
(`/ws`, `/static`, `/download`: URLs textual.js builds itself, so no token can ride on them) wants
that cookie, checked in one middleware, so a route a later textual-serve adds is guarded too; `/ws`
also wants, where the browser says one, our own Origin. The token never reaches a command line (`ps`
shows those to every user)."""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import socket
from collections.abc import Callable

from aiohttp import web
from textual_serve.server import Server

COOKIE = "flopscope_session"


class TokenServer(Server):
    """textual-serve's Server, its index and websocket behind a one-time token, then a session
    cookie."""

    def __init__(
        self, command: str, host: str, port: int, public_url: str, announce: Callable[[str], None]
    ) -> None:
        super().__init__(command, host=host, port=port, title="flopscope", public_url=public_url)
        self.token: str | None = secrets.token_urlsafe(32)
        self.session = secrets.token_urlsafe(32)
        self.announce = announce

    @property
    def url(self) -> str:
        """The one-time URL to open."""
        return f"{self.public_url}/?token={self.token}"

    def _has_session(self, request: web.Request) -> bool:
        return hmac.compare_digest(request.cookies.get(COOKIE, ""), self.session)

    async def _make_app(self) -> web.Application:
        # textual-serve's own method (pinned <1.2 in pyproject): its routes, then our guard in front
        # of them all
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler) -> web.StreamResponse:
        """Only `/` (which checks the token itself) is open without the session cookie."""
        if request.path != "/" and not self._has_session(request):
            raise web.HTTPForbidden(text="flopscope serve: no session (open the printed URL first)")
        return await handler(request)

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        given = request.query.get("token", "")
        if self.token is not None and hmac.compare_digest(given, self.token):
            self.token = None  # used: a URL left in a shell history or a proxy log opens nothing
        elif not self._has_session(request):  # a reload or textual.js's "Restart" carry the cookie
            raise web.HTTPForbidden(
                text="flopscope serve: no valid token (each printed URL works once)"
            )
        response = await super().handle_index(request)
        response.set_cookie(COOKIE, self.session, httponly=True, samesite="Strict", path="/")
        response.headers["Cache-Control"] = "no-store"
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        origin = request.headers.get("Origin")
        # another site's page (websocket hijacking)
        if origin is not None and origin != self.public_url:
            raise web.HTTPForbidden(text="flopscope serve: foreign origin")
        return await super().handle_websocket(request)

    def initialize_logging(self) -> None:
        # textual-serve logs every request at INFO, the tokened URL included: warnings only
        logging.basicConfig(level="WARNING", format="%(message)s")

    async def on_startup(self, app: web.Application) -> None:
        # In place of textual-serve's banner. aiohttp runs on_startup before it binds the port (and
        # has no hook after), so the URL is printed once a connection to it succeeds: whoever reads
        # it can use it at once.
        self._announcing = asyncio.create_task(self._announce_when_listening())

    async def _announce_when_listening(self) -> None:
        for _ in range(600):
            try:
                _, writer = await asyncio.open_connection(self.host, self.port)
            except OSError:
                await asyncio.sleep(0.02)
                continue
            writer.close()
            self.announce(self.url)
            return


def serve(
    command: str, host: str, port: int, public_url: str, announce: Callable[[str], None]
) -> None:
    """Serve `command` (a shell command line, quoted) until SIGINT or SIGTERM; `announce` gets the
    one-time URL once listening. Raises OSError when it cannot listen (the port taken, the address
    not here): checked by binding it first, since the announcement's probe would also reach another
    server on a taken port."""
    with socket.create_server((host, port)):
        pass
    TokenServer(command, host, port, public_url, announce).serve()
