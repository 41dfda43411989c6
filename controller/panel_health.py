"""What the pit display's health says of the dealer's panel (controller/api/health.py).

Nothing while the panel works. While it could not be opened when the service started (the
table goes on without its buttons, key switch, box sensors and tower light, whose dark lamp
reads to the croupier as a table stopped), or while its tower light cannot be driven (the lamp
on the table may show another signal than the table's), an entry in a device's shape names
the fault in the pin library's words with the way out: the pit, whose display shows the
table's light, sees it, not only the log.
"""
from __future__ import annotations

from typing import Any

HEALTH_NAME = "dealer panel"      # no device's: a device id has no space
NOT_OPENED = "panel_unavailable"
LIGHT_FAILED = "light_failed"


class PanelHealth:
    """The panel's fault, if any, for the health (``health_entry()``)."""

    def __init__(self) -> None:
        self.condition: str | None = None
        self.problem: str | None = None

    def fault(self, condition: str, problem: str) -> None:
        self.condition, self.problem = condition, problem

    def clear(self, condition: str) -> None:
        """The fault ``condition`` is over (another one stays)."""
        if self.condition == condition:
            self.condition = self.problem = None

    def health_entry(self) -> dict[str, Any] | None:
        if self.condition is None:
            return None
        return {"device": HEALTH_NAME, "class": "panel", "link": "unknown",
                "last_heard_s": None, "identity": None, "conditions": [self.condition],
                "problem": self.problem}
