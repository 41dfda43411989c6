"""What the pit display shows of the devices and the tower light.

Device health joins what the table knows (each device's identity from its hello exchange, its
link and its conditions: jam, door open, malfunction, another unit) with what the drivers know (whether the
link is up now, how long since the device was last heard: its heartbeats or any frame). A part
of the controller itself with something to tell the pit (its wall clock, behind the journal at
start: controller/clock_watch.py) stands among the drivers with a ``health_entry()`` and is
shown in a device's shape after them. Nothing here carries a card.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from controller.table.secrecy import shown_device


def _last_heard(driver: Any) -> float | None:
    """Seconds since the driver last heard its device (heartbeat or any frame)."""
    value = driver.last_heard
    return None if value is None else round(float(value), 3)


def _problem(driver: Any) -> str | None:
    """Why the driver's link cannot come up (it is the device's own words and the
    configuration's: no card), or None."""
    return getattr(driver, "problem", None) if driver is not None else None


# What each condition the table keeps on a device means, and what puts it right. Fixed words:
# the device's own (a malfunction's text, a jam's place) may name a card and stay in the journal.
CONDITION_PROBLEMS = {
    "jam": "the {device} jammed: clear the jam at the device and close it, then the "
           "supervisor gives clear_malfunction",
    "malfunction": "the {device} reported a malfunction or sent what the controller cannot "
                   "read (its words are in the journal): have it checked, then the supervisor "
                   "gives clear_malfunction",
    "door_open": "the {device}'s {door} is open: close it",
    "replaced": "the {device} came back as another unit ({now}; was {was}), which held none "
                "of what the one before did: check it is an approved unit for this table, "
                "then the supervisor gives clear_malfunction",
}


def _unit(ident: Mapping[str, Any] | None) -> str:
    """A unit as the pit tells it from another: its serial number and firmware hash."""
    ident = ident or {}
    return (f"serial {ident.get('serial', 'unknown')}, "
            f"firmware hash {ident.get('firmware_hash', 'unknown')}")


def _condition_problem(name: str, device_class: str, conditions: list[str],
                       table: Any = None, shown: str | None = None) -> str | None:
    """The conditions of a linked device in words, with the way out of each; None without.
    ``table`` gives a replaced device's identities, the one before and the one now; ``shown``
    the device's name as the health lists it (``name`` by default)."""
    door = "lid" if device_class == "dice" else "door"
    was = getattr(table, "replaced_units", {}).get(name)
    now = getattr(table, "identities", {}).get(name)
    texts = [CONDITION_PROBLEMS[c].format(device=shown or name, door=door, was=_unit(was),
                                          now=_unit(now))
             for c in conditions if c in CONDITION_PROBLEMS]
    return "; ".join(texts) or None


def device_health(table: Any, drivers: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One entry per configured device: ``device``, ``class``, ``link`` (``up``, ``lost``,
    ``connecting`` or ``unknown``), ``last_heard_s``, ``identity`` (vendor, model, serial, firmware
    version and hash, as the device said at its last hello), ``conditions`` and ``problem`` (while
    the link is not up: the driver's latest reason it cannot link, with what to check; else, or
    when the driver has none, what the conditions mean and the way out of each; None when there is
    nothing to tell). Then, in the same shape, an entry for each part of the controller in
    ``drivers`` (one with ``health_entry()``) that has something to tell the pit: the wall clock,
    class ``clock``, while it is behind the journal."""
    drivers = drivers or {}
    parts = {n: d for n, d in drivers.items() if hasattr(d, "health_entry")}
    drivers = {n: d for n, d in drivers.items() if n not in parts}
    out = []
    names = list(dict.fromkeys([*table.devices, *drivers]))
    for name in names:
        conditions = sorted(table.conditions.get(name, ()))
        driver = drivers.get(name)
        if driver is not None:
            link = "up" if driver.is_up else ("lost" if "link_lost" in conditions
                                              or getattr(driver.link, "state", "") == "down"
                                              else "connecting")
        elif name in table.known_devices() or "link_lost" in conditions:
            # No driver of the running process (a device of the configuration a round in play
            # keeps): as the table's view says it, never "up" from an earlier process's link,
            # and connecting, not unknown, when it never linked since the controller started.
            link = table.link_of(name)
        else:
            link = "unknown"
        # marked as the view marks it: an id of an earlier table.toml that spells a card
        shown = shown_device(name)
        out.append({"device": shown, "class": table.devices.get(name, getattr(
                        getattr(driver, "spec", None), "device_class", name)),
                    "link": link, "last_heard_s": _last_heard(driver) if driver else None,
                    "identity": dict(table.identities.get(name, {})) or None,
                    "conditions": conditions,
                    "problem": (_problem(driver) if link != "up" else None)
                    or _condition_problem(name, table.devices.get(name, ""), conditions,
                                          table, shown)})
    # The controller's own parts: shown only while they have something to say.
    out += [e for e in (p.health_entry() for p in parts.values()) if e is not None]
    return out


HealthSource = Callable[[], list[dict[str, Any]]]
