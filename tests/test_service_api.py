"""The daemon serves the console API when tokens are configured: commands from it take their
turn on the daemon's one queue and are journaled with their role."""
import asyncio
import json

import aiohttp

from controller.config import hash_token, parse_text
from controller.journal import Journal
from controller.sdnotify import Notifier
from controller.service import Service

CONFIG = """
[table]
id = "api-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"

[api]
listen = "127.0.0.1"
port = 0

[api.tokens]
display = "{display}"
supervisor = "{supervisor}"
"""


def test_console_api_runs_in_the_daemon(tmp_path):
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db", display=hash_token("d" * 32),
                                   supervisor=hash_token("s" * 32)))

    async def scenario():
        svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        for _ in range(500):
            if svc.api is not None:
                break
            await asyncio.sleep(0.01)
        assert svc.api is not None, "the console API did not start"
        base = svc.api.url
        async with aiohttp.ClientSession() as http:
            auth = {"Authorization": "Bearer " + "s" * 32}
            async with http.post(f"{base}/api/commands/open_table", headers=auth) as resp:
                assert resp.status == 200, await resp.text()
            async with http.post(f"{base}/api/commands/deck_ready",
                                 headers={"Authorization": "Bearer " + "d" * 32}) as resp:
                assert resp.status == 403                 # a display may only look
            async with http.get(f"{base}/api/table",
                                headers={"Authorization": "Bearer " + "d" * 32}) as resp:
                body = await resp.json()
                assert resp.status == 200 and "shuffling" in json.dumps(body)
        svc.stop()
        await task

    asyncio.run(scenario())
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        cmds = [(r.payload["name"], r.source) for r in j.records(kinds=["command"])]
        assert cmds == [("open_table", "supervisor")]


def test_the_console_is_tried_again_when_its_address_is_not_there_yet(tmp_path, monkeypatch):
    # At boot the address may not be up yet, or another process holds the port: the table
    # runs, and the console starts once the address can be bound, without a restart.
    import socket

    import controller.service as service

    monkeypatch.setattr(service, "API_RETRY_S", 0.05)
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    cfg = parse_text(CONFIG.replace("port = 0", f"port = {port}").format(
        journal=tmp_path / "j.db", display=hash_token("d" * 32),
        supervisor=hash_token("s" * 32)))

    async def scenario():
        svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        for _ in range(40):
            await asyncio.sleep(0.01)
        assert svc.api is None and not task.done()        # the table runs without it
        holder.close()
        for _ in range(500):
            if svc.api is not None:
                break
            await asyncio.sleep(0.01)
        assert svc.api is not None and svc.api.port == port
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{svc.api.url}/api/table",
                                headers={"Authorization": "Bearer " + "d" * 32}) as resp:
                assert resp.status == 200
        svc.stop()
        await task

    asyncio.run(scenario())
