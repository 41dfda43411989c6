"""Serial transport through pyserial: a port path or any pyserial URL.

``/dev/ttyUSB0``, ``/dev/serial/by-id/usb-Acme_Shuffler_00421-if00-port0`` (the stable name a
device is found again by after it was unplugged), a pseudo-terminal such as ``/dev/pts/7``,
``socket://host:port`` or ``rfc2217://host:port``: ``serial.serial_for_url`` opens them all.
"""
from __future__ import annotations

import fcntl
import os

import serial

from controller.shown import shown

from . import causes
from .base import Transport, TransportClosed, TransportError
from .portlock import in_use_text, is_lock_refused

READ_TIMEOUT_S = 0.05   # a URL's reader thread wakes this often to notice close()
WRITE_TIMEOUT_S = 2.0   # a local port's write to a wedged adapter gives up after this


class SerialTransport(Transport):
    def __init__(self, port: str, baudrate: int = 115200) -> None:
        super().__init__()
        self.name = port
        self.baudrate = baudrate
        self._serial: serial.SerialBase | None = None
        self._fd: int | None = None     # a local port's non-blocking descriptor (write_now)
        self._local = "://" not in port
        # A local port's lock (flock) is its open file's, which the kernel releases only when
        # the last call on it returns: a write still waiting in its thread would keep the port
        # locked past close(), and the link's reopening would find it "in use". close() wakes
        # that write and releases the port after it (at most its write timeout).
        self.close_wait_s = WRITE_TIMEOUT_S if self._local else 0.0

    def _open_blocking(self) -> None:
        kw: dict = {"baudrate": self.baudrate, "timeout": READ_TIMEOUT_S}
        if self._local:
            # A local port: exclusive, and a write to a wedged adapter gives up. (URL handlers
            # differ: rfc2217 refuses write_timeout, socket ignores exclusive.)
            kw.update(exclusive=True, write_timeout=WRITE_TIMEOUT_S)
        try:
            self._serial = serial.serial_for_url(self.name, **kw)
        except (serial.SerialException, ValueError, OSError, NotImplementedError) as exc:
            if self._local and is_lock_refused(exc):
                # Not absent: open and locked by another program (or still by this one).
                raise TransportError(in_use_text(self.name), causes.BUSY) from None
            raise TransportError(f"cannot open serial port {shown(self.name, 200)}: {exc}; check "
                                 "that the device is plugged in and the port name in the "
                                 "table configuration", causes.of_errno(exc)) from None
        # Only a local port: a URL handler may transform what it sends (RFC 2217 escapes
        # its 0xFF bytes), which a write on its descriptor would skip.
        self._fd = _nonblocking_fd(self._serial) if "://" not in self.name else None

    def _read_blocking(self) -> bytes:
        ser = self._serial
        if ser is None:
            raise TransportClosed("closed")
        try:
            data = ser.read(max(1, ser.in_waiting))
            if data:
                # read(1) wakes on a frame's first byte: take the rest that came with it in
                # this call, so a frame crosses to the event loop in one hop, not two.
                more = ser.in_waiting
                if more:
                    data += ser.read(more)
            return data
        except (serial.SerialException, OSError) as exc:
            raise TransportClosed(f"{self.name}: {exc}") from None

    def _write_blocking(self, data: bytes) -> None:
        ser = self._serial
        if ser is None:
            raise TransportClosed("closed")
        try:
            written = ser.write(data)
        except (serial.SerialException, OSError) as exc:
            raise TransportClosed(f"{self.name}: {exc}") from None
        if written is not None and written < len(data):
            # Woken by close() (_wake_write) before all of it went out.
            raise TransportClosed(f"{self.name}: closed during the write")

    def _loop_fd(self) -> int | None:
        return self._fd

    def _read_ready(self) -> bytes:
        fd = self._fd
        if fd is None:
            raise TransportClosed("closed")
        try:
            data = os.read(fd, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:      # EIO: the adapter was unplugged, the pty's peer closed
            raise TransportClosed(f"{self.name}: {exc.strerror or exc}") from None
        if not data:                # readable with nothing to read: hung up (as pyserial)
            raise TransportClosed(f"{self.name}: the device disconnected or hung up")
        return data

    def write_now(self, data: bytes) -> int:
        # An acknowledgement is a dozen bytes and the port's kernel buffer holds thousands:
        # written straight from the event loop it costs one system call, where a thread
        # hop would cost a wake-up and the interpreter's lock. When the buffer is full (a
        # stalled adapter) nothing is written here and the thread's blocking write, with its
        # write timeout, takes the bytes; any other error is left for that write to report.
        fd = self._fd
        if fd is None:
            return 0
        try:
            return os.write(fd, data)
        except OSError:
            return 0

    def _forget_fd(self) -> None:
        self._fd = None

    def _wake_write(self) -> None:
        ser = self._serial
        if ser is not None and self._local:
            try:
                ser.cancel_write()      # ends pyserial's wait for room in the port
            except Exception:  # noqa: BLE001 - then close waits for the write's timeout
                pass

    def _close_blocking(self) -> None:
        ser, self._serial = self._serial, None
        if ser is not None:
            try:
                ser.close()
            except Exception:  # noqa: BLE001 - closing a vanished port may fail; it is gone
                pass


def _nonblocking_fd(ser: serial.SerialBase) -> int | None:
    """The port's descriptor when writing to it can never block (pyserial opens a local
    port with O_NONBLOCK), else None."""
    try:
        fd = ser.fileno()
        return fd if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK else None
    except (AttributeError, OSError, ValueError, serial.SerialException):
        return None
