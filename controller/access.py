"""Why a file a person asked for could not be reached, and the way out.

As installed, /etc/tablectl (0750) and /var/lib/tablectl (0750) are for root and the service
user only: table.toml holds token hashes and the journal is the record of truth. So a
permission error almost always means the command was run as someone else, and the way out is
to run it as root or as the service user.
"""
from __future__ import annotations

import errno
import os
import pwd
import stat
from pathlib import Path

from controller.errors import TablectlError


def cannot_reach(path: Path, exc: OSError, retry: str = "sudo -u tablectl tablectl ...") -> str:
    """Why ``path`` could not be reached: the first directory on the way this user may not
    enter, or the file it may not read, with ``retry`` (the command again, as the service user)
    as the way out; for any other OS error, what it is and to check the path."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        who = f"this user ({user()})"
        where = f"{who} may not read {path}"
        for parent in reversed(path.absolute().parents):
            if not os.access(parent, os.X_OK):
                where = f"{who} may not enter {parent}"
                break
        return f"{where}; run it as root or as the service user: {retry}"
    return f"{reason(exc)}; check the path and the disk it is on"


def exists(path: Path, what: str, *, read: bool = True,
           error: type[TablectlError] = TablectlError) -> bool:
    """Whether ``path`` exists and, with ``read``, that this user may read it: a path it may
    not reach raises ``error`` naming ``what`` and the way out (SQLite and open() would only
    say "unable to open" or give an errno)."""
    try:
        found = path.exists()
        if found and read:
            with open(path, "rb"):
                pass
    except OSError as exc:
        raise error(f"{what} {path} cannot be read: {cannot_reach(path, exc)}") from None
    return found


def reason(exc: OSError) -> str:
    """What an OS error says, in a sentence's lower case and without its errno."""
    return (exc.strerror or str(exc)).lower()


def user() -> str:
    """The name of the user this process runs as."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:                # a uid with no name (a container's, say)
        return f"uid {os.geteuid()}"


def special(path: Path, directory: bool = False) -> str:
    """What ``path`` is when it is neither a regular file nor (unless ``directory``) a
    directory: a named pipe, a device, a socket, in words; '' otherwise, or when it cannot be
    looked at (a directory this user may not enter: named where the file is opened)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    for test, what in ((stat.S_ISDIR if directory else (lambda _: False), "a directory"),
                       (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return ""
