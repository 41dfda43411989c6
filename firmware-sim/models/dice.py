"""Firmware model of an electronic dice agitator (Super Pan 9 uses four dice).

States::

    idle ──shake──▶ shaking ──(4 s shake + 1 s settle)──▶ idle       (dice_result)
                                                     ├──▶ not-flat   (die_not_flat: reshake)
                                                     └──▶ die-out    (die_out_of_cup: the croupier
                                                                      puts it back, return_die)
    any ──lid opens──▶ lid-open ──lid closes──▶ idle
    any ──malfunction──▶ fault (until reboot)

The faces come from the seeded RNG, or from ``set_next_dice`` when a test wants given faces.
A die not flat or out of the cup is armed as a fault for the next shake (or scheduled at the
Nth shake); the result is then withheld, as a camera-reading agitator does.
"""
from __future__ import annotations

from typing import Any

from ..faults import Fault
from .base import FirmwareModel, Refused, SimulatorError


class DiceModel(FirmwareModel):
    device_class = "dice"
    COMMANDS = {"shake": "_cmd_shake", "status": "_cmd_status"}
    door_state = "lid-open"

    def __init__(self, *, dice: int = 4, **kw: Any) -> None:
        super().__init__(**kw)
        if isinstance(dice, bool) or not isinstance(dice, int) or not 1 <= dice <= 8:
            raise SimulatorError(f"dice = {dice!r}: an agitator holds 1 to 8 dice (Super Pan 9 "
                                 "uses 4)")
        self.n_dice = dice
        self.shakes = 0
        self.last: tuple[int, ...] | None = None
        self._next_values: list[tuple[int, ...]] = []
        self._next_faults: list[Fault] = []
        self.die_out: int | None = None

    def _power_on(self) -> None:
        super()._power_on()
        if self.die_out is not None and self.state == "idle":
            self.state = "die-out"

    def _after_door_closed(self) -> None:
        self.state = "die-out" if self.die_out is not None else "idle"

    def _status_detail(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dice": self.n_dice, "shakes": self.shakes}
        if self.last is not None:
            out["last"] = list(self.last)
        return out

    def _cmd_status(self) -> None:
        self._emit("status", **self.status())

    def _cmd_shake(self) -> None:
        if self.state == "shaking":
            raise Refused("busy", "the agitator is shaking")
        if self.state == "die-out":
            raise Refused("not-ready", f"die {self.die_out} is out of the cup; put it back")
        self.shakes += 1
        for f in self._due("at_shake"):
            self._apply_fault(f)
        if self.state in ("fault", "jammed", self.door_state):
            return
        self.state = "shaking"
        self._emit("shake_started")
        self._after(self._duration("shake") + self._duration("settle"), self._settled)

    def _settled(self) -> None:
        faults, self._next_faults = self._next_faults, []
        values = self._next_values.pop(0) if self._next_values else tuple(
            self.rng.randint(1, 6) for _ in range(self.n_dice))
        for f in faults:
            if f.name == "die_out_of_cup":
                self.state = "die-out"
                self.die_out = f.args["die"]
                self._emit("die_out_of_cup", die=f.args["die"])
                return
        for f in faults:
            if f.name == "die_not_flat":
                self.state = "not-flat"
                self._emit("die_not_flat", die=f.args["die"])
                return
        self.state = "idle"
        self.last = values
        self._emit("dice_result", dice=list(values))

    def check_fault(self, fault: Fault) -> None:
        if fault.name in ("die_not_flat", "die_out_of_cup") and fault.args["die"] >= self.n_dice:
            raise SimulatorError(f"die {fault.args['die']} does not exist: the agitator "
                                 f"holds dice 0 to {self.n_dice - 1}")

    def _apply_own_fault(self, fault: Fault) -> None:
        if fault.name in ("die_not_flat", "die_out_of_cup"):
            self.check_fault(fault)
            self._next_faults.append(fault)
        else:
            super()._apply_own_fault(fault)

    # --- physical actions and test hooks ----------------------------------------------

    def set_next_dice(self, values: Any) -> None:
        """The next shake shows exactly these faces (one per die, 1-6)."""
        try:
            vals = tuple(int(v) for v in values)
        except (TypeError, ValueError):
            vals = ()
        if len(vals) != self.n_dice or not all(1 <= v <= 6 for v in vals):
            raise SimulatorError(f"dice {values!r}: give {self.n_dice} faces from 1 to 6, "
                                 "e.g. [3, 5, 1, 6]")
        self._next_values.append(vals)

    def return_die(self, now: float) -> list:
        """The croupier puts the die that fell out back into the cup."""
        self._at(now)
        if self.state != "die-out":
            raise SimulatorError(f"no die is out of the cup (the agitator is {self.state})")
        self.die_out = None
        self.state = self.door_state if self.door_open else "idle"
        self._emit("status", **self.status())
        return self._flush()

    def open_lid(self, now: float) -> list:
        """The croupier opens the agitator's lid (reported as a door opened)."""
        return self.open_door(now)

    def close_lid(self, now: float) -> list:
        return self.close_door(now)
