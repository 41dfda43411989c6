"""Mount the console API on the daemon (controller.service.Service) in one call."""
from __future__ import annotations

from typing import Any

from .app import create_app
from .serve import ApiServer


async def start_for_service(service: Any) -> ApiServer:
    """Serve the API and the page for ``service``: its runner (commands journaled with their
    role, public events streamed), its ``submit`` (commands take their turn on the one input
    queue), its drivers (link state, last heard) and its configuration's ``[api]`` address.
    Call it from the running loop once ``service.runner`` exists; ``await server.close()`` on
    the way out, before the journal closes."""
    if getattr(service, "runner", None) is None:
        raise RuntimeError("start the API after the service has built its table runner")
    app = create_app(service.runner, service.config, submit=getattr(service, "submit", None),
                     drivers=getattr(service, "drivers", None))
    return await ApiServer.start(app, service.config)
