"""Super Pan 9 (261/96/M), article by article: dealing plan, ranking, rulings, settlement, odds.

Expected results are worked out by hand from the text (comments show the arithmetic); the
ranking and the odds are also checked against independent implementations written here.
"""
import copy
import io
import itertools
import json
import re
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings, strategies as st

from controller import cli
from controller.rules import get_game
from controller.rules.base import (Irregularity, Mode, Phase, PlanRequest, Remedy, box)
from controller.rules.cards import Card, full_deck, parse_cards
from controller.rules.errors import RuleError
from controller.rules import super_pan_9 as pan9

GAME = get_game("super-pan-9")
C = parse_cards


def plan(boxes, banker, dice, adjust=0, mode="shoe", layout=8, **interp):
    req = PlanRequest(boxes=tuple(boxes), mode=Mode(mode), layout_boxes=layout, banker=banker,
                      adjust=adjust, dice=tuple(dice) if dice is not None else None,
                      interpretations=interp)
    return GAME.dealing_plan(req)


def seat_sequence(steps):
    """The seats in the order they receive cards, each once."""
    out = []
    for d in steps:
        if not out or out[-1] != d.recipient.box:
            out.append(d.recipient.box)
    return out


# === art. 1 and 3: material and seats (layout validation) ===================================

def test_art_3_1_at_least_two_seats_including_the_bankers():
    with pytest.raises(RuleError, match=r"at least 2 seats.*art\. 3\(1\)"):
        GAME.check_layout(1)
    GAME.check_layout(2)
    # the smallest table plays: banker at 1, one seat against him
    assert seat_sequence(plan([2], banker=1, dice=(1, 1, 1, 1), layout=2)) in ([1, 2], [2, 1])


def test_art_1_1_one_deck_gives_two_cards_to_at_most_26_seats():
    GAME.check_layout(26)
    steps = plan(range(1, 27), banker=1, dice=(6, 6, 6, 6), layout=26)
    assert sum(d.cards for d in steps) == 52
    with pytest.raises(RuleError, match="52-card"):
        GAME.check_layout(27)
    with pytest.raises(RuleError, match="whole number of seats"):
        GAME.check_layout("8")


@pytest.mark.parametrize("dice,msg", [
    ((3, 5, 1), "3 dice given"), ((3, 5, 1, 6, 2), "5 dice given"),
    ((0, 5, 1, 6), "cannot show 0"), ((7, 5, 1, 6), "cannot show 7"),
    ((True, 5, 1, 6), "cannot show true"), (None, "dice are missing"), ("3516", "four whole")])
def test_art_1_2_four_dice_each_one_to_six(dice, msg):
    with pytest.raises(RuleError, match=msg):
        pan9.check_dice(dice)


def test_art_1_3_shoe_and_shuffler_both_deal():
    shoe = plan([1, 3, 5], banker=4, dice=(3, 5, 1, 6))
    shuffler = plan([1, 3, 5], banker=4, dice=(3, 5, 1, 6), mode="shuffler")
    assert seat_sequence(shoe) == seat_sequence(shuffler)
    assert all(d.cards == 1 for d in shoe) and all(d.cards == 2 for d in shuffler)


def test_seats_outside_the_layout_are_refused():
    with pytest.raises(RuleError, match="seat 9 does not exist"):
        plan([1, 9], banker=4, dice=(1, 2, 3, 4))
    with pytest.raises(RuleError, match="banker's seat 0 does not exist"):
        plan([1], banker=0, dice=(1, 2, 3, 4))
    with pytest.raises(RuleError, match="banker's seat is missing"):
        plan([1], banker=None, dice=(1, 2, 3, 4))
    with pytest.raises(RuleError, match="no seat in play besides the banker"):
        plan([4], banker=4, dice=(1, 2, 3, 4))


# === art. 2(2)-(3): counting and dealing ====================================================

def test_art_2_2_full_table_banker_is_one():
    # banker 4, every seat in play; total 5: 4(1) 3(2) 2(3) 1(4) 8(5) -> seat 8 first
    steps = plan(range(1, 9), banker=4, dice=(1, 1, 1, 2))
    assert seat_sequence(steps) == [8, 7, 6, 5, 4, 3, 2, 1]


def test_art_2_2_p1b_banker_not_one():
    # total 5 counted from the seat after the banker: 3(1) 2(2) 1(3) 8(4) 7(5) -> seat 7
    steps = plan(range(1, 9), banker=4, dice=(1, 1, 1, 2), banker_is_one="no")
    assert seat_sequence(steps) == [7, 6, 5, 4, 3, 2, 1, 8]


def test_art_2_2_p1a_empty_seats_not_counted():
    # seats in play 1 3 5 and the banker 4; total 6 over 4(1) 3(2) 1(3) 5(4) 4(5) 3(6) -> 3
    steps = plan([1, 3, 5], banker=4, dice=(1, 1, 2, 2))
    assert seat_sequence(steps) == [3, 1, 5, 4]


def test_art_2_2_p1a_empty_seats_counted_then_next_seat_in_play():
    # every seat counted: 4(1) 3 2 1 8 7(6) -> seat 7 is empty, next counter-clockwise in play
    # is 5 (6 is empty too)
    steps = plan([1, 3, 5], banker=4, dice=(1, 1, 2, 2), count_empty_seats="yes")
    assert seat_sequence(steps) == [5, 4, 3, 1]
    # both readings of P1 together: from seat 3 as one, 3 2 1 8 7 6(6) -> 6 empty -> 5
    steps = plan([1, 3, 5], banker=4, dice=(1, 1, 2, 2), count_empty_seats="yes",
                 banker_is_one="no")
    assert seat_sequence(steps) == [5, 4, 3, 1]
    # total 4, every seat counted: 4 3 2 1 -> seat 1 first
    steps = plan([1, 3, 5], banker=4, dice=(1, 1, 1, 1), count_empty_seats="yes")
    assert seat_sequence(steps) == [1, 5, 4, 3]


def test_art_2_2_the_banker_can_receive_the_first_cards():
    # seats in play 1 3 4 5; total 4 + 4k lands on the banker (banker is one): 17 -> 17-1=16
    steps = plan([1, 3, 5], banker=4, dice=(6, 6, 4, 1))
    assert seat_sequence(steps)[0] == 4


def test_art_2_3_declared_adjustment_is_added_or_subtracted():
    base = plan([1, 3, 5], banker=4, dice=(1, 1, 2, 2))            # total 6 -> seat 3
    plus = plan([1, 3, 5], banker=4, dice=(1, 1, 1, 1), adjust=+2)  # 4 + 2 = 6
    minus = plan([1, 3, 5], banker=4, dice=(2, 2, 2, 2), adjust=-2)  # 8 - 2 = 6
    assert seat_sequence(base) == seat_sequence(plus) == seat_sequence(minus) == [3, 1, 5, 4]
    # without the adjustment 8 counts 4 3 1 5 4 3 1 5 -> seat 5
    assert seat_sequence(plan([1, 3, 5], banker=4, dice=(2, 2, 2, 2)))[0] == 5


def test_art_2_3_p12_total_below_one():
    # 4 - 4 = 0 counts one step back from the banker (one): the seat clockwise of it, 5
    steps = plan([1, 3, 5], banker=4, dice=(1, 1, 1, 1), adjust=-4)
    assert seat_sequence(steps)[0] == 5
    with pytest.raises(RuleError, match="adjusted_total=refuse"):
        plan([1, 3, 5], banker=4, dice=(1, 1, 1, 1), adjust=-4, adjusted_total="refuse")
    assert pan9.check_adjust(-3, {"adjusted_total": "refuse"}) == -3
    with pytest.raises(RuleError, match="subtract at most 3"):
        pan9.check_adjust(-4, {"adjusted_total": "refuse"})
    with pytest.raises(RuleError, match="whole number"):
        pan9.check_adjust("+2")


def test_art_2_3_right_to_left_two_consecutive_cards_each_banker_included():
    steps = plan([1, 3, 5, 8], banker=4, dice=(3, 5, 1, 6), adjust=+2)
    # in play 1 3 4 5 8: total 17 -> 16 steps over a ring of 5 -> index 1 from 4 -> seat 3
    assert [d.recipient for d in steps] == [box(s) for s in (3, 3, 1, 1, 8, 8, 5, 5, 4, 4)]
    assert all(d.cards == 1 and not d.face_up for d in steps)
    shuffler = plan([1, 3, 5, 8], banker=4, dice=(3, 5, 1, 6), adjust=+2, mode="shuffler")
    assert [(d.recipient.box, d.cards) for d in shuffler] == [(3, 2), (1, 2), (8, 2), (5, 2),
                                                              (4, 2)]


def test_the_bankers_seat_is_in_play_even_when_not_listed():
    assert 4 in seat_sequence(plan([1, 3], banker=4, dice=(1, 2, 3, 4)))


@given(st.integers(2, 26).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(1, n), st.sets(st.integers(1, n), min_size=1),
    st.tuples(*[st.integers(1, 6)] * 4), st.integers(-30, 30),
    st.sampled_from(["yes", "no"]), st.sampled_from(["yes", "no"]))))
def test_plan_deals_two_cards_to_each_seat_in_play_once_counter_clockwise(args):
    n, banker, boxes, dice, adjust, empty, one = args
    assume(boxes - {banker})
    steps = plan(sorted(boxes), banker, dice, adjust, layout=n, count_empty_seats=empty,
                 banker_is_one=one)
    in_play = boxes | {banker}
    seq = seat_sequence(steps)
    assert sorted(seq) == sorted(in_play) and len(steps) == 2 * len(in_play)
    # right to left: each next seat is the next lower seat number in play, wrapping
    ring = sorted(in_play, reverse=True)
    i = ring.index(seq[0])
    assert seq == ring[i:] + ring[:i]


# === art. 2(4)-(5), 4: rulings ==============================================================

@pytest.mark.parametrize("irr", [Irregularity.DIE_NOT_FLAT, Irregularity.DIE_OUT_OF_CUP])
@pytest.mark.parametrize("phase", [Phase.SHAKING, Phase.BETTING])
def test_art_2_4_die_fault_reshake_never_void(irr, phase):
    for reading in ("reshake", "round_void"):  # not even the agitator reading changes it
        r = GAME.ruling(irr, phase, {"dice_malfunction": reading})
        assert r.remedy == Remedy.RESHAKE and r.article == "261/96/M art. 2(4)"


def test_art_2_4_a_die_fault_after_the_shake_is_not_possible():
    with pytest.raises(RuleError, match="only happen while the dice are shaken"):
        GAME.ruling(Irregularity.DIE_NOT_FLAT, Phase.DEALING)


def test_art_2_5_bets_close_at_the_shake():
    assert pan9.bets_open(Phase.BETTING)
    for phase in (Phase.SHAKING, Phase.DEALING, Phase.REVEAL, Phase.SETTLEMENT):
        assert not pan9.bets_open(phase)
        with pytest.raises(RuleError, match=r"art\. 2\(5\)"):
            pan9.check_bet_change(phase)
        for removal in (False, True):       # placed, added to, removed or moved
            with pytest.raises(RuleError, match=r"art\. 2\(5\)"):
                GAME.check_bet_change(phase, 0, removal=removal)
    pan9.check_bet_change(Phase.BETTING)
    GAME.check_bet_change(Phase.BETTING, 0, removal=True)


def test_art_4_exposed_cards_stay_valid_the_bankers_too():
    r = GAME.ruling(Irregularity.PLAYER_CARD_EXPOSED, Phase.DEALING)
    assert r.remedy == Remedy.CONTINUE and r.article == "261/96/M art. 4"
    r = GAME.ruling(Irregularity.CROUPIER_CARD_EXPOSED, Phase.DEALING)
    assert r.remedy == Remedy.CONTINUE and r.article == "261/96/M art. 4"


def test_p6_bankers_exposed_card_void_reading():
    r = GAME.ruling(Irregularity.CROUPIER_CARD_EXPOSED, Phase.DEALING,
                    {"banker_card_exposed": "round_void"})
    assert r.remedy == Remedy.ROUND_VOID and "P6" in r.article


def test_p3_machine_failure_while_dealing():
    for irr in (Irregularity.SHUFFLER_MALFUNCTION, Irregularity.SHOE_MALFUNCTION):
        r = GAME.ruling(irr, Phase.DEALING)
        assert r.remedy == Remedy.ROUND_VOID and "P3" in r.article and r.needs_supervisor
        r = GAME.ruling(irr, Phase.DEALING, {"machine_failure": "rectify"})
        assert r.remedy == Remedy.RECTIFY and r.needs_supervisor
        # before any card or after the last one nothing is lost: the round goes on
        assert GAME.ruling(irr, Phase.SHAKING).remedy == Remedy.CONTINUE
        assert GAME.ruling(irr, Phase.REVEAL).remedy == Remedy.CONTINUE


def test_p4_dice_agitator_failure():
    r = GAME.ruling(Irregularity.DICE_MALFUNCTION, Phase.SHAKING)
    assert r.remedy == Remedy.RESHAKE and "P4" in r.article and r.needs_supervisor
    r = GAME.ruling(Irregularity.DICE_MALFUNCTION, Phase.SHAKING,
                    {"dice_malfunction": "round_void"})
    assert r.remedy == Remedy.ROUND_VOID
    assert GAME.ruling(Irregularity.DICE_MALFUNCTION, Phase.DEALING).remedy == Remedy.CONTINUE


@pytest.mark.parametrize("irr", [Irregularity.WRONG_ORDER, Irregularity.WRONG_COUNT,
                                 Irregularity.CARD_TO_BOX_WITHOUT_BET,
                                 Irregularity.DEALING_ERROR])
def test_p5_wrong_order_or_count(irr):
    r = GAME.ruling(irr, Phase.DEALING)
    assert r.remedy == Remedy.ROUND_VOID and "P5" in r.article
    r = GAME.ruling(irr, Phase.DEALING, {"dealing_error": "rectify"})
    assert r.remedy == Remedy.RECTIFY


def test_p5_misdeal_and_uncorrectable_error_void_under_both_readings():
    for irr in (Irregularity.MISDEAL, Irregularity.DEALING_ERROR_UNCORRECTABLE):
        for reading in ("round_void", "rectify"):
            assert GAME.ruling(irr, Phase.DEALING,
                               {"dealing_error": reading}).remedy == Remedy.ROUND_VOID


def test_no_board_in_pan_9():
    with pytest.raises(RuleError, match="not an irregularity of Super Pan 9"):
        GAME.ruling(Irregularity.BOARD_CARD_EXPOSED, Phase.DEALING)


def test_every_ruling_cites_the_regulation():
    keys = ("machine_failure", "dice_malfunction", "dealing_error", "banker_card_exposed")
    choices = [dict(zip(keys, combo)) for combo in itertools.product(
        *[READINGS[k] for k in keys])]
    for irr, phase, chosen in itertools.product(Irregularity, Phase, choices):
        try:
            r = GAME.ruling(irr, phase, chosen)
        except RuleError:
            assert irr in (Irregularity.BOARD_CARD_EXPOSED, Irregularity.DIE_NOT_FLAT,
                           Irregularity.DIE_OUT_OF_CUP)
            continue
        assert r.article.startswith("261/96/M ") and r.reason
        # a reading only ever changes what the text leaves open: art. 2(4) and art. 4 stand
        if irr in (Irregularity.DIE_NOT_FLAT, Irregularity.DIE_OUT_OF_CUP):
            assert r.remedy == Remedy.RESHAKE
        if irr == Irregularity.PLAYER_CARD_EXPOSED:
            assert r.remedy == Remedy.CONTINUE
    with pytest.raises(RuleError, match="unknown irregularity"):
        GAME.ruling("dropped_chip", Phase.DEALING)


# === art. 5(6): the banker opens last =======================================================

def test_art_5_6_banker_reveals_after_every_seat():
    assert pan9.reveal_order(3, {1, 3, 4, 5}, 4) == [3, 1, 5, 4]
    assert pan9.reveal_order(4, {1, 3, 4, 5}, 4) == [3, 1, 5, 4]
    # What the table asks: the order from the round's own plan request. Seats in play 1, 3,
    # 5 and the banker's 4; counted counter-clockwise from the banker (4, 3, 1, 5), a total
    # of 4 lands on seat 5 (P1b: the banker is one), which is dealt first.
    req = PlanRequest(boxes=(1, 3, 5), mode=Mode.SHOE, layout_boxes=8, banker=4,
                      dice=(1, 1, 1, 1))
    assert GAME.reveal_order(req) == [box(5), box(3), box(1), box(4)]
    # a total of 5 gives the banker the first cards: he still opens last
    req = PlanRequest(boxes=(1, 3, 5), mode=Mode.SHOE, layout_boxes=8, banker=4,
                      dice=(1, 1, 1, 2))
    assert GAME.reveal_order(req) == [box(3), box(1), box(5), box(4)]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
           st.just(n), st.integers(1, n), st.sets(st.integers(1, n), min_size=1),
           st.lists(st.integers(1, 6), min_size=4, max_size=4), st.integers(-6, 6))),
       st.sampled_from(list(Mode)))
def test_art_5_6_every_seat_dealt_lays_down_its_cards_in_dealing_order_the_banker_last(
        drawn, mode):
    layout, banker, seats, dice, adjust = drawn
    assume(seats - {banker})
    req = PlanRequest(boxes=tuple(sorted(seats)), mode=mode, layout_boxes=layout, banker=banker,
                      dice=tuple(dice), adjust=adjust)
    dealt = list(dict.fromkeys(d.recipient for d in GAME.dealing_plan(req)))
    order = GAME.reveal_order(req)
    assert order[-1] == box(banker)
    assert order[:-1] == [r for r in dealt if r != box(banker)]


# === art. 6-8: values and ranking ===========================================================

def test_art_6_1_card_values_and_order():
    values = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
              "T": 0, "J": 0, "Q": 0, "K": 0}
    for rank, v in values.items():
        assert pan9.card_points(Card.parse(rank + "s")) == v
    order = [pan9.card_order(Card.parse(r + "h")) for r in "KQJT98765432A"]
    assert order == sorted(order, reverse=True) and len(set(order)) == 13
    # suits do not count
    assert pan9.card_order(Card.parse("Kd")) == pan9.card_order(Card.parse("Ks"))


@pytest.mark.parametrize("cards,points", [("Kh 9s", 9), ("7c 8d", 5), ("4s 6h", 0),
                                          ("As Ah", 2), ("Ts Jh", 0), ("9c 9d", 8)])
def test_art_6_2_two_card_total_modulo_ten(cards, points):
    assert pan9.hand_points(C(cards)) == points


def test_art_7_1_higher_total_wins():
    assert pan9.seat_wins(C("2s 6h"), C("Ks 7h"))      # 8 against 7
    assert not pan9.seat_wins(C("Ks 7h"), C("2s 6h"))


@pytest.mark.parametrize("ep", ["highest_card", "each_card"])
def test_art_7_2_equal_points_higher_card_wins(ep):
    # 9 points each: K beats 10 as the highest card
    assert pan9.seat_wins(C("Kh 9s"), C("Td 9c"), ep)
    assert not pan9.seat_wins(C("Td 9c"), C("Kh 9s"), ep)
    # 5 points each: 9+6 (highest card 9) beats 7+8 (highest card 8)
    assert pan9.seat_wins(C("6h 9h"), C("7s 8s"), ep)
    assert not pan9.seat_wins(C("7s 8s"), C("6h 9h"), ep)


@pytest.mark.parametrize("ep", ["highest_card", "each_card"])
def test_art_8_full_tie_the_banker_wins(ep):
    assert not pan9.seat_wins(C("Ks 9s"), C("Kh 9h"), ep)
    assert not pan9.seat_wins(C("Kh 9h"), C("Ks 9s"), ep)


def test_p2_highest_card_against_each_card():
    # 0 points each, highest card K each; the second cards J and 10 decide only card by card
    seat, banker = C("Ks Js"), C("Kh Th")
    assert not pan9.seat_wins(seat, banker, "highest_card")   # art. 8: banker
    assert pan9.seat_wins(seat, banker, "each_card")
    with pytest.raises(RuleError, match="highest_card or each_card"):
        pan9.hand_key(seat, "suits")


# independent reference: the articles' words, written from the text with strings
REF_VALUE = dict(zip("A23456789TJQK", [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]))
REF_ORDER = "A23456789TJQK"   # art. 6(1) read from the lowest


def ref_seat_wins(seat, banker, ep):
    def pts(h):
        return (REF_VALUE[str(h[0])[0]] + REF_VALUE[str(h[1])[0]]) % 10
    if pts(seat) != pts(banker):
        return pts(seat) > pts(banker)
    s = sorted((REF_ORDER.index(str(c)[0]) for c in seat), reverse=True)
    b = sorted((REF_ORDER.index(str(c)[0]) for c in banker), reverse=True)
    if ep == "highest_card":
        s, b = s[:1], b[:1]
    for x, y in zip(s, b):
        if x != y:
            return x > y
    return False  # art. 8


four_cards = st.lists(st.integers(0, 51), min_size=4, max_size=4, unique=True).map(
    lambda codes: [Card.from_code(c) for c in codes])


@given(four_cards, st.sampled_from(["highest_card", "each_card"]))
def test_ranking_agrees_with_the_reference(cards, ep):
    seat, banker = cards[:2], cards[2:]
    assert pan9.seat_wins(seat, banker, ep) == ref_seat_wins(seat, banker, ep)


@given(four_cards, st.sampled_from(["highest_card", "each_card"]))
def test_ranking_is_antisymmetric_and_ties_go_to_the_banker(cards, ep):
    a, b = cards[:2], cards[2:]
    assert pan9.compare_hands(a, b, ep) == -pan9.compare_hands(b, a, ep)
    assert not (pan9.seat_wins(a, b, ep) and pan9.seat_wins(b, a, ep))
    if pan9.compare_hands(a, b, ep) == 0:
        assert not pan9.seat_wins(a, b, ep) and not pan9.seat_wins(b, a, ep)


@pytest.mark.parametrize("ep", ["highest_card", "each_card"])
def test_ranking_over_all_1326_hands_matches_the_reference_order(ep):
    """Every pair of hands compared, through the order classes: the engine's key classes must
    map one to one and in order onto the reference's."""
    hands = list(itertools.combinations(full_deck(), 2))

    def ref_key(h):
        pts = (REF_VALUE[str(h[0])[0]] + REF_VALUE[str(h[1])[0]]) % 10
        cards = sorted((REF_ORDER.index(str(c)[0]) for c in h), reverse=True)
        return (pts, *(cards[:1] if ep == "highest_card" else cards))

    pairs = {(pan9.hand_key(h, ep), ref_key(h)) for h in hands}
    engine = sorted({e for e, _ in pairs})
    ref = sorted({r for _, r in pairs})
    assert len(pairs) == len(engine) == len(ref)
    mapping = dict(pairs)
    assert [mapping[e] for e in engine] == ref


# === settlement (art. 2(3), 2(6), 3(2), 5(3)-(5), 7-9) =======================================

def round_doc(seats, *, banker=None, first_seat=None, dice=None, co=None, **interp):
    doc = {"game": "super-pan-9",
           "banker": banker or {"seat": 4, "player": "Ana", "capital": 1000,
                                "cards": ["Kd", "5s"]},
           "seats": seats, "interpretations": interp}
    if first_seat is not None:
        doc["first_seat"] = first_seat
    if dice is not None:
        doc["dice"] = dice
    if co is not None:
        doc["co_bankers"] = co
    return doc


def seat(n, cards, *bets):
    return {"seat": n, "cards": cards.split(), "bets": [{"player": p, "amount": a}
                                                      for p, a in bets]}


def nets(settlement):
    return [(w.box, w.player, w.outcome, w.net) for w in settlement.wagers]


def bank(settlement, role="banker"):
    return [row for row in settlement.extra["bank"] if row["role"] == role]


def conserved(s):
    return (sum(w.net for w in s.wagers) + s.extra["bank_net"] + s.house_net) == 0


BASIC = [seat(1, "9h Ts", ("Bo", 100)),      # 9 points beats the banker's 5
         seat(3, "2c 2d", ("Cy", 200))]      # 4 points loses


def test_settle_basic_round_with_commission_on_every_win():
    s = GAME.settle(round_doc(BASIC, first_seat=3))
    # Bo wins 100, pays 5 % = 5; Cy loses 200; bank +100 pays 5; house 10
    assert nets(s) == [(3, "Cy", "lose", -200), (1, "Bo", "win", 95)]
    b = bank(s)[0]
    assert (b["won"], b["commission"], b["net"]) == (100, 5, 95)
    assert s.commission == 10 and s.house_net == 10 and conserved(s)


def test_p7_commission_players_only_and_bank_only():
    s = GAME.settle(round_doc(BASIC, first_seat=3, commission_on="players_only"))
    assert nets(s)[1][3] == 95 and bank(s)[0]["net"] == 100 and s.house_net == 5
    s = GAME.settle(round_doc(BASIC, first_seat=3, commission_on="bank_only"))
    assert nets(s)[1][3] == 100 and bank(s)[0]["net"] == 95 and s.house_net == 5
    assert conserved(s)


@pytest.mark.parametrize("stake,floor,half_up,ceil", [
    (30, 1, 2, 2),     # 1.5
    (10, 0, 1, 1),     # 0.5
    (21, 1, 1, 2),     # 1.05
    (39, 1, 2, 2),     # 1.95
    (100, 5, 5, 5),    # exact
    (1, 0, 0, 1)])     # 0.05
def test_p8_commission_rounding(stake, floor, half_up, ceil):
    for rounding, fee in (("floor", floor), ("half_up", half_up), ("ceil", ceil)):
        assert pan9.commission_on(stake, rounding) == fee
        s = GAME.settle(round_doc([seat(1, "9h Ts", ("Bo", stake))], first_seat=1,
                                  commission_rounding=rounding))
        assert s.wagers[0].net == stake - fee and s.commission == fee and conserved(s)


def test_art_3_2_several_players_on_a_seat_and_a_player_on_several_seats():
    # art. 2(6): each bet is settled by the seat where it lies
    s = GAME.settle(round_doc([seat(1, "9h Ts", ("Bo", 100), ("Cy", 40)),
                               seat(3, "2c 2d", ("Bo", 60), ("Cy", 20))], first_seat=1))
    assert nets(s) == [(1, "Bo", "win", 95), (1, "Cy", "win", 38),
                       (3, "Bo", "lose", -60), (3, "Cy", "lose", -20)]
    assert conserved(s)


def test_art_8_full_tie_settles_for_the_banker():
    s = GAME.settle(round_doc([seat(1, "Kh 5h", ("Bo", 100))], first_seat=1))
    assert nets(s) == [(1, "Bo", "lose", -100)]


def test_p2_in_settlement():
    banker = {"seat": 4, "capital": 1000, "cards": ["Kd", "Td"]}
    doc = round_doc([seat(1, "Kh Jh", ("Bo", 100))], banker=banker, first_seat=1)
    assert nets(GAME.settle(doc))[0][2] == "lose"
    doc["interpretations"] = {"equal_points": "each_card"}
    assert nets(GAME.settle(doc))[0][2] == "win"


# art. 5(3) and P9 -----------------------------------------------------------------------

WIN, LOSE = "9h Ts", "2c 2d"   # against the banker's Kd 5s
CAP100 = {"seat": 4, "player": "Ana", "capital": 100, "cards": ["Kd", "5s"]}


def capped(first, reading, seats):
    return GAME.settle(round_doc(seats, banker=CAP100, first_seat=first, capital_cap=reading,
                                 commission_on="bank_only", commission_rounding="floor"))


def test_art_5_3_loss_capped_in_order_of_settlement():
    seats = [seat(3, WIN, ("Bo", 80)), seat(2, "9c Td", ("Cy", 80)), seat(1, LOSE, ("Di", 50))]
    # order 3 2 1: pay 80 (20 left), pay only 20 (60 returned), collect 50: banker -50
    s = capped(3, "in_order", seats)
    assert nets(s) == [(3, "Bo", "win", 80), (2, "Cy", "win", 20), (1, "Di", "lose", -50)]
    assert bank(s)[0]["won"] == -50 and conserved(s)
    # the round's net: pays up to 50 + 100 = 150 in order: 80 then 70; banker -100
    s = capped(3, "net", seats)
    assert nets(s) == [(3, "Bo", "win", 80), (2, "Cy", "win", 70), (1, "Di", "lose", -50)]
    assert bank(s)[0]["won"] == -100 and conserved(s)


def test_art_5_3_win_capped():
    seats = [seat(3, LOSE, ("Bo", 80)), seat(2, "Ah 3h", ("Cy", 80)), seat(1, WIN, ("Di", 50))]
    # in order: collect 80, collect 20 (60 returned: the bank has won its capital), pay 50
    s = capped(3, "in_order", seats)
    assert nets(s) == [(3, "Bo", "lose", -80), (2, "Cy", "lose", -20), (1, "Di", "win", 50)]
    assert bank(s)[0]["won"] == 50
    # net: collects up to 50 + 100 = 150: 80 then 70, pays 50: banker +100
    s = capped(3, "net", seats)
    assert nets(s) == [(3, "Bo", "lose", -80), (2, "Cy", "lose", -70), (1, "Di", "win", 50)]
    assert bank(s)[0]["won"] == 100 and bank(s)[0]["net"] == 95 and conserved(s)


def test_art_2_3_settlement_starts_at_the_first_seat_dealt():
    seats = [seat(3, WIN, ("Bo", 80)), seat(2, "9c Td", ("Cy", 80)), seat(1, LOSE, ("Di", 50))]
    # in play 1 2 3 and banker 4; first seat 1: order 1 3 2 (4 skipped)
    s = capped(1, "in_order", seats)
    assert [w.box for w in s.wagers] == [1, 3, 2]
    # collect 50 (banker +50), pay 80 (-30), pay 70 of 80 (-100)
    assert nets(s) == [(1, "Di", "lose", -50), (3, "Bo", "win", 80), (2, "Cy", "win", 70)]
    assert s.extra["settlement_order"] == [1, 3, 2]


def test_bet_beyond_an_exhausted_bank_is_returned():
    seats = [seat(3, WIN, ("Bo", 100)), seat(2, "9c Td", ("Cy", 30))]
    s = capped(3, "in_order", seats)
    assert nets(s) == [(3, "Bo", "win", 100), (2, "Cy", "void", 0)]
    assert "returned" in s.wagers[1].note


def test_dice_give_the_first_seat_for_settlement():
    seats = [seat(3, WIN, ("Bo", 80)), seat(2, "9c Td", ("Cy", 80)), seat(1, LOSE, ("Di", 50))]
    # in play 1 2 3 4, banker one: total 5 -> 4 3 2 1 4 -> banker; order 3 2 1
    doc = round_doc(seats, banker=CAP100, dice=[1, 1, 1, 2], capital_cap="in_order")
    assert GAME.settle(doc).extra["first_seat"] == 4
    assert [w.box for w in GAME.settle(doc).wagers] == [3, 2, 1]
    doc["dice"] = [1, 1, 1, 1]        # total 4 -> seat 1: order 1 3 2
    assert [w.box for w in GAME.settle(doc).wagers] == [1, 3, 2]
    doc["first_seat"] = 2
    with pytest.raises(RuleError, match="disagrees with the dice"):
        GAME.settle(doc)


# art. 5(5) co-banking ---------------------------------------------------------------------

def test_art_5_5_co_bankers_win_in_order_house_last():
    seats = [seat(1, LOSE, ("Bo", 200)), seat(2, "Ah 3h", ("Cy", 150))]
    co = [{"house": True, "capital": 500}, {"player": "Dee", "seat": 6, "capital": 100}]
    s = GAME.settle(round_doc(seats, banker=CAP100, first_seat=2, co=co))
    # bank wins 350: banker 100, Dee 100, house 150; commission 5 + 5 on the players' shares
    rows = [(r["name"], r["won"], r["commission"], r["net"]) for r in s.extra["bank"]]
    assert rows == [("banker", 100, 5, 95), ("Dee", 100, 5, 95), ("house", 150, 0, 150)]
    assert s.commission == 10 and s.house_net == 160 and s.extra["bank_net"] == 190
    assert conserved(s)


def test_art_5_5_co_bankers_pay_in_order_house_last():
    seats = [seat(1, WIN, ("Bo", 200)), seat(2, "9c Td", ("Cy", 50))]
    co = [{"player": "Dee", "seat": 6, "capital": 100}, {"house": True, "capital": 500}]
    s = GAME.settle(round_doc(seats, banker=CAP100, first_seat=2, co=co))
    rows = [(r["name"], r["won"]) for r in s.extra["bank"]]
    assert rows == [("banker", -100), ("Dee", -100), ("house", -50)]
    assert nets(s) == [(2, "Cy", "win", 48), (1, "Bo", "win", 190)]   # 50-2, 200-10
    assert s.house_net == -50 + 12 and conserved(s)


def test_p10_co_banker_order_readings():
    seats = [seat(1, LOSE, ("Bo", 150))]
    co = [{"player": "Eve", "seat": 2, "capital": 100}, {"player": "Dee", "seat": 3,
                                                          "capital": 100}]
    s = GAME.settle(round_doc(seats, banker=CAP100, first_seat=1, co=co))
    assert [(r["name"], r["won"]) for r in s.extra["bank"]] == [("banker", 100), ("Eve", 50),
                                                                ("Dee", 0)]
    s = GAME.settle(round_doc(seats, banker=CAP100, first_seat=1, co=co,
                              co_banker_order="counter_clockwise"))
    # counter-clockwise from the banker's seat 4: seat 3 (Dee) before seat 2 (Eve)
    assert [(r["name"], r["won"]) for r in s.extra["bank"]] == [("banker", 100), ("Dee", 50),
                                                                ("Eve", 0)]


def test_art_5_5_a_co_banker_may_not_bet_on_other_seats():
    co = [{"player": "Bo", "seat": 6, "capital": 100}]
    with pytest.raises(RuleError, match=r"Bo co-banks and also bets on seat 1.*art\. 5\(5\)"):
        GAME.settle(round_doc(BASIC, first_seat=3, co=co))


# bad input ----------------------------------------------------------------------------------

def bad(doc, msg):
    with pytest.raises(RuleError, match=msg):
        GAME.settle(doc)


def test_bad_cards_are_named():
    bad(round_doc([seat(1, "9h Zz", ("Bo", 1))], first_seat=1), 'unknown card "Zz"')
    bad(round_doc([seat(1, "9h Kd", ("Bo", 1))], first_seat=1), "duplicate card Kd")
    bad(round_doc([seat(1, "9h", ("Bo", 1))], first_seat=1), r"seat 1's hand has 1 cards")
    bad(round_doc([seat(1, "9h 8h 7h", ("Bo", 1))], first_seat=1), "needs exactly 2")
    banker = {"seat": 4, "capital": 100, "cards": ["Kd"]}
    bad(round_doc(BASIC, banker=banker, first_seat=1), "banker's hand")


def test_bad_seats_and_bets_are_named():
    bad(round_doc([seat(9, WIN, ("Bo", 1))], first_seat=1), "seat 9 does not exist")
    bad(round_doc([seat(4, WIN, ("Bo", 1))], first_seat=1), r"seat 4 is the banker's")
    bad(round_doc([seat(1, WIN, ("Bo", 0))], first_seat=1), "more than 0")
    bad(round_doc([seat(1, WIN, ("Bo", 2.5))], first_seat=1), "whole number")
    bad(round_doc([seat(1, WIN)], first_seat=1), "seat 1 has no bets")
    # one bet given as an object, not a list of one: the shape is named, not "no bets"
    bad(round_doc([dict(seat(1, WIN), bets={"player": "Bo", "amount": 5})], first_seat=1),
        r'seat 1: "bets" must be a list of bets, got \{"player": "Bo", "amount": 5\}')
    bad(round_doc([seat(1, WIN, ("Bo", 5)), seat(1, LOSE, ("Cy", 5))], first_seat=1),
        "listed twice")
    bad(round_doc([seat(1, WIN, ("Ana", 5))], first_seat=1), "banker Ana bets on seat 1")
    bad(round_doc([], first_seat=1), "needs \"seats\"")


@pytest.mark.parametrize("capital,msg", [(None, "no capital"), (-1, "more than 0"),
                                         ("1000", "whole number")])
def test_banker_capital_missing_or_negative(capital, msg):
    banker = {"seat": 4, "cards": ["Kd", "5s"]}
    if capital is not None:
        banker["capital"] = capital
    bad(round_doc(BASIC, banker=banker, first_seat=1), msg)


def test_bad_dice_and_counting_are_named():
    bad(round_doc(BASIC, dice=[1, 2, 3, 9]), "cannot show 9")
    bad(round_doc(BASIC), "needs \"dice\"")
    bad(round_doc(BASIC, first_seat=5), "first_seat 5 is not in play")
    bad(round_doc(BASIC, first_seat=1, commission_on="nobody"), 'cannot be "nobody"')
    bad(round_doc(BASIC, first_seat=1, colour="red"), 'no interpretation "colour"')
    bad(round_doc(BASIC, first_seat=1, co=[{"capital": 5}]), "needs a \"player\"")
    bad(round_doc(BASIC, first_seat=1, co=[{"player": "Dee", "capital": -5}]), "more than 0")


# conservation ---------------------------------------------------------------------------

READINGS = {i.key: i.readings for i in GAME.interpretations}


@st.composite
def rounds(draw):
    layout = draw(st.integers(2, 12))
    banker_seat = draw(st.integers(1, layout))
    others = [s for s in range(1, layout + 1) if s != banker_seat]
    in_play = draw(st.lists(st.sampled_from(others), min_size=1, unique=True))
    codes = draw(st.lists(st.integers(0, 51), min_size=2 * len(in_play) + 2,
                          max_size=2 * len(in_play) + 2, unique=True))
    cards = [str(Card.from_code(c)) for c in codes]
    players = ["P1", "P2", "P3", "P4"]
    seats = [{"seat": s, "cards": cards[2 * i + 2: 2 * i + 4],
              "bets": [{"player": draw(st.sampled_from(players)),
                        "amount": draw(st.integers(1, 500))}
                       for _ in range(draw(st.integers(1, 3)))]}
             for i, s in enumerate(in_play)]
    co = []
    if draw(st.booleans()):
        co.append({"player": "Q", "seat": draw(st.sampled_from(others)),
                   "capital": draw(st.integers(1, 300))})
    if draw(st.booleans()):
        co.append({"house": True, "capital": draw(st.integers(1, 1000))})
    interp = {k: draw(st.sampled_from(v)) for k, v in READINGS.items()}
    return {"game": "super-pan-9", "layout_boxes": layout, "interpretations": interp,
            "banker": {"seat": banker_seat, "player": "B", "capital": draw(st.integers(1, 800)),
                       "cards": cards[:2]},
            "seats": seats, "co_bankers": co,
            "dice": [draw(st.integers(1, 6)) for _ in range(4)],
            "adjust": draw(st.integers(-3, 10))}


@settings(max_examples=300)
@given(rounds())
def test_chips_are_conserved_and_no_share_exceeds_its_capital(doc):
    s = GAME.settle(doc)
    assert conserved(s)
    for row in s.extra["bank"]:
        assert -row["capital"] <= row["won"] <= row["capital"]
        assert 0 <= row["commission"] <= max(row["won"], 0)
    banker_cards = parse_cards(doc["banker"]["cards"])
    ep = s.interpretations["equal_points"]
    for w in s.wagers:
        won = pan9.seat_wins(parse_cards(s.hands[f"seat {w.box}"]["cards"]), banker_cards, ep)
        assert (0 <= w.net <= w.stake) if won else (-w.stake <= w.net <= 0)
    assert s.commission >= 0 and json.dumps(s.to_json())


@settings(max_examples=100)
@given(rounds())
def test_a_bank_large_enough_settles_every_bet_in_full_under_both_readings(doc):
    doc["banker"]["capital"] = 10 ** 6
    doc["co_bankers"] = []
    results = []
    for reading in ("in_order", "net"):
        doc["interpretations"]["capital_cap"] = reading
        s = GAME.settle(doc)
        assert all(w.outcome in ("win", "lose") for w in s.wagers)
        assert all(abs(w.net) <= w.stake and (w.outcome == "lose") == (w.net < 0)
                   for w in s.wagers)
        results.append(nets(s))
    assert results[0] == results[1]


# === odds ===================================================================================

def slow_counts(ep):
    """Every seat hand against every banker hand from the other 50 cards, card by card."""
    deck = full_deck()
    hands = list(itertools.combinations(range(52), 2))
    key = {h: tuple(_ref_key(deck[h[0]], deck[h[1]], ep)) for h in hands}
    wins = total = 0
    for s in hands:
        ks = key[s]
        for b in hands:
            if s[0] in b or s[1] in b:
                continue
            total += 1
            wins += ks > key[b]
    return wins, total


def _ref_key(a, b, ep):
    pts = (REF_VALUE[str(a)[0]] + REF_VALUE[str(b)[0]]) % 10
    cards = sorted((REF_ORDER.index(str(a)[0]), REF_ORDER.index(str(b)[0])), reverse=True)
    return (pts, *(cards[:1] if ep == "highest_card" else cards))


@pytest.mark.parametrize("ep", ["highest_card", "each_card"])
def test_odds_agree_with_a_card_by_card_enumeration(ep):
    wins, losses, total = pan9.seat_outcome_counts(ep)
    assert (wins, total) == slow_counts(ep)
    assert total == 1326 * 1225


@pytest.mark.parametrize("ep", ["highest_card", "each_card"])
def test_odds_exchangeability_seat_wins_as_often_as_it_loses_outright(ep):
    """Seat and banker hands are drawn alike, so P(seat ranks above) = P(banker ranks above);
    the banker's edge without commission is exactly P(equal rank), counted here apart."""
    wins, losses, total = pan9.seat_outcome_counts(ep)
    assert total == 1326 * 1225
    hands = list(itertools.combinations(full_deck(), 2))
    classes = {}
    for h in hands:
        classes.setdefault(_ref_key(h[0], h[1], ep), []).append(set(h))
    ties = sum(1 for group in classes.values() for a in group for b in group if not a & b)
    assert wins * 2 + ties == total and losses == wins + ties
    odds = GAME.odds({"equal_points": ep, "commission_on": "bank_only"})
    assert odds["bets"]["seat"]["house_edge_exact"] == str(Fraction(ties, total))


def test_odds_with_commission_on_the_seats_win():
    wins, losses, total = pan9.seat_outcome_counts("highest_card")
    odds = GAME.odds()
    expected = Fraction(losses, total) - Fraction(wins, total) * Fraction(95, 100)
    assert odds["bets"]["seat"]["house_edge_exact"] == str(expected)
    assert odds["bets"]["seat"]["house_edge"] == pytest.approx(float(expected))
    assert odds["game"] == "super-pan-9" and odds["interpretations"]["commission_on"] == \
        "all_winners"
    assert 0 < float(expected) < 0.05
    # the seat pays the same commission when only players pay; none when only the bank pays
    players = GAME.odds({"commission_on": "players_only"})["bets"]["seat"]
    assert players["house_edge_exact"] == str(expected)
    bank_only = GAME.odds({"commission_on": "bank_only"})["bets"]["seat"]
    assert bank_only["house_edge_exact"] == str(Fraction(losses - wins, total))


def test_odds_reports_progress():
    seen = []
    GAME.odds(progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (91, 91) and len(seen) == 91


# === the command line: docs/settle.md examples ===============================================

def run_cli(argv, stdin, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def settle_examples():
    """(input, expected subset) pairs from the Super Pan 9 section of docs/settle.md."""
    from pathlib import Path
    text = Path(__file__).resolve().parent.parent.joinpath("docs", "settle.md").read_text()
    section = text.split("## Super Pan 9", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```json")[1:]]
    return [(json.loads(blocks[i]), json.loads(blocks[i + 1])) for i in range(0, len(blocks), 2)]


def contains(actual, expected):
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and contains(actual[k], v)
                                                for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            contains(a, e) for a, e in zip(actual, expected))
    return actual == expected


def test_settle_examples_of_the_docs_through_the_cli(monkeypatch, capsys):
    examples = settle_examples()
    assert len(examples) >= 3
    for doc, expected in examples:
        code, out, err = run_cli(["rules", "settle", "--json"], json.dumps(doc), monkeypatch,
                                 capsys)
        assert code == 0, err
        assert contains(json.loads(out), expected), out


@pytest.mark.parametrize("doc,msg", [
    ({"game": "super-pan-9", "banker": {"seat": 4, "capital": 10, "cards": ["Kd", "5s"]},
      "first_seat": 1, "seats": [{"seat": 1, "cards": ["Kd", "2s"],
                                  "bets": [{"amount": 5}]}]}, "duplicate card Kd"),
    ({"game": "super-pan-9", "banker": {"seat": 4, "cards": ["Kd", "5s"]}, "first_seat": 1,
      "seats": [{"seat": 1, "cards": ["Ad", "2s"], "bets": [{"amount": 5}]}]}, "no capital")])
def test_cli_bad_round_is_one_clear_line(doc, msg, monkeypatch, capsys):
    code, out, err = run_cli(["rules", "settle", "--json"], json.dumps(doc), monkeypatch, capsys)
    assert code == 2 and msg in err and "Traceback" not in err and out == ""


def test_cli_plan(monkeypatch, capsys):
    code, out, err = run_cli(["rules", "plan", "super-pan-9", "--boxes", "1,3,5", "--banker", "4",
                              "--dice", "1,1,2,2", "--json"], "", monkeypatch, capsys)
    assert code == 0, err
    assert [s["box"] for s in json.loads(out)["steps"]] == [3, 3, 1, 1, 5, 5, 4, 4]
    code, out, err = run_cli(["rules", "plan", "super-pan-9", "--boxes", "1,3,5", "--banker", "4",
                              "--dice", "1,1,2,9"], "", monkeypatch, capsys)
    assert code == 2 and "cannot show 9" in err


# === the Portaria, art. 2(1), 3(2), and the documents =======================================

def test_portaria_261_96_M_approves_the_regulation_and_nothing_older():
    # art. 1 of the Portaria: the regulation in its annex is the game; art. 2: 188/91/M and
    # 73/92/M are revoked, so every answer cites 261/96/M alone
    assert GAME.game_id == "super-pan-9" and GAME.regulation == "261/96/M"
    assert all(i.article.startswith("261/96/M") for i in GAME.interpretations)


def test_art_2_1_every_round_has_a_whole_deck_of_its_own():
    doc = round_doc(BASIC, first_seat=3)
    first, second = GAME.settle(doc), GAME.settle(doc)   # the same cards again: a new deck
    assert nets(first) == nets(second)
    doc["seats"][1]["cards"] = ["9h", "2d"]              # but within one round, once each
    bad(doc, "duplicate card 9h")


def test_art_3_2_only_seats_hold_cards():
    steps = plan([1, 3, 5], banker=4, dice=(3, 5, 1, 6))
    assert {d.recipient.kind for d in steps} == {"box"}   # never the croupier, board or burn


def test_every_interpretation_is_registered_and_documented():
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    register = root.joinpath("docs", "interpretations.md").read_text()
    section = register.split("## Super Pan 9", 1)[1].split("\n## ", 1)[0]
    assert set(pan9.IDS) == {i.key for i in GAME.interpretations}
    for i in GAME.interpretations:
        assert i.key.isidentifier() and i.key == i.key.lower()
        assert i.default == i.readings[0] and len(i.readings) >= 2
        assert f"`{i.key}`" in section and f"{pan9.IDS[i.key]} " in section
        for reading in i.readings:
            assert f"`{reading}`" in section, (i.key, reading)


def test_traceability_cites_only_tests_that_exist():
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    trace = root.joinpath("docs", "regulations", "super-pan-9.md").read_text()
    cited = set(re.findall(r"(?<![/\w])test_\w+(?![\w.])", trace))
    here = {name for name in globals() if name.startswith("test_")}
    elsewhere = {name for f in ("test_pan9_bank.py", "test_table_machine.py",
                                "test_table_pan9_co_bank.py", "test_api.py",
                                "test_console_browser.py", "test_table_wrong_count.py",
                                "test_table_dealing.py", "test_config_pan9.py",
                                "test_pan9_audit.py", "test_pan9_audit_daemon.py",
                                "test_exposure_position.py",
                                "test_exposure_position_secrecy.py")
                 for name in re.findall(r"^def (test_\w+)", root.joinpath("tests", f)
                                        .read_text(), re.M)}
    assert cited and cited <= here | elsewhere, cited - here - elsewhere
    # every row of the table cites at least one test
    rows = [line for line in trace.splitlines() if line.startswith("| ") and "---" not in line
            and not line.startswith(("| art", "| point"))]
    assert rows and all("test_" in row for row in rows), [r for r in rows if "test_" not in r]


# === the round document refuses typos and names missing keys (docs/settle.md) ================

def _example(i):
    return copy.deepcopy(settle_examples()[i][0])


def _changed(i, change):
    doc = _example(i)
    change(doc)
    return doc


def _drop(obj, key):
    del obj[key]


@pytest.mark.parametrize("doc,msg", [
    # a typo is refused at every level, never ignored: "ajust" would move the first seat,
    # "co_banker" would drop the house's co-bank (house_net 3 instead of 203)
    (_changed(1, lambda d: d.update(ajust=d.pop("adjust"))),
     r"the round has unknown key\(s\) ajust; the keys are: .*adjust"),
    (_changed(2, lambda d: d.update(co_banker=d.pop("co_bankers"))),
     r"the round has unknown key\(s\) co_banker"),
    (_changed(0, lambda d: d["banker"].update(capitol=5)), r'"banker" has unknown key\(s\) capitol'),
    (_changed(0, lambda d: d["seats"][1].update(bet=[])), r"seat entry 2 has unknown key\(s\) bet"),
    (_changed(0, lambda d: d["seats"][0]["bets"][1].update(amont=5)),
     r"a bet on seat 1 has unknown key\(s\) amont"),
    (_changed(2, lambda d: d["co_bankers"][0].update(capitl=5)),
     r"co-banker 1 has unknown key\(s\) capitl"),
    (_changed(2, lambda d: d["co_bankers"][1].update(seat=7)),
     r"co-banker 2 \(the house\) has unknown key\(s\) seat"),
    # "co_bankers" is a list or absent; {} and null are not "none"
    (_changed(0, lambda d: d.update(co_bankers={})), r'"co_bankers" must be a list, got \{\}'),
    (_changed(0, lambda d: d.update(co_bankers=None)), r'"co_bankers" must be a list, got null'),
    (_changed(2, lambda d: d["co_bankers"][1].update(house="true")),
     r'co-banker 2: "house" must be true or false'),
    # a missing key is named with the way out, not echoed as None
    (_changed(0, lambda d: _drop(d["banker"], "seat")), r'"banker" has no "seat"; give "seat": N'),
    (_changed(0, lambda d: _drop(d["banker"], "cards")), r'"banker" has no "cards"; give'),
    (_changed(0, lambda d: _drop(d["seats"][0], "seat")), r'seat entry 1 has no "seat"; give'),
    (_changed(0, lambda d: _drop(d["seats"][0], "cards")), r'seat 1 has no "cards"; give'),
    (_changed(0, lambda d: _drop(d["seats"][0]["bets"][0], "amount")),
     r'a bet on seat 1 has no "amount"; give "amount": N'),
    (_changed(0, lambda d: d.update(adjust=None)), r'"adjust" is null; give the declared'),
])
def test_cli_unknown_and_missing_keys_are_refused(doc, msg, monkeypatch, capsys):
    code, out, err = run_cli(["rules", "settle", "--json"], json.dumps(doc), monkeypatch, capsys)
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert re.search(msg, err), err


def test_cli_co_bankers_may_be_left_out_or_empty(monkeypatch, capsys):
    doc = _example(0)
    assert "co_bankers" not in doc
    outs = []
    for d in (doc, dict(doc, co_bankers=[])):
        code, out, err = run_cli(["rules", "settle", "--json"], json.dumps(d), monkeypatch, capsys)
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0] == outs[1]
