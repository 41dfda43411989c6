"""Who holds a local serial port's exclusive lock, for the message of a port found in use.

A local port is opened with pyserial's ``exclusive=True`` (``flock(LOCK_EX | LOCK_NB)``). The
kernel lists every flock in ``/proc/locks`` by the locked file's device and inode, with the
process that took it: that names the program that has the port, where ``fuser``/``lsof`` may
not be installed (or, under the service's sandbox, may see nothing).
"""
from __future__ import annotations

import errno
import os
import re
import shlex

from controller.shown import shown


def is_lock_refused(exc: BaseException) -> bool:
    """Whether ``exc`` (pyserial's, at open) is the exclusive lock refused: the port is
    open and locked by another open of it."""
    return (getattr(exc, "errno", None) in (errno.EAGAIN, errno.EWOULDBLOCK)
            and "lock" in str(exc))


def lock_holders(path: str, locks: str = "/proc/locks") -> list[int]:
    """The process ids holding a flock on the file ``path`` names (symlinks followed); empty
    when none is listed or the list cannot be read."""
    try:
        st = os.stat(path)
        with open(locks, encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    # A line: "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5 0 EOF" (major:minor in hex, inode).
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == want:
            try:
                pids.append(int(parts[4]))
            except ValueError:
                continue
    return sorted(set(pids))


def _process(pid: int) -> str:
    if pid == os.getpid():
        return f"process {pid}, this controller itself"
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
            return f"process {pid} ({shown(f.read().strip(), 40)})"
    except OSError:
        return f"process {pid}"


def in_use_text(name: str) -> str:
    """The problem of a port whose exclusive lock is refused, naming who holds it and the way
    out."""
    pids = lock_holders(name)
    port = shown(name, 200)
    if pids and set(pids) == {os.getpid()}:
        return (f"serial port {port} is still locked by this controller's own earlier opening "
                "of it (a call on it had not returned when it was closed); it is opened again "
                "with the back-off")
    who = ("held by " + ", ".join(_process(p) for p in pids)) if pids else (
        "the process holding it is not listed")
    q = shlex.quote(name)       # a stable name may hold a space or a shell's character
    return (f"serial port {port} is in use: another program has it open and locked ({who}); "
            f"find it with `fuser {q}` or `lsof {q}` (where neither is installed, "
            f"`{_proc_fd_command(name)}` lists /proc/PID/fd/N for each process that has it "
            "open) and stop it (a second controller, a terminal program, a modem manager). "
            "The link opens the port by itself once it is free")


def _proc_fd_command(name: str) -> str:
    """A command that needs no fuser or lsof: the open files under /proc whose link is the
    port (the real device a stable name points to, as /proc shows it)."""
    real = re.sub(r"([][*?\\])", r"\\\1", os.path.realpath(name))     # literal for -lname
    return f"find /proc/[0-9]*/fd -lname {shlex.quote(real)} 2>/dev/null"
