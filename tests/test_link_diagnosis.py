"""What the link tells of a device that is wrongly set up, and how it keeps that from flooding
the journal and the log (docs/protocol.md 3.2-3.4).

The scriptable device is the one of tests/test_link.py, on a real pseudo-terminal through the
real pyserial path; the USB device is the firmware simulator's, through the real pyusb path.
"""
import asyncio
import dataclasses
import os
import random

import pytest
import structlog

from drivers.factory import open_driver
from drivers.protocol import messages as m
from drivers.spec import DeviceSpec
from test_link import FAST, Peer, link_path, next_event, run, started, until  # noqa: F401


def hellos(peer):
    return sum(isinstance(msg, m.Hello) for _, msg in peer.received)


def shoe_spec(link_path):
    return DeviceSpec(id="shoe", device_class="shoe", port=link_path, **FAST)


class MutePeer(Peer):
    """A device that answers hello but sends no heartbeat until ``beating`` is set (firmware
    that does not keep the protocol's heartbeat)."""

    beating = False

    async def _heartbeats(self):
        uptime = 0
        while True:
            if self.beating and not self.silent:
                self.send_now(m.Heartbeat(uptime))
            uptime += 50
            await asyncio.sleep(0.05)


def test_a_device_that_answers_hello_but_sends_no_heartbeat_is_lost_once_and_told_plainly(
        link_path):
    """The link comes up on the hello and dies of silence: once, with the reason in words the
    operator can act on. Later openings, answered the same way, are not reported restored
    (and lost again) each time: the journal holds one loss, not a pair every half second."""
    async def main():
        peer = MutePeer(link_path, "shoe")
        peer.plug()
        q = asyncio.Queue()
        drv = open_driver(shoe_spec(link_path), q)
        await next_event(q, "link_up")
        lost, _ = await next_event(q, "link_lost")
        assert "answers hello but sends no heartbeat" in lost.reason
        assert "firmware" in lost.reason
        seen = hellos(peer)
        await until(lambda: hellos(peer) >= seen + 3, timeout=20)
        assert q.empty(), [e.kind for e in q._queue]
        assert not drv.is_up
        peer.beating = True                          # the firmware put right
        back, before = await next_event(q, "link_restored", timeout=15)
        assert before == [] and back.identity.serial == "00421"
        peer.send(m.CardDrawn(5))
        drawn, before = await next_event(q, "card_drawn")
        assert before == [] and drv.is_up
        await drv.close()
        peer.unplug()
    run(main())


class FadingPeer(Peer):
    """A device whose heartbeats stop soon after each hello: a link that keeps dying right
    after it came up. ``beats`` heartbeats follow each HelloInfo (None: for ever)."""

    beats = 2
    left = 0

    def _handle(self, seq, msg):
        if isinstance(msg, m.Hello):
            self.left = self.beats
        super()._handle(seq, msg)

    async def _heartbeats(self):
        uptime = 0
        while True:
            if not self.silent and (self.beats is None or self.left > 0):
                if self.beats is not None:
                    self.left -= 1
                self.send_now(m.Heartbeat(uptime))
            uptime += 50
            await asyncio.sleep(0.05)


def test_a_link_that_keeps_dying_soon_after_it_came_up_backs_off_until_one_lasts(link_path):
    """Each short-lived link counts as a failed attempt: the delay before the next opening
    doubles as it does for a device that never answers. A link that stayed up long enough puts
    it back to the shortest."""
    def waits(logs):
        return [e.get("retry_in_s") for e in logs if e["event"] == "link lost"]

    async def main():
        with structlog.testing.capture_logs() as logs:
            peer = FadingPeer(link_path, "shoe")
            peer.plug()
            q = asyncio.Queue()
            drv = open_driver(shoe_spec(link_path), q)
            await until(lambda: len(waits(logs)) >= 4, timeout=20)
            short = waits(logs)[:4]
            assert None not in short and all(b > a for a, b in zip(short, short[1:])), short
            peer.beats = None                         # the device keeps its heartbeat now
            await next_event(q, "link_restored", timeout=15)
            await asyncio.sleep(drv.link.timing.stable_s + 0.5)   # a link that lasts
            assert drv.is_up
            peer.silent = True
            n = len(waits(logs))
            await until(lambda: len(waits(logs)) > n)
            assert waits(logs)[n] == short[0], waits(logs)
            await drv.close()
            peer.unplug()
    run(main())


def test_a_link_that_served_the_table_before_it_died_is_reopened_at_once(link_path):
    """A link that carried the device's work (a card taken and acknowledged) was a success,
    however short: a shoe unplugged again and again between rounds is reopened after the
    shortest delay each time, not after a delay grown to the longest."""
    async def main():
        with structlog.testing.capture_logs() as logs:
            peer = FadingPeer(link_path, "shoe")
            peer.beats = 4
            peer.plug()
            q = asyncio.Queue()
            drv = open_driver(shoe_spec(link_path), q)
            waits = []
            for i in range(4):
                await next_event(q, "link_up" if i == 0 else "link_restored", timeout=15)
                peer.send(m.CardDrawn(5))
                await next_event(q, "card_drawn")
                await next_event(q, "link_lost")
                waits.append([e.get("retry_in_s") for e in logs
                              if e["event"] == "link lost"][-1])
            assert waits == [drv.link.timing.backoff_min_s] * 4, waits
            await drv.close()
            peer.unplug()
    run(main())


async def pour(peer, data, chunk=512):
    """Write ``data`` into the device's end of the pty as fast as the host takes it."""
    i = 0
    while i < len(data):
        try:
            i += os.write(peer.master, data[i:i + chunk])
        except BlockingIOError:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0)


def test_a_flood_of_line_noise_is_logged_at_once_then_in_summaries_that_add_up(link_path):
    """200 KB of noise: the first garbage is logged at once, the rest summed in a line per
    interval (not a line per read), and the lines account for every byte dropped."""
    noise = random.Random(5).randbytes(200_000)

    def lines(logs):
        return [e for e in logs if e["event"] == "garbage dropped"]

    async def main():
        with structlog.testing.capture_logs() as logs:
            peer, drv, q, _ = await started(link_path, "shoe")
            peer.write(b"\x00\x13garbage")
            await until(lambda: lines(logs))          # the first, before any interval ended
            await pour(peer, noise)
            await until(lambda: drv.stats.garbage_bytes >= len(noise))
            assert drv.is_up
            await drv.close()
            peer.unplug()
        got = lines(logs)
        assert 1 < len(got) < 10, len(got)
        assert sum(e["bytes"] for e in got) == drv.stats.garbage_bytes
        assert all(e["device"] == "shoe" for e in got)
    run(main())


class WrongBaudPeer(Peer):
    """A device set to another baud rate than the host's: every byte arrives mangled."""

    def write(self, data):
        super().write(bytes(b ^ 0x5A for b in data))


def test_bytes_that_never_make_a_frame_point_to_the_baud_rate(link_path):
    """A baud-rate mismatch is not silence: the hello goes unanswered, but the log says that
    bytes arrive and none is a frame, and what to check. A silent device is not told so."""
    def unanswered(logs):
        return [e for e in logs if e["event"] == "no answer to hello"]

    async def main():
        with structlog.testing.capture_logs() as logs:
            peer = WrongBaudPeer(link_path, "shoe")
            peer.plug()
            q = asyncio.Queue()
            drv = open_driver(shoe_spec(link_path), q)
            await until(lambda: unanswered(logs), timeout=10)
            assert q.empty() and not drv.is_up
            # The driver tells the same reason, for the pit display; cleared once the link
            # comes up (the device set to the right rate).
            assert drv.problem == unanswered(logs)[0]["problem"]
            peer.unplug()
            peer = Peer(link_path, "shoe")
            peer.plug()
            await next_event(q, "link_up")
            assert drv.problem is None
            await drv.close()
            peer.unplug()
        problem = unanswered(logs)[0].get("problem", "")
        assert "bytes arrive but none is a frame" in problem, unanswered(logs)[0]
        assert "baud" in problem and "115200" in problem and "cable" in problem

        with structlog.testing.capture_logs() as logs:
            peer = Peer(link_path, "shoe")
            peer.silent = True
            peer.plug()
            drv = open_driver(shoe_spec(link_path), asyncio.Queue())
            await until(lambda: unanswered(logs), timeout=10)
            await drv.close()
            peer.unplug()
        assert "baud" not in unanswered(logs)[0].get("problem", "")
    run(main())


def test_a_usb_device_of_another_class_is_refused_with_advice_for_usb(link_path):
    """The configured USB device answers as a shoe where a shuffler is configured: the advice
    names the settings that choose a USB device (usb_serial, usb_vendor / usb_product), not a
    port, and the serial number found."""
    table_mod = pytest.importorskip("firmware_sim.table")

    def refused(logs):
        return [e for e in logs if e["event"] == "device refused"]

    async def main():
        with table_mod.SimulatedTable(seed=3, speed=1000, transport="usb") as table:
            shoe = table.add("shoe", "shoe", serial="SHOE-7")
            spec = dataclasses.replace(shoe.spec(**FAST), id="shuffler", device_class="shuffler")
            with structlog.testing.capture_logs() as logs:
                drv = open_driver(spec, asyncio.Queue())
                await until(lambda: refused(logs), timeout=10)
                await drv.close()
        problem = refused(logs)[0]["problem"]
        assert "configured as a shuffler" in problem
        assert "usb_serial" in problem and "SHOE-7" in problem
        assert "port" not in problem
    run(main())


def test_a_serial_device_of_another_class_is_refused_naming_its_port(link_path):
    def refused(logs):
        return [e for e in logs if e["event"] == "device refused"]

    async def main():
        with structlog.testing.capture_logs() as logs:
            peer = Peer(link_path, "shoe")
            peer.plug()
            drv = open_driver(DeviceSpec(id="shuffler", device_class="shuffler",
                                         port=link_path, **FAST), asyncio.Queue())
            await until(lambda: refused(logs), timeout=10)
            assert drv.problem == refused(logs)[0]["problem"] and not drv.is_up
            await drv.close()
            peer.unplug()
        problem = refused(logs)[0]["problem"]
        assert "configured as a shuffler" in problem and link_path in problem
        assert "usb" not in problem
    run(main())
