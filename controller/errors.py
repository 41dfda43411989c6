"""The base of every error a person or a device can cause.

The command line prints a TablectlError's message (which names the problem and the way out)
and exits with status 2, never a traceback. Raising one means nothing was changed.
"""


class TablectlError(Exception):
    """An input that cannot be accepted; the message says what is wrong and what to do."""


# What an error that carries no words of its own means, by its kind.
_WORDLESS = {TimeoutError: "no answer in the time allowed"}


def error_text(exc: BaseException, check: str) -> str:
    """``exc`` in words for a log line: its kind, its own words, and what to ``check``
    (``"TimeoutError: no answer in the time allowed; check the device's cable"``). Some
    errors carry no words (``str(TimeoutError())`` is empty), and a line that logs only
    ``str(exc)`` then says nothing."""
    words = str(exc).strip() or next(
        (text for kind, text in _WORDLESS.items() if isinstance(exc, kind)),
        "it gave no details")
    return f"{type(exc).__name__}: {words}; check {check}"
