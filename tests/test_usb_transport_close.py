"""Closing the USB transport while a write is still in flight, through the real pyusb path.

A device that stops taking what the host sends leaves the host's bulk write waiting for its
timeout in the transport's thread, and the link meanwhile declares the link lost and closes
the port. libusb leaves undefined a transfer whose device handle is released under it (the
call may then never return, and a thread of the event loop's executor is lost with it each
time): the handle is released only once the write has ended. The backend below is a real
``usb.backend.IBackend`` (not a mock of pyusb) whose device takes nothing until a write's
timeout, and which notes the order in which the transfer ended and the handle went.
"""
import asyncio
import errno
import queue
import threading
from types import SimpleNamespace

import pytest
import usb.backend
from usb.core import USBError, USBTimeoutError

from drivers.transport import TransportClosed, UsbTransport

VID, PID = 0x1D50, 0x6018


class Device:
    def __init__(self):
        self.log = []                   # what happened, in order
        self.lock = threading.Lock()
        self.writing = threading.Event()
        self.to_host = queue.Queue()

    def note(self, what):
        with self.lock:
            self.log.append(what)


def _ep(address):
    return SimpleNamespace(bLength=7, bDescriptorType=5, bEndpointAddress=address,
                           bmAttributes=0x02, wMaxPacketSize=64, bInterval=0, bRefresh=0,
                           bSynchAddress=0, extra_descriptors=[])


class StuckBackend(usb.backend.IBackend):
    device: Device | None = None

    def enumerate_devices(self):
        return [self.device]

    def get_device_descriptor(self, dev):
        return SimpleNamespace(
            bLength=18, bDescriptorType=1, bcdUSB=0x200, bDeviceClass=0, bDeviceSubClass=0,
            bDeviceProtocol=0, bMaxPacketSize0=64, idVendor=VID, idProduct=PID, bcdDevice=1,
            iManufacturer=0, iProduct=0, iSerialNumber=0, bNumConfigurations=1, bus=3,
            address=7, port_number=1, port_numbers=None, speed=2)

    def get_configuration_descriptor(self, dev, config):
        return SimpleNamespace(bLength=9, bDescriptorType=2, wTotalLength=32, bNumInterfaces=1,
                               bConfigurationValue=1, iConfiguration=0, bmAttributes=0x80,
                               bMaxPower=50, extra_descriptors=[])

    def get_interface_descriptor(self, dev, intf, alt, config):
        if intf != 0 or alt != 0:
            raise IndexError("no such interface")
        return SimpleNamespace(bLength=9, bDescriptorType=4, bInterfaceNumber=0,
                               bAlternateSetting=0, bNumEndpoints=2, bInterfaceClass=0xFF,
                               bInterfaceSubClass=0, bInterfaceProtocol=0, iInterface=0,
                               extra_descriptors=[])

    def get_endpoint_descriptor(self, dev, ep, intf, alt, config):
        return (_ep(0x01), _ep(0x81))[ep]

    def open_device(self, dev):
        dev.note("open")
        return dev

    def close_device(self, handle):
        handle.note("close")

    def set_configuration(self, handle, value):
        pass

    def get_configuration(self, handle):
        return 1

    def claim_interface(self, handle, intf):
        pass

    def release_interface(self, handle, intf):
        handle.note("release")

    def bulk_write(self, handle, ep, intf, data, timeout):
        # The device takes nothing: the transfer ends at its timeout, as libusb's does.
        handle.note("write started")
        handle.writing.set()
        threading.Event().wait(timeout / 1000)
        handle.note("write ended")
        raise USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT)

    def bulk_read(self, handle, ep, intf, buff, timeout):
        try:
            data = handle.to_host.get(timeout=timeout / 1000)
        except queue.Empty:
            raise USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT) from None
        memoryview(buff).cast("B")[:len(data)] = data
        return len(data)

    def ctrl_transfer(self, handle, bmRequestType, bRequest, wValue, wIndex, data, timeout):
        raise USBError("Pipe error", -9, errno.EPIPE)


def get_backend():
    return StuckBackend()


@pytest.fixture
def device():
    StuckBackend.device = Device()
    yield StuckBackend.device
    StuckBackend.device = None


def test_the_device_is_released_only_once_the_write_in_flight_has_ended(device):
    async def main():
        t = UsbTransport(VID, PID, backend=f"{__name__}:get_backend")
        await t.open()
        write = asyncio.ensure_future(t.write(b"\xa5" * 12))
        while not device.writing.is_set():
            await asyncio.sleep(0.01)
        await t.close()                 # as the link does when it declares the link lost
        with pytest.raises(TransportClosed):
            await write
        return list(device.log)

    log = asyncio.run(asyncio.wait_for(main(), 20))
    assert "close" in log and "write ended" in log
    assert log.index("write ended") < log.index("release") < log.index("close"), log
