"""docs/configuration.md against controller/config.py: every key the document lists is one the
schema knows, in the same section, with the same default, and the other way round; and what
the document says a value may be (an id's letters, a token's form, a pin's name) is what the
check accepts, no more.
"""
import re
import tomllib
from pathlib import Path

import pytest

from config_helpers import only
from controller.config import REQUIRED, ROLES, SCHEMA, parse_text

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "configuration.md").read_text()
EXAMPLE = (ROOT / "docs" / "table.toml.example").read_text()


def documented_keys():
    """{section: {key: the default column as written}} from the key tables of the document;
    a section is its heading, `[devices.<id>]` written `devices.*` as the schema does."""
    sections, current = {}, None
    for line in DOC.splitlines():
        heading = re.match(r"^#{2,3} `\[([^\]]+)\]`", line)
        if heading:
            current = heading.group(1).replace("<id>", "*")
            sections.setdefault(current, {})
        elif line.startswith("#"):
            current = None
        elif current and (row := re.match(r"^\| `([a-z_]+)` \| ([^|]+) \|", line)):
            sections[current][row.group(1)] = row.group(2).strip()
    return sections


def schema_keys():
    keys = {section: dict(spec) for section, spec in SCHEMA.items()}
    keys["api.tokens"] = {role: None for role in ROLES}
    keys["interpretations"] = {}            # the game's own keys: docs/interpretations.md
    return keys


def test_every_documented_key_is_a_key_of_its_section_and_every_key_is_documented():
    documented, schema = documented_keys(), schema_keys()
    assert set(documented) == set(schema), set(documented) ^ set(schema)
    for section in schema:
        assert set(documented[section]) == set(schema[section]), \
            (section, set(documented[section]) ^ set(schema[section]))


def test_every_documented_default_is_the_schemas():
    documented = documented_keys()
    for section, keys in SCHEMA.items():
        for key, spec in keys.items():
            written = documented[section][key]
            if spec.default is REQUIRED:
                assert written == "required", (section, key, written)
            elif spec.default is None:
                assert written == "none", (section, key, written)
            else:
                value = tomllib.loads("v = " + written.strip("`"))["v"]
                assert (value, type(value)) == (spec.default, type(spec.default)), \
                    (section, key, written, spec.default)


def test_the_key_tables_are_read():
    """The reading above finds the tables (else it would pass on nothing)."""
    documented = documented_keys()
    assert documented["table"]["id"] == "required"
    assert documented["devices.*"]["baudrate"] == "`115200`"
    assert documented["api.tokens"]["supervisor"] == "none"


# --- what a value may be ----------------------------------------------------------------------

def with_line(key_line, value):
    """The example with one `key = ...` line's value replaced."""
    text, n = re.subn(rf"^{re.escape(key_line)} = [^#\n]*", lambda _: f"{key_line} = {value} ",
                      EXAMPLE, count=1, flags=re.M)
    assert n == 1, key_line
    return text


@pytest.mark.parametrize("written", ['"macau-07\\n"', '"macau-07\\r"', '"\\nmacau-07"'])
def test_a_table_id_is_only_the_documented_letters(written):
    """`id`: "1-64 letters, digits, `.`, `_`, `-`". A line break after them was taken (the
    pattern's `$` matches before a final newline): the id went into every journal record and
    log line with it, and the file written plainly afterwards named another table."""
    problem = only(with_line("id", written))
    assert problem.key == "table.id"


def test_a_table_id_that_begins_with_punctuation_is_told_why():
    problem = only(with_line("id", '"-macau-07"'))
    assert problem.key == "table.id" and "begin" in problem.fix, problem.format()


def test_a_device_id_is_only_the_documented_letters():
    text = EXAMPLE.replace("[devices.shoe]", '[devices."shoe\\n"]')
    problem = only(text)
    assert problem.key.startswith("devices.shoe") and "begin" in problem.fix, problem.format()


def test_a_token_hash_is_exactly_sha256_and_64_hex_digits():
    """A hash with a line break after it passed the check and could never match a token: the
    role was locked out with the file found valid."""
    line = re.search(r'^dealer = "(sha256:[0-9a-f]{64})"', EXAMPLE, re.M)
    problem = only(EXAMPLE.replace(line.group(0), f'dealer = "{line.group(1)}\\n"'))
    assert problem.key == "api.tokens.dealer"


def test_a_pin_name_with_a_line_break_is_refused_for_what_it_is():
    problem = only(with_line("key_switch", '"GPIO24\\n"'))
    assert problem.key == "gpio.key_switch" and "leading zero" not in problem.reason, \
        problem.format()


def test_the_example_passes():
    assert parse_text(EXAMPLE).table_id == "macau-07"


# Every text key of the schema, with a value the example (or a USB device) makes valid.
TEXT_VALUES = {("chips", "currency"): '"HKD"', ("journal", "path"): '"/var/lib/tablectl/j.db"',
               ("devices.*", "usb_serial"): '"SHOE-0042"', ("table", "id"): '"macau-07"',
               ("api", "listen"): '"127.0.0.1"', ("devices.*", "port"): '"/dev/tablectl/x"',
               ("devices.*", "usb_backend"): '"usb.backend.libusb1:get_backend"'}


def test_every_text_key_is_in_the_control_character_check():
    """The list above covers every free-text key (those with choices are checked by them)."""
    free = {(section, key) for section, keys in SCHEMA.items() for key, spec in keys.items()
            if spec.kind == "str" and not spec.choices}
    assert free == set(TEXT_VALUES), free ^ set(TEXT_VALUES)


@pytest.mark.parametrize("section, key", sorted(TEXT_VALUES))
@pytest.mark.parametrize("control", ["\\n", "\\t", "\\u001b"])
def test_a_text_value_with_a_control_character_is_refused(section, key, control):
    """No id, path, label or serial number holds a line break, a tab or an escape: such a
    value is a pasting mistake, and one taken passed the check and then named a journal file
    no one could type, put a line break in every log line and amount shown (currency), or
    a USB serial number no device reports, so the shoe never linked."""
    value = TEXT_VALUES[section, key]
    value = value[:-1] + control + '"'
    if section == "devices.*":
        text = EXAMPLE.replace('usb_serial = "SHOE-0042"', f"{key} = {value}") \
            if key.startswith("usb") else \
            EXAMPLE.replace('port = "/dev/tablectl/shuffler"', f"port = {value}")
        if key == "usb_backend":
            text = EXAMPLE.replace('usb_serial = "SHOE-0042"',
                                   f'usb_serial = "SHOE-0042"\n{key} = {value}')
    else:
        text = with_line(key, value) if key != "path" else EXAMPLE.replace(
            'path = "/var/lib/tablectl/journal.db"', f"path = {value}")
    problem = only(text)
    assert problem.key.endswith(key), problem.format()


@pytest.mark.parametrize("key, value", [("port", '"/dev/ttyUSB0"'), ("baudrate", "9600")])
def test_a_serial_key_on_a_usb_device_is_refused(key, value):
    """configuration.md: `port` (and the speed) are a serial device's only. On a USB device
    they were taken and never used: an operator who wrote the shoe's tty there believed the
    table would open it, and the daemon looked for a USB device instead."""
    text = EXAMPLE.replace('usb_serial = "SHOE-0042"', f'usb_serial = "SHOE-0042"\n{key} = {value}')
    problem = only(text)
    assert problem.key == f"devices.shoe.{key}", problem.format()
    assert 'transport = "serial"' in problem.fix and f"remove {key}" in problem.fix


@pytest.mark.parametrize("key, value", [("usb_vendor", "0x1d50"), ("usb_product", "0x6018"),
                                        ("usb_serial", '"SHUF-0001"'),
                                        ("usb_backend", '"usb.backend.libusb1:get_backend"')])
def test_a_usb_key_on_a_serial_device_is_refused(key, value):
    """configuration.md: the usb_ keys find a device spoken to directly over USB. On a serial
    device they were taken and never used: the serial number written there picked nothing,
    the udev rules' name (port) did."""
    text = EXAMPLE.replace('port = "/dev/tablectl/shuffler"',
                           f'port = "/dev/tablectl/shuffler"\n{key} = {value}')
    problem = only(text)
    assert problem.key == f"devices.shuffler.{key}", problem.format()
    assert 'transport = "usb"' in problem.fix and f"remove {key}" in problem.fix


def test_a_table_id_its_journal_does_not_belong_to_is_refused_by_the_check(tmp_path):
    """configuration.md: "A journal belongs to one table id." The service refuses to open a
    journal of another table, so the check refuses what `tablectl run` would (the unit's
    ExecStartPre): an id edited in table.toml passed it, and the table then failed to start
    with the journal's complaint. Named with its line, the journal's own id and the way out."""
    import subprocess
    import sys
    from controller.journal import Journal
    journal = tmp_path / "journal.db"
    Journal.open(journal, "macau-07").close()
    config = tmp_path / "table.toml"
    text = EXAMPLE.replace('"/var/lib/tablectl/journal.db"', f'"{journal}"')

    def check(table_id):
        config.write_text(text.replace('id = "macau-07"', f'id = "{table_id}"'))
        return subprocess.run([sys.executable, "-m", "controller.cli", "config", "check",
                               str(config)], capture_output=True, text=True, cwd=ROOT)
    same = check("macau-07")
    assert same.returncode == 0, same.stderr
    other = check("macau-08")
    assert other.returncode == 2 and other.stdout == "", other.stdout
    assert f"{config}:5: table.id: " in other.stderr, other.stderr
    assert "'macau-07'" in other.stderr and str(journal) in other.stderr
    assert "[journal] path" in other.stderr
    journal.unlink()           # a table that has not run yet: nothing to belong to
    assert check("macau-08").returncode == 0
