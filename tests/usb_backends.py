"""A small real pyusb backend (``usb.backend.IBackend``, not a mock of pyusb) for the USB
transport tests whose devices the simulator's backend cannot be: other endpoint types, wrong
descriptors, a device that takes nothing.

``BaseBackend`` answers the descriptors of one configuration with one interface of the
device's endpoints and keeps count of the handles opened and the interface claimed; a test
subclasses it with the transfers (and any other answer) its device gives, and plugs its
devices in with ``plugged``.
"""
from __future__ import annotations

import contextlib
import errno
import queue
from types import SimpleNamespace

import usb.backend
from usb.core import USBError, USBTimeoutError

VID, PID = 0x1D50, 0x6018
BULK, INTERRUPT, ISOCHRONOUS = 0x02, 0x03, 0x01


def ep(address, attributes=BULK, size=64):
    """An endpoint descriptor: ``address`` with bit 7 set is IN."""
    return SimpleNamespace(bLength=7, bDescriptorType=5, bEndpointAddress=address,
                           bmAttributes=attributes, wMaxPacketSize=size, bInterval=1,
                           bRefresh=0, bSynchAddress=0, extra_descriptors=[])


class Device:
    """One device: its endpoints, its serial number (none: no string descriptor), how many
    interfaces its configuration lists and whether it has a descriptor for them."""

    def __init__(self, endpoints, serial="", interfaces=1, missing_interface=False):
        self.endpoints = endpoints
        self.serial = serial
        self.interfaces = interfaces
        self.missing_interface = missing_interface
        self.handles_open = 0       # opened by the host and not closed
        self.claimed = False        # interface 0 claimed by the host
        self.to_host = queue.Queue()    # packets sent and not yet read by the host


class BaseBackend(usb.backend.IBackend):
    """The devices plugged in and their descriptors; a subclass names which of its
    endpoints a transfer goes through (``bulk_read = BaseBackend.read_to_host`` ...)."""

    devices: list[Device] = []

    def enumerate_devices(self):
        return list(self.devices)

    def get_device_descriptor(self, dev):
        i = self.devices.index(dev)
        return SimpleNamespace(
            bLength=18, bDescriptorType=1, bcdUSB=0x200, bDeviceClass=0, bDeviceSubClass=0,
            bDeviceProtocol=0, bMaxPacketSize0=64, idVendor=VID, idProduct=PID, bcdDevice=1,
            iManufacturer=0, iProduct=0, iSerialNumber=3 if dev.serial else 0,
            bNumConfigurations=1, bus=2, address=10 + i, port_number=i, port_numbers=None,
            speed=2)

    def get_configuration_descriptor(self, dev, config):
        return SimpleNamespace(bLength=9, bDescriptorType=2, wTotalLength=32,
                               bNumInterfaces=dev.interfaces, bConfigurationValue=1,
                               iConfiguration=0, bmAttributes=0x80, bMaxPower=50,
                               extra_descriptors=[])

    def get_interface_descriptor(self, dev, intf, alt, config):
        if dev.missing_interface or intf != 0 or alt != 0:
            raise IndexError(f"no descriptor for interface {intf}")
        return SimpleNamespace(bLength=9, bDescriptorType=4, bInterfaceNumber=0,
                               bAlternateSetting=0, bNumEndpoints=len(dev.endpoints),
                               bInterfaceClass=0xFF, bInterfaceSubClass=0, bInterfaceProtocol=0,
                               iInterface=0, extra_descriptors=[])

    def get_endpoint_descriptor(self, dev, ep, intf, alt, config):
        return dev.endpoints[ep]

    def open_device(self, dev):
        dev.handles_open += 1
        return dev

    def close_device(self, handle):
        handle.handles_open -= 1

    def set_configuration(self, handle, value):
        pass

    def get_configuration(self, handle):
        return 1

    def claim_interface(self, handle, intf):
        handle.claimed = True

    def release_interface(self, handle, intf):
        handle.claimed = False

    def ctrl_transfer(self, handle, bmRequestType, bRequest, wValue, wIndex, data, timeout):
        # A device with a serial number answers GET_DESCRIPTOR (string) with it; any other
        # control request stalls, as a device that does not know it does.
        if handle.serial and bRequest == 0x06 and wValue >> 8 == 3:
            index = wValue & 0xFF
            raw = bytes((4, 3, 0x09, 0x04)) if index == 0 else (
                bytes((2 + 2 * len(handle.serial), 3)) + handle.serial.encode("utf-16-le"))
            n = min(len(raw), len(data) * data.itemsize)
            memoryview(data).cast("B")[:n] = raw[:n]
            return n
        raise USBError("Pipe error", -9, errno.EPIPE)

    def read_to_host(self, handle, ep, intf, buff, timeout):
        """The next packet the device has sent, or a timeout as libusb's."""
        try:
            data = handle.to_host.get(timeout=timeout / 1000)
        except queue.Empty:
            raise USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT) from None
        memoryview(buff).cast("B")[:len(data)] = data
        return len(data)


@contextlib.contextmanager
def plugged(backend: type[BaseBackend], *devices: Device):
    """``devices`` plugged in on ``backend`` for the time of the block, then unplugged."""
    backend.devices = list(devices)
    try:
        yield backend.devices
    finally:
        backend.devices = []
