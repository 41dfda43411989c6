"""Card-reading dealing shoe: reports every card drawn; takes no command but status."""
from __future__ import annotations

from . import events as ev
from .driver import Driver, card_or_none, deck_or_none
from .protocol import messages as m


class ShoeDriver(Driver):
    """Events: CardDrawn (identity, face-up flag, deck id), CutCardReached, Misread, Jam,
    DoorOpened / DoorClosed, Empty, Malfunction."""

    device_class = "shoe"

    def _translate(self, msg: m.Message) -> ev.DeviceEvent | None:
        if isinstance(msg, m.CardDrawn):
            return self._event(ev.CardDrawn, card=card_or_none(msg.card), face_up=msg.face_up,
                               deck_id=deck_or_none(msg.deck))
        if isinstance(msg, m.CutCardReached):
            return self._event(ev.CutCardReached)
        if isinstance(msg, m.Misread):
            return self._event(ev.Misread)
        return super()._translate(msg)
