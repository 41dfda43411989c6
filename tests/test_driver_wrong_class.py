"""A device that sends a message its class never sends (docs/protocol.md 3.1, 5, 7).

The codec reads such a frame (its layout is good) and the link acknowledges it, so the device
never sends it again: whatever it reported is lost. The protocol holds a device that sends what
it does not allow to be out of order, and the table must hear so, as the device's malfunction
(code 0), rather than the frame vanishing with a line in the log. The scriptable device is the
one of tests/test_link.py, on a real pseudo-terminal through the real pyserial path.
"""
import asyncio

from drivers.driver import Delivery
from drivers.protocol import messages as m
from test_link import (Peer, confirm_started, link_path, next_event, run,  # noqa: F401
                       started, until)


def test_an_agitator_that_says_it_jammed_is_out_of_order(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path, "dice")
        peer.send(m.Jam("gate"))
        bad, before = await next_event(q, "malfunction")
        assert not [e for e in before if e.kind == "jam"]
        assert bad.device == "dice" and bad.code == 0
        assert "Jam" in bad.text and "check the device" in bad.text
        await until(lambda: peer._inflight is None)      # acknowledged: it is not sent again
        assert drv.is_up and drv.stats.rejected == 1
        await drv.close()
        peer.unplug()
    run(main())


def test_a_card_from_a_shoe_as_if_dispensed_is_out_of_order_and_its_card_is_not_told(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path, "shoe")
        peer.send(m.CardDispensed(12, 7))                # the ace of spades, face down
        bad, before = await next_event(q, "malfunction")
        assert not [e for e in before if e.kind == "card_dispensed"]
        assert bad.code == 0 and "CardDispensed" in bad.text
        assert "As" not in bad.text and "12" not in bad.text
        await drv.close()
        peer.unplug()
    run(main())


def test_the_malfunction_is_journaled_before_the_frame_is_acknowledged(link_path):
    # Confirm mode (the daemon's): the report rides on the frame's receipt, so the device
    # hears its frame was taken only once the table's record of the fault is durable.
    async def main():
        peer, drv, q = await confirm_started(link_path)
        peer.send(m.CardDrawn(12, False, 7))             # a shuffler never sends this
        async with asyncio.timeout(5):
            item = await q.get()
        assert isinstance(item, Delivery) and item.event.kind == "malfunction"
        await until(lambda: drv.stats.duplicates >= 1)   # not acknowledged yet: sent again
        assert peer._inflight is not None and q.empty()
        item.confirm()
        await until(lambda: peer._inflight is None)
        await drv.close()
        peer.unplug()
    run(main())
