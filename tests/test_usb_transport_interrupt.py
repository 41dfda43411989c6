"""The USB transport over an interrupt IN endpoint (0x82), through the real pyusb code path.

The simulator's backend offers bulk endpoints only; this small pyusb backend (a real
``usb.backend.IBackend``, not a mock of pyusb) has a device with bulk OUT 0x01 and interrupt IN
0x82, which docs/protocol.md allows, and one with no usable endpoints at all. Its device side
answers a Hello with the codec, so the whole driver runs over it.
"""
import asyncio
import errno
import queue
import threading
from types import SimpleNamespace

import pytest
import usb.backend
from usb.core import USBError, USBTimeoutError

from drivers.factory import open_driver
from drivers.protocol import Received, get_codec
from drivers.protocol import messages as m
from drivers.spec import DeviceSpec
from drivers.transport import TransportError, UsbTransport

VID, PID = 0x1D50, 0x6018


def _ep(address, attributes):
    return SimpleNamespace(bLength=7, bDescriptorType=5, bEndpointAddress=address,
                           bmAttributes=attributes, wMaxPacketSize=64, bInterval=1,
                           bRefresh=0, bSynchAddress=0, extra_descriptors=[])


class Device:
    """One device: its endpoints and a firmware that answers Hello and sends events."""

    def __init__(self, serial, endpoints):
        self.serial = serial
        self.endpoints = endpoints
        self.to_host = queue.Queue()
        self.codec = get_codec("tablectl", receive_from="host")
        self.received = []
        self.lock = threading.Lock()
        self.handles_open = 0       # opened by the host and not closed
        self.claimed = False        # interface 0 claimed by the host

    def from_host(self, data):
        with self.lock:
            for item in self.codec.feed(bytes(data)):
                if not isinstance(item, Received):
                    continue
                self.received.append(item.message)
                if isinstance(item.message, m.Hello):
                    self.send(m.HelloInfo(1, m.DEVICE_CLASS_CODES["box-sensors"], 0, 8,
                                          "Acme", "BX-8", self.serial, "3.0", b"\x99"))
                elif item.seq:
                    self.send(m.Ack(item.seq))

    def send(self, msg, seq=0):
        self.to_host.put(self.codec.encode(msg, seq))


class IntrBackend(usb.backend.IBackend):
    devices = []

    def enumerate_devices(self):
        return list(self.devices)

    def get_device_descriptor(self, dev):
        i = self.devices.index(dev)
        return SimpleNamespace(
            bLength=18, bDescriptorType=1, bcdUSB=0x200, bDeviceClass=0, bDeviceSubClass=0,
            bDeviceProtocol=0, bMaxPacketSize0=64, idVendor=VID, idProduct=PID, bcdDevice=1,
            iManufacturer=0, iProduct=0, iSerialNumber=3, bNumConfigurations=1, bus=2,
            address=10 + i, port_number=i, port_numbers=None, speed=2)

    def get_configuration_descriptor(self, dev, config):
        return SimpleNamespace(bLength=9, bDescriptorType=2, wTotalLength=32, bNumInterfaces=1,
                               bConfigurationValue=1, iConfiguration=0, bmAttributes=0x80,
                               bMaxPower=50, extra_descriptors=[])

    def get_interface_descriptor(self, dev, intf, alt, config):
        if intf != 0 or alt != 0:
            raise IndexError("no such interface")
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

    def bulk_write(self, handle, ep, intf, data, timeout):
        handle.from_host(data)
        return len(data)

    def intr_read(self, handle, ep, intf, buff, timeout):
        if ep != 0x82:
            raise USBError("Invalid parameter", -2, errno.EINVAL)
        try:
            data = handle.to_host.get(timeout=timeout / 1000)
        except queue.Empty:
            raise USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT) from None
        memoryview(buff).cast("B")[:len(data)] = data
        return len(data)

    def ctrl_transfer(self, handle, bmRequestType, bRequest, wValue, wIndex, data, timeout):
        if bRequest == 0x06 and wValue >> 8 == 3:           # GET_DESCRIPTOR (string)
            index = wValue & 0xFF
            raw = bytes((4, 3, 0x09, 0x04)) if index == 0 else (
                bytes((2 + 2 * len(handle.serial), 3)) + handle.serial.encode("utf-16-le"))
            n = min(len(raw), len(data) * data.itemsize)
            memoryview(data).cast("B")[:n] = raw[:n]
            return n
        return 0


def get_backend():
    return IntrBackend()


BACKEND = f"{__name__}:get_backend"


@pytest.fixture
def devices():
    IntrBackend.devices = [
        Device("NO-EPS", [_ep(0x01, 0x02)]),                         # no IN endpoint at all
        Device("INTR-1", [_ep(0x01, 0x02), _ep(0x82, 0x03)]),        # bulk OUT, interrupt IN
    ]
    yield IntrBackend.devices
    IntrBackend.devices = []


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 20))


def test_interrupt_in_endpoint_carries_the_stream(devices):
    async def main():
        q = asyncio.Queue()
        drv = open_driver(DeviceSpec(id="boxes", device_class="box-sensors", transport="usb",
                                     usb_vendor=VID, usb_product=PID, usb_serial="INTR-1",
                                     usb_backend=BACKEND, heartbeat_s=0.05,
                                     link_timeout_s=0.5), q)
        up = await asyncio.wait_for(q.get(), 5)
        assert up.kind == "link_up" and up.identity.model == "BX-8"
        devices[1].send(m.CardPlaced(0), seq=1)
        placed = await asyncio.wait_for(q.get(), 5)
        assert placed.kind == "card_placed" and placed.box == 1
        async with asyncio.timeout(5):     # the host's ack went out over bulk OUT 0x01
            while not any(isinstance(x, m.Ack) and x.seq == 1 for x in devices[1].received):
                await asyncio.sleep(0.01)
        await drv.close()
    run(main())


def test_device_without_the_protocol_endpoints_is_refused(devices):
    async def main():
        t = UsbTransport(VID, PID, serial="NO-EPS", backend=BACKEND)
        with pytest.raises(TransportError, match="does not speak docs/protocol.md over USB"):
            await t.open()
    run(main())


def test_a_device_refused_at_open_is_released_each_time(devices):
    # The link tries again every few seconds for as long as it runs: each attempt gives back
    # the handle it opened and the interface it claimed before the next one (not whenever the
    # garbage collector finalises pyusb's device object).
    async def main():
        t = UsbTransport(VID, PID, serial="NO-EPS", backend=BACKEND)
        for _ in range(3):
            with pytest.raises(TransportError, match="does not speak docs/protocol.md"):
                await t.open()
            assert (devices[0].handles_open, devices[0].claimed) == (0, False)
            assert not t.is_open
    run(main())
