"""How a device is reached: the part of the table's configuration a driver needs.

The configuration loader (controller.config) builds one :class:`DeviceSpec` per
``[devices.<id>]`` table of ``table.toml``; the driver factory opens the device from it. Keeping
this a plain, validated value lets tests, the demo and the daemon open devices the same way.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from controller.errors import TablectlError

DEVICE_CLASSES = ("shuffler", "shoe", "dice", "box-sensors")
TRANSPORTS = ("serial", "usb")
CODECS = ("tablectl", "dice-binary")
# HelloInfo.firmware_hash is a blob (docs/protocol.md 4, 5.1): 1-255 bytes, two hex digits each.
FIRMWARE_HASH_MAX_BYTES = 255


@dataclass(frozen=True, slots=True)
class DeviceSpec:
    """One device of the table.

    ``transport = "serial"`` takes ``port``: a path (``/dev/ttyUSB0``, ``/dev/serial/by-id/…``,
    a pseudo-terminal ``/dev/pts/7``) or a pyserial URL (``socket://host:port``,
    ``rfc2217://host:port``). ``transport = "usb"`` finds the device by ``usb_vendor`` /
    ``usb_product`` (and ``usb_serial`` when several are plugged in); ``usb_backend`` names a
    pyusb backend as ``module:function`` (the firmware simulator's in tests; empty means
    libusb). ``codec`` is the wire protocol: ``tablectl`` (docs/protocol.md) or another codec.
    ``firmware_hash`` (hex, empty: any) is the regulator's approved firmware: a device whose
    HelloInfo gives another hash, or none, is refused at hello (docs/protocol.md 3.2).
    """

    id: str
    device_class: str
    transport: str = "serial"
    port: str = ""
    baudrate: int = 115200
    codec: str = "tablectl"
    usb_vendor: int = 0
    usb_product: int = 0
    usb_serial: str = ""
    usb_backend: str = ""
    heartbeat_s: float = 0.25      # interval the host expects heartbeats at
    link_timeout_s: float = 1.0    # silence after which the link is lost
    firmware_hash: str = ""        # approved firmware's hash in hex; empty: any firmware

    def __post_init__(self) -> None:
        if self.firmware_hash:
            wrong = firmware_hash_problem(self.firmware_hash)
            if wrong:
                raise TablectlError(f"device {self.id!r}: firmware_hash {wrong}")
            # The link compares it with HelloInfo's hash in lower-case hex.
            object.__setattr__(self, "firmware_hash", self.firmware_hash.lower())
        if self.device_class not in DEVICE_CLASSES:
            raise TablectlError(f"device {self.id!r}: class {self.device_class!r} is unknown; "
                                f"use one of {', '.join(DEVICE_CLASSES)}")
        if self.transport not in TRANSPORTS:
            raise TablectlError(f"device {self.id!r}: transport {self.transport!r} is unknown; "
                                f"use one of {', '.join(TRANSPORTS)}")
        if self.codec not in CODECS:
            raise TablectlError(f"device {self.id!r}: codec {self.codec!r} is unknown; "
                                f"use one of {', '.join(CODECS)}")
        classes = _speaks_for(self.codec)
        if classes and self.device_class not in classes:
            # Here, not only in the driver, so that `config check` (the unit's ExecStartPre)
            # refuses what `run` would.
            fitting = [c for c in CODECS if not _speaks_for(c)
                       or self.device_class in _speaks_for(c)]
            others = f" (or {', '.join(repr(c) for c in fitting[1:])})" if len(fitting) > 1 \
                else ""
            raise TablectlError(
                f"device {self.id!r}: codec {self.codec!r} speaks only for "
                f"{', '.join(classes)}, not a {self.device_class}; use codec = "
                f"\"{fitting[0] if fitting else 'tablectl'}\"{others}, or set class = "
                f"\"{classes[0]}\" if that is what the device is")
        if self.transport == "serial" and not self.port:
            raise TablectlError(f"device {self.id!r}: a serial device needs port = "
                                "\"/dev/ttyUSB0\" (or a /dev/serial/by-id path or socket:// URL)")
        if self.transport == "usb" and not (self.usb_vendor and self.usb_product):
            raise TablectlError(f"device {self.id!r}: a USB device needs usb_vendor and "
                                "usb_product (e.g. 0x1d50 and 0x6018)")
        if not 0.05 <= self.heartbeat_s <= 10:
            # Hello.heartbeat_ms is 50-10,000 ms on the wire (docs/protocol.md 3.1).
            raise TablectlError(f"device {self.id!r}: heartbeat_s must be 0.05 to 10 seconds, "
                                f"the protocol's 50-10,000 ms; got {self.heartbeat_s}")
        if self.baudrate <= 0 or self.link_timeout_s <= self.heartbeat_s:
            raise TablectlError(f"device {self.id!r}: baudrate must be positive "
                                "and link_timeout_s longer than heartbeat_s")


def firmware_hash_problem(value: str) -> str:
    """What is wrong with ``value`` as a firmware hash in hex ("" when nothing)."""
    if not value:
        return ("is empty: leave firmware_hash out to link any firmware, or give the approved "
                "hash as the device's HelloInfo reports it (on its health once linked)")
    if not re.fullmatch(r"[0-9a-fA-F]+", value):
        return ("must be hex digits only (0-9, a-f, no 0x, spaces or colons), as the device's "
                "HelloInfo reports it (e.g. 64 digits for a SHA-256)")
    if len(value) % 2:
        return (f"has an odd number of hex digits ({len(value)}): two a byte, as the device's "
                "HelloInfo reports it (e.g. 64 for a SHA-256); a digit was lost or added")
    if len(value) > 2 * FIRMWARE_HASH_MAX_BYTES:
        return (f"is {len(value) // 2} bytes, longer than the {FIRMWARE_HASH_MAX_BYTES} bytes "
                "a HelloInfo can carry (e.g. 64 hex digits for a SHA-256)")
    return ""


def _speaks_for(codec: str) -> tuple[str, ...]:
    """The device classes ``codec`` speaks for (none: every class)."""
    from drivers.protocol.codec import get_codec    # the protocol package, only when asked

    return tuple(get_codec(codec).classes)
