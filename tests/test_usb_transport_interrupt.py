"""The USB transport over an interrupt IN endpoint (0x82), through the real pyusb code path.

The simulator's backend offers bulk endpoints only; this small pyusb backend (a real
``usb.backend.IBackend``, not a mock of pyusb) has a device with bulk OUT 0x01 and interrupt IN
0x82, which docs/protocol.md allows, and one with no usable endpoints at all. Its device side
answers a Hello with the codec, so the whole driver runs over it.
"""
import asyncio
import errno
import threading

import pytest
from usb.core import USBError

from drivers.factory import open_driver
from drivers.protocol import Received, get_codec
from drivers.protocol import messages as m
from drivers.spec import DeviceSpec
from drivers.transport import TransportError, UsbTransport
from usb_backends import BULK, INTERRUPT, PID, VID, BaseBackend, ep, plugged
from usb_backends import Device as PluggedDevice


class Device(PluggedDevice):
    """One device: its endpoints and a firmware that answers Hello and sends events."""

    def __init__(self, serial, endpoints):
        super().__init__(endpoints, serial=serial)
        self.codec = get_codec("tablectl", receive_from="host")
        self.received = []
        self.lock = threading.Lock()

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


class IntrBackend(BaseBackend):
    """Bulk OUT to the device; interrupt IN 0x82 from it."""

    def bulk_write(self, handle, ep, intf, data, timeout):
        handle.from_host(data)
        return len(data)

    def intr_read(self, handle, ep, intf, buff, timeout):
        if ep != 0x82:
            raise USBError("Invalid parameter", -2, errno.EINVAL)
        return self.read_to_host(handle, ep, intf, buff, timeout)


def get_backend():
    return IntrBackend()


BACKEND = f"{__name__}:get_backend"


@pytest.fixture
def devices():
    with plugged(IntrBackend,
                 Device("NO-EPS", [ep(0x01, BULK)]),                   # no IN endpoint at all
                 Device("INTR-1", [ep(0x01, BULK), ep(0x82, INTERRUPT)]),  # bulk OUT, intr IN
                 ) as plugged_in:
        yield plugged_in


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
