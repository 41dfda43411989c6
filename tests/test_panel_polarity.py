"""Lamps and buzzer on a relay board that switches on a low input ([gpio] light_active_low,
buzzer_active_low), on gpiozero's mock pins: a lamp on is its pin low, off is high, and every
output is high (off) from the moment the panel opens to the moment it closes."""
import io
import threading
import time

import pytest
from gpiozero.pins.mock import MockFactory

from controller.config import GpioConfig
from controller.panel import Light, Panel
from controller.panel_cli import run_check

from gpio_helpers import idle_high, levels
from test_panel import toggled, wait_for

LAMPS = {"green": 13, "amber": 26, "red": 18}
BUZZER = 19
LOW = GpioConfig(light=LAMPS, buzzer=BUZZER, bounce_ms=0,
                 light_active_low=True, buzzer_active_low=True)


@pytest.fixture
def board():
    """The mock Pi with a relay board on the lamps' and the buzzer's pins (idle high)."""
    f = MockFactory(pin_class=idle_high(*LAMPS.values(), BUZZER))
    yield f
    f.reset()


def pins(factory):
    return {c: factory.pin(p) for c, p in {**LAMPS, "buzzer": BUZZER}.items()}


def test_active_low_outputs_stay_high_from_the_open_to_the_first_signal(board):
    """A relay board that switches on low must not click on as the panel claims the pins:
    gpiozero is given the polarity, so each pin is made an output at its inactive level."""
    with Panel(LOW, lambda e: None, pin_factory=board):
        for name, pin in pins(board).items():
            assert pin.function == "output", name
            assert levels(pin) == [True], name       # never low: no relay switched on


def test_an_active_low_lamp_on_is_its_pin_low_and_off_is_high(board):
    with Panel(LOW, lambda e: None, pin_factory=board) as panel:
        p = pins(board)
        panel.show(Light.READY)
        assert (p["green"].state, p["amber"].state, p["red"].state) == (False, True, True)
        panel.show(Light.WAITING)
        assert (p["green"].state, p["amber"].state, p["red"].state) == (True, False, True)
        panel.show(Light.OFF)
        assert all(pin.state for pin in p.values())


def test_the_active_low_buzzer_beeps_low(board):
    with Panel(LOW, lambda e: None, pin_factory=board) as panel:
        buzzer = board.pin(BUZZER)
        panel.show(Light.VOID)                       # red steady, one beep
        wait_for(lambda: len(buzzer.states) >= 3, "one beep")
        assert levels(buzzer) == [True, False, True]
        assert board.pin(LAMPS["red"]).state is False


def test_the_outputs_are_left_high_when_the_panel_closes(board):
    """At the stop (and when a failed open gives the pins back) a lamp lit or blinking goes
    off at its own polarity's level before its pin is released."""
    panel = Panel(LOW, lambda e: None, pin_factory=board, blink_s=0.02).open()
    red = board.pin(LAMPS["red"])
    panel.show(Light.MALFUNCTION)                    # red blinking, the buzzer sounding
    wait_for(lambda: toggled(red, 0) and board.pin(BUZZER).state is False, "the alarm")
    panel.close()
    assert all(pin.state for pin in pins(board).values())
    settled = {n: len(pin.states) for n, pin in pins(board).items()}
    time.sleep(0.1)
    assert {n: len(pin.states) for n, pin in pins(board).items()} == settled   # no blinking


def test_active_high_stays_the_default(board):
    """Left out, the lamps and the buzzer are on while their pin is high, as before."""
    gpio = GpioConfig(light=LAMPS, buzzer=BUZZER)
    with Panel(gpio, lambda e: None, pin_factory=board) as panel:
        p = pins(board)
        assert not any(pin.state for pin in p.values())     # opened off: low
        panel.show(Light.READY)
        assert p["green"].state is True and p["red"].state is False


def test_panel_check_drives_an_active_low_board_as_the_service_does(board):
    out = io.StringIO()
    seen_low = set()
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen_low.update(c for c, pin in pins(board).items() if pin.state is False)
            stop.wait(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run_check(LOW, 0.8, out, pin_factory=board, step_s=0.1)
    finally:
        stop.set()
        watcher.join()
    text = out.getvalue()
    assert "lamps: green, amber, red (on while the pin is low)" in text
    assert "buzzer: fitted (on while the pin is low)" in text
    assert {"green", "amber", "red"} <= seen_low     # each lamp was lit: its pin low
    for name, pin in pins(board).items():
        assert levels(pin)[0] is True, name           # high before the check began
        assert pin.state is True, name                # and left dark (high) after it
