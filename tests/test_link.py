"""The link layer and the drivers against a small in-test device over a real pseudo-terminal.

The peer below speaks the codec from the device's side of a pty (os.openpty); the driver opens
the pty's slave by a stable symlink through the real pyserial path, as it opens
/dev/serial/by-id/... at the table. Unplugging is closing the pty; plugging back in is a new
pty behind the same symlink.
"""
import asyncio
import os
import tty

import pytest

from controller.rules.cards import Card
from drivers import events as ev
from drivers.driver import Delivery, DeviceRefused
from drivers.factory import make_driver, open_driver
from drivers.link import LinkDown, SessionMemory
from drivers.protocol import messages as m
from drivers.protocol.codec import Received, Rejected, get_codec
from drivers.spec import DeviceSpec

FAST = dict(heartbeat_s=0.05, link_timeout_s=0.5)
# For a test that must keep its link up: a loaded machine's pauses stay well inside it.
SLACK = dict(heartbeat_s=0.05, link_timeout_s=2.5)


class RawFrame:
    """A reliable frame the peer sends as given (type code and payload), numbered and resent
    like any event: a frame the host cannot read (an unknown type, a bad payload)."""

    def __init__(self, type_code, payload):
        self.type_code, self.payload = type_code, payload

    def encode(self, seq):
        from drivers.protocol.framing import encode_frame
        return encode_frame(seq, self.type_code, self.payload)


class Peer:
    """A scriptable device on the master side of a pty, in the test's event loop."""

    def __init__(self, link_path, device_class="shuffler", codec="tablectl", *,
                 flags=m.FLAG_RECOGNISES_CARDS):
        self.link_path = link_path
        self.device_class = device_class
        self.codec_name = codec
        self.flags = flags
        self.received = []          # (seq, message) of every good frame from the host
        self.acted = []             # commands acted on (duplicates excluded)
        self.rejected = []
        self.verdicts = {}          # command type -> Ack code
        self.naks = {}              # command type -> NAK reason: one the firmware cannot read
        self.reactions = {}         # command type -> list of messages to send after the ack
        self.silent = False         # send nothing, answer nothing
        self.ignore_commands = False
        self.drop_acks = 0          # commands whose ack is not sent (host must resend)
        self.deaf_to_acks = False   # the host's acks of our events do not reach us
        self.deaf_to_naks = False   # nor its NAKs of them
        self.on_nak = None          # called with each NAK of ours as it arrives, before all else
        self.resending = True       # an unacknowledged event is sent again every 0.1 s
        self.copies = 0             # times the event in flight was written
        self.supports_resume = True
        self.protocol = m.PROTOCOL_VERSION
        self.serial_no = "00421"
        self.master = None
        self._hb_task = None
        self._out = []              # queued reliable messages
        self._inflight = None       # (seq, bytes, tries)
        self._tx_seq = 0
        self._recent = {}
        self._timer = None

    # -- plumbing -------------------------------------------------------------------------
    def plug(self):
        self.codec = get_codec(self.codec_name, receive_from="host")
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        tmp = self.link_path + ".new"
        os.symlink(os.ttyname(self.slave), tmp)
        os.replace(tmp, self.link_path)
        loop = asyncio.get_running_loop()
        loop.add_reader(self.master, self._readable)
        self._hb_task = loop.create_task(self._heartbeats())

    def unplug(self):
        loop = asyncio.get_running_loop()
        loop.remove_reader(self.master)
        self._hb_task.cancel()
        if self._timer:
            self._timer.cancel()
        os.close(self.master)
        os.close(self.slave)
        self.master = None
        self._inflight, self._out = None, []

    def write(self, data):
        if self.master is not None:
            os.write(self.master, data)

    def send_now(self, msg, seq=0):
        self.write(self.codec.encode(msg, seq))

    async def _heartbeats(self):
        uptime = 0
        while True:
            if not self.silent:
                self.send_now(m.Heartbeat(uptime))
            uptime += 50
            await asyncio.sleep(0.05)

    def _readable(self):
        try:
            data = os.read(self.master, 4096)
        except OSError:
            return
        for item in self.codec.feed(data):
            if self.silent:
                continue
            if isinstance(item, Rejected):
                self.rejected.append(item)
                continue
            self._handle(item.seq, item.message)

    # -- device behaviour -----------------------------------------------------------------
    def hello_info(self, boot=False, resumed=False):
        flags = self.flags | (m.FLAG_BOOT if boot else 0) | (m.FLAG_RESUMED if resumed else 0)
        return m.HelloInfo(self.protocol, m.DEVICE_CLASS_CODES[self.device_class],
                           flags, 4, "Acme", "T-1",
                           self.serial_no, "2.1.0", bytes(range(32)))

    def _handle(self, seq, msg):
        self.received.append((seq, msg))
        if isinstance(msg, m.Hello):
            if msg.resume and self.supports_resume:
                # Same numbering, same memory: the unacknowledged frame goes again as it was.
                self.send_now(self.hello_info(resumed=True))
                if self._inflight:
                    self.copies += 1
                    self.write(self._inflight[1])
                return
            self._recent.clear()
            self._tx_seq = 0
            self.send_now(self.hello_info())
            if self._inflight:                       # renumber what was not acknowledged
                self._out.insert(0, self.codec_msg_of(self._inflight))
                self._inflight = None
            self._pump()
        elif isinstance(msg, m.Ack):
            if self.deaf_to_acks:
                return
            if self._inflight and (msg.seq == self._inflight[0] or not self.codec.sequenced):
                self._inflight = None
                self._pump()
        elif isinstance(msg, m.Nak):
            if self.on_nak is not None:
                self.on_nak(msg)
            if self.deaf_to_naks:
                return
            if self._inflight and msg.seq == self._inflight[0]:
                if msg.reason == m.NAK_CRC:
                    self.write(self._inflight[1])
                else:                                # not understood: never again
                    self._inflight = None
                    self._pump()
        elif isinstance(msg, m.Heartbeat):
            pass
        else:
            if self.ignore_commands:
                return
            if type(msg) in self.naks:
                self.send_now(m.Nak(seq, self.naks[type(msg)]))
                return
            if seq and seq in self._recent:          # duplicate: same verdict, act once
                self.send_now(m.Ack(seq, self._recent[seq]))
                return
            code = self.verdicts.get(type(msg), 0)
            if self.drop_acks:
                self.drop_acks -= 1
                self._recent[seq] = code
                self.acted.append(msg)
                self._react(msg, code)
                return
            self._recent[seq] = code
            self.acted.append(msg)
            self.send_now(m.Ack(seq, code))
            self._react(msg, code)

    def codec_msg_of(self, inflight):
        return inflight[2]

    def _react(self, msg, code):
        if code == 0:
            for out in self.reactions.get(type(msg), []):
                self.send(out)
            if isinstance(msg, m.StatusRequest):
                self.send(m.StatusReport("ready", (("cards", 52),)))

    def send(self, msg):
        """Send a device event reliably (stop-and-wait, resent every 0.1 s)."""
        self._out.append(msg)
        self._pump()

    def _pump(self):
        if self._inflight or not self._out or self.master is None:
            return
        msg = self._out.pop(0)
        seq = 0
        if self.codec.sequenced:
            self._tx_seq = self._tx_seq % 255 + 1
            seq = self._tx_seq
        data = msg.encode(seq) if isinstance(msg, RawFrame) else self.codec.encode(msg, seq)
        self._inflight = (seq, data, msg) if self.codec.sequenced else None
        self.copies = 1
        self.write(data)
        if self.codec.sequenced:
            self._arm()

    def _arm(self):
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(0.1, self._resend)

    def _resend(self):
        if self._inflight and not self.silent and self.master is not None:
            if self.resending:
                self.copies += 1
                self.write(self._inflight[1])
            self._arm()


@pytest.fixture
def link_path(tmp_path):
    return str(tmp_path / "ttyACME0")


async def next_event(queue, kind, timeout=5.0):
    """The next event of ``kind``; events of other kinds before it are returned too."""
    seen = []
    async with asyncio.timeout(timeout):
        while True:
            e = await queue.get()
            seen.append(e)
            if e.kind == kind:
                return e, seen[:-1]


async def until(cond, timeout=5.0):
    """Wait for a condition the peer observes (bytes in flight need a moment)."""
    async with asyncio.timeout(timeout):
        while not cond():
            await asyncio.sleep(0.01)


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 30))


async def started(link_path, device_class="shuffler", codec="tablectl", timing=FAST,
                  **peer_kw):
    peer = Peer(link_path, device_class, codec, **peer_kw)
    peer.plug()
    q = asyncio.Queue()
    spec = DeviceSpec(id=device_class, device_class=device_class, port=link_path, codec=codec,
                      **timing)
    drv = open_driver(spec, q)
    up, _ = await next_event(q, "link_up")
    return peer, drv, q, up


def test_hello_gives_link_up_with_identity(link_path):
    async def main():
        peer, drv, q, up = await started(link_path)
        assert up.device == "shuffler"
        assert up.identity == ev.DeviceIdentity("shuffler", "Acme", "T-1", "00421", "2.1.0",
                                                bytes(range(32)).hex(), True)
        assert drv.identity == up.identity and drv.is_up
        st = await drv.status()
        assert st.state == "ready" and st.detail == {"cards": 52}
        assert (await next_event(q, "status_answer"))[0] == st
        await drv.close()
        peer.unplug()
    run(main())


def test_commands_and_events_in_order(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path)
        hand = ((12, 7), (25, 7), (m.UNKNOWN_CARD, m.NO_DECK))
        peer.reactions = {
            m.Shuffle: [m.ShuffleStarted(), m.ShuffleDone(52)],
            m.DispenseHand: [m.HandDispensed(hand)],
            m.DispenseCard: [m.CardDispensed(51, 7)],
        }
        await drv.shuffle()
        await drv.dispense_hand(3)
        await drv.dispense_card()
        done, before = await next_event(q, "shuffle_done")
        assert [e.kind for e in before] == ["shuffle_started"] and done.count == 52
        hd, _ = await next_event(q, "hand_dispensed")
        assert hd.cards == (Card.parse("As"), Card.parse("Ah"), None)
        assert hd.deck_ids == (7, 7, None)
        cd, _ = await next_event(q, "card_dispensed")
        assert cd.card == Card.parse("Ad") and cd.deck_id == 7
        assert peer.acted == [m.Shuffle(), m.DispenseHand(3), m.DispenseCard()]
        await drv.close()
        peer.unplug()
    run(main())


def test_refused_command_raises_and_names_the_reason(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path)
        peer.verdicts[m.DispenseCard] = m.REFUSAL_NUMBERS["door-open"]
        with pytest.raises(DeviceRefused, match="door-open; close the door") as info:
            await drv.dispense_card()
        assert info.value.code == 6
        await drv.close()
        peer.unplug()
    run(main())


def test_lost_ack_is_resent_with_the_same_seq_and_acted_on_once(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path)
        peer.drop_acks = 1
        peer.reactions = {m.DispenseCard: [m.CardDispensed(3, 1)]}
        await drv.dispense_card()
        sent = [(s, msg) for s, msg in peer.received if isinstance(msg, m.DispenseCard)]
        assert len(sent) >= 2 and len({s for s, _ in sent}) == 1
        assert peer.acted == [m.DispenseCard()]
        assert drv.stats.retransmissions >= 1
        e, _ = await next_event(q, "card_dispensed")
        assert e.card == Card.parse("5s")
        await drv.close()
        peer.unplug()
    run(main())


def test_duplicated_event_frame_is_delivered_once(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path)
        frame = peer.codec.encode(m.CardDispensed(7, 1), 200)
        peer.write(frame + frame)
        peer.send(m.Empty())
        first, _ = await next_event(q, "card_dispensed")
        _, between = await next_event(q, "empty")
        assert first.card == Card.from_code(7) and between == []
        assert drv.stats.duplicates == 1
        await until(lambda: sum(isinstance(msg, m.Ack) and msg.seq == 200
                                for _, msg in peer.received) == 2)
        await drv.close()
        peer.unplug()
    run(main())


def test_corrupted_frame_is_nakked_resent_and_arrives_once(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path)
        peer._tx_seq = 10
        peer.send(m.CardDispensed(20, 1))        # in flight as seq 11
        # Corrupt a copy of the same frame: its header is fine, its payload is not.
        bad = bytearray(peer._inflight[1])
        bad[6] ^= 0x40
        peer.write(bytes(bad))
        e, _ = await next_event(q, "card_dispensed")
        assert e.card == Card.from_code(20)
        peer.send(m.Empty())
        _, between = await next_event(q, "empty")
        assert between == []                         # arrived once
        await until(lambda: m.Nak(11, m.NAK_CRC) in [msg for _, msg in peer.received])
        assert drv.stats.rejected >= 1 and drv.is_up
        await drv.close()
        peer.unplug()
    run(main())


def test_garbage_and_malformed_frames_are_counted_and_dropped(link_path):
    """Garbage and damaged frames are dropped; a reliable frame the host refuses (NAK 2 or
    3), which the device will not send again, is a lost event: the table hears of it as the
    device's malfunction, with no field of the frame in it."""
    async def main():
        peer, drv, q, _ = await started(link_path)
        peer.write(b"\x00\xff\xa5\x13garbage\xa5\xa5" * 5)
        peer.write(peer.codec.encode(m.CardDispensed(1, 1), 99)[:5])     # truncated
        from drivers.protocol.framing import encode_frame
        peer.write(encode_frame(98, m.CardDispensed.TYPE, b"\x60\xff\xff"))  # card code 96
        peer.write(encode_frame(97, 0xEE, b"?"))                          # unknown type
        peer.send(m.CardDispensed(2, 1))
        e, before = await next_event(q, "card_dispensed")
        assert e.card == Card.from_code(2)
        assert [(type(b), b.code) for b in before] == [(ev.Malfunction, 0)] * 2
        assert "CardDispensed frame" in before[0].text and "96" not in before[0].text
        assert "type 0xee frame" in before[1].text
        assert all("lost" in b.text for b in before)
        assert drv.stats.garbage_bytes > 0 and drv.stats.rejected >= 2 and drv.is_up
        naks = lambda: {msg.seq: msg.reason for _, msg in peer.received
                        if isinstance(msg, m.Nak)}
        await until(lambda: naks().get(98) == m.NAK_BAD_PAYLOAD
                    and naks().get(97) == m.NAK_UNKNOWN_TYPE)
        await drv.close()
        peer.unplug()
    run(main())


def test_dice_binary_frames_the_host_cannot_read_are_lost_events(link_path):
    """dice-binary events are not acknowledged, so the agitator never sends one again: a frame
    with a bad checksum, one cut short, or one whose content cannot be read is an event lost,
    and the table hears of it as the agitator's malfunction (once for a burst of damage). The
    good frames after it still arrive."""
    from drivers.protocol.dice_binary import checksum

    async def main():
        peer, drv, q, _ = await started(link_path, "dice", "dice-binary", flags=0)
        good = peer.codec.encode(m.DiceResult((3, 5, 1, 6)))
        bad = bytearray(good)
        bad[3] ^= 1                                              # the checksum fails
        peer.write(bytes(bad))
        peer.write(good)
        e, before = await next_event(q, "dice_result")
        assert e.dice == (3, 5, 1, 6)
        assert [(type(b), b.code) for b in before] == [(ev.Malfunction, 0)]
        assert "lost" in before[0].text and "3, 5" not in before[0].text
        peer.write(good[:5])                                     # cut short
        peer.write(peer.codec.encode(m.DieNotFlat(1)))
        e, before = await next_event(q, "die_not_flat")
        assert [(type(b), b.code) for b in before] == [(ev.Malfunction, 0)]
        body = b"r\x03\x00\x05\x00"                             # a gap between the dice
        peer.write(b"\x02" + body + bytes((checksum(body),)) + b"\x03")
        peer.write(peer.codec.encode(m.DieOutOfCup(2)))
        e, before = await next_event(q, "die_out_of_cup")
        assert [(type(b), b.code) for b in before] == [(ev.Malfunction, 0)]
        assert drv.is_up
        await drv.close()
        peer.unplug()
    run(main())


def test_a_damaged_frame_of_the_tablectl_codec_is_sent_again_not_lost(link_path):
    """With sequence numbers a damaged event is not acknowledged and the device sends it
    again: no loss, so no malfunction reaches the table."""
    async def main():
        peer, drv, q, _ = await started(link_path)
        frame = bytearray(peer.codec.encode(m.CardDispensed(1, 1), 5))
        frame[-3] ^= 0x40
        peer.write(bytes(frame))
        peer.send(m.CardDispensed(2, 1))
        e, before = await next_event(q, "card_dispensed")
        assert e.card == Card.from_code(2)
        assert not [b for b in before if isinstance(b, ev.Malfunction)]
        await drv.close()
        peer.unplug()
    run(main())


def test_heartbeats_stopping_gives_link_lost_then_restored(link_path):
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.silent = True
        lost, _ = await next_event(q, "link_lost")
        assert "heartbeat" in lost.reason
        with pytest.raises(LinkDown, match="not connected"):
            await drv.shuffle()
        peer.silent = False
        restored, _ = await next_event(q, "link_restored")
        assert restored.identity == up.identity
        await drv.dispense_card()
        await drv.close()
        peer.unplug()
    run(main())


def test_unplug_and_plug_back_is_found_by_the_same_name(link_path):
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.unplug()
        lost, _ = await next_event(q, "link_lost")
        assert "port closed" in lost.reason or "heartbeat" in lost.reason
        await asyncio.sleep(0.3)                 # unplugged a while: reopening fails meanwhile
        peer.plug()
        restored, _ = await next_event(q, "link_restored")
        assert restored.identity == up.identity
        await drv.deck_check()
        assert peer.acted[-1] == m.DeckCheck()
        await drv.close()
        peer.unplug()
    run(main())


def test_events_queued_during_loss_arrive_after_reconnection(link_path):
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.silent = True
        lost, _ = await next_event(q, "link_lost")
        assert not lost.rebooted                 # silent, not restarted
        peer.send(m.Door(True))                  # happens while the host hears nothing
        peer.silent = False
        back, _ = await next_event(q, "link_restored")
        assert back.resumed                      # the same session goes on
        opened, _ = await next_event(q, "door_opened")
        assert opened.device == "shuffler"
        await drv.close()
        peer.unplug()
    run(main())


def test_boot_notice_is_a_reboot(link_path):
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.send_now(peer.hello_info(boot=True))
        peer.supports_resume = False             # a restarted device has no session to resume
        lost, _ = await next_event(q, "link_lost")
        assert lost.reason == "device rebooted" and lost.rebooted
        back, _ = await next_event(q, "link_restored")
        assert back.resumed is False
        await drv.close()
        peer.unplug()
    run(main())


def test_unacknowledged_command_declares_the_link_lost(link_path):
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.ignore_commands = True
        with pytest.raises(LinkDown, match="no acknowledgement of Shake|no acknowledgement"):
            await drv.deck_check()
        lost, _ = await next_event(q, "link_lost")
        assert "no acknowledgement" in lost.reason
        sent = [s for s, msg in peer.received if isinstance(msg, m.DeckCheck)]
        assert len(sent) == 4 and len(set(sent)) == 1
        peer.ignore_commands = False
        await next_event(q, "link_restored")
        await drv.close()
        peer.unplug()
    run(main())


@pytest.mark.parametrize("device_class,protocol", [("shoe", m.PROTOCOL_VERSION),
                                                   ("shuffler", m.PROTOCOL_VERSION + 1)])
def test_wrong_device_class_or_protocol_is_not_taken(link_path, device_class, protocol):
    import structlog

    async def main():
        peer = Peer(link_path, device_class)
        peer.protocol = protocol
        peer.plug()
        q = asyncio.Queue()
        with structlog.testing.capture_logs() as logs:
            drv = open_driver(DeviceSpec(id="shuffler", device_class="shuffler",
                                         port=link_path, **FAST), q)
            # Wait until the driver asked twice (it backs off and asks again): never up.
            while sum(isinstance(msg, m.Hello) for _, msg in peer.received) < 2:
                await asyncio.sleep(0.05)
            assert q.empty() and not drv.is_up
            await drv.close()
        peer.unplug()
        why = [e["problem"] for e in logs if e["event"] == "device refused"]
        assert why and ("protocol version" in why[0] if protocol != m.PROTOCOL_VERSION
                        else "configured as a shuffler" in why[0])
    run(main())


def test_absent_device_is_retried_until_it_appears(link_path):
    async def main():
        q = asyncio.Queue()
        drv = open_driver(DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST), q)
        await asyncio.sleep(0.3)
        assert q.empty()
        peer = Peer(link_path, "shoe")
        peer.plug()
        up, _ = await next_event(q, "link_up")
        peer.send(m.CardDrawn(0, True, 3))
        drawn, _ = await next_event(q, "card_drawn")
        assert drawn.card == Card.parse("2s") and drawn.face_up and drawn.deck_id == 3
        await drv.close()
        peer.unplug()
    run(main())


def test_dice_over_the_dice_binary_codec(link_path):
    async def main():
        peer, drv, q, up = await started(link_path, "dice", "dice-binary", flags=0)
        assert up.identity.device_class == "dice" and up.identity.vendor == "vendor-0"
        peer.reactions = {m.Shake: [m.ShakeStarted(), m.DiceResult((2, 6, 1, 4))]}
        await drv.shake()
        res, before = await next_event(q, "dice_result")
        assert [e.kind for e in before] == ["shake_started"] and res.dice == (2, 6, 1, 4)
        peer.send(m.DieNotFlat(3))
        assert (await next_event(q, "die_not_flat"))[0].die == 3
        peer.verdicts[m.Shake] = m.REFUSAL_NUMBERS["door-open"]
        with pytest.raises(DeviceRefused, match="door-open"):
            await drv.shake()
        peer.silent = True
        assert "heartbeat" in (await next_event(q, "link_lost"))[0].reason
        peer.silent = False
        await next_event(q, "link_restored")
        await drv.close()
        peer.unplug()
    run(main())


class TcpPeer(Peer):
    """The same device behind a TCP port, for pyserial's socket:// URLs."""

    async def listen(self):
        self.codec = get_codec(self.codec_name, receive_from="host")
        self.writer = None
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _client(self, reader, writer):
        self.writer, self.master = writer, "tcp"
        self._hb_task = asyncio.get_running_loop().create_task(self._heartbeats())
        try:
            while data := await reader.read(4096):
                for item in self.codec.feed(data):
                    if isinstance(item, Received) and not self.silent:
                        self._handle(item.seq, item.message)
        finally:
            self._hb_task.cancel()

    def write(self, data):
        if self.writer is not None:
            self.writer.write(data)

    async def stop(self):
        if self.writer is not None:
            self.writer.close()
        self.server.close()
        await self.server.wait_closed()


def test_socket_url_reaches_a_device_over_tcp(link_path):
    async def main():
        peer = TcpPeer(link_path, "box-sensors")
        port = await peer.listen()
        q = asyncio.Queue()
        drv = open_driver(DeviceSpec(id="boxes", device_class="box-sensors",
                                     port=f"socket://127.0.0.1:{port}", **FAST), q)
        up, _ = await next_event(q, "link_up")
        assert up.identity.device_class == "box-sensors"
        peer.send(m.CardPlaced(2))
        peer.send(m.CardRemoved(2))
        placed, _ = await next_event(q, "card_placed")
        removed, between = await next_event(q, "card_removed")
        assert placed.box == removed.box == 3 and between == []   # wire box 2 is box 3
        assert (await drv.status()).state == "ready"
        await drv.close()
        await peer.stop()
    run(main())


def test_serial_port_that_is_not_there_is_a_clear_error(tmp_path):
    from drivers.transport import SerialTransport, TransportError

    async def main():
        t = SerialTransport(str(tmp_path / "ttyUSB9"))
        with pytest.raises(TransportError, match="cannot open serial port .*ttyUSB9.*plugged in"):
            await t.open()
    run(main())


def test_every_log_line_names_the_device(link_path):
    import structlog

    async def main():
        with structlog.testing.capture_logs() as logs:
            peer, drv, q, up = await started(link_path, "shoe")
            peer.write(b"\x00garbage")
            peer.send(m.CardDrawn(5))
            await next_event(q, "card_drawn")
            peer.silent = True
            await next_event(q, "link_lost")
            await drv.close()
            peer.unplug()
        events = {entry["event"] for entry in logs}
        assert {"link up", "garbage dropped", "event", "link lost"} <= events
        assert all(entry.get("device") == "shoe" for entry in logs)
    run(main())


class Rfc2217Server:
    """pyserial's own RFC 2217 port manager in front of the peer's pty (as ser2net would be)."""

    def __init__(self, port_path):
        import socket
        import threading

        import serial
        import serial.rfc2217
        class PtySerial(serial.Serial):
            # A pty has no modem lines (their ioctls fail on it); the port manager sets and
            # polls them, so this side of the test bench has none.
            cts = dsr = ri = cd = property(lambda self: False)

            def _update_dtr_state(self):
                pass

            _update_rts_state = _update_break_state = _update_dtr_state

        self.serial = PtySerial(port_path, timeout=0.05)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.alive = True
        self.threads = []

        def serve():
            # One client at a time, and again after it leaves (as ser2net does): a link whose
            # first session failed on a loaded machine reconnects and is served.
            while self.alive:
                try:
                    self.sock, _ = self.listener.accept()
                except OSError:
                    return
                self.manager = serial.rfc2217.PortManager(self.serial, self)
                if not self.threads[1:]:
                    t = threading.Thread(target=self._to_net, daemon=True)
                    t.start()
                    self.threads.append(t)
                while self.alive:
                    try:
                        data = self.sock.recv(1024)
                    except OSError:
                        break
                    if not data:
                        break
                    self.serial.write(b"".join(self.manager.filter(data)))

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        self.threads.append(t)

    def write(self, data):            # PortManager answers the client through this
        self.sock.sendall(data)

    def _to_net(self):
        while self.alive:
            try:
                data = self.serial.read(self.serial.in_waiting or 1)
                if data:
                    self.write(b"".join(self.manager.escape(data)))
            except OSError:
                if not self.alive:
                    return      # closed; a client that left is replaced by the next one

    def close(self):
        import socket
        self.alive = False
        for closer in (getattr(self, "sock", None), self.listener):
            if closer is not None:
                try:
                    closer.shutdown(socket.SHUT_RDWR)   # wakes a thread blocked in it
                except OSError:
                    pass
                closer.close()
        for t in self.threads:
            t.join(2)
        self.serial.close()


def test_rfc2217_url_reaches_a_device(link_path):
    async def main():
        peer = Peer(link_path, "shoe")
        peer.plug()
        server = Rfc2217Server(link_path)
        q = asyncio.Queue()
        drv = open_driver(DeviceSpec(id="shoe", device_class="shoe",
                                     port=f"rfc2217://127.0.0.1:{server.port}",
                                     heartbeat_s=0.1, link_timeout_s=1.0), q)
        # pyserial's RFC 2217 negotiation runs over threads on both ends: on a loaded machine
        # it can take a retry or two, so the guards here are generous (they bound a hang only).
        up, _ = await next_event(q, "link_up", timeout=30)
        assert up.identity.serial == "00421"
        peer.send(m.CardDrawn(50, False, 1))
        e, _ = await next_event(q, "card_drawn", timeout=20)
        assert e.card == Card.parse("Kd")
        await drv.close()
        await asyncio.to_thread(server.close)
        peer.unplug()
    run(main())


def test_event_resent_after_reconnection_arrives_once(link_path):
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.deaf_to_acks = True                 # the host's ack of the next event is lost
        peer.send(m.CardDispensed(9, 1))
        first, _ = await next_event(q, "card_dispensed")
        peer.silent = True                       # ... and then the link drops
        await next_event(q, "link_lost")
        peer.deaf_to_acks = False
        peer.silent = False
        await next_event(q, "link_restored")
        hellos = [msg for _, msg in peer.received if isinstance(msg, m.Hello)]
        assert hellos[0].resume is False and hellos[-1].resume is True
        # The device sent the event again under its old number: recognised, not delivered.
        await until(lambda: peer._inflight is None)
        peer.send(m.Empty())
        _, between = await next_event(q, "empty")
        assert first.card == Card.from_code(9) and between == []
        assert drv.stats.duplicates >= 1
        await drv.close()
        peer.unplug()
    run(main())


def test_device_that_does_not_resume_starts_a_new_session(link_path):
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.supports_resume = False
        await drv.shuffle()
        await drv.shuffle()
        peer.silent = True
        await next_event(q, "link_lost")
        peer.silent = False
        await next_event(q, "link_restored")
        await drv.deck_check()
        seqs = [seq for seq, msg in peer.received if isinstance(msg, (m.Shuffle, m.DeckCheck))]
        assert seqs[0] == 1 and seqs[-1] == 1      # numbered from 1 again after the hello
        peer.send(m.CardDispensed(1, 1))          # the device's numbering restarted too
        assert (await next_event(q, "card_dispensed"))[0].card == Card.from_code(1)
        await drv.close()
        peer.unplug()
    run(main())


SAMPLE = {"u8": 3, "u16": 513, "u32": 0, "i32": -5, "bool": True, "card": 12, "deck": 4,
          "str": "x", "blob": b"\x01", "cards": ((1, 2), (m.UNKNOWN_CARD, m.NO_DECK)),
          "dice": (1, 6), "kv": (("a", 1),)}


def test_any_message_a_device_may_send_leaves_the_link_up(link_path):
    # A shoe that (wrongly) sends every message type there is, with sample values: messages of
    # other classes are dropped, counted and reported as the shoe's malfunction; none stops
    # the link or the driver.
    async def main():
        peer, drv, q, up = await started(link_path, "shoe")
        for cls in sorted(m.MESSAGE_TYPES.values(), key=lambda c: c.TYPE):
            msg = cls(**{name: SAMPLE[w] for name, w in cls.WIRE})
            if isinstance(msg, (m.HelloInfo, m.Hello)):
                continue          # a hello answer out of turn is covered elsewhere
            if cls.RELIABLE:
                peer.send(msg)
            else:
                peer.send_now(msg, 0)
        await drv.status()      # may be answered by the sample StatusReport sent above
        assert (await drv.status()).state == "ready" and drv.is_up
        kinds = []
        while not q.empty():
            kinds.append(q.get_nowait().kind)
        assert {"card_drawn", "cut_card_reached", "misread", "jam", "door_opened", "empty",
                "malfunction"} <= set(kinds)
        assert not {"card_dispensed", "dice_result", "card_placed"} & set(kinds)
        assert drv.stats.rejected >= 3 and drv.stats.links_lost == 0
        await drv.close()
        peer.unplug()
    run(main())


def test_events_are_stamped_by_the_injected_clock(link_path):
    ticks = iter(range(1000, 2000))

    async def main():
        peer = Peer(link_path, "dice")
        peer.plug()
        q = asyncio.Queue()
        drv = open_driver(DeviceSpec(id="dice", device_class="dice", port=link_path, **FAST), q,
                          clock=lambda: float(next(ticks)))
        up, _ = await next_event(q, "link_up")
        peer.send(m.DieOutOfCup(1))
        out, _ = await next_event(q, "die_out_of_cup")
        assert up.ts == 1000.0 and out.ts == 1001.0 and out.die == 1
        await drv.close()
        peer.unplug()
    run(main())


def test_status_accepted_but_never_reported_reopens_the_link(link_path):
    # A device whose event stream is stuck (it acknowledges, sends heartbeats, reports nothing).
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.deaf_to_acks = True
        peer.supports_resume = False
        peer.send(m.ShuffleStarted())            # stuck in flight: the host's acks go unheard
        peer._resend = lambda: None              # ... and the device stopped retrying it
        await next_event(q, "shuffle_started")
        with pytest.raises(LinkDown, match="no status report"):
            await drv.status()
        lost, _ = await next_event(q, "link_lost")
        assert "no status report" in lost.reason
        peer.deaf_to_acks = False
        await next_event(q, "link_restored")
        assert (await drv.status()).state == "ready"
        await drv.close()
        peer.unplug()
    run(main())


def test_a_codec_that_cannot_speak_for_the_class_is_refused(link_path):
    from controller.errors import TablectlError

    async def main():
        with pytest.raises(TablectlError, match="'dice-binary' speaks only for dice"):
            open_driver(DeviceSpec(id="shuffler", device_class="shuffler", port=link_path,
                                   codec="dice-binary"), asyncio.Queue())
    run(main())


class NoisyPeer(Peer):
    """A resuming device whose line drops, damages and repeats frames at random."""

    def __init__(self, *a, rng, p=0.15, **kw):
        super().__init__(*a, **kw)
        self.rng, self.p = rng, p

    def write(self, data):
        r = self.rng.random()
        if r < self.p / 3:
            return                                        # lost
        if r < 2 * self.p / 3:
            b = bytearray(data)
            b[self.rng.randrange(len(b))] ^= 1 << self.rng.randrange(8)
            data = bytes(b)                               # damaged
        elif r < self.p:
            data = data + data                            # repeated
        super().write(data)


@pytest.mark.long
def test_exactly_once_through_random_line_noise_and_link_losses(link_path):
    import random
    rng = random.Random(99)

    async def main():
        peer = NoisyPeer(link_path, "shoe", rng=rng)
        peer.plug()
        q = asyncio.Queue()
        drv = open_driver(DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST), q)
        await drv.wait_up(5)
        sent = [i % 52 for i in range(300)]
        for i, code in enumerate(sent):
            peer.send(m.CardDrawn(code, False, 1))
            if i % 60 == 59:                              # now and then the line goes dead
                peer.silent = True
                await asyncio.sleep(0.7)
                peer.silent = False
            await asyncio.sleep(0.005)
        got = []
        async with asyncio.timeout(120):
            while len(got) < len(sent):
                e = await q.get()
                if e.kind == "card_drawn":
                    got.append(e.card.code)
        await asyncio.sleep(0.5)
        while not q.empty():
            e = q.get_nowait()
            assert e.kind != "card_drawn", "an event arrived twice"
        assert got == sent
        assert drv.stats.links_lost >= 3 and drv.stats.duplicates > 0
        await drv.close()
        peer.unplug()
    asyncio.run(asyncio.wait_for(main(), 180))


def confirm_spec(link_path):
    return DeviceSpec(id="shuffler", device_class="shuffler", port=link_path, codec="tablectl",
                      **FAST)


async def confirm_started(link_path):
    """A shuffler plugged in and linked to a driver in confirm mode (the daemon's: a frame is
    acknowledged once its record is durable). The device, the driver and its queue."""
    peer = Peer(link_path)
    peer.plug()
    q = asyncio.Queue()
    drv = open_driver(confirm_spec(link_path), q, confirm=True, on_session=lambda mark: None)
    await next_event(q, "link_up")
    return peer, drv, q


async def next_delivery(queue, timeout=5.0):
    """The next Delivery on the queue (link events before it are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            item = await queue.get()
            if isinstance(item, Delivery):
                return item


def test_event_is_acknowledged_only_after_the_consumer_confirms_it(link_path):
    async def main():
        peer = Peer(link_path)
        peer.plug()
        q, marks = asyncio.Queue(), []
        drv = open_driver(confirm_spec(link_path), q, confirm=True, on_session=marks.append)
        await next_event(q, "link_up")
        assert marks and marks[-1]["serial"] == "00421"       # the session, recorded first
        peer.send(m.CardDispensed(9, 1))
        d = await next_delivery(q)
        assert d.event.card == Card.from_code(9) and d.receipt.session == marks[-1]["session"]
        # Not confirmed: the device, unanswered, sends the frame again and again; the link
        # neither delivers it twice nor acknowledges it.
        await until(lambda: drv.stats.duplicates >= 2)
        acked = [msg.seq for _, msg in peer.received if isinstance(msg, m.Ack)]
        assert d.receipt.seq not in acked and peer._inflight is not None and q.empty()
        d.confirm()
        await until(lambda: peer._inflight is None)
        acked = [msg.seq for _, msg in peer.received if isinstance(msg, m.Ack)]
        assert acked.count(d.receipt.seq) == 1
        await drv.close()
        peer.unplug()
    run(main())


def test_restarted_consumer_resumes_the_session_and_knows_the_journaled_frame(link_path):
    async def main():
        peer = Peer(link_path)
        peer.plug()
        q1, marks = asyncio.Queue(), []
        drv1 = open_driver(confirm_spec(link_path), q1, confirm=True, on_session=marks.append)
        await next_event(q1, "link_up")
        await drv1.shuffle()
        await drv1.shuffle()                 # the device remembers these numbers
        peer.send(m.CardDispensed(9, 1))
        taken = (await next_delivery(q1)).receipt
        await drv1.close()                   # journaled, then the process died: no ack left
        mark = marks[-1]
        memory = SessionMemory(mark["serial"], mark["firmware_hash"], mark["session"],
                               (taken.seq,), mark["tx_reserved"])
        q2, marks2 = asyncio.Queue(), []
        drv2 = open_driver(confirm_spec(link_path), q2, confirm=True, memory=memory,
                           on_session=marks2.append)
        await next_event(q2, "link_up")
        hellos = [msg for _, msg in peer.received if isinstance(msg, m.Hello)]
        assert hellos[-1].resume is True and marks2[-1]["session"] == taken.session
        # The device sent the frame again under its number: known, acknowledged, not delivered.
        await until(lambda: peer._inflight is None)
        peer.send(m.Empty())
        d = await next_delivery(q2)
        assert d.event.kind == "empty"
        d.confirm()
        # A command after the restart is numbered past every number the old host reserved,
        # so the device acts on it instead of taking it for one it has seen.
        await drv2.shuffle()
        shuffles = [seq for seq, msg in peer.received if isinstance(msg, m.Shuffle)]
        assert shuffles[-1] == mark["tx_reserved"] % 255 + 1
        assert sum(isinstance(a, m.Shuffle) for a in peer.acted) == 3
        await drv2.close()
        peer.unplug()
    run(main())


def test_restarts_in_a_row_never_reuse_a_number_the_device_remembers(link_path):
    """A host restarted again and again, with no command or one or two between restarts:
    every command is numbered past every number used before, so the device, which remembers
    the host's last 32 numbers across a resumed session, acts on each one. (With numbers
    reserved 64 at a time at every restart, four restarts without a command wrapped the
    255-number cycle onto numbers the device still remembered: it took the next command for
    one it had done, and the table waited for a deck check that never came.)"""
    async def main():
        peer = Peer(link_path)
        peer.plug()
        marks, memory, sent = [], None, 0
        for restart in range(40):
            q = asyncio.Queue()
            drv = open_driver(confirm_spec(link_path), q, confirm=True, memory=memory,
                              on_session=marks.append)
            await next_event(q, "link_up")
            for _ in range((2, 0, 0, 0, 1)[restart % 5]):
                await drv.shuffle()
                sent += 1
            await drv.close()             # the process dies: what it recorded is its memory
            mark = marks[-1]
            memory = SessionMemory(mark["serial"], mark["firmware_hash"], mark["session"],
                                   (), mark["tx_reserved"])
        shuffles = [seq for seq, msg in peer.received if isinstance(msg, m.Shuffle)]
        assert len(shuffles) == sent == 24
        assert sum(isinstance(a, m.Shuffle) for a in peer.acted) == sent   # none taken twice
        # Numbered on without a gap: each restart goes on from the last number recorded.
        assert shuffles == [n % 255 + 1 for n in range(sent)]
        peer.unplug()
    run(main())


def test_device_that_rebooted_gets_a_new_session_despite_the_memory(link_path):
    async def main():
        peer = Peer(link_path)
        peer.supports_resume = False
        peer.plug()
        q, marks = asyncio.Queue(), []
        memory = SessionMemory("00421", bytes(range(32)).hex(), "old-session", (3,), 64)
        drv = open_driver(confirm_spec(link_path), q, confirm=True, memory=memory,
                          on_session=marks.append)
        await next_event(q, "link_up")
        assert marks[-1]["session"] != "old-session"
        peer.send(m.CardDispensed(9, 1))
        peer.send(m.CardDispensed(10, 1))
        peer.send(m.CardDispensed(11, 1))    # seq 3 of the new session is a new frame
        got = []
        for _ in range(3):
            d = await next_delivery(q)
            got.append(d.event.card)
            d.confirm()
        assert got == [Card.from_code(c) for c in (9, 10, 11)]
        await drv.shuffle()
        assert [seq for seq, msg in peer.received if isinstance(msg, m.Shuffle)] == [1]
        await drv.close()
        peer.unplug()
    run(main())


# Reliable frames the host cannot read (protocol.md 3.1: NAK 3 and NAK 2), what its malfunction
# names them by, and the NAK they get.
UNREADABLE = {
    "bad-payload": (RawFrame(m.CardDispensed.TYPE, b"\x60\xff\xff"), "CardDispensed frame",
                    m.NAK_BAD_PAYLOAD),
    "unknown-type": (RawFrame(0xEE, b"?"), "type 0xee frame", m.NAK_UNKNOWN_TYPE),
}


def naks_of(peer, seq):
    """The reasons of the NAKs the peer got for its frame ``seq``, in order."""
    return [msg.reason for _, msg in peer.received if isinstance(msg, m.Nak) and msg.seq == seq]


async def next_of(queue, kind, timeout=5.0):
    """The next item of ``kind`` (an event, or a Delivery of one) and the items before it."""
    seen = []
    async with asyncio.timeout(timeout):
        while True:
            item = await queue.get()
            if (item.event if isinstance(item, Delivery) else item).kind == kind:
                return item, seen
            seen.append(item)


def malfunctions(items):
    return [x for x in items if (x.event if isinstance(x, Delivery) else x).kind == "malfunction"]


@pytest.mark.parametrize("what", sorted(UNREADABLE))
def test_a_frame_the_host_cannot_read_is_refused_only_after_its_malfunction_is_confirmed(
        link_path, what):
    """The device never sends a frame again once it is refused with NAK 2 or 3, so the record
    that it reported something (the device's malfunction, code 0) must be durable before the
    NAK goes: the malfunction carries the frame's receipt and the NAK waits for confirm().
    The copies the device sends meanwhile are neither refused nor reported again."""
    frame, words, reason = UNREADABLE[what]

    async def main():
        peer = Peer(link_path)
        peer.plug()
        q, marks = asyncio.Queue(), []
        drv = open_driver(confirm_spec(link_path), q, confirm=True, on_session=marks.append)
        await next_of(q, "link_up")
        peer.send(frame)
        d, _ = await next_of(q, "malfunction")
        seq = peer._inflight[0]
        assert isinstance(d, Delivery) and d.event.code == 0 and words in d.event.text
        assert (d.receipt.session, d.receipt.seq) == (marks[-1]["session"], seq)
        # Unanswered, the device sends the frame again after its ack timeout; once the link
        # has seen every copy, none was refused and nothing more was reported.
        await until(lambda: peer.copies >= 3)
        peer.resending = False
        await until(lambda: drv.stats.duplicates == peer.copies - 1)
        assert naks_of(peer, seq) == [] and q.empty() and drv.stats.naks_sent == 0
        d.confirm()
        await until(lambda: peer._inflight is None)
        assert naks_of(peer, seq) == [reason] and drv.stats.naks_sent == 1
        peer.resending = True
        peer.send(m.CardDispensed(9, 1))
        nxt, between = await next_of(q, "card_dispensed")
        assert between == [] and nxt.receipt.seq == seq + 1
        await drv.close()
        peer.unplug()
    run(main())


def test_a_refusal_confirmed_after_the_device_started_a_new_session_is_not_sent(link_path):
    """A receipt of an earlier session is ignored: its NAK would name the frame of the same
    number in the new session, which the device would then drop unread."""
    async def main():
        peer = Peer(link_path)
        peer.supports_resume = False
        peer.plug()
        q = asyncio.Queue()
        drv = open_driver(confirm_spec(link_path), q, confirm=True, on_session=lambda m: None)
        await next_of(q, "link_up")
        peer.send(m.CardDispensed(9, 1))
        (await next_of(q, "card_dispensed"))[0].confirm()
        peer.send(UNREADABLE["bad-payload"][0])
        old, _ = await next_of(q, "malfunction")
        assert old.receipt.seq == 2
        peer.unplug()                          # the device restarts: the frame goes with it
        await next_of(q, "link_lost")
        peer.plug()
        restored, _ = await next_of(q, "link_restored")
        assert restored.resumed is False
        peer.send(m.CardDispensed(10, 1))
        (await next_of(q, "card_dispensed"))[0].confirm()
        peer.send(m.CardDispensed(11, 1))      # number 2 again, in the new session
        new, _ = await next_of(q, "card_dispensed")
        assert new.receipt.seq == 2 and new.receipt.session != old.receipt.session
        old.confirm()
        new.confirm()                          # its Ack follows whatever old.confirm() sent
        await until(lambda: peer._inflight is None)
        assert naks_of(peer, 2) == [] and drv.stats.naks_sent == 0
        assert [msg.seq for _, msg in peer.received if isinstance(msg, m.Ack)][-1] == 2
        await drv.close()
        peer.unplug()
    run(main())


def test_a_restarted_consumer_refuses_the_recorded_unreadable_frame_without_reporting_it_again(
        link_path):
    """The consumer recorded the malfunction with its receipt and died before the NAK went
    out. The frame's number is in the session memory like any frame taken: resumed, the device
    sends the frame again, and it is refused at once (the record is durable) with no second
    malfunction."""
    frame, _, reason = UNREADABLE["unknown-type"]

    async def main():
        peer = Peer(link_path)
        peer.plug()
        q1, marks = asyncio.Queue(), []
        drv1 = open_driver(confirm_spec(link_path), q1, confirm=True, on_session=marks.append)
        await next_of(q1, "link_up")
        peer.send(frame)
        taken = (await next_of(q1, "malfunction"))[0].receipt
        await drv1.close()                     # recorded, then the process died
        assert naks_of(peer, taken.seq) == [] and peer._inflight is not None
        mark = marks[-1]
        memory = SessionMemory(mark["serial"], mark["firmware_hash"], mark["session"],
                               (taken.seq,), mark["tx_reserved"])
        q2 = asyncio.Queue()
        drv2 = open_driver(confirm_spec(link_path), q2, confirm=True, memory=memory,
                           on_session=lambda m: None)
        await next_of(q2, "link_up")
        await until(lambda: peer._inflight is None)
        assert set(naks_of(peer, taken.seq)) == {reason}
        peer.send(m.Empty())
        d, before = await next_of(q2, "empty")
        assert malfunctions(before) == [] and d.receipt.session == taken.session
        await drv2.close()
        peer.unplug()
    run(main())


def test_last_heard_grows_while_the_device_is_silent_and_drops_after_a_heartbeat(link_path):
    async def main():
        peer = Peer(link_path)
        peer.plug()
        q = asyncio.Queue()
        # a long link timeout: the silence below must not drop the link
        spec = DeviceSpec(id="shuffler", device_class="shuffler", port=link_path,
                          codec="tablectl", heartbeat_s=0.05, link_timeout_s=10.0)
        drv = make_driver(spec, q)
        assert drv.last_heard is None              # nothing heard before the link opens
        drv.start()
        await next_event(q, "link_up")
        assert drv.last_heard is not None and drv.last_heard >= 0
        peer.silent = True
        await asyncio.sleep(0.1)                   # a heartbeat already on the wire lands
        frames = drv.stats.frames_in
        first = drv.last_heard
        await asyncio.sleep(0.1)
        second = drv.last_heard
        assert drv.stats.frames_in == frames       # nothing came in between
        assert first < second and drv.is_up
        peer.send_now(m.Heartbeat(10_000))         # one heartbeat from the silent device
        await until(lambda: drv.stats.frames_in > frames)
        assert drv.last_heard < second
        await drv.close()
        peer.unplug()
    run(main())


def test_a_command_the_device_nak_s_as_not_understood_is_logged_and_not_resent(link_path):
    import structlog

    async def main():
        with structlog.testing.capture_logs() as logs:
            peer, drv, q, _ = await started(link_path, timing=SLACK)
            peer.naks[m.DispenseCard] = m.NAK_BAD_PAYLOAD
            # As a refusal (protocol.md section 9): the device did nothing, and the table
            # learns it from the queue like any refusal instead of waiting for the card.
            with pytest.raises(DeviceRefused, match="bad-argument; its firmware may be too old"):
                await drv.dispense_card()
            refused, _ = await next_event(q, "command_refused")
            assert (refused.action, refused.reason) == ("dispense_card", "bad-argument")
            # Sent again before the NAK only if a loaded machine let the ack timeout pass
            # first (the driver counts it); never after the NAK.
            copies = 1 + drv.stats.retransmissions

            def sent():
                return [s for s, msg in peer.received if isinstance(msg, m.DispenseCard)]
            await until(lambda: len(sent()) >= copies)       # each copy written has arrived
            (seq,) = set(sent())
            await asyncio.sleep(2 * drv.link.timing.ack_timeout_s)   # nothing resent after it
            assert len(sent()) == copies and drv.stats.retransmissions == copies - 1
            assert drv.is_up
            await drv.close()
            peer.unplug()
        naks = [e for e in logs if e.get("reason") == "bad-payload" and e.get("seq") == seq]
        assert naks and naks[0]["log_level"] == "warning" and naks[0]["device"] == "shuffler"
    run(main())


def test_dice_binary_command_without_an_answer_is_sent_once_and_the_link_is_lost(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path, "dice", "dice-binary", flags=0)
        peer.ignore_commands = True
        with pytest.raises(LinkDown, match="no acknowledgement of Shake after 1 attempts"):
            await drv.shake()
        lost, _ = await next_event(q, "link_lost")
        assert "no acknowledgement" in lost.reason
        assert sum(isinstance(msg, m.Shake) for _, msg in peer.received) == 1
        peer.ignore_commands = False
        await next_event(q, "link_restored")
        await drv.close()
        peer.unplug()
    run(main())


def test_a_command_of_a_type_the_device_does_not_know_is_refused_as_unknown(link_path):
    async def main():
        peer, drv, q, _ = await started(link_path, timing=SLACK)
        peer.naks[m.Shuffle] = m.NAK_UNKNOWN_TYPE
        with pytest.raises(DeviceRefused, match="unknown-command") as err:
            await drv.shuffle()
        assert err.value.reason == "unknown-command"
        refused, _ = await next_event(q, "command_refused")
        assert (refused.action, refused.reason) == ("shuffle", "unknown-command")
        assert "firmware may be too old" in refused.text
        await drv.close()
        peer.unplug()
    run(main())


def test_a_card_message_the_driver_fails_on_is_logged_without_its_cards(link_path):
    """A bug while a hand is handled is logged; the hand's cards (face down at the table) are
    not in the line: only what kind of message it was."""
    import structlog

    async def main():
        peer, drv, q, _ = await started(link_path)

        def broken(msg):
            raise RuntimeError("translation failed")
        drv._translate = broken
        with structlog.testing.capture_logs() as logs:
            peer.send(m.HandDispensed(((12, 7), (25, 7), (3, 7))))
            await until(lambda: any(e["event"] == "message not understood" for e in logs))
        await drv.close()
        peer.unplug()
        line = [e for e in logs if e["event"] == "message not understood"][0]
        assert line["message"] == "HandDispensed"
        assert "12" not in repr(line) and "25" not in repr(line)
    run(main())


def test_device_uptime_going_back_over_a_second_is_a_reboot_but_its_wrap_is_not(link_path):
    """docs/protocol.md 3.3: a device's heartbeat uptime going back by more than a second
    betrays a reboot (its BOOT notice may have been lost); the u32 wrapping after 49.7 days
    does not."""
    async def main():
        peer, drv, q, up = await started(link_path)
        peer.send_now(m.Heartbeat(0xFFFFFF00))     # the counter about to wrap; then 0, 50…
        await asyncio.sleep(0.3)
        assert drv.is_up and q.empty()
        peer.send_now(m.Heartbeat(5000))           # the peer's own beats go on from ~300 ms
        peer.supports_resume = False
        lost, _ = await next_event(q, "link_lost")
        assert lost.rebooted and "uptime went back" in lost.reason
        back, _ = await next_event(q, "link_restored")
        assert back.resumed is False
        await drv.close()
        peer.unplug()
    run(main())
