"""Structured logs: JSON lines on stdout for journald, or a readable format on a terminal.

The journal (controller.journal), not the log, is the record of truth; logs say what the
process is doing. Every line carries the ids bound in the current context: ``table`` for the
whole process, ``round`` while a round runs, ``device`` inside a driver's task. They are
contextvars, so each asyncio task sees its own (a task copies the context it was created in)::

    configure_logging("info", "auto")
    bind(table="macau-07")
    log = get_logger("table")
    with bound(round="42"):
        log.info("round_open", boxes=[1, 3])
    # {"table": "macau-07", "round": "42", "boxes": [1, 3], "event": "round_open",
    #  "level": "info", "logger": "table", "ts": "2026-11-21T19:40:01.123456Z"}

Standard-library logging (transitions, gpiozero, asyncio) goes through the same renderer.
Under systemd (stdout is the journal stream) each line starts with its syslog priority,
``<3>{...}``, which journald strips and keeps as the entry's priority: ``journalctl -u tablectl
-p warning`` shows warnings and errors only, ``-o cat`` the bare JSON lines.
"""
from __future__ import annotations

import io
import logging
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator, TextIO

import structlog
from structlog.contextvars import bind_contextvars, bound_contextvars, unbind_contextvars

from controller.printable import json_line, printable

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
          "error": logging.ERROR}


def _renderer(fmt: str, stream: TextIO) -> Any:
    if fmt == "auto":
        fmt = "console" if getattr(stream, "isatty", lambda: False)() else "json"
    if fmt == "json":
        # json_line: a C1 control or U+202E in a device's words would otherwise reach the
        # line raw (journalctl would hide the whole entry as blob data); the same values
        # for a JSON reader.
        return structlog.processors.JSONRenderer(serializer=json_line, sort_keys=False)
    if fmt == "console":
        return structlog.dev.ConsoleRenderer(colors=getattr(stream, "isatty", lambda: False)())
    raise ValueError(f"log format {fmt!r}: use json, console or auto")


# syslog priorities, for journald's "<N>" line prefix (journalctl -p err shows errors only).
_PRIORITY = {"debug": 7, "info": 6, "warning": 4, "warn": 4, "error": 3, "exception": 3,
             "critical": 2, "fatal": 2}


class _Quoted:
    """A text the readable renderer prints as Python writes it: quoted, every control or
    invisible character escaped (``'SIM-\\x1b[2J'``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return repr(self.text)


def _printable_texts(logger: Any, method: str, event_dict: Any) -> Any:
    """Before the readable renderer: every text holding a control character (a device's
    serial number, its malfunction's words) quoted with its controls escaped, and the message
    made printable. The renderer prints a one-word text bare, so an escape sequence in it
    would reach the terminal, and a line break in the message would start a line of its
    own."""
    return {k: v if not isinstance(v, str) or v.isprintable()
            else printable(v) if k == "event" else _Quoted(v)
            for k, v in event_dict.items()}


def _priority_prefix(logger: Any, method: str, line: Any) -> Any:
    """After the renderer: put journald's priority prefix before the rendered line."""
    return f"<{_PRIORITY.get(method, 6)}>{line}" if isinstance(line, str) else line


def _connected_to_journal(stream: TextIO) -> bool:
    """Whether ``stream`` is the journal stream systemd gave us: ``JOURNAL_STREAM`` holds the
    device and inode of that stream (systemd.exec(5)); a redirected stdout does not match."""
    try:
        device, inode = (int(x) for x in os.environ["JOURNAL_STREAM"].split(":"))
        st = os.fstat(stream.fileno())
    except (KeyError, ValueError, OSError, AttributeError, io.UnsupportedOperation):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


def configure_logging(level: str = "info", fmt: str = "auto", stream: TextIO | None = None,
                      *, journald: bool | None = None) -> None:
    """Send logs at ``level`` and above to ``stream`` (stdout by default) as JSON lines
    (``fmt="json"``), readable lines (``"console"``), or whichever suits the stream
    (``"auto"``: console on a terminal, JSON under systemd).

    ``journald`` prefixes each line with its syslog priority (``<3>{...}``), which journald
    strips and records as the entry's priority; by default it is on when systemd connected
    stdout to the journal (``JOURNAL_STREAM`` is set)."""
    stream = sys.stdout if stream is None else stream
    if level not in LEVELS:
        raise ValueError(f"log level {level!r}: use one of {', '.join(LEVELS)}")
    if journald is None:
        journald = _connected_to_journal(stream)
    renderer = _renderer(fmt, stream)
    json_out = isinstance(renderer, structlog.processors.JSONRenderer)
    tail = [_priority_prefix] if journald else []
    shared = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
    ]
    exc = [structlog.processors.format_exc_info] if json_out else []
    # JSON escapes its own; a readable line is made printable before the stack or traceback,
    # whose line breaks are its own.
    texts = [] if json_out else [_printable_texts]
    structlog.configure(
        processors=[*shared, *texts, structlog.processors.StackInfoRenderer(), *exc, renderer,
                    *tail],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    # Libraries log through the standard library: same stream, same shape.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name, *texts],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *exc, renderer,
                    *tail]))
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_tablectl", False)]:
        root.removeHandler(old)
    handler._tablectl = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(LEVELS[level])
    # transitions narrates every callback at INFO, several lines per state change; the
    # table publishes (and logs) each change itself, so only its warnings are wanted.
    logging.getLogger("transitions").setLevel(max(LEVELS[level], logging.WARNING))


def get_logger(name: str | None = None, **initial: Any) -> Any:
    """A structlog logger; ``name`` becomes the ``logger`` field."""
    log = structlog.get_logger()
    if name:
        initial["logger"] = name
    return log.bind(**initial) if initial else log


def bind(**ids: Any) -> None:
    """Bind ids (table, round, device, ...) for the rest of the current context."""
    bind_contextvars(**ids)


def unbind(*keys: str) -> None:
    """Drop ids bound with :func:`bind` (e.g. ``unbind("round")`` when a round closes)."""
    unbind_contextvars(*keys)


@contextmanager
def bound(**ids: Any) -> Iterator[None]:
    """Bind ids for the duration of a ``with`` block."""
    with bound_contextvars(**ids):
        yield
