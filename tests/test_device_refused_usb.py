"""Two USB units that give the configured serial number are a refusal of what was found
(``duplicate_serial``), told once however often the link looks again, and journaled by the
daemon as ``device_refused`` before the health shows it. The real pyusb code path on the
firmware simulator's pyusb backend (a backend lives in its process: the daemon's service runs
in this one, as tests/test_api_service.py runs it)."""
import asyncio

import pytest
import structlog

from drivers.factory import open_driver

firmware_sim = pytest.importorskip("firmware_sim.table")
SIM_BACKEND = "firmware_sim.usb_backend:get_backend"


def test_two_units_giving_the_serial_number_are_told_once_as_a_refusal():
    async def main():
        with firmware_sim.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
            table.add("shoe", "shoe-a", serial="0000")
            spare = table.add("shoe", "shoe-b", serial="0000")
            spec = spare.spec(id="shoe", link_timeout_s=0.5, heartbeat_s=0.05)
            told, q = [], asyncio.Queue()
            with structlog.testing.capture_logs() as logs:
                drv = open_driver(spec, q, on_refused=told.append)
                while len([e for e in logs if e["event"] == "device refused"]) < 4:
                    await asyncio.sleep(0.05)
                problem = drv.problem
                assert not drv.is_up
                spare.disconnect()                   # the spare unplugged: the table's one
                await drv.wait_up(10)
                await drv.close()
        [refusal] = told
        assert refusal["reason"] == "duplicate_serial" and refusal["device"] == "shoe"
        assert refusal["given"] == {"serial": "0000", "units": 2}
        assert refusal["expected"] == {"serial": "0000", "units": 1}
        assert refusal["port"] == "usb:1d50:6018:0000"
        assert refusal["text"] == problem
        assert 'serial number "0000"' in problem and "'0000'" not in problem, problem
        assert "unplug" in problem
    asyncio.run(asyncio.wait_for(main(), 60))
