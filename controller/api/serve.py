"""Start and stop the console API's HTTP server on the configured address.

The access log names the method, the path (never the query string, which may hold the event
stream's token), the status, the role and the time taken.
"""
from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from controller.config import ApiConfig
from controller.logs import get_logger

from .app import ROLE



def _log():
    """The API's logger, as configured now (the daemon configures logging after import)."""
    return get_logger("api")


class AccessLogger(AbstractAccessLogger):
    """One structured line per request; no token, no query string."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        _log().info("http", method=request.method, path=request.path, status=response.status,
                 role=request.get(ROLE), remote=request.remote, ms=round(time * 1000, 1))


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
                               handle_signals=False)
        await runner.setup()
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
