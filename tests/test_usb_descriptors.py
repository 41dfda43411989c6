"""USB devices whose descriptors do not say what docs/protocol.md section 1 asks, through the
real pyusb path on a small real ``usb.backend.IBackend`` (not a mock of pyusb).

A device that gets its own layout wrong is refused when it is opened, with an error naming
what is wrong, and whatever the attempt opened or claimed is given back (the link tries again
every few seconds for as long as it runs); it is not opened only to fail at every read.
"""
import asyncio

import pytest

from drivers.transport import TransportError, UsbTransport
from usb_backends import ISOCHRONOUS, PID, VID, BaseBackend, Device, ep


class LyingBackend(BaseBackend):
    """Devices whose descriptors are wrong; every control request stalls."""


def get_backend():
    return LyingBackend()


@pytest.fixture
def lying():
    def plug(*args, **kw):
        LyingBackend.devices = [Device(*args, **kw)]
        return LyingBackend.devices[0]
    yield plug
    LyingBackend.devices = []


def refused(dev, match):
    """Opening ``dev`` is refused with ``match``, twice, as the link tries again; each attempt
    gives back the handle it opened and the interface it claimed before the next one, while
    the transport lives (not when the garbage collector finalises pyusb's device object)."""
    async def main():
        t = UsbTransport(VID, PID, backend=f"{__name__}:get_backend")
        for _ in range(2):
            with pytest.raises(TransportError, match=match):
                await t.open()
            assert (dev.handles_open, dev.claimed) == (0, False)
            assert not t.is_open
    asyncio.run(asyncio.wait_for(main(), 20))


def test_an_isochronous_in_endpoint_is_refused_by_name(lying):
    refused(lying([ep(0x01), ep(0x81, ISOCHRONOUS)]), r"0x81 is isochronous.*bulk or interrupt")


def test_an_endpoint_that_carries_nothing_is_refused_by_name(lying):
    refused(lying([ep(0x01, size=0), ep(0x81)]), r"0x01 .*packets of 0 bytes")


def test_an_interface_listed_without_its_descriptor_is_refused_and_released(lying):
    refused(lying([ep(0x01), ep(0x81)], missing_interface=True),
            r"cannot claim interface 0 .*no descriptor for interface 0")
