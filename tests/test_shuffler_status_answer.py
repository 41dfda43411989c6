"""The shuffler's answer to the host's status request, told from a report it sends on its own.

Protocol version 1 gives a ``StatusReport`` no reference to the request it answers
(docs/protocol.md 3.7): the shuffler driver takes as the answer to a request the first report
after the shuffler accepted that request, on the same link, and reports it as
``status_answer`` naming the table's ``ask``. A report no request was owed (one the firmware
sends on its own, one answering a request made before the link was lost) stays ``status``.

The real driver over a pseudo-terminal, against the simulated shuffler.
"""
import asyncio
import contextlib

import pytest

from drivers.factory import open_driver
from drivers.link import LinkDown

firmware_sim = pytest.importorskip("firmware_sim.table")

pytestmark = pytest.mark.hil

FAST = dict(heartbeat_s=0.05, link_timeout_s=0.5)
STATUS_KINDS = ("status", "status_answer")


@contextlib.asynccontextmanager
async def shuffler():
    with firmware_sim.SimulatedTable(seed=7, speed=1000) as table:
        dev = table.add("shuffler")
        q = asyncio.Queue()
        drv = open_driver(dev.spec(**FAST), q)
        try:
            await next_of(q, "link_up")
            yield dev, drv, q
        finally:
            await drv.close()


async def next_of(q, *kinds, timeout=5.0):
    async with asyncio.timeout(timeout):
        while True:
            e = await q.get()
            if e.kind in kinds:
                return e


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 60))


def test_a_report_the_shuffler_sends_on_its_own_is_no_answer_and_the_answer_names_its_ask():
    async def main():
        async with shuffler() as (dev, drv, q):
            await drv.shuffle()
            await next_of(q, "shuffle_done")
            dev.inject("jam", where="exit")
            await next_of(q, "jam")
            dev.clear_jam()                     # the firmware then reports its state itself
            own = await next_of(q, *STATUS_KINDS)
            assert own.kind == "status" and own.state == "idle"
            answer = await drv.status(ask="4.1")
            assert (answer.kind, answer.ask, answer.state) == ("status_answer", "4.1", "idle")
            queued = await next_of(q, *STATUS_KINDS)
            assert queued == answer             # the same event, journaled by the service
    run(main())


def test_the_report_of_a_request_the_link_lost_is_no_answer_once_it_is_back():
    async def main():
        async with shuffler() as (dev, drv, q):
            # The report and every copy of it for well past the driver's wait (twice the
            # link-loss timeout) are lost: the request is accepted, its answer does not come.
            dev.inject("drop", count=8, frames="events")
            with pytest.raises(LinkDown, match="no status report"):
                await drv.status(ask="4.1")
            await next_of(q, "link_lost")
            await next_of(q, "link_restored")
            late = await next_of(q, *STATUS_KINDS)
            # Sent again in the resumed session: what it says is as old as the lost request.
            assert late.kind == "status"
            answer = await drv.status(ask="4.2")
            assert (answer.kind, answer.ask) == ("status_answer", "4.2")
    run(main())


def test_a_report_the_firmware_sends_on_its_own_while_a_request_is_answered_is_no_answer():
    async def main():
        async with shuffler() as (dev, drv, q):
            # An unsolicited report first (a stale one: it says ready while the shuffler is
            # idle), then the request: the report before the request's acceptance is no
            # answer to it.
            dev.inject("status_report", state="ready")
            answer = await drv.status(ask="9.1")
            first = await next_of(q, *STATUS_KINDS)
            second = await next_of(q, *STATUS_KINDS)
            assert (first.kind, first.state) == ("status", "ready")
            assert (second.kind, second.ask, second.state) == ("status_answer", "9.1", "idle")
            assert second == answer
    run(main())
