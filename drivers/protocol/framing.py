"""Framing of the tablectl wire protocol: length, sequence number, type, two CRCs.

One frame on the wire (docs/protocol.md, "Framing")::

    offset  size  field
    0       1     SOF      0xA5
    1       2     LEN      payload length, big-endian, 0..MAX_PAYLOAD
    3       1     SEQ      sequence number (0 = unsequenced, 1..255 = reliable)
    4       1     TYPE     message type
    5       1     HCRC     CRC-8 (poly 0x07, init 0x00) over LEN, SEQ, TYPE
    6       LEN   PAYLOAD
    6+LEN   2     CRC      CRC-16/CCITT-FALSE, big-endian, over LEN .. end of PAYLOAD

Why a header check: resynchronisation is length-based (no byte stuffing), and a garbage byte
that happens to be 0xA5 followed by a large bogus LEN would otherwise make the receiver wait
for up to MAX_PAYLOAD bytes before it could reject it. The header CRC rejects such a false
start at once, and it lets the receiver name the sequence number of a frame whose payload was
corrupted so it can ask for it again (NAK) instead of waiting for the sender's timeout.

:class:`Deframer` is a streaming, I/O-free parser: feed it any bytes, in any chunks, and it
yields :class:`Frame` (header and payload CRCs good) or :class:`BadFrame` (header good,
payload CRC wrong), tells a checked header naming a length past the maximum
(:class:`TooLong`), and counts the garbage it skipped. It never raises on input.
"""
from __future__ import annotations

import binascii
from dataclasses import dataclass

SOF = 0xA5
HEADER_SIZE = 6          # SOF, LEN(2), SEQ, TYPE, HCRC
TRAILER_SIZE = 2         # CRC-16
MAX_PAYLOAD = 1024
MAX_FRAME = HEADER_SIZE + MAX_PAYLOAD + TRAILER_SIZE


def _crc8_table() -> bytes:
    table = bytearray()
    for i in range(256):
        c = i
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
        table.append(c)
    return bytes(table)


_CRC8 = _crc8_table()


def crc8(data: bytes, crc: int = 0x00) -> int:
    """CRC-8, polynomial 0x07, init 0x00, no reflection, no final xor (CRC-8/SMBUS).
    Check value: ``crc8(b"123456789") == 0xF4``. A byte at a time from a table (every
    frame's header goes through it)."""
    for b in data:
        crc = _CRC8[crc ^ b]
    return crc


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE: polynomial 0x1021, init 0xFFFF, no reflection, no final xor.
    Check value: ``crc16(b"123456789") == 0x29B1``. The standard library's ``crc_hqx`` is
    this CRC (the XMODEM polynomial, unreflected) computed in C, started at ``crc``."""
    return binascii.crc_hqx(data, crc)


@dataclass(frozen=True, slots=True)
class Frame:
    """A frame whose header and payload CRCs both check."""

    seq: int
    type: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class BadFrame:
    """A frame whose header checked but whose payload CRC did not: the receiver knows which
    sequence number to ask for again. ``size`` is the number of bytes it occupied."""

    seq: int
    type: int
    size: int


@dataclass(frozen=True, slots=True)
class TooLong:
    """A header whose CRC checks but whose LEN passes MAX_PAYLOAD: a false start (skipped
    like one), or a sender's frame past the maximum, which it sends again and again under the
    same ``seq`` and ``type``: the receiver can tell the two apart only by the repeats."""

    seq: int
    type: int
    length: int


class FramingError(ValueError):
    """A frame cannot be built (payload too long, field out of range)."""


def encode_frame(seq: int, msg_type: int, payload: bytes = b"") -> bytes:
    """Build one frame. Raises FramingError for values that do not fit the header."""
    if not 0 <= seq <= 0xFF:
        raise FramingError(f"sequence number {seq} is outside 0-255")
    if not 0 <= msg_type <= 0xFF:
        raise FramingError(f"message type {msg_type} is outside 0-255")
    if len(payload) > MAX_PAYLOAD:
        raise FramingError(f"payload of {len(payload)} bytes exceeds the {MAX_PAYLOAD}-byte "
                           "maximum; split the message")
    head = len(payload).to_bytes(2, "big") + bytes((seq, msg_type))
    head += bytes((crc8(head),))
    body = head + bytes(payload)
    return bytes((SOF,)) + body + crc16(body).to_bytes(2, "big")


class Deframer:
    """Streaming frame parser; see the module docstring.

    Counters: ``garbage_bytes`` (bytes skipped while looking for a frame start; the bytes of
    a bad frame are scanned again after its start byte, so they count here too),
    ``bad_frames`` (frames with a good header and a bad payload CRC), ``frames`` (good).
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self.garbage_bytes = 0
        self.bad_frames = 0
        self.frames = 0

    def reset(self) -> None:
        """Forget any partial frame (after the port was reopened)."""
        self.garbage_bytes += len(self._buf)
        self._buf.clear()

    @property
    def pending(self) -> int:
        """Bytes held while waiting for the rest of a frame."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[Frame | BadFrame | TooLong]:
        """Add bytes; return every complete frame (good or bad) they finish, in order, and
        every checked header naming a frame past the maximum length."""
        buf = self._buf
        buf += data
        out: list[Frame | BadFrame | TooLong] = []
        while True:
            start = buf.find(SOF)
            if start < 0:
                self.garbage_bytes += len(buf)
                buf.clear()
                return out
            if start:
                self.garbage_bytes += start
                del buf[:start]
            if len(buf) < HEADER_SIZE:
                return out
            length = int.from_bytes(buf[1:3], "big")
            if crc8(buf[1:5]) != buf[5] or length > MAX_PAYLOAD:
                # A false start: skip this SOF and look for the next one. A checked header
                # is told, too: repeated, it is a frame past the maximum (TooLong).
                if length > MAX_PAYLOAD and crc8(buf[1:5]) == buf[5]:
                    out.append(TooLong(buf[3], buf[4], length))
                self.garbage_bytes += 1
                del buf[:1]
                continue
            total = HEADER_SIZE + length + TRAILER_SIZE
            if len(buf) < total:
                return out
            seq, msg_type = buf[3], buf[4]
            if crc16(bytes(buf[1:total - 2])) == int.from_bytes(buf[total - 2:total], "big"):
                out.append(Frame(seq, msg_type, bytes(buf[HEADER_SIZE:total - 2])))
                self.frames += 1
                del buf[:total]
            else:
                # The header looked right but the body is damaged. Report it so the link can
                # NAK the sequence number, and rescan after this SOF: the damage may have been
                # a truncated frame followed by a good one.
                out.append(BadFrame(seq, msg_type, total))
                self.bad_frames += 1
                del buf[:1]
