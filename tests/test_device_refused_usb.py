"""Two USB units that give the configured serial number are a refusal of what was found
(``duplicate_serial``), told once however often the link looks again, and journaled by the
daemon as ``device_refused`` before the health shows it. The real pyusb code path on the
firmware simulator's pyusb backend (a backend lives in its process: the daemon's service runs
in this one, as tests/test_api_service.py runs it)."""
import asyncio
import json

import aiohttp
import pytest
import structlog

from controller.config import hash_token, parse_text
from controller.journal import Journal
from drivers.factory import open_driver
from test_api_service import health_of, serving
from test_api_support import TOKENS

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


def usb_config(tmp_path, shoe_serial, shuffler):
    lines = ["[table]", 'id = "T9"', 'game = "q-poker"', 'mode = "shoe"', "boxes = 7", "",
             "[devices.shoe]", 'class = "shoe"', 'transport = "usb"', "usb_vendor = 0x1d50",
             "usb_product = 0x6018", f'usb_serial = "{shoe_serial}"',
             f'usb_backend = "{SIM_BACKEND}"', "",
             "[devices.shuffler]", 'class = "shuffler"', 'transport = "serial"',
             f'port = "{shuffler.port}"', "",
             "[journal]", f'path = "{tmp_path / "journal.db"}"', "",
             "[api]", 'listen = "127.0.0.1"', "port = 0", "", "[api.tokens]"]
    lines += [f'{role} = "{hash_token(tok)}"' for role, tok in TOKENS.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.hil
def test_the_daemon_journals_the_units_sharing_the_serial_number_once_and_publishes_it(
        tmp_path):
    sim = firmware_sim.SimulatedTable(seed=3, speed=200.0)
    shuffler = sim.add("shuffler")
    # A serial number that reads as a card: published marked as the device's, not refused as a
    # face-down card's would be.
    config = parse_text(usb_config(tmp_path, "5s", shuffler))
    display = {"Authorization": f"Bearer {TOKENS['display']}"}

    async def main():
        with structlog.testing.capture_logs() as logs:
            return await run(logs)

    async def run(logs):
        async with serving(config) as service:
            async with aiohttp.ClientSession() as http:
                stream = await http.get(f"{service.api.url}/api/events", headers=display)
                await stream.content.readuntil(b"\n\n")          # the snapshot
                # Two units giving the shoe's serial number plugged in once the stream is read.
                sim.add("shoe", "shoe-a", transport="usb", serial="5s")
                sim.add("shoe", "shoe-b", transport="usb", serial="5s")
                event = None
                async with asyncio.timeout(20):
                    while event is None:
                        block = await stream.content.readuntil(b"\n\n")
                        if b"event: table" in block:
                            doc = json.loads(block.split(b"data: ", 1)[1])
                            if doc["kind"] == "device_refused":
                                event = doc
                stream.close()
                health = await health_of(http, service, "shoe",
                                         lambda d: d.get("problem") and '"5s"' in d["problem"])
                # Looked at again and again (its back-off), journaled once.
                async with asyncio.timeout(30):
                    while len([e for e in logs if e["event"] == "device refused"
                               and e.get("device") == "shoe"]) < 4:
                        await asyncio.sleep(0.05)
                with Journal.open(tmp_path / "journal.db", readonly=True) as journal:
                    records = list(journal.records(kinds=["device_refused"]))
                    ok = journal.verify().ok
                return event, health, records, ok

    try:
        event, health, records, ok = asyncio.run(main())
    finally:
        sim.stop()
    assert ok
    [rec] = records
    assert rec.source == "service" and rec.round_id is None
    p = rec.payload
    assert (p["device"], p["device_class"], p["reason"]) == ("shoe", "shoe", "duplicate_serial")
    assert p["given"] == {"serial": "5s", "units": 2}
    assert p["text"] == health["problem"]
    assert health["link"] != "up"
    assert event["device"] == "shoe" and event["reason"] == "duplicate_serial"
    assert event["given"] == {"serial": "5s (as the device names it)", "units": 2}
    assert event["text"] == p["text"] and event["port"] == p["port"]
