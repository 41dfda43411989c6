"""Serial transport through pyserial: a port path or any pyserial URL.

``/dev/ttyUSB0``, ``/dev/serial/by-id/usb-Acme_Shuffler_00421-if00-port0`` (the stable name a
device is found again by after it was unplugged), a pseudo-terminal such as ``/dev/pts/7``,
``socket://host:port`` or ``rfc2217://host:port``: ``serial.serial_for_url`` opens them all.
"""
from __future__ import annotations

import serial

from .base import Transport, TransportClosed, TransportError

READ_TIMEOUT_S = 0.05   # the reader thread wakes this often to notice close()


class SerialTransport(Transport):
    def __init__(self, port: str, baudrate: int = 115200) -> None:
        super().__init__()
        self.name = port
        self.baudrate = baudrate
        self._serial: serial.SerialBase | None = None

    def _open_blocking(self) -> None:
        kw: dict = {"baudrate": self.baudrate, "timeout": READ_TIMEOUT_S}
        if "://" not in self.name:
            # A local port: exclusive, and a write to a wedged adapter gives up. (URL handlers
            # differ: rfc2217 refuses write_timeout, socket ignores exclusive.)
            kw.update(exclusive=True, write_timeout=2.0)
        try:
            self._serial = serial.serial_for_url(self.name, **kw)
        except (serial.SerialException, ValueError, OSError, NotImplementedError) as exc:
            raise TransportError(f"cannot open serial port {self.name!r}: {exc}; check that the "
                                 "device is plugged in and the port name in the table "
                                 "configuration") from None

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
            ser.write(data)
        except (serial.SerialException, OSError) as exc:
            raise TransportClosed(f"{self.name}: {exc}") from None

    def _close_blocking(self) -> None:
        ser, self._serial = self._serial, None
        if ser is not None:
            try:
                ser.close()
            except Exception:  # noqa: BLE001 - closing a vanished port may fail; it is gone
                pass
