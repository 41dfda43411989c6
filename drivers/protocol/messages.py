"""Typed messages of the tablectl wire protocol, for every device class and both directions.

A message is a frozen dataclass whose class attributes say where it belongs on the wire:
``TYPE`` (the frame's type byte), ``SENDER`` (``"host"``, ``"device"`` or ``"both"``),
``CLASSES`` (the device classes that use it; empty means every class), ``RELIABLE`` (sent
with a sequence number and acknowledged) and ``WIRE``, the payload layout as ``(field, wire
type)`` pairs packed in order. The same layout is written out in docs/protocol.md; the firmware
simulator builds and parses its frames with these classes.

Cards travel as wire codes (:attr:`controller.rules.cards.Card.code`, 0-51), ``UNKNOWN_CARD``
(0xFF) where the device saw a card it cannot read or does not recognise cards. Deck (back)
identifiers are 16-bit, ``NO_DECK`` (0xFFFF) where the device cannot tell.

Wire types: ``u8 u16 u32`` unsigned big-endian, ``i32`` signed, ``bool`` one byte 0/1,
``card`` one byte, ``deck`` u16, ``str`` u8 length + UTF-8, ``blob`` u8 length + bytes,
``cards`` u16 count + count x (card, deck), ``dice`` u8 count + one byte (1-6) per die,
``kv`` u8 count + count x (str key, i32 value).
"""
from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from typing import Any, ClassVar

PROTOCOL_VERSION = 1
UNKNOWN_CARD = 0xFF
NO_DECK = 0xFFFF

# Device class numbers used in HelloInfo.device_class.
DEVICE_CLASS_CODES = {"shuffler": 1, "shoe": 2, "dice": 3, "box-sensors": 4}
DEVICE_CLASS_NAMES = {v: k for k, v in DEVICE_CLASS_CODES.items()}

# HelloInfo.flags bits.
FLAG_RECOGNISES_CARDS = 0x01   # reports card identities (shuffler) / reads cards (shoe)
FLAG_BOOT = 0x02               # sent unsolicited after power-on or reboot
FLAG_RESUMED = 0x04            # answer to Hello(resume=True): numbering and memory kept

# Result codes carried by Ack.code: 0 accepted; anything else the command was refused and
# nothing was done.
ACK_OK = 0
REFUSAL_CODES = {
    1: "unknown-command",    # not a command of this device class
    2: "bad-argument",       # e.g. a hand of 0 cards or more than the device can dispense
    3: "busy",               # still shuffling, shaking or dispensing
    4: "not-ready",          # e.g. dispense before any shuffle
    5: "empty",              # no cards left
    6: "door-open",          # door or lid open
    7: "jammed",             # cleared only by the operator
    8: "fault",              # in a malfunction state
}
REFUSAL_NUMBERS = {v: k for k, v in REFUSAL_CODES.items()}

# Reasons carried by Nak.reason.
NAK_CRC = 1                # header good, payload CRC wrong: send it again
NAK_UNKNOWN_TYPE = 2       # type byte unknown to the receiver: do not send again
NAK_BAD_PAYLOAD = 3        # payload does not match the type's layout: do not send again
NAK_REASONS = {NAK_CRC: "crc", NAK_UNKNOWN_TYPE: "unknown-type", NAK_BAD_PAYLOAD: "bad-payload"}

# Standard malfunction codes (Malfunction.code); 0x8000-0xFFFF are the vendor's own.
MALFUNCTION_CODES = {
    0x0001: "motor",
    0x0002: "sensor",
    0x0003: "elevator",
    0x0004: "card reader",
    0x0005: "power",
    0x0006: "memory or firmware check",
    0x0007: "dice camera",
}

MESSAGE_TYPES: dict[int, type["Message"]] = {}


class PayloadError(ValueError):
    """A payload does not match its message type's layout, or a field is out of range."""


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every message; see the module docstring for the class attributes."""

    TYPE: ClassVar[int] = -1
    SENDER: ClassVar[str] = "both"
    CLASSES: ClassVar[tuple[str, ...]] = ()
    RELIABLE: ClassVar[bool] = True
    WIRE: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        # (no super() call: dataclass(slots=True) re-creates the class and breaks it)
        if "TYPE" in cls.__dict__:
            known = MESSAGE_TYPES.get(cls.TYPE)
            # dataclass(slots=True) re-creates the class: the same name may register twice.
            if known is not None and known.__qualname__ != cls.__qualname__:
                raise RuntimeError(f"message type 0x{cls.TYPE:02x} defined twice")
            MESSAGE_TYPES[cls.TYPE] = cls

    def __post_init__(self) -> None:
        for name, wtype in self.WIRE:
            _check(self, name, wtype, getattr(self, name))

    def pack(self) -> bytes:
        """The payload bytes of this message."""
        out = bytearray()
        for name, wtype in self.WIRE:
            _pack(out, wtype, getattr(self, name))
        return bytes(out)

    @classmethod
    def unpack(cls, payload: bytes) -> "Message":
        """Build the message from its payload; PayloadError if it does not fit."""
        pos = 0
        kwargs: dict[str, Any] = {}
        try:
            for name, wtype in cls.WIRE:
                kwargs[name], pos = _unpack(payload, pos, wtype)
        except (IndexError, struct.error, UnicodeDecodeError) as exc:
            raise PayloadError(f"{cls.__name__}: truncated or malformed payload ({exc})") from None
        if pos != len(payload):
            raise PayloadError(f"{cls.__name__}: {len(payload) - pos} unexpected trailing bytes")
        return cls(**kwargs)   # __post_init__ checks ranges (card codes, die faces)

    @classmethod
    def for_class(cls, device_class: str) -> bool:
        """Whether a device of ``device_class`` may send or receive this message."""
        return not cls.CLASSES or device_class in cls.CLASSES


# --- wire types --------------------------------------------------------------------------

_RANGES = {"u8": (0, 0xFF), "u16": (0, 0xFFFF), "u32": (0, 0xFFFFFFFF),
           "i32": (-2**31, 2**31 - 1), "deck": (0, 0xFFFF)}


def _valid_card(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and (0 <= v < 52 or v == UNKNOWN_CARD)


def _check(msg: Message, name: str, wtype: str, v: Any) -> None:
    where = f"{type(msg).__name__}.{name}"
    if wtype in _RANGES:
        lo, hi = _RANGES[wtype]
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise PayloadError(f"{where} = {v!r} is outside {lo}..{hi}")
    elif wtype == "bool":
        if not isinstance(v, bool):
            raise PayloadError(f"{where} must be True or False, got {v!r}")
    elif wtype == "card":
        if not _valid_card(v):
            raise PayloadError(f"{where} = {v!r} is no card code (0-51, or 255 for unknown)")
    elif wtype == "str":
        if not isinstance(v, str) or len(v.encode()) > 255:
            raise PayloadError(f"{where} must be text of at most 255 UTF-8 bytes")
    elif wtype == "blob":
        if not isinstance(v, bytes) or len(v) > 255:
            raise PayloadError(f"{where} must be bytes, at most 255")
    elif wtype == "cards":
        if not isinstance(v, tuple) or len(v) > 0xFFFF:
            raise PayloadError(f"{where} must be a tuple of (card code, deck id) pairs")
        for item in v:
            if (not isinstance(item, tuple) or len(item) != 2 or not _valid_card(item[0])
                    or not isinstance(item[1], int) or not 0 <= item[1] <= 0xFFFF):
                raise PayloadError(f"{where}: {item!r} is no (card code, deck id) pair")
    elif wtype == "dice":
        if not isinstance(v, tuple) or len(v) > 255 or not all(
                isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in v):
            raise PayloadError(f"{where} must be a tuple of die faces 1-6, got {v!r}")
    elif wtype == "kv":
        if not isinstance(v, tuple) or len(v) > 255:
            raise PayloadError(f"{where} must be a tuple of (name, integer) pairs")
        for item in v:
            if (not isinstance(item, tuple) or len(item) != 2 or not isinstance(item[0], str)
                    or len(item[0].encode()) > 255 or not isinstance(item[1], int)
                    or isinstance(item[1], bool) or not -2**31 <= item[1] < 2**31):
                raise PayloadError(f"{where}: {item!r} is no (name, 32-bit integer) pair")
    else:  # pragma: no cover - a programming error in a WIRE table
        raise RuntimeError(f"unknown wire type {wtype!r}")


def _pack(out: bytearray, wtype: str, v: Any) -> None:
    if wtype == "u8":
        out.append(v)
    elif wtype in ("u16", "deck"):
        out += struct.pack(">H", v)
    elif wtype == "u32":
        out += struct.pack(">I", v)
    elif wtype == "i32":
        out += struct.pack(">i", v)
    elif wtype == "bool":
        out.append(1 if v else 0)
    elif wtype == "card":
        out.append(v)
    elif wtype == "str":
        b = v.encode()
        out.append(len(b))
        out += b
    elif wtype == "blob":
        out.append(len(v))
        out += v
    elif wtype == "cards":
        out += struct.pack(">H", len(v))
        for card, deck in v:
            out += struct.pack(">BH", card, deck)
    elif wtype == "dice":
        out.append(len(v))
        out += bytes(v)
    elif wtype == "kv":
        out.append(len(v))
        for key, value in v:
            _pack(out, "str", key)
            out += struct.pack(">i", value)


def _unpack(p: bytes, pos: int, wtype: str) -> tuple[Any, int]:
    if wtype == "u8" or wtype == "card":
        return p[pos], pos + 1
    if wtype in ("u16", "deck"):
        return struct.unpack_from(">H", p, pos)[0], pos + 2
    if wtype == "u32":
        return struct.unpack_from(">I", p, pos)[0], pos + 4
    if wtype == "i32":
        return struct.unpack_from(">i", p, pos)[0], pos + 4
    if wtype == "bool":
        b = p[pos]
        if b > 1:
            raise PayloadError(f"boolean byte {b} is neither 0 nor 1")
        return b == 1, pos + 1
    if wtype in ("str", "blob"):
        n = p[pos]
        raw = p[pos + 1:pos + 1 + n]
        if len(raw) != n:
            raise IndexError("text runs past the payload")
        return (raw.decode() if wtype == "str" else bytes(raw)), pos + 1 + n
    if wtype == "cards":
        (n,) = struct.unpack_from(">H", p, pos)
        pos += 2
        items = []
        for _ in range(n):
            card, deck = struct.unpack_from(">BH", p, pos)
            items.append((card, deck))
            pos += 3
        return tuple(items), pos
    if wtype == "dice":
        n = p[pos]
        raw = p[pos + 1:pos + 1 + n]
        if len(raw) != n:
            raise IndexError("dice run past the payload")
        return tuple(raw), pos + 1 + n
    if wtype == "kv":
        n = p[pos]
        pos += 1
        items = []
        for _ in range(n):
            key, pos = _unpack(p, pos, "str")
            (value,) = struct.unpack_from(">i", p, pos)
            pos += 4
            items.append((key, value))
        return tuple(items), pos
    raise RuntimeError(f"unknown wire type {wtype!r}")  # pragma: no cover


# --- link: every device class ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Ack(Message):
    """Receipt of reliable frame ``seq``; for a command, ``code`` 0 = accepted, else one of
    REFUSAL_CODES (the command was refused and nothing was done)."""

    TYPE: ClassVar[int] = 0x01
    RELIABLE: ClassVar[bool] = False
    WIRE: ClassVar[tuple] = (("seq", "u8"), ("code", "u16"))
    seq: int
    code: int = ACK_OK


@dataclass(frozen=True, slots=True)
class Nak(Message):
    """Frame ``seq`` arrived damaged (``reason`` NAK_CRC: send again) or could not be
    understood (NAK_UNKNOWN_TYPE, NAK_BAD_PAYLOAD: do not send again)."""

    TYPE: ClassVar[int] = 0x02
    RELIABLE: ClassVar[bool] = False
    WIRE: ClassVar[tuple] = (("seq", "u8"), ("reason", "u8"))
    seq: int
    reason: int


@dataclass(frozen=True, slots=True)
class Hello(Message):
    """The host opens (or reopens) the link and says how often it expects heartbeats.
    ``resume``: the host kept its sequence numbers and duplicate memory from an earlier
    session with this device and asks the device to keep its own (docs/protocol.md 3.2)."""

    TYPE: ClassVar[int] = 0x03
    SENDER: ClassVar[str] = "host"
    RELIABLE: ClassVar[bool] = False
    WIRE: ClassVar[tuple] = (("protocol", "u8"), ("heartbeat_ms", "u16"), ("resume", "bool"))
    protocol: int = PROTOCOL_VERSION
    heartbeat_ms: int = 250
    resume: bool = False


@dataclass(frozen=True, slots=True)
class HelloInfo(Message):
    """The device's answer to Hello (and, with FLAG_BOOT, its notice after a boot).
    ``units``: dice in the cup, boxes watched, decks held; 0 where it means nothing."""

    TYPE: ClassVar[int] = 0x04
    SENDER: ClassVar[str] = "device"
    RELIABLE: ClassVar[bool] = False
    WIRE: ClassVar[tuple] = (("protocol", "u8"), ("device_class", "u8"), ("flags", "u8"),
                             ("units", "u8"), ("vendor", "str"), ("model", "str"),
                             ("serial", "str"), ("firmware_version", "str"),
                             ("firmware_hash", "blob"))
    protocol: int
    device_class: int
    flags: int
    units: int
    vendor: str
    model: str
    serial: str
    firmware_version: str
    firmware_hash: bytes

    @property
    def class_name(self) -> str:
        return DEVICE_CLASS_NAMES.get(self.device_class, f"class-{self.device_class}")

    @property
    def recognises_cards(self) -> bool:
        return bool(self.flags & FLAG_RECOGNISES_CARDS)

    @property
    def boot(self) -> bool:
        return bool(self.flags & FLAG_BOOT)

    @property
    def resumed(self) -> bool:
        return bool(self.flags & FLAG_RESUMED)


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """Sent by both sides at least every heartbeat interval; the device's ``uptime_ms``
    going backwards also betrays a reboot."""

    TYPE: ClassVar[int] = 0x05
    RELIABLE: ClassVar[bool] = False
    WIRE: ClassVar[tuple] = (("uptime_ms", "u32"),)
    uptime_ms: int = 0


@dataclass(frozen=True, slots=True)
class StatusRequest(Message):
    TYPE: ClassVar[int] = 0x06
    SENDER: ClassVar[str] = "host"


@dataclass(frozen=True, slots=True)
class StatusReport(Message):
    """The firmware's state name (``idle``, ``shuffling``, ``ready``, ``jammed``…) and its
    counters (cards held, shuffles done…), answering StatusRequest."""

    TYPE: ClassVar[int] = 0x07
    SENDER: ClassVar[str] = "device"
    WIRE: ClassVar[tuple] = (("state", "str"), ("detail", "kv"))
    state: str
    detail: tuple = ()


# --- events common to the device classes -------------------------------------------------

@dataclass(frozen=True, slots=True)
class Malfunction(Message):
    TYPE: ClassVar[int] = 0x10
    SENDER: ClassVar[str] = "device"
    WIRE: ClassVar[tuple] = (("code", "u16"), ("text", "str"))
    code: int
    text: str = ""


@dataclass(frozen=True, slots=True)
class Jam(Message):
    TYPE: ClassVar[int] = 0x11
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = ("shuffler", "shoe")
    WIRE: ClassVar[tuple] = (("where", "str"),)
    where: str = ""


@dataclass(frozen=True, slots=True)
class Door(Message):
    """A door (the dice agitator's lid) opened (``open`` True) or closed."""

    TYPE: ClassVar[int] = 0x12
    SENDER: ClassVar[str] = "device"
    WIRE: ClassVar[tuple] = (("open", "bool"),)
    open: bool


@dataclass(frozen=True, slots=True)
class Empty(Message):
    TYPE: ClassVar[int] = 0x13
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = ("shuffler", "shoe")


# --- shuffler ----------------------------------------------------------------------------

_SHUFFLER = ("shuffler",)


@dataclass(frozen=True, slots=True)
class Shuffle(Message):
    TYPE: ClassVar[int] = 0x20
    SENDER: ClassVar[str] = "host"
    CLASSES: ClassVar[tuple] = _SHUFFLER


@dataclass(frozen=True, slots=True)
class DispenseCard(Message):
    TYPE: ClassVar[int] = 0x21
    SENDER: ClassVar[str] = "host"
    CLASSES: ClassVar[tuple] = _SHUFFLER


@dataclass(frozen=True, slots=True)
class DispenseHand(Message):
    TYPE: ClassVar[int] = 0x22
    SENDER: ClassVar[str] = "host"
    CLASSES: ClassVar[tuple] = _SHUFFLER
    WIRE: ClassVar[tuple] = (("count", "u8"),)
    count: int


@dataclass(frozen=True, slots=True)
class DeckCheck(Message):
    TYPE: ClassVar[int] = 0x23
    SENDER: ClassVar[str] = "host"
    CLASSES: ClassVar[tuple] = _SHUFFLER


@dataclass(frozen=True, slots=True)
class ShuffleStarted(Message):
    TYPE: ClassVar[int] = 0x30
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _SHUFFLER


@dataclass(frozen=True, slots=True)
class ShuffleDone(Message):
    TYPE: ClassVar[int] = 0x31
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _SHUFFLER
    WIRE: ClassVar[tuple] = (("count", "u16"),)
    count: int


@dataclass(frozen=True, slots=True)
class CardDispensed(Message):
    TYPE: ClassVar[int] = 0x32
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _SHUFFLER
    WIRE: ClassVar[tuple] = (("card", "card"), ("deck", "deck"))
    card: int = UNKNOWN_CARD
    deck: int = NO_DECK


@dataclass(frozen=True, slots=True)
class HandDispensed(Message):
    """``cards``: (card code, deck id) per card, in the order they left the shuffler."""

    TYPE: ClassVar[int] = 0x33
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _SHUFFLER
    WIRE: ClassVar[tuple] = (("cards", "cards"),)
    cards: tuple


@dataclass(frozen=True, slots=True)
class DeckCheckResult(Message):
    """``count`` cards counted; where ``recognised``, ``cards`` holds every card read
    (code, deck id); otherwise ``cards`` is empty."""

    TYPE: ClassVar[int] = 0x34
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _SHUFFLER
    WIRE: ClassVar[tuple] = (("count", "u16"), ("recognised", "bool"), ("cards", "cards"))
    count: int
    recognised: bool = False
    cards: tuple = ()


# --- card-reading shoe -------------------------------------------------------------------

_SHOE = ("shoe",)


@dataclass(frozen=True, slots=True)
class CardDrawn(Message):
    TYPE: ClassVar[int] = 0x40
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _SHOE
    WIRE: ClassVar[tuple] = (("card", "card"), ("face_up", "bool"), ("deck", "deck"))
    card: int
    face_up: bool = False
    deck: int = NO_DECK


@dataclass(frozen=True, slots=True)
class CutCardReached(Message):
    TYPE: ClassVar[int] = 0x41
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _SHOE


@dataclass(frozen=True, slots=True)
class Misread(Message):
    TYPE: ClassVar[int] = 0x42
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _SHOE


# --- dice agitator -----------------------------------------------------------------------

_DICE = ("dice",)


@dataclass(frozen=True, slots=True)
class Shake(Message):
    TYPE: ClassVar[int] = 0x50
    SENDER: ClassVar[str] = "host"
    CLASSES: ClassVar[tuple] = _DICE


@dataclass(frozen=True, slots=True)
class ShakeStarted(Message):
    TYPE: ClassVar[int] = 0x60
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _DICE


@dataclass(frozen=True, slots=True)
class DiceResult(Message):
    TYPE: ClassVar[int] = 0x61
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _DICE
    WIRE: ClassVar[tuple] = (("dice", "dice"),)
    dice: tuple


@dataclass(frozen=True, slots=True)
class DieNotFlat(Message):
    TYPE: ClassVar[int] = 0x62
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _DICE
    WIRE: ClassVar[tuple] = (("die", "u8"),)
    die: int


@dataclass(frozen=True, slots=True)
class DieOutOfCup(Message):
    TYPE: ClassVar[int] = 0x63
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _DICE
    WIRE: ClassVar[tuple] = (("die", "u8"),)
    die: int


# --- box sensors -------------------------------------------------------------------------

_BOX = ("box-sensors",)


@dataclass(frozen=True, slots=True)
class CardPlaced(Message):
    TYPE: ClassVar[int] = 0x70
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _BOX
    WIRE: ClassVar[tuple] = (("box", "u8"),)
    box: int


@dataclass(frozen=True, slots=True)
class CardRemoved(Message):
    TYPE: ClassVar[int] = 0x71
    SENDER: ClassVar[str] = "device"
    CLASSES: ClassVar[tuple] = _BOX
    WIRE: ClassVar[tuple] = (("box", "u8"),)
    box: int


def commands_for(device_class: str) -> list[type[Message]]:
    """The host-to-device commands a device of ``device_class`` must accept."""
    return [c for c in MESSAGE_TYPES.values()
            if c.SENDER == "host" and c.RELIABLE and c.for_class(device_class)]


def events_for(device_class: str) -> list[type[Message]]:
    """The reliable device-to-host messages a device of ``device_class`` may send."""
    return [c for c in MESSAGE_TYPES.values()
            if c.SENDER == "device" and c.RELIABLE and c.for_class(device_class)]


def field_names(cls: type[Message]) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def a_frame(cls: type[Message]) -> str:
    """``cls`` named as a frame with its article, as the log and malfunction texts say it:
    "an Ack frame", "a HelloInfo frame"."""
    name = cls.__name__
    return f"{'an' if name[0] in 'AEIOU' else 'a'} {name} frame"
