"""The exact house edges `tablectl odds` gives for the wagers whose pay tables the texts fix,
against an enumeration written here from the articles alone: its own ranking of three-card
hands (89/2004 art. 4, 8; 78/2008 art. 4, 8), its own pay tables (89/2004 art. 9, 10; 78/2008
art. 9, 10) and every croupier hand counted card by card against every player hand, none of
the odds engine's counting by inclusion-exclusion."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from controller.rules import get_game

HANDS = list(itertools.combinations(range(52), 3))      # card code = suit * 13 + rank - 2
CROUPIER_HANDS = 18424                                  # C(49, 3)


def value(hand, suits_rank: bool):
    """A hand's value under art. 8 of either text: a tuple, larger is better. Q Poker's suits
    (art. 4(1): spades, hearts, clubs, diamonds) end every comparison; Fortune's never do."""
    ranks = sorted((c % 13 + 2 for c in hand), reverse=True)
    suit = {c % 13 + 2: 3 - c // 13 for c in hand}           # spades 3 .. diamonds 0
    flush = len({c // 13 for c in hand}) == 1
    top = ranks[0] if ranks[0] - ranks[2] == 2 and len(set(ranks)) == 3 else None
    if ranks == [14, 3, 2]:
        top = 3                                               # A-2-3, the lowest sequence
    s = (lambda r: (suit[r],)) if suits_rank else (lambda r: ())
    if top and flush:
        return (5, top, *s(top))
    if ranks[0] == ranks[2]:
        return (4, ranks[0])
    if top:
        return (3, top, *s(top))                             # Q1 default: the sequence's top
    if flush:
        return (2, *ranks, *s(ranks[0]))
    if ranks[0] == ranks[1] or ranks[1] == ranks[2]:
        pair, odd = ranks[1], ranks[2] if ranks[0] == ranks[1] else ranks[0]
        return (1, pair, odd, *s(odd))                       # the odd card's suit (8(5))
    return (0, *ranks, *s(ranks[0]))                         # the highest card's suit (8(6))


def versus_edge(suits_rank: bool, play, fold):
    """House edge of the wager against the croupier, the player playing or folding each hand
    as pays more. ``play(category, unqualified, lower, tie, higher)`` is the player's total
    net over the croupier hands in each class; ``fold`` his net over all of them."""
    values = [value(h, suits_rank) for h in HANDS]
    order = {v: i for i, v in enumerate(sorted(set(values)))}
    dense = np.array([order[v] for v in values])
    qualify_from = min(d for v, d in zip(values, dense) if v[0] > 0 or v[1] >= 12)
    by_rank = np.argsort(dense, kind="stable")
    ranks = dense[by_rank]
    own = np.array([(1 << a) | (1 << b) | (1 << c) for a, b, c in HANDS], dtype=np.uint64)
    masks = own[by_rank]
    q = int(np.searchsorted(ranks, qualify_from))
    total = Fraction(0)
    for i in range(len(HANDS)):
        apart = (masks & own[i]) == 0
        lo = max(q, int(np.searchsorted(ranks, dense[i])))
        hi = max(q, int(np.searchsorted(ranks, dense[i], side="right")))
        counts = (int(apart[:q].sum()), int(apart[q:lo].sum()), int(apart[lo:hi].sum()),
                  int(apart[hi:].sum()))
        assert sum(counts) == CROUPIER_HANDS
        total += max(play(values[i][0], *counts), fold)
    return -total / (len(HANDS) * CROUPIER_HANDS)


def pay_table_edge(suits_rank: bool, pays: dict[int, int]):
    """House edge of a wager on the player's own three cards, x to 1, three odd cards lose."""
    return -Fraction(sum(pays.get(value(h, suits_rank)[0], -1) for h in HANDS), len(HANDS))


class TestQPokerEdges:
    """89/2004 art. 9(3), 9(5), 9(7), 10(1)-(5): the exact edges of the pair bonus and of the
    bet versus the croupier, counted here card by card."""

    def test_pair_bonus_and_bet_versus_the_croupier(self):
        """A fold loses half, a croupier below Q-high pays half, a qualified croupier beaten
        pays 3, 2, 3/2 or 1 to 1; the pair bonus pays 40, 30, 6, 4 or 1 to 1."""
        pays = {5: Fraction(3), 4: Fraction(2), 3: Fraction(3, 2), 2: 1, 1: 1, 0: 1}

        def play(category, unqualified, lower, tie, higher):
            assert tie == 0                              # one deck: the suits leave no tie
            return unqualified * Fraction(1, 2) + lower * pays[category] - higher

        bets = get_game("q-poker").odds()["bets"]
        assert Fraction(bets["pair_bonus"]["house_edge_exact"]) == pay_table_edge(
            True, {5: 40, 4: 30, 3: 6, 2: 4, 1: 1}) == Fraction(512, 22100)
        edge = versus_edge(True, play, -Fraction(CROUPIER_HANDS, 2))
        assert Fraction(bets["versus_croupier"]["house_edge_exact"]) == edge
        assert edge == Fraction(11234169, 407170400)     # 2.7591 %


class TestFortuneEdges:
    """78/2008 art. 9(3), 9(6), 9(8), 10(1)-(5): the exact edges of the Pair Plus and of the
    Ante with its Play, counted here card by card."""

    def test_pair_plus_and_ante_with_its_play(self):
        """Under the default readings (F1-F5): a fold loses the Ante; a croupier below Q pays
        the Ante 1 to 1 and returns the Play; a qualified croupier beaten pays Ante and Play 5,
        4, 1 or 1 to 1; a tie is returned; the Pair Plus pays 40, 25, 5, 4 or 1 to 1."""
        pays = {5: 5, 4: 4, 3: 1, 2: 1, 1: 1, 0: 1}

        def play(category, unqualified, lower, tie, higher):
            return unqualified + 2 * lower * pays[category] - 2 * higher

        bets = get_game("fortune-3-card-poker").odds()["bets"]
        assert Fraction(bets["pair_plus"]["house_edge_exact"]) == pay_table_edge(
            False, {5: 40, 4: 25, 3: 5, 2: 4, 1: 1}) == Fraction(1492, 22100)
        edge = versus_edge(False, play, -CROUPIER_HANDS)
        assert Fraction(bets["ante"]["house_edge_exact"]) == edge
        assert edge == Fraction(6580501, 101792600)      # 6.4646 %
