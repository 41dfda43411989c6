"""A simulated device behind a pseudo-terminal: the host opens it exactly like /dev/ttyUSB0.

The simulator holds the master side; the host opens the slave (``/dev/pts/N``) with pyserial,
so the real serial code path runs. The simulator also keeps the slave open itself, in raw mode:
otherwise the kernel reports EIO on the master whenever no host has the port open, and echoes
the device's bytes back to it.

**Stable name.** A USB serial adapter that is unplugged and plugged back in may come back as
another ``/dev/ttyUSBn``; udev's ``/dev/serial/by-id/…`` symlink is what keeps its name. A
pseudo-terminal that is closed and opened again gets whatever ``/dev/pts/N`` the kernel hands
out, so the simulator mirrors udev: ``link`` is a symlink it points at the current
``/dev/pts/N``, removes on a disconnect (the port is gone) and re-points on a reconnect. Give
the host the link as its port and it finds the device again by the same name.
"""
from __future__ import annotations

import asyncio
import errno
import os
import tty
from typing import Callable


class PtyPort:
    """One pseudo-terminal port; ``on_data(bytes)`` is called in the loop for host bytes."""

    kind = "pty"

    def __init__(self, loop: asyncio.AbstractEventLoop, on_data: Callable[[bytes], None],
                 link: str | None = None) -> None:
        self.loop = loop
        self.on_data = on_data
        self.link = link
        self.tty: str | None = None
        self.master: int | None = None
        self.slave: int | None = None
        self.dropped_bytes = 0
        self._open()

    @property
    def port(self) -> str:
        """What the host should open: the stable link if there is one, else the tty."""
        return self.link or self.tty or ""

    @property
    def connected(self) -> bool:
        return self.master is not None

    def _open(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        name = os.ttyname(slave)
        if self.link:
            # Atomic re-point: a host never sees the link missing while it is being replaced.
            tmp = f"{self.link}.new"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(name, tmp)
            os.replace(tmp, self.link)
        # Connected only once the stable name is there: a host told "connected" can open it.
        self.tty = name
        self.master, self.slave = master, slave
        self.loop.add_reader(master, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self.master, 4096)        # type: ignore[arg-type]
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno == errno.EIO:
                return
            raise
        if data:
            self.on_data(data)

    def write(self, data: bytes) -> None:
        if self.master is None:
            self.dropped_bytes += len(data)          # unplugged: the bytes go nowhere
            return
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.master, view)
            except (BlockingIOError, OSError):
                # Nobody is reading and the terminal's buffer is full: a UART drops them too.
                self.dropped_bytes += len(view)
                return
            view = view[n:]

    def disconnect(self) -> None:
        """The port vanishes (as when unplugged): a host reading it gets an error."""
        if self.master is None:
            return
        self.loop.remove_reader(self.master)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)                           # type: ignore[arg-type]
            except OSError:
                pass
        self.master = self.slave = None
        self.tty = None
        if self.link and os.path.lexists(self.link):
            os.unlink(self.link)

    def reconnect(self) -> None:
        if self.master is None:
            self._open()

    def on_reboot(self) -> None:
        pass                    # a serial adapter stays on the bus while its device reboots

    def close(self) -> None:
        self.disconnect()

    def describe(self) -> str:
        return self.tty or "(disconnected)"
