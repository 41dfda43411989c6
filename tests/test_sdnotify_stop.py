"""STOPPING=1 given up on a full notify queue at the stop: nothing follows it to carry it
(the notifications that would have sent it again, KEPT, end with the daemon), so the stop
tries once more, waiting a bounded time for room without holding the event loop. The daemon
(``Service``) in this process, against a real AF_UNIX datagram socket it fills itself."""
import asyncio
import socket

from controller.config import parse_text
from controller.journal import Journal
from controller.sdnotify import Notifier
from controller.service import Service
from service_helpers import journal_only
from test_sdnotify import server  # noqa: F401 - the notify socket fixture
from test_sdnotify_audit import drain, fill

def daemon(tmp_path, path):
    notifier = Notifier.from_env({"NOTIFY_SOCKET": path})
    svc = Service(parse_text(journal_only(tmp_path / "j.db")), notifier=notifier,
                  open_panel=False)
    return svc, notifier


async def ready(svc):
    task = asyncio.create_task(svc.run())
    while svc.runner is None or not svc._ready:
        assert not task.done(), task.result()
        await asyncio.sleep(0.01)
    return task


def stopped(path):
    """Whether the daemon has journaled its stop (read as a reader beside it)."""
    if not path.exists():
        return False
    with Journal.open(path, readonly=True) as j:
        last = j.last(kind="service")
    return last is not None and last.payload.get("event") == "stop"


def test_a_stopping_given_up_on_a_full_queue_is_sent_once_the_manager_reads_again(
        tmp_path, server):
    sock, path = server
    svc, notifier = daemon(tmp_path, path)

    async def scenario():
        task = await ready(svc)
        fill(notifier)                      # the manager reads nothing for a moment
        svc.stop("SIGTERM")                 # STOPPING=1 given up: the queue is full
        # The main loop's last ping (which would carry it) finds the queue still full; the
        # manager catches up only once the daemon has journaled its stop.
        while not task.done() and not stopped(tmp_path / "j.db"):
            await asyncio.sleep(0.01)
        early = drain(sock)
        code = await asyncio.wait_for(task, 60)
        return code, early

    code, early = asyncio.run(scenario())
    assert code == 0
    assert not any(m.startswith("STOPPING=1") for m in early)
    assert "STOPPING=1\nSTATUS=stopping on SIGTERM" in drain(sock)


def test_a_queue_that_stays_full_does_not_hold_the_stop(tmp_path, server):
    sock, path = server
    svc, notifier = daemon(tmp_path, path)
    beats = []

    async def scenario():
        task = await ready(svc)
        fill(notifier)
        svc.stop("SIGTERM")

        async def beat():                   # the event loop goes on while the stop waits
            while not task.done():
                beats.append(1)
                await asyncio.sleep(0.01)
        beating = asyncio.create_task(beat())
        code = await asyncio.wait_for(task, 60)
        await beating
        return code

    assert asyncio.run(scenario()) == 0     # it ended: the wait for room is bounded
    assert len(beats) >= 2
    assert not any(m.startswith("STOPPING=1") for m in drain(sock))
