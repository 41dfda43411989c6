"""The Hold'em betting engine against 11/2008 art. 5, 6, 7(2)-(3), 8, 11, 12 and 13.

Seat 1 is immediately left of the croupier; clockwise is increasing seat number."""
import copy

import pytest
from hypothesis import given, settings, strategies as st

from controller.rules.errors import RuleError
from controller.rules.holdem_betting import BettingRules, HandState, clockwise_after
from holdem_helpers import accepts


def hand(seats=(1, 2, 3, 4), stacks=None, button=1, sb=5, bb=10, structure="no-limit", **rules):
    stacks = stacks or {s: 1000 for s in seats}
    return HandState(seats, stacks, button, sb, bb, structure, BettingRules(**rules))


def snapshot(state):
    return copy.deepcopy({k: v for k, v in vars(state).items()})


def refused(state, seat, action, amount=None, match=None):
    before = snapshot(state)
    with pytest.raises(RuleError, match=match):
        state.act(seat, action, amount)
    assert snapshot(state) == before, "a refused action must change nothing"


def kinds(state):
    return {a.kind for a in state.legal_actions()}


def test_clockwise_is_increasing_seat_number_wrapping_round():
    assert clockwise_after([2, 5, 9], 5) == [9, 2, 5]
    assert clockwise_after([2, 5, 9], 9) == [2, 5, 9]
    assert clockwise_after([2, 5, 9], 6) == [9, 2, 5]    # from an empty seat


def test_art_5_blinds_first_and_second_left_of_the_button():
    h = hand(seats=(2, 5, 7, 9), button=7)
    assert h.blind_seats() == (9, 2)
    assert h.committed == {2: 10, 5: 0, 7: 0, 9: 5}
    assert [(a.seat, a.kind, a.added) for a in h.history] == [(9, "small_blind", 5),
                                                              (2, "big_blind", 10)]


def test_art_6_3_4_preflop_starts_left_of_the_blinds_and_big_blind_may_check_last():
    h = hand(seats=(2, 5, 7, 9), button=7)             # SB 9, BB 2
    assert h.to_act == 5
    h.act(5, "call")
    assert h.to_act == 7
    h.act(7, "call")
    h.act(9, "call")
    assert h.to_act == 2 and h.street == "preflop"     # the big blind decides last
    assert kinds(h) == {"fold", "check", "raise", "allin"}
    h.act(2, "check")
    assert h.street == "flop"


def test_big_blind_may_raise_with_its_option():
    h = hand()                                         # button 1: SB 2, BB 3, first 4
    for s in (4, 1, 2):
        h.act(s, "call")
    h.act(3, "raise", 30)
    assert h.street == "preflop" and h.to_act == 4


def test_art_6_5_7_2_8_2_later_rounds_start_left_of_the_button_and_button_is_last():
    h = hand(seats=(2, 5, 7, 9), button=7)
    for s in (5, 7, 9):
        h.act(s, "call")
    h.act(2, "check")
    for street in ("flop", "turn", "river"):
        assert h.street == street
        order = []
        while h.street == street:
            order.append(h.to_act)
            h.act(h.to_act, "check")
        assert order == [9, 2, 5, 7]                   # left of the button first, button last
    assert h.street == "showdown" and h.is_over and h.to_act is None


def test_folded_and_all_in_players_are_skipped():
    h = hand(stacks={1: 1000, 2: 1000, 3: 1000, 4: 40})
    h.act(4, "allin")
    h.act(1, "fold")
    h.act(2, "call")
    h.act(3, "call")
    assert h.street == "flop" and h.to_act == 2
    h.act(2, "check")
    h.act(3, "check")
    assert h.street == "turn" and h.to_act == 2


def test_art_7_3_after_the_flop_bet_check_fold():
    h = hand()
    for s in (4, 1, 2):
        h.act(s, "call")
    h.act(3, "check")
    assert kinds(h) == {"fold", "check", "bet", "allin"}
    refused(h, 2, "raise", 40, match="nobody has bet")
    refused(h, 2, "call", match="nothing to call")
    h.act(2, "bet", 40)
    assert kinds(h) == {"fold", "call", "raise", "allin"}
    refused(h, 3, "check", match="bet of 40 to call")
    refused(h, 3, "bet", 80, match="already a bet")


def test_art_13_fold_at_any_time_and_the_chips_stay_in_the_pot():
    h = hand()
    h.act(4, "raise", 50)
    h.act(1, "call")
    h.act(2, "fold")                                   # the small blind folds: its 5 stay
    assert h.committed[2] == 5 and 2 in h.folded
    h.act(3, "call")
    h.act(3, "fold")                                   # folding when a check is possible
    assert h.pot == 155 and h.contenders == [1, 4]


def test_everyone_folds_to_one_player_ends_the_hand():
    h = hand()
    for s in (4, 1, 2):
        h.act(s, "fold")
    assert h.is_over and h.won_uncontested and h.contenders == [3]
    refused(h, 3, "check", match="over")


def test_out_of_turn_unknown_action_and_chips_not_held_are_refused():
    h = hand(stacks={1: 1000, 2: 1000, 3: 1000, 4: 300})
    refused(h, 1, "call", match="out of turn: it is seat 4's turn")
    refused(h, 4, "shove", match='unknown action "shove"')
    refused(h, 4, "raise", 301, match="only 300 behind")
    refused(h, 4, "raise", None, match="needs an amount")
    refused(h, 4, "raise", "50", match="whole number")
    refused(h, "4", "call", match="must be a seat number")


def test_art_11_3_no_limit_minimum_bet_is_the_big_blind():
    h = hand()
    for s in (4, 1, 2):
        h.act(s, "call")
    h.act(3, "check")
    refused(h, 2, "bet", 9, match="minimum bet is the big blind")
    h.act(2, "bet", 10)


def test_art_12_1_raise_at_least_the_previous_bet_or_raise():
    h = hand()
    refused(h, 4, "raise", 19, match=r"below the minimum 20.*art\. 12\(1\)")
    h.act(4, "raise", 20)                              # raise of 10 = the big blind
    refused(h, 1, "raise", 29, match="below the minimum 30")
    h.act(1, "raise", 60)                              # a raise of 40
    refused(h, 2, "raise", 99, match="below the minimum 100")
    h.act(2, "raise", 100)
    assert h.current_bet == 100 and h.min_raise == 40


def test_no_limit_allows_any_number_of_raises():
    h = hand(stacks={s: 100000 for s in (1, 2, 3, 4)})
    level = 10
    for _ in range(8):
        level *= 2
        h.act(h.to_act, "raise", level)
    assert h.current_bet == 2560


def test_art_11_2_limit_literal_sizes_small_blind_then_big_blind():
    h = hand(structure="limit", sb=5, bb=10)           # H1 literal: 5, 5, 10, 10
    assert h.bet_size() == 5
    refused(h, 4, "raise", 20, match=r"exactly 15 .*art\. 11\(2\)")
    h.act(4, "raise", 15)
    for s in (1, 2, 3):
        h.act(s, "call")
    assert h.street == "flop" and h.bet_size() == 5
    h.act(2, "bet")                                    # no amount: the fixed size
    assert h.current_bet == 5
    for s in (3, 4, 1):
        h.act(s, "call")
    assert h.street == "turn" and h.bet_size() == 10
    refused(h, 2, "bet", 5, match="exactly 10")
    h.act(2, "bet", 10)
    for s in (3, 4, 1):
        h.act(s, "call")
    assert h.street == "river" and h.bet_size() == 10


def test_h1_big_blind_doubled_sizes():
    h = hand(structure="limit", sb=5, bb=10, limit_bet_sizes="big_blind_doubled")
    assert h.bet_size() == 10
    h.act(4, "raise", 20)
    for s in (1, 2, 3):
        h.act(s, "call")
    assert h.bet_size() == 10
    for s in (2, 3, 4, 1):
        h.act(s, "check")
    assert h.street == "turn" and h.bet_size() == 20


def test_art_12_2_limit_at_most_three_raises_per_round():
    h = hand(structure="limit")
    h.act(4, "raise")
    h.act(1, "raise")
    h.act(2, "raise")                                  # the third raise: 10 -> 25
    assert h.current_bet == 25
    assert "raise" not in kinds(h) and "allin" not in kinds(h)
    refused(h, 3, "raise", 30, match=r"three times .*art\. 12\(2\)")
    h.act(3, "call")
    # after the flop: a bet and three raises
    h.act(4, "call")
    h.act(1, "call")
    assert h.street == "flop"
    h.act(2, "bet")
    h.act(3, "raise")
    h.act(4, "raise")
    h.act(1, "raise")
    refused(h, 2, "raise", match="three times")


def test_art_12_4_heads_up_lifts_the_raise_cap():
    h = hand(structure="limit")                        # four players; two fold
    h.act(4, "fold")
    h.act(1, "fold")
    for _ in range(6):                                 # heads-up: raise after raise
        h.act(h.to_act, "raise")
    assert h.raises == 6
    # three players in the hand: the cap holds
    h3 = hand(seats=(1, 2, 3), structure="limit")
    h3.act(1, "raise"), h3.act(2, "raise"), h3.act(3, "raise")
    refused(h3, 1, "raise", match="three times")


def test_h5_amount_unlimited_heads_up_raises_any_amount_but_keeps_the_cap():
    h = hand(seats=(1, 2), structure="limit", heads_up_raises="amount_unlimited")
    # literal heads-up blinds: seat 2 small blind, seat 1 (button) big blind; seat 2 first
    assert h.blind_seats() == (2, 1) and h.to_act == 2
    h.act(2, "raise", 200)                             # far beyond the fixed size of 5
    refused(h, 1, "raise", 389, match="below the minimum 390")  # a full raise (12(1))
    h.act(1, "raise", 500)
    h.act(2, "raise", 800)
    refused(h, 1, "raise", 1000, match="three times")
    strict = hand(seats=(1, 2), structure="limit", heads_up_raises="cap_lifted")
    refused(strict, 2, "raise", 200, match="exactly 15")


def test_h4_heads_up_blinds_literal_and_button_small_blind():
    lit = hand(seats=(3, 8), button=3)
    assert lit.blind_seats() == (8, 3)                 # art. 5 word for word
    assert lit.to_act == 8                             # left of the big blind: seat 8
    lit.act(8, "call")
    assert lit.to_act == 3
    lit.act(3, "check")
    assert lit.to_act == 8                             # left of the button after the flop
    conv = hand(seats=(3, 8), button=3, heads_up_blinds="button_small_blind")
    assert conv.blind_seats() == (3, 8)
    assert conv.to_act == 3                            # the button acts first before the flop
    conv.act(3, "call")
    conv.act(8, "check")
    assert conv.to_act == 8                            # and last after it


def test_short_all_in_does_not_reopen_the_betting_by_default():
    h = hand(seats=(1, 2, 3), stacks={1: 1000, 2: 1000, 3: 130})  # SB 2, BB 3, first 1
    h.act(1, "raise", 100)
    h.act(2, "call")
    h.act(3, "allin")                                  # to 130: 30 more, below a raise of 90
    assert h.current_bet == 130 and h.min_raise == 90
    assert kinds(h) == {"fold", "call"}                # seat 1 already acted
    refused(h, 1, "raise", 300, match="does not reopen")
    h.act(1, "call")
    refused(h, 2, "raise", 300, match="does not reopen")


def test_h6_short_all_in_reopens_when_so_chosen():
    h = hand(seats=(1, 2, 3), stacks={1: 1000, 2: 1000, 3: 130}, short_all_in_reopens="yes")
    h.act(1, "raise", 100)
    h.act(2, "call")
    h.act(3, "allin")
    refused(h, 1, "raise", 219, match="below the minimum 220")
    h.act(1, "raise", 220)


@pytest.mark.parametrize("last_all_in,reopens", [(75, True), (65, False)])
def test_short_all_ins_adding_up_to_a_full_raise_reopen(last_all_in, reopens):
    seats = (1, 2, 3, 4, 5)                            # button 1: SB 2, BB 3, first 4
    h = hand(seats=seats, stacks={1: last_all_in, 2: 1000, 3: 1000, 4: 1000, 5: 60})
    h.act(4, "raise", 40)                              # a raise of 30
    h.act(5, "allin")                                  # to 60: +20, short
    h.act(1, "allin")                                  # +15 or +5 more, short again
    h.act(2, "call")
    h.act(3, "call")
    assert h.to_act == 4                               # faces +35 (a full 30) or +25 since
    assert ("raise" in kinds(h)) is reopens


def test_all_in_for_less_than_a_call_and_blinds_posted_all_in():
    h = hand(stacks={1: 1000, 2: 3, 3: 1000, 4: 1000})
    assert h.committed[2] == 3 and h.stacks[2] == 0   # small blind all-in for 3
    h.act(4, "raise", 100)
    h.act(1, "call")
    h.act(3, "allin")
    assert h.to_act == 4
    h.act(4, "call")
    assert h.to_act == 1
    h.act(1, "allin")
    assert h.is_over and h.street == "showdown"       # nobody left to bet: straight to showdown


def test_limit_all_in_for_less_is_allowed_and_more_is_not():
    h = hand(structure="limit", stacks={1: 1000, 2: 1000, 3: 1000, 4: 12})
    refused(h, 4, "raise", 20, match="only 12 behind")
    h.act(4, "allin")                                  # to 12: an all-in for less
    assert h.current_bet == 12 and h.raises == 0      # no raise (art. 12(1))
    big = hand(structure="limit")
    refused(big, 4, "allin", match="only to 15")


def test_no_raise_when_everybody_else_is_all_in():
    h = hand(seats=(1, 2), stacks={1: 1000, 2: 50})  # seat 2 small blind, seat 1 big blind
    h.act(2, "allin")
    assert h.to_act == 1 and kinds(h) == {"fold", "call"}
    refused(h, 1, "raise", 200, match="nobody could call")


def test_legal_actions_bounds():
    h = hand(stacks={1: 1000, 2: 1000, 3: 1000, 4: 500})
    legal = {a.kind: a for a in h.legal_actions()}
    assert (legal["call"].min_to, legal["raise"].min_to, legal["raise"].max_to) == (10, 20, 500)
    assert legal["allin"].min_to == 500


@pytest.mark.parametrize("kwargs,message", [
    (dict(seats=(1,), stacks={1: 100}), "at least two players"),
    (dict(seats=(1, 1), stacks=[100, 100]), "listed twice"),
    (dict(seats=(1, 2), stacks={1: 100, 2: 0}), "positive whole number"),
    (dict(seats=(1, 2), stacks={1: 100}), "missing"),
    (dict(seats=(1, 2), button=5), "button is at seat 5"),
    (dict(seats=(1, 2), sb=20, bb=10), "above the big blind"),
    (dict(seats=(1, 2), structure="pot-limit"), "unknown betting structure"),
])
def test_bad_hand_set_up_is_named(kwargs, message):
    with pytest.raises(RuleError, match=message):
        hand(**kwargs)


def test_art_11_1_an_action_binds_and_cannot_be_taken_back():
    h = hand()
    h.act(4, "raise", 50)
    refused(h, 4, "call", match="out of turn")           # no second word from seat 4
    refused(h, 4, "fold", match="out of turn")
    assert h.history[-1].kind == "raise" and h.committed[4] == 50


def test_art_10_3_no_split_by_agreement_only_the_listed_actions():
    h = hand()
    for word in ("split", "chop", "deal"):
        refused(h, 4, word, match="unknown action")


def test_a_player_who_checked_may_raise_a_short_all_in_bet():
    h = hand(seats=(1, 2, 3), stacks={1: 1000, 2: 1000, 3: 17})  # SB 2, BB 3 (all-in? no: 17)
    h.act(1, "call")
    h.act(2, "call")
    h.act(3, "check")
    assert h.street == "flop"
    h.act(2, "check")
    h.act(3, "allin")                                    # a bet of 7, below the big blind
    assert h.current_bet == 7 and h.min_raise == 10
    h.act(1, "call")
    assert "raise" in kinds(h)                           # seat 2 only checked: it may raise
    refused(h, 2, "raise", 16, match="below the minimum 17")
    h.act(2, "raise", 17)


def test_no_raise_when_the_others_cannot_call_beyond_the_bet():
    h = hand(seats=(1, 2, 3), stacks={1: 1000, 2: 1000, 3: 100})
    h.act(1, "raise", 200)
    h.act(2, "fold")
    h.act(3, "allin")                                    # 100: less than the 200 to call
    assert h.is_over and h.street == "showdown"
    h = hand(seats=(1, 2, 3), stacks={1: 1000, 2: 150, 3: 1000})
    h.act(1, "raise", 200)
    h.act(2, "allin")                                    # calls all-in for 150
    h.act(3, "call")
    assert h.street == "flop" and h.to_act == 3
    h.act(3, "bet", 100)
    assert kinds(h) == {"fold", "call", "raise", "allin"}  # seat 1 still covers more


def test_an_unknown_reading_is_refused():
    with pytest.raises(RuleError, match='heads_up_raises cannot be "sometimes"'):
        BettingRules(heads_up_raises="sometimes")


# -- any hand played by legal actions keeps the engine's books straight ----------------------
@settings(max_examples=120, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(["limit", "no-limit"]),
       st.integers(2, 10),
       st.sampled_from([BettingRules(), BettingRules(limit_bet_sizes="big_blind_doubled",
                                                     heads_up_blinds="button_small_blind",
                                                     heads_up_raises="amount_unlimited",
                                                     short_all_in_reopens="yes")]))
def test_legal_actions_are_accepted_and_the_chips_add_up(rnd, structure, n, rules):
    seats = sorted(rnd.sample(range(1, 11), n))
    stacks = {s: rnd.randint(1, 120) for s in seats}
    h = HandState(seats, stacks, rnd.choice(seats), 1, 2, structure, rules)
    total = sum(stacks.values())
    while h.to_act is not None:
        seat = h.to_act
        assert seat in h.contenders and h.stacks[seat] > 0
        legal = h.legal_actions()
        for a in legal:
            assert accepts(h, seat, a.kind, a.min_to if a.kind in ("bet", "raise") else None)
            if a.kind in ("bet", "raise"):
                assert accepts(h, seat, a.kind, a.max_to)
                below = a.min_to - 1
                if h.current_bet < below < h.round_bets[seat] + h.stacks[seat]:
                    assert not accepts(h, seat, a.kind, below)          # art. 12(1), 11(2)
                assert not accepts(h, seat, a.kind, h.round_bets[seat] + h.stacks[seat] + 1)
        for other in h.seats:
            if other != seat:
                assert not accepts(h, other, "fold")                      # out of turn
        a = rnd.choice(legal)
        amount = rnd.randint(a.min_to, a.max_to) if a.kind in ("bet", "raise") else None
        h.act(seat, a.kind, amount)
        assert all(v >= 0 for v in h.stacks.values())
        assert sum(h.stacks.values()) + h.pot == total
        assert all(h.round_bets[s] <= h.committed[s] for s in h.seats)
    assert h.is_over
    # at the end nobody still in owes chips: each matched the largest stake or is all-in
    top = max(h.committed[s] for s in h.contenders)
    if not h.won_uncontested:
        assert all(h.committed[s] == top or h.stacks[s] == 0 for s in h.contenders)


def test_h5_amount_unlimited_raise_is_at_least_the_previous_raise_art_12_1():
    h = hand(seats=(1, 2), structure="limit", heads_up_raises="amount_unlimited")
    h.act(2, "call")
    h.act(1, "check")
    assert h.street == "flop" and h.to_act == 2
    h.act(2, "bet", 5)
    h.act(1, "raise", 100)                             # a raise of 95
    refused(h, 2, "raise", 105, match=r"below the minimum 195.*art\. 12\(1\)")
    refused(h, 2, "raise", 194, match="below the minimum 195")
    assert [a for a in h.legal_actions() if a.kind == "raise"][0].min_to == 195
    h.act(2, "raise", 195)
    assert h.raises == 2 and h.min_raise == 95
