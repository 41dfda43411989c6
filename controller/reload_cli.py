"""``tablectl reload [--control SOCKET]``: ask the running daemon to reload table.toml, and wait
for its outcome (the unit's ``ExecReload=``, so ``systemctl reload tablectl`` fails when the
daemon refuses).

It sends ``{"reload": true}`` on the control socket (docs/api.md, *The control socket*) and
nothing else: the daemon reads the tokens from its own file, and neither the request nor the
answer holds one. The daemon does what SIGHUP makes it do (``Service._reload``) and answers
once it is done. Exit statuses:

* 0 (``EXIT_APPLIED``): applied; stdout names the roles whose token was replaced, added or
  removed and the keys that wait for a restart, as the ``config_reload`` record says.
* 1 (``EXIT_REFUSED``): the daemon refused it and the tokens in force are unchanged: a file
  with a mistake (stderr names each key and line as ``tablectl config check`` does, and the
  refusal is journaled), a journal that could not be written, a service stopping.
* 2: a wrong command line, an empty ``--control`` path or one that is no socket (as every
  ``tablectl`` command).
* 3 (``EXIT_NOT_RUNNING``): no daemon to ask: no socket at the path, or one nobody listens on
  (a daemon still recovering its journal has not opened its socket yet).
* 4 (``EXIT_DENIED``): this user may not reach the socket (only root and the service user may).
* 5 (``EXIT_NO_ANSWER``): the daemon did not answer (it closed the connection, or took longer
  than ``ANSWER_S``): whether the reload was applied is in its log and journal.
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import socket
import stat
import sys
from typing import Any

from controller.config import Problem
from controller.printable import printable

DEFAULT_CONTROL = "/run/tablectl/control.sock"   # tablectl.service's ExecStart --control
EXIT_APPLIED, EXIT_REFUSED, EXIT_USAGE, EXIT_NOT_RUNNING, EXIT_DENIED, EXIT_NO_ANSWER = range(6)
# The longest wait for the daemon's answer: a reload reads one file and writes one record, but
# a journal held by another writer keeps it up to its 10 s busy timeout. Below the unit's
# TimeoutStartSec (60 s), which systemd holds a reload to.
ANSWER_S = 45.0
_ANSWER_MAX = 1 << 20            # an answer is one line of a record; more is not the daemon's


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reload", help="put table.toml's console tokens in force on the running "
                       "daemon and wait for its outcome (systemctl reload)")
    p.add_argument("--control", metavar="SOCKET", default=DEFAULT_CONTROL,
                   help=f"the daemon's control socket (default {DEFAULT_CONTROL})")
    p.set_defaults(func=cmd_reload)


def cmd_reload(args: argparse.Namespace) -> int:
    path = args.control
    try:
        reply = ask(path)
    except _Failed as exc:
        print(printable(f"tablectl: error: {exc}"), file=sys.stderr)
        return exc.code
    return show(reply)


class _Failed(Exception):
    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code


# The daemon opens its control socket once it has recovered its journal: until then a reload
# finds no socket (or the one a killed daemon left), as if none ran.
_NOT_RUNNING = ("if it is starting, the socket opens once its journal is recovered: wait until "
                "systemctl is-active tablectl says active, then reload again; if it is "
                "stopped, start it (sudo systemctl start tablectl); or give the socket of the "
                "one running with --control (tablectl run --control SOCKET)")
_DENIED = ("only root and the service user may reach it (mode 0600): run sudo tablectl reload, "
           "or sudo -u tablectl tablectl reload")


def ask(path: str) -> dict[str, Any]:
    """Send ``{"reload": true}`` to the daemon at ``path``; its answer. Raises _Failed with the
    exit status and the message for a daemon not reached or not answering."""
    where = f"control socket {path}"
    if not path:
        raise _Failed(EXIT_USAGE, "--control was given no path; give the daemon's control "
                      f"socket (default {DEFAULT_CONTROL}), or leave --control out")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise _Failed(EXIT_NOT_RUNNING, f"no {where}: the tablectl daemon is not running, "
                      f"is still starting, or runs without --control; {_NOT_RUNNING}") from None
    except PermissionError:
        raise _Failed(EXIT_DENIED, f"{where}: permission denied to look at it; "
                      f"{_DENIED}") from None
    except OSError as exc:
        raise _Failed(EXIT_USAGE, f"{where} cannot be used: {exc.strerror}; give the daemon's "
                      f"socket with --control (default {DEFAULT_CONTROL})") from None
    if not stat.S_ISSOCK(mode):
        raise _Failed(EXIT_USAGE, f"{path} is not a socket; give the daemon's control socket "
                      f"with --control (default {DEFAULT_CONTROL})")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(ANSWER_S)
    try:
        try:
            sock.connect(path)
        except PermissionError:
            raise _Failed(EXIT_DENIED, f"{where}: permission denied; {_DENIED}") from None
        except ConnectionRefusedError:
            raise _Failed(EXIT_NOT_RUNNING, f"{where}: no daemon listens on it (one that "
                          f"stopped without removing it, or one still starting); "
                          f"{_NOT_RUNNING}") from None
        except OSError as exc:
            code = EXIT_USAGE if exc.errno == errno.ENAMETOOLONG or "too long" in str(exc) \
                else EXIT_NOT_RUNNING
            raise _Failed(code, f"{where} cannot be reached: {exc.strerror or exc}; "
                          f"{_NOT_RUNNING}") from None
        return _answer(sock, where)
    finally:
        sock.close()


def _answer(sock: socket.socket, where: str) -> dict[str, Any]:
    lost = (f"the daemon closed {where} before it answered (it may have stopped): whether "
            "the reload was applied is in its log (journalctl -u tablectl) and journal "
            "(tablectl journal show last)")
    try:
        sock.sendall(b'{"reload": true}\n')
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                raise _Failed(EXIT_NO_ANSWER, lost)
            data += chunk
            if len(data) > _ANSWER_MAX:
                raise _Failed(EXIT_NO_ANSWER, f"{where} answered with no end of line in "
                              f"{_ANSWER_MAX} bytes: it is not the tablectl daemon's")
    except socket.timeout:
        raise _Failed(EXIT_NO_ANSWER, f"the daemon did not answer within {ANSWER_S:.0f} s on "
                      f"{where}; it may still apply the reload: see its log (journalctl -u "
                      "tablectl) and journal (tablectl journal show last)") from None
    except OSError:                 # reset, broken pipe: the daemon went away
        raise _Failed(EXIT_NO_ANSWER, lost) from None
    try:
        reply = json.loads(data)
    except ValueError:
        reply = None
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        raise _Failed(EXIT_NO_ANSWER, f"{where} answered what the tablectl daemon never says; "
                      "give its control socket with --control")
    return reply


def show(reply: dict[str, Any]) -> int:
    """Print the daemon's outcome (applied: stdout; refused: stderr) and return the status."""
    record = reply.get("reload") if isinstance(reply.get("reload"), dict) else None
    seq = reply.get("seq")
    if reply["ok"] and record is not None:
        # The file's path as the daemon was given it, and the daemon's words: they reach a
        # terminal (systemctl reload) as their escapes, as config check prints them.
        print(printable(f"tablectl: reloaded {record.get('path')} (journal record {seq})"))
        for line in applied_lines(record):
            print(printable(f"  {line}"))
        return EXIT_APPLIED
    error = reply.get("error") or "the daemon gave no reason"
    head = "reload refused" + (f" (journal record {seq})" if record is not None else "")
    print(printable(f"tablectl: error: {head}: {error}"), file=sys.stderr)
    if record is not None:
        for doc in record.get("problems") or ():
            if isinstance(doc, dict):
                print(f"  {_problem(doc, record.get('path'))}", file=sys.stderr)
    return EXIT_REFUSED


def applied_lines(record: dict[str, Any]) -> list[str]:
    """What an applied ``config_reload`` record says, one line each: the roles whose console
    token was replaced, added or removed, and the keys that wait for a restart."""
    roles = record.get("roles") if isinstance(record.get("roles"), dict) else {}
    lines = [f"console tokens {verb}: {', '.join(map(str, roles[k]))}" for k, verb in
             (("changed", "replaced"), ("added", "added"), ("removed", "removed"))
             if roles.get(k)]
    if not lines:
        lines.append("no console token changed")
    if record.get("restart"):
        lines.append(f"needs a restart: {', '.join(map(str, record['restart']))} (not applied "
                     "by a reload: the table keeps the settings it started with until then)")
    return lines


def _problem(doc: dict[str, Any], path: Any) -> str:
    """One problem as ``tablectl config check`` prints it: ``FILE:LINE: key: reason; fix``."""
    line = doc.get("line") if isinstance(doc.get("line"), int) else None
    return Problem(str(doc.get("key")), line, str(doc.get("reason")),
                   str(doc.get("fix") or "")).format(path)
