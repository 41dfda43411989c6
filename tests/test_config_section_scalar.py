"""A section written as a single value (``[gpio] light = "red"``, ``devices = 3``): the
problem names the full key at its line, says a section is wanted, and how to write it."""
import subprocess
import sys

import pytest

from config_helpers import BASE, line_of, only, problems

TOKEN = "Zq8fT1xVb3Kp0sLm9Wd2"      # as long as a console token


@pytest.mark.parametrize("sub, written, shown, keys", [
    ("light", '"red"', "the string 'red'", ["green", "amber", "red"]),
    ("buttons", "5", "the number 5", ["close_bets", "confirm"]),
])
def test_a_gpio_subsection_written_as_a_value(sub, written, shown, keys):
    text = BASE + f"\n[gpio]\nbuzzer = 18\n{sub} = {written}\n"
    p = only(text)
    assert p.key == f"gpio.{sub}"
    assert p.line == line_of(text, f"{sub} = ")
    assert p.reason == f"is {shown}, not a section"
    assert f"[gpio.{sub}]" in p.fix and all(k in p.fix for k in keys)
    assert p.format("table.toml").startswith(f"table.toml:{p.line}: gpio.{sub}: ")


def test_the_console_tokens_written_as_a_value_do_not_show_it():
    text = BASE + f'\n[api]\nport = 8740\ntokens = "{TOKEN}"\n'
    p = only(text)
    assert (p.key, p.line) == ("api.tokens", line_of(text, "tokens = "))
    assert p.reason == "is a string, not a section"
    assert "an [api.tokens] section" in p.fix and "sha256:" in p.fix and "hash-token" in p.fix
    assert TOKEN not in p.format("table.toml")


def test_the_devices_written_as_a_value():
    text = "devices = 3\n" + BASE.split("[devices.shoe]")[0]
    p = only(text)
    assert (p.key, p.line) == ("devices", 1)
    assert p.reason == "is the number 3, not a section"
    assert "[devices.shoe]" in p.fix and "class" in p.fix


def test_a_device_written_as_a_value():
    text = BASE.split("[devices.shoe]")[0] + '[devices]\nshoe = "x"\n'
    p = only(text)
    assert (p.key, p.line) == ("devices.shoe", line_of(text, "shoe = "))
    assert p.reason == "is the string 'x', not a section"
    assert "[devices.shoe]" in p.fix and "class" in p.fix


def test_a_wagers_limits_written_as_a_value():
    text = BASE + "\n[limits]\nmin = 5\nversus_croupier = 50\n"
    p = only(text)
    assert (p.key, p.line) == ("limits.versus_croupier", line_of(text, "versus_croupier"))
    assert p.reason == "is the number 50, not a section"
    assert "[limits.versus_croupier]" in p.fix and "min" in p.fix and "max" in p.fix


def test_a_required_section_written_as_a_value_is_one_problem():
    """Not also each key it lacks, at the same line: the section is what is wrong."""
    text = 'holdem = "5/10"\n' + BASE.replace("q-poker", "texas-holdem").replace(
        "boxes = 7", "boxes = 10")
    p = only(text)
    assert (p.key, p.line) == ("holdem", 1)
    assert all(k in p.fix for k in ("[holdem]", "small_blind", "big_blind", "structure"))


def test_config_check_names_it_at_its_line(tmp_path):
    path = tmp_path / "table.toml"
    text = BASE + '\n[gpio]\nlight = "red"\n'
    path.write_text(text)
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{path}:{line_of(text, 'light')}: gpio.light: is the string 'red', not a section; write it as a " \
           "[gpio.light] section" in out.stderr
