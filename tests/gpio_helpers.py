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
