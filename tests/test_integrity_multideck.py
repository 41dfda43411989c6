"""A deck check from a card-reading shuffler, through the driver's translation
(``deck_check_fields``) and the monitor, held against the table's number of decks."""
from collections import Counter

import pytest

from controller.integrity import IntegrityMonitor
from controller.rules.cards import Card, full_deck
from drivers import events as ev
from drivers.protocol import messages as m
from drivers.shuffler import deck_check_fields

C = Card.parse
DECK = full_deck()


def check(faces, decks, deck_ids=None, back=1):
    """The alarms of one deck check whose cards read ``faces`` (``None``: unreadable)."""
    wire = tuple((m.UNKNOWN_CARD if c is None else c.code, back) for c in faces)
    msg = m.DeckCheckResult(count=len(wire), recognised=True, cards=wire)
    event = ev.DeckCheckResult(device="shuffler", ts=0.0, **deck_check_fields(msg))
    return IntegrityMonitor(decks=decks, deck_ids=deck_ids).observe(event).alarms


def kinds(alarms):
    return Counter(str(a.kind) for a in alarms)


@pytest.mark.parametrize("deck_ids", [None, {1}])
def test_a_correct_two_deck_check_raises_nothing(deck_ids):
    # Every face read twice is what two decks hold, not 52 duplicates.
    assert check(DECK * 2, decks=2, deck_ids=deck_ids) == []


@pytest.mark.parametrize("deck_ids", [None, {1}])
def test_a_face_three_times_in_two_decks_is_one_duplicate(deck_ids):
    alarms = check(DECK * 2 + [C("Qh")], decks=2, deck_ids=deck_ids)
    assert kinds(alarms) == {"duplicate_card": 1}
    assert alarms[0].cards == (C("Qh"),) and "3 times" in alarms[0].message


def test_a_face_twice_in_one_deck_is_still_one_duplicate():
    faces = [c for c in DECK if c != C("7h")] + [C("Qh")]
    alarms = check(faces, decks=1)
    assert kinds(alarms) == {"duplicate_card": 1, "missing_card": 1}
    dup = next(a for a in alarms if str(a.kind) == "duplicate_card")
    assert dup.cards == (C("Qh"),)


@pytest.mark.parametrize("decks", [1, 2])
def test_an_unreadable_card_in_a_full_check_is_not_called_missing(decks):
    # The driver leaves unread cards out of ``cards`` (and puts their face in ``missing`` when
    # no copy was read): the count says the deck is full, so no face may be called missing.
    faces = DECK * decks
    assert check(faces[1:] + [None], decks=decks) == []


@pytest.mark.parametrize("decks", [1, 2])
def test_a_short_check_with_an_unreadable_card_names_the_candidates(decks):
    faces = [c for c in DECK * decks if c not in (C("2s"), C("7h"))] + [C("7h")] * (decks - 1)
    alarms = check(faces + [None], decks=decks)     # 2s gone, one 7h unread
    assert kinds(alarms) == {"missing_card": 1}
    assert set(alarms[0].cards) == {C("2s"), C("7h")}


def test_the_deck_record_keys_that_docs_integrity_md_lists():
    # A sorted deck dealt to its end: sentinel alarms, no identity alarm.
    mon = IntegrityMonitor()
    ups = [mon.observe(ev.CardDrawn(device="shoe", ts=0.0, card=c)) for c in DECK]
    ups.append(mon.observe(ev.Empty(device="shoe", ts=0.0)))
    raised = [a for u in ups for a in u.alarms]
    deck = next(r for u in ups for r in u.records if r["record"] == "deck")
    assert raised and not any(a.certain for a in raised)
    assert deck["alarms"] == []             # identity alarms only; the sentinel's are apart
    assert set(deck["sentinel"]) == {"deck", "cards_seen", "frozen", "tests", "trend"}
    assert (deck["sentinel"]["cards_seen"], deck["sentinel"]["frozen"]) == (52, None)


def check_two_backs(faces_by_back, decks, deck_ids):
    """One deck check of cards with different backs: ``{back id: faces}``."""
    wire = tuple((c.code, back) for back, faces in faces_by_back.items() for c in faces)
    msg = m.DeckCheckResult(count=len(wire), recognised=True, cards=wire)
    event = ev.DeckCheckResult(device="shuffler", ts=0.0, **deck_check_fields(msg))
    return IntegrityMonitor(decks=decks, deck_ids=deck_ids).observe(event).alarms


def test_two_decks_of_two_backs_both_the_tables_raise_nothing():
    # A red and a blue deck, both configured: the driver calls the blue one "extra" against
    # its most common back, but every back it saw is the table's.
    assert check_two_backs({1: DECK, 2: DECK}, decks=2, deck_ids={1, 2}) == []


def test_a_card_of_the_tables_second_back_three_times_is_still_a_duplicate():
    alarms = check_two_backs({1: DECK, 2: DECK + [C("Qh")]}, decks=2, deck_ids={1, 2})
    assert kinds(alarms) == {"duplicate_card": 1} and alarms[0].cards == (C("Qh"),)


def test_a_back_that_is_not_the_tables_is_named_alone():
    # Back 3 is no deck of this table. The driver gives each card's back, so its one card is
    # named foreign, and not the cards of the table's less common back 2 with it; back 2's
    # copy of that face is missing.
    alarms = check_two_backs({1: DECK, 2: DECK[:-1], 3: [DECK[-1]]}, decks=2,
                             deck_ids={1, 2})
    assert kinds(alarms) == {"foreign_card": 1, "missing_card": 1}
    by_kind = {str(a.kind): a for a in alarms}
    assert by_kind["foreign_card"].cards == (DECK[-1],)
    assert by_kind["foreign_card"].deck_ids == (3,)
    assert by_kind["missing_card"].cards == (DECK[-1],)


def test_the_driver_gives_each_cards_back_in_the_order_of_its_cards():
    wire = ((C("As").code, 1), (m.UNKNOWN_CARD, 2), (C("Kd").code, 3), (C("2c").code, 0xFFFF))
    fields = deck_check_fields(m.DeckCheckResult(count=4, recognised=True, cards=wire))
    assert fields["cards"] == (C("As"), C("Kd"), C("2c"))
    assert fields["card_deck_ids"] == (1, 3, None)
    assert fields["deck_ids"] == (1, 3)


def test_with_the_set_of_backs_only_the_ledger_still_names_the_foreign_card():
    # A device that reports the set of backs seen, not each card's (an older journal, another
    # vendor's driver): the foreign card is named, with the table's second back beside it.
    wire = tuple((c.code, back) for back, faces in {1: DECK, 2: DECK[:-1], 3: [DECK[-1]]}.items()
                 for c in faces)
    fields = deck_check_fields(m.DeckCheckResult(count=len(wire), recognised=True, cards=wire))
    del fields["card_deck_ids"]
    event = ev.DeckCheckResult(device="shuffler", ts=0.0, **fields)
    alarms = IntegrityMonitor(decks=2, deck_ids={1, 2}).observe(event).alarms
    named = {c for a in alarms if str(a.kind) == "foreign_card" for c in a.cards}
    assert DECK[-1] in named


def test_a_whole_deck_of_another_back_is_one_alarm_naming_the_back():
    # Not 52 foreign and 52 missing cards: the deck is not the table's.
    alarms = check_two_backs({7: DECK}, decks=1, deck_ids={1})
    assert kinds(alarms) == {"foreign_card": 1}
    assert alarms[0].deck_ids == (7,) and "not the table's" in alarms[0].message


def test_each_cards_back_survives_the_journal():
    wire = ((C("As").code, 1), (C("Kd").code, 3))
    event = ev.DeckCheckResult(device="shuffler", ts=0.0, **deck_check_fields(
        m.DeckCheckResult(count=2, recognised=True, cards=wire)))
    again = ev.event_from_json(event.to_json())
    assert again == event and again.card_deck_ids == (1, 3)
