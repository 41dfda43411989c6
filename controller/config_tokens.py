"""A console token pasted as a value of table.toml (``table.id = "<token>"``).

The file holds each role's token only as its hash (``sha256:<hex>``, config.hash_token), so a
value is known to be a token by hashing it, and the parts of it a token may be, against the
hashes the file configures. A value that is one, or holds one, is never shown: the check's
problems go to the system's log, and a reload's refusal into the journal.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# The longest token looked for inside a longer value, and the longest value searched for one
# inside it. A value that is a token, of any length, is always found.
TOKEN_INSIDE_MAX = 128
VALUE_SEARCHED_MAX = 4096
# ``tablectl config hash-token --new`` makes tokens of 43 characters of this alphabet
# (secrets.token_urlsafe(32)): one is found anywhere inside a value, even run into other
# letters, by hashing each stretch of 43 such characters.
MADE_CHARS = 43
_MADE_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")
# A token typed by hand (any plain ASCII) is found inside a value where it stands as whole
# pieces (a piece: a run of that alphabet, or any one other character) between the value's
# ends or other characters than its own (``MOP <token>``, ``/var/lib/<token>/journal.db``),
# and spans at most this many pieces. Hashing only such parts keeps the search, which runs
# on the daemon's main loop during a reload, to a few thousand hashes for the longest value
# searched, where hashing every part of it took hundreds of thousands.
PIECES_MAX = 16


@dataclass(frozen=True)
class Found:
    """A value of the file that is (``whole``) or holds the console token of ``role``;
    ``token`` is that token as written in it."""

    role: str
    token: str
    whole: bool


class Tokens:
    """The console tokens table.toml configures: each role's hash, and a token written in
    clear where its hash goes (refused by the check, but a secret all the same)."""

    def __init__(self, hashes: Mapping[str, str], clear: Mapping[str, str],
                 min_chars: int) -> None:
        self.hashes = dict(hashes)       # "sha256:<hex>" -> role
        self.clear = dict(clear)         # token -> role
        self.min_chars = min_chars

    def __bool__(self) -> bool:
        return bool(self.hashes or self.clear)

    def find(self, value: str) -> Found | None:
        """The configured token ``value`` is or holds, or None."""
        if len(value) < self.min_chars:
            return None
        for token, role in self.clear.items():
            if token in value:
                return Found(role, token, token == value)
        if not self.hashes:
            return None
        role = self.hashes.get(_digest(value))
        if role is not None:
            return Found(role, value, True)
        if len(value) > VALUE_SEARCHED_MAX:
            return None
        for start, end in self._parts(value):
            role = self.hashes.get(_digest(value[start:end]))
            if role is not None:
                return Found(role, value[start:end], False)
        return None

    def _parts(self, value: str) -> Iterator[tuple[int, int]]:
        """The parts of ``value`` a token may be (see PIECES_MAX and MADE_CHARS): plain
        ASCII, not beginning or ending with a space (config_cli.check_sendable),
        ``min_chars`` to TOKEN_INSIDE_MAX long."""
        runs = [m.span() for m in _MADE_ALPHABET.finditer(value)]
        for start, end in runs:
            for at in range(start, end - MADE_CHARS + 1):
                if (at, at + MADE_CHARS) != (start, end):     # a whole run: a piece, below
                    yield at, at + MADE_CHARS
        bounds = _pieces(value, runs)
        for i, (start, _) in enumerate(bounds):
            if value[start] == " ":
                continue
            for _, end in bounds[i:i + PIECES_MAX]:
                if end - start > TOKEN_INSIDE_MAX or not " " <= value[end - 1] <= "~":
                    break
                if end - start >= self.min_chars and value[end - 1] != " ":
                    yield start, end


def _pieces(value: str, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``value`` cut into pieces: each run of the made tokens' alphabet (``runs``), and each
    other character alone."""
    pieces: list[tuple[int, int]] = []
    at = 0
    for start, end in [*runs, (len(value), len(value))]:
        pieces.extend((i, i + 1) for i in range(at, start))
        if end > start:
            pieces.append((start, end))
        at = end
    return pieces


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def values(doc: Mapping[str, Any], path: tuple[str, ...] = ()
           ) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every text value of a parsed document with its key's path (a list's items under the
    list's key), the console tokens' own section left out."""
    for key, value in doc.items():
        here = path + (str(key),)
        if here == ("api", "tokens"):
            continue
        yield from _texts(here, value)


def _texts(path: tuple[str, ...], value: Any) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        yield from values(value, path)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(path, item)


def masked(text: str, value: str, found: Found, hidden: str) -> str:
    """``text`` with ``value`` (a value of the file holding ``found``), and the token itself,
    put as ``hidden`` wherever it is quoted, however it is quoted."""
    for shown in sorted({repr(value), value, repr(value)[1:-1], repr(found.token)[1:-1],
                         found.token}, key=len, reverse=True):
        if shown:
            text = text.replace(shown, hidden)
    return text
