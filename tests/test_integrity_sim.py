"""Deck faults of the firmware simulator, through the shuffler and shoe drivers' translation,
into the integrity monitor: each failure is caught with the right alarm and the card named."""
import asyncio

import pytest

from controller.integrity import AlarmKind, IntegrityConfig, IntegrityMonitor
from controller.rules.cards import Card
from drivers.shoe import ShoeDriver
from drivers.shuffler import ShufflerDriver
from drivers.spec import DeviceSpec
from firmware_sim.faults import make_fault
from firmware_sim.models import ShoeModel, ShufflerModel
from firmware_sim.wire import to_message

C = Card.parse
TABLE_BACK = 1      # the simulator's table deck id


class Rig:
    """One simulated card device whose events go, as the driver translates them, into a
    monitor. Time is driven by hand (the models have no clock)."""

    def __init__(self, device_class, seed, **monitor):
        model_cls, driver_cls = {"shuffler": (ShufflerModel, ShufflerDriver),
                                 "shoe": (ShoeModel, ShoeDriver)}[device_class]
        self.model = model_cls(seed=seed, speed=1000.0)
        spec = DeviceSpec(device_class, device_class, port="/dev/null")
        self.driver = driver_cls(spec, asyncio.Queue(), clock=lambda: self.now)
        self.monitor = IntegrityMonitor(IntegrityConfig(deck_ids=frozenset({TABLE_BACK}),
                                                        **monitor))
        self.now = 0.0
        self.alarms = []
        self.events = []

    def _take(self, emits):
        self.now += 1.0
        emits = emits + self.model.advance(self.now)
        for emit in emits:
            event = self.driver._translate(to_message(emit))
            if event is None:
                continue
            self.events.append(event)
            self.alarms += self.monitor.observe(event).alarms

    def fault(self, name, **args):
        self.model.inject(make_fault(name, self.model.device_class, **args), self.now)

    # shuffler
    def command(self, name, **args):
        self._take(self.model.command(name, self.now, **args))

    def deal_hands(self, hands, size):
        for _ in range(hands):
            self.command("dispense_hand", n=size)

    # shoe
    def load(self):
        self.alarms += self.monitor.new_deck().alarms
        self._take(self.model.load_deck(self.now))

    def draw(self, n=52):
        for _ in range(n):
            if self.model.state != "ready":
                break
            self._take(self.model.draw(self.now))

    def first(self, kind):
        found = [a for a in self.alarms if a.kind is kind]
        assert found, f"no {kind} among {[str(a) for a in self.alarms]}"
        return found[0]


def shuffler_round(rig, hands=4, size=2):
    """A Super Pan 9 round in shuffler mode: check the deck, shuffle, deal the hands."""
    rig.command("deck_check")
    rig.command("shuffle")
    rig.deal_hands(hands, size)
    rig.alarms += rig.monitor.round_ended().alarms


def kinds(alarms):
    return sorted({str(a.kind) for a in alarms})


def test_clean_shuffler_rounds_raise_nothing():
    rig = Rig("shuffler", seed=5, deck_per_round=True)
    for _ in range(15):
        shuffler_round(rig)
    assert rig.alarms == []
    assert any(e.kind == "deck_check_result" for e in rig.events)


def test_missing_card_named_by_the_next_deck_check():
    rig = Rig("shuffler", seed=6, deck_per_round=True)
    shuffler_round(rig)
    rig.fault("deck_missing", card="7h")
    shuffler_round(rig)                  # the card is lost as the deck is collected
    shuffler_round(rig)
    alarm = rig.first(AlarmKind.MISSING_CARD)
    assert alarm.cards == (C("7h"),) and alarm.device == "shuffler"
    assert kinds(rig.alarms) == ["missing_card"]


def test_foreign_card_with_the_count_still_right():
    rig = Rig("shuffler", seed=7, deck_per_round=True)
    rig.fault("deck_extra", card="Ks", deck_id=2, replace=True)
    shuffler_round(rig)
    shuffler_round(rig)
    counts = [e.count for e in rig.events if e.kind == "deck_check_result"]
    assert counts == [52, 52]            # a count alone would pass this deck
    foreign = rig.first(AlarmKind.FOREIGN_CARD)
    assert foreign.cards == (C("Ks"),) and foreign.deck_ids == (2,)
    missing = rig.first(AlarmKind.MISSING_CARD)
    assert len(missing.cards) == 1 and missing.cards != (C("Ks"),)


def test_duplicated_card_with_the_count_still_right():
    rig = Rig("shuffler", seed=8, deck_per_round=True)
    rig.fault("deck_duplicate", card="Qd")
    shuffler_round(rig)
    shuffler_round(rig)
    assert rig.first(AlarmKind.DUPLICATE_CARD).cards == (C("Qd"),)
    assert len(rig.first(AlarmKind.MISSING_CARD).cards) == 1


def test_extra_card_out_of_the_shoe():
    rig = Rig("shoe", seed=9)
    rig.draw()
    rig.fault("deck_extra", card="2c", deck_id=4)
    rig.load()
    rig.draw(53)
    foreign = rig.first(AlarmKind.FOREIGN_CARD)
    assert foreign.cards == (C("2c"),) and foreign.deck_ids == (4,)


def test_shoe_dealt_to_its_end_names_the_missing_card():
    rig = Rig("shoe", seed=10)
    rig.draw()
    rig.fault("deck_missing", card="Jc")
    rig.load()
    rig.draw()
    assert rig.first(AlarmKind.MISSING_CARD).cards == (C("Jc"),)


def test_shoe_duplicate_card_is_named_when_it_comes_out_twice():
    rig = Rig("shoe", seed=11)
    rig.draw()
    rig.fault("deck_duplicate", card="5h", replace=False)
    rig.load()
    rig.draw(53)
    dup = rig.first(AlarmKind.DUPLICATE_CARD)
    assert dup.cards == (C("5h",),)
    assert kinds(rig.alarms) == ["duplicate_card", "extra_card"]   # and a 53rd card


def test_sorted_deck_from_a_shuffler_in_sort_mode():
    rig = Rig("shuffler", seed=12, deck_per_round=True)
    shuffler_round(rig)
    rig.fault("deck_sorted")
    shuffler_round(rig, hands=3, size=3)
    alarm = rig.first(AlarmKind.SORTED_DECK)
    assert alarm.deck == 2 and alarm.cards_seen <= 9


def test_sorted_deck_in_the_shoe():
    rig = Rig("shoe", seed=13)
    rig.draw()
    rig.fault("deck_sorted")
    rig.load()
    rig.draw()
    assert rig.first(AlarmKind.SORTED_DECK).cards_seen <= 8


def test_deck_only_cut():
    rig = Rig("shoe", seed=14)
    rig.draw()
    rig.fault("deck_cut")
    rig.load()
    rig.draw()
    alarm = rig.first(AlarmKind.CUT_DECK)
    assert alarm.related_deck == 1 and alarm.deck == 2 and alarm.cards_seen <= 10


def test_repeated_deck():
    rig = Rig("shoe", seed=15)
    rig.draw()
    rig.load()
    rig.draw()
    rig.fault("deck_repeat", back=2)
    rig.load()
    rig.draw()
    alarm = rig.first(AlarmKind.REPEATED_DECK)
    assert alarm.related_deck == 1 and alarm.deck == 3 and alarm.cards_seen <= 8


def test_repeated_deck_in_shuffler_mode_seen_from_one_round_of_cards():
    rig = Rig("shuffler", seed=16, deck_per_round=True)
    shuffler_round(rig, hands=4, size=3)
    rig.fault("deck_repeat")
    shuffler_round(rig, hands=4, size=3)
    assert rig.first(AlarmKind.REPEATED_DECK).related_deck == 1


def test_misread_card_is_not_taken_for_a_missing_one():
    rig = Rig("shoe", seed=17)
    rig.fault("misread")
    rig.draw()
    assert rig.alarms == []


@pytest.mark.parametrize("seed", range(3))
def test_clean_shoes_raise_nothing(seed):
    rig = Rig("shoe", seed=100 + seed)
    for _ in range(8):
        rig.draw()
        rig.load()
    assert rig.alarms == []
