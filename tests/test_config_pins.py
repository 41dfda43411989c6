"""[gpio] pins: every spelling gpiozero accepts is one pin of the Raspberry Pi's 40-pin header,
so the duplicate and range checks of `config check` agree with what the panel can open."""
import itertools
import textwrap

import pytest
from gpiozero import DigitalInputDevice
from gpiozero.exc import GPIOPinInUse, PinInvalidPin
from gpiozero.pins.mock import MockFactory

from config_helpers import line_of
from config_helpers import problems as listed
from controller.config import parse_text
from controller.panel import Panel
from test_config import BASE     # the smallest valid table: one shoe, Q Poker


# GPIO17 is physical pin 11 (wiringPi 0); GPIO27 is physical pin 13; pin 6 is ground.
SPELLINGS = [17, "GPIO17", "BCM17", "BOARD11", "J8:11", "WPI0", 27, "BOARD13", "J8:13",
             "GPIO99", "BCM28", "BOARD99", "J8:41", "BOARD0", "WPI99", "GPIO07",
             "BOARD1", "BOARD2", "J8:6", "BOARD39"]


def problems(text):
    """The problems ``text`` is refused with, by key."""
    return {p.key: p for p in listed(text)}


def toml(pin):
    return str(pin) if isinstance(pin, int) else f'"{pin}"'


def opens_on_gpiozero(*pins):
    """What gpiozero (on its mock Raspberry Pi) says of opening these pins together:
    "ok", "in use" or "invalid"."""
    factory = MockFactory()
    devices = []
    try:
        for pin in pins:
            devices.append(DigitalInputDevice(pin, pin_factory=factory))
        return "ok"
    except GPIOPinInUse:
        return "in use"
    except PinInvalidPin:
        return "invalid"
    finally:
        for d in devices:
            d.close()
        factory.reset()


@pytest.mark.parametrize("pin", SPELLINGS, ids=str)
def test_a_pin_is_accepted_exactly_when_gpiozero_can_open_it(pin):
    text = BASE + f"\n[gpio]\nbuzzer = {toml(pin)}\n"
    if opens_on_gpiozero(pin) == "ok":
        assert parse_text(text).gpio.buzzer == pin      # kept as written
        return
    p = problems(text)["gpio.buzzer"]
    assert p.line == line_of(text, "buzzer =") and repr(pin) in p.reason
    assert p.fix


@pytest.mark.parametrize("a, b", [(a, b) for a, b in itertools.combinations(SPELLINGS, 2)
                                  if opens_on_gpiozero(a) == opens_on_gpiozero(b) == "ok"],
                         ids=str)
def test_two_spellings_clash_exactly_when_gpiozero_says_the_pin_is_in_use(a, b):
    text = BASE + f"\n[gpio]\nkey_switch = {toml(a)}\nbuzzer = {toml(b)}\n"
    if opens_on_gpiozero(a, b) == "ok":
        assert parse_text(text).gpio.buzzer == b
        return
    p = problems(text)["gpio.buzzer"]
    assert p.line == line_of(text, "buzzer =")
    assert f"pin {b!r} is already used by gpio.key_switch" in p.reason
    assert "GPIO17" in p.reason or "GPIO27" in p.reason     # the pin both names mean


def test_power_and_ground_pins_are_named():
    text = BASE + '\n[gpio]\nbuzzer = "BOARD2"\nbox_sensors = [5, "J8:6", 12, 16, 20, 21, 26]\n'
    found = problems(text)
    assert "5V" in found["gpio.buzzer"].reason and "not a GPIO" in found["gpio.buzzer"].reason
    sensors = found["gpio.box_sensors"]
    assert "'J8:6'" in sensors.reason and "GND" in sensors.reason
    assert sensors.line == line_of(text, "box_sensors")
    assert "BOARD11" in sensors.fix


def test_out_of_range_names_say_the_header_range():
    found = problems(BASE + '\n[gpio]\nbuzzer = "GPIO99"\nkey_switch = "BOARD99"\n')
    assert "'GPIO99'" in found["gpio.buzzer"].reason
    assert "GPIO0 to GPIO27" in found["gpio.buzzer"].reason
    assert "'BOARD99'" in found["gpio.key_switch"].reason
    assert "1 to 40" in found["gpio.key_switch"].reason


def test_a_panel_of_mixed_spellings_that_passes_the_check_opens():
    text = BASE + textwrap.dedent("""
        [gpio]
        box_sensors = [5, "GPIO6", "BCM12", "BOARD36", "J8:38", "WPI29", 26]
        key_switch = "BOARD18"

        [gpio.buttons]
        close_bets = "BOARD11"
        misdeal = 27
        """)
    gpio = parse_text(text).gpio
    factory = MockFactory()
    try:
        with Panel(gpio, lambda e: None, pin_factory=factory):
            pass
    finally:
        factory.reset()
