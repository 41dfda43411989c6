"""Start and stop the console API's HTTP server on the configured address.

The access log names the method, the path (never the query string, which may hold the event
stream's token), the status, the role and the time taken.

Each open connection holds one of the daemon's file descriptors, which the journal and the
devices' ports need too (a systemd service has 1024). So the server holds at most
MAX_CONNECTIONS: a connection beyond them closes the oldest one with no request in hand (idle
between requests, or its request not yet sent in full), or, when every one has a request in
hand, is itself closed. An idle connection is closed after KEEPALIVE_S.
"""
from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError

from controller.config import ApiConfig
from controller.logs import get_logger
from controller.table.secrecy import scrub

from .app import BUSY, ROLE

# Far more than the pit's displays and consoles open (a page holds its event stream and a
# request or two), far fewer than the 1024 file descriptors of a systemd service.
MAX_CONNECTIONS = 128
# A connection with no request (between two, or none yet sent in full) is closed after this.
KEEPALIVE_S = 30.0


def _log():
    """The API's logger, as configured now (the daemon configures logging after import)."""
    return get_logger("api")


class AccessLogger(AbstractAccessLogger):
    """One structured line per request; no token, no query string."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        # a card spelled in a path (a command's name as sent) is masked, as in the answers
        _log().info("http", method=request.method, path=scrub(request.path),
                    status=response.status,
                    role=request.get(ROLE), remote=request.remote, ms=round(time * 1000, 1))


class ServerLog(logging.Logger):
    """aiohttp's server logger, but a request it cannot parse (a bad request line or header,
    a line too long) is one warning naming the kind of fault and the remote address: the
    parser's own message quotes the request line, where the event stream's ``?token=`` is,
    and its traceback at error level, once per request, is a client's to fill the log with."""

    def _log(self, level: int, msg: object, args: Any, exc_info: Any = None,
             *rest: Any, **kw: Any) -> None:
        exc = sys.exc_info()[1] if exc_info is True else (
            exc_info[1] if isinstance(exc_info, tuple) else exc_info)
        if isinstance(exc, HttpProcessingError):
            level, exc_info = min(level, logging.WARNING), None   # aiohttp's debug stays
            msg = f"http request not understood ({type(exc).__name__}), answered 400; from %s"
            args = args[:1] if isinstance(args, tuple) else ()
            if not args:
                msg, args = msg.replace("; from %s", ""), ()
        super()._log(level, msg, args, exc_info, *rest, **kw)


def _server_log() -> logging.Logger:
    log = ServerLog("aiohttp.server")
    log.parent = logging.getLogger("aiohttp")      # to the daemon's handlers, as aiohttp's own
    return log


class ApiServer:
    """The running API: ``await ApiServer.start(app, config)``, then ``await server.close()``.

    ``port`` is the port actually bound (useful when the configuration says 0)."""

    def __init__(self, runner: web.AppRunner, site: web.TCPSite, host: str, port: int) -> None:
        self.runner, self.site, self.host, self.port = runner, site, host, port

    @classmethod
    async def start(cls, app: web.Application, config: Any, *, host: str | None = None,
                    port: int | None = None) -> "ApiServer":
        """Listen on ``[api] listen``/``port`` of ``config`` (127.0.0.1:8740 by default)."""
        api: ApiConfig = config.api if hasattr(config, "api") else config
        host = host or api.listen
        port = api.port if port is None else port
        runner = web.AppRunner(app, access_log_class=AccessLogger, shutdown_timeout=2.0,
                               handle_signals=False, keepalive_timeout=KEEPALIVE_S,
                               logger=_server_log())
        await runner.setup()
        _bound(runner.server, app[BUSY], MAX_CONNECTIONS)
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()      # so the same app can be started again later
            raise
        bound = port
        server = getattr(site, "_server", None)
        if server is not None and server.sockets:
            bound = server.sockets[0].getsockname()[1]
        _log().info("api listening", host=host, port=bound)
        return cls(runner, site, host, bound)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def close(self) -> None:
        await self.runner.cleanup()


def _bound(server: Any, busy: set[Any], limit: int) -> None:
    """Keep ``server``'s connections at most ``limit``: one beyond closes the oldest with no
    request in hand (``busy`` holds those with one), else itself."""
    made, lost = server.connection_made, server.connection_lost
    live: dict[Any, Any] = {}          # handler -> transport, oldest first
    closed = 0

    def connection_made(handler: Any, transport: Any) -> None:
        nonlocal closed
        made(handler, transport)
        live[handler] = transport
        if len(live) <= limit:
            return
        victim = next((h for h in live if h is not handler and h not in busy), handler)
        peer = live.pop(victim).get_extra_info("peername") or ("?",)
        if victim is handler:
            # Its own serving task is not started yet: closed now, the task would find the
            # connection gone and fail. Closed once it has started (two hops of the loop).
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, victim.force_close)
        else:
            victim.force_close()
        closed += 1
        if closed in (1, 10, 100) or closed % 1000 == 0:
            _log().warning("console connections at their limit; one closed",
                           limit=limit, closed=closed, remote=peer[0],
                           fix="a client opens connections without using them: find it "
                               "by the remote addresses of the access log, or firewall the "
                               "console's port to the pit's own addresses")

    def connection_lost(handler: Any, exc: BaseException | None = None) -> None:
        live.pop(handler, None)
        lost(handler, exc)

    server.connection_made = connection_made
    server.connection_lost = connection_lost
