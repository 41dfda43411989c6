"""A USB transfer that fails while the device is still there, through the real pyusb path.

A firmware may stall (halt) an endpoint, and a noisy cable or a device that overruns a packet
fails one transfer; neither takes the device off the bus. The transport clears the halt and
reads (or writes) again, and the link stays up: a link lost while dealing is a machine failure
that voids the round. Only a device that is gone (ENODEV) closes the port. The simulator's
pyusb backend models the halts and the failed transfers (firmware_sim.usb_backend).
"""
import asyncio
import contextlib

import pytest

from drivers.factory import open_driver

firmware_sim = pytest.importorskip("firmware_sim.table")
from firmware_sim.usb_backend import EP_IN, EP_OUT  # noqa: E402

pytestmark = pytest.mark.hil

FAST = dict(heartbeat_s=0.05, link_timeout_s=0.5)


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 30))


async def next_kind(q, kind, seen, timeout=5.0):
    async with asyncio.timeout(timeout):
        while True:
            e = await q.get()
            seen.append(e.kind)
            if e.kind == kind:
                return e


@contextlib.asynccontextmanager
async def usb_device(device_class):
    with firmware_sim.SimulatedTable(seed=5, speed=1000, transport="usb") as table:
        dev = table.add(device_class)
        q = asyncio.Queue()
        drv = open_driver(dev.spec(**FAST), q)
        try:
            await next_kind(q, "link_up", [])
            yield dev, drv, q
        finally:
            await drv.close()


@pytest.mark.parametrize("failure", ["halt", "io", "overflow"])
def test_a_failed_read_leaves_the_link_up_and_loses_no_event(failure):
    async def main():
        async with usb_device("shoe") as (dev, drv, q):
            port = dev.runtime.port
            if failure == "halt":
                port.halt(EP_IN)
            else:
                port.fail_transfer(EP_IN, failure)
            dev.draw()
            seen = []
            drawn = await next_kind(q, "card_drawn", seen)
            assert drawn.card is not None
            await drv.status()           # heartbeats and a command round trip after it
            assert "link_lost" not in seen and drv.stats.links_lost == 0
    run(main())


@pytest.mark.parametrize("failure", ["halt", "io"])
def test_a_failed_write_is_sent_again_and_the_command_goes_through(failure):
    async def main():
        async with usb_device("shuffler") as (dev, drv, q):
            port = dev.runtime.port
            if failure == "halt":
                port.halt(EP_OUT)
            else:
                port.fail_transfer(EP_OUT, failure)
            await drv.shuffle()
            seen = []
            await next_kind(q, "shuffle_done", seen)
            assert "link_lost" not in seen and drv.stats.links_lost == 0
            assert dev.status()["stats"]["commands"] == 1      # done once
    run(main())


def test_a_device_that_stays_halted_is_lost_and_found_again_once_cleared():
    # Halted again as soon as the host clears it: nothing gets through, so the link is lost
    # (its heartbeats stop), and reopening the device (a new configuration) brings it back.
    async def main():
        async with usb_device("dice") as (dev, drv, q):
            port = dev.runtime.port
            clear = port.clear_halts
            stuck = {"on": True}

            def clear_and_halt_again(generation, endpoints=(EP_IN, EP_OUT)):
                clear(generation, endpoints)
                if stuck["on"] and endpoints == (EP_IN,):
                    port.halt(EP_IN)
            port.clear_halts = clear_and_halt_again
            port.halt(EP_IN)
            seen = []
            await next_kind(q, "link_lost", seen)
            stuck["on"] = False
            await next_kind(q, "link_restored", seen)
            dev.set_next_dice([1, 2, 3, 4])
            await drv.shake()
            assert (await next_kind(q, "dice_result", seen)).dice == (1, 2, 3, 4)
    run(main())
