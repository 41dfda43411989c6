"""table.toml: `firmware_hash` of a device section, the hash of the regulator's approved
firmware as the device gives it in HelloInfo (docs/protocol.md 5.1: a blob, reported in hex).
A mistyped hash must fail `config check` at its line, not refuse the approved device later."""
import subprocess
import sys
import textwrap

import pytest

from config_helpers import line_of, only
from controller.config import parse_text
from test_config import BASE     # the smallest valid table: one shoe, Q Poker

APPROVED = bytes(range(32)).hex()


def test_an_approved_hash_is_taken_in_lower_case():
    config = parse_text(BASE + f'firmware_hash = "{APPROVED.upper()}"\n')
    assert config.device("shoe").firmware_hash == APPROVED


def test_without_the_key_any_firmware_is_linked():
    assert parse_text(BASE).device("shoe").firmware_hash == ""


@pytest.mark.parametrize("value,why", [
    ("0x" + APPROVED, "hex digits"),
    (APPROVED[:-1], "odd"),
    ("zz" + APPROVED[2:], "hex digits"),
    ("", "empty"),
    (APPROVED + "\\n", "hex digits"),             # pasted with its line break
    ("ab" * 256, "255 bytes"),
])
def test_a_hash_that_is_not_one_is_named_at_its_line(value, why):
    text = BASE + f'firmware_hash = "{value}"\n'
    p = only(text)
    assert p.key == "devices.shoe.firmware_hash"
    assert p.line == line_of(text, "firmware_hash")
    assert why in p.fix, p.fix
    assert "HelloInfo" in p.fix or "health" in p.fix, p.fix
    assert "regulator's approval" in p.fix or "leave firmware_hash out" in p.fix, p.fix


def test_a_hash_given_as_a_number_is_refused():
    text = BASE + "firmware_hash = 12\n"
    p = only(text)
    assert p.key == "devices.shoe.firmware_hash" and p.line == line_of(text, "firmware_hash")


def test_cli_check_names_the_line_and_the_way_out(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(BASE + f'firmware_hash = "{APPROVED[:-1]}"\n')
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{path}:10: devices.shoe.firmware_hash:" in out.stderr, out.stderr
    assert "regulator" in out.stderr, out.stderr


def test_a_codec_whose_hello_carries_no_hash_cannot_have_an_approved_one():
    # The dice-binary codec's hello has no firmware hash: the agitator could never link.
    text = BASE + textwrap.dedent(f"""
        [devices.dice]
        class = "dice"
        port = "/dev/ttyACM0"
        codec = "dice-binary"
        firmware_hash = "{APPROVED}"
        """)
    p = only(text.replace('mode = "shoe"', 'mode = "shoe"'))
    assert p.key == "devices.dice.firmware_hash" and p.line == line_of(text, "firmware_hash")
    assert "dice-binary" in p.reason and "no firmware hash" in p.reason, p.reason
    assert "leave firmware_hash out" in p.fix and 'codec = "tablectl"' in p.fix, p.fix
