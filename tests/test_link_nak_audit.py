"""NAKs over a codec without sequence numbers (docs/protocol.md 3.1 and 8).

A vendor protocol often answers a frame it could not read with a NAK of its own, and without
sequence numbers that NAK names no frame: it may be of the host's heartbeat, of noise, or of
a command the device already acted on. The host sends such a command once (sent again, it
could act twice), so a NAK never sends it again nor ends it as not understood; the command
waits for its acknowledgement as before. A dice agitator speaking dice-binary with a NAK frame
added (``n``, D0 the reason), as a vendor's variant of it would, over a real pseudo-terminal
through the real pyserial path, with the scriptable device of tests/test_link.py."""
import asyncio

import pytest

from drivers.factory import make_driver
from drivers.link import LinkDown
from drivers.protocol import messages as m
from drivers.protocol.dice_binary import DiceBinaryCodec, _frame
from drivers.spec import DeviceSpec
from test_link import SLACK, Peer, link_path, next_event, run  # noqa: F401


class NakDiceCodec(DiceBinaryCodec):
    """dice-binary with the NAK a vendor's variant adds: ``n`` D0 = reason."""

    name = "dice-binary-nak"

    def encode(self, message, seq=0):
        if isinstance(message, m.Nak):
            return _frame("n", bytes((message.reason,)))
        return super().encode(message, seq)

    @staticmethod
    def _decode(cmd, d):
        if cmd == "n":
            return m.Nak(0, d[0])
        return DiceBinaryCodec._decode(cmd, d)


class NakkingAgitator(Peer):
    """Acts on a Shake; ``nak_before`` is sent just before its ``k``, ``nak_after`` just after
    it acted (its ``k`` then lost when ``drop_acks``): the NAK of some other frame of the
    host's, a damaged heartbeat, say."""

    nak_before = None
    nak_after = None

    def _handle(self, seq, msg):
        if isinstance(msg, m.Shake) and self.nak_before is not None:
            self.send_now(m.Nak(0, self.nak_before))
        super()._handle(seq, msg)
        if isinstance(msg, m.Shake) and self.nak_after is not None:
            self.send_now(m.Nak(0, self.nak_after))


async def agitator(link_path):
    peer = NakkingAgitator(link_path, "dice", "dice-binary", flags=0)
    peer.plug()
    peer.codec = NakDiceCodec(receive_from="host")
    q = asyncio.Queue()
    spec = DeviceSpec(id="dice", device_class="dice", port=link_path, codec="dice-binary",
                      **SLACK)
    drv = make_driver(spec, q, codec=NakDiceCodec(receive_from="device"))
    drv.start()
    await next_event(q, "link_up")
    return peer, drv, q


def test_a_nak_of_a_crc_while_a_command_waits_does_not_send_it_again(link_path):
    # The agitator shook, its `k` was lost, and it NAKed a damaged frame of the host's: the
    # host sent the Shake again at once and the dice were shaken twice.
    async def main():
        peer, drv, q = await agitator(link_path)
        peer.drop_acks = 1
        peer.nak_after = m.NAK_CRC
        outcome = await asyncio.gather(drv.shake(), return_exceptions=True)
        assert peer.acted == [m.Shake()]                        # shaken once
        assert sum(isinstance(msg, m.Shake) for _, msg in peer.received) == 1
        # Its acknowledgement lost, the command fails at the time bound, the link with it.
        assert isinstance(outcome[0], LinkDown) and "no acknowledgement of Shake" in str(
            outcome[0])
        assert drv.stats.retransmissions == 0
        await drv.close()
        peer.unplug()
    run(main())


@pytest.mark.parametrize("reason", [m.NAK_UNKNOWN_TYPE, m.NAK_BAD_PAYLOAD])
def test_a_nak_that_names_no_frame_does_not_end_a_command_the_device_accepts(link_path,
                                                                             reason):
    # A NAK of another frame of the host's came just before the Shake's `k`: the host ended
    # the Shake as not understood ("it did nothing") while the dice were being shaken.
    async def main():
        peer, drv, q = await agitator(link_path)
        peer.nak_before = reason
        await drv.shake()                                       # accepted, no NotUnderstood
        assert peer.acted == [m.Shake()]
        assert drv.is_up
        await drv.close()
        peer.unplug()
    run(main())
