"""``tablectl sim``: start simulated devices and keep them running until interrupted.

Prints one line per device, its name then the port a host opens, then ``key=value`` details,
and a last line with the control channel's address::

    shuffler /dev/pts/7 stable=/tmp/tablectl-sim-k2j1/shuffler serial=SIM-SHF-00000
    shoe /dev/pts/8 stable=/tmp/tablectl-sim-k2j1/shoe serial=SIM-SHO-00000
    control 127.0.0.1:40123

``--json`` prints one JSON object instead. The devices run until SIGINT or SIGTERM (or the
control channel's ``shutdown`` action); then every port is closed and the command exits 0.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import socket
import sys
import threading
from pathlib import Path

from controller.access import reason
from controller.errors import TablectlError

DEVICE_CLASSES = ("shuffler", "shoe", "dice", "box-sensors")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sim", help="run simulated devices (shuffler, shoe, dice, box sensors)",
        description="Start simulated devices on pseudo-terminals (or TCP ports), print where "
                    "each one listens, and keep them running until interrupted. Faults come "
                    "from --scenario or live through the control channel "
                    "(firmware-sim/README.md).")
    p.add_argument("devices", nargs="*", metavar="DEVICE",
                   help="shuffler, shoe, dice or box-sensors; NAME=CLASS for a second one "
                        "(e.g. spare=shoe); none: the devices the scenario lists")
    p.add_argument("--scenario", metavar="FILE",
                   help="scenario file (TOML), or a bundled scenario's name such as deck-sorted")
    p.add_argument("--seed", type=int, default=None, help="seed of shuffles and dice (default 0)")
    p.add_argument("--speed", type=float, default=None,
                   help="speed factor of the mechanical timings (default 1.0: real time)")
    p.add_argument("--transport", choices=("pty", "tcp"), default="pty",
                   help="pty (default) or tcp (socket://127.0.0.1:PORT)")
    p.add_argument("--codec", default="tablectl",
                   help="wire protocol: tablectl (default) or dice-binary (dice only)")
    p.add_argument("--control", default="tcp", metavar="ADDRESS",
                   help="control channel: tcp (a free port on 127.0.0.1, the default), "
                        "tcp:PORT or unix:PATH")
    p.add_argument("--link-dir", metavar="DIR",
                   help="where the stable names (symlinks to the pseudo-terminals) are made")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--list-scenarios", action="store_true",
                   help="list the bundled scenarios with what each shows, and exit")
    p.set_defaults(func=cmd_sim)


def _parse_devices(items: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for item in items:
        name, sep, cls = item.partition("=")
        if not sep:
            cls = name
        if cls not in DEVICE_CLASSES:
            raise TablectlError(f"device {item!r} is unknown; use {', '.join(DEVICE_CLASSES)} "
                                "(or NAME=CLASS, e.g. spare=shoe)")
        if not name:
            raise TablectlError(f"device {item!r} has no name before '='")
        if any(n == name for n, _ in out):
            raise TablectlError(f"device {name!r} is named twice; give the second one a name, "
                                f"e.g. {name}2={cls}")
        out.append((name, cls))
    return out


def _check_control(address: str) -> None:
    """Refuse, before anything starts, a control address that cannot be bound: a port out of
    range or in use, a socket path whose directory is missing, or a path that holds anything
    but a socket (which binding would delete)."""
    if address.startswith("unix:"):
        path = Path(address[5:])
        where = f"--control {address}"
        if not address[5:]:
            raise TablectlError(f"{where}: give the socket's path, e.g. unix:/tmp/sim.sock")
        if not path.parent.is_dir():
            raise TablectlError(f"{where}: the directory {path.parent} does not exist; create "
                                "it or give another path")
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise TablectlError(f"{where}: this user may not write {path.parent}; give a path "
                                "in a directory you can write, e.g. unix:/tmp/sim.sock")
        if (path.exists() or path.is_symlink()) and not path.is_socket():
            raise TablectlError(f"{where}: {path} exists and is not a socket; it is left as "
                                "it is: give another path")
        if len(os.fsencode(path)) > 107:
            raise TablectlError(f"{where}: the path is too long for a Unix socket (107 bytes "
                                "at most); give a shorter one")
    elif address.startswith("tcp:"):
        text = address[4:]
        if not (text.isascii() and text.isdigit() and int(text) <= 65535):
            raise TablectlError(f"--control {address}: the port must be a number from 0 to "
                                "65535 (0: any free port), e.g. tcp:7100")
        if int(text):
            probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(("127.0.0.1", int(text)))
            except OSError as exc:
                raise TablectlError(f"--control {address}: port {text} cannot be bound on "
                                    f"127.0.0.1 ({reason(exc)}); give another port, or tcp "
                                    "for any free one") from None
            finally:
                probe.close()
    elif address != "tcp":
        raise TablectlError(f"control address {address!r} is unknown; use tcp, tcp:PORT or "
                            "unix:PATH")


def _check_link_dir(link_dir: str) -> None:
    """Make --link-dir if it is missing (as the simulator would), refusing one that is not a
    directory or cannot be made, with the way out instead of an OS error."""
    path = Path(link_dir)
    if path.exists() and not path.is_dir():
        raise TablectlError(f"--link-dir {path} exists and is not a directory; give a "
                            "directory (it is made if missing)")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise TablectlError(f"--link-dir {path} cannot be made: {reason(exc)}; give a "
                            "directory you can write, or leave --link-dir out (a new temporary "
                            "folder)") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise TablectlError(f"--link-dir {path}: this user may not write it; give a directory "
                            "you can write, or leave --link-dir out (a new temporary folder)")


def cmd_sim(args: argparse.Namespace) -> int:
    from firmware_sim import SimulatedTable
    from firmware_sim.scenario import load_scenario

    if args.list_scenarios:
        from firmware_sim.scenario import bundled
        for name in bundled():
            text = " ".join(load_scenario(name).description.split())
            print(f"{name}: {text}" if text else name)
        return 0
    if args.speed is not None and not 0 < args.speed < math.inf:
        raise TablectlError(f"--speed {args.speed} must be a number above 0, and finite (1.0 is "
                            "real time, 1000 a thousand times faster)")
    if args.codec not in ("tablectl", "dice-binary"):
        raise TablectlError(f"--codec {args.codec!r} is unknown; use tablectl or dice-binary")
    wanted = _parse_devices(args.devices)
    _check_control(args.control)
    if args.link_dir:
        _check_link_dir(args.link_dir)
    scenario = load_scenario(args.scenario) if args.scenario else None
    if not wanted and scenario is not None:
        wanted = [(n, scenario.device_class(n) or n) for n in scenario.devices]
    if not wanted:
        raise TablectlError("name at least one device: shuffler, shoe, dice or box-sensors "
                            "(e.g. tablectl sim shuffler shoe)")

    for name, _ in wanted:
        if scenario is not None and scenario.devices.get(name, {}).get("transport") == "usb":
            raise TablectlError(f"{scenario.source}: [devices.{name}] transport = \"usb\" works "
                                "only inside the host's own process (the Python API); use pty "
                                "or tcp with tablectl sim")

    stop = threading.Event()

    def on_signal(signum, frame):     # noqa: ARG001 - the signal API's signature
        stop.set()
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}

    seed = args.seed if args.seed is not None else (
        scenario.seed if scenario and scenario.seed is not None else 0)
    speed = args.speed if args.speed is not None else (
        scenario.speed if scenario and scenario.speed is not None else 1.0)
    table = SimulatedTable(seed=seed, speed=speed, transport=args.transport, scenario=scenario,
                           control=args.control, link_dir=args.link_dir)
    try:
        for name, cls in wanted:
            table.add(cls, name, codec=args.codec)
        table.check_scenario()
        _print(table, args.json)
        control = table._control
        while not stop.is_set() and not (control is not None and control.shutdown.is_set()):
            stop.wait(0.2)
    finally:
        table.stop()
        for s, h in old.items():
            signal.signal(s, h)
    return 0


def _print(table, as_json: bool) -> None:
    if as_json:
        doc = {"devices": {d.name: {"class": d.device_class, "port": d.tty or d.port,
                                    "stable": d.port, "transport": d.transport,
                                    "serial": d.serial} for d in table.devices.values()},
               "control": table.control_address, "seed": table.seed, "speed": table.speed}
        print(json.dumps(doc))
    else:
        for d in table.devices.values():
            extra = f" stable={d.port}" if d.transport == "pty" else ""
            print(f"{d.name} {d.tty or d.port}{extra} serial={d.serial}")
        print(f"control {table.control_address}")
    sys.stdout.flush()
