"""Hardware in the loop: the real drivers against the firmware simulator.

Each device runs in the simulator (firmware_sim.table.SimulatedTable, a background thread)
behind a pseudo-terminal, opened through the real pyserial path, or behind the simulator's
pyusb backend, opened through the real pyusb path. The driver's events on its queue are
checked against what the firmware says it did. Faults are injected live.
"""
import asyncio
import contextlib

import pytest

from controller.rules.cards import Card, full_deck
from drivers.driver import DeviceRefused
from drivers.factory import open_driver
from drivers.link import LinkDown

firmware_sim = pytest.importorskip("firmware_sim.table")
SimulatedTable = firmware_sim.SimulatedTable

pytestmark = pytest.mark.hil

TRANSPORTS = ["pty", "usb"]
FAST = dict(heartbeat_s=0.05, link_timeout_s=0.5)
SPEED = 1000          # a shuffle in 30 ms, a shake in 5 ms


class Rig:
    """One simulated device and its real driver in the test's event loop."""

    def __init__(self, table, dev, drv, queue):
        self.table, self.dev, self.drv, self.q = table, dev, drv, queue
        self.seen = []

    async def next(self, kind, timeout=5.0):
        """The next event of ``kind``; the events skipped before it are in ``self.seen``."""
        self.seen = []
        async with asyncio.timeout(timeout):
            while True:
                e = await self.q.get()
                if e.kind == kind:
                    return e
                self.seen.append(e)

    async def quiet(self):
        """Drain the queue up to a status round trip: every earlier event is in."""
        await self.drv.status()
        out = []
        while True:
            e = self.q.get_nowait()
            if e.kind in ("status", "status_answer"):     # the shuffler names its answer
                return out
            out.append(e)


@contextlib.asynccontextmanager
async def rig(device_class, transport="pty", **add):
    with SimulatedTable(seed=7, speed=SPEED, transport=transport) as table:
        dev = table.add(device_class, **add)
        q = asyncio.Queue()
        drv = open_driver(dev.spec(**FAST), q)
        r = Rig(table, dev, drv, q)
        try:
            up = await r.next("link_up")
            if add.get("codec", "tablectl") == "tablectl":
                assert up.identity == dev.identity
            else:     # a vendor codec carries less: the class and what it can express
                assert up.identity.device_class == dev.identity.device_class
            yield r
        finally:
            await drv.close()


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 60))


DECK = [Card.from_code((i * 7) % 52) for i in range(52)]      # an explicit, known order


# --- shuffler ---------------------------------------------------------------------------

@pytest.mark.parametrize("transport", TRANSPORTS)
def test_shuffler_commands_and_events(transport):
    async def main():
        async with rig("shuffler", transport) as r:
            with pytest.raises(DeviceRefused, match="not-ready"):
                await r.drv.dispense_card()
            # The refusal also reaches the queue, for the table to journal and act on.
            refused = await r.next("command_refused")
            assert (refused.device, refused.action, refused.reason) == (
                r.dev.spec().id, "dispense_card", "not-ready")
            assert "shuffle first" in refused.text and r.seen == []
            r.dev.set_next_deck([str(c) for c in DECK])
            await r.drv.shuffle()
            done = await r.next("shuffle_done")
            assert [e.kind for e in r.seen] == ["shuffle_started"] and done.count == 52
            await r.drv.dispense_card()
            one = await r.next("card_dispensed")
            assert one.card == DECK[0] and one.deck_id is not None
            await r.drv.dispense_hand(3)
            hand = await r.next("hand_dispensed")
            assert hand.cards == tuple(DECK[1:4]) and len(set(hand.deck_ids)) == 1
            await r.drv.deck_check()
            # The shuffler collects its whole deck (the dealt cards back in) and reads it.
            check = await r.next("deck_check_result")
            assert check.count == 52 and check.cards is not None
            assert sorted(check.cards) == sorted(DECK)
            assert check.missing == check.extra == check.duplicate == ()
            st = await r.drv.status()
            assert st.detail["cards"] == 52
            with pytest.raises(DeviceRefused, match="bad-argument"):
                await r.drv.dispense_hand(14)
    run(main())


def test_shuffler_door_jam_malfunction_and_empty():
    async def main():
        async with rig("shuffler") as r:
            r.dev.open_door()
            await r.next("door_opened")
            with pytest.raises(DeviceRefused, match="door-open"):
                await r.drv.shuffle()
            r.dev.close_door()
            await r.next("door_closed")
            await r.drv.shuffle()
            await r.next("shuffle_done")
            r.dev.inject("jam", where="gate")
            assert (await r.next("jam")).where == "gate"
            with pytest.raises(DeviceRefused, match="jammed"):
                await r.drv.dispense_card()
            r.dev.clear_jam()
            await r.drv.shuffle()
            await r.next("shuffle_done")
            dealt = 0
            while dealt < 52:
                n = min(13, 52 - dealt)
                await r.drv.dispense_hand(n)
                dealt += len((await r.next("hand_dispensed")).cards)
            await r.next("empty")
            with pytest.raises(DeviceRefused, match="empty"):
                await r.drv.dispense_card()
            r.dev.inject("malfunction", code=3, text="elevator stalled")
            bad = await r.next("malfunction")
            assert bad.code == 3 and bad.text == "elevator stalled"
            with pytest.raises(DeviceRefused, match="fault"):
                await r.drv.shuffle()
    run(main())


@pytest.mark.parametrize("fault,args,check", [
    ("deck_missing", {"card": "As"},
     lambda c: c.count == 51 and c.missing == (Card.parse("As"),) and not c.duplicate),
    ("deck_extra", {"card": "Kd", "deck_id": 2},
     lambda c: c.count == 53 and c.extra == (Card.parse("Kd"),) and 2 in c.deck_ids
     and [c.cards[i] for i, d in enumerate(c.card_deck_ids) if d == 2] == [Card.parse("Kd")]
     and len(c.card_deck_ids) == len(c.cards)),
    ("deck_duplicate", {"card": "Qh"},
     lambda c: c.count == 52 and c.duplicate == (Card.parse("Qh"),) and len(c.missing) == 1),
])
def test_deck_check_finds_missing_extra_and_duplicate_cards(fault, args, check):
    async def main():
        async with rig("shuffler") as r:
            r.dev.inject(fault, **args)
            await r.drv.shuffle()
            await r.next("shuffle_done")
            await r.drv.deck_check()
            c = await r.next("deck_check_result")
            assert check(c), c
    run(main())


def test_unshuffled_deck_comes_out_in_sorted_order():
    async def main():
        async with rig("shuffler") as r:
            r.dev.inject("deck_sorted")
            await r.drv.shuffle()
            await r.next("shuffle_done")
            await r.drv.dispense_hand(5)
            hand = await r.next("hand_dispensed")
            assert hand.cards == tuple(full_deck()[:5])
    run(main())


def test_shuffler_that_does_not_recognise_cards():
    async def main():
        async with rig("shuffler", recognises_cards=False) as r:
            assert not r.drv.identity.recognises_cards
            await r.drv.shuffle()
            await r.next("shuffle_done")
            await r.drv.dispense_hand(2)
            assert (await r.next("hand_dispensed")).cards == (None, None)
            await r.drv.deck_check()
            c = await r.next("deck_check_result")
            assert c.count == 52 and c.cards is None and c.missing == ()
    run(main())


# --- shoe -------------------------------------------------------------------------------

@pytest.mark.parametrize("transport", TRANSPORTS)
def test_shoe_events(transport):
    async def main():
        async with rig("shoe", transport) as r:
            r.dev.load_deck([str(c) for c in DECK[:6]], cut_at=4)
            r.dev.draw()
            e = await r.next("card_drawn")
            assert e.card == DECK[0] and not e.face_up and e.deck_id is not None
            r.dev.draw(face_up=True)
            e = await r.next("card_drawn")
            assert e.card == DECK[1] and e.face_up
            r.dev.inject("face_up")
            r.dev.draw()
            e = await r.next("card_drawn")
            assert e.card == DECK[2] and e.face_up
            r.dev.inject("misread")
            r.dev.draw()
            await r.next("misread")
            events = await r.quiet()
            assert "cut_card_reached" in [e.kind for e in events] or any(
                e.kind == "cut_card_reached" for e in r.seen)
            r.dev.draw()
            r.dev.draw()
            await r.next("empty")
            r.dev.open_door()
            await r.next("door_opened")
            r.dev.close_door()
            await r.next("door_closed")
            r.dev.inject("jam")
            await r.next("jam")
            st = await r.drv.status()
            assert st.state == "jammed"
    run(main())


# --- dice -------------------------------------------------------------------------------

@pytest.mark.parametrize("transport,codec", [("pty", "tablectl"), ("usb", "tablectl"),
                                             ("pty", "dice-binary")])
def test_dice_events(transport, codec):
    async def main():
        async with rig("dice", transport, codec=codec) as r:
            r.dev.set_next_dice([3, 1, 6, 6])
            await r.drv.shake()
            res = await r.next("dice_result")
            assert [e.kind for e in r.seen] == ["shake_started"] and res.dice == (3, 1, 6, 6)
            r.dev.inject("die_not_flat", die=2)
            await r.drv.shake()
            assert (await r.next("die_not_flat")).die == 2
            r.dev.inject("die_out_of_cup", die=1)
            await r.drv.shake()
            assert (await r.next("die_out_of_cup")).die == 1
            with pytest.raises(DeviceRefused, match="not-ready"):
                await r.drv.shake()
            r.dev.return_die()
            r.dev.open_lid()
            await r.next("door_opened")
            with pytest.raises(DeviceRefused, match="door-open"):
                await r.drv.shake()
            r.dev.close_lid()
            await r.next("door_closed")
            r.dev.inject("malfunction", code=7)
            assert (await r.next("malfunction")).code == 7
    run(main())


# --- box sensors ------------------------------------------------------------------------

@pytest.mark.parametrize("transport", TRANSPORTS)
def test_box_sensors_events(transport):
    async def main():
        async with rig("box-sensors", transport) as r:
            r.dev.place_card(3)
            assert (await r.next("card_placed")).box == 3
            r.dev.remove_card(3)
            assert (await r.next("card_removed")).box == 3
            r.dev.place_card(1)
            assert (await r.next("card_placed")).box == 1
            r.dev.inject("malfunction", code=2)
            assert (await r.next("malfunction")).code == 2
    run(main())


# --- link faults ------------------------------------------------------------------------

async def dispensed_once(r):
    """Dispense one card; the driver reports it exactly once."""
    await r.drv.dispense_card()
    one = await r.next("card_dispensed")
    later = await r.quiet()
    assert not [e for e in later if e.kind == "card_dispensed"]
    assert len(r.dev.emitted("card_dispensed")) == 1
    return one


async def shuffled(r):
    await r.drv.shuffle()
    await r.next("shuffle_done")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_disconnect_gives_link_lost_then_restored(transport):
    async def main():
        async with rig("shuffler", transport) as r:
            await shuffled(r)
            r.dev.disconnect()
            lost = await r.next("link_lost")
            assert lost.reason
            with pytest.raises(LinkDown):
                await r.drv.dispense_card()
            # Nothing was sent: the table is told, to ask again once the link is back.
            told = await r.next("command_refused")
            assert (told.action, told.reason) == ("dispense_card", "not-connected")
            assert "not connected" in told.text
            r.dev.reconnect()
            back = await r.next("link_restored")
            assert back.identity == r.dev.identity
            await dispensed_once(r)
    run(main())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reboot_gives_link_lost_then_restored(transport):
    async def main():
        async with rig("shoe", transport) as r:
            r.dev.reboot()
            lost = await r.next("link_lost")
            assert lost.rebooted or "port closed" in lost.reason
            back = await r.next("link_restored")
            assert back.identity == r.dev.identity
            assert back.resumed is False         # what it held in memory is gone
    run(main())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_corrupted_event_is_retransmitted_and_arrives_once(transport):
    async def main():
        async with rig("shuffler", transport) as r:
            await shuffled(r)
            r.dev.inject("corrupt_crc", count=1, frames="events")
            await dispensed_once(r)
            assert r.drv.stats.rejected >= 1 and r.drv.stats.naks_sent >= 1
            assert r.dev.status()["stats"]["fault_corrupt_crc"] == 1
    run(main())


def test_a_corrupted_dice_binary_event_is_lost_and_reported_as_the_agitators_malfunction():
    # dice-binary events are not acknowledged: the agitator never sends the damaged result
    # again, and the table must hear that a throw was lost rather than wait for it.
    async def main():
        async with rig("dice", "pty", codec="dice-binary") as r:
            r.dev.set_next_dice([3, 1, 6, 6])
            r.dev.inject("corrupt_crc", count=1, frames="events")   # the ShakeStarted
            await r.drv.shake()
            lost = await r.next("malfunction")
            assert lost.code == 0 and "lost" in lost.text
            assert r.dev.status()["stats"]["fault_corrupt_crc"] == 1
            assert (await r.next("dice_result")).dice == (3, 1, 6, 6)
            assert [e.kind for e in r.seen] == []             # the shake's start never came
    run(main())


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("fault,args", [("drop", {}), ("corrupt_crc", {}),
                                        ("delay", {"seconds": 0.3})])
def test_lost_or_late_ack_makes_the_host_resend_and_the_device_act_once(transport, fault, args):
    async def main():
        async with rig("shuffler", transport) as r:
            await shuffled(r)
            r.dev.inject(fault, count=1, frames="acks", **args)
            await dispensed_once(r)
            assert r.drv.stats.retransmissions >= 1
            assert r.dev.status()["stats"]["duplicate_commands"] >= 1
    run(main())


def test_dropped_event_is_resent_by_the_device_and_arrives_once():
    async def main():
        async with rig("shuffler") as r:
            await shuffled(r)
            r.dev.inject("drop", count=1, frames="events")
            await dispensed_once(r)
            assert r.dev.status()["stats"]["retransmissions"] >= 1
    run(main())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_duplicated_frames_are_delivered_once(transport):
    async def main():
        async with rig("shuffler", transport) as r:
            await shuffled(r)
            r.dev.inject("duplicate", count=2, frames="events")
            await dispensed_once(r)
            await r.drv.dispense_hand(2)
            await r.next("hand_dispensed")
            assert not [e for e in await r.quiet() if e.kind == "hand_dispensed"]
            assert r.drv.stats.duplicates >= 1
    run(main())


def test_delayed_frame_arrives_once_and_in_order():
    async def main():
        async with rig("shuffler") as r:
            await shuffled(r)
            # Held back past the ack timeout: the device resends it, then the late original
            # arrives too and is recognised as a duplicate.
            r.dev.inject("delay", seconds=0.3, count=1, frames="events")
            await r.drv.dispense_card()
            await r.next("card_dispensed")
            await r.drv.dispense_hand(2)
            await r.next("hand_dispensed")
            await asyncio.sleep(0.4)
            later = await r.quiet()
            assert not [e for e in later if e.kind in ("card_dispensed", "hand_dispensed")]
            assert r.dev.status()["stats"]["fault_delay"] == 1
            assert r.drv.stats.duplicates >= 1
    run(main())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_garbage_is_counted_and_dropped(transport):
    async def main():
        async with rig("shoe", transport) as r:
            r.dev.inject("garbage", nbytes=200)
            r.dev.draw()
            await r.next("card_drawn")
            await r.quiet()
            s = r.drv.stats
            assert s.garbage_bytes + s.rejected > 0 and s.links_lost == 0
    run(main())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_heartbeats_stopping_gives_link_lost(transport):
    async def main():
        async with rig("dice", transport) as r:
            r.dev.inject("heartbeat_stop")
            assert "heartbeat" in (await r.next("link_lost")).reason
            r.dev.inject("heartbeat_resume")
            assert (await r.next("link_restored")).identity == r.dev.identity
            r.dev.set_next_dice([2, 2, 2, 2])
            await r.drv.shake()
            assert (await r.next("dice_result")).dice == (2, 2, 2, 2)
    run(main())


def test_silent_device_is_lost_and_found_again():
    async def main():
        async with rig("box-sensors") as r:
            r.dev.inject("silence")
            await r.next("link_lost")
            r.dev.place_card(4)          # happens while the link is down: kept, sent later
            r.dev.inject("resume")
            await r.next("link_restored")
            assert (await r.next("card_placed")).box == 4
    run(main())


def test_every_device_class_on_one_queue():
    # The controller's one queue: each event names its device, each device's events in order.
    async def main():
        with SimulatedTable(seed=11, speed=SPEED) as table:
            sims = {c: table.add(c) for c in ("shuffler", "shoe", "dice", "box-sensors")}
            table.add("dice", "dice-usb", transport="usb", serial="D-USB")
            sims["dice-usb"] = table.devices["dice-usb"]
            q = asyncio.Queue()
            drivers = {name: open_driver(dev.spec(**FAST), q) for name, dev in sims.items()}
            for d in drivers.values():
                await d.wait_up(5)
            sims["dice"].set_next_dice([1, 1, 1, 1])
            sims["dice-usb"].set_next_dice([6, 6, 6, 6])
            await drivers["shuffler"].shuffle()
            await drivers["dice"].shake()
            await drivers["dice-usb"].shake()
            sims["shoe"].draw()
            sims["box-sensors"].place_card(5)
            want = {("shuffler", "shuffle_done"), ("dice", "dice_result"),
                    ("dice-usb", "dice_result"), ("shoe", "card_drawn"),
                    ("box-sensors", "card_placed")}
            got = {}
            async with asyncio.timeout(10):
                while not want <= set(got):
                    e = await q.get()
                    got.setdefault((e.device, e.kind), e)
            assert got[("dice", "dice_result")].dice == (1, 1, 1, 1)
            assert got[("dice-usb", "dice_result")].dice == (6, 6, 6, 6)
            assert got[("box-sensors", "card_placed")].box == 5
            assert got[("dice-usb", "link_up")].identity.serial == "D-USB"
            for d in drivers.values():
                await d.close()
    run(main())


def test_faults_from_a_scenario_file(tmp_path):
    scenario = tmp_path / "shoe.toml"
    scenario.write_text('''
[devices.shoe]
cut_at = 40

[[faults]]
device = "shoe"
fault = "face_up"
at_card = 2

[[faults]]
device = "shoe"
fault = "misread"
at_card = 4

[[faults]]
device = "shoe"
fault = "jam"
at_card = 5
where = "gate"
''')

    async def main():
        with SimulatedTable(seed=3, speed=SPEED, scenario=str(scenario)) as table:
            dev = table.add("shoe")
            q = asyncio.Queue()
            drv = open_driver(dev.spec(**FAST), q)
            r = Rig(table, dev, drv, q)
            await r.next("link_up")
            kinds = []
            for _ in range(5):
                dev.draw()
            async with asyncio.timeout(5):
                while "jam" not in kinds:
                    e = await q.get()
                    kinds.append((e.kind, getattr(e, "face_up", None)))
                    if e.kind == "jam":
                        assert e.where == "gate"
                        kinds[-1] = "jam"
            assert kinds == [("card_drawn", False), ("card_drawn", True), ("card_drawn", False),
                             ("misread", None), "jam"]
            await drv.close()
    run(main())
