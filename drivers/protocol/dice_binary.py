"""A second codec: the short fixed-length binary frames many dice agitators speak.

It exists to show that a vendor protocol plugs in as one more codec: the link layer and the
dice driver run unchanged over it. Every frame is 8 bytes::

    STX 0x02 | CMD (one ASCII letter) | D0 D1 D2 D3 | CHK | ETX 0x03

``CHK`` is the two's-complement checksum: (CMD + D0 + D1 + D2 + D3 + CHK) % 256 == 0. There
are no sequence numbers: the device answers each command with ``k`` (D0 = refusal code, 0
accepted) and its events are not acknowledged, so the link layer keeps one command
outstanding and relies on heartbeats. Host commands are upper case, device messages lower
case:

=====  ==========================  ======================================================
CMD    message                     data
=====  ==========================  ======================================================
``I``  Hello                       D0 D1 heartbeat interval ms (big-endian)
``H``  Heartbeat (host)            D0-D3 uptime ms
``S``  Shake
``Q``  StatusRequest
``i``  HelloInfo (``b``: at boot)  D0 vendor code, D1 model, D2 firmware major << 4 | minor,
                                   D3 number of dice
``h``  Heartbeat (device)          D0-D3 uptime ms
``k``  Ack                         D0 refusal code (0 accepted)
``s``  ShakeStarted
``r``  DiceResult                  D0-D3 faces 1-6 in die order; 0 where there is no die
``t``  DieNotFlat                  D0 die index
``o``  DieOutOfCup                 D0 die index
``m``  Malfunction                 D0 D1 code
``l``  Door (the lid)              D0 1 open, 0 closed
``q``  StatusReport                D0 state (0 idle, 1 shaking, 2 lid open, 3 fault),
                                   D1 D2 shakes done
=====  ==========================  ======================================================
"""
from __future__ import annotations

import struct

from . import messages as m
from .codec import Codec, CodecError, Received, Rejected

STX, ETX, FRAME_SIZE = 0x02, 0x03, 8
STATES = ("idle", "shaking", "lid-open", "fault")
# The message each command letter stands for, to name a frame whose content cannot be read.
LETTERS: dict[str, type[m.Message]] = {
    "I": m.Hello, "H": m.Heartbeat, "S": m.Shake, "Q": m.StatusRequest, "i": m.HelloInfo,
    "b": m.HelloInfo, "h": m.Heartbeat, "k": m.Ack, "s": m.ShakeStarted, "r": m.DiceResult,
    "t": m.DieNotFlat, "o": m.DieOutOfCup, "m": m.Malfunction, "l": m.Door, "q": m.StatusReport}


def checksum(body: bytes) -> int:
    """The byte that makes the sum of CMD, data and checksum 0 modulo 256."""
    return (-sum(body)) & 0xFF


def _frame(cmd: str, data: bytes = b"") -> bytes:
    body = cmd.encode() + data.ljust(4, b"\0")
    return bytes((STX,)) + body + bytes((checksum(body), ETX))


class DiceBinaryCodec(Codec):
    """Fixed 8-byte frames with a checksum; see the module docstring."""

    name = "dice-binary"
    sequenced = False
    classes = ("dice",)

    def __init__(self, receive_from: str | None = None) -> None:
        super().__init__(receive_from)
        self._buf = bytearray()
        self._garbage = 0
        self._resyncing = False     # bytes are being dropped since the last good frame

    def encode(self, message: m.Message, seq: int = 0) -> bytes:
        if isinstance(message, m.Hello):
            return _frame("I", struct.pack(">H", message.heartbeat_ms))
        if isinstance(message, m.Heartbeat):
            return _frame("H" if self.receive_from == "device" else "h",
                          struct.pack(">I", message.uptime_ms))
        if isinstance(message, m.Shake):
            return _frame("S")
        if isinstance(message, m.StatusRequest):
            return _frame("Q")
        if isinstance(message, m.HelloInfo):
            ver = message.firmware_version.split(".")
            try:
                fw = (int(ver[0]) << 4 | int(ver[1])) if len(ver) >= 2 else int(ver[0]) << 4
            except ValueError:
                fw = 0
            vendor = message.vendor.removeprefix("vendor-")
            model = message.model.removeprefix("model-")
            return _frame("b" if message.boot else "i", bytes((
                int(vendor) & 0xFF if vendor.isdigit() else 0,
                int(model) & 0xFF if model.isdigit() else 0, fw & 0xFF, message.units)))
        if isinstance(message, m.Ack):
            return _frame("k", bytes((min(message.code, 255),)))
        if isinstance(message, m.ShakeStarted):
            return _frame("s")
        if isinstance(message, m.DiceResult):
            if len(message.dice) > 4:
                raise CodecError("dice-binary carries at most 4 dice")
            return _frame("r", bytes(message.dice))
        if isinstance(message, m.DieNotFlat):
            return _frame("t", bytes((message.die,)))
        if isinstance(message, m.DieOutOfCup):
            return _frame("o", bytes((message.die,)))
        if isinstance(message, m.Malfunction):
            return _frame("m", struct.pack(">H", message.code))
        if isinstance(message, m.Door):
            return _frame("l", bytes((1 if message.open else 0,)))
        if isinstance(message, m.StatusReport):
            state = STATES.index(message.state) if message.state in STATES else 3
            shakes = dict(message.detail).get("shakes", 0) & 0xFFFF
            return _frame("q", bytes((state,)) + struct.pack(">H", shakes))
        raise CodecError(f"dice-binary has no frame for {type(message).__name__}")

    def feed(self, data: bytes) -> list[Received | Rejected]:
        """Frames in ``data`` (with what an earlier call left). Bytes that are no frame (a bad
        checksum, a frame cut short, noise) are dropped, and reported once as a ``damaged``
        :class:`Rejected` until the next good frame: nothing here is acknowledged, so the
        sender never sends the frame again and the receiver must hear that it is lost."""
        buf = self._buf
        buf += data
        out: list[Received | Rejected] = []
        while True:
            start = buf.find(STX)
            if start < 0:
                self._drop(len(buf), out)
                buf.clear()
                return out
            if start:
                self._drop(start, out)
                del buf[:start]
            if len(buf) < FRAME_SIZE:
                return out
            body, chk, etx = bytes(buf[1:6]), buf[6], buf[7]
            if etx != ETX or checksum(body) != chk:
                self._drop(1, out)
                del buf[:1]
                continue
            del buf[:FRAME_SIZE]
            self._resyncing = False
            cls = LETTERS.get(chr(body[0]))
            try:
                msg = self._decode(chr(body[0]), body[1:])
            except (m.PayloadError, CodecError) as exc:
                self.rejected += 1
                out.append(Rejected("bad-payload", None, cls.TYPE if cls else None, str(exc)))
                continue
            if not self._accepts(type(msg)):
                self.rejected += 1
                out.append(Rejected("wrong-sender", None, type(msg).TYPE,
                                    f"{type(msg).__name__} comes from the {type(msg).SENDER}"))
                continue
            out.append(Received(0, msg))

    def _drop(self, n: int, out: list[Received | Rejected]) -> None:
        if not n:
            return
        self._garbage += n
        if not self._resyncing:
            self._resyncing = True
            self.rejected += 1
            out.append(Rejected("damaged", None, None,
                                "bytes that are no frame (a bad checksum, a frame cut short "
                                "or noise on the line)"))

    @staticmethod
    def _decode(cmd: str, d: bytes) -> m.Message:
        if cmd == "I":
            return m.Hello(heartbeat_ms=struct.unpack(">H", d[:2])[0])
        if cmd in "Hh":
            return m.Heartbeat(struct.unpack(">I", d)[0])
        if cmd == "S":
            return m.Shake()
        if cmd == "Q":
            return m.StatusRequest()
        if cmd in "ib":
            return m.HelloInfo(
                protocol=m.PROTOCOL_VERSION, device_class=m.DEVICE_CLASS_CODES["dice"],
                flags=m.FLAG_BOOT if cmd == "b" else 0, units=d[3], vendor=f"vendor-{d[0]}",
                model=f"model-{d[1]}", serial="", firmware_version=f"{d[2] >> 4}.{d[2] & 15}",
                firmware_hash=b"")
        if cmd == "k":
            return m.Ack(0, d[0])
        if cmd == "s":
            return m.ShakeStarted()
        if cmd == "r":
            n = d.index(0) if 0 in d else 4
            if any(d[n:]):
                raise CodecError(f"dice result {list(d)} has a gap")
            return m.DiceResult(tuple(d[:n]))
        if cmd == "t":
            return m.DieNotFlat(d[0])
        if cmd == "o":
            return m.DieOutOfCup(d[0])
        if cmd == "m":
            return m.Malfunction(struct.unpack(">H", d[:2])[0])
        if cmd == "l":
            if d[0] > 1:
                raise CodecError(f"lid state {d[0]} is neither 0 nor 1")
            return m.Door(d[0] == 1)
        if cmd == "q":
            if d[0] >= len(STATES):
                raise CodecError(f"unknown state code {d[0]}")
            return m.StatusReport(STATES[d[0]], (("shakes", struct.unpack(">H", d[1:3])[0]),))
        raise CodecError(f"unknown dice-binary command {cmd!r}")

    def reset(self) -> None:
        self._garbage += len(self._buf)
        self._buf.clear()
        self._resyncing = False

    @property
    def garbage_bytes(self) -> int:
        return self._garbage
