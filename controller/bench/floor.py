"""The daemon's path with no controller in it: the floor of ``daemon.card`` on this machine.

A Python process as small as a daemon can be opens the same kind of pseudo-terminal, and
for each frame makes one durable write (``os.pwrite`` + ``os.fdatasync`` of the frame into a
preallocated file, cheaper than any journal) and writes one line to a listener process of
its own, which stamps it as the bench's listener does. Timed from the frame's write on the
master, as ``daemon.card``. What the controller adds on top of this is its own work: decoding,
the rules, the journal's transaction, the event's JSON.
"""
from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
import time
import tty
from pathlib import Path
from typing import Any

from . import OPTIONS

# The stream's reader: a process of its own that does nothing but read the daemon's event
# stream and stamp each event of the kinds it is given (argv[2], comma-separated; "card" by
# default) as it arrives, so the bench's own threads (the simulator, the croupier) do not
# delay the stamp. One line out per such event: its kind and its monotonic time. With a
# priority (argv[3], 1-99) it asks for the real-time policy first (see Listener); its first
# line says what it got: "subscribed fifo", "subscribed other", or "subscribed other: why".
LISTENER = r"""
import os, socket, sys, time
priority = int(sys.argv[3]) if len(sys.argv) > 3 else 0
policy = "other"
if priority:
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        policy = "fifo"
    except OSError as exc:
        policy = "other: " + (exc.strerror or str(exc))
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"subscribe": true}\n')
kinds = tuple(b'{"kind": "%s"' % k.encode() for k in
              (sys.argv[2] if len(sys.argv) > 2 else "card").split(","))
out = sys.stdout
lines = s.makefile("rb")
lines.readline()                 # the daemon's {"ok": true, "subscribed": true}
out.write("subscribed " + policy + "\n")
out.flush()
for line in lines:
    t = time.monotonic()
    if line.startswith(kinds):
        out.write(line[10:line.index(b'"', 10)].decode() + " " + repr(t) + "\n")
        out.flush()
"""

# The daemon with nothing in it: the frame, one durable write, one line to its listener.
NULL_DAEMON = r"""
import os, socket, sys
slave = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
fd = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT, 0o600)
os.write(fd, b"\0" * (1 << 20))
os.fsync(fd)
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[3])
server.listen(1)
print("ready", flush=True)
client, _ = server.accept()
client.recv(64)                             # the listener's subscription
client.sendall(b'{"ok": true, "subscribed": true}\n')
at = 0
while True:
    frame = os.read(slave, 4096)
    if not frame:
        break
    os.pwrite(fd, frame, at)
    os.fdatasync(fd)
    at = (at + 4096) % (1 << 20)
    client.sendall(b'{"kind": "card", "count": 1}\n')
"""


class Listener:
    """The LISTENER process subscribed to a daemon's event stream at ``control_path``,
    stamping the events of ``kinds``.

    It stands where a console or a pit display reads the stream, which at a table is not
    sharing its CPUs with the devices. Here the simulated devices run on the same two CPUs
    and wake at the very moment an event is published (its acknowledgement, the next
    command), and a listener that waits behind them stamps the simulator's turn, not the
    event's arrival. So it asks for the real-time policy at ``priority``
    (``OPTIONS.listener_priority`` by default; 0 asks nothing). :attr:`policy` says what it
    got: "fifo", "other", or "other: " and the reason it was refused;
    ``OPTIONS.listener_policies`` collects it for the run's document."""

    def __init__(self, control_path: Any, kinds: str = "card",
                 priority: int | None = None) -> None:
        if priority is None:
            priority = OPTIONS.listener_priority
        self.proc = subprocess.Popen([sys.executable, "-c", LISTENER, str(control_path), kinds,
                                      str(priority)], stdout=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline().split(maxsplit=1)
        if not first or first[0] != "subscribed":
            self.close()
            raise RuntimeError("the stream listener could not subscribe")
        self.policy = first[1].strip() if len(first) > 1 else "other"
        OPTIONS.listener_policies.add(self.policy)

    def next(self, kind: str, timeout: float = 10.0) -> float:
        """The stamp of the next event the listener saw, which must be of ``kind``."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"no {kind} event on the daemon's stream")
        got, stamp = self.proc.stdout.readline().split()
        if got != kind:
            raise RuntimeError(f"a {got} event came on the daemon's stream where a {kind} "
                               "event was due")
        return float(stamp)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def __enter__(self) -> "Listener":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def null_daemon(frame: bytes, n: int, pause_s: float = 0.001) -> list[float]:
    """``n`` latencies of ``frame`` through the null daemon to its listener."""
    with tempfile.TemporaryDirectory(prefix="tablectl-null-",
                                     dir=os.environ.get("TABLECTL_BENCH_DIR")) as tmp:
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        sock = str(Path(tmp) / "stream.sock")
        daemon = subprocess.Popen([sys.executable, "-c", NULL_DAEMON, os.ttyname(slave),
                                   str(Path(tmp) / "durable"), sock],
                                  stdout=subprocess.PIPE, text=True)
        try:
            if daemon.stdout.readline() != "ready\n":
                raise RuntimeError("the null daemon did not start")
            with Listener(sock) as listener:
                out = []
                for _ in range(n):
                    time.sleep(pause_s)
                    t0 = time.monotonic()
                    os.write(master, frame)
                    out.append(listener.next("card") - t0)
                return out
        finally:
            daemon.kill()
            daemon.wait()
            os.close(master)
            os.close(slave)
