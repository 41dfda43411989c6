"""Helpers for the table.toml tests: the problems a text is refused with, and where."""
import pytest

from controller.config import ConfigError, parse_text


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
