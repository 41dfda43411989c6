"""Events of the dealer panel: buttons and the supervisor's key switch.

They are :class:`drivers.events.DeviceEvent` subclasses (``device="panel"``), so the table
machine takes them from the same queue as every device event, and they serialise the same way
(``to_json()``; :func:`drivers.events.event_from_json` reads them back once this module is
imported). Box sensors on GPIO produce the drivers' own ``CardPlaced``/``CardRemoved`` with
``device="box-sensors"``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from drivers.events import EVENT_TYPES, DeviceEvent, event_from_json

PANEL = "panel"
BUTTONS = ("close_bets", "misdeal", "exposed_card", "confirm")


@dataclass(frozen=True, slots=True, kw_only=True)
class ButtonPressed(DeviceEvent):
    """The croupier pressed one of the panel's buttons: ``close_bets`` (no more bets),
    ``misdeal`` (declares a misdeal), ``exposed_card`` (reports a card exposed by mistake) or
    ``confirm`` (confirms a result or a prompted action)."""

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
    """A button pressed again ``after_ms`` after the press of it that was acted on, within
    ``gpio.repeat_guard_ms``: a bounce or a double press. ``confirm`` means what the moment
    needs, so a second press would take the next step too (after a void, the next round and
    then a deck declared shuffled that was not). Journaled; the table does not act on it."""

    kind: ClassVar[str] = "button_repeated"
    button: str
    after_ms: int


for _cls in (ButtonPressed, ButtonRepeated, KeySwitched):
    EVENT_TYPES.setdefault(_cls.kind, _cls)


def input_from_json(doc: dict[str, Any]) -> DeviceEvent:
    """Rebuild a panel (or any device) event written by ``to_json()``."""
    return event_from_json(doc)
