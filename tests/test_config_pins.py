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


# --- pins the Pi gives to something else ------------------------------------------------------

# The on-board UART's device names: its TXD is GPIO14 (physical pin 8), its RXD GPIO15 (pin 10).
UART_PORTS = ["/dev/serial0", "/dev/ttyAMA0", "/dev/ttyS0"]


def on_port(port):
    return BASE.replace('port = "/dev/tablectl/shoe"', f'port = "{port}"')


@pytest.fixture(autouse=True)
def no_serial_alias_here(tmp_path, monkeypatch):
    """/dev/serial0 is judged by where it points on the machine doing the check (a Pi 5's
    is not on GPIO14/15): these tests take the case of a config checked where it does not
    exist, so that they hold on any machine; tests/test_config_uart_alias.py the others."""
    from controller import config
    monkeypatch.setattr(config, "SERIAL_ALIAS_PATH", str(tmp_path / "no-serial0"))


@pytest.mark.parametrize("port", UART_PORTS)
@pytest.mark.parametrize("key, line, pin, bcm", [
    ("gpio.buzzer", "buzzer = 14", 14, 14),
    ("gpio.key_switch", 'key_switch = "BOARD10"', "BOARD10", 15),
    ("gpio.buttons.confirm", 'confirm = "GPIO15"', "GPIO15", 15),
    ("gpio.box_sensors", 'box_sensors = [5, 6, 12, "J8:8", 20, 21, 26]', "J8:8", 14)],
    ids=lambda v: str(v))
def test_a_panel_pin_on_the_uart_a_device_uses_is_named_with_both_keys(port, key, line, pin,
                                                                        bcm):
    """A device on the Pi's on-board UART (/dev/serial0, /dev/ttyAMA0, /dev/ttyS0) has its
    TXD and RXD on GPIO14 and GPIO15: a panel pin there passed the check, and the panel and
    the device then fought over the pin (a button read the device's frames, a lamp drove its
    line). Refused at the pin's line, naming the device's port, however the pin is written."""
    section = "[gpio.buttons]" if key.startswith("gpio.buttons") else "[gpio]"
    text = on_port(port) + f"\n{section}\n{line}\n"
    p = problems(text)[key]
    assert p.line == line_of(text, line)
    assert f"{pin!r}" in p.reason and f"GPIO{bcm}" in p.reason
    assert ("TXD" if bcm == 14 else "RXD") in p.reason
    assert "devices.shoe.port" in p.reason and port in p.reason
    assert "move" in p.fix and "fixed" in p.fix and key in p.fix


def test_a_uart_pin_is_free_while_no_device_uses_the_uart():
    text = BASE + '\n[gpio]\nbuzzer = 14\nkey_switch = "GPIO15"\n'
    assert parse_text(text).gpio.buzzer == 14
    usb = on_port("/dev/ttyUSB0") + '\n[gpio]\nbuzzer = 14\nkey_switch = "GPIO15"\n'
    assert parse_text(usb).gpio.key_switch == "GPIO15"
    other = on_port("/dev/ttyAMA0") + '\n[gpio]\nbuzzer = 17\n'
    assert parse_text(other).gpio.buzzer == 17


def test_a_stable_name_that_is_the_uart_is_seen_through(tmp_path):
    """A udev rule may give the UART a stable name (/dev/tablectl/shoe -> ttyAMA0): the check
    follows the link."""
    link = tmp_path / "shoe"
    link.symlink_to("/dev/ttyAMA0")
    text = on_port(link) + "\n[gpio]\nbuzzer = 14\n"
    p = problems(text)["gpio.buzzer"]
    assert str(link) in p.reason and "/dev/ttyAMA0" in p.reason and "GPIO14" in p.reason
    elsewhere = tmp_path / "dice"
    elsewhere.symlink_to("/dev/ttyUSB0")
    assert parse_text(on_port(elsewhere) + "\n[gpio]\nbuzzer = 14\n").gpio.buzzer == 14


def panel_opens(gpio):
    """What gpiozero (on its mock Raspberry Pi) says of opening the whole panel."""
    factory = MockFactory()
    try:
        with Panel(gpio, lambda e: None, pin_factory=factory):
            return "ok"
    except Exception as exc:                  # the panel's TablectlError, naming gpiozero's
        return str(exc)
    finally:
        factory.reset()


@pytest.mark.parametrize("pin", [2, "GPIO3", "BOARD3"], ids=str)
@pytest.mark.parametrize("key, line, setting", [
    ("gpio.buttons.confirm", "confirm = {pin}", "pull_up = false"),
    ("gpio.key_switch", "key_switch = {pin}", "pull_up = false"),
    ("gpio.box_sensors", "box_sensors = [5, 6, 12, {pin}, 20, 21, 26]",
     "sensors_active_low = false")], ids=lambda v: str(v).split()[0])
def test_an_input_pulled_down_on_a_pin_with_a_fixed_pull_up_is_refused(pin, key, line,
                                                                        setting):
    """GPIO2 and GPIO3 (the I2C pins) have a fixed pull-up resistor on the board: an input
    there cannot be pulled down (pull_up = false; a sensor with sensors_active_low = false).
    The check passed it and the panel then failed to open at the table's start (gpiozero's
    PinFixedPull). Refused at the pin, naming the setting and the ways out; with the pull-up
    the same pin is accepted, and opens."""
    line = line.format(pin=toml(pin))
    body = f"{setting}\n{line}\n" if key != "gpio.buttons.confirm" else \
        f"{setting}\n[gpio.buttons]\n{line}\n"
    text = BASE + "\n[gpio]\n" + body
    p = problems(text)[key]
    assert p.line == line_of(text, line)
    assert repr(pin) in p.reason and "fixed pull-up" in p.reason
    assert setting in p.reason and "move" in p.fix
    up = text.replace(" = false", " = true")
    assert panel_opens(parse_text(up).gpio) == "ok"
    # what the check refuses is what the panel could not open
    import dataclasses
    down = dataclasses.replace(parse_text(up).gpio, pull_up=False, sensors_active_low=False)
    assert "PinFixedPull" in panel_opens(down)


def test_outputs_on_the_fixed_pull_up_pins_are_accepted():
    text = BASE + '\n[gpio]\npull_up = false\nsensors_active_low = false\nbuzzer = 2\n' \
        '[gpio.light]\nred = "GPIO3"\n'
    gpio = parse_text(text).gpio
    assert gpio.buzzer == 2 and panel_opens(gpio) == "ok"


@pytest.mark.parametrize("number, board, gpio", [(40, "BOARD40", "GPIO21"),
                                                 (29, "BOARD29", "GPIO5")])
def test_a_bcm_number_past_27_is_named_with_the_physical_pin_it_may_mean(number, board, gpio):
    """An installer reading the header's pin numbers writes ``amber = 40``. It is no BCM number
    (0-27): the check says so, and that the header's physical pin 40 is written "BOARD40"
    (GPIO21), not "write it as 17", a pin another lamp may well use."""
    text = BASE + f"\n[gpio.light]\nred = 17\namber = {number}\n"
    p = problems(text)["gpio.light.amber"]
    assert p.line == line_of(text, "amber =")
    assert f"{number}" in p.reason and "GPIO0 to GPIO27" in p.reason
    assert f'"{board}"' in p.fix and gpio in p.fix
    assert "write it as 17" not in p.fix


def test_a_bcm_number_past_the_header_says_the_range():
    text = BASE + "\n[gpio]\nbuzzer = 41\n"
    p = problems(text)["gpio.buzzer"]
    assert "GPIO0 to GPIO27" in p.reason and "BOARD" not in p.fix
    # A physical pin that carries power or ground is no GPIO under any spelling.
    p = problems(BASE + "\n[gpio]\nbuzzer = 39\n")["gpio.buzzer"]
    assert "GPIO0 to GPIO27" in p.reason and "GND" in p.reason


@pytest.mark.parametrize("section, key", [("gpio", "active_low"), ("gpio", "active_high"),
                                          ("gpio.buttons", "pull_up"),
                                          ("gpio.light", "active_high"),
                                          ("gpio.light", "active_low"),
                                          ("gpio.light", "red_active_low"),
                                          ("gpio", "lamps_active_low")])
def test_a_polarity_named_where_the_panel_has_none_says_which_keys_set_it(section, key):
    """The panel's polarity is set by four keys of [gpio]: pull_up (buttons, key switch),
    sensors_active_low (box sensors), light_active_low (every lamp) and buzzer_active_low. A
    polarity written anywhere else (on one lamp, which cannot take one of its own) is refused
    at its line naming those keys, not with a guess at the closest key (``active_low`` is
    not ``sensors_active_low`` when it was meant for the buttons) or the list of lamp
    colours."""
    text = BASE + f"\n[{section}]\n{key} = false\n"
    p = problems(text)[f"{section}.{key}"]
    assert p.line == line_of(text, f"{key} =")
    assert "did you mean" not in p.fix
    for setting in ("pull_up", "sensors_active_low", "light_active_low", "buzzer_active_low"):
        assert setting in p.fix
    assert "relay board" in p.fix and "one setting for all of them" in p.fix


def test_the_lamps_and_the_buzzer_take_a_polarity_each():
    text = BASE + "\n[gpio]\nbuzzer = 19\nlight_active_low = true\n[gpio.light]\nred = 18\n"
    gpio = parse_text(text).gpio
    assert gpio.light_active_low is True and gpio.buzzer_active_low is False
    default = parse_text(BASE + "\n[gpio]\nbuzzer = 19\n").gpio
    assert (default.light_active_low, default.buzzer_active_low) == (False, False)
    assert panel_opens(gpio) == "ok"


@pytest.mark.parametrize("key", ["light_active_low", "buzzer_active_low"])
@pytest.mark.parametrize("value", ['"yes"', "1", '"true"'])
def test_a_polarity_that_is_not_true_or_false_is_refused_at_its_line(key, value):
    text = BASE + f"\n[gpio]\nbuzzer = 19\n{key} = {value}\n[gpio.light]\nred = 18\n"
    p = problems(text)[f"gpio.{key}"]
    assert p.line == line_of(text, f"{key} =")
    assert "true or false" in p.reason and p.fix


@pytest.mark.parametrize("key, others, way", [
    ("light_active_low", "buzzer = 19\n", "[gpio.light]"),
    ("buzzer_active_low", "[gpio.light]\nred = 18\n", "buzzer = PIN")])
def test_a_polarity_for_an_output_not_fitted_is_refused_at_its_line(key, others, way):
    """The relay board's polarity written, its lamps (or buzzer) not: they would never be
    driven. Refused at the key's line, with both ways out."""
    text = BASE + f"\n[gpio]\n{key} = true\n{others}"
    p = problems(text)[f"gpio.{key}"]
    assert p.line == line_of(text, f"{key} =")
    assert "no pin" in p.reason and way in p.fix and f"remove {key}" in p.fix
    # false, the default, written for an output not fitted changes nothing
    assert parse_text(text.replace(f"{key} = true", f"{key} = false")).gpio is not None
