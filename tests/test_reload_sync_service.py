"""The control socket's ``{"reload": true}`` asked of a daemon still starting (in process): it
is answered once the table is ready, with the reload done then; asked of one that stops before
it is ready, it is answered that nothing was reloaded."""
import asyncio

from controller.config import load_config
from controller.sdnotify import Notifier
from controller.service import Service
from test_token_reload import A, B, reloads, write


def test_a_request_while_starting_is_answered_once_the_reload_is_done(tmp_path):
    path = write(tmp_path, {"dealer": A})

    async def scenario():
        svc = Service(load_config(path), notifier=Notifier(None), open_panel=False)
        write(tmp_path, {"dealer": B})
        asked = asyncio.create_task(svc.reload_request())
        await asyncio.sleep(0.05)
        assert not asked.done()                  # nothing to reload before the table is up
        task = asyncio.create_task(svc.run())
        reply = await asyncio.wait_for(asked, 60)
        ready = svc._ready
        svc.stop()
        await task
        return reply, ready

    reply, ready = asyncio.run(scenario())
    assert ready and reply["ok"] is True
    assert reply["reload"]["roles"] == {"changed": ["dealer"], "added": [], "removed": []}
    (rec,) = reloads(tmp_path / "j.db")
    assert reply["seq"] == rec.seq and reply["reload"] == rec.payload


def test_a_request_to_a_daemon_that_stops_before_it_is_ready_reloads_nothing(tmp_path):
    path = write(tmp_path, {"dealer": A})

    async def scenario():
        svc = Service(load_config(path), notifier=Notifier(None), open_panel=False)
        asked = asyncio.create_task(svc.reload_request())
        await asyncio.sleep(0.05)
        svc.stop()
        return await asyncio.wait_for(asked, 10)

    reply = asyncio.run(scenario())
    assert reply["ok"] is False and "reload" not in reply
    assert "stopping" in reply["error"] and "nothing was reloaded" in reply["error"]
    assert str(path) in reply["error"]
