"""The API as the daemon (controller.service.Service) mounts it, with simulated devices on
pseudo-terminals: commands go through the daemon's one input queue and are journaled with
their role; the stream carries the daemon's public events; devices' heartbeats and identities
reach the page."""
import asyncio
import contextlib
import json

import aiohttp
import pytest

from controller.config import hash_token, parse_text
from controller.journal import Journal
from controller.sdnotify import Notifier

from test_api_support import TOKENS

pytestmark = pytest.mark.hil


def config_text(tmp_path, devices):
    lines = ["[table]", 'id = "T9"', 'game = "q-poker"', 'mode = "shoe"', "boxes = 7", ""]
    for cls, dev in devices.items():
        lines += [f"[devices.{cls}]", f'class = "{cls}"', 'transport = "serial"',
                  f'port = "{dev.port}"', ""]
    lines += ["[journal]", f'path = "{tmp_path / "journal.db"}"', "",
              "[api]", 'listen = "127.0.0.1"', "port = 0", "", "[api.tokens]"]
    lines += [f'{role} = "{hash_token(tok)}"' for role, tok in TOKENS.items()]
    return "\n".join(lines) + "\n"


async def started(config):
    """The daemon's service started in this event loop, once its console API is up: the
    service and the task running it (stop the service, then await the task)."""
    from controller.service import Service

    service = Service(config, notifier=Notifier(None), open_panel=False)
    task = asyncio.ensure_future(service.run())
    for _ in range(1000):
        if service.api is not None or task.done():
            break
        await asyncio.sleep(0.01)
    assert service.api is not None, "the daemon did not start its console API"
    return service, task


@contextlib.asynccontextmanager
async def serving(config):
    """The daemon's service running in this event loop, once its console API is up; stopped
    at the end of the block."""
    service, task = await started(config)
    try:
        yield service
    finally:
        service.stop()
        await asyncio.wait_for(task, 10)


async def health_of(http, service, name, until):
    """The health entry of device ``name`` as the pit display reads it, once ``until(entry)``
    holds (asked every 20 ms, for 20 s at the most)."""
    headers = {"Authorization": f"Bearer {TOKENS['display']}"}
    for _ in range(1000):
        health = await (await http.get(f"{service.api.url}/api/health",
                                       headers=headers)).json()
        device = {d["device"]: d for d in health["devices"]}[name]
        if until(device):
            return device
        await asyncio.sleep(0.02)
    raise AssertionError(f"health of {name} never came to the condition: {device}")


def test_the_daemon_serves_the_api_commands_take_the_queue_and_are_journaled(tmp_path):
    """In process, to read the daemon's own objects; the browser tests run it as a process."""
    from firmware_sim import SimulatedTable

    sim = SimulatedTable(seed=3, speed=200.0)
    devices = {c: sim.add(c) for c in ("shoe", "shuffler")}
    config = parse_text(config_text(tmp_path, devices))

    async def main():
        async with serving(config) as service:
            server = service.api
            async with aiohttp.ClientSession() as http:
                def h(role):
                    return {"Authorization": f"Bearer {TOKENS[role]}"}
                stream = await http.get(f"{server.url}/api/events", headers=h("display"))
                first = await stream.content.readuntil(b"\n\n")
                answers = []
                for role, name, args in (
                        ("supervisor", "open_table", {}), ("dealer", "deck_ready", {}),
                        ("dealer", "place_bet", {"box": 2, "wager": "versus_croupier",
                                                 "amount": 10}),
                        ("dealer", "decide", {"box": 2, "decision": "play"}),
                        ("dealer", "void_round", {"reason": "x"})):
                    r = await http.post(f"{server.url}/api/commands/{name}", headers=h(role),
                                        json=args)
                    answers.append((r.status, await r.json()))
                kinds = []
                while "bet" not in kinds:
                    block = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 10)
                    if b"event: table" in block:
                        kinds.append(json.loads(block.split(b"data: ", 1)[1])["kind"])
                stream.close()
                table = await (await http.get(f"{server.url}/api/table",
                                              headers=h("display"))).json()
            return first, answers, kinds, table

    try:
        first, answers, kinds, table = asyncio.run(main())
    finally:
        sim.stop()
    assert first.startswith(b"id: ") and b"event: snapshot" in first
    assert [s for s, _ in answers] == [200, 200, 200, 409, 403]
    assert "player_decisions" in answers[3][1]["error"]["message"]
    assert answers[2][1]["state"] == "bets_open"
    assert {"state", "bet"} <= set(kinds)
    assert table["table"] == "T9" and table["state"] == "bets_open"
    assert {d["device"]: d["link"] for d in table["devices"]} == {"shoe": "up", "shuffler": "up"}
    for d in table["devices"]:     # heard from by its heartbeats, and known by its hello
        assert isinstance(d["last_heard_s"], float) and 0 <= d["last_heard_s"] < 5
        assert d["identity"]["vendor"] == "tablectl-sim" and d["identity"]["firmware_hash"]
    with Journal.open(tmp_path / "journal.db", readonly=True) as journal:
        cmds = [(r.payload["name"], r.payload["role"])
                for r in journal.records(kinds=["command"])]
        refused = [r.payload["input"]["name"] for r in journal.records(kinds=["refused"])]
        assert journal.verify().ok
    assert cmds == [("open_table", "supervisor"), ("deck_ready", "dealer"),
                    ("place_bet", "dealer"), ("decide", "dealer")]   # the 403 never got there
    assert refused == ["decide"]


def test_a_device_that_cannot_link_shows_why_in_the_health(tmp_path):
    """The pit display showed a device of the wrong class as "connecting", the reason only in
    the log: the health now says why it cannot link, with the advice, and the link is still
    not up. The configured shuffler's port reaches a second simulated shoe."""
    from firmware_sim import SimulatedTable

    sim = SimulatedTable(seed=3, speed=200.0)
    other = sim.add("shoe", "other-shoe")
    config = parse_text(config_text(tmp_path, {"shoe": sim.add("shoe"), "shuffler": other}))

    async def main():
        async with serving(config) as service:
            async with aiohttp.ClientSession() as http:
                headers = {"Authorization": f"Bearer {TOKENS['display']}"}
                for _ in range(1000):
                    health = await (await http.get(f"{service.api.url}/api/health",
                                                   headers=headers)).json()
                    device = {d["device"]: d for d in health["devices"]}["shuffler"]
                    if device.get("problem"):
                        break
                    await asyncio.sleep(0.02)
                table = await (await http.get(f"{service.api.url}/api/table",
                                              headers=headers)).json()
            return device, {d["device"]: d for d in table["devices"]}

    try:
        device, in_table = asyncio.run(main())
    finally:
        sim.stop()
    assert device["device"] == "shuffler" and device["link"] != "up"
    assert "device says it is a shoe, configured as a shuffler" in device["problem"]
    assert other.port in device["problem"]                      # the advice: which port
    assert in_table["shuffler"]["problem"] == device["problem"]
    assert in_table["shoe"]["link"] == "up" and in_table["shoe"]["problem"] is None
