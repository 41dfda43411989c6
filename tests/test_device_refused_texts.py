"""What the link says of a device it refuses or cannot reach (the health's ``problem``, a
command's error) quotes names in the JSON notation the rest of the controller's texts use
(controller.shown): ``"shoe"``, not Python's ``'shoe'``. The scriptable device of
tests/test_link.py on a real pseudo-terminal, and the simulator's USB devices through pyusb."""
import asyncio

import pytest

from drivers.factory import open_driver
from drivers.protocol import messages as m
from drivers.spec import DeviceSpec
from drivers.transport import TransportError, UsbTransport
from test_firmware_approval_link import APPROVED, OTHER, FirmwarePeer
from test_link import FAST, link_path, run, until  # noqa: F401

SIM_BACKEND = "firmware_sim.usb_backend:get_backend"


def test_the_refused_firmware_problem_names_the_device_in_json(link_path):
    async def main():
        peer = FirmwarePeer(link_path, "shoe", firmware_hash=OTHER)
        peer.plug()
        spec = DeviceSpec(id="shoe", device_class="shoe", port=link_path,
                          firmware_hash=APPROVED.hex(), **FAST)
        drv = open_driver(spec, asyncio.Queue())
        await until(lambda: drv.problem is not None and "approved" in drv.problem)
        problem = drv.problem
        await drv.close()
        peer.unplug()
        assert 'device "shoe"' in problem and "'shoe'" not in problem, problem
    run(main())


def test_a_command_to_a_device_not_linked_names_it_in_json(link_path):
    from drivers.link import NotSent

    async def main():
        drv = open_driver(DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST),
                          asyncio.Queue())
        with pytest.raises(NotSent) as err:
            await drv.link.request(m.Heartbeat(0))
        await drv.close()
        text = str(err.value)
        assert 'device "shoe" is not connected' in text and "'shoe'" not in text, text
    run(main())


def test_a_serial_port_that_cannot_be_opened_is_named_in_json(link_path):
    async def main():
        drv = open_driver(DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST),
                          asyncio.Queue())
        await until(lambda: drv.problem is not None)
        problem = drv.problem
        await drv.close()
        assert f'cannot open serial port "{link_path}"' in problem, problem
    run(main())


def test_usb_units_sharing_a_serial_number_or_none_set_are_named_in_json():
    firmware_sim = pytest.importorskip("firmware_sim.table")

    async def main():
        with firmware_sim.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
            table.add("shoe", "shoe-a", serial="0000")
            table.add("shoe", "shoe-b", serial="0000")
            texts = []
            for serial in ("0000", ""):
                t = UsbTransport(0x1D50, 0x6018, serial=serial, backend=SIM_BACKEND)
                with pytest.raises(TransportError) as err:
                    await t.open()
                texts.append(str(err.value))
            with pytest.raises(TransportError) as err:
                await UsbTransport(0x1D50, 0x6018, backend="no_such_module:f").open()
            texts.append(str(err.value))
        return texts

    shared, unset, backend = asyncio.run(asyncio.wait_for(main(), 30))
    assert 'serial number "0000"' in shared and "'0000'" not in shared, shared
    assert 'serial numbers "0000", "0000"' in unset, unset
    assert 'usb_backend "no_such_module:f"' in backend, backend
