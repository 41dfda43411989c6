"""Why a device could not be opened, as a short class of cause with the way out in the
controller's own words: what the journal's ``device_not_opened`` record holds (never the
library's or the device's own text, which the log and the health keep)."""
from __future__ import annotations

import errno

MISSING = "missing"         # no such port, no such USB device on the bus
DENIED = "denied"           # the service user may not open it (the udev rule)
BUSY = "busy"               # another program, or a kernel driver, holds it
GONE = "gone"               # it left while it was being opened (unplugged, rebooting)
NOT_A_PORT = "not_a_port"   # the path names a directory or a plain file, not a device
OTHER = "other"             # anything else the system or the library answered

WAY_OUT = {
    MISSING: "plug the device in and power it, and check its port (or usb_vendor, "
             "usb_product and usb_serial) in the table configuration",
    DENIED: "the service user may not open it: install the udev rule that gives the device "
            "the group tablectl (docs/install.md, Device names), then udevadm trigger",
    BUSY: "another program holds it (another tablectl, a terminal program, a kernel "
          "driver): stop that program; the service takes the device at its next try",
    GONE: "it left while it was being opened (unplugged, or rebooting): check its cable "
          "and power",
    NOT_A_PORT: "the port named is a directory or a plain file, not a device: give the "
                "device's port in the table configuration",
    OTHER: "the service's log says what the system answered (device not reachable): check "
           "the device's cable and power and its section of the table configuration",
}

_BY_ERRNO = {errno.ENOENT: MISSING, errno.EACCES: DENIED, errno.EPERM: DENIED,
             errno.EBUSY: BUSY, errno.EAGAIN: BUSY, errno.ENODEV: GONE, errno.ENXIO: GONE,
             errno.EISDIR: NOT_A_PORT, errno.ENOTTY: NOT_A_PORT}


def of_errno(exc: BaseException) -> str:
    """The class of cause of an open refused with ``exc``, by its errno or that of the error
    it was raised from (pyserial's configuring of a plain file raises from termios's ENOTTY)."""
    seen: BaseException | None = exc
    for _ in range(3):
        if seen is None:
            break
        code = getattr(seen, "errno", None)
        if code is None and seen.args and isinstance(seen.args[0], int):
            code = seen.args[0]          # termios.error: (errno, text)
        if code in _BY_ERRNO:
            return _BY_ERRNO[code]
        seen = seen.__cause__ or seen.__context__
    return OTHER
