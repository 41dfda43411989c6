"""The link against a device (or a cable) that keeps getting a frame wrong: the scriptable
device of tests/test_link.py on a real pseudo-terminal through the real pyserial path."""
import asyncio

from drivers.protocol import messages as m
from drivers.protocol.framing import encode_frame
from test_link import (Peer, RawFrame, link_path, next_event, run, started,  # noqa: F401
                       until)


class Damaged(RawFrame):
    """A reliable frame whose every copy arrives with a bad CRC (a firmware that computes it
    wrong for this message, a cable that damages the same bytes each time)."""

    def encode(self, seq):
        data = bytearray(encode_frame(seq, self.type_code, self.payload))
        data[-1] ^= 0xFF
        return bytes(data)


def test_a_frame_that_keeps_arriving_damaged_is_reported_and_not_nakked_for_ever(link_path):
    # Each damaged copy was answered with NAK 1, which the device answers by sending the
    # frame again at once: the two sides traded the frame as fast as the line goes, for ever,
    # and the table never heard that the card out of the shoe would never reach it.
    async def main():
        peer, drv, q, _ = await started(link_path, "shoe")
        peer.send(Damaged(m.CardDrawn.TYPE, m.CardDrawn(12, False, 7).pack()))  # As
        bad, before = await next_event(q, "malfunction")
        assert not [e for e in before if e.kind == "card_drawn"]
        assert bad.device == "shoe" and bad.code == 0
        assert "CardDrawn" in bad.text and "check the cable" in bad.text
        assert "As" not in bad.text and "12" not in bad.text
        await until(lambda: peer.copies >= 6)          # sent again on its own ack timeout
        naks = [msg for _, msg in peer.received if isinstance(msg, m.Nak)]
        assert len(naks) == drv.link.timing.retries    # as many as a command of the host's
        assert drv.is_up and q.empty()                 # reported once
        # A good copy at last (the cable put right): the card arrives, once.
        peer._inflight = (peer._inflight[0],
                          encode_frame(peer._inflight[0], m.CardDrawn.TYPE,
                                       m.CardDrawn(12, False, 7).pack()), None)
        drawn, _ = await next_event(q, "card_drawn")
        assert drawn.card.code == 12
        await drv.close()
        peer.unplug()
    run(main())
