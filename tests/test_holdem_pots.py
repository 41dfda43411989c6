"""Pots, split pots, the odd chip and the rake: 11/2008 art. 10(2)-(5), 13(3), 16 and the
interpretations H2, H3, H7-H9. Expected amounts are worked out by hand in the comments."""
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from controller.rules.errors import RuleError
from controller.rules.holdem_pots import (Pot, build_pots, parse_rake_percent, rake_pots,
                                          settle_pots)


def test_h3_side_pots_layer_by_what_each_all_in_player_matched():
    # seat 2 all-in 50, seat 5 all-in 120, seats 7 and 9 put in 300 each
    pots, returned = build_pots({2: 50, 5: 120, 7: 300, 9: 300}, set())
    assert [(p.amount, p.eligible) for p in pots] == [
        (200, (2, 5, 7, 9)),        # 4 x 50
        (210, (5, 7, 9)),           # 3 x 70
        (360, (7, 9)),              # 2 x 180
    ]
    assert sum(returned.values()) == 0


def test_uncalled_chips_go_back_and_folded_chips_stay_art_13_3():
    # seat 1 bets 400, seat 3 calls all-in for 100, seat 4 folded after putting in 60
    pots, returned = build_pots({1: 400, 3: 100, 4: 60}, {4})
    assert [(p.amount, p.eligible) for p in pots] == [(260, (1, 3))]   # 100+100+60
    assert returned == {1: 300, 3: 0, 4: 0}


def test_folded_chips_above_an_all_in_form_a_pot_the_others_contest():
    # seat 2 all-in 30; seat 4 raised to 80 and later folded; seat 6 put in 200, seat 8 200
    pots, returned = build_pots({2: 30, 4: 80, 6: 200, 8: 200}, {4})
    assert [(p.amount, p.eligible) for p in pots] == [(120, (2, 6, 8)), (390, (6, 8))]


def test_art_10_2_best_hand_takes_the_pot():
    r = settle_pots({1: 100, 2: 100, 3: 100}, set(), {1: 5, 2: 9, 3: 1}.get, big_blind=10)
    assert r.nets == {1: -100, 2: 200, 3: -100} and r.rake == 0


def test_side_pot_winner_and_main_pot_winner_differ():
    # seat 2 (all-in 50) has the best hand, seat 7 the second best
    r = settle_pots({2: 50, 5: 120, 7: 300, 9: 300}, set(), {2: 9, 5: 1, 7: 8, 9: 2}.get,
                    big_blind=10)
    assert r.payouts == {2: 200, 7: 210 + 360}
    assert r.nets == {2: 150, 5: -120, 7: 270, 9: -300}


def test_art_10_4_equal_hands_split_equally():
    r = settle_pots({1: 100, 4: 100, 6: 100}, set(), {1: 7, 4: 7, 6: 2}.get, big_blind=10)
    assert r.payouts == {1: 150, 4: 150} and not any(p.odd_chips for p in r.pots)


def test_art_10_5_h2_odd_chip_to_the_tied_winner_nearest_the_croupiers_left():
    # pot 101 (seat 8 folded after 1): winners seats 3 and 6 -> 50 each, 1 left over;
    # seat 3 is nearer the croupier's left (seat 1 side) than seat 6
    committed = {1: 25, 3: 25, 6: 25, 8: 26}
    r = settle_pots(committed, {8}, {1: 1, 3: 9, 6: 9}.get, big_blind=10)
    pot = r.pots[0]
    assert pot.amount == 101 and pot.odd_chips == 1 and pot.odd_chip_to == 3
    assert r.payouts == {3: 51, 6: 50}


def test_h2_literal_reading_odd_chip_to_the_player_in_the_hand_nearest_the_croupier():
    committed = {1: 25, 3: 25, 6: 25, 8: 26}
    r = settle_pots(committed, {8}, {1: 1, 3: 9, 6: 9}.get, big_blind=10,
                    interpretations={"odd_chip": "nearest_in_hand"})
    assert r.pots[0].odd_chip_to == 1                  # seat 1 is still in, though it lost
    assert r.payouts == {1: 1, 3: 50, 6: 50}


def test_three_way_split_remainder_of_two_goes_to_one_seat():
    # 3 x 50 + 2 folded = 152 -> 50 each and 2 left, both to seat 2 (nearest the croupier's left)
    r = settle_pots({2: 50, 5: 50, 9: 50, 10: 2}, {10}, lambda s: 1, big_blind=10)
    assert r.payouts == {2: 52, 5: 50, 9: 50}


def test_art_16_rake_rate_and_cap_of_five_big_blinds():
    # 5 % of 600 = 30; the cap is 5 x 10 = 50
    r = settle_pots({1: 300, 2: 300}, set(), {1: 2, 2: 1}.get, big_blind=10,
                    rake_percent=Fraction(5))
    assert r.rake == 30 and r.nets == {1: 270, 2: -300}
    # 5 % of 2000 = 100, capped at 50
    r = settle_pots({1: 1000, 2: 1000}, set(), {1: 2, 2: 1}.get, big_blind=10,
                    rake_percent=Fraction(5))
    assert r.rake == 50 and r.nets == {1: 950, 2: -1000}


def test_h9_rake_rounds_down_or_up_to_the_chip_unit():
    pots, _ = build_pots({1: 55, 2: 55}, set())          # 3 % of 110 = 3.3
    assert rake_pots(pots, percent=Fraction(3), big_blind=10, flop_seen=True) == 3
    pots, _ = build_pots({1: 55, 2: 55}, set())
    assert rake_pots(pots, percent=Fraction(3), big_blind=10, flop_seen=True,
                     rounding="up") == 4
    pots, _ = build_pots({1: 50, 2: 50}, set())          # 3 % of 100 = 3 exactly
    assert rake_pots(pots, percent=Fraction(3), big_blind=10, flop_seen=True,
                     rounding="up") == 3


def test_h7_rake_without_a_flop():
    pots, _ = build_pots({1: 100, 2: 100}, set())
    assert rake_pots(pots, percent=Fraction(5), big_blind=10, flop_seen=False) == 10
    pots, _ = build_pots({1: 100, 2: 100}, set())
    assert rake_pots(pots, percent=Fraction(5), big_blind=10, flop_seen=False,
                     without_flop="no_flop_no_drop") == 0


def test_h8_whole_hand_rounds_once_every_pot_rounds_each_pot():
    def pots():
        return [Pot(270, (2, 4, 6)), Pot(196, (2, 6)), Pot(42, (2, 6)), Pot(18, (6,))]
    # 4.5 % of the hand's 526 is 23.67: 23 taken; each pot gives its own 4.5 % rounded down
    # (12, 8, 1, 0 = 21) and the 2 left over come from the main pot, then the next
    ps = pots()
    assert rake_pots(ps, percent=Fraction(9, 2), big_blind=100, flop_seen=True) == 23
    assert [p.rake for p in ps] == [13, 9, 1, 0]
    # every pot on its own: 12.15 -> 12, 8.82 -> 8, 1.89 -> 1, 0.81 -> 0
    ps = pots()
    assert rake_pots(ps, percent=Fraction(9, 2), big_blind=100, flop_seen=True,
                     side_pots="every_pot") == 21
    assert [p.rake for p in ps] == [12, 8, 1, 0]
    ps = pots()
    assert rake_pots(ps, percent=Fraction(9, 2), big_blind=100, flop_seen=True,
                     side_pots="every_pot", rounding="up") == 13 + 9 + 2 + 1


def test_h8_side_pots_raked_with_one_cap_for_the_hand_or_only_the_main_pot():
    committed = {2: 50, 5: 120, 7: 300, 9: 300}          # pots 200, 210, 360
    pots, _ = build_pots(committed, set())
    # 5 %: 10 + 10 (10.5 down) + 18 = 38, under the cap of 50
    assert rake_pots(pots, percent=Fraction(5), big_blind=10, flop_seen=True) == 38
    assert [p.rake for p in pots] == [10, 10, 18]
    pots, _ = build_pots(committed, set())
    # the cap of 5 big blinds (25 with a big blind of 5) is for the whole hand, main pot first
    assert rake_pots(pots, percent=Fraction(5), big_blind=5, flop_seen=True) == 25
    assert [p.rake for p in pots] == [10, 10, 5]
    pots, _ = build_pots(committed, set())
    assert rake_pots(pots, percent=Fraction(5), big_blind=10, flop_seen=True,
                     side_pots="main_pot_only") == 10
    assert [p.rake for p in pots] == [10, 0, 0]


def test_uncalled_bet_is_not_raked():
    r = settle_pots({1: 400, 3: 100}, set(), {1: 1, 3: 2}.get, big_blind=100,
                    rake_percent=Fraction(5))
    assert r.rake == 10 and r.returned[1] == 300      # 5 % of the 200 contested only


@pytest.mark.parametrize("text,expected", [(5, Fraction(5)), ("4.5", Fraction(9, 2)),
                                           ("3%", Fraction(3)), (0, Fraction(0)),
                                           (None, Fraction(0))])
def test_rake_rate_parsing(text, expected):
    assert parse_rake_percent(text) == expected


@pytest.mark.parametrize("text", ["2.9", 6, "five", True, "10%"])
def test_rake_rate_outside_three_to_five_is_refused(text):
    with pytest.raises(RuleError, match="3 to 5|3-5"):
        parse_rake_percent(text)


def test_a_contested_pot_needs_the_hands():
    with pytest.raises(RuleError, match="hole cards"):
        settle_pots({1: 100, 2: 100}, set(), None, big_blind=10)


# -- conservation and fairness, for any chips and any hands ---------------------------------
@st.composite
def hands(draw):
    seats = draw(st.lists(st.integers(1, 12), min_size=2, max_size=10, unique=True))
    committed = {s: draw(st.integers(0, 5000)) for s in seats}
    if sum(committed.values()) == 0:
        committed[seats[0]] = 1
    folded = set(draw(st.lists(st.sampled_from(seats), max_size=len(seats) - 1, unique=True)))
    # as in any real hand, the largest stake belongs to a player still in
    top = draw(st.sampled_from([s for s in seats if s not in folded]))
    committed[top] = max(committed.values())
    strength = {s: draw(st.integers(0, 3)) for s in seats}   # few values: many ties
    rate = draw(st.sampled_from([Fraction(0), Fraction(3), Fraction(7, 2), Fraction(5)]))
    readings = {
        "odd_chip": draw(st.sampled_from(["tied_winner", "nearest_in_hand"])),
        "rake_side_pots": draw(st.sampled_from(["whole_hand", "every_pot", "main_pot_only"])),
        "rake_rounding": draw(st.sampled_from(["down", "up"])),
        "rake_without_flop": draw(st.sampled_from(["rake", "no_flop_no_drop"])),
    }
    return committed, folded, strength, rate, readings, draw(st.booleans()), \
        draw(st.integers(1, 200))


@settings(max_examples=400, deadline=None)
@given(hands())
def test_chips_are_conserved_and_nobody_wins_what_he_did_not_match(case):
    committed, folded, strength, rate, readings, flop_seen, bb = case
    contenders = [s for s in committed if s not in folded]
    r = settle_pots(committed, folded,
                    strength.get if len(contenders) > 1 else None, big_blind=bb,
                    rake_percent=rate, flop_seen=flop_seen, interpretations=readings)
    assert sum(r.nets.values()) + r.rake == 0
    assert 0 <= r.rake <= 5 * bb
    assert r.rake <= sum(committed.values()) * rate / 100 + len(r.pots)
    for s in committed:
        assert r.payouts.get(s, 0) >= 0 and r.returned[s] >= 0
        assert r.nets[s] >= -committed[s]
        if s in folded:
            assert r.returned[s] == 0
    for p in r.pots:
        assert sum(p.shares.values()) == p.amount - p.rake
        assert set(p.winners) <= set(p.eligible)
        best = max(strength[s] for s in p.eligible)
        assert all(strength[w] == best for w in p.winners)
        if p.odd_chips:
            assert p.odd_chips < len(p.winners)
    if readings["odd_chip"] == "tied_winner":
        # H3: a player wins from each opponent at most what he himself put in
        for s in contenders:
            cap = sum(min(committed[t], committed[s]) for t in committed)
            assert r.payouts.get(s, 0) <= cap
