"""Electronic dice agitator: shake and status; reports the dice, a die not flat or out of the
cup, the lid and malfunctions."""
from __future__ import annotations

from . import events as ev
from .driver import Driver
from .protocol import messages as m


class DiceDriver(Driver):
    """Events: ShakeStarted, DiceResult, DieNotFlat, DieOutOfCup, DoorOpened / DoorClosed (the
    lid), Malfunction."""

    device_class = "dice"

    async def shake(self) -> None:
        await self._command(m.Shake(), "shake", "shake")

    def _translate(self, msg: m.Message) -> ev.DeviceEvent | None:
        if isinstance(msg, m.ShakeStarted):
            return self._event(ev.ShakeStarted)
        if isinstance(msg, m.DiceResult):
            return self._event(ev.DiceResult, dice=tuple(msg.dice))
        if isinstance(msg, m.DieNotFlat):
            return self._event(ev.DieNotFlat, die=msg.die)
        if isinstance(msg, m.DieOutOfCup):
            return self._event(ev.DieOutOfCup, die=msg.die)
        return super()._translate(msg)
