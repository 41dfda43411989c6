"""A host command on a noisy line (docs/protocol.md 3.1): the copies the host sends again at
once on the device's NAKs are bounded, and do not count as the retries that end in a lost
link; only the ack timeouts do. The scriptable device of tests/test_link.py on a real
pseudo-terminal through the real pyserial path."""
import pytest

from drivers.link import LinkDown
from drivers.protocol import messages as m
from drivers.protocol.codec import get_codec
from test_link import SLACK, Peer, link_path, next_event, run, started  # noqa: F401


class Noisy(Peer):
    """A device on a line hit by noise: the next ``damage`` copies of the host's ``hit``
    command arrive damaged (their CRC fails), and the device asks for each again with the
    NAK its codec gives a damaged frame, as any device does."""

    damage = 0
    hit = m.DeckCheck

    def _handle(self, seq, msg):
        if self.damage and isinstance(msg, self.hit):
            self.damage -= 1
            frame = bytearray(self.codec.encode(msg, seq))
            frame[-1] ^= 0xFF                           # the noise
            (item,) = get_codec(self.codec_name, receive_from="host").feed(bytes(frame))
            self.rejected.append(item)
            self.send_now(m.Nak(item.seq, item.nak))
            return
        super()._handle(seq, msg)

    def hit_copies(self):
        """The sequence numbers of every copy of ``hit`` that arrived, damaged or whole."""
        return ([r.seq for r in self.rejected if r.type == self.hit.TYPE]
                + [s for s, msg in self.received if isinstance(msg, self.hit)])


async def noisy(link_path, damage):
    peer, drv, q, _ = await started(link_path, timing=SLACK)
    peer.__class__ = Noisy
    peer.damage = damage
    return peer, drv, q


@pytest.mark.parametrize("damage", [4, 6])
def test_a_burst_of_noise_over_a_command_and_its_quick_copies_costs_no_link(link_path, damage):
    # 4: the first copy and the 3 sent at once on the NAKs, back to back: a burst of a few
    # milliseconds damaged them all, and the fourth NAK used up the last transmission, so the
    # link was declared lost although the line was fine an ack timeout later. 6: the burst
    # lasts over two of the copies sent on the ack timeout too.
    async def main():
        peer, drv, q = await noisy(link_path, damage)
        peer.reactions = {m.DeckCheck: [m.DeckCheckResult(52)]}
        await drv.deck_check()                                  # accepted, no LinkDown
        result, before = await next_event(q, "deck_check_result")
        assert not [e for e in before if e.kind == "link_lost"] and drv.is_up
        assert peer.acted == [m.DeckCheck()]                    # executed once
        copies = peer.hit_copies()
        assert len(set(copies)) == 1                            # every copy the same SEQ
        assert len(copies) == damage + 1 and peer.damage == 0
        await drv.close()
        peer.unplug()
    run(main())


def test_a_command_never_acknowledged_after_a_burst_still_fails_at_the_time_bound(link_path):
    # The burst damages the first copy and the 3 sent at once on the NAKs; then the device
    # hears the command but never answers it. The host still sends it on each ack timeout
    # (3 retries) before it gives up: the quick copies took none of them.
    async def main():
        peer, drv, q = await noisy(link_path, 4)
        peer.ignore_commands = True
        with pytest.raises(LinkDown, match="no acknowledgement of DeckCheck after 4 attempts"):
            await drv.deck_check()
        lost, _ = await next_event(q, "link_lost")
        assert "no acknowledgement" in lost.reason
        copies = peer.hit_copies()
        assert len(set(copies)) == 1
        assert len(peer.rejected) == 4                          # the burst
        assert len([s for s, msg in peer.received if isinstance(msg, m.DeckCheck)]) == 3
        assert peer.acted == []
        peer.ignore_commands = False
        await next_event(q, "link_restored")
        await drv.close()
        peer.unplug()
    run(main())


def test_a_line_that_damages_every_copy_still_ends_in_a_lost_link(link_path):
    # The device NAKs every copy: the host sends again at once on 3 NAKs only (the two do not
    # trade the frame as fast as the line goes), then on each ack timeout, and gives up after
    # its retries like a command never acknowledged.
    async def main():
        peer, drv, q = await noisy(link_path, 10**6)
        with pytest.raises(LinkDown, match="no acknowledgement of DeckCheck"):
            await drv.deck_check()
        lost, _ = await next_event(q, "link_lost")
        assert "no acknowledgement" in lost.reason and not drv.is_up
        naks_answered = drv.link.timing.retries
        timed = drv.link.timing.retries
        copies = peer.hit_copies()
        assert len(copies) == 1 + naks_answered + timed and len(set(copies)) == 1
        assert drv.stats.retransmissions == naks_answered + timed
        assert peer.acted == []
        peer.damage = 0
        await next_event(q, "link_restored")
        await drv.close()
        peer.unplug()
    run(main())
