"""/dev/serial0 is an alias: Raspberry Pi OS points it at the primary UART, which on a Pi 4 and
earlier is the one on GPIO14/15 (ttyAMA0 or ttyS0) but on a Pi 5 is the debug UART connector
(ttyAMA10). Where the alias exists on the machine doing the check, the check judges by where it
points; where it does not (a configuration checked on another machine), it stays cautious and
names the Pi 5's way out. The alias is looked up at ``config.SERIAL_ALIAS_PATH``, pointed here
at a temporary link standing for the machine's /dev/serial0."""
import pytest

from config_helpers import line_of, only
from controller import config
from controller.config import parse_text
from test_config import BASE     # the smallest valid table: one shoe, Q Poker

PANEL = '\n[gpio]\nbuzzer = 14\nkey_switch = "GPIO15"\n'


def on_port(port):
    return BASE.replace('port = "/dev/tablectl/shoe"', f'port = "{port}"') + PANEL


@pytest.fixture
def alias(tmp_path, monkeypatch):
    """This machine's /dev/serial0, as a link the test makes (or leaves out)."""
    path = tmp_path / "serial0"
    monkeypatch.setattr(config, "SERIAL_ALIAS_PATH", str(path))
    return path


def test_on_a_pi_5_serial0_is_the_debug_uart_and_gpio14_15_are_free(alias):
    alias.symlink_to("/dev/ttyAMA10")           # as Raspberry Pi OS links it on a Pi 5
    cfg = parse_text(on_port("/dev/serial0"))
    assert cfg.gpio.buzzer == 14 and cfg.gpio.key_switch == "GPIO15"


@pytest.mark.parametrize("uart", ["/dev/ttyAMA0", "/dev/ttyS0"])
def test_where_serial0_is_the_uart_on_gpio14_15_a_panel_pin_there_is_refused(alias, uart):
    alias.symlink_to(uart)                      # a Pi 4 (PL011, or the mini UART)
    text = on_port("/dev/serial0").replace('key_switch = "GPIO15"\n', "")
    p = only(text)
    assert p.key == "gpio.buzzer" and p.line == line_of(text, "buzzer = 14")
    assert f"/dev/serial0, that is {uart}" in p.reason and "GPIO14" in p.reason, p.reason
    assert "Raspberry Pi 5" not in p.fix, p.fix


def test_where_serial0_is_not_on_this_machine_it_is_taken_for_the_uart_naming_the_pi_5_way_out(
        alias):
    # no link: the configuration is checked on another machine than the table's Pi
    text = on_port("/dev/serial0").replace('key_switch = "GPIO15"\n', "")
    p = only(text)
    assert p.key == "gpio.buzzer" and "/dev/serial0" in p.reason and "GPIO14" in p.reason
    assert "move gpio.buzzer" in p.fix, p.fix
    assert "Raspberry Pi 5" in p.fix and "/dev/ttyAMA10" in p.fix, p.fix


def test_a_stable_name_linked_to_serial0_is_judged_by_where_serial0_points(alias, tmp_path):
    shoe = tmp_path / "shoe"
    shoe.symlink_to("/dev/serial0")             # a udev rule's name for the alias
    alias.symlink_to("/dev/ttyAMA10")
    assert parse_text(on_port(shoe)).gpio.buzzer == 14
    alias.unlink()
    alias.symlink_to("/dev/ttyAMA0")
    p = only(on_port(shoe).replace('key_switch = "GPIO15"\n', ""))
    assert p.key == "gpio.buzzer" and "/dev/ttyAMA0" in p.reason, p.reason


def test_the_pi_5_way_out_is_accepted(alias):
    # the port named as what it is on a Pi 5, whether or not this machine has it
    assert parse_text(on_port("/dev/ttyAMA10")).gpio.buzzer == 14
