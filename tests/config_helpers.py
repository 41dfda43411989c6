"""Helpers for the table.toml tests: a file that passes, the problems a text is refused with,
and where."""
import textwrap

import pytest

from controller.config import ConfigError, parse_text

# The smallest table.toml that passes the check: a Q Poker table dealt by its shoe.
BASE = textwrap.dedent("""\
    [table]
    id = "t1"
    game = "q-poker"
    mode = "shoe"
    boxes = 7

    [devices.shoe]
    class = "shoe"
    port = "/dev/tablectl/shoe"
    """)


def problems(text):
    """The problems ``text`` is refused with (it must be refused)."""
    with pytest.raises(ConfigError) as info:
        parse_text(text, "table.toml")
    return info.value.problems


def only(text):
    """The one problem ``text`` is refused with."""
    found = problems(text)
    assert len(found) == 1, [p.format() for p in found]
    return found[0]


def line_of(text, needle):
    """The 1-based line holding ``needle`` (the test's own count, not the scanner's)."""
    hits = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]
