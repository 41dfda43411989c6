"""A pyusb backend hosting the simulated devices, so the real pyusb code path runs with no USB.

``usb.core.find(idVendor=0x1d50, idProduct=0x6018, backend=get_backend())`` finds every
simulated device started with ``transport="usb"`` in this process; each has the layout of
docs/protocol.md section 1: configuration 1, interface 0 of class 0xFF, bulk OUT endpoint 0x01
(host to device), bulk IN endpoint 0x81 (device to host), 64-byte packets, and its serial number
in the iSerialNumber string, which is how the host tells several devices apart and finds one
again after it was unplugged. The endpoints carry the same framed byte stream as the serial
link. In a table's configuration: ``usb_backend = "firmware_sim.usb_backend:get_backend"``.

Errors are raised as libusb's backend raises them: a read that times out raises
``usb.core.USBTimeoutError``; any transfer on a device that was unplugged (or rebooted, which
re-enumerates it) raises ``usb.core.USBError`` with errno ENODEV, and the device is absent from
the enumeration until it comes back. ``UsbPort.halt(endpoint)`` stalls an endpoint as a
firmware does (transfers on it fail with EPIPE until the host clears the halt or sets the
configuration again), and ``UsbPort.fail_transfer(endpoint, error)`` makes the next transfer
on it fail as a damaged one on a noisy cable does (``"io"``, EIO) or one the device overran
(``"overflow"``, EOVERFLOW); neither loses a byte that was not in that transfer.

The backend only reaches devices of its own process (a pyusb backend is a library); across
processes use the pseudo-terminal or TCP transports.
"""
from __future__ import annotations

import asyncio
import errno
import itertools
import threading
from dataclasses import dataclass, field
from typing import Callable

import usb.backend
from usb.core import USBError, USBTimeoutError

VENDOR_ID = 0x1D50
PRODUCT_ID = 0x6018
EP_OUT = 0x01
EP_IN = 0x81
MAX_PACKET = 64
_BUFFER_LIMIT = 256 * 1024

_LIBUSB_ERROR_IO = -1
_LIBUSB_ERROR_NO_DEVICE = -4
_LIBUSB_ERROR_TIMEOUT = -7
_LIBUSB_ERROR_NOT_FOUND = -5
_LIBUSB_ERROR_OVERFLOW = -8
_LIBUSB_ERROR_PIPE = -9
# The errors fail_transfer() can inject: libusb's code, its message and pyusb's errno.
TRANSFER_ERRORS = {
    "io": (_LIBUSB_ERROR_IO, "Input/Output Error", errno.EIO),
    "overflow": (_LIBUSB_ERROR_OVERFLOW, "Overflow", errno.EOVERFLOW),
}

_lock = threading.Lock()
_ports: dict[int, "UsbPort"] = {}
_ids = itertools.count(1)


def _no_device() -> USBError:
    return USBError("No such device (it may have been disconnected)", _LIBUSB_ERROR_NO_DEVICE,
                    errno.ENODEV)


def _pipe_error() -> USBError:
    return USBError("Pipe error", _LIBUSB_ERROR_PIPE, errno.EPIPE)


class UsbPort:
    """The device side of one simulated USB device (called by the runtime in the loop thread;
    the host's transfers come from any thread)."""

    kind = "usb"

    def __init__(self, loop: asyncio.AbstractEventLoop, on_data: Callable[[bytes], None],
                 serial: str, *, manufacturer: str, product: str,
                 vendor_id: int = VENDOR_ID, product_id: int = PRODUCT_ID) -> None:
        self.loop = loop
        self.on_data = on_data
        self.serial = serial
        self.manufacturer = manufacturer
        self.product = product
        self.vendor_id = vendor_id
        self.product_id = product_id
        self.id = next(_ids)
        self.generation = 0          # bumped at every unplug: old handles then fail
        self.handles = 0             # host handles open on this plug-in (generation)
        self.dropped_bytes = 0
        self._cond = threading.Condition()
        self._to_host = bytearray()
        self._connected = False
        self._halted: set[int] = set()             # endpoints the firmware stalled
        self._failing: dict[int, str] = {}         # endpoint -> error of its next transfer
        self.reconnect()

    @property
    def port(self) -> str:
        return f"usb:{self.vendor_id:04x}:{self.product_id:04x}:{self.serial}"

    @property
    def connected(self) -> bool:
        return self._connected

    # --- device side -----------------------------------------------------------------

    def write(self, data: bytes) -> None:
        with self._cond:
            if not self._connected:
                self.dropped_bytes += len(data)
                return
            self._to_host += data
            if len(self._to_host) > _BUFFER_LIMIT:      # nobody reads: the oldest go
                cut = len(self._to_host) - _BUFFER_LIMIT
                del self._to_host[:cut]
                self.dropped_bytes += cut
            self._cond.notify_all()

    def disconnect(self) -> None:
        with self._cond:
            if not self._connected:
                return
            self._connected = False
            self.generation += 1
            self.handles = 0
            self._to_host.clear()
            self._cond.notify_all()
        with _lock:
            _ports.pop(self.id, None)

    def reconnect(self) -> None:
        with self._cond:
            if self._connected:
                return
            self._connected = True
            self._to_host.clear()
        with _lock:
            _ports[self.id] = self

    def on_reboot(self) -> None:
        # A rebooting USB device leaves the bus and enumerates again; one unplugged stays
        # off the bus until it is plugged back in (the disconnect fault keeps its effect).
        if self._connected:
            self.disconnect()
            self.reconnect()

    def halt(self, endpoint: int) -> None:
        """The firmware stalls ``endpoint`` (EP_IN or EP_OUT): transfers on it fail with a
        pipe error until the host clears the halt or sets the configuration again."""
        self._endpoint(endpoint)
        with self._cond:
            self._halted.add(endpoint)
            self._cond.notify_all()

    def fail_transfer(self, endpoint: int, error: str = "io") -> None:
        """The next transfer on ``endpoint`` fails with ``error`` (see TRANSFER_ERRORS) and
        carries nothing: the bytes it would have carried stay for the next one."""
        self._endpoint(endpoint)
        if error not in TRANSFER_ERRORS:
            raise ValueError(f"transfer error {error!r} is unknown; use "
                             f"{', '.join(TRANSFER_ERRORS)}")
        with self._cond:
            self._failing[endpoint] = error
            self._cond.notify_all()

    @staticmethod
    def _endpoint(endpoint: int) -> None:
        if endpoint not in (EP_IN, EP_OUT):
            raise ValueError(f"endpoint 0x{endpoint:02x} is not one of this device's: use "
                             f"0x{EP_IN:02x} (IN) or 0x{EP_OUT:02x} (OUT)")

    def clear_halts(self, generation: int, endpoints: tuple[int, ...] = (EP_IN, EP_OUT)) -> None:
        """The host clears a halt (CLEAR_FEATURE), or all of them (SET_CONFIGURATION)."""
        with self._cond:
            self._check(generation)
            self._halted.difference_update(endpoints)

    def _transfer_problem(self, endpoint: int) -> USBError | None:
        """The error the next transfer on ``endpoint`` meets, if any (called holding _cond)."""
        if endpoint in self._halted:
            return _pipe_error()
        error = self._failing.pop(endpoint, None)
        if error is not None:
            code, text, number = TRANSFER_ERRORS[error]
            return USBError(text, code, number)
        return None

    def close(self) -> None:
        self.disconnect()

    def describe(self) -> str:
        return self.port

    # --- host side (any thread) --------------------------------------------------------

    def host_opened(self, generation: int) -> None:
        with self._cond:
            self._check(generation)
            if not self.handles:
                # Like a serial port's input flush on open: what piled up while no host had
                # the device open. A second handle (another driver reading the serial number
                # while it looks for its own device) takes nothing from the one in use.
                self._to_host.clear()
            self.handles += 1

    def host_closed(self, generation: int) -> None:
        with self._cond:
            if generation == self.generation and self.handles:
                self.handles -= 1

    def host_write(self, generation: int, data: bytes) -> int:
        with self._cond:
            self._check(generation)
            problem = self._transfer_problem(EP_OUT)
        if problem is not None:
            raise problem
        self.loop.call_soon_threadsafe(self.on_data, bytes(data))
        return len(data)

    def host_read(self, generation: int, size: int, timeout_ms: int) -> bytes:
        timeout = None if not timeout_ms else timeout_ms / 1000
        with self._cond:
            self._check(generation)
            if not self._to_host and EP_IN not in self._halted and EP_IN not in self._failing:
                self._cond.wait_for(lambda: self._to_host or self.generation != generation
                                    or EP_IN in self._halted or EP_IN in self._failing,
                                    timeout)
            self._check(generation)
            problem = self._transfer_problem(EP_IN)
            if problem is not None:
                raise problem
            if not self._to_host:
                raise USBTimeoutError("Operation timed out", _LIBUSB_ERROR_TIMEOUT,
                                      errno.ETIMEDOUT)
            data = bytes(self._to_host[:size])
            del self._to_host[:size]
            return data

    def _check(self, generation: int) -> None:
        if not self._connected or generation != self.generation:
            raise _no_device()


# --- descriptors ------------------------------------------------------------------------

@dataclass
class _DeviceDescriptor:
    idVendor: int
    idProduct: int
    bus: int
    address: int
    bLength: int = 18
    bDescriptorType: int = 1
    bcdUSB: int = 0x0200
    bDeviceClass: int = 0
    bDeviceSubClass: int = 0
    bDeviceProtocol: int = 0
    bMaxPacketSize0: int = 64
    bcdDevice: int = 0x0100
    iManufacturer: int = 1
    iProduct: int = 2
    iSerialNumber: int = 3
    bNumConfigurations: int = 1
    port_number: int | None = None
    port_numbers: tuple | None = None
    speed: int = 2              # libusb's LIBUSB_SPEED_FULL


@dataclass
class _ConfigDescriptor:
    bLength: int = 9
    bDescriptorType: int = 2
    wTotalLength: int = 9 + 9 + 7 + 7
    bNumInterfaces: int = 1
    bConfigurationValue: int = 1
    iConfiguration: int = 0
    bmAttributes: int = 0x80
    bMaxPower: int = 50
    extra_descriptors: list = field(default_factory=list)


@dataclass
class _InterfaceDescriptor:
    bLength: int = 9
    bDescriptorType: int = 4
    bInterfaceNumber: int = 0
    bAlternateSetting: int = 0
    bNumEndpoints: int = 2
    bInterfaceClass: int = 0xFF
    bInterfaceSubClass: int = 0
    bInterfaceProtocol: int = 0
    iInterface: int = 0
    extra_descriptors: list = field(default_factory=list)


@dataclass
class _EndpointDescriptor:
    bEndpointAddress: int
    bLength: int = 7
    bDescriptorType: int = 5
    bmAttributes: int = 0x02          # bulk
    wMaxPacketSize: int = MAX_PACKET
    bInterval: int = 0
    bRefresh: int = 0
    bSynchAddress: int = 0
    extra_descriptors: list = field(default_factory=list)


@dataclass(frozen=True)
class _Dev:
    """What enumerate_devices yields: one device at one plug-in (generation)."""

    port: UsbPort
    generation: int


class _Handle:
    def __init__(self, dev: _Dev) -> None:
        self.dev = dev
        self.configuration = 1
        self.claimed: set[int] = set()


class SimBackend(usb.backend.IBackend):
    """The pyusb backend; see the module docstring."""

    def enumerate_devices(self):
        with _lock:
            ports = sorted(_ports.values(), key=lambda p: p.id)
        return [_Dev(p, p.generation) for p in ports if p.connected]

    def get_device_descriptor(self, dev: _Dev) -> _DeviceDescriptor:
        p = dev.port
        return _DeviceDescriptor(p.vendor_id, p.product_id, bus=1, address=1 + p.id,
                                 port_number=p.id)

    def get_configuration_descriptor(self, dev: _Dev, config: int) -> _ConfigDescriptor:
        if config != 0:
            raise IndexError(f"invalid configuration index {config}")
        return _ConfigDescriptor()

    def get_interface_descriptor(self, dev: _Dev, intf: int, alt: int,
                                 config: int) -> _InterfaceDescriptor:
        if config != 0 or intf != 0 or alt != 0:
            raise IndexError(f"invalid interface {intf} alternate {alt}")
        return _InterfaceDescriptor()

    def get_endpoint_descriptor(self, dev: _Dev, ep: int, intf: int, alt: int,
                                config: int) -> _EndpointDescriptor:
        self.get_interface_descriptor(dev, intf, alt, config)
        if ep not in (0, 1):
            raise IndexError(f"invalid endpoint index {ep}")
        return _EndpointDescriptor(EP_OUT if ep == 0 else EP_IN)

    def get_parent(self, dev: _Dev):
        return None

    def open_device(self, dev: _Dev) -> _Handle:
        dev.port.host_opened(dev.generation)
        return _Handle(dev)

    def close_device(self, dev_handle: _Handle) -> None:
        dev_handle.claimed.clear()
        dev_handle.dev.port.host_closed(dev_handle.dev.generation)

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        self._alive(dev_handle)
        if config_value not in (0, 1):
            raise USBError("Entity not found", _LIBUSB_ERROR_NOT_FOUND, errno.ENOENT)
        dev_handle.configuration = config_value
        # SET_CONFIGURATION puts every endpoint back in its default state: no halt.
        dev_handle.dev.port.clear_halts(dev_handle.dev.generation)

    def get_configuration(self, dev_handle: _Handle) -> int:
        self._alive(dev_handle)
        return dev_handle.configuration

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        self._alive(dev_handle)
        if intf != 0 or altsetting != 0:
            raise USBError("Entity not found", _LIBUSB_ERROR_NOT_FOUND, errno.ENOENT)

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        self._alive(dev_handle)
        if intf != 0:
            raise USBError("Entity not found", _LIBUSB_ERROR_NOT_FOUND, errno.ENOENT)
        dev_handle.claimed.add(intf)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        dev_handle.claimed.discard(intf)

    def bulk_write(self, dev_handle: _Handle, ep: int, intf: int, data, timeout: int) -> int:
        if ep != EP_OUT:
            raise USBError("Invalid parameter", -2, errno.EINVAL)
        return dev_handle.dev.port.host_write(dev_handle.dev.generation, bytes(data))

    def bulk_read(self, dev_handle: _Handle, ep: int, intf: int, buff, timeout: int) -> int:
        if ep != EP_IN:
            raise USBError("Invalid parameter", -2, errno.EINVAL)
        size = len(buff) * buff.itemsize
        data = dev_handle.dev.port.host_read(dev_handle.dev.generation, size, timeout)
        view = memoryview(buff).cast("B")
        view[:len(data)] = data
        return len(data)

    def ctrl_transfer(self, dev_handle: _Handle, bmRequestType: int, bRequest: int,
                      wValue: int, wIndex: int, data, timeout: int) -> int:
        self._alive(dev_handle)
        if bmRequestType & 0x80 and bRequest == 0x06 and wValue >> 8 == 3:   # GET_DESCRIPTOR
            desc = self._string(dev_handle.dev.port, wValue & 0xFF)
            n = min(len(desc), len(data) * data.itemsize)
            memoryview(data).cast("B")[:n] = desc[:n]
            return n
        if bmRequestType & 0x80 and bRequest == 0x08:                        # GET_CONFIGURATION
            memoryview(data).cast("B")[:1] = bytes((dev_handle.configuration,))
            return 1
        return 0

    @staticmethod
    def _string(port: UsbPort, index: int) -> bytes:
        if index == 0:
            return bytes((4, 3, 0x09, 0x04))             # one language: en-US
        text = {1: port.manufacturer, 2: port.product, 3: port.serial}.get(index)
        if text is None:
            raise USBError("Pipe error", -9, errno.EPIPE)
        raw = text.encode("utf-16-le")
        return bytes((2 + len(raw), 3)) + raw

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        self._alive(dev_handle)
        dev_handle.dev.port.clear_halts(dev_handle.dev.generation, (ep,))

    def reset_device(self, dev_handle: _Handle) -> None:
        self._alive(dev_handle)

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        return False

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        pass

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        pass

    @staticmethod
    def _alive(dev_handle: _Handle) -> None:
        dev = dev_handle.dev
        if not dev.port.connected or dev.port.generation != dev.generation:
            raise _no_device()


_BACKEND = SimBackend()


def get_backend(find_library=None) -> SimBackend:
    """The backend for ``usb.core.find(backend=...)`` and ``DeviceSpec.usb_backend``
    (``"firmware_sim.usb_backend:get_backend"``). ``find_library`` is accepted and ignored,
    as pyusb's own ``get_backend`` functions take it."""
    return _BACKEND


def devices() -> list[UsbPort]:
    """The simulated USB devices plugged in now."""
    with _lock:
        return list(_ports.values())
