"""The card model: notation, wire codes, clear errors."""
import pytest
from hypothesis import given, strategies as st

from controller.rules.cards import Card, full_deck, parse_cards
from controller.rules.errors import RuleError


def test_full_deck_has_52_distinct_cards_in_code_order():
    deck = full_deck()
    assert len(set(deck)) == 52
    assert [c.code for c in deck] == list(range(52))
    assert str(deck[0]) == "2s" and str(deck[12]) == "As" and str(deck[51]) == "Ad"


@given(st.integers(0, 51))
def test_code_and_text_round_trip(code):
    card = Card.from_code(code)
    assert Card.parse(str(card)) == card
    assert card.code == code


@pytest.mark.parametrize("text,expected", [("10h", "Th"), ("td", "Td"), ("Q♠", "Qs"), (" as ", "As")])
def test_parse_accepts_common_spellings(text, expected):
    assert str(Card.parse(text)) == expected


@pytest.mark.parametrize("text", ["", "1h", "Ax", "11s", "AsK", "Joker", "ZZ"])
def test_unknown_card_is_named_with_the_way_out(text):
    with pytest.raises(RuleError) as err:
        Card.parse(text)
    assert "rank then suit" in str(err.value)


def test_duplicate_and_wrong_count_are_refused():
    with pytest.raises(RuleError, match="duplicate card As"):
        parse_cards(["As", "Kd", "As"])
    with pytest.raises(RuleError, match="needs exactly 3"):
        parse_cards(["As", "Kd"], count=3)


def test_suit_rank_follows_q_poker_article_4():
    order = sorted("sdch", key=lambda s: Card(2, s).suit_rank, reverse=True)
    assert order == ["s", "h", "c", "d"]


@pytest.mark.parametrize("code", [-1, 52, True, "3"])
def test_bad_code_is_refused(code):
    with pytest.raises(RuleError, match="outside 0-51"):
        Card.from_code(code)


@pytest.mark.parametrize("items", [True, 7, None, {"As": 1}, b"As"])
def test_cards_that_are_not_a_list_are_refused_clearly(items):
    with pytest.raises(RuleError, match="must be a list of cards"):
        parse_cards(items, what="the board")


@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker", "texas-holdem", "super-pan-9"])
@pytest.mark.parametrize("overrides", [True, ["decks"], "one"])
def test_interpretations_that_are_not_an_object_are_refused_clearly(game, overrides):
    from controller.rules import get_game
    with pytest.raises(RuleError, match="must be an object"):
        get_game(game).resolve_interpretations(overrides)
