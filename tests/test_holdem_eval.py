"""Texas Hold'em ranking, 11/2008 art. 10(1), 14 and 15, held against the text's own examples,
against properties any ranking must have, and against PokerKit's evaluator."""
import random
from itertools import combinations

import pytest
from hypothesis import given, settings, strategies as st

from controller.rules.cards import Card, full_deck
from controller.rules.errors import RuleError
from controller.rules.holdem_eval import Category, best_hand, evaluate_five, holdem_hand

DECK = full_deck()


def five(text):
    return evaluate_five([Card.parse(t) for t in text.split()])


def test_art_15_order_of_categories_highest_first():
    # one hand of each item of art. 15, in the article's order 1) .. 10)
    hands = [
        "As Ks Qs Js Ts",   # 1) naipe real
        "Kh Qh Jh Th 9h",   # 2) sequência de naipe (the highest one the text names)
        "9c 9d 9h 9s 2c",   # 3) quatro cartas iguais
        "8c 8d 8h 4s 4c",   # 4) trio-par
        "Td 9d 7d 5d 2d",   # 5) naipe ou cor: the text's own example 10,9,7,5,2
        "6c 7d 8h 9s Tc",   # 6) sequência: the text's example 6,7,8,9,10
        "Qc Qd Qh 7s 2c",   # 7) trio
        "Tc Td 6h 6s 5c",   # 8) dois pares: the text's example 10,10,6,6,5
        "Tc Td 9h 7s 6c",   # 9) par: the text's example 10,10,9,7,6
        "Ac Jd 9h 7s 5c",   # 10) cinco cartas diferentes
    ]
    values = [five(h) for h in hands]
    assert [v.category for v in values] == sorted(Category, reverse=True)
    assert values == sorted(values, reverse=True)
    assert all(a > b for a, b in zip(values, values[1:]))


def test_category_names_are_the_regulations_words():
    assert five("As Ks Qs Js Ts").label == "Naipe real (royal flush)"
    assert five("8c 8d 8h 4s 4c").label == "Trio-par (full house)"
    assert five("Ac Jd 9h 7s 5c").label == "Cinco cartas diferentes (five odd cards)"
    assert five("Tc Td 9h 7s 6c").category.article == "11/2008 art. 15(9)"


def test_art_14_ace_is_low_only_in_five_four_three_two_ace():
    wheel, six_high = five("5c 4d 3h 2s Ac"), five("6c 5d 4h 3s 2c")
    assert wheel.category is Category.STRAIGHT and wheel < six_high     # 15(6): the lowest
    assert five("Ac Kd Qh Js Tc") > five("Kc Qd Jh Ts 9c")              # 15(6): the highest
    # no wrap-around: Q-K-A-2-3 is no straight
    assert five("Qc Kd Ah 2s 3c").category is Category.FIVE_ODD_CARDS
    # elsewhere the ace is high: ace-high beats king-high
    assert five("Ac 9d 7h 4s 2c") > five("Kc Qd Jh 9s 7c")


def test_art_15_2_straight_flushes_and_royal_flush():
    assert five("5d 4d 3d 2d Ad") < five("6d 5d 4d 3d 2d")              # 5-4-3-2-A the lowest
    assert five("Kh Qh Jh Th 9h").category is Category.STRAIGHT_FLUSH
    assert five("Kh Qh Jh Th 9h") == five("Ks Qs Js Ts 9s")            # same ranks: a tie
    assert five("As Ks Qs Js Ts") == five("Ad Kd Qd Jd Td")            # suits are equal 14(1)
    assert five("As Ks Qs Js Ts") > five("Kh Qh Jh Th 9h")


def test_art_15_3_four_of_a_kind_higher_wins_and_kicker_does_not_count():
    assert five("9c 9d 9h 9s 2c") > five("8c 8d 8h 8s Ac")
    # "A outra carta não conta para qualquer efeito": same four, any fifth card, a tie
    assert five("9c 9d 9h 9s 2c") == five("9c 9d 9h 9s Ac")
    kick = dict(four_of_a_kind_kicker=True)
    a = evaluate_five([Card.parse(t) for t in "9c 9d 9h 9s Ac".split()], **kick)
    b = evaluate_five([Card.parse(t) for t in "9c 9d 9h 9s 2c".split()], **kick)
    assert a > b


def test_art_15_4_full_house_trips_then_pair():
    assert five("8c 8d 8h 2s 2c") > five("7c 7d 7h As Ac")
    assert five("8c 8d 8h As Ac") > five("8c 8d 8s Ks Kc")
    assert five("8c 8d 8h As Ac") == five("8s 8d 8h Ad Ah")


def test_art_15_5_flush_card_by_card():
    assert five("Ad 9d 7d 5d 2d") > five("Kh Qh Jh 9h 7h")
    assert five("Ad 9d 7d 5d 3d") > five("Ah 9h 7h 5h 2h")               # down to the fifth card
    assert five("Ad 9d 7d 5d 3d") == five("Ah 9h 7h 5h 3h")


def test_art_15_6_straight_by_highest_card():
    assert five("6c 7d 8h 9s Tc") > five("5c 6d 7h 8s 9c")
    assert five("6c 7d 8h 9s Tc") == five("6d 7c 8s 9h Td")


def test_art_15_7_three_of_a_kind_then_the_two_odd_cards():
    assert five("Qc Qd Qh 3s 2c") > five("Jc Jd Jh As Kc")
    assert five("Qc Qd Qh As 2c") > five("Qc Qd Qs Ks Jc")
    assert five("Qc Qd Qh As 3c") > five("Qc Qd Qs Ad 2c")
    assert five("Qc Qd Qh As 3c") == five("Qc Qd Qs Ad 3d")


def test_art_15_8_two_pairs_high_pair_low_pair_odd_card():
    assert five("Tc Td 3h 3s 2c") > five("9c 9d 8h 8s Ac")
    assert five("Tc Td 6h 6s 2c") > five("Tc Td 5h 5s Ac")
    assert five("Tc Td 6h 6s 5c") > five("Th Ts 6d 6c 4c")
    assert five("Tc Td 6h 6s 5c") == five("Th Ts 6d 6c 5d")


def test_art_15_9_pair_then_the_three_odd_cards_in_turn():
    assert five("Tc Td 4h 3s 2c") > five("9c 9d Ah Ks Qc")
    assert five("Tc Td Ah 3s 2c") > five("Tc Td Kh Qs Jc")
    assert five("Tc Td 9h 7s 6c") > five("Th Ts 9d 7c 5c")
    assert five("Tc Td 9h 7s 6c") == five("Th Ts 9d 7c 6d")


def test_art_15_10_five_odd_cards_card_by_card():
    assert five("Ac Jd 9h 7s 5c") > five("Kc Qd Jh 9s 8c")
    assert five("Ac Jd 9h 7s 5c") > five("Ac Jd 9h 7s 4c")
    assert five("Ac Jd 9h 7s 5c") == five("Ad Jc 9s 7h 5d")


def test_art_10_1_best_five_of_seven_any_combination_even_the_board():
    board = ["As", "Ks", "Qs", "Js", "Ts"]
    v = holdem_hand(["2c", "3d"], board)                  # the board plays: royal flush
    assert v.category is Category.ROYAL_FLUSH
    assert v == holdem_hand(["9s", "9d"], board)          # so both players tie
    v = holdem_hand(["Ah", "Ad"], ["Ac", "Kd", "Kh", "2s", "7c"])
    assert v.category is Category.FULL_HOUSE and v.tiebreak == (14, 13)
    assert sorted(str(c) for c in v.cards) == sorted(["Ah", "Ad", "Ac", "Kd", "Kh"])


def test_quads_on_the_board_tie_unless_the_kicker_counts():
    board = ["9c", "9d", "9h", "9s", "2c"]
    a, b = holdem_hand(["Ac", "3d"], board), holdem_hand(["Kc", "3h"], board)
    assert a == b and a.category is Category.FOUR_OF_A_KIND
    a = holdem_hand(["Ac", "3d"], board, four_of_a_kind_kicker=True)
    b = holdem_hand(["Kc", "3h"], board, four_of_a_kind_kicker=True)
    assert a > b


@pytest.mark.parametrize("hole,board,message", [
    (["Zz", "As"], ["2c", "3c", "4c", "5d", "9h"], 'unknown card "Zz"'),
    (["As", "As"], ["2c", "3c", "4c", "5d", "9h"], "duplicate card As"),
    (["As", "Kd"], ["As", "3c", "4c", "5d", "9h"], "duplicate card As"),
    (["As"], ["2c", "3c", "4c", "5d", "9h"], "needs exactly 2"),
    (["As", "Kd"], ["2c", "3c", "4c", "5d"], "needs exactly 5"),
])
def test_bad_cards_are_named(hole, board, message):
    with pytest.raises(RuleError, match=message):
        holdem_hand(hole, board)


def test_best_hand_refuses_too_few_or_too_many_cards():
    with pytest.raises(RuleError, match="five to seven"):
        best_hand(["As", "Kd", "2c", "3c"])
    with pytest.raises(RuleError, match="five to seven"):
        best_hand([str(c) for c in DECK[:8]])


# -- properties ---------------------------------------------------------------------------
seven_cards = st.lists(st.sampled_from(DECK), min_size=7, max_size=7, unique=True)
SUIT_PERMS = ["shcd", "hscd", "cdsh", "dchs"]


@settings(max_examples=150, deadline=None)
@given(seven_cards, st.sampled_from(SUIT_PERMS), st.randoms(use_true_random=False))
def test_value_ignores_suit_names_and_card_order(cards, perm, rnd):
    # art. 14(1): all suits rank the same, so renaming suits changes nothing
    renamed = [Card(c.rank, perm["shcd".index(c.suit)]) for c in cards]
    shuffled = list(renamed)
    rnd.shuffle(shuffled)
    assert best_hand(cards) == best_hand(shuffled)


@settings(max_examples=150, deadline=None)
@given(seven_cards)
def test_best_of_seven_is_at_least_every_five_and_equals_one_of_them(cards):
    best = best_hand(cards)
    fives = [evaluate_five(f) for f in combinations(cards, 5)]
    assert all(best >= f for f in fives)
    assert best in fives
    assert evaluate_five(best.cards) == best and set(best.cards) <= set(cards)


def _category_by_counting(cards):
    """An independent classifier of five cards (the textbook definitions)."""
    ranks = sorted(c.rank for c in cards)
    counts = sorted((ranks.count(r) for r in set(ranks)), reverse=True)
    flush = len({c.suit for c in cards}) == 1
    straight = len(set(ranks)) == 5 and (ranks[4] - ranks[0] == 4 or ranks == [2, 3, 4, 5, 14])
    if straight and flush:
        return "royal_flush" if ranks[0] == 10 else "straight_flush"
    if counts[0] == 4:
        return "four_of_a_kind"
    if counts == [3, 2]:
        return "full_house"
    if flush:
        return "flush"
    if straight:
        return "straight"
    return {3: "three_of_a_kind", 2: "two_pairs" if counts[1] == 2 else "one_pair",
            1: "five_odd_cards"}[counts[0]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=5, max_size=5, unique=True))
def test_category_agrees_with_an_independent_classifier(cards):
    assert evaluate_five(cards).category.name.lower() == _category_by_counting(cards)


def _pokerkit_compare(rnd, n, kicker):
    from pokerkit import StandardHighHand
    disagreements = []
    for _ in range(n):
        deal = rnd.sample(DECK, 9)
        board, a, b = deal[:5], deal[5:7], deal[7:9]
        mine = (holdem_hand(a, board, four_of_a_kind_kicker=kicker)
                > holdem_hand(b, board, four_of_a_kind_kicker=kicker)) - \
            (holdem_hand(a, board, four_of_a_kind_kicker=kicker)
             < holdem_hand(b, board, four_of_a_kind_kicker=kicker))
        bs = "".join(map(str, board))
        pa = StandardHighHand.from_game("".join(map(str, a)), bs)
        pb = StandardHighHand.from_game("".join(map(str, b)), bs)
        theirs = (pa > pb) - (pa < pb)
        if mine != theirs:
            disagreements.append((a, b, board))
    return disagreements


def test_agrees_with_pokerkit_on_random_deals():
    # PokerKit counts the fifth card beside four of a kind (reading "counts" here)
    assert _pokerkit_compare(random.Random(11), 1500, kicker=True) == []


def test_agrees_with_pokerkit_on_deals_rich_in_pairs_and_flushes():
    # a short deck of two suits and seven ranks makes pairs, trips, flushes and ties common
    small = [c for c in DECK if c.suit in "sh" and c.rank >= 8]
    rnd = random.Random(5)
    from pokerkit import StandardHighHand
    ties = 0
    for _ in range(800):
        deal = rnd.sample(small, 9)
        board, a, b = deal[:5], deal[5:7], deal[7:9]
        va = holdem_hand(a, board, four_of_a_kind_kicker=True)
        vb = holdem_hand(b, board, four_of_a_kind_kicker=True)
        bs = "".join(map(str, board))
        pa = StandardHighHand.from_game("".join(map(str, a)), bs)
        pb = StandardHighHand.from_game("".join(map(str, b)), bs)
        assert ((va > vb) - (va < vb)) == ((pa > pb) - (pa < pb)), (a, b, board)
        ties += va == vb
    assert ties > 20     # the ties of art. 15 were really exercised


def test_four_of_a_kind_on_the_board_ties_by_default_where_pokerkit_uses_the_kicker():
    from pokerkit import StandardHighHand
    rnd = random.Random(3)
    pokerkit_split = 0
    for _ in range(50):
        rank = rnd.randint(2, 14)
        quads = [c for c in DECK if c.rank == rank]
        rest = rnd.sample([c for c in DECK if c.rank != rank], 5)
        board, a, b = quads + rest[:1], rest[1:3], rest[3:5]
        assert holdem_hand(a, board) == holdem_hand(b, board)     # art. 15(3): a tie
        bs = "".join(map(str, board))
        pa = StandardHighHand.from_game("".join(map(str, a)), bs)
        pb = StandardHighHand.from_game("".join(map(str, b)), bs)
        pokerkit_split += pa != pb
    assert pokerkit_split > 10


@pytest.mark.long
def test_agrees_with_pokerkit_on_many_random_deals():
    assert _pokerkit_compare(random.Random(99), 40000, kicker=True) == []
