"""Which Python ran the figures, and whether it was built the way a table's is.

A table runs the service in a venv of its distribution's ``python3`` (systemd/install.sh on
Raspberry Pi OS). A Python built from source without ``--enable-optimizations`` (profile-guided
optimisation) or ``--with-lto``, as pyenv builds by default, runs the daemon's work on a frame
markedly slower after an idle gap (docs/performance.md), so the bench says which one it ran on.
"""
from __future__ import annotations

import os
import platform
import shlex
import sys
import sysconfig
from typing import Any

# The configure options that change how fast the interpreter itself runs.
OPTIMISING = ("--enable-optimizations", "--with-lto")


def describe(config_args: str, base_prefix: str) -> dict[str, Any]:
    """``origin`` and ``optimisations`` of an interpreter from its configure arguments and its
    ``sys.base_prefix``: ``distribution`` for one installed under ``/usr`` (a Debian package:
    its build flags are the package's, not in ``CONFIG_ARGS``), ``source`` otherwise; and the
    :data:`OPTIMISING` options it was configured with."""
    try:
        args = shlex.split(config_args or "")
    except ValueError:      # an unbalanced quote: read it word by word
        args = (config_args or "").split()
    found = [a for a in args if a.split("=", 1)[0] in OPTIMISING]
    origin = "distribution" if os.path.normpath(base_prefix) == "/usr" else "source"
    return {"origin": origin, "optimisations": found}


def note(info: dict[str, Any]) -> str | None:
    """Why these figures may not be a table's, or None when the interpreter is built as a
    table's is (the distribution's, or one configured with both optimising options)."""
    if info["origin"] == "distribution":
        return None
    missing = [o for o in OPTIMISING if not any(a.startswith(o) for a in info["optimisations"])]
    if not missing:
        return None
    return (f"this Python was built from source without {' or '.join(missing)}; a table runs "
            "its distribution's python3, on which the daemon's work runs faster: measure with "
            "a venv of it (PYTHON=/usr/bin/python3 scripts/demo, docs/performance.md)")


def built(info: dict[str, Any]) -> str:
    """How the interpreter of ``info`` (:func:`interpreter`'s keys) was built, for people."""
    if info.get("origin") == "distribution":
        return "the distribution's build"
    options = " ".join(info.get("optimisations") or []) or "no optimising options"
    return f"built from source ({options})"


def interpreter() -> dict[str, Any]:
    """The running interpreter: ``executable`` (the real one behind a venv), ``version``,
    ``origin``, ``optimisations`` and ``note`` (see :func:`note`)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    info = {"executable": os.path.realpath(base), "version": platform.python_version(),
            **describe(sysconfig.get_config_var("CONFIG_ARGS") or "", sys.base_prefix)}
    info["note"] = note(info)
    return info
