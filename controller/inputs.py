"""Inputs that are not a device's: the dealer panel's buttons and the supervisor's key
switch, and the end of a wait the table asked the service to time (:class:`WaitOver`).

They are :class:`drivers.events.DeviceEvent` subclasses (``device="panel"``, or ``"timer"``),
so the table machine takes them from the same queue as every device event, and they serialise
the same way (``to_json()``; :func:`drivers.events.event_from_json` reads them back once this
module is imported). Box sensors on GPIO produce the drivers' own ``CardPlaced``/
``CardRemoved`` with ``device="box-sensors"``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from drivers.events import EVENT_TYPES, DeviceEvent, event_from_json

PANEL = "panel"
# ``silence`` silences the tower light's buzzer while the alarm stays (Table.alarm_causes).
BUTTONS = ("close_bets", "misdeal", "exposed_card", "confirm", "silence")
# The device id of the service's timer: the table's ``wait`` commands go to it, and its
# ``wait_over`` inputs come from it.
TIMER = "timer"


@dataclass(frozen=True, slots=True, kw_only=True)
class ButtonPressed(DeviceEvent):
    """The croupier pressed one of the panel's buttons: ``close_bets`` (no more bets),
    ``misdeal`` (declares a misdeal), ``exposed_card`` (reports a card exposed by mistake) or
    ``confirm`` (confirms a result or a prompted action) or ``silence`` (silences the buzzer
    of the alarm sounding, the light staying as it is)."""

    kind: ClassVar[str] = "button_pressed"
    button: str

    def __post_init__(self) -> None:
        if self.button not in BUTTONS:
            raise ValueError(f"unknown button {self.button!r}; buttons: {', '.join(BUTTONS)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class KeySwitched(DeviceEvent):
    """The supervisor's key switch turned on (supervisor present: the buttons act with the
    supervisor's role, so ``confirm`` may open the table or clear a jam or malfunction) or
    off. Switching the mode or voiding a round is not done from the panel."""

    kind: ClassVar[str] = "key_switched"
    on: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ButtonRepeated(DeviceEvent):
    """A button pressed again ``after_ms`` after its last press (the one before that was not
    itself a repeat, whether the table acted on it or refused it), within
    ``gpio.repeat_guard_ms``: a bounce or a double press. ``confirm`` means what the moment
    needs, so a second press would take the next step too (after a void, the next round and
    then a deck declared shuffled that was not). Journaled; the table does not act on it."""

    kind: ClassVar[str] = "button_repeated"
    button: str
    after_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitOver(DeviceEvent):
    """A wait the table asked for is over. The table machine has no clock (it is replayed
    from the journal): it asks the service to time a wait with a ``wait`` command to the
    timer (``Command("timer", "wait", {...})``, journaled like a device command), and the
    service puts this input on the queue once ``after_s`` seconds have passed, journaled like
    a device event (``device="timer"``), with the wait's own arguments: ``what`` the table
    waits to do again (``status``: ask again the status the shuffler refused as busy),
    ``about`` the device it asks that of, ``ask`` the request the wait follows, ``after_s``
    the wait. A restart loses a wait not over; the table asks again from the journal."""

    kind: ClassVar[str] = "wait_over"
    what: str
    about: str = ""
    ask: str = ""
    after_s: float = 0.0


for _cls in (ButtonPressed, ButtonRepeated, KeySwitched, WaitOver):
    EVENT_TYPES.setdefault(_cls.kind, _cls)


def input_from_json(doc: dict[str, Any]) -> DeviceEvent:
    """Rebuild a panel (or any device) event written by ``to_json()``."""
    return event_from_json(doc)
