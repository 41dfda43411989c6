"""The base of every error a person or a device can cause.

The command line prints a TablectlError's message (which names the problem and the way out)
and exits with status 2, never a traceback. Raising one means nothing was changed.
"""


class TablectlError(Exception):
    """An input that cannot be accepted; the message says what is wrong and what to do."""
