"""The monitor the table machine feeds, the journal records it produces, and the gate that
decides between warning the supervisor and stopping the table before the next round."""
import json

import pytest

from controller.errors import TablectlError
from controller.integrity import (Alarm, AlarmAction, AlarmKind, IntegrityGate,
                                  IntegrityMonitor, parse_action)
from controller.journal import canonical_json
from controller.rules.cards import Card, full_deck
from drivers import events as ev

C = Card.parse
DECK = full_deck()


def check(cards, **kw):
    return ev.DeckCheckResult(device="shuffler", ts=0.0, count=len(cards), cards=tuple(cards),
                              **kw)


def drawn(card, deck_id=None):
    return ev.CardDrawn(device="shoe", ts=0.0, card=card, deck_id=deck_id)


def test_super_pan_9_every_round_checked_and_closed():
    mon = IntegrityMonitor(deck_per_round=True, deck_ids={1})
    records = []
    for rnd in range(3):
        cards = [c for c in DECK if c != C("9d")] if rnd == 2 else DECK
        up = mon.observe(check(cards))
        records += up.records
        up = mon.observe(ev.ShuffleStarted(device="shuffler", ts=0.0))
        up = mon.observe(ev.ShuffleDone(device="shuffler", ts=0.0, count=len(cards)))
        records += mon.observe(ev.HandDispensed(device="shuffler", ts=0.0,
                                                cards=tuple(DECK[rnd * 4:rnd * 4 + 2]),
                                                deck_ids=(1, 1))).records
        records += mon.round_ended().records
    decks = [r for r in records if r["record"] == "deck"]
    assert [d["deck"] for d in decks] == [1, 2, 3]
    assert all(d["identity_checked"] and d["cards_out"] == 2 for d in decks)
    alarms = [r for r in records if r["record"] == "alarm"]
    assert [(a["kind"], a["cards"], a["deck"]) for a in alarms] == [("missing_card", ["9d"], 3)]
    for rec in records:                  # the journal's own JSON spelling accepts them
        assert json.loads(canonical_json(rec)) == rec


def test_hand_with_a_foreign_card():
    mon = IntegrityMonitor(deck_ids={1})
    up = mon.observe(ev.HandDispensed(device="shuffler", ts=0.0, cards=(C("As"), C("Kd")),
                                      deck_ids=(1, 5)))
    assert [(a.kind, a.cards, a.deck_ids) for a in up.alarms] == [
        (AlarmKind.FOREIGN_CARD, (C("Kd"),), (5,))]


def test_events_of_no_concern_change_nothing():
    mon = IntegrityMonitor()
    assert not mon.observe(ev.Jam(device="shoe", ts=0.0))
    assert not mon.observe(ev.DiceResult(device="dice", ts=0.0, dice=(1, 2, 3, 4)))


def test_empty_shoe_closes_the_deck_with_its_order_recorded():
    mon = IntegrityMonitor()
    order = DECK[::-1][:51]              # one card short; reversed order is sorted too
    alarms, records = [], []
    for card in order:
        up = mon.observe(drawn(card))
        alarms += up.alarms
        records += up.records
    up = mon.observe(ev.Empty(device="shoe", ts=0.0))
    alarms += up.alarms
    records += up.records
    assert alarms[0].kind is AlarmKind.SORTED_DECK            # suit runs follow, rightly
    assert {a.kind for a in alarms[1:-1]} == {AlarmKind.SUIT_RUNS, AlarmKind.BADLY_SHUFFLED}
    assert alarms[-1].kind is AlarmKind.MISSING_CARD and alarms[-1].cards == (DECK[0],)
    deck = [r for r in records if r["record"] == "deck"][0]
    assert deck["complete"] and deck["order"][:2] == [str(DECK[51]), str(DECK[50])]
    assert deck["sentinel"]["tests"]["sorted"]["alarmed"] is True


def test_a_repeat_is_reported_once_per_deck():
    mon = IntegrityMonitor()
    import random
    order = DECK[:]
    random.Random(2).shuffle(order)
    for card in order:
        assert not mon.observe(drawn(card)).alarms
    mon.new_deck()
    got = []
    for card in order:
        got += mon.observe(drawn(card)).alarms
    assert [a.kind for a in got] == [AlarmKind.REPEATED_DECK]


def test_remembered_order_after_a_restart():
    import random
    order = DECK[:]
    random.Random(3).shuffle(order)
    mon = IntegrityMonitor()
    mon.remember(7, order)
    got = []
    for card in order[10:] + order[:10]:
        got += mon.observe(drawn(card)).alarms
    assert got[0].kind is AlarmKind.CUT_DECK and got[0].related_deck == 7


def _alarm():
    return Alarm(kind=AlarmKind.MISSING_CARD, message="the deck check found no 7h", deck=3,
                 cards=(C("7h"),))


def test_warn_tells_the_supervisor_and_play_goes_on():
    gate = IntegrityGate("warn")
    (r,) = gate.raise_alarms([_alarm()])
    assert r.tower_light == "amber" and not r.stop_before_next_round
    assert "missing" in r.display and "7h" not in r.display     # the card may be face down
    assert gate.may_open_round()


def test_stop_holds_the_next_round_until_a_supervisor_clears_it():
    gate = IntegrityGate(AlarmAction.STOP)
    (r,) = gate.raise_alarms([_alarm()])
    assert r.tower_light == "red" and r.stop_before_next_round
    assert not gate.may_open_round()
    with pytest.raises(TablectlError, match="supervisor"):
        gate.clear("")
    assert not gate.may_open_round()     # a refused clearing changes nothing
    assert gate.clear("sup-17") == [_alarm()]
    assert gate.may_open_round()


def test_alarms_of_one_kind_about_one_deck_are_shown_once_and_each_kept():
    def missing(card, deck):
        return Alarm(kind=AlarmKind.MISSING_CARD, message=f"no {card}", deck=deck,
                     cards=(C(card),))
    raised = [missing("7h", 3), missing("8h", 3), Alarm(kind=AlarmKind.FOREIGN_CARD,
                                                        message="f", deck=3, cards=(C("As"),),
                                                        deck_ids=(9,)),
              missing("9h", 3), missing("7h", 4),
              Alarm(kind=AlarmKind.SORTED_DECK, message="s", deck=3, p_value=1e-9),
              Alarm(kind=AlarmKind.SORTED_DECK, message="s", deck=3, p_value=1e-12),
              Alarm(kind=AlarmKind.FOREIGN_CARD, message="f", deck=3, cards=(C("Ks"),),
                    deck_ids=(8,))]
    gate = IntegrityGate("stop")
    shown = gate.raise_alarms(raised)
    # In the order first raised: deck 3's three missing cards together, its two foreign
    # cards together, deck 4 apart, each statistical finding apart.
    assert [(r.alarm.kind, r.alarm.deck, len(r.alarms)) for r in shown] == [
        (AlarmKind.MISSING_CARD, 3, 3), (AlarmKind.FOREIGN_CARD, 3, 2),
        (AlarmKind.MISSING_CARD, 4, 1), (AlarmKind.SORTED_DECK, 3, 1),
        (AlarmKind.SORTED_DECK, 3, 1)]
    assert "deck 3: 3 cards missing" in shown[0].display
    assert "2 cards of other decks (back id 9, 8)" in shown[1].display
    assert "deck 4: a card missing" in shown[2].display
    assert not any(c in r.display for r in shown for c in ("7h", "8h", "9h", "As", "Ks"))
    assert sum(len(r.alarms) for r in shown) == len(raised)
    assert gate.clear("sup-17") == raised               # each alarm kept for the report


def test_unknown_action_is_refused_with_the_choices():
    with pytest.raises(TablectlError, match="'warn'.*'stop'"):
        parse_action("halt")
    assert parse_action(" STOP ") is AlarmAction.STOP


def test_alarm_json_round_trip():
    a = Alarm(kind=AlarmKind.CUT_DECK, message="m", cards=(C("As"), C("Td")), deck=4,
              cards_seen=6, statistic="s", observed=5, expected=0.1, p_value=2e-7,
              related_deck=3)
    assert Alarm.from_json(json.loads(json.dumps(a.to_json()))) == a


def test_what_is_shown_names_no_card():
    """Cards named by an alarm may be face down at the table: the display text holds none."""
    import re
    from controller.integrity import IntegrityGate
    card_text = re.compile(r"\b(10|[2-9TJQKA])[shcd]\b|\b(of (spades|hearts|clubs|diamonds))\b")
    mon = IntegrityMonitor(deck_ids={1})
    alarms = []
    alarms += mon.observe(check([c for c in DECK if c != C("7h")] + [C("Ks")],
                                deck_ids=(1, 2), extra=(C("Ks"),))).alarms
    for card in DECK[:10] + [DECK[3]]:
        alarms += mon.observe(drawn(card, 1)).alarms
    assert {a.kind for a in alarms} >= {AlarmKind.MISSING_CARD, AlarmKind.FOREIGN_CARD,
                                        AlarmKind.SORTED_DECK}
    for reaction in IntegrityGate("stop").raise_alarms(alarms):
        assert reaction.alarm.cards                          # the journal has the cards
        assert not card_text.search(reaction.display), reaction.display


def test_restore_from_journal_records_after_a_restart():
    import random
    order = DECK[:]
    random.Random(8).shuffle(order)
    first = IntegrityMonitor()
    records = []
    for card in order:
        records += first.observe(drawn(card)).records
    records += first.new_deck().records
    assert [r["deck"] for r in records if r["record"] == "deck"] == [1]
    # the daemon restarts: a fresh monitor, reloaded from the journal
    again = IntegrityMonitor()
    assert again.restore(json.loads(json.dumps(records))) == 1
    assert again.sentinel.trend == pytest.approx(first.sentinel.trend, rel=1e-3, abs=1e-4)
    got = []
    for card in order[30:] + order[:30]:
        up = again.observe(drawn(card))
        got += up.alarms
    assert got[0].kind is AlarmKind.CUT_DECK and got[0].related_deck == 1
    assert got[0].deck == 2                       # numbering continues
    with pytest.raises(TablectlError):
        again.restore(records)
