"""USB transport through pyusb: a vendor-specific interface carrying the framed byte stream.

The device is found by vendor and product id (and serial number, the stable name, when one is
configured); the backend is libusb unless ``backend`` names another as ``"module:function"``
(the firmware simulator's pyusb backend in tests). Layout (docs/protocol.md, section 1):
interface 0, bulk OUT 0x01, bulk IN 0x81, or interrupt IN 0x82 when there is no bulk IN.
"""
from __future__ import annotations

import errno
import importlib

import usb.core
import usb.util

from controller.shown import shown

from .base import Transport, TransportClosed, TransportError

EP_OUT, EP_IN, EP_INTR_IN = 0x01, 0x81, 0x82
READ_SIZE = 512
READ_TIMEOUT_MS = 50
WRITE_TIMEOUT_MS = 1000
# Transfer errors of a device still on the bus: an endpoint its firmware halted (EPIPE), a
# transfer damaged on the cable (EIO) or overrun by the device (EOVERFLOW), an interrupted
# wait. The halt is cleared and the transfer tried again: the link layer's resends make up
# what the failed one carried, where closing the port would lose the link (a machine failure
# while dealing). A device that keeps failing delivers nothing, so the link's heartbeat
# timeout still closes it.
TRANSIENT_ERRNOS = frozenset({errno.EPIPE, errno.EIO, errno.EOVERFLOW, errno.EINTR})
RETRY_PAUSE_S = READ_TIMEOUT_MS / 1000   # a device failing at once again must not spin


class SerialNumberShared(TransportError):
    """Two or more USB devices give the configured serial number, the stable name the device
    is found by: none is opened. The link takes it as a refusal of what it found
    (``reason`` ``duplicate_serial``: ``serial``, and ``units``, how many give it)."""

    reason = "duplicate_serial"

    def __init__(self, text: str, serial: str, units: int) -> None:
        super().__init__(text)
        self.serial, self.units = serial, units


def load_backend(name: str):
    """The pyusb backend named ``module:function`` (called with no argument), or None for
    pyusb's default (libusb)."""
    if not name:
        return None
    module, _, func = name.partition(":")
    if not module or not func:
        raise TransportError(f"usb_backend {shown(name, 200)} must be written as "
                             "module:function, e.g. usb.backend.libusb1:get_backend")
    try:
        backend = getattr(importlib.import_module(module), func)()
    except (ImportError, AttributeError) as exc:
        raise TransportError(f"usb_backend {shown(name, 200)} cannot be loaded: {exc}") from None
    if backend is None:
        raise TransportError(f"usb_backend {shown(name, 200)} found no USB library on this system")
    return backend


class UsbTransport(Transport):
    # libusb leaves undefined a transfer whose handle is closed under it (the call may never
    # return): close() waits out a write in flight, which ends by its own timeout.
    close_wait_s = WRITE_TIMEOUT_MS / 1000 + 0.5

    def __init__(self, vendor: int, product: int, serial: str = "", backend: str = "") -> None:
        super().__init__()
        self.vendor, self.product, self.serial, self.backend_name = vendor, product, serial, backend
        self.name = f"usb:{vendor:04x}:{product:04x}" + (f":{serial}" if serial else "")
        self._dev = None
        self._ep_in = self._ep_out = None
        self._failing = False       # a transfer failed and none has carried bytes since

    def _find(self):
        backend = load_backend(self.backend_name)
        try:
            devices = list(usb.core.find(find_all=True, idVendor=self.vendor,
                                         idProduct=self.product, backend=backend) or [])
        except usb.core.NoBackendError:
            raise TransportError("no USB library (libusb) found; install libusb-1.0 or set "
                                 "usb_backend") from None
        if not self.serial:
            if len(devices) > 1:
                # Whichever enumerates first would do, and that can change at a replug: a
                # spare unit beside the table's would be taken for it.
                found = ", ".join(_serial_number(d) for d in devices)
                raise TransportError(
                    f"{len(devices)} USB devices {self.vendor:04x}:{self.product:04x} are "
                    f"plugged in (serial numbers {found}); set usb_serial in this device's "
                    "table configuration to the one it is")
            return devices[0] if devices else None
        found = []
        for dev in devices:
            try:
                if usb.util.get_string(dev, dev.iSerialNumber) == self.serial:
                    found.append(dev)
            except (usb.core.USBError, ValueError):
                continue
        if len(found) > 1:
            # The serial number is the stable name: two units giving it cannot be told apart,
            # and whichever enumerates first (another after a replug) is no choice.
            for dev in found:
                _dispose(dev)
            raise SerialNumberShared(
                f"{len(found)} USB devices {self.vendor:04x}:{self.product:04x} give the serial "
                f"number {shown(self.serial)} (usb_serial of this device), so the table cannot "
                "tell which is its own: unplug the one that is not, or have the units given "
                "distinct serial numbers", self.serial, len(found))
        return found[0] if found else None

    def _open_blocking(self) -> None:
        dev = self._find()
        if dev is None:
            raise TransportError(f"no USB device {self.name} found; check that it is plugged "
                                 "in and usb_vendor / usb_product / usb_serial in the table "
                                 "configuration")
        try:
            self._claim(dev)
        except TransportError:
            # Whatever was opened or claimed goes back now, not whenever the garbage collector
            # finalises the pyusb object: the next attempt must not find interface 0 still
            # claimed by this one.
            self._ep_in = self._ep_out = None
            _dispose(dev)
            raise
        self._dev = dev

    def _claim(self, dev) -> None:
        try:
            try:
                if dev.is_kernel_driver_active(0):      # no kernel driver should own it
                    dev.detach_kernel_driver(0)
            except (NotImplementedError, usb.core.USBError):
                pass                                   # not on this platform or backend
            try:
                dev.set_configuration()
            except usb.core.USBError as exc:
                if exc.errno != errno.EBUSY:   # already configured by the kernel: fine
                    raise
            usb.util.claim_interface(dev, 0)
            intf = dev.get_active_configuration()[(0, 0)]
            eps = {ep.bEndpointAddress: ep for ep in intf}
        except (usb.core.USBError, KeyError, IndexError, ValueError,
                NotImplementedError) as exc:
            # (IndexError, ValueError: descriptors that contradict each other, such as an
            # interface counted but not described.)
            raise TransportError(f"cannot claim interface 0 of {self.name}: {exc}; check the "
                                 "udev rule grants access to this device") from None
        self._ep_out = eps.get(EP_OUT)
        self._ep_in = eps.get(EP_IN) or eps.get(EP_INTR_IN)
        if self._ep_out is None or self._ep_in is None:
            raise TransportError(f"{self.name} has no OUT 0x01 and IN 0x81/0x82 endpoints on "
                                 "interface 0; it does not speak docs/protocol.md over USB")
        for ep in (self._ep_out, self._ep_in):
            problem = _endpoint_problem(ep)
            if problem:
                # Refused now, by name: opened, it would fail at every transfer instead.
                raise TransportError(f"{self.name}: endpoint 0x{ep.bEndpointAddress:02x} "
                                     f"{problem}; it does not speak docs/protocol.md over USB")

    def _read_blocking(self) -> bytes:
        ep = self._ep_in
        if ep is None:
            raise TransportClosed("closed")
        try:
            data = bytes(ep.read(READ_SIZE, timeout=READ_TIMEOUT_MS))
        except usb.core.USBTimeoutError:
            return b""
        except usb.core.USBError as exc:
            if exc.errno == errno.ETIMEDOUT:
                return b""
            if exc.errno not in TRANSIENT_ERRNOS:
                raise TransportClosed(f"{self.name}: {exc}") from None
            self._recover(ep, exc)
            return b""
        if data:
            self._failing = False
        return data

    def _write_blocking(self, data: bytes) -> None:
        ep = self._ep_out
        if ep is None:
            raise TransportClosed("closed")
        for last in (False, True):
            try:
                ep.write(data, timeout=WRITE_TIMEOUT_MS)
                return
            except usb.core.USBError as exc:
                if last or exc.errno not in TRANSIENT_ERRNOS:
                    raise TransportClosed(f"{self.name}: {exc}") from None
                # Sent again whole: bytes the failed transfer did deliver come twice, which
                # the receiver's framing and duplicate suppression absorb.
                self._recover(ep, exc)

    def _recover(self, ep, exc: usb.core.USBError) -> None:
        """A transfer on ``ep`` failed on a device still there: clear a halt and pause before
        the caller tries again. Raises TransportClosed when the halt cannot be cleared."""
        if not self._failing and self.log is not None:
            # Once until a transfer carries bytes again: a noisy cable is named, not echoed.
            self.log.warning("usb transfer failed; tried again", error=str(exc),
                             endpoint=f"0x{ep.bEndpointAddress:02x}")
        self._failing = True
        if exc.errno == errno.EPIPE:
            try:
                ep.clear_halt()
            except usb.core.USBError as again:
                raise TransportClosed(f"{self.name}: {exc}; its halt could not be cleared: "
                                      f"{again}") from None
        self._stop.wait(RETRY_PAUSE_S)

    def _close_blocking(self) -> None:
        dev, self._dev = self._dev, None
        self._ep_in = self._ep_out = None
        if dev is not None:
            _dispose(dev)


def _endpoint_problem(ep) -> str | None:
    """What is wrong with an endpoint's descriptor for the protocol's byte stream, if
    anything: it must be bulk or interrupt and carry packets of at least one byte."""
    kind = usb.util.endpoint_type(ep.bmAttributes)
    if kind not in (usb.util.ENDPOINT_TYPE_BULK, usb.util.ENDPOINT_TYPE_INTR):
        name = {usb.util.ENDPOINT_TYPE_ISO: "isochronous",
                usb.util.ENDPOINT_TYPE_CTRL: "a control endpoint"}.get(kind, f"of type {kind}")
        return f"is {name}, where the protocol needs bulk or interrupt"
    if not ep.wMaxPacketSize & 0x7FF:
        return "takes packets of 0 bytes"
    return None


def _serial_number(dev) -> str:
    """A device's serial number as an error names it (in JSON's quotes, or the words "none"
    and "unreadable"); its handle is given back at once."""
    try:
        serial = usb.util.get_string(dev, dev.iSerialNumber)
        return shown(serial) if serial else "none"
    except (usb.core.USBError, ValueError, NotImplementedError):
        return "unreadable"
    finally:
        _dispose(dev)


def _dispose(dev) -> None:
    """Release the interface and close the handle; never raises."""
    try:
        usb.util.dispose_resources(dev)
    except Exception:  # noqa: BLE001 - the device may be gone already
        pass
