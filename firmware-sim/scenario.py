"""Scenario files: which simulated devices to start and which faults to inject, and when.

A scenario is TOML (format in firmware-sim/README.md)::

    seed = 7                      # optional: the table's seed and speed
    speed = 20.0

    [devices.shoe]                # optional: one table per device, named as the device
    deck = ["As", "Kd", "Qh#2"]   # explicit deck order; cut_at, serial, codec, transport…

    [[faults]]
    device = "shoe"               # or a list; none: every device the fault applies to
    fault = "face_up"
    at_card = 3                   # one trigger: after_s, at_card, at_command, at_deck, at_shake
                                  # (none: at once, when the device starts)
    [[faults]]
    device = "shuffler"
    fault = "malfunction"
    at_card = 10
    code = 3                      # the fault's own arguments

Every mistake is reported with the file, the entry and the key at fault, and what to write
instead; nothing starts from a scenario that does not load.
"""
from __future__ import annotations

import math

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from controller.access import reason
from controller.errors import TablectlError

from .faults import FAULTS, TRIGGER_KINDS, Fault, Trigger, make_fault
from .models import MODELS

DEVICE_CLASSES = tuple(MODELS)
TOP_KEYS = ("seed", "speed", "description", "devices", "faults")
DEVICE_KEYS = ("class", "transport", "seed", "speed", "deck", "cut_at", "serial", "codec",
               "recognises_cards", "dice", "boxes", "tcp_port", "link")


class ScenarioError(TablectlError):
    """A scenario file that cannot be used; the message names the key and the fix."""


@dataclass(frozen=True)
class ScheduledFault:
    """One ``[[faults]]`` entry: for the devices named (None: every started device the fault
    applies to), fired by ``trigger`` (None: at once, when the device starts)."""

    devices: tuple[str, ...] | None
    trigger: Trigger | None
    fault: Fault
    where: str = ""

    def applies_to(self, name: str, device_class: str) -> bool:
        if self.devices is None:
            return device_class in FAULTS[self.fault.name].devices
        return name in self.devices


@dataclass
class Scenario:
    source: str
    description: str = ""
    seed: int | None = None
    speed: float | None = None
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    faults: list[ScheduledFault] = field(default_factory=list)

    def device_class(self, name: str) -> str | None:
        """The class of device ``name``: its ``class`` key, or the name itself."""
        opts = self.devices.get(name, {})
        cls = opts.get("class", name)
        return cls if cls in DEVICE_CLASSES else None

    def faults_for(self, name: str, device_class: str) -> list[ScheduledFault]:
        """The faults of device ``name``, validated for its class."""
        out = []
        for sf in self.faults:
            if sf.applies_to(name, device_class):
                try:
                    make_fault(sf.fault.name, device_class, f"{sf.where} (device {name!r})",
                               **sf.fault.args)
                except ScenarioError:
                    raise
                except TablectlError as exc:
                    raise ScenarioError(str(exc)) from None
                out.append(sf)
        return out

    def check_devices(self, started: dict[str, str]) -> None:
        """Every entry must reach a started device (``started``: name -> class)."""
        for sf in self.faults:
            if any(sf.applies_to(n, c) for n, c in started.items()):
                continue
            if sf.devices is None:
                raise ScenarioError(f"{sf.where}: fault {sf.fault.name!r} applies to "
                                    f"{', '.join(FAULTS[sf.fault.name].devices)} and none is "
                                    f"started (started: {', '.join(started) or 'none'}); start "
                                    "one or remove the entry")
            raise ScenarioError(f"{sf.where}: device {' or '.join(sf.devices)} is not started "
                                f"(started: {', '.join(started) or 'none'}); start it too or "
                                "remove the entry")


def bundled() -> list[str]:
    """Names of the scenarios shipped in firmware-sim/scenarios/."""
    root = resources.files("firmware_sim") / "scenarios"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".toml"))


def load_scenario(path_or_name: str | Path) -> Scenario:
    """Read a scenario file, or a bundled scenario by name (``deck-sorted``)."""
    p = Path(path_or_name)
    if not p.exists() and p.suffix != ".toml" and "/" not in str(path_or_name):
        candidate = resources.files("firmware_sim") / "scenarios" / f"{path_or_name}.toml"
        if candidate.is_file():
            return parse_scenario(candidate.read_text(), f"{path_or_name}.toml")
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ScenarioError(f"scenario {str(path_or_name)!r} not found; give a .toml path or a "
                            f"bundled scenario ({', '.join(bundled())})") from None
    except IsADirectoryError:
        raise ScenarioError(f"scenario {str(path_or_name)!r} is a directory; give a scenario "
                            "file (.toml) or a bundled scenario's name") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"scenario {str(path_or_name)!r} is not UTF-8 text (byte "
                            f"{exc.start}); give a TOML scenario file") from None
    except OSError as exc:
        raise ScenarioError(f"scenario {str(path_or_name)!r} cannot be read: "
                            f"{reason(exc)}; check the path and its permissions") from None
    return parse_scenario(text, str(p))


def parse_scenario(text: str, source: str = "<scenario>") -> Scenario:
    """Parse and check a scenario's TOML text; ScenarioError names what is wrong."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source} is not valid TOML: {exc}; fix that line") from None
    sc = Scenario(source)
    for key in doc:
        if key not in TOP_KEYS:
            raise ScenarioError(f"{source}: unknown key {key!r} at the top; use "
                                f"{', '.join(TOP_KEYS)} (faults go in [[faults]] entries)")
    if "description" in doc:
        sc.description = _typed(doc["description"], str, f"{source}: description", "text")
    if "seed" in doc:
        sc.seed = _int(doc["seed"], f"{source}: seed")
    if "speed" in doc:
        sc.speed = _speed(doc["speed"], f"{source}: speed")
    devices = doc.get("devices", {})
    if not isinstance(devices, dict):
        raise ScenarioError(f"{source}: devices must be tables such as [devices.shoe]")
    for name, opts in devices.items():
        sc.devices[name] = _device(name, opts, f"{source}: [devices.{name}]")
    faults = doc.get("faults", [])
    if not isinstance(faults, list) or not all(isinstance(f, dict) for f in faults):
        raise ScenarioError(f"{source}: faults must be [[faults]] entries (an array of tables)")
    for i, entry in enumerate(faults, 1):
        sc.faults.append(_fault(sc, entry, f"{source}: [[faults]] #{i}"))
    return sc


def _device(name: str, opts: Any, where: str) -> dict[str, Any]:
    if not isinstance(opts, dict):
        raise ScenarioError(f"{where} must be a table of settings")
    for key in opts:
        if key not in DEVICE_KEYS:
            raise ScenarioError(f"{where}: unknown key {key!r}; use {', '.join(DEVICE_KEYS)}")
    cls = opts.get("class", name)
    if cls not in DEVICE_CLASSES:
        raise ScenarioError(f"{where}: class {cls!r} is unknown; set class = one of "
                            f"{', '.join(DEVICE_CLASSES)} (or name the device after its class)")
    if "seed" in opts:
        _int(opts["seed"], f"{where}: seed")
    if "speed" in opts:
        _speed(opts["speed"], f"{where}: speed")
    if "transport" in opts and opts["transport"] not in ("pty", "tcp", "usb"):
        raise ScenarioError(f"{where}: transport {opts['transport']!r} is unknown; use pty, "
                            "tcp or usb")
    if "deck" in opts:
        from .models.deck import parse_deck
        deck = opts["deck"]
        if not isinstance(deck, (list, str)):
            raise ScenarioError(f"{where}: deck must be a list of cards such as "
                                "[\"As\", \"Kd\", \"Qh#2\"]")
        try:
            parse_deck(deck)
        except TablectlError as exc:
            raise ScenarioError(f"{where}: deck: {exc}") from None
    return dict(opts)


def _fault(sc: Scenario, entry: dict[str, Any], where: str) -> ScheduledFault:
    entry = dict(entry)
    name = entry.pop("fault", None)
    if name is None:
        raise ScenarioError(f"{where}: no fault key; add fault = \"NAME\" (one of "
                            f"{', '.join(FAULTS)})")
    if not isinstance(name, str):
        raise ScenarioError(f"{where}: fault must be a name in quotes, e.g. fault = \"jam\"")
    device = entry.pop("device", None)
    if isinstance(device, str):
        device = [device]
    if device is not None and (not isinstance(device, list) or not device
                               or not all(isinstance(d, str) for d in device)):
        raise ScenarioError(f"{where}: device must be a device name in quotes, or a list of "
                            "them, e.g. device = [\"shoe\", \"shuffler\"]")
    triggers = [k for k in TRIGGER_KINDS if k in entry]
    if len(triggers) > 1:
        raise ScenarioError(f"{where}: {' and '.join(triggers)} both given; keep one trigger")
    trigger = None
    if triggers:
        kind = triggers[0]
        value = entry.pop(kind)
        if kind == "after_s":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ScenarioError(f"{where}: after_s = {value!r} must be seconds, 0 or more")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ScenarioError(f"{where}: {kind} = {value!r} must be a count from 1 (the "
                                f"first {kind[3:]} is 1)")
        trigger = Trigger(kind, value)
    for key in entry:
        spec = FAULTS.get(name)
        if spec is not None and key not in spec.args:
            takes = ", ".join(spec.args) or "no arguments"
            raise ScenarioError(f"{where}: unknown key {key!r}: fault {name!r} takes {takes}; "
                                f"a trigger is one of {', '.join(TRIGGER_KINDS)}; and device "
                                "names the device")
    try:
        fault = make_fault(name, None, where, **entry)
        for d in device or ():
            cls = sc.device_class(d)
            if cls is not None:
                make_fault(name, cls, f"{where} (device {d!r})", **entry)
    except ScenarioError:
        raise
    except TablectlError as exc:
        raise ScenarioError(str(exc)) from None
    return ScheduledFault(tuple(device) if device else None, trigger, fault, where)


def _typed(v: Any, typ: type, where: str, what: str) -> Any:
    if not isinstance(v, typ) or isinstance(v, bool) and typ is not bool:
        raise ScenarioError(f"{where} = {v!r} must be {what}")
    return v


def _int(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ScenarioError(f"{where} = {v!r} must be a whole number, e.g. 7")
    return v


def _speed(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf:
        raise ScenarioError(f"{where} = {v!r} must be a finite number above 0 (1.0 is real "
                            "time, 20 twenty times faster)")
    return float(v)
