"""The pit display's health of a device that is linked but out of order: the daemon in this
process (controller.service.Service) with simulated devices on pseudo-terminals, read through
its HTTP API."""
import asyncio

import aiohttp
import pytest

from controller.config import parse_text

from test_api_service import config_text, health_of, serving

pytestmark = pytest.mark.hil



def shoe_health_after(tmp_path, fault, until, **fault_args):
    """The daemon with a simulated shoe and shuffler: once the shoe is linked, ``fault`` is
    injected into it; the shoe's health entry once ``until(entry)`` holds."""
    from firmware_sim import SimulatedTable

    sim = SimulatedTable(seed=3, speed=200.0)
    devices = {c: sim.add(c) for c in ("shoe", "shuffler")}
    config = parse_text(config_text(tmp_path, devices))

    async def main():
        async with serving(config) as service:
            async with aiohttp.ClientSession() as http:
                await health_of(http, service, "shoe", lambda d: d["link"] == "up")
                devices["shoe"].inject(fault, **fault_args)
                return await health_of(http, service, "shoe", until)

    try:
        return asyncio.run(main())
    finally:
        sim.stop()


@pytest.mark.parametrize("fault,condition,words", [
    ("malfunction", "malfunction", "clear_malfunction"),
    ("jam", "jam", "clear_malfunction"),
    ("door_open", "door_open", "close"),
])
def test_a_linked_device_out_of_order_names_its_problem_and_the_way_out(tmp_path, fault,
                                                                        condition, words):
    # The link is up, so the health had no problem to show: the pit saw the condition's name
    # alone, neither what it means nor what puts it right.
    device = shoe_health_after(tmp_path, fault, lambda d: condition in d["conditions"],
                               **({"text": "reader 7s"} if fault == "malfunction" else {}))
    assert device["link"] == "up"
    problem = device["problem"] or ""
    assert "shoe" in problem and words in problem
    assert "7s" not in problem          # the device's own words may name a card


def test_a_device_that_answers_hello_but_keeps_no_heartbeat_names_why_its_link_is_down(
        tmp_path):
    # The link is lost to silence and each hello after is answered, so no opening failed: the
    # health said "lost" with no problem, the reason and its way out only in the journal.
    device = shoe_health_after(tmp_path, "heartbeat_stop",
                               lambda d: d["link"] != "up" and d["problem"])
    assert "heartbeat" in device["problem"] and "check its firmware" in device["problem"]
