"""Two USB devices that claim the same serial number, through the real pyusb code path on the
simulator's pyusb backend."""
import asyncio

import pytest

from drivers.transport import TransportError, UsbTransport

firmware_sim = pytest.importorskip("firmware_sim.table")
SIM_BACKEND = "firmware_sim.usb_backend:get_backend"


def test_two_devices_with_the_configured_serial_number_are_refused_not_picked_at_random():
    # usb_serial is the stable name a device is found again by; two units that both give it
    # (a maker that numbers every unit alike, a spare beside the table's) were opened by
    # enumeration order: the one found first, maybe the other after a replug, and the table
    # dealt from a unit it did not mean. Refused instead, saying why and what to do.
    async def main():
        with firmware_sim.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
            table.add("shoe", "shoe-a", serial="0000")
            spare = table.add("shoe", "shoe-b", serial="0000")
            t = UsbTransport(0x1D50, 0x6018, serial="0000", backend=SIM_BACKEND)
            with pytest.raises(TransportError) as err:
                await t.open()
            assert not t.is_open
            text = str(err.value)
            assert "2 USB devices" in text and '"0000"' in text
            assert "unplug" in text and "serial number" in text
            spare.disconnect()                       # the spare unplugged: the table's one
            await t.open()
            await t.close()
    asyncio.run(asyncio.wait_for(main(), 30))
