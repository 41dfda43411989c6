"""The simulator's sessions and retransmission with the real host drivers (docs/protocol.md 3.1,
3.2): an event is sent until it is acknowledged however long that takes, an event whose ack was
lost just before the link dropped is delivered once after a resumed session, and a reboot
starts a new session.

Where the host's acknowledgements must be lost, a :class:`Cable` sits between the driver and
the device: a pseudo-terminal of its own for the driver, the device's port opened with
pyserial, bytes copied both ways, the host's frames decoded so that its acks can be dropped.
"""
import asyncio
import os
import random
import select
import threading
import time
import tty

import pytest
import serial

from controller.rules.cards import Card
from drivers.factory import open_driver
from drivers.protocol import Received, get_codec
from drivers.protocol import messages as m

firmware_sim = pytest.importorskip("firmware_sim.table")
SimulatedTable = firmware_sim.SimulatedTable

pytestmark = pytest.mark.hil

FAST = dict(heartbeat_s=0.05, link_timeout_s=0.5)
SPEED = 1000


class Cable:
    """A serial cable that can lose the host's acknowledgements on their way to the device.

    The host opens ``link``; the cable reopens the device's port by its stable name whenever
    the device was unplugged. ``lose_acks`` (a bool, set by the test) drops every ack the host
    sends; ``lose_next_ack(then)`` drops only the next one and calls ``then()`` right after,
    before any other byte of the host's passes. ``lost`` lists the acks that were dropped."""

    def __init__(self, device_port: str, link: str) -> None:
        self.device_port = device_port
        self.link = link
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)            # held open: no EIO on the master, no echo
        os.set_blocking(self.master, False)
        os.symlink(os.ttyname(self.slave), link)
        self.codec = get_codec("tablectl", receive_from="host")
        self.lose_acks = False
        self.lost: list[m.Ack] = []
        self._then = None
        self._dev: serial.Serial | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=f, daemon=True) for f in (self._up, self._down)]
        for t in self._threads:
            t.start()

    def lose_next_ack(self, then) -> None:
        """Drop the next ack the host sends, then call ``then()`` (None: disarm)."""
        self._then = then

    @property
    def armed(self) -> bool:
        return self._then is not None

    def _up(self) -> None:
        """Host to device, frame by frame."""
        while not self._stop.is_set():
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                data = os.read(self.master, 4096)
            except (BlockingIOError, OSError):
                continue
            for item in self.codec.feed(data):
                if not isinstance(item, Received):
                    continue
                if isinstance(item.message, m.Ack) and (self.lose_acks or self._then):
                    self.lost.append(item.message)
                    then, self._then = self._then, None
                    if then is not None:
                        then()
                    continue
                self._to_device(self.codec.encode(item.message, item.seq))

    def _to_device(self, data: bytes) -> None:
        with self._lock:
            if self._dev is None:
                return                    # the device is unplugged: lost, as on a real cable
            try:
                self._dev.write(data)
            except (serial.SerialException, OSError):
                self._close_device()

    def _down(self) -> None:
        """Device to host, byte for byte."""
        while not self._stop.is_set():
            with self._lock:
                dev = self._dev
            if dev is None:
                try:
                    dev = serial.Serial(self.device_port, timeout=0.05)
                except (serial.SerialException, OSError):
                    time.sleep(0.02)
                    continue
                with self._lock:
                    self._dev = dev
            try:
                data = dev.read(1)
                data += dev.read(dev.in_waiting)
            except (serial.SerialException, OSError, TypeError):
                with self._lock:
                    self._close_device()
                continue
            if data:
                try:
                    os.write(self.master, data)
                except (BlockingIOError, OSError):
                    pass                  # nobody reading: a UART drops bytes too

    def _close_device(self) -> None:
        if self._dev is not None:
            try:
                self._dev.close()
            except (serial.SerialException, OSError):
                pass
            self._dev = None

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(2)
        with self._lock:
            self._close_device()
        os.unlink(self.link)
        os.close(self.master)
        os.close(self.slave)


async def next_event(q: asyncio.Queue, kind: str, timeout: float = 10.0, seen=None):
    """The next event of ``kind`` on the driver's queue; the others go to ``seen``."""
    async with asyncio.timeout(timeout):
        while True:
            e = await q.get()
            if e.kind == kind:
                return e
            if seen is not None:
                seen.append(e)


async def drain(drv, q: asyncio.Queue) -> list:
    """Every event up to a status round trip (all earlier events are in by then)."""
    await drv.status()
    out = []
    while True:
        e = q.get_nowait()
        if e.kind in ("status", "status_answer"):     # the shuffler names its answer
            return out
        out.append(e)


async def all_acknowledged(dev, timeout: float = 5.0) -> None:
    """Wait until the device has no event in flight (the host's last ack has reached it)."""
    async with asyncio.timeout(timeout):
        while dev.status()["unacknowledged"] is not None:
            await asyncio.sleep(0.02)


def drawn_by_firmware(dev) -> list[Card]:
    return [Card.parse(e["card"]) for e in dev.emitted("card_drawn")]


def test_an_event_whose_ack_was_lost_before_unplugging_arrives_once_after_reconnection(tmp_path):
    async def main():
        with SimulatedTable(seed=11, speed=SPEED) as table:
            dev = table.add("shoe")
            cable = Cable(dev.port, str(tmp_path / "shoe-cable"))
            q: asyncio.Queue = asyncio.Queue()
            drv = open_driver(dev.spec(port=cable.link, **FAST), q)
            try:
                await next_event(q, "link_up")
                # The host gets the card and acknowledges it; the ack is lost and the device
                # is unplugged before it could send the card again.
                cable.lose_next_ack(then=lambda: dev.disconnect(duration_s=1.0))
                dev.draw()
                seen = []
                first = await next_event(q, "card_drawn", seen=seen)
                await next_event(q, "link_lost", seen=seen)
                await next_event(q, "link_restored", seen=seen)
                dev.draw()
                events = seen + await drain(drv, q)
                cards = [first.card] + [e.card for e in events if e.kind == "card_drawn"]
                assert cards == drawn_by_firmware(dev)          # each once, in order
                assert len(cards) == 2
                assert cable.lost == [m.Ack(1, 0)]
                st = dev.status()
                assert st["stats"]["resumed_sessions"] >= 1
                # The device sent it again under its number; the driver recognised it.
                assert any(f[1:] == ("tx", "CardDrawn", 1, "after resume") for f in dev.frames())
                assert drv.stats.duplicates >= 1
            finally:
                await drv.close()
                cable.close()
    asyncio.run(asyncio.wait_for(main(), 60))


def test_an_event_is_sent_again_while_acks_are_lost_and_delivered_once(tmp_path):
    async def main():
        with SimulatedTable(seed=12, speed=SPEED) as table:
            dev = table.add("shoe")
            cable = Cable(dev.port, str(tmp_path / "shoe-cable"))
            q: asyncio.Queue = asyncio.Queue()
            drv = open_driver(dev.spec(port=cable.link, **FAST), q)
            try:
                await next_event(q, "link_up")
                cable.lose_acks = True
                dev.draw()
                dev.draw()                        # queued behind the first
                # Well past the 4 transmissions after which the host would give up a command.
                deadline = time.monotonic() + 10
                while len(cable.lost) < 10 and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert len(cable.lost) >= 10 and set(cable.lost) == {m.Ack(1, 0)}
                assert dev.status()["unacknowledged"] == 1
                cable.lose_acks = False
                events = []
                await next_event(q, "card_drawn", seen=events)
                await next_event(q, "card_drawn", seen=events)
                events += await drain(drv, q)
                # Heartbeats flowed all along: the link never dropped, no hello was needed.
                assert not [e for e in events if e.kind in ("link_lost", "link_restored")]
                assert not [e for e in events if e.kind == "card_drawn"]   # no second copy
                await all_acknowledged(dev)
                assert drv.stats.duplicates >= 10
                assert dev.status()["stats"]["new_sessions"] == 1     # the first hello only
            finally:
                await drv.close()
                cable.close()
    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize("transport", ["pty", "usb"])
def test_an_event_lost_many_times_on_the_wire_arrives_once(transport):
    async def main():
        with SimulatedTable(seed=13, speed=SPEED, transport=transport) as table:
            dev = table.add("box-sensors")
            q: asyncio.Queue = asyncio.Queue()
            drv = open_driver(dev.spec(**FAST), q)
            try:
                await next_event(q, "link_up")
                dev.inject("drop", count=10)       # the first 10 transmissions are lost
                dev.place_card(4)
                dev.place_card(6)
                seen = []
                placed = [await next_event(q, "card_placed", seen=seen) for _ in range(2)]
                seen += await drain(drv, q)
                assert [e.box for e in placed] == [4, 6]
                assert not [e for e in seen if e.kind in ("card_placed", "link_lost")]
                st = dev.status()["stats"]
                assert st["fault_drop"] == 10 and st["retransmissions"] >= 10
            finally:
                await drv.close()
    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize("transport", ["pty", "usb"])
def test_a_reboot_starts_a_new_session_and_its_events_are_not_taken_for_old_ones(transport):
    async def main():
        with SimulatedTable(seed=14, speed=SPEED, transport=transport) as table:
            dev = table.add("shoe")
            q: asyncio.Queue = asyncio.Queue()
            drv = open_driver(dev.spec(**FAST), q)
            try:
                await next_event(q, "link_up")
                got = []
                for _ in range(3):                # numbers 1-3, remembered by the host
                    dev.draw()
                    got.append((await next_event(q, "card_drawn")).card)
                await all_acknowledged(dev)
                dev.reboot()
                await next_event(q, "link_lost")   # BOOT notice (pty) or re-enumeration (USB)
                await next_event(q, "link_restored")
                st = dev.status()["stats"]
                # The host asked to resume; a rebooted device cannot, and says so.
                assert (st["new_sessions"], st.get("resumed_sessions", 0)) == (2, 0)
                for _ in range(3):                # numbered 1-3 again: new events all the same
                    dev.draw()
                events = await drain(drv, q)
                got += [e.card for e in events if e.kind == "card_drawn"]
                assert got == drawn_by_firmware(dev) and len(got) == 6
                assert any(f[1:3] == ("tx", "CardDrawn") and f[3] == 1
                           for f in dev.frames()[-40:])   # numbering started again at 1
            finally:
                await drv.close()
    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_different_device_behind_the_same_port_is_not_resumed(tmp_path):
    """A shoe that had a session with another host is put where this host's shoe was, without
    a power cycle. It may answer Hello(resume=1) with RESUMED (it has had a session since it
    booted), but it is not the device this host's memory is about: the host must start a new
    session, or the new shoe's cards are taken for the old one's and dropped."""
    from firmware_sim.rawhost import RawHost
    port_path = str(tmp_path / "shoe")

    async def main():
        with SimulatedTable(seed=16, speed=SPEED) as table:
            old, new = table.add("shoe", name="old"), table.add("shoe", name="new")
            other = serial.Serial(new.port, timeout=0.05)        # another host's session
            elsewhere = RawHost.over_serial(other)
            elsewhere.hello()
            new.draw()
            elsewhere.wait_for(m.CardDrawn)
            elsewhere.collect(0.1)
            other.close()
            os.symlink(old.tty, port_path)
            q: asyncio.Queue = asyncio.Queue()
            drv = open_driver(old.spec(port=port_path, **FAST), q)
            try:
                await next_event(q, "link_up")
                for _ in range(3):                                # numbers 1-3
                    old.draw()
                    await next_event(q, "card_drawn")
                os.unlink(port_path)
                old.disconnect()                                  # unplugged...
                os.symlink(new.tty, port_path)                    # ...and the other one in
                restored = await next_event(q, "link_restored")
                assert restored.identity.serial == new.serial
                new.draw()                                        # the new shoe's number 2
                events = await drain(drv, q)
                assert [e.card for e in events if e.kind == "card_drawn"] == [
                    Card.parse(new.emitted("card_drawn")[-1]["card"])]
            finally:
                await drv.close()
    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.long
def test_soak_events_arrive_exactly_once_when_unplugged_with_their_ack_in_flight(tmp_path):
    """Long: 300 cards drawn through random line faults and unplugging, many unplugs just
    after the host acknowledged a card and before the ack reached the shoe. A device that
    renumbered on every hello would deliver those cards twice."""
    from firmware_sim import SimulatorError
    rng = random.Random(3232)
    line_faults = [("drop", {}), ("duplicate", {}), ("corrupt_crc", {}),
                   ("delay", {"seconds": 0.3}), ("garbage", {"nbytes": 40}),
                   ("drop", {"frames": "heartbeats", "count": 3})]

    async def main():
        with SimulatedTable(seed=15, speed=SPEED) as table:
            dev = table.add("shoe")
            cable = Cable(dev.port, str(tmp_path / "shoe-cable"))
            q: asyncio.Queue = asyncio.Queue()
            drv = open_driver(dev.spec(port=cable.link, **FAST), q)
            unplugs = []

            def unplug_with_ack_in_flight():
                unplugs.append(len(cable.lost))
                dev.disconnect(duration_s=rng.uniform(0.05, 1.2))
            try:
                await next_event(q, "link_up")
                for _ in range(300):
                    if rng.random() < 0.8:
                        # Mostly the croupier waits for the link; sometimes cards are drawn
                        # while the shoe is unplugged, to be sent when it is back.
                        while not dev.connected:
                            await asyncio.sleep(0.02)
                        await asyncio.sleep(0.05)   # the host notices a loss by now
                        await drv.wait_up(30)
                    r = rng.random()
                    if r < 0.12 and not cable.armed:
                        cable.lose_next_ack(then=unplug_with_ack_in_flight)
                    elif r < 0.15:
                        dev.disconnect(duration_s=rng.uniform(0.05, 1.2))
                    elif r < 0.35:
                        name, args = rng.choice(line_faults)
                        dev.inject(name, **args)
                    try:
                        dev.draw()
                    except SimulatorError:          # the shoe is empty: the next deck
                        dev.load_deck(fresh=True)
                        dev.draw()
                    await asyncio.sleep(rng.uniform(0, 0.03))
                cable.lose_next_ack(then=None)
                # Let everything land, then compare with what the shoe did.
                async with asyncio.timeout(60):
                    while not dev.connected or dev.status()["queued"]:
                        await asyncio.sleep(0.1)
                await drv.wait_up(20)
                events = await drain(drv, q)
                got = [e.card for e in events if e.kind == "card_drawn"]
                assert got == drawn_by_firmware(dev)
                assert len(got) == 300
                assert len(unplugs) >= 10
                # An outage shorter than the link timeout needs no hello: the shoe's
                # retransmission alone brings the card again. The longer ones resumed.
                assert dev.status()["stats"]["resumed_sessions"] >= 10
            finally:
                await drv.close()
                cable.close()
    asyncio.run(asyncio.wait_for(main(), 600))
