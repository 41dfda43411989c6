"""The USB transport through the real pyusb code path, on the simulator's pyusb backend."""
import asyncio

import pytest

from drivers.factory import open_driver
from drivers.spec import DeviceSpec
from drivers.transport import TransportClosed, TransportError, UsbTransport
from drivers.transport.usbport import load_backend

firmware_sim = pytest.importorskip("firmware_sim.table")
SIM_BACKEND = "firmware_sim.usb_backend:get_backend"
FAST = dict(heartbeat_s=0.05, link_timeout_s=0.5)


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 30))


def test_bad_backend_names_are_explained():
    with pytest.raises(TransportError, match="module:function"):
        load_backend("firmware_sim.usb_backend")
    with pytest.raises(TransportError, match="cannot be loaded"):
        load_backend("no_such_module:get_backend")
    assert load_backend("") is None          # pyusb's default: libusb


def test_absent_device_is_a_clear_error():
    async def main():
        t = UsbTransport(0x1D50, 0x6018, serial="NOPE", backend=SIM_BACKEND)
        with pytest.raises(TransportError, match="no USB device usb:1d50:6018:NOPE found"):
            await t.open()
        assert not t.is_open
    run(main())


def test_the_device_with_the_configured_serial_is_chosen():
    async def main():
        with firmware_sim.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
            a = table.add("shoe", "shoe-a", serial="SHOE-A")
            b = table.add("shoe", "shoe-b", serial="SHOE-B")
            q = asyncio.Queue()
            drv_b = open_driver(b.spec(**FAST), q)
            drv_a = open_driver(a.spec(**FAST), q)
            ups = {}
            while len(ups) < 2:
                e = await asyncio.wait_for(q.get(), 5)
                if e.kind == "link_up":
                    ups[e.device] = e.identity.serial
            assert ups == {"shoe-a": "SHOE-A", "shoe-b": "SHOE-B"}
            b.draw()
            e = await asyncio.wait_for(q.get(), 5)
            assert e.kind == "card_drawn" and e.device == "shoe-b"
            await drv_a.close()
            await drv_b.close()
    run(main())


def test_unplugged_device_ends_reads_and_is_found_again():
    async def main():
        with firmware_sim.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
            dev = table.add("dice", serial="DICE-1")
            t = UsbTransport(0x1D50, 0x6018, serial="DICE-1", backend=SIM_BACKEND)
            await t.open()
            assert t.name == "usb:1d50:6018:DICE-1"
            assert await asyncio.wait_for(t.read(), 5)        # the boot notice, heartbeats
            dev.disconnect()
            with pytest.raises(TransportClosed):
                async with asyncio.timeout(5):
                    while True:
                        await t.read()
            await t.close()
            with pytest.raises(TransportError):
                await t.open()
            dev.reconnect()
            await t.open()
            assert await asyncio.wait_for(t.read(), 5)
            await t.close()
    run(main())


def test_spec_picks_the_usb_transport():
    spec = DeviceSpec(id="dice", device_class="dice", transport="usb", usb_vendor=0x1D50,
                      usb_product=0x6018, usb_serial="X", usb_backend=SIM_BACKEND)
    from drivers.transport import make_transport
    t = make_transport(spec)
    assert isinstance(t, UsbTransport) and t.serial == "X" and t.backend_name == SIM_BACKEND


def test_default_libusb_path_fails_cleanly_without_the_device():
    # No such device on this machine (and perhaps no libusb at all): a clear error either way.
    async def main():
        t = UsbTransport(0x1D50, 0x6018, serial="NOT-PLUGGED-IN")
        with pytest.raises(TransportError, match="no USB (device|library)"):
            await t.open()
    run(main())


def test_another_host_handle_on_a_device_in_use_loses_none_of_its_bytes():
    """Another driver looking for its own device reads every device's serial number, which
    opens a handle on each: the device in use keeps what it sent and its host has not read."""
    import usb.core
    import usb.util

    from firmware_sim.usb_backend import get_backend

    with firmware_sim.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
        sim = table.add("box-sensors", serial="BOX-1")
        find = dict(find_all=True, idVendor=0x1D50, idProduct=0x6018, backend=get_backend())
        (dev,) = list(usb.core.find(**find))
        dev.set_configuration()
        usb.util.claim_interface(dev, 0)
        sim.runtime.port.write(b"\x00MARK\x00")      # sent; the host has not read it yet
        for other in usb.core.find(**find):           # another driver's search for its serial
            assert usb.util.get_string(other, other.iSerialNumber) == "BOX-1"
            usb.util.dispose_resources(other)
        got = b""
        while b"MARK" not in got:
            got += bytes(dev.read(0x81, 512, timeout=200))
        usb.util.dispose_resources(dev)


def test_several_identical_devices_and_no_serial_configured_is_a_clear_error():
    """With usb_serial empty the transport took whichever device enumerated first: a spare
    shoe plugged in beside the table's, or the two swapping places in the enumeration after
    a replug, and the table talked to another unit than the one it was dealing from. It is
    refused instead, naming the units found and the key that picks one."""
    async def main():
        with firmware_sim.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
            table.add("shoe", "shoe-a", serial="SHOE-A")
            table.add("shoe", "shoe-b", serial="SHOE-B")
            t = UsbTransport(0x1D50, 0x6018, backend=SIM_BACKEND)
            with pytest.raises(TransportError) as err:
                await t.open()
            assert not t.is_open
            text = str(err.value)
            assert '"SHOE-A"' in text and '"SHOE-B"' in text and "usb_serial" in text
            # One of them configured: that one, as before.
            t = UsbTransport(0x1D50, 0x6018, serial="SHOE-B", backend=SIM_BACKEND)
            await t.open()
            await t.close()
    run(main())


def test_one_device_and_no_serial_configured_is_that_device():
    async def main():
        with firmware_sim.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
            table.add("dice", serial="DICE-9")
            t = UsbTransport(0x1D50, 0x6018, backend=SIM_BACKEND)
            await t.open()
            assert await asyncio.wait_for(t.read(), 5)
            await t.close()
    run(main())
