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


def test_a_back_that_is_not_the_tables_is_still_foreign():
    # Back 3 is no deck of this table: its card is named foreign. (The driver reports the set
    # of backs, not each card's, so the cards of the table's other back are named with it; a
    # driver that gives each card's back is precise.)
    alarms = check_two_backs({1: DECK, 2: DECK[:-1], 3: [DECK[-1]]}, decks=2,
                             deck_ids={1, 2})
    named = {c for a in alarms if str(a.kind) == "foreign_card" for c in a.cards}
    assert DECK[-1] in named
