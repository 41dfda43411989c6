"""The console API and the pit display: ``create_app(runner, config)``; see docs/api.md."""
from .app import commands_for, create_app, hub_of
from .hub import EventHub
from .serve import ApiServer

__all__ = ["ApiServer", "EventHub", "commands_for", "create_app", "hub_of"]
