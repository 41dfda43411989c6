"""Test helpers for the dealer's panel on gpiozero's own mock pins."""


def closed_switch(*pins):
    """A mock pin class for switches already closed to ground when the panel opens: the pull-up
    the panel sets does not raise them (gpiozero's MockPin would drive them high)."""
    from gpiozero.pins.mock import MockPin

    class ClosedSwitchPin(MockPin):
        def _set_pull(self, value):
            super()._set_pull(value)
            if self.info.name in {f"GPIO{p}" for p in pins}:
                self.drive_low()
    return ClosedSwitchPin


def idle_high(*pins):
    """A mock pin class for outputs wired to a relay board that switches on a low input: the
    board's own pull-up holds the line high while the Pi has not claimed it (gpiozero's MockPin
    would start it low), so any low level seen on it is a relay the panel switched on."""
    from gpiozero.pins.mock import MockPin

    class IdleHighPin(MockPin):
        def __init__(self, factory, info):
            super().__init__(factory, info)
            if info.name in {f"GPIO{p}" for p in pins}:
                self._state = True
                self.clear_states()
    return IdleHighPin


def levels(pin, since=0):
    """The levels ``pin`` went through (its state first), from its ``since``-th state on."""
    return [s.state for s in pin.states[since:]]
