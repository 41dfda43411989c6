"""The link against a device (or a cable) that keeps getting a frame wrong: the scriptable
device of tests/test_link.py on a real pseudo-terminal through the real pyserial path."""
import asyncio

from drivers.protocol import messages as m
from drivers.protocol.framing import encode_frame
from test_link import (Peer, RawFrame, link_path, next_event, run, started,  # noqa: F401
                       until)


def on_link(link_path, device_class, body, **kw):
    """The scriptable device of ``device_class`` linked to a driver: ``body(peer, drv, q)``,
    then the driver closed and the device unplugged."""
    async def main():
        peer, drv, q, _ = await started(link_path, device_class, **kw)
        await body(peer, drv, q)
        await drv.close()
        peer.unplug()
    run(main())


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
    async def body(peer, drv, q):
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

    on_link(link_path, "shoe", body)


class Burst(Peer):
    """A device on a line hit by a burst of noise: the next ``damage`` copies of the frame in
    flight arrive damaged (those sent back to back on the host's NAKs among them)."""

    damage = 0

    def write(self, data):
        if self.damage and self._inflight and data == self._inflight[1]:
            self.damage -= 1
            data = data[:-1] + bytes((data[-1] ^ 0xFF,))
        super().write(data)


def test_a_burst_of_noise_over_a_frame_and_its_quick_copies_is_no_malfunction(link_path):
    # The copies sent at once on the NAKs go out back to back: a burst damages them all.
    # The device's own resends an ack timeout apart get through, and nothing is reported.
    from test_link import SLACK

    async def body(peer, drv, q):
        peer.__class__ = Burst
        peer.damage = 7                 # the first copy, 3 on the NAKs, 3 resent
        peer.send(m.CardDrawn(12, False, 7))
        drawn, before = await next_event(q, "card_drawn")
        assert drawn.card.code == 12 and not [e for e in before if e.kind == "malfunction"]
        assert peer.damage == 0

    on_link(link_path, "shoe", body, timing=SLACK)


class TooLong(RawFrame):
    """A reliable frame one byte past the protocol's maximum payload, its header and CRC
    right (a firmware that does not split what it reports)."""

    def encode(self, seq):
        from drivers.protocol.framing import SOF, crc8, crc16
        head = len(self.payload).to_bytes(2, "big") + bytes((seq, self.type_code))
        body = head + bytes((crc8(head),)) + self.payload
        return bytes((SOF,)) + body + crc16(body).to_bytes(2, "big")


def test_a_frame_past_the_maximum_length_is_refused_and_reported_not_dropped_for_ever(
        link_path):
    # Its header checks but names 1025 bytes, so each copy was dropped as a false start: the
    # device sent it again for ever, every event behind it waited, and the table heard
    # nothing (the link up, its heartbeats flowing).
    from drivers.protocol.framing import MAX_PAYLOAD

    async def body(peer, drv, q):
        peer.send(TooLong(m.HandDispensed.TYPE, bytes(MAX_PAYLOAD + 1)))
        peer.send(m.Jam("exit"))                        # queued behind it
        bad, before = await next_event(q, "malfunction")
        assert not [e for e in before if e.kind == "hand_dispensed"]
        assert bad.code == 0 and "HandDispensed" in bad.text
        jam, between = await next_event(q, "jam")        # the device went on
        assert jam.where == "exit" and not [e for e in between if e.kind == "malfunction"]
        refused = [msg for _, msg in peer.received if isinstance(msg, m.Nak)]
        assert refused == [m.Nak(1, m.NAK_BAD_PAYLOAD)]

    on_link(link_path, "shuffler", body)


def test_a_stray_header_naming_a_long_frame_costs_the_frame_in_flight_nothing(link_path):
    # Once is line noise that happens to look like a header (1 start byte in 256 has a
    # header CRC that checks): the frame of that number the device has in flight is not
    # refused, and arrives.
    from drivers.protocol.framing import MAX_PAYLOAD

    async def body(peer, drv, q):
        peer.write(TooLong(m.HandDispensed.TYPE, bytes(MAX_PAYLOAD + 1)).encode(1)[:40])
        peer.send(m.Jam("exit"))                         # seq 1
        jam, before = await next_event(q, "jam")
        assert not [e for e in before if e.kind == "malfunction"]
        assert not [msg for _, msg in peer.received if isinstance(msg, m.Nak)]

    on_link(link_path, "shuffler", body)


def test_the_daemons_link_refuses_a_frame_past_the_maximum_only_once_it_is_journaled(
        link_path):
    # Confirm mode (the daemon's): the device forgets the frame once refused, so the NAK
    # waits until the malfunction that records its loss is durable.
    from drivers.driver import Delivery
    from drivers.protocol.framing import MAX_PAYLOAD
    from test_link import confirm_started

    async def main():
        peer, drv, q = await confirm_started(link_path)
        peer.send(TooLong(m.HandDispensed.TYPE, bytes(MAX_PAYLOAD + 1)))
        async with asyncio.timeout(5):
            item = await q.get()
        assert isinstance(item, Delivery) and item.event.kind == "malfunction"
        assert "HandDispensed" in item.event.text
        copies = peer.copies
        await until(lambda: peer.copies >= copies + 2)  # not refused yet: sent again
        assert not [msg for _, msg in peer.received if isinstance(msg, m.Nak)] and q.empty()
        item.confirm()
        await until(lambda: peer._inflight is None)     # refused now: the device goes on
        assert q.empty()                                # reported once
        await drv.close()
        peer.unplug()
    run(main())


class AlwaysResumed(Peer):
    """A device whose firmware says RESUMED to every hello, even to one asking for a new
    session (protocol.md 3.2 allows it only as the answer to Hello(resume=1))."""

    def hello_info(self, boot=False, resumed=False):
        return super().hello_info(boot=boot, resumed=not boot)

    def _handle(self, seq, msg):
        if isinstance(msg, m.Hello):
            self.received.append((seq, msg))
            self.send_now(self.hello_info())
            self._pump()
            return
        super()._handle(seq, msg)


def test_another_unit_that_says_resumed_to_a_new_session_gets_one_and_is_heard(link_path):
    # Another unit behind the port offers to resume; the host asks for a new session, and the
    # unit says RESUMED again: the host asked again, and again, as fast as the line goes (13,000
    # hellos in 5 s), and the unit never linked. Taken as resumed, the first unit's numbers
    # would have dropped the new unit's first events as duplicates.
    async def main():
        peer, drv, q, up = await started(link_path, "shoe")
        for code in (1, 2, 3):
            peer.send(m.CardDrawn(code, False, 7))
            await next_event(q, "card_drawn")
        await until(lambda: peer._inflight is None)
        peer.unplug()
        await next_event(q, "link_lost")
        other = AlwaysResumed(link_path, "shoe")
        other.serial_no = "99999"
        other.plug()
        back, _ = await next_event(q, "link_restored")
        assert back.identity.serial == "99999" and back.resumed is False
        other.send(m.CardDrawn(40, False, 7))            # its own seq 1
        drawn, _ = await next_event(q, "card_drawn")
        assert drawn.card.code == 40
        await drv.close()
        other.unplug()
    run(main())


class Rebooting(Peer):
    """A device that answers every hello with a boot notice (it restarts at each one, a
    brown-out, or its firmware sets the BOOT flag in every HelloInfo)."""

    def _handle(self, seq, msg):
        if isinstance(msg, m.Hello):
            self.received.append((seq, msg))
            self.send_now(self.hello_info(boot=True))
            return
        super()._handle(seq, msg)


def test_a_device_answering_every_hello_with_a_boot_notice_is_named_not_flooded(link_path):
    # Each boot notice was answered with a hello at once: 18,000 hellos in 3 s over a pty,
    # and the problem shown was "no answer to hello: check that the device is powered".
    from drivers.factory import open_driver
    from drivers.spec import DeviceSpec
    from test_link import FAST

    async def main():
        peer = Rebooting(link_path, "shoe")
        peer.plug()
        drv = open_driver(DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST),
                          asyncio.Queue())
        await until(lambda: "boot notice" in (drv.problem or ""))
        await drv.close()
        hellos = [msg for _, msg in peer.received if isinstance(msg, m.Hello)]
        attempts = drv.link.timing.hello_attempts
        assert len(hellos) <= 2 * 2 * attempts      # two openings at most, one answer each
        assert "restarts" in drv.problem and "power" in drv.problem
        assert not drv.is_up
        peer.unplug()
    run(main())
