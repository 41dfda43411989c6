"""USB devices that fail the host in ways the simulator's backend does not model, through the
real pyusb path on a small real ``usb.backend.IBackend`` (not a mock of pyusb): a device node
the service may not open, an interface another program holds, a device that leaves the bus as
it is opened, one that answers every read at once with an empty packet, and one whose packets
are larger than the host's read.

Each is a clear TransportError naming the problem and the way out (which the link shows as
the device's problem and tries again after its back-off: the last test runs the driver), or,
for the reads, bytes that still arrive and a reader that does not spin.
"""
import asyncio
import errno
import queue
import time

import pytest
from usb.core import USBError, USBTimeoutError

from drivers.factory import open_driver
from drivers.spec import DeviceSpec
from drivers.transport import TransportError, UsbTransport
from drivers.transport.usbport import READ_TIMEOUT_MS
from test_usb_transport_interrupt import Device as HelloDevice
from test_usb_transport_interrupt import IntrBackend
from usb_backends import BULK, INTERRUPT, PID, VID, BaseBackend, ep, plugged
from usb_backends import Device as PluggedDevice


class Device(PluggedDevice):
    """Bulk OUT 0x01 and bulk IN 0x81 (of ``in_size`` bytes a packet), and what goes wrong."""

    def __init__(self, serial="", *, denied=False, busy=False, gone=False, empty=False,
                 in_size=64):
        super().__init__([ep(0x01), ep(0x81, size=in_size)], serial=serial)
        self.denied = denied        # its node's mode refuses the service user (no udev rule)
        self.busy = busy            # another program has claimed interface 0
        self.gone = gone            # it leaves the bus as the host configures it
        self.empty = empty          # every read ends at once with a zero-length packet
        self.reads = 0


class FaultyBackend(BaseBackend):
    """libusb's answers to the devices above."""

    def open_device(self, dev):
        if dev.denied:
            raise USBError("Access denied (insufficient permissions)", -3, errno.EACCES)
        return super().open_device(dev)

    def set_configuration(self, handle, value):
        if handle.gone:
            raise USBError("No such device (it may have been disconnected)", -4, errno.ENODEV)

    def claim_interface(self, handle, intf):
        if handle.busy:
            raise USBError("Resource busy", -6, errno.EBUSY)
        super().claim_interface(handle, intf)

    def bulk_write(self, handle, ep, intf, data, timeout):
        return len(data)

    def bulk_read(self, handle, ep, intf, buff, timeout):
        handle.reads += 1
        if handle.empty:
            return 0
        try:
            packet = handle.to_host.get(timeout=timeout / 1000)
        except queue.Empty:
            raise USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT) from None
        if len(packet) > len(buff) * buff.itemsize:
            # libusb: a packet larger than what is left of the read overflows it, and is lost.
            raise USBError("Overflow", -8, errno.EOVERFLOW)
        memoryview(buff).cast("B")[:len(packet)] = packet
        return len(packet)


def get_backend():
    return FaultyBackend()


BACKEND = f"{__name__}:get_backend"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


async def refused(serial=""):
    """The text of the TransportError opening the device gives; the transport stays closed."""
    t = UsbTransport(VID, PID, serial=serial, backend=BACKEND)
    with pytest.raises(TransportError) as err:
        await t.open()
    assert not t.is_open
    return str(err.value)


@pytest.mark.parametrize("serial", ["SHOE-1", ""], ids=["usb_serial", "no usb_serial"])
def test_a_device_the_service_may_not_open_is_named_with_the_udev_rule_not_called_absent(
        serial):
    # With usb_serial the host reads each unit's serial number, which needs the device opened:
    # libusb's "access denied" was taken for a unit without that number, and the pit read "no
    # USB device found; check that it is plugged in" of a device plugged in all along.
    with plugged(FaultyBackend, Device("SHOE-1", denied=True)) as (device,):
        text = run(refused(serial))
    assert "permission denied" in text.lower() and "/dev/bus/usb/002/010" in text, text
    assert 'GROUP="tablectl"' in text and "99-tablectl.rules" in text, text
    assert "found" not in text and "plugged in" not in text, text
    assert device.handles_open == 0


def test_several_units_and_no_serial_configured_say_which_cannot_be_read_and_why():
    with plugged(FaultyBackend, Device("SHOE-1", denied=True), Device("SHOE-2")):
        text = run(refused())
    assert '"SHOE-2"' in text and "unreadable at /dev/bus/usb/002/010 (permission denied)" in text


def test_an_interface_another_program_holds_says_so_not_to_check_the_udev_rule():
    with plugged(FaultyBackend, Device("DICE-1", busy=True)) as (device,):
        text = run(refused("DICE-1"))
    assert "another program holds the device" in text and "udev" not in text, text
    assert (device.handles_open, device.claimed) == (0, False)


def test_a_device_that_leaves_the_bus_while_it_is_opened_is_named_so():
    # A replug or a reboot in the middle of the opening: ENODEV, which the udev rule does
    # not mend.
    with plugged(FaultyBackend, Device("DICE-1", gone=True)) as (device,):
        text = run(refused("DICE-1"))
    assert "left the bus" in text and "cable" in text and "udev" not in text, text
    assert device.handles_open == 0


def test_a_device_answering_every_read_with_an_empty_packet_is_not_spun_on():
    # A zero-length packet ends a read at once, with no byte and no error: the reader thread
    # asked again at once, for ever, a core of the Pi taken while the link waited for the
    # heartbeats that never came. It is asked at most once a read timeout.
    async def main():
        t = UsbTransport(VID, PID, backend=BACKEND)
        await t.open()
        began = time.monotonic()
        await asyncio.sleep(1.0)
        await t.close()
        return time.monotonic() - began

    with plugged(FaultyBackend, Device(empty=True)) as (device,):
        elapsed = run(main())
    polls = elapsed / (READ_TIMEOUT_MS / 1000)
    assert 2 <= device.reads <= 2 * polls + 5, (device.reads, polls)


def test_packets_larger_than_the_read_still_arrive():
    # A SuperSpeed bulk endpoint's packets hold 1024 bytes: a read of 512 overflowed at every
    # full packet and lost it, and nothing the device sent in whole packets ever arrived.
    packet = bytes(range(256)) * 4

    async def main(device):
        t = UsbTransport(VID, PID, backend=BACKEND)
        await t.open()
        device.to_host.put(packet)
        got = b""
        async with asyncio.timeout(5):
            while len(got) < len(packet):
                got += await t.read()
        await t.close()
        return got

    with plugged(FaultyBackend, Device(in_size=1024)) as (device,):
        assert run(main(device)) == packet


class DeniedIntrBackend(IntrBackend):
    """The devices of tests/test_usb_transport_interrupt.py (they answer a Hello), whose node
    the service may not open while ``denied`` is set."""

    def open_device(self, dev):
        if getattr(dev, "denied", False):
            raise USBError("Access denied (insufficient permissions)", -3, errno.EACCES)
        return super().open_device(dev)


def get_denied_backend():
    return DeniedIntrBackend()


def test_the_driver_shows_the_denied_device_as_its_problem_and_links_once_it_is_granted():
    async def main(device):
        drv = open_driver(DeviceSpec(id="boxes", device_class="box-sensors", transport="usb",
                                     usb_vendor=VID, usb_product=PID, usb_serial="INTR-1",
                                     usb_backend=f"{__name__}:get_denied_backend",
                                     heartbeat_s=0.05, link_timeout_s=0.5), asyncio.Queue())
        try:
            async with asyncio.timeout(10):
                while "permission denied" not in (drv.problem or ""):
                    await asyncio.sleep(0.02)
            assert not drv.is_up and "udev" in drv.problem
            device.denied = False           # the udev rule mended and applied
            return await drv.wait_up(15)
        finally:
            await drv.close()

    hello = HelloDevice("INTR-1", [ep(0x01, BULK), ep(0x82, INTERRUPT)])
    hello.denied = True
    with plugged(DeniedIntrBackend, hello):
        assert run(main(hello)).model == "BX-8"
