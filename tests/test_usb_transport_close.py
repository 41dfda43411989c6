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
import threading

import pytest
from usb.core import USBTimeoutError

from drivers.transport import TransportClosed, UsbTransport
from usb_backends import PID, VID, BaseBackend, ep, plugged
from usb_backends import Device as PluggedDevice


class Device(PluggedDevice):
    """A device that takes nothing the host sends, and notes what is done to it."""

    def __init__(self):
        super().__init__([ep(0x01), ep(0x81)])
        self.log = []                   # what happened, in order
        self.lock = threading.Lock()
        self.writing = threading.Event()

    def note(self, what):
        with self.lock:
            self.log.append(what)


class StuckBackend(BaseBackend):
    """Bulk OUT 0x01 that takes nothing, bulk IN 0x81; notes the handle's life."""

    def open_device(self, dev):
        dev.note("open")
        return super().open_device(dev)

    def close_device(self, handle):
        handle.note("close")
        super().close_device(handle)

    def release_interface(self, handle, intf):
        handle.note("release")
        super().release_interface(handle, intf)

    def bulk_write(self, handle, ep, intf, data, timeout):
        # The device takes nothing: the transfer ends at its timeout, as libusb's does.
        handle.note("write started")
        handle.writing.set()
        threading.Event().wait(timeout / 1000)
        handle.note("write ended")
        raise USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT)

    bulk_read = BaseBackend.read_to_host


def get_backend():
    return StuckBackend()


@pytest.fixture
def device():
    with plugged(StuckBackend, Device()) as (device,):
        yield device


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
