"""Hardware in the loop: deck faults of simulated devices behind pseudo-terminals, through the
real drivers (pyserial), into the integrity monitor."""
import asyncio
import contextlib

import pytest

from controller.integrity import AlarmKind, IntegrityConfig, IntegrityMonitor
from controller.rules.cards import Card
from drivers.factory import open_driver

firmware_sim = pytest.importorskip("firmware_sim.table")
pytestmark = pytest.mark.hil

FAST = dict(heartbeat_s=0.05, link_timeout_s=0.5)


class Table:
    """One simulated device, its real driver and a monitor fed from the driver's queue."""

    def __init__(self, dev, drv, queue, monitor):
        self.dev, self.drv, self.q, self.monitor = dev, drv, queue, monitor
        self.alarms = []

    async def until(self, kind, timeout=5.0):
        """Feed events to the monitor up to and including the next one of ``kind``."""
        async with asyncio.timeout(timeout):
            while True:
                e = await self.q.get()
                self.alarms += self.monitor.observe(e).alarms
                if e.kind == kind:
                    return e

    def kinds(self):
        return {a.kind for a in self.alarms}


@contextlib.asynccontextmanager
async def table(device_class, seed):
    with firmware_sim.SimulatedTable(seed=seed, speed=1000) as sim:
        dev = sim.add(device_class)
        q = asyncio.Queue()
        drv = open_driver(dev.spec(**FAST), q)
        t = Table(dev, drv, q, IntegrityMonitor(IntegrityConfig(deck_ids=frozenset({1}))))
        try:
            await t.until("link_up")
            yield t
        finally:
            await drv.close()


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 60))


def test_shuffler_foreign_card_with_the_right_count_dealt_to_the_end():
    async def main():
        async with table("shuffler", seed=21) as t:
            t.dev.inject("deck_extra", card="Kc", deck_id=3, replace=True)
            await t.drv.shuffle()
            done = await t.until("shuffle_done")
            assert done.count == 52                       # the count says nothing is wrong
            for _ in range(4):
                await t.drv.dispense_hand(13)
                await t.until("hand_dispensed")
            await t.until("empty")
            foreign = next(a for a in t.alarms if a.kind is AlarmKind.FOREIGN_CARD)
            assert foreign.cards == (Card.parse("Kc"),) and foreign.deck_ids == (3,)
            missing = next(a for a in t.alarms if a.kind is AlarmKind.MISSING_CARD)
            assert len(missing.cards) == 1
    run(main())


def test_shuffler_in_sort_mode_then_its_deck_check():
    async def main():
        async with table("shuffler", seed=22) as t:
            t.dev.inject("deck_sorted")
            await t.drv.shuffle()
            await t.until("shuffle_done")
            await t.drv.dispense_hand(6)
            await t.until("hand_dispensed")
            assert AlarmKind.SORTED_DECK in t.kinds()
            assert t.kinds() <= {AlarmKind.SORTED_DECK, AlarmKind.BADLY_SHUFFLED}
            t.dev.inject("deck_missing", card="As")
            await t.drv.shuffle()                         # the card is lost at collection
            await t.until("shuffle_done")
            await t.drv.deck_check()
            check = await t.until("deck_check_result")
            assert check.count == 51
            missing = [a for a in t.alarms if a.kind is AlarmKind.MISSING_CARD]
            # the shuffle's count gives the first warning; the check names the card
            assert [a.cards for a in missing] == [(), (Card.parse("As"),)]
            assert "counted 51" in missing[0].message
    run(main())


def test_shoe_deck_only_cut_and_a_duplicate():
    async def main():
        async with table("shoe", seed=23) as t:
            for _ in range(52):                           # the deck loaded at power-on
                t.dev.draw()
            await t.until("empty")
            assert t.alarms == []
            t.dev.inject("deck_cut")
            t.monitor.new_deck()                          # the croupier loads the next deck
            t.dev.load_deck()
            for _ in range(10):
                t.dev.draw()
            for _ in range(10):
                await t.until("card_drawn")
            cut = next(a for a in t.alarms if a.kind is AlarmKind.CUT_DECK)
            assert cut.related_deck == 1 and cut.cards_seen <= 10
    run(main())
