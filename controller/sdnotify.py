"""A small sd_notify client: tell systemd the daemon is ready, alive, or stopping.

systemd (``Type=notify``) passes ``NOTIFY_SOCKET``, an AF_UNIX datagram socket path (or an
abstract name starting with ``@``). Each message is newline-separated ``KEY=VALUE`` lines in one
datagram. With ``WatchdogSec=`` it also passes ``WATCHDOG_USEC`` (and ``WATCHDOG_PID``, the pid
the watchdog is meant for); the daemon must send ``WATCHDOG=1`` more often than that — this
module recommends half the interval. Without ``NOTIFY_SOCKET`` (a terminal, a test, the demo)
every call is a no-op, so the daemon calls it unconditionally.

Typical use in the daemon::

    notifier = Notifier.from_env()
    notifier.extend_timeout(90, "starting: replay")   # before a long start phase
    notifier.ready("table macau-07: ready")
    notifier.reloading("re-reading table.toml")      # on SIGHUP; ready() again once done
    period = notifier.watchdog_period()      # None when there is no watchdog
    ... every `period` seconds in the main loop: notifier.watchdog()
    notifier.stopping("finishing the journal")
    await notifier.send_kept()       # last thing at the stop: what a full queue held back
"""
from __future__ import annotations

import asyncio
import os
import socket
import time
from collections import deque
from typing import Mapping


# How long a notification may wait for room in the service manager's queue. It is sent from
# the daemon's event loop, which must not be held (the links' timeouts run on it): a longer
# wait would cost devices their links where waiting gains nothing (see KEPT).
SEND_TIMEOUT_S = 0.1
# How long EXTEND_TIMEOUT_USEC may wait: it goes just before a long start phase (the journal's
# replay) that sends nothing until it ends, so a copy kept for the next notification would
# come too late; and it goes before the devices are opened, when nothing waits on the loop.
EXTEND_SEND_TIMEOUT_S = 2.0
# Notifications that change the unit's state, which systemd must not miss: READY=1 missed
# leaves the start "activating" until TimeoutStartSec kills a healthy daemon, an
# EXTEND_TIMEOUT_USEC missed has a long start killed alike, a RELOADING=1 or STOPPING=1 missed
# shows the wrong state. Given up (a full queue: a manager slow under load; or no socket for a
# moment: systemd re-executing itself), such a notification is kept and sent again, in order
# and ahead of anything else, with every later one (the main loop pings every half
# WatchdogSec, 5 s with the unit's 10 s, or every second without a watchdog: well inside
# TimeoutStartSec). WATCHDOG=1 and STATUS= are not kept: the next ping or status says as much.
KEPT = ("READY=1", "RELOADING=1", "STOPPING=1", "EXTEND_TIMEOUT_USEC=")
# At most this many kept (the oldest goes first): a manager that never reads again is gone.
KEPT_MAX = 16
# How long the stop waits, at most, for room for what is still kept (a STOPPING=1 given up):
# no later notification will carry it. Awaited, so the event loop goes on meanwhile; bounded,
# so a manager that never reads again does not hold the stop (its TimeoutStopSec is longer).
STOP_SEND_TIMEOUT_S = 2.0


class Notifier:
    """Sends notifications to the service manager; every method returns whether a datagram
    was sent now (False when there is no ``NOTIFY_SOCKET`` or sending failed; a state change
    given up is sent later, see :data:`KEPT`)."""

    def __init__(self, address: str | None, watchdog_usec: int | None = None) -> None:
        self.address = address or None
        self.watchdog_usec = watchdog_usec
        self._sock: socket.socket | None = None
        self._kept: deque[bytes] = deque(maxlen=KEPT_MAX)   # state changes not yet sent

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, pid: int | None = None) -> "Notifier":
        """Read ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and ``WATCHDOG_PID`` (the watchdog is ours
        only when WATCHDOG_PID is unset or is our pid)."""
        env = os.environ if env is None else env
        pid = os.getpid() if pid is None else pid
        usec: int | None = None
        try:
            value = int(env.get("WATCHDOG_USEC", ""))
            owner = env.get("WATCHDOG_PID", "")
            if value > 0 and (not owner or int(owner) == pid):
                usec = value
        except ValueError:
            usec = None
        return cls(env.get("NOTIFY_SOCKET"), usec)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def watchdog_period(self) -> float | None:
        """Seconds between WATCHDOG=1 pings: half the service's WatchdogSec, or None."""
        return self.watchdog_usec / 2e6 if self.watchdog_usec else None

    def notify(self, *lines: str, **fields: str | int) -> bool:
        """Send ``KEY=VALUE`` lines (as strings, or as keyword arguments) in one datagram.
        False when it was not sent now; a state change (:data:`KEPT`) given up is then sent
        again, ahead of it, with the next notification."""
        if self.address is None:
            return False
        parts = list(lines) + [f"{k}={v}" for k, v in fields.items()]
        message = "\n".join(p.replace("\n", " ") for p in parts).encode("utf-8")
        keep = any(p.startswith(KEPT) for p in parts)
        wait = (EXTEND_SEND_TIMEOUT_S if any(p.startswith("EXTEND_TIMEOUT_USEC=") for p in parts)
                else SEND_TIMEOUT_S)
        while self._kept:
            if not self._send(self._kept[0], wait):     # no room, or no one there: nor for this
                if keep:
                    self._kept.append(message)      # behind the ones still kept, in order
                return False
            self._kept.popleft()
        sent = self._send(message, wait)
        if keep and not sent:
            self._kept.append(message)
        return sent

    async def send_kept(self, timeout: float = STOP_SEND_TIMEOUT_S) -> bool:
        """Send the state changes given up and kept (:data:`KEPT`), in order, waiting up to
        ``timeout`` for room in the manager's queue without holding the event loop. For the
        stop, which no later notification follows to carry them. True when none is left."""
        if self.address is None or not self._kept:
            return not self._kept
        try:
            await asyncio.wait_for(self._send_kept(), timeout)
        except (OSError, asyncio.TimeoutError):
            pass        # the manager away or still full: given up, as any notification is
        return not self._kept

    async def _send_kept(self) -> None:
        loop = asyncio.get_running_loop()
        # Connected, the socket is woken when the manager's queue has room again (unconnected,
        # it would be woken at once, find no room, and spin until the timeout).
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.setblocking(False)
            await loop.sock_connect(sock, self._target())
            while self._kept:
                await loop.sock_sendall(sock, self._kept[0])
                self._kept.popleft()

    def _target(self) -> str:
        target = self.address
        assert target is not None
        if target.startswith("@"):  # abstract namespace: a leading NUL byte
            target = "\0" + target[1:]
        return target

    def _send(self, message: bytes, timeout: float = SEND_TIMEOUT_S) -> bool:
        """One datagram; False when the queue had no room in ``timeout`` or no one is there."""
        target = self._target()
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            # A datagram to a queue nobody empties blocks the sender: the daemon's event
            # loop, with a card on its way. Given up after a short wait instead.
            self._sock.settimeout(timeout)
            self._sock.sendto(message, target)
        except OSError:     # socket.timeout is one
            return False  # systemd away or the socket wrong: never fatal to the table
        return True

    def ready(self, status: str | None = None) -> bool:
        """The daemon is up: configuration loaded, journal open, recovery done."""
        return self.notify("READY=1", *([f"STATUS={status}"] if status else []))

    def watchdog(self) -> bool:
        """Still alive (send from the main loop, so a stuck loop stops the pings)."""
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """A one-line status shown by ``systemctl status``."""
        return self.notify(f"STATUS={text}")

    def reloading(self, status: str | None = None) -> bool:
        """Re-reading the configuration (SIGHUP, ``systemctl reload``): systemd shows the unit
        reloading until the next ``ready()``. ``MONOTONIC_USEC`` (CLOCK_MONOTONIC, as
        sd_notify(3) asks with RELOADING=1) tells this reload from an earlier one; a systemd
        older than 253 ignores it."""
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.notify("RELOADING=1", f"MONOTONIC_USEC={usec}",
                           *([f"STATUS={status}"] if status else []))

    def stopping(self, status: str | None = None) -> bool:
        """Shutting down (SIGTERM received); the journal is being finished."""
        return self.notify("STOPPING=1", *([f"STATUS={status}"] if status else []))

    def extend_timeout(self, seconds: float, status: str | None = None) -> bool:
        """Ask for more time for the current start or stop (e.g. a long recovery): systemd
        then waits ``seconds`` from now for the next message before it gives up, never less
        than the unit's own timeout. Only while the unit starts or stops (Type=notify), and
        only when nothing waits on the caller's event loop: it waits up to
        :data:`EXTEND_SEND_TIMEOUT_S` for room in the manager's queue."""
        return self.notify(f"EXTEND_TIMEOUT_USEC={int(seconds * 1e6)}",
                           *([f"STATUS={status}"] if status else []))

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
