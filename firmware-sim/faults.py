"""Every fault the simulator can inject: its name, the devices it applies to, its arguments.

A fault is either *device-level* (the firmware model acts on it: a jam, a card drawn face up, a
deck with a missing card) or *link-level* (the device runtime acts on it: a disconnect, a
corrupted CRC, heartbeats stopping). Both are injected the same way, live
(``SimulatedDevice.inject``, the control channel) or from a scenario file, and validated here so
that a wrong name or argument gets one clear message naming it and the way out.

A :class:`Trigger` says when a scheduled fault fires: ``now``, ``after_s`` seconds (wall clock,
from the device's start), or at the Nth card, host command, deck (a shuffler's shuffle, a shoe's
load) or shake. :class:`FaultSchedule`
holds the armed faults and hands each one out exactly once when its count comes up.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from controller.errors import TablectlError
from drivers.protocol.messages import REFUSAL_CODES

ALL = ("shuffler", "shoe", "dice", "box-sensors")
CARDS = ("shuffler", "shoe")
DOORS = ("shuffler", "shoe", "dice")


@dataclass(frozen=True)
class FaultSpec:
    """What a fault is: ``level`` is ``device`` or ``link``; ``args`` maps each argument to
    (type, default); a default of ``...`` makes the argument required."""

    name: str
    level: str
    devices: tuple[str, ...]
    args: dict[str, tuple[type | tuple[type, ...], Any]]
    doc: str


def _spec(name: str, level: str, devices: tuple[str, ...], doc: str, **args: Any) -> FaultSpec:
    return FaultSpec(name, level, devices, args, doc)


_NUM = (int, float)
_OPT_NUM = (int, float, type(None))
_OPT_STR = (str, type(None))

FAULTS: dict[str, FaultSpec] = {s.name: s for s in [
    # --- device level -------------------------------------------------------------------
    _spec("jam", "device", CARDS, "the mechanism jams at once (scheduled at_card: instead of "
          "that card); cleared by the physical action clear_jam", where=(str, "")),
    _spec("malfunction", "device", ALL, "the firmware reports a fault it cannot recover from; "
          "cleared only by a reboot", code=(int, 1), text=(str, "")),
    _spec("refuse", "device", ("shuffler", "dice"), "the firmware refuses the next host "
          "command (any but status, or only `action`) with `code`, once, and does nothing of "
          "it; with count, the next `count` such commands", code=(str, "not-ready"),
          action=(_OPT_STR, None), count=(int, 1)),
    _spec("status_report", "device", ALL, "the firmware sends a StatusReport on its own, as "
          "one may after a restart or a cleared condition: its state, or `state` as a report "
          "made earlier and sent late would carry", state=(_OPT_STR, None)),
    _spec("shuffle_report", "device", ("shuffler",), "the firmware sends a ShuffleDone on "
          "its own, no Shuffle asked (as the report of a shuffle already taken, sent again "
          "under a new session's number, or a shuffle of its own would): nothing is shuffled"),
    _spec("door_open", "device", DOORS, "a door (the agitator's lid) opens"),
    _spec("door_close", "device", DOORS, "the door (lid) closes again"),
    _spec("face_up", "device", ("shoe",), "the next card drawn comes out face up"),
    _spec("misread", "device", CARDS, "the next card leaves but cannot be read"),
    _spec("die_not_flat", "device", ("dice",), "after the next shake a die rests tilted",
          die=(int, 0)),
    _spec("die_out_of_cup", "device", ("dice",), "after the next shake a die is out of the cup; "
          "cleared by the physical action return_die", die=(int, 0)),
    _spec("deck_missing", "device", CARDS, "the next deck lacks a card (a random one unless "
          "named)", card=(_OPT_STR, None)),
    _spec("deck_extra", "device", CARDS, "the next deck holds a foreign card (another deck's "
          "back id); with replace, one of its own cards is gone so the count stays right",
          card=(_OPT_STR, None), deck_id=(int, 2), replace=(bool, False)),
    _spec("deck_duplicate", "device", CARDS, "the next deck holds one card twice; with replace "
          "(the default), another card is gone so the count stays right",
          card=(_OPT_STR, None), replace=(bool, True)),
    _spec("deck_sorted", "device", CARDS, "the next deck (or `decks` decks) comes out "
          "unshuffled, in sorted order", decks=(int, 1)),
    _spec("deck_cut", "device", CARDS, "the next deck is the previous deck merely cut"),
    _spec("deck_repeat", "device", CARDS, "the next deck has the same order as an earlier one "
          "(`back` decks ago)", back=(int, 1)),
    _spec("deck_order", "device", CARDS, "the next deck comes out in exactly this order (a list "
          "of cards such as 'As', 'Kd', 'Qh#2')", cards=(list, ...)),
    # --- link level ---------------------------------------------------------------------
    _spec("disconnect", "link", ALL, "the port goes away (unplugged); it comes back after "
          "duration_s seconds, or on reconnect", duration_s=(_OPT_NUM, None)),
    _spec("reconnect", "link", ALL, "the port comes back under the same stable name"),
    _spec("reboot", "link", ALL, "the device restarts: a BOOT hello, sequence numbers from 1 "
          "again, the firmware back in its power-on state"),
    _spec("garbage", "link", ALL, "random bytes on the wire", nbytes=(int, 16)),
    _spec("corrupt_crc", "link", ALL, "the next `count` frames the device sends carry a wrong "
          "CRC", count=(int, 1), frames=(str, "events")),
    _spec("drop", "link", ALL, "the next `count` frames the device sends are lost",
          count=(int, 1), frames=(str, "events")),
    _spec("duplicate", "link", ALL, "the next `count` frames the device sends arrive twice",
          count=(int, 1), frames=(str, "events")),
    _spec("delay", "link", ALL, "the next `count` frames the device sends are held back "
          "`seconds`", seconds=(_NUM, 0.5), count=(int, 1), frames=(str, "events")),
    _spec("heartbeat_stop", "link", ALL, "heartbeats stop (for duration_s seconds, or until "
          "heartbeat_resume); everything else still works", duration_s=(_OPT_NUM, None)),
    _spec("heartbeat_resume", "link", ALL, "heartbeats start again"),
    _spec("silence", "link", ALL, "the device stops sending anything (heartbeats, replies, "
          "events) for duration_s seconds or until resume; the port stays open",
          duration_s=(_OPT_NUM, None)),
    _spec("resume", "link", ALL, "the device speaks again after silence"),
]}

FAULT_NAMES = tuple(FAULTS)

# The codes a firmware refuses a valid command with (drivers/protocol/messages.py); not
# unknown-command or bad-argument, which answer a command the host got wrong.
REFUSE_CODES = tuple(c for c in REFUSAL_CODES.values()
                     if c not in ("unknown-command", "bad-argument"))


def refuse_action_problem(action: str | None, device_class: str,
                          commands: dict[str, str]) -> str | None:
    """What is wrong with a ``refuse`` fault's ``action`` for a device with ``commands`` (None
    when it names one of them, or none at all)."""
    if action is None or action in commands:
        return None
    return (f"fault 'refuse': a {device_class} has no command {action!r}; use "
            f"{', '.join(commands)}")


# Which frames the output faults (drop, corrupt_crc, duplicate, delay) hit: the device's
# reliable events (the default: they are retransmitted), its acks of commands (the host then
# retransmits the command), its heartbeats, or any frame.
FRAME_KINDS = ("events", "acks", "heartbeats", "any")


@dataclass(frozen=True)
class Fault:
    """One validated fault with its arguments (defaults filled in)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def level(self) -> str:
        return FAULTS[self.name].level

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.name}({extra})"


def make_fault(name: str, device_class: str | None = None, context: str = "",
               **args: Any) -> Fault:
    """Validate ``name`` and ``args`` (for ``device_class`` when given); ``context`` prefixes the
    error message (e.g. the scenario file and entry)."""
    pre = f"{context}: " if context else ""
    spec = FAULTS.get(name)
    if spec is None:
        raise TablectlError(f"{pre}unknown fault {name!r}; use one of {', '.join(FAULT_NAMES)}")
    if device_class is not None and device_class not in spec.devices:
        raise TablectlError(f"{pre}fault {name!r} does not apply to a {device_class}; it applies "
                            f"to {', '.join(spec.devices)}")
    out: dict[str, Any] = {}
    for key, value in args.items():
        if key not in spec.args:
            allowed = ", ".join(spec.args) or "no arguments"
            raise TablectlError(f"{pre}fault {name!r} has no argument {key!r}; it takes {allowed}")
        typ = spec.args[key][0]
        if isinstance(value, bool) and typ in (int, _NUM, _OPT_NUM):
            ok = False
        else:
            ok = isinstance(value, typ)
        if not ok:
            raise TablectlError(f"{pre}fault {name!r}: {key} = {value!r} has the wrong type; "
                                f"it takes {_type_name(typ)}")
        out[key] = value
    for key, (typ, default) in spec.args.items():
        if key not in out:
            if default is ...:
                raise TablectlError(f"{pre}fault {name!r} needs {key} ({_type_name(typ)})")
            out[key] = default
    for key in ("count", "nbytes", "decks", "back"):
        if key in out and out[key] < 1:
            raise TablectlError(f"{pre}fault {name!r}: {key} must be 1 or more")
    for key in ("duration_s", "seconds"):
        if out.get(key) is not None and out[key] < 0:
            raise TablectlError(f"{pre}fault {name!r}: {key} must not be negative")
    if "frames" in out and out["frames"] not in FRAME_KINDS:
        raise TablectlError(f"{pre}fault {name!r}: frames = {out['frames']!r} is unknown; use "
                            f"{', '.join(FRAME_KINDS)}")
    if name == "refuse":
        if out["code"] not in REFUSE_CODES:
            raise TablectlError(f"{pre}fault 'refuse': code = {out['code']!r} is not a refusal "
                                f"a firmware sends; use {', '.join(REFUSE_CODES)}")
        if device_class is not None:
            from .models import MODELS      # here: the models import this module
            problem = refuse_action_problem(out["action"], device_class,
                                            MODELS[device_class].COMMANDS)
            if problem:
                raise TablectlError(f"{pre}{problem}")
    if "die" in out and not 0 <= out["die"] < 16:
        raise TablectlError(f"{pre}fault {name!r}: die is the die's index from 0 (0-3 for four "
                            "dice)")
    return Fault(name, out)


def _type_name(typ: Any) -> str:
    names = {int: "a whole number", float: "a number", str: "text", bool: "true or false",
             list: "a list", type(None): "nothing"}
    if isinstance(typ, tuple):
        return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in typ))
    return names.get(typ, typ.__name__)


# --- triggers and the schedule -----------------------------------------------------------

TRIGGER_KINDS = ("after_s", "at_card", "at_command", "at_deck", "at_shake")


@dataclass(frozen=True)
class Trigger:
    """When a scheduled fault fires: ``kind`` in TRIGGER_KINDS and its value (seconds or N)."""

    kind: str
    value: float

    def __str__(self) -> str:
        return f"{self.kind}={self.value:g}"


class FaultSchedule:
    """Armed faults waiting for their trigger. Counters (cards, commands, shuffles, shakes) are
    advanced by the model and the runtime through :meth:`count`, which returns the faults due
    at that count. Thread-safe: faults may be added from the control channel's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: list[tuple[Trigger, Fault]] = []
        self.counters: dict[str, int] = {k: 0 for k in TRIGGER_KINDS if k != "after_s"}

    def add(self, trigger: Trigger, fault: Fault) -> None:
        with self._lock:
            self._armed.append((trigger, fault))

    def count(self, kind: str) -> list[Fault]:
        """Advance counter ``kind`` (``at_card``…) by one; the faults due at the new count."""
        with self._lock:
            self.counters[kind] += 1
            n = self.counters[kind]
            due = [f for t, f in self._armed if t.kind == kind and t.value == n]
            self._armed = [(t, f) for t, f in self._armed if not (t.kind == kind and t.value == n)]
        return due

    def peek(self, kind: str) -> int:
        """The number the next :meth:`count` of ``kind`` will reach."""
        return self.counters[kind] + 1

    def due_by_time(self, elapsed: float) -> list[Fault]:
        """Faults with ``after_s`` at or before ``elapsed`` seconds (each returned once)."""
        with self._lock:
            due = [f for t, f in self._armed if t.kind == "after_s" and t.value <= elapsed]
            self._armed = [(t, f) for t, f in self._armed
                           if not (t.kind == "after_s" and t.value <= elapsed)]
        return due

    def next_time(self) -> float | None:
        with self._lock:
            times = [t.value for t, _ in self._armed if t.kind == "after_s"]
        return min(times) if times else None

    def pending(self) -> list[tuple[Trigger, Fault]]:
        with self._lock:
            return list(self._armed)
