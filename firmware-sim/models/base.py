"""What every simulated firmware shares: states, timers on a caller-given clock, outputs.

A model is a pure state machine. It never reads a clock and never does I/O: every call takes
``now`` (seconds, any monotonic origin) and returns the events the firmware emits as
:class:`Emit` values, named with the event kinds of :mod:`drivers.events` (``card_drawn``,
``jam``…). Work that takes time (a shuffle, a shake) is a timer; :meth:`FirmwareModel.advance`
fires the timers that are due and :meth:`FirmwareModel.next_deadline` says when the next one is.
The device runtime drives a model from the real clock; tests drive it with any numbers.

A host command the firmware cannot carry out in its present state raises :class:`Refused` with
an error code (the protocol's NAK); the model is unchanged when that happens. A physical action
that cannot happen (drawing from a jammed shoe) raises :class:`SimulatorError`.
"""
from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field
from typing import Any, Callable

from controller.errors import TablectlError

from ..faults import Fault, FaultSchedule, refuse_action_problem

# Error codes a firmware refuses a command with (the protocol maps them to its own numbers).
# The names are the protocol's (drivers/protocol/messages.py REFUSAL_CODES).
REFUSALS = ("unknown-command", "bad-argument", "busy", "not-ready", "empty", "door-open",
            "jammed", "fault")


class SimulatorError(TablectlError):
    """A request to the simulator that cannot be met (bad action, argument or scenario)."""


class Refused(Exception):
    """The firmware refuses a host command: ``code`` is one of REFUSALS."""

    def __init__(self, code: str, text: str = "") -> None:
        super().__init__(f"{code}: {text}" if text else code)
        self.code = code
        self.text = text


@dataclass(frozen=True)
class Emit:
    """One event the firmware sends: ``kind`` as in drivers.events, ``fields`` its payload
    (cards as :class:`~firmware_sim.models.deck.DeckCard` or ``None``)."""

    kind: str
    fields: dict[str, Any] = field(default_factory=dict)


# Realistic durations at speed 1.0, in seconds (vendors' brochures: a single-deck shuffle takes
# about half a minute, a hand comes out in a second or two, an agitator shakes for a few seconds).
TIMINGS = {
    "shuffle": 30.0,
    "dispense_card": 0.8,
    "dispense_hand_card": 0.6,
    "deck_check": 12.0,
    "shake": 4.0,
    "settle": 1.0,
}


class FirmwareModel:
    """Base of the four device models. Subclasses set ``device_class`` and ``COMMANDS``
    (command name -> method name) and implement their states."""

    device_class = ""
    COMMANDS: dict[str, str] = {}
    #: the states in which a door/lid open is possible (all but a malfunction by default)
    has_door = True
    #: the state name while the door is open (the protocol's ``door-open``; the agitator's lid)
    door_state = "door-open"

    def __init__(self, *, seed: int = 0, speed: float = 1.0,
                 schedule: FaultSchedule | None = None, recognises_cards: bool = True) -> None:
        if not speed > 0:
            raise SimulatorError(f"speed {speed!r} must be above 0 (1.0 is real time, 50 is "
                                 "fifty times faster)")
        self.seed = seed
        self.speed = float(speed)
        self.rng = random.Random(seed)
        self.schedule = schedule or FaultSchedule()
        self.recognises_cards = recognises_cards
        self.state = "idle"
        self.door_open = False
        self.fault_code: int | None = None
        self.fault_text = ""
        self.now = 0.0
        self._out: list[Emit] = []
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = itertools.count()
        #: link-level faults that came due inside the model (e.g. at the Nth card);
        #: the runtime takes them with :meth:`take_link_faults`.
        self._link_faults: list[Fault] = []
        #: an injected refusal (the ``refuse`` fault's arguments) waiting for its command
        self._refusal: dict[str, Any] | None = None

    # --- the runtime's side -----------------------------------------------------------

    def command(self, name: str, now: float, **args: Any) -> list[Emit]:
        """Carry out host command ``name``; the events it emits at once. Raises Refused."""
        self._at(now)
        method = self.COMMANDS.get(name)
        if method is None:
            raise Refused("unknown-command", f"a {self.device_class} has no command {name!r}")
        self._refuse_if_armed(name)
        if name != "status":
            self._check_operational()
        getattr(self, method)(**args)
        return self._flush()

    def advance(self, now: float) -> list[Emit]:
        """Fire every timer due at ``now``; the events they emit."""
        while self._timers and self._timers[0][0] <= now:
            due, _, fn = heapq.heappop(self._timers)
            self._at(due)          # a timer runs at its own time: the next one counts from it
            fn()
        self._at(now)
        return self._flush()

    def next_deadline(self) -> float | None:
        return self._timers[0][0] if self._timers else None

    def inject(self, fault: Fault, now: float) -> list[Emit]:
        """Apply a device-level fault now (or arm it for the next card/shake)."""
        self._at(now)
        self._apply_fault(fault)
        return self._flush()

    def reboot(self, now: float) -> None:
        """Power cycle: timers and faults gone, back to the power-on state. Physical things
        (the cards inside, a door left open) stay as they are."""
        self._at(now)
        self._timers.clear()
        self.fault_code = None
        self.fault_text = ""
        self._refusal = None
        self._power_on()
        self._out.clear()

    def status(self) -> dict[str, Any]:
        """The firmware's state name and counters, as a status reply carries them."""
        out: dict[str, Any] = {"state": self.state, "door_open": self.door_open}
        if self.fault_code is not None:
            out["fault_code"] = self.fault_code
        out.update(self._status_detail())
        return out

    def take_link_faults(self) -> list[Fault]:
        out, self._link_faults = self._link_faults, []
        return out

    # --- physical actions common to devices with a door ---------------------------------

    def open_door(self, now: float) -> list[Emit]:
        """Someone opens the door (the dice agitator's lid)."""
        self._at(now)
        self._door(True)
        return self._flush()

    def close_door(self, now: float) -> list[Emit]:
        self._at(now)
        self._door(False)
        return self._flush()

    # --- for subclasses ----------------------------------------------------------------

    def _power_on(self) -> None:
        self.state = self.door_state if self.door_open else "idle"

    def _status_detail(self) -> dict[str, Any]:
        return {}

    def _at(self, now: float) -> None:
        if now < self.now:
            now = self.now       # a clock never runs backwards inside the model
        self.now = now

    def _emit(self, kind: str, **fields: Any) -> None:
        self._out.append(Emit(kind, fields))

    def _flush(self) -> list[Emit]:
        out, self._out = self._out, []
        return out

    def _after(self, seconds: float, fn: Callable[[], None]) -> None:
        """Run ``fn`` after ``seconds`` of device time (divided by the speed factor)."""
        heapq.heappush(self._timers, (self.now + seconds / self.speed, next(self._timer_seq), fn))

    def _cancel_timers(self) -> None:
        self._timers.clear()

    def _duration(self, name: str) -> float:
        return TIMINGS[name]

    def _refuse_if_armed(self, name: str) -> None:
        """An injected refusal takes the command it waits for (any but ``status`` unless it
        names one) once, or its ``count`` times: the firmware refuses it and does nothing."""
        r = self._refusal
        if r is None:
            return
        takes = name == r["action"] if r["action"] is not None else name != "status"
        if not takes:
            return
        r["count"] = r.get("count", 1) - 1
        if r["count"] <= 0:
            self._refusal = None
        raise Refused(r["code"], f"{name} refused (injected fault)")

    def _check_operational(self) -> None:
        """Refuse a command in a state where the firmware cannot act."""
        if self.state == "fault":
            raise Refused("fault", f"fault code {self.fault_code}; reboot the device")
        if self.state == "jammed":
            raise Refused("jammed", "clear the jam first")
        if self.door_open:
            raise Refused("door-open", "close the door first")

    def _door(self, is_open: bool) -> None:
        if not self.has_door:
            raise SimulatorError(f"a {self.device_class} has no door")
        if is_open == self.door_open:
            return
        self.door_open = is_open
        if is_open:
            self._emit("door_opened")
            if self.state not in ("fault", "jammed"):
                self._cancel_timers()     # whatever was under way stops with the door open
                self.state = self.door_state
        else:
            self._emit("door_closed")
            if self.state == self.door_state:
                self._after_door_closed()

    def _after_door_closed(self) -> None:
        self.state = "idle"

    def _jam(self, where: str = "") -> None:
        self._cancel_timers()
        self.state = "jammed"
        self._emit("jam", where=where)

    def _malfunction(self, code: int, text: str = "") -> None:
        self._cancel_timers()
        self.state = "fault"
        self.fault_code = code
        self.fault_text = text
        self._emit("malfunction", code=code, text=text)

    def clear_jam(self, now: float) -> list[Emit]:
        """The croupier clears a jam; the firmware is idle again and says so in a status."""
        self._at(now)
        if self.state != "jammed":
            raise SimulatorError(f"the {self.device_class} is not jammed (it is {self.state})")
        self.state = self.door_state if self.door_open else "idle"
        self._after_jam_cleared()
        self._emit("status", **self.status())
        return self._flush()

    def _after_jam_cleared(self) -> None:
        pass

    def check_fault(self, fault: Fault) -> None:
        """Raise SimulatorError when ``fault`` could not apply to this unit (e.g. a die it does
        not hold): called before a fault is armed for a later trigger, so the error comes
        when it is given, not when it would fire."""

    def _apply_fault(self, fault: Fault) -> None:
        """Device-level faults shared by every class; subclasses handle the rest."""
        name, a = fault.name, fault.args
        if fault.level == "link":
            self._link_faults.append(fault)
        elif name == "malfunction":
            self._malfunction(a["code"], a["text"])
        elif name == "door_open":
            self._door(True)
        elif name == "door_close":
            self._door(False)
        elif name == "jam":
            self._jam(a["where"])
        elif name == "status_report":
            report = self.status()
            if a.get("state") is not None:
                report["state"] = a["state"]
            self._emit("status", **report)
        elif name == "refuse":
            problem = refuse_action_problem(a["action"], self.device_class, self.COMMANDS)
            if problem:
                raise SimulatorError(problem)
            self._refusal = dict(a)
        else:
            self._apply_own_fault(fault)

    def _apply_own_fault(self, fault: Fault) -> None:
        raise SimulatorError(f"fault {fault.name!r} does not apply to a {self.device_class}")

    def _due(self, kind: str) -> list[Fault]:
        """Faults scheduled at this count of ``kind``; link-level ones go to the runtime."""
        due = self.schedule.count(kind)
        mine = []
        for f in due:
            if f.level == "link":
                self._link_faults.append(f)
            else:
                mine.append(f)
        return mine
