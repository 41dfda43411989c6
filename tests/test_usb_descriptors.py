"""USB devices whose descriptors do not say what docs/protocol.md section 1 asks, through the
real pyusb path on a small real ``usb.backend.IBackend`` (not a mock of pyusb).

A device that gets its own layout wrong is refused when it is opened, with an error naming
what is wrong, and whatever the attempt opened or claimed is given back (the link tries again
every few seconds for as long as it runs); it is not opened only to fail at every read.
"""
import asyncio
import errno
from types import SimpleNamespace

import pytest
import usb.backend
from usb.core import USBError

from drivers.transport import TransportError, UsbTransport

VID, PID = 0x1D50, 0x6018
BULK, INTERRUPT, ISOCHRONOUS = 0x02, 0x03, 0x01


def _ep(address, attributes=BULK, size=64):
    return SimpleNamespace(bLength=7, bDescriptorType=5, bEndpointAddress=address,
                           bmAttributes=attributes, wMaxPacketSize=size, bInterval=1,
                           bRefresh=0, bSynchAddress=0, extra_descriptors=[])


class Lying:
    """One device: its endpoints, and whether it lists an interface it has no descriptor
    for."""

    def __init__(self, endpoints, interfaces=1, missing_interface=False):
        self.endpoints = endpoints
        self.interfaces = interfaces
        self.missing_interface = missing_interface
        self.handles_open = 0
        self.claimed = False


class LyingBackend(usb.backend.IBackend):
    device: Lying | None = None

    def enumerate_devices(self):
        return [self.device]

    def get_device_descriptor(self, dev):
        return SimpleNamespace(
            bLength=18, bDescriptorType=1, bcdUSB=0x200, bDeviceClass=0, bDeviceSubClass=0,
            bDeviceProtocol=0, bMaxPacketSize0=64, idVendor=VID, idProduct=PID, bcdDevice=1,
            iManufacturer=0, iProduct=0, iSerialNumber=0, bNumConfigurations=1, bus=4,
            address=9, port_number=1, port_numbers=None, speed=2)

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
        raise USBError("Pipe error", -9, errno.EPIPE)


def get_backend():
    return LyingBackend()


@pytest.fixture
def lying():
    def plug(*args, **kw):
        LyingBackend.device = Lying(*args, **kw)
        return LyingBackend.device
    yield plug
    LyingBackend.device = None


def refused(match):
    async def main():
        t = UsbTransport(VID, PID, backend=f"{__name__}:get_backend")
        for _ in range(2):
            with pytest.raises(TransportError, match=match):
                await t.open()
            assert not t.is_open
    asyncio.run(asyncio.wait_for(main(), 20))


def test_an_isochronous_in_endpoint_is_refused_by_name(lying):
    dev = lying([_ep(0x01), _ep(0x81, ISOCHRONOUS)])
    refused(r"0x81 is isochronous.*bulk or interrupt")
    assert (dev.handles_open, dev.claimed) == (0, False)


def test_an_endpoint_that_carries_nothing_is_refused_by_name(lying):
    dev = lying([_ep(0x01, size=0), _ep(0x81)])
    refused(r"0x01 .*packets of 0 bytes")
    assert (dev.handles_open, dev.claimed) == (0, False)


def test_an_interface_listed_without_its_descriptor_is_refused_and_released(lying):
    dev = lying([_ep(0x01), _ep(0x81)], missing_interface=True)
    refused(r"cannot claim interface 0 .*no descriptor for interface 0")
    assert (dev.handles_open, dev.claimed) == (0, False)
