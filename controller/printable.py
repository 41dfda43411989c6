"""Text someone else wrote, made safe to print: a device's words, a player's name, a journal
someone rewrote.

A control character printed raw (an escape sequence, a carriage return, a line break inside a
name) could clear a reader's screen, rewrite the lines above or forge a line of an account or
a log, and a right-to-left mark reorders what follows. What a terminal or a log line shows
goes through :func:`printable`; JSON it shows through :func:`json_line`, which a JSON reader
reads back as the same value.
"""
from __future__ import annotations

import json
import unicodedata
from typing import Any


def _visible(ch: str) -> bool:
    return ch.isprintable() or unicodedata.category(ch) == "Zs"


def printable(text: str) -> str:
    """``text`` with every control or invisible character (C0 and C1 controls, format
    characters such as U+202E, line and paragraph separators) written as its Python escape
    (``\\x1b``, ``\\n``, ``\\u202e``), so that it reaches a terminal as the characters it holds."""
    if text.isprintable():
        return text
    return "".join(ch if _visible(ch) else ascii(ch)[1:-1] for ch in text)


def printable_lines(text: str) -> str:
    """``text`` of several lines (an error listing problems one a line) with each line made
    :func:`printable`: its line breaks stay, every other control character is escaped."""
    return "\n".join(printable(line) for line in text.split("\n"))


def printable_value(value: Any) -> Any:
    """A JSON value with every text in it (keys too) made :func:`printable`."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(str(k)): printable_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable_value(v) for v in value]
    return value


def json_line(doc: Any, **dumps: Any) -> str:
    """``doc`` as one line of JSON whose every control or invisible character is escaped
    (``\\u001b``, ``\\u202e``): JSON escapes only the C0 controls, and the rest would reach a
    terminal the lines are printed on. The same value for any JSON reader. ``dumps`` are
    json.dumps's other arguments (``default``)."""
    text = json.dumps(doc, ensure_ascii=False, **dumps)
    if text.isprintable():
        return text
    return "".join(ch if _visible(ch) else _json_escape(ch) for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000                             # a UTF-16 surrogate pair, as JSON spells it
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
