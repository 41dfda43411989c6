"""A bare protocol host for testing the simulator itself (and for poking at a device by hand).

It speaks docs/protocol.md with the project's codec over any byte pipe (a pyserial port, a
pyusb device) and does nothing clever: it numbers the commands it sends, acknowledges the
device's reliable frames unless told not to, and keeps every frame it decoded, so a test can
see exactly what a host sees on the wire. The real driver (drivers/) is what the controller
uses; this is deliberately independent of it.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from drivers.protocol import Received, Rejected, get_codec
from drivers.protocol import messages as m


class RawHost:
    """``read(timeout_s) -> bytes`` and ``write(bytes)`` reach the device."""

    def __init__(self, read: Callable[[float], bytes], write: Callable[[bytes], Any],
                 codec: str = "tablectl", auto_ack: bool = True) -> None:
        self._read = read
        self._write = write
        self.codec = get_codec(codec, receive_from="device")
        self.auto_ack = auto_ack
        self.seq = 0
        self.received: list[Received | Rejected] = []
        self._seen = 0

    @classmethod
    def over_serial(cls, port: Any, **kw: Any) -> "RawHost":
        """Over an open ``serial.Serial`` (its timeout is set per read)."""
        def read(timeout: float) -> bytes:
            port.timeout = timeout
            first = port.read(1)
            return first + port.read(port.in_waiting) if first else b""
        return cls(read, port.write, **kw)

    @classmethod
    def over_usb(cls, dev: Any, **kw: Any) -> "RawHost":
        """Over a pyusb device with the simulator's layout (OUT 0x01, IN 0x81)."""
        import usb.core

        def read(timeout: float) -> bytes:
            try:
                return bytes(dev.read(0x81, 1024, timeout=max(1, int(timeout * 1000))))
            except usb.core.USBTimeoutError:
                return b""
        return cls(read, lambda b: dev.write(0x01, b), **kw)

    # --- sending ----------------------------------------------------------------------

    def send(self, msg: m.Message, seq: int | None = None) -> int:
        """Send one message; a reliable one gets the next sequence number (or ``seq``)."""
        if msg.RELIABLE and self.codec.sequenced:
            if seq is None:
                self.seq = self.seq % 255 + 1
                seq = self.seq
        else:
            seq = 0
        self._write(self.codec.encode(msg, seq))
        return seq

    def send_raw(self, data: bytes) -> None:
        self._write(data)

    def hello(self, heartbeat_ms: int = 250, timeout: float = 3.0,
              resume: bool = False) -> m.HelloInfo:
        """The hello exchange; the answer (not a BOOT notice). With ``resume`` the host asks to
        resume the session (docs/protocol.md 3.2) and keeps its numbering if the answer says
        RESUMED; otherwise it numbers its commands from 1 again."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.send(m.Hello(m.PROTOCOL_VERSION, heartbeat_ms, resume))
            got = self.wait(lambda r: isinstance(r.message, m.HelloInfo) and not r.message.boot,
                            timeout=0.5, fail=False)
            if got is not None:
                if not got.message.resumed:
                    self.seq = 0
                return got.message
        raise AssertionError("no HelloInfo answered the Hello")

    def command(self, msg: m.Message, timeout: float = 3.0) -> int:
        """Send a command and return the ack's code (0 accepted, else a refusal)."""
        seq = self.send(msg)
        ack = self.wait(lambda r: isinstance(r.message, m.Ack) and r.message.seq == seq,
                        timeout=timeout)
        return ack.message.code

    # --- receiving --------------------------------------------------------------------

    def pump(self, timeout: float = 0.05) -> list[Received | Rejected]:
        """Read what is there (waiting up to ``timeout`` for the first byte); decode it."""
        data = self._read(timeout)
        items = self.codec.feed(data) if data else []
        for it in items:
            if (self.auto_ack and isinstance(it, Received) and it.seq
                    and it.message.RELIABLE):
                self._write(self.codec.encode(m.Ack(it.seq, 0)))
        self.received.extend(items)
        return items

    def wait(self, pred: Callable[[Received], bool], timeout: float = 3.0,
             fail: bool = True) -> Received | None:
        """The first frame received from now on (not seen by an earlier wait) matching
        ``pred``."""
        deadline = time.monotonic() + timeout
        while True:
            while self._seen < len(self.received):
                it = self.received[self._seen]
                self._seen += 1
                if isinstance(it, Received) and pred(it):
                    return it
            left = deadline - time.monotonic()
            if left <= 0:
                if fail:
                    raise AssertionError(f"nothing matching within {timeout} s; got "
                                         f"{[_name(r) for r in self.received[-12:]]}")
                return None
            self.pump(min(left, 0.05))

    def wait_for(self, cls: type[m.Message], timeout: float = 3.0) -> m.Message:
        return self.wait(lambda r: isinstance(r.message, cls), timeout).message  # type: ignore

    def collect(self, seconds: float) -> list[Received | Rejected]:
        """Everything that arrives during ``seconds``."""
        start = len(self.received)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.pump(min(0.05, max(0.0, deadline - time.monotonic())))
        self._seen = len(self.received)
        return self.received[start:]

    def events(self, items: list[Received | Rejected] | None = None) -> list[Received]:
        """The reliable device frames among ``items`` (default: everything so far)."""
        items = self.received if items is None else items
        return [r for r in items if isinstance(r, Received) and r.seq]


def _name(r: Received | Rejected) -> str:
    if isinstance(r, Rejected):
        return f"rejected:{r.reason}"
    return f"{type(r.message).__name__}#{r.seq}"
