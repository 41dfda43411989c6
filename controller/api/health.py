"""What the pit display shows of the devices and the tower light.

Device health joins what the table knows (each device's identity from its hello exchange, its
link and its conditions: jam, door open, malfunction) with what the drivers know (whether the
link is up now, how long since the device was last heard: its heartbeats or any frame). Nothing
here carries a card.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping


def _last_heard(driver: Any) -> float | None:
    """Seconds since the driver last heard its device (heartbeat or any frame)."""
    value = driver.last_heard
    return None if value is None else round(float(value), 3)


def _problem(driver: Any) -> str | None:
    """Why the driver's link cannot come up (it is the device's own words and the
    configuration's: no card), or None."""
    return getattr(driver, "problem", None) if driver is not None else None


def device_health(table: Any, drivers: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One entry per configured device: ``device``, ``class``, ``link`` (``up``, ``lost`` or
    ``unknown``), ``last_heard_s``, ``identity`` (vendor, model, serial, firmware version and
    hash, as the device said at its last hello), ``conditions`` and ``problem`` (while the
    link is not up: the driver's latest reason it cannot link, with what to check; else
    None)."""
    drivers = drivers or {}
    out = []
    names = list(dict.fromkeys([*table.devices, *drivers]))
    for name in names:
        conditions = sorted(table.conditions.get(name, ()))
        driver = drivers.get(name)
        if driver is not None:
            link = "up" if driver.is_up else ("lost" if "link_lost" in conditions
                                              or getattr(driver.link, "state", "") == "down"
                                              else "connecting")
        elif "link_lost" in conditions:
            link = "lost"
        elif name in table.identities:
            link = "up"
        else:
            link = "unknown"
        out.append({"device": name, "class": table.devices.get(name, getattr(
                        getattr(driver, "spec", None), "device_class", name)),
                    "link": link, "last_heard_s": _last_heard(driver) if driver else None,
                    "identity": dict(table.identities.get(name, {})) or None,
                    "conditions": conditions,
                    "problem": _problem(driver) if link != "up" else None})
    return out


HealthSource = Callable[[], list[dict[str, Any]]]
