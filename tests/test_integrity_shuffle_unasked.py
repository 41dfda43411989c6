"""A ShuffleDone no shuffle is owed for is no new deck for the integrity monitor either.

The table takes such a report (one sent again under a new session's number, protocol 3.2) as
an irregular event: the round's cards stay those of the deck in play, and the next round's
deck is still checked and shuffled when it is gathered. The monitor (docs/integrity.md:
``shuffle_done`` checks the deck about to be dealt) took it as the next deck: it ended the
deck in play halfway through the round, so a card dealt again after it was no duplicate and
the deck's record said it ended with only the first cards out."""
import random

from controller.integrity import IntegrityMonitor
from controller.rules import get_game
from controller.rules.cards import Card, full_deck
from controller.table import Table
from drivers import events as ev

from table_helpers import DEVICES, deck_checked

C = Card.parse
DECK = full_deck()


def started_and_done():
    return [ev.ShuffleStarted(device="shuffler", ts=0.0),
            ev.ShuffleDone(device="shuffler", ts=0.0, count=52)]


def hand(cards):
    return ev.HandDispensed(device="shuffler", ts=0.0, cards=tuple(cards))


def test_the_monitor_keeps_the_deck_in_play_across_a_shuffle_done_it_saw_no_start_of():
    mon = IntegrityMonitor()
    for e in started_and_done():
        mon.observe(e)
    order = random.Random(7).sample(DECK, 52)
    records = mon.observe(hand(order[:3])).records
    records += mon.observe(ev.ShuffleDone(device="shuffler", ts=0.0, count=52)).records
    assert [r for r in records if r["record"] == "deck"] == []     # the deck goes on
    up = mon.observe(hand([order[0], *order[3:5]]))                # a card dealt again
    assert [a.kind for a in up.alarms] == ["duplicate_card"]


def test_a_shuffle_that_starts_still_begins_the_next_deck():
    """The rule touches only a report that ends no shuffle seen to start: a shuffle asked
    between rounds (ShuffleStarted, then ShuffleDone) begins the next deck as before."""
    mon = IntegrityMonitor()
    for e in started_and_done():
        mon.observe(e)
    order = random.Random(8).sample(DECK, 52)
    mon.observe(hand(order[:3]))
    records = []
    for e in started_and_done():
        records += mon.observe(e).records
    assert [r["cards_out"] for r in records if r["record"] == "deck"] == [3]
    assert mon.observe(hand(order[:3])).alarms == []               # the next deck's cards


def test_through_the_table_the_round_s_deck_is_one_deck():
    t = Table("T1", get_game("q-poker"), "shuffler", layout_boxes=7, devices=DEVICES,
              integrity=IntegrityMonitor())
    t.command("open_table", role="supervisor")
    t.handle_device(deck_checked())                          # the check asked, then
    for e in started_and_done():
        t.handle_device(e)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("close_bets")
    order = random.Random(9).sample(DECK, 52)
    t.handle_device(hand(order[:3]))
    t.handle_device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))    # sent again
    assert [e.data["event"] for e in t.outbox if e.kind == "irregular_event"] == ["shuffle_done"]
    t.handle_device(hand(order[3:6]))                        # the croupier's
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    t.command("next_round")
    t.handle_device(deck_checked())                          # the gathered deck's check
    for e in started_and_done():                             # the next round's shuffle
        t.handle_device(e)
    decks = [r for r in t.private_records if r["record"] == "deck"]
    assert [d["cards_out"] for d in decks] == [6]            # one deck, the round's six cards
