"""JSON as people send it, read strictly: the one reader behind the console API's bodies, the
control socket's lines and the round documents of `tablectl rules settle`.

Python's parser takes what a person can get wrong without a word: it keeps the last of a key
given twice (a body saying "amount" 10 then 1000 would be taken for 1000) and reads whole
numbers of any size (beyond 2^53 - 1 the console page cannot show them exactly). These are
the parts that find such slips; each caller words its own refusal.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

from controller.rules.base import MAX_AMOUNT

_DIGITS = len(str(MAX_AMOUNT))


class Pairs(dict):
    """A JSON object as parsed, with ``twice``: each key it gave again, in order."""

    twice: list[str]


def _repeated(items: list[tuple[str, Any]]) -> list[str]:
    seen: set[str] = set()
    return [k for k, _ in items if k in seen or seen.add(k)]


def pairs(items: list[tuple[str, Any]]) -> Pairs:
    """``object_pairs_hook`` recording the keys an object gives twice; ask
    :func:`first_twice` of the whole document once it is read, then :func:`plain`."""
    obj = Pairs(items)
    obj.twice = _repeated(items)
    return obj


class Twice(ValueError):
    """A key an object gives twice; ``str()`` is the key."""


def once(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` raising :class:`Twice` at the first key given twice, while
    reading (so before anything later in the text); plain dicts otherwise."""
    twice = _repeated(items)
    if twice:
        raise Twice(twice[0])
    return dict(items)


def first_twice(value: Any, where: str = "", shown: Callable[[str], str] = str) -> str | None:
    """The first key given twice in ``value`` (read with :func:`pairs`), as words such as
    ``"1" twice in stacks`` (``where``: the top-level key it is under), or None. An object's
    own keys are looked at before what it holds. The key is cut to 40 characters and passed
    through ``shown`` (the API masks a card spelled in it)."""
    if isinstance(value, list):
        return next((t for v in value if (t := first_twice(v, where, shown))), None)
    if not isinstance(value, Pairs):
        return None
    if value.twice:
        # both names are the sender's own text: cut and masked alike
        return f'"{shown(value.twice[0][:40])}" twice' + (f" in {shown(where[:40])}"
                                                          if where else "")
    return next((t for k, v in value.items() if (t := first_twice(v, where or k, shown))),
                None)


def plain(value: Any) -> Any:
    """``value`` with plain dicts for the parsed objects (the table and journal take those)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def nesting(value: Any) -> int:
    """How deep lists and objects nest in ``value`` ({"box": 1} is 1, {"seats": [1]} 2)."""
    depth, level = 0, [value]
    while True:
        level = [x for x in level if isinstance(x, (dict, list))]
        if not level:
            return depth
        depth += 1
        level = [v for x in level for v in (x.values() if isinstance(x, dict) else x)]


class TooLarge(ValueError):
    """A whole number beyond MAX_AMOUNT (or below its negative); ``str()`` is its text."""


class TooLong(ValueError):
    """A whole number with more digits than int() reads (``sys.get_int_max_str_digits()``);
    ``str()`` is its text. Not a TooLarge: the console API answers it as a number too long."""


def whole_number(text: str) -> int:
    """``parse_int`` taking whole numbers up to MAX_AMOUNT either way, else raising
    :class:`TooLarge` (or :class:`TooLong`)."""
    # Judged on the digits first: int() refuses over 4300 with an error of its own.
    digits = len(text.lstrip("-"))
    if digits > _DIGITS:
        limit = sys.get_int_max_str_digits()
        raise (TooLong if limit and digits > limit else TooLarge)(text)
    value = int(text)
    if abs(value) > MAX_AMOUNT:
        raise TooLarge(text)
    return value
