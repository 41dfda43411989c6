"""The approved firmware through the daemon's service (controller.service.Service) with the
simulator's devices on pseudo-terminals: table.toml's `firmware_hash` reaches the link, and
the health says why a device of another firmware is not linked, while the device whose
firmware is the approved one links. The simulator gives the SHA-256 of its own firmware source
(firmware-sim/README.md)."""
import asyncio

import aiohttp
import pytest

from controller.config import parse_text
from test_api_service import config_text, health_of, serving

pytestmark = pytest.mark.hil

APPROVED_ELSEWHERE = "ab" * 32          # a hash no simulated firmware gives


def test_only_the_approved_firmware_links_and_the_health_says_why(tmp_path):
    from firmware_sim import SimulatedTable
    from firmware_sim.runtime import firmware_hash

    sim = SimulatedTable(seed=3, speed=200.0)
    shoe, shuffler = sim.add("shoe"), sim.add("shuffler")
    text = config_text(tmp_path, {"shoe": shoe, "shuffler": shuffler})
    shoe_hash = firmware_hash("shoe").hex()
    text = text.replace(f'port = "{shoe.port}"\n',
                        f'port = "{shoe.port}"\nfirmware_hash = "{shoe_hash.upper()}"\n')
    text = text.replace(f'port = "{shuffler.port}"\n',
                        f'port = "{shuffler.port}"\nfirmware_hash = "{APPROVED_ELSEWHERE}"\n')
    config = parse_text(text)
    assert config.device("shuffler").firmware_hash == APPROVED_ELSEWHERE

    async def main():
        async with serving(config) as service:
            async with aiohttp.ClientSession() as http:
                return {"shoe": await health_of(http, service, "shoe",
                                                lambda d: d["link"] == "up"),
                        "shuffler": await health_of(http, service, "shuffler",
                                                    lambda d: d.get("problem"))}

    try:
        devices = asyncio.run(main())
    finally:
        sim.stop()
    refused = devices["shuffler"]
    assert refused["link"] != "up"
    given = firmware_hash("shuffler").hex()
    assert f"gives firmware hash {given}, not the approved {APPROVED_ELSEWHERE}" \
        in refused["problem"], refused["problem"]
    assert '"shuffler"' in refused["problem"]
    assert "install the approved firmware" in refused["problem"]
    assert devices["shoe"]["link"] == "up" and devices["shoe"]["problem"] is None
