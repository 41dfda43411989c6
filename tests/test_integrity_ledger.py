"""Deck identity: every missing, extra, duplicated or foreign card is caught and named."""
import pytest

from controller.errors import TablectlError
from controller.integrity import AlarmKind, DeckLedger
from controller.rules.cards import Card, full_deck

C = Card.parse
DECK = full_deck()


def kinds(alarms):
    return sorted((str(a.kind), tuple(str(c) for c in a.cards)) for a in alarms)


def without(*names):
    drop = [C(n) for n in names]
    return [c for c in DECK if c not in drop]


def test_a_full_deck_passes_the_check():
    assert DeckLedger().deck_check(52, DECK) == []


def test_count_of_52_with_one_missing_and_one_foreign_is_caught_by_identity():
    # The 7h is gone and a Ks from a deck with back id 2 took its place: 52 cards.
    cards = without("7h") + [C("Ks")]
    ids = [1] * 51 + [2]
    alarms = DeckLedger(deck_ids={1}).deck_check(52, cards, deck_ids=ids, device="shuffler")
    assert kinds(alarms) == [("foreign_card", ("Ks",)), ("missing_card", ("7h",))]
    foreign = next(a for a in alarms if a.kind is AlarmKind.FOREIGN_CARD)
    assert foreign.deck_ids == (2,) and "back id 2" in foreign.message
    assert all(a.device == "shuffler" for a in alarms)


def test_without_back_ids_a_foreign_card_shows_as_a_duplicate():
    cards = without("7h") + [C("Ks")]
    assert kinds(DeckLedger().deck_check(52, cards)) == [
        ("duplicate_card", ("Ks",)), ("missing_card", ("7h",))]


def test_device_reported_foreign_card_is_named():
    cards = without("7h") + [C("Ks")]
    alarms = DeckLedger().deck_check(52, cards, extra=(C("Ks"),))
    assert kinds(alarms) == [("foreign_card", ("Ks",)), ("missing_card", ("7h",))]


def test_count_only_short_and_long_decks():
    short = DeckLedger().deck_check(51)
    assert kinds(short) == [("missing_card", ())]
    assert "51" in short[0].message
    assert kinds(DeckLedger().deck_check(53)) == [("extra_card", ())]
    # A count that is right says nothing of identity: no alarm, but identity is not checked.
    ledger = DeckLedger()
    assert ledger.deck_check(52) == []
    assert ledger.current().identity_checked is False


def test_unreadable_card_in_a_check_names_the_candidates_only_when_cards_are_short():
    one_unread = without("7h") + [None]
    assert DeckLedger().deck_check(52, one_unread) == []
    short = without("7h", "2c") + [None]
    alarms = DeckLedger().deck_check(51, short)
    assert kinds(alarms) == [("missing_card", ("2c", "7h"))]
    assert "among" in alarms[0].message


def test_card_drawn_twice_is_a_duplicate_named_once():
    ledger = DeckLedger()
    assert ledger.card_out(C("Qd")) == []
    first = ledger.card_out(C("Qd"))
    assert kinds(first) == [("duplicate_card", ("Qd",))]
    assert first[0].cards_seen == 2
    assert ledger.card_out(C("Qd")) == []       # raised once per deck and card


def test_foreign_card_out_of_the_shoe():
    ledger = DeckLedger(deck_ids={1})
    assert ledger.card_out(C("As"), 1) == []
    alarms = ledger.card_out(C("As"), 9)
    assert kinds(alarms) == [("foreign_card", ("As",))]
    assert ledger.current().out[C("As")] == 1   # the foreign card does not use up ours


def test_card_not_in_the_checked_deck_is_extra():
    ledger = DeckLedger()
    assert kinds(ledger.deck_check(51, without("7h"))) == [("missing_card", ("7h",))]
    assert kinds(ledger.card_out(C("7h"))) == [("extra_card", ("7h",))]


def test_shoe_dealt_to_its_end_names_the_missing_card():
    ledger = DeckLedger()
    for card in without("Jc"):
        assert ledger.card_out(card) == []
    alarms = ledger.end_deck(complete=True, device="shoe")
    assert kinds(alarms) == [("missing_card", ("Jc",))]
    assert "never came out" in alarms[0].message


def test_a_53rd_card_is_extra():
    ledger = DeckLedger()
    for card in DECK:
        ledger.card_out(card)
    alarms = ledger.card_out(None)
    assert kinds(alarms) == [("extra_card", ())]


def test_two_decks_per_shoe():
    ledger = DeckLedger(decks=2)
    assert ledger.deck_check(104, DECK + DECK) == []
    ledger = DeckLedger(decks=2)
    alarms = ledger.deck_check(103, DECK + without("7h"))
    assert kinds(alarms) == [("missing_card", ("7h",))]
    assert "once" in alarms[0].message and "twice" in alarms[0].message
    ledger = DeckLedger(decks=2)
    assert ledger.card_out(C("As")) == [] and ledger.card_out(C("As")) == []
    assert kinds(ledger.card_out(C("As"))) == [("duplicate_card", ("As",))]


def test_cards_not_returned_after_the_round():
    ledger = DeckLedger()
    for name in ("As", "Kd", "7c"):
        ledger.card_out(C(name))
    alarms = ledger.cards_returned([C("As"), C("7c"), C("2h")])
    assert kinds(alarms) == [("extra_card", ("2h",)), ("not_returned", ("Kd",))]
    assert ledger.cards_returned([]) == []      # the next round starts clean


@pytest.mark.parametrize("decks", [0, 9, "2", True])
def test_bad_deck_count_is_refused(decks):
    with pytest.raises(TablectlError, match="decks per shoe"):
        DeckLedger(decks=decks)


def test_driver_style_check_with_the_set_of_back_ids():
    # The shuffler driver reports the set of back ids seen and the foreign faces as ``extra``.
    cards = without("7h") + [C("Ks")]
    alarms = DeckLedger(deck_ids={1}).deck_check(52, cards, deck_ids=(1, 2), extra=(C("Ks"),),
                                                 missing=(C("7h"),))
    assert kinds(alarms) == [("foreign_card", ("Ks",)), ("missing_card", ("7h",))]
    assert next(a for a in alarms if a.kind is AlarmKind.FOREIGN_CARD).deck_ids == (2,)


def test_a_whole_deck_of_another_back_is_foreign():
    alarms = DeckLedger(deck_ids={1}).deck_check(52, DECK, deck_ids=(3,))
    assert kinds(alarms) == [("foreign_card", ())]
    assert alarms[0].deck_ids == (3,)
