"""Codecs: bytes in, typed messages out, and back. No I/O, no clock.

A codec turns the byte stream of one link into :class:`Received` items (a sequence number and
a typed :class:`~drivers.protocol.messages.Message`) or :class:`Rejected` items (a frame that
was damaged or not understood: counted, and answered with a NAK where the protocol has one),
and turns messages into bytes. The link layer (drivers/link.py) and the firmware simulator
both sit on this interface, so a vendor's protocol is one more :class:`Codec` subclass
registered in :data:`CODECS`; see drivers/protocol/dice_binary.py.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from . import messages as m
from .framing import MAX_PAYLOAD, BadFrame, Deframer, TooLong, encode_frame


@dataclass(frozen=True, slots=True)
class Received:
    """A good frame: ``seq`` 0 for unsequenced messages (ack, nak, hello, heartbeat)."""

    seq: int
    message: m.Message


@dataclass(frozen=True, slots=True)
class Rejected:
    """A frame that was dropped. ``reason``: ``crc``, ``unknown-type``, ``bad-payload``,
    ``wrong-sender``, ``too-long`` (a checked header naming a frame past the maximum: noise
    once, a sender's frame when it comes again) or (a codec with no acknowledgement)
    ``damaged``; ``type`` the message
    type code it carried, None when it cannot be told; ``nak`` the NAK reason to answer with
    (None: answer nothing)."""

    reason: str
    seq: int | None
    type: int | None
    detail: str
    nak: int | None = None


class Codec(ABC):
    """One wire protocol. ``receive_from`` (``"device"`` on the host, ``"host"`` in a
    device) makes the decoder reject messages the other side may not send.

    ``sequenced`` says whether frames carry sequence numbers and reliable frames are
    acknowledged; a codec without them still works with the link layer, which then keeps one
    outstanding command at a time, sends it once, and otherwise relies on heartbeats
    (docs/protocol.md, section 8).
    """

    name: ClassVar[str] = ""
    sequenced: ClassVar[bool] = True
    #: the device classes this protocol can speak for (empty: every class)
    classes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, receive_from: str | None = None) -> None:
        self.receive_from = receive_from
        self.rejected = 0

    @abstractmethod
    def encode(self, message: m.Message, seq: int = 0) -> bytes:
        """The bytes of one message; raise CodecError if this protocol cannot carry it."""

    @abstractmethod
    def feed(self, data: bytes) -> list[Received | Rejected]:
        """Consume bytes; return what they complete, in order. Never raises on input."""

    @abstractmethod
    def reset(self) -> None:
        """Forget partial input (after the port was reopened)."""

    @property
    @abstractmethod
    def garbage_bytes(self) -> int:
        """Bytes skipped because they were no part of any frame."""

    def _accepts(self, cls: type[m.Message]) -> bool:
        return self.receive_from is None or cls.SENDER in ("both", self.receive_from)


class CodecError(ValueError):
    """A message cannot be expressed in this codec."""


class TablectlCodec(Codec):
    """The open protocol of docs/protocol.md."""

    name = "tablectl"
    sequenced = True

    def __init__(self, receive_from: str | None = None) -> None:
        super().__init__(receive_from)
        self._deframer = Deframer()

    def encode(self, message: m.Message, seq: int = 0) -> bytes:
        if message.RELIABLE and not 1 <= seq <= 255:
            raise CodecError(f"{type(message).__name__} is reliable and needs a sequence "
                             f"number 1-255, got {seq}")
        if not message.RELIABLE and seq != 0:
            raise CodecError(f"{type(message).__name__} is unsequenced; its seq must be 0")
        return encode_frame(seq, message.TYPE, message.pack())

    def feed(self, data: bytes) -> list[Received | Rejected]:
        out: list[Received | Rejected] = []
        for fr in self._deframer.feed(data):
            if isinstance(fr, TooLong):
                # No NAK here: once, it is as likely noise that looks like a header. A host's
                # link refuses it when its sender keeps sending it (protocol.md 2).
                out.append(self._reject("too-long", fr.seq, fr.type,
                                        f"a header naming {fr.length} bytes of payload, past "
                                        f"the {MAX_PAYLOAD}-byte maximum", None))
                continue
            if isinstance(fr, BadFrame):
                out.append(self._reject("crc", fr.seq, fr.type, "payload CRC mismatch",
                                        m.NAK_CRC))
                continue
            cls = m.MESSAGE_TYPES.get(fr.type)
            if cls is None:
                out.append(self._reject("unknown-type", fr.seq, fr.type,
                                        f"unknown message type 0x{fr.type:02x}",
                                        m.NAK_UNKNOWN_TYPE))
                continue
            # A type that is never sent again is never NAKed: a number it carries by mistake
            # names no frame of its own, and a NAK would name the reliable frame of that
            # number, which its sender would then give up or send again.
            nak_type, nak_payload = ((m.NAK_UNKNOWN_TYPE, m.NAK_BAD_PAYLOAD) if cls.RELIABLE
                                     else (None, None))
            if not self._accepts(cls):
                out.append(self._reject("wrong-sender", fr.seq, fr.type,
                                        f"{cls.__name__} is sent by the {cls.SENDER}, not the "
                                        f"{self.receive_from}", nak_type))
                continue
            if (fr.seq == 0) == cls.RELIABLE:
                out.append(self._reject("bad-payload", fr.seq, fr.type,
                                        f"{cls.__name__} with sequence number {fr.seq}",
                                        nak_payload))
                continue
            try:
                msg = cls.unpack(fr.payload)
            except m.PayloadError as exc:
                out.append(self._reject("bad-payload", fr.seq, fr.type, str(exc),
                                        m.NAK_BAD_PAYLOAD))
                continue
            out.append(Received(fr.seq, msg))
        return out

    def _reject(self, reason: str, seq: int, typ: int, detail: str,
                nak: int | None) -> Rejected:
        self.rejected += 1
        # Only a reliable frame is answered with a NAK: unsequenced ones are not retried.
        return Rejected(reason, seq, typ, detail, nak if seq else None)

    def reset(self) -> None:
        self._deframer.reset()

    @property
    def garbage_bytes(self) -> int:
        return self._deframer.garbage_bytes


def _registry() -> dict[str, type[Codec]]:
    from .dice_binary import DiceBinaryCodec
    return {TablectlCodec.name: TablectlCodec, DiceBinaryCodec.name: DiceBinaryCodec}


def get_codec(name: str, receive_from: str | None = None) -> Codec:
    """A fresh codec by the name DeviceSpec.codec uses."""
    codecs = _registry()
    if name not in codecs:
        raise CodecError(f"no codec named {name!r}; use one of {', '.join(sorted(codecs))}")
    return codecs[name](receive_from)
