"""Box sensors over serial or USB: a card placed on or removed from box N.

(Box sensors wired straight to the Pi's GPIO inputs are read by the controller's panel, not
by this driver.)"""
from __future__ import annotations

from . import events as ev
from .driver import Driver
from .protocol import messages as m


class BoxSensorsDriver(Driver):
    """Events: CardPlaced(box), CardRemoved(box), Malfunction.

    The wire numbers boxes from 0; the events carry the box's number as the regulations and
    the GPIO panel do, from 1 (wire 0 is box 1)."""

    device_class = "box-sensors"

    def _translate(self, msg: m.Message) -> ev.DeviceEvent | None:
        if isinstance(msg, m.CardPlaced):
            return self._event(ev.CardPlaced, box=msg.box + 1)
        if isinstance(msg, m.CardRemoved):
            return self._event(ev.CardRemoved, box=msg.box + 1)
        return super()._translate(msg)
