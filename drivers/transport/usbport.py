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

from . import causes
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
# The open of a device node libusb was refused: the node's mode or group, which udev sets.
DENIED_ERRNOS = frozenset({errno.EACCES, errno.EPERM})


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
        self._read_size = READ_SIZE
        self._empty = False         # the last read ended at once with no byte (a ZLP)

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
        found, denied = [], []
        for dev in devices:
            try:
                if _read_serial(dev) == self.serial:
                    found.append(dev)
                    continue
            except (usb.core.USBError, ValueError, NotImplementedError) as exc:
                if getattr(exc, "errno", None) in DENIED_ERRNOS:
                    denied.append(_node(dev))
            _dispose(dev)
        if not found and denied:
            # Its serial number cannot be read without opening it: a device the service may
            # not open was "not found", and the technician looked for a cable at fault.
            units = "device" if len(denied) == 1 else f"devices ({len(denied)})"
            raise TransportError(
                f"USB {units} {self.vendor:04x}:{self.product:04x} at {', '.join(denied)} "
                f"cannot be opened (permission denied), so whether one is {self.name} cannot "
                f"be told; {DENIED_HINT}", causes.DENIED)
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
                                 "configuration", causes.MISSING)
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
            if getattr(exc, "errno", None) in DENIED_ERRNOS:
                raise TransportError(f"{self.name} at {_node(dev)} cannot be opened (permission "
                                     f"denied: {exc}); {DENIED_HINT}", causes.DENIED) from None
            raise TransportError(f"cannot claim interface 0 of {self.name} at {_node(dev)}: "
                                 f"{exc}; {_claim_hint(exc)}", causes.of_errno(exc)) from None
        self._ep_out = eps.get(EP_OUT)
        self._ep_in = eps.get(EP_IN) or eps.get(EP_INTR_IN)
        self._read_size = _read_size(self._ep_in)
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
            data = bytes(ep.read(self._read_size, timeout=READ_TIMEOUT_MS))
        except usb.core.USBTimeoutError:
            self._empty = False
            return b""
        except usb.core.USBError as exc:
            if exc.errno == errno.ETIMEDOUT:
                self._empty = False
                return b""
            if exc.errno not in TRANSIENT_ERRNOS:
                raise TransportClosed(f"{self.name}: {exc}") from None
            self._recover(ep, exc)
            return b""
        if data:
            self._failing = self._empty = False
            return data
        # A zero-length packet ends the read at once. One now and then ends a transfer of a
        # whole number of packets; a device that sends nothing else would have the reader
        # thread spin (a core taken from the table): from the second in a row it is polled
        # at the pace of a timeout, and its heartbeats, missing, lose the link as usual.
        if self._empty:
            if not self._failing and self.log is not None:
                self.log.warning("usb device sends empty packets; polled at its timeout's pace",
                                 endpoint=f"0x{ep.bEndpointAddress:02x}")
            self._failing = True
            self._stop.wait(RETRY_PAUSE_S)
        self._empty = True
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


DENIED_HINT = ("its udev rule (/etc/udev/rules.d/99-tablectl.rules, docs/install.md, \"Device "
               "names\") must match its idVendor and idProduct and set GROUP=\"tablectl\", "
               "MODE=\"0660\"; then sudo udevadm control --reload-rules && sudo udevadm "
               "trigger --subsystem-match=usb, and ls -l the node shows the group tablectl")


def _claim_hint(exc: Exception) -> str:
    """The way out of an interface that could not be claimed (other than for a permission),
    by what libusb said."""
    if getattr(exc, "errno", None) == errno.ENODEV:
        return ("the device left the bus while it was opened (unplugged, or rebooting, which "
                "enumerates it again): check its cable and power; the link tries again")
    if getattr(exc, "errno", None) == errno.EBUSY:
        # Not a permission: pointing at the udev rule sent the technician the wrong way.
        return ("another program holds the device (another tablectl, a tool left running "
                "on it), or a kernel driver this user could not detach from it (lsusb -t "
                "names it): stop it, and the link takes the device at its next try")
    return "check the udev rule grants access to this device"


def _read_serial(dev) -> str | None:
    """The device's serial number (None: it gives none). Raises USBError as libusb refused
    the device's opening (pyusb's get_string alone says only "no langid" then)."""
    if not dev.iSerialNumber:
        return None
    langids = usb.util.get_langids(dev)
    if not langids:
        raise ValueError("the device gives no language for its strings")
    return usb.util.get_string(dev, dev.iSerialNumber, langids[0])


def _node(dev) -> str:
    """The device node libusb opens for ``dev`` on Linux, which the udev rule grants."""
    try:
        return f"/dev/bus/usb/{int(dev.bus):03d}/{int(dev.address):03d}"
    except (TypeError, ValueError):
        return "its /dev/bus/usb node"


def _read_size(ep) -> int:
    """The bytes one read asks for: READ_SIZE rounded up to whole packets of ``ep``. A read
    shorter than the packet the device sends fails with an overflow and loses it, every time
    (a high-speed interrupt endpoint's packets, or a SuperSpeed bulk endpoint's 1024 bytes)."""
    if ep is None:
        return READ_SIZE
    size = ep.wMaxPacketSize & 0x7FF
    size *= 1 + ((ep.wMaxPacketSize >> 11) & 3)    # transactions per microframe (high speed)
    if size <= 0:
        return READ_SIZE
    return -(-READ_SIZE // size) * size


def _serial_number(dev) -> str:
    """A device's serial number as an error names it (in JSON's quotes, or the words "none"
    and "unreadable", with "permission denied" where that is why); its handle is given back
    at once."""
    try:
        serial = _read_serial(dev)
        return shown(serial) if serial else "none"
    except (usb.core.USBError, ValueError, NotImplementedError) as exc:
        if getattr(exc, "errno", None) in DENIED_ERRNOS:
            return f"unreadable at {_node(dev)} (permission denied)"
        return "unreadable"
    finally:
        _dispose(dev)


def _dispose(dev) -> None:
    """Release the interface and close the handle; never raises."""
    try:
        usb.util.dispose_resources(dev)
    except Exception:  # noqa: BLE001 - the device may be gone already
        pass
