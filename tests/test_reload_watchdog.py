"""A reload drains the inputs accepted before it (test_reload_order) without returning to the
event loop: the watchdog is pinged between them, as the main loop pings between inputs, so a
long backlog does not outlast WatchdogSec (the daemon's ``Service`` in this process, its
notifications read from a real AF_UNIX datagram socket)."""
import asyncio

from controller.config import load_config
from controller.sdnotify import Notifier
from controller.service import Service
from test_sdnotify import server  # noqa: F401 - the notify socket fixture
from test_sdnotify_audit import drain
from test_token_reload import A, S, write

BACKLOG = 60        # open_table, then refusals: each one handled and journaled


def test_a_reload_pings_the_watchdog_while_it_drains_a_backlog(tmp_path, server):
    sock, notify_path = server
    path = write(tmp_path, {"dealer": A, "supervisor": S})
    # WatchdogSec of 4 ms: a ping is due every millisecond, so a drain of many journaled
    # inputs is well past it.
    notifier = Notifier(notify_path, watchdog_usec=4000)

    async def scenario():
        svc = Service(load_config(path), notifier=notifier, open_panel=False)
        task = asyncio.ensure_future(svc.run())
        for _ in range(1000):
            if svc.api is not None or task.done():
                break
            await asyncio.sleep(0.01)
        assert svc.api is not None, "the daemon did not start"
        accepted = [asyncio.ensure_future(svc.submit("open_table", "supervisor", {}))
                    for _ in range(BACKLOG)]
        await asyncio.sleep(0)
        assert svc.queue.qsize() >= BACKLOG
        drain(sock)                          # what the main loop sent so far
        record = svc.reload()                # SIGHUP: the drain, then the reload, at once
        sent = drain(sock)
        replies = await asyncio.wait_for(asyncio.gather(*accepted), 10)
        svc.stop()
        await task
        return record, sent, replies

    record, sent, replies = asyncio.run(scenario())
    assert record["outcome"] == "applied", record
    assert replies[0]["ok"] is True and all(not r["ok"] for r in replies[1:]), replies[:2]
    # Sent before RELOADING=1 (which a socket queue filled by the pings keeps back for the
    # next notification): none before the fix, as nothing else runs during the drain.
    reloading = next((i for i, m in enumerate(sent) if m.startswith("RELOADING=1")), len(sent))
    assert "WATCHDOG=1" in sent[:reloading], sent
