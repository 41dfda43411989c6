"""Firmware model of the box sensors: one card sensor under each box of the layout.

The sensors only report: a card placed on box N, a card removed from box N. The firmware counts
the cards on each box (a hand of several cards lies in a pile) and reports every change. Boxes
are numbered from 1, as the regulations number them. After a malfunction the cards still land
(the croupier's hands do not stop) but nothing is reported until a reboot.
"""
from __future__ import annotations

from typing import Any

from .base import FirmwareModel, SimulatorError


class BoxSensorsModel(FirmwareModel):
    device_class = "box-sensors"
    COMMANDS = {"status": "_cmd_status"}
    has_door = False

    def __init__(self, *, boxes: int = 7, **kw: Any) -> None:
        super().__init__(**kw)
        if isinstance(boxes, bool) or not isinstance(boxes, int) or not 1 <= boxes <= 16:
            raise SimulatorError(f"boxes = {boxes!r}: a layout has 1 to 16 boxes")
        self.boxes = boxes
        self.on_box = [0] * (boxes + 1)          # index 0 unused: boxes count from 1
        self.state = "ready"

    def _power_on(self) -> None:
        self.state = "ready"

    def _status_detail(self) -> dict[str, Any]:
        return {"boxes": self.boxes, "cards_on_box": self.on_box[1:]}

    def _cmd_status(self) -> None:
        self._emit("status", **self.status())

    def _box(self, box: int) -> int:
        if isinstance(box, bool) or not isinstance(box, int) or not 1 <= box <= self.boxes:
            raise SimulatorError(f"box {box!r} does not exist: the sensors cover boxes 1 to "
                                 f"{self.boxes}")
        return box

    def place_card(self, now: float, box: int) -> list:
        """A card lands on box ``box``."""
        self._at(now)
        b = self._box(box)
        self.on_box[b] += 1
        if self.state != "fault":           # a firmware in fault senses nothing
            self._emit("card_placed", box=b)
        return self._flush()

    def remove_card(self, now: float, box: int) -> list:
        """A card is taken off box ``box`` (nothing is reported if the box is bare)."""
        self._at(now)
        b = self._box(box)
        if self.on_box[b] == 0:
            raise SimulatorError(f"box {b} holds no card to remove")
        self.on_box[b] -= 1
        if self.state != "fault":
            self._emit("card_removed", box=b)
        return self._flush()

    def clear_boxes(self, now: float) -> list:
        """The croupier collects every card from the layout (one removal reported per card)."""
        self._at(now)
        for b in range(1, self.boxes + 1):
            while self.on_box[b]:
                self.on_box[b] -= 1
                if self.state != "fault":
                    self._emit("card_removed", box=b)
        return self._flush()
