"""A value as a refusal quotes it: in JSON, as the client wrote it.

The table's refusals are read by a dealer on the console and by API clients that speak JSON,
so a wrong value is quoted in JSON's notation (``true``, ``null``, ``"1"``, ``10.0``), never
Python's (``True``, ``None``, ``'1'``). The API still masks any card spelled in the message
afterwards (controller.table.secrecy.scrub), so a card's code in a wrong value stays hidden.
"""
from __future__ import annotations

import json
from typing import Any

LIMIT = 40      # characters of a value quoted in a refusal; enough to recognise it


def shown(value: Any, limit: int = LIMIT) -> str:
    """``value`` in JSON (``true``, ``null``, ``"1"``, ``10.0``, ``[1, 2]``), cut to ``limit``
    characters with ``...`` after. A number too long to spell is named as such (spelling it
    would raise), and a value JSON has no notation for is shown as its text, quoted."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError as exc:   # an int past Python's digit limit, or a list holding itself
        return ("(a value that holds itself)" if "ircular" in str(exc)
                else "(a number too long to print)" if isinstance(value, int)
                else "(a value holding a number too long to print)")
    return text if len(text) <= limit else text[:limit] + "..."


def kind(value: Any) -> str:
    """What JSON calls ``value``'s type: a number, text, true or false, null, a list, an
    object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def described(value: Any, limit: int = LIMIT) -> str:
    """``value`` with its JSON type before it where the value does not say it: ``a number
    5``, ``text "5"``, ``a list [1]``; ``true``, ``false`` and ``null`` alone."""
    if value is None or isinstance(value, bool):
        return shown(value)
    return f"{kind(value)} {shown(value, limit)}"
