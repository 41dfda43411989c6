"""A device's event is journaled exactly once across a crash of the daemon.

The real daemon (`tablectl run`) talks to an in-test shoe over a pseudo-terminal (the scripted
device of tests/test_link.py). The shoe loses the daemon's acknowledgement of a card, so the
kill lands, deterministically, after the card is journaled and before the device knows it was
taken: the moment is observed from outside (the journal holds the card, the daemon's Ack
went out) and the daemon is killed with SIGKILL. The restarted daemon resumes the shoe's
session from its journal; the shoe sends the card again under the same number; it is known,
acknowledged and not journaled again.
"""
import asyncio
import signal
from types import SimpleNamespace

import pytest

from controller.journal import Journal
from controller.rig import Rig
from drivers.protocol import messages as m

from test_link import UNREADABLE, Peer, until

pytestmark = pytest.mark.hil


def journal_of(rig):
    with Journal.open(rig.journal_path, readonly=True) as j:
        return list(j.records())


def cards(records):
    return [r.payload["event"]["card"] for r in records
            if r.kind == "device" and r.payload["event"]["kind"] == "card_drawn"]


async def journal_until(rig, cond, timeout=20.0):
    async with asyncio.timeout(timeout):
        while True:
            recs = await asyncio.to_thread(journal_of, rig) if rig.journal_path.exists() else []
            if cond(recs):
                return recs
            await asyncio.sleep(0.05)


def shoe_and_rig(tmp_path):
    """The in-test shoe, plugged in on a pseudo-terminal, and a rig whose daemon is configured
    for it alone (the shuffler's port is absent); the daemon is not started. In a coroutine:
    the shoe runs in its event loop."""
    link = str(tmp_path / "tty-shoe")
    shoe = Peer(link, "shoe")
    shoe.plug()
    rig = Rig(tmp_path, "q-poker", "shoe")
    rig.devices = {"shoe": SimpleNamespace(port=link),
                   "shuffler": SimpleNamespace(port=str(tmp_path / "tty-absent"))}
    rig.write_config()
    return shoe, rig


def test_card_journaled_before_a_kill_that_beat_its_ack_is_journaled_once(tmp_path):
    async def main():
        shoe, rig = shoe_and_rig(tmp_path)
        try:
            await asyncio.to_thread(rig.start_controller)
            await journal_until(rig, lambda rs: any(r.kind == "link" for r in rs))
            shoe.deaf_to_acks = True                # the daemon's ack will not be heard
            shoe.send(m.CardDrawn(12))
            seq = shoe._inflight[0]
            await journal_until(rig, lambda rs: len(cards(rs)) == 1)
            await until(lambda: any(isinstance(x, m.Ack) and x.seq == seq
                                    for _, x in shoe.received), timeout=10)
            assert await asyncio.to_thread(rig.kill, signal.SIGKILL) == -signal.SIGKILL
            assert shoe._inflight is not None and shoe._inflight[0] == seq
            shoe.deaf_to_acks = False
            await asyncio.to_thread(rig.start_controller)
            await until(lambda: shoe._inflight is None, timeout=15)
            hello = [x for _, x in shoe.received if isinstance(x, m.Hello)][-1]
            assert hello.resume is True
            shoe.send(m.CardDrawn(0))               # a later card: behind the first one
            recs = await journal_until(rig, lambda rs: len(cards(rs)) >= 2)
            assert await asyncio.to_thread(rig.kill, signal.SIGTERM) == 0
            recs = await asyncio.to_thread(journal_of, rig)
            assert len(cards(recs)) == 2, cards(recs)     # the first once, then the second
            links = [r.payload for r in recs if r.kind == "device"
                     and r.payload["event"]["kind"] == "card_drawn"]
            assert [x["link"]["seq"] for x in links] == [seq, seq + 1]
            assert links[0]["link"]["session"] == links[1]["link"]["session"]
        finally:
            if rig.proc is not None and rig.proc.poll() is None:
                rig.proc.kill()
                rig.proc.wait(10)
            shoe.unplug()
    asyncio.run(asyncio.wait_for(main(), 90))


def lost_events(records):
    return [r.payload for r in records if r.kind == "device"
            and r.payload["event"]["kind"] == "malfunction" and r.payload["event"]["code"] == 0]


def test_an_unreadable_frame_is_journaled_before_its_nak_and_once_across_a_kill(tmp_path):
    async def main():
        shoe, rig = shoe_and_rig(tmp_path)
        at_nak = []                                 # the journal as the NAK arrived
        shoe.on_nak = lambda nak: at_nak.append((nak, journal_of(rig)))
        try:
            await asyncio.to_thread(rig.start_controller)
            await journal_until(rig, lambda rs: any(r.kind == "link" for r in rs))
            shoe.deaf_to_naks = True                # as if the daemon died before its NAK
            shoe.send(UNREADABLE["bad-payload"][0])
            seq = shoe._inflight[0]
            await until(lambda: at_nak, timeout=10)
            nak, recs = at_nak[0]
            assert (nak.seq, nak.reason) == (seq, m.NAK_BAD_PAYLOAD)
            (lost,) = lost_events(recs)
            assert lost["link"]["seq"] == seq and "lost" in lost["event"]["text"]
            assert await asyncio.to_thread(rig.kill, signal.SIGKILL) == -signal.SIGKILL
            assert shoe._inflight is not None and shoe._inflight[0] == seq
            shoe.deaf_to_naks = False
            await asyncio.to_thread(rig.start_controller)
            # The restarted daemon resumes the session; the frame comes again under its number:
            # known from the journal, refused, not reported a second time.
            await until(lambda: shoe._inflight is None, timeout=15)
            hello = [x for _, x in shoe.received if isinstance(x, m.Hello)][-1]
            assert hello.resume is True
            shoe.send(m.CardDrawn(12))
            await journal_until(rig, lambda rs: len(cards(rs)) == 1)
            assert await asyncio.to_thread(rig.kill, signal.SIGTERM) == 0
            recs = await asyncio.to_thread(journal_of, rig)
            assert [x["link"] for x in lost_events(recs)] == [lost["link"]]
            (card,) = [r.payload for r in recs if r.kind == "device"
                       and r.payload["event"]["kind"] == "card_drawn"]
            assert card["link"]["seq"] == seq + 1
            assert card["link"]["session"] == lost["link"]["session"]
        finally:
            if rig.proc is not None and rig.proc.poll() is None:
                rig.proc.kill()
                rig.proc.wait(10)
            shoe.unplug()
    asyncio.run(asyncio.wait_for(main(), 90))
