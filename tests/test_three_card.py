"""Three-card hand ranking (89/2004 art. 4 and 8, 78/2008 art. 4 and 8).

The module's keys are checked against an independent comparator written from the articles'
sentences (sequence list of art. 4 taken literally, pairwise comparison in the articles'
order), over all 22,100 three-card hands, and by property tests on random hands.
"""
from __future__ import annotations

import functools
import itertools
from typing import Sequence

import pytest
from hypothesis import given, strategies as st

from controller.rules.cards import Card, full_deck, parse_cards
from controller.rules.errors import RuleError
from controller.rules.three_card import (FORTUNE, Q_POKER, Category, Ranking, evaluate, qualifies,
                                         sequence_top)

DECK = full_deck()
ALL_HANDS = list(itertools.combinations(DECK, 3))
SUIT_ORDER = "dchs"  # art. 4(1) of 89/2004, lowest first: diamonds, clubs, hearts, spades

# 89/2004 art. 4(3) / 78/2008 art. 4(2), highest first, exactly as listed.
SEQUENCES = ["AKQ", "KQJ", "QJT", "JT9", "T98", "987", "876", "765", "654", "543", "432", "A23"]
FACE = "23456789TJQKA"


def compare(a: Sequence[Card], b: Sequence[Card], ranking: Ranking) -> int:
    """1 when hand ``a`` beats ``b`` under ``ranking``, -1 when it loses, 0 on a tie: the
    order of their ``evaluate`` keys, which the settlements compare."""
    ka, kb = evaluate(a, ranking).key, evaluate(b, ranking).key
    return (ka > kb) - (ka < kb)


def h(text: str) -> list[Card]:
    return parse_cards(text)


# ---------------------------------------------------------------- independent comparator
@functools.lru_cache(maxsize=None)
def _classify(hand, *, sf_top_is_kqj=False):
    letters = sorted((FACE[c.rank - 2] for c in hand), key=FACE.index, reverse=True)
    seq = None
    for i, s in enumerate(SEQUENCES):
        if sorted(s, key=FACE.index) == sorted(letters, key=FACE.index):
            seq = i
    same_suit = hand[0].suit == hand[1].suit == hand[2].suit
    counts = {x: letters.count(x) for x in letters}
    if seq is not None and same_suit and not (sf_top_is_kqj and seq == 0):
        return "sf", seq
    if 3 in counts.values():
        return "trips", None
    if seq is not None and not same_suit:
        return "straight", seq
    if same_suit:
        return "flush", None
    if 2 in counts.values():
        return "pair", None
    return "odd", None


ORDER = ["odd", "pair", "flush", "straight", "trips", "sf"]


@functools.lru_cache(maxsize=None)
def _desc(hand):
    return sorted(hand, key=lambda c: (c.rank, SUIT_ORDER.index(c.suit)), reverse=True)


def brute_compare(a, b, *, suits: bool, ace_suit_for_a23=False, sf_top_is_kqj=False) -> int:
    """Compare two hands following the sentences of art. 8, one category at a time."""
    a, b = tuple(a), tuple(b)
    ca, sa = _classify(a, sf_top_is_kqj=sf_top_is_kqj)
    cb, sb = _classify(b, sf_top_is_kqj=sf_top_is_kqj)
    if ca != cb:
        return 1 if ORDER.index(ca) > ORDER.index(cb) else -1
    da, db = _desc(a), _desc(b)
    ra, rb = [c.rank for c in da], [c.rank for c in db]

    def by_suit(ca_, cb_):
        if not suits:
            return 0
        x, y = SUIT_ORDER.index(ca_.suit), SUIT_ORDER.index(cb_.suit)
        return (x > y) - (x < y)

    if ca in ("sf", "straight"):
        if sa != sb:
            return 1 if sa < sb else -1  # earlier in the list is higher
        if ca == "sf":
            return by_suit(da[0], db[0])
        # Q1: the top card of the sequence (the 3 of A-2-3) or the highest face value
        def decider(d, seq):
            if SEQUENCES[seq] == "A23" and not ace_suit_for_a23:
                return next(c for c in d if c.rank == 3)
            return d[0]
        return by_suit(decider(da, sa), decider(db, sb))
    if ca == "trips":
        return (ra[0] > rb[0]) - (ra[0] < rb[0])
    if ca in ("flush", "odd"):
        for x, y in zip(ra, rb):
            if x != y:
                return 1 if x > y else -1
        return by_suit(da[0], db[0])
    # pair: the pair, then the odd card, then the odd card's suit
    pa = next(r for r in ra if ra.count(r) == 2)
    pb = next(r for r in rb if rb.count(r) == 2)
    if pa != pb:
        return 1 if pa > pb else -1
    ka = next(c for c in da if c.rank != pa)
    kb = next(c for c in db if c.rank != pb)
    if ka.rank != kb.rank:
        return 1 if ka.rank > kb.rank else -1
    return by_suit(ka, kb)


def _agree_over_all_hands(ranking: Ranking, **brute_kw):
    cmp = functools.partial(brute_compare, **brute_kw)
    ordered = sorted(ALL_HANDS, key=functools.cmp_to_key(cmp))
    keys = [evaluate(hand, ranking).key for hand in ordered]
    for i in range(len(ordered) - 1):
        tie = cmp(ordered[i], ordered[i + 1]) == 0
        assert (keys[i] == keys[i + 1]) == tie, (ordered[i], ordered[i + 1])
        assert keys[i] <= keys[i + 1], (ordered[i], ordered[i + 1])
    return ordered, keys


# ---------------------------------------------------------------- whole-deck agreement
def test_q_poker_ranking_agrees_with_the_articles_over_all_22100_hands():
    ordered, keys = _agree_over_all_hands(Q_POKER, suits=True)
    # art. 8 with the suit order: no two hands that could be dealt together ever tie
    groups: dict[tuple, list] = {}
    for hand, key in zip(ordered, keys):
        groups.setdefault(key, []).append(set(hand))
    for members in groups.values():
        for x, y in itertools.combinations(members, 2):
            assert x & y, "two disjoint Q Poker hands tie"
    assert str(_desc(ordered[-1])[0]) == "As"  # spade A-K-Q on top
    assert {c.rank for c in ordered[-1]} == {14, 13, 12}
    assert sorted(c.rank for c in ordered[0]) == [2, 3, 5]  # 5-3-2 the lowest odd cards


def test_q_poker_q1_ace_suit_reading_agrees_over_all_hands():
    ranking = Ranking(suits_break_ties=True, straight_suit_card="highest_face_value")
    ordered, keys = _agree_over_all_hands(ranking, suits=True, ace_suit_for_a23=True)
    groups: dict[tuple, list] = {}
    for hand, key in zip(ordered, keys):
        groups.setdefault(key, []).append(set(hand))
    for members in groups.values():  # still a total order between hands dealt together
        for x, y in itertools.combinations(members, 2):
            assert x & y


def test_fortune_ranking_agrees_with_the_articles_over_all_22100_hands():
    _agree_over_all_hands(FORTUNE, suits=False)


def test_fortune_f1_flush_reading_agrees_over_all_hands():
    ranking = Ranking(suits_break_ties=False, suited_ace_king_queen="flush")
    _agree_over_all_hands(ranking, suits=False, sf_top_is_kqj=True)


def test_category_counts_over_the_deck():
    counts = {c: 0 for c in Category}
    for hand in ALL_HANDS:
        counts[evaluate(hand, FORTUNE).category] += 1
    assert counts == {Category.STRAIGHT_FLUSH: 48, Category.THREE_OF_A_KIND: 52,
                      Category.STRAIGHT: 720, Category.FLUSH: 1096, Category.PAIR: 3744,
                      Category.THREE_ODD_CARDS: 16440}


# ---------------------------------------------------------------- articles one by one
@pytest.mark.parametrize("ranks,top", [
    ((14, 13, 12), 14), ((13, 12, 11), 13), ((4, 3, 2), 4), ((14, 2, 3), 3),
    ((14, 13, 2), None), ((5, 3, 2), None), ((7, 7, 6), None)])
def test_sequences_of_article_4(ranks, top):
    assert sequence_top(ranks) == top


def test_q_poker_suit_order_spades_hearts_clubs_diamonds():
    # art. 4(1) through art. 8(6): equal odd cards, the highest card's suit decides
    assert compare(h("Ks 9d 4c"), h("Kh 9s 4s"), Q_POKER) == 1
    assert compare(h("Kh 9d 4c"), h("Kc 9s 4s"), Q_POKER) == 1
    assert compare(h("Kc 9d 4c"), h("Kd 9s 4s"), Q_POKER) == 1


def test_q_poker_straight_order_and_a23_lowest():
    assert compare(h("As Kd Qh"), h("Ks Qs Jd"), Q_POKER) == 1
    assert compare(h("As 2d 3h"), h("4d 3c 2d"), Q_POKER) == -1
    assert compare(h("Ad 2d 3d"), h("4s 3s 2s"), Q_POKER) == -1  # straight flushes too


def test_q_poker_q1_a23_suit_readings_differ():
    a, b = h("As 2d 3h"), h("Ad 2s 3c")
    assert compare(a, b, Q_POKER) == 1  # default: the 3 decides, hearts > clubs
    ace = Ranking(suits_break_ties=True, straight_suit_card="highest_face_value")
    assert compare(a, b, ace) == 1  # the ace decides too: spades > diamonds
    a, b = h("Ad 2d 3h"), h("As 2s 3c")
    assert compare(a, b, Q_POKER) == 1
    assert compare(a, b, ace) == -1


def test_q_poker_straight_flush_and_three_of_a_kind():
    assert compare(h("8s 7s 6s"), h("8h 7h 6h"), Q_POKER) == 1   # art. 8(1): ranks, then suit
    assert compare(h("9d 8d 7d"), h("8s 7s 6s"), Q_POKER) == 1
    assert compare(h("9s 9d 9c"), h("8s 8d 8h"), Q_POKER) == 1   # art. 8(2)
    assert compare(h("2s 2d 2c"), h("As Ks Qs"), Q_POKER) == -1  # 8(1) above 8(2)


def test_q_poker_pair_kicker_suit_and_flush_suit():
    assert compare(h("9s 9d 5h"), h("9h 9c 5c"), Q_POKER) == 1   # art. 8(5)
    assert compare(h("Ts 7s 5s"), h("Th 7h 5h"), Q_POKER) == 1   # art. 8(4)
    assert compare(h("Ts 7s 5s"), h("Th 8h 5h"), Q_POKER) == -1


def test_fortune_ties_without_suits():
    assert compare(h("Ks 9d 4c"), h("Kh 9s 4s"), FORTUNE) == 0          # art. 8(6), F5
    assert compare(h("9s 9d 5h"), h("9h 9c 5c"), FORTUNE) == 0          # art. 8(5)
    assert compare(h("Ts 7s 5s"), h("Th 7h 5h"), FORTUNE) == 0          # art. 8(4)
    assert compare(h("8s 7d 6h"), h("8h 7s 6c"), FORTUNE) == 0          # art. 8(3)
    assert compare(h("Ks Qs Js"), h("Kh Qh Jh"), FORTUNE) == 0          # art. 8(1)
    assert compare(h("3s 2s As"), h("4d 3d 2d"), FORTUNE) == -1         # 3-2-A lowest


def test_fortune_f1_suited_ace_king_queen():
    akq = h("Ah Kh Qh")
    assert evaluate(akq, FORTUNE).category is Category.STRAIGHT_FLUSH
    literal = Ranking(suits_break_ties=False, suited_ace_king_queen="flush")
    assert evaluate(akq, literal).category is Category.FLUSH
    assert compare(akq, h("Ks Qs Js"), literal) == -1  # K-Q-J the top straight flush
    assert compare(akq, h("Ad Kc Qs"), literal) == -1  # below every straight


def test_croupier_qualification_at_queen_high():
    assert qualifies(evaluate(h("Qd 3c 2h"), Q_POKER))
    assert not qualifies(evaluate(h("Jd Tc 8h"), Q_POKER))
    assert qualifies(evaluate(h("2d 2c 3h"), FORTUNE))
    assert qualifies(evaluate(h("Ad 3c 2h"), FORTUNE))  # A-2-3 is a straight


def test_wrong_card_count_is_refused():
    with pytest.raises(RuleError, match="exactly 3"):
        evaluate(h("As Ks"), Q_POKER)


# ---------------------------------------------------------------- properties
hands = st.lists(st.sampled_from(DECK), min_size=3, max_size=3, unique=True)


@given(hands, hands)
def test_comparison_is_antisymmetric_and_matches_brute_force(a, b):
    for ranking, suits in ((Q_POKER, True), (FORTUNE, False)):
        assert compare(a, b, ranking) == -compare(b, a, ranking)
        assert compare(a, b, ranking) == brute_compare(a, b, suits=suits)


@given(hands, hands, hands)
def test_comparison_is_transitive(a, b, c):
    for ranking in (Q_POKER, FORTUNE):
        if compare(a, b, ranking) >= 0 and compare(b, c, ranking) >= 0:
            assert compare(a, c, ranking) >= 0


@given(st.lists(st.sampled_from(DECK), min_size=6, max_size=6, unique=True))
def test_q_poker_never_ties_between_cards_dealt_together(six):
    assert compare(six[:3], six[3:], Q_POKER) != 0
