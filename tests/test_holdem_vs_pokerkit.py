"""Whole hands played through tablectl's Hold'em engine and through PokerKit side by side.

PokerKit is an independent engine: at every decision both must agree on whose turn it is and
on which actions are allowed, and at the end on every player's final stack. Where the Macau
rules or the project's readings differ from PokerKit's, the comparison adapts, and the
difference is tested on its own elsewhere:

- PokerKit numbers players by position: index 0 is the seat left of the button, the button
  last. Heads-up it puts the small blind on the button, the reading
  ``heads_up_blinds=button_small_blind`` (the literal default is tested separately).
- Limit games: PokerKit's preflop cap is set to three raises and a later round to a bet and
  three raises, as art. 12(2) has it. PokerKit keeps the cap heads-up and counts an all-in for
  less as a raise; tablectl lifts the cap heads-up (art. 12(4)) and does not count it
  (art. 12(1)). Actions only one engine allows are not played.
- An all-in for less than a full raise (art. 12(1): no raise) reopens the betting in PokerKit
  when it is the first raise of its round; in such rounds raises allowed by one engine only
  are not played (test_holdem_betting.py covers the rule).
- When every other player is all-in and the last one has already matched the bet, PokerKit
  still asks him to check; tablectl ends the round (no chips move either way).
- PokerKit refuses a fold when a check is free; art. 13(1) allows it, so such folds are not
  played either.
- The odd chip (art. 10(5)) goes elsewhere in PokerKit: hands with an indivisible remainder
  are left out of the stack comparison (tests/test_holdem_pots.py covers the Macau rule).
- Rake: PokerKit's own rake rounds to the nearest chip and rates and caps each pot left after
  the losing hands are killed; tablectl rounds down (H9) and rates and caps the hand (H8).
  PokerKit is given a rake hook of its own shape that rounds down, and the stacks are compared
  on hands one player wins outright (every pot) with the rake under the cap.
"""
import random
from fractions import Fraction
from functools import partial

import pytest
from pokerkit import (Automation, BettingStructure, Deck, Mode, Opening, StandardHighHand,
                      State, Street)

from controller.rules.cards import full_deck
from controller.rules.holdem_betting import BettingRules, HandState, Structure, clockwise_after
from controller.rules.holdem_eval import holdem_hand
from controller.rules.holdem_pots import settle_pots
from holdem_helpers import accepts

AUTOMATIONS = (Automation.ANTE_POSTING, Automation.BET_COLLECTION,
               Automation.BLIND_OR_STRADDLE_POSTING, Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
               Automation.HAND_KILLING, Automation.CHIPS_PUSHING, Automation.CHIPS_PULLING,
               Automation.RUNOUT_COUNT_SELECTION)


def odd_chip(result):
    """Whether a pot of the settled hand had an indivisible remainder (art. 10(5))."""
    return any(p.odd_chips for p in result.pots)


def floor_rake(amount, state, *, percent, cap, no_flop_no_drop):
    """PokerKit's rake hook, shaped like its own ``rake`` (each pot, capped per pot, no flop no
    drop as a board card dealt) but rounding down like H9 ``down`` instead of to the nearest."""
    if no_flop_no_drop and not any(state.board_cards):
        return 0, amount
    raked = min(amount * percent.numerator // (100 * percent.denominator), cap)
    return raked, amount - raked


def pokerkit_state(structure, sb, bb, small_bet, big_bet, stacks, rake=None):
    limit = structure is Structure.LIMIT
    cap_pre, cap_post = (3, 4) if limit else (None, None)
    size_pre, size_post = (small_bet, big_bet) if limit else (bb, bb)
    streets = (
        Street(False, (False, False), 0, False, Opening.POSITION, size_pre, cap_pre),
        Street(True, (), 3, False, Opening.POSITION, size_pre, cap_post),
        Street(True, (), 1, False, Opening.POSITION, size_post, cap_post),
        Street(True, (), 1, False, Opening.POSITION, size_post, cap_post),
    )
    return State(AUTOMATIONS, Deck.STANDARD, (StandardHighHand,), streets,
                 BettingStructure.FIXED_LIMIT if limit else BettingStructure.NO_LIMIT,
                 True, 0, (sb, bb), 0, tuple(stacks), len(stacks), mode=Mode.CASH_GAME,
                 **({"rake": rake} if rake else {}))


def candidates(mine, rnd):
    """Actions worth trying now: (my action, my amount, PokerKit operation, its amount)."""
    seat = mine.to_act
    out = []
    to_call = mine.current_bet - mine.round_bets[seat]
    if to_call:
        out.append(("fold", None, "fold", None))
        out.append(("call", None, "call", None))
    else:
        out.append(("check", None, "call", None))
    all_in_to = mine.round_bets[seat] + mine.stacks[seat]
    lo = mine.current_bet + max(mine.min_raise, 1)
    targets = {all_in_to, lo, mine.current_bet + mine.bet_size()}
    if lo < all_in_to:
        targets.add(rnd.randint(lo, all_in_to))
        targets.add(rnd.randint(mine.current_bet + 1, all_in_to))
    kind = "bet" if mine.current_bet == 0 else "raise"
    for t in sorted(targets):
        if t > mine.current_bet:
            out.append((kind, t, "raise", t))
    return out


def play_both(rnd, structure, n_players, rules, stack_range, big_blind_choices=(2, 10),
              rake_percent=Fraction(0), without_flop="rake"):
    seats = sorted(rnd.sample(range(1, 11), n_players))
    button = rnd.choice(seats)
    bb = rnd.choice(big_blind_choices)
    sb = bb // 2
    stacks = {s: rnd.randint(*stack_range) for s in seats}
    mine = HandState(seats, stacks, button, sb, bb, structure, rules)
    order = clockwise_after(seats, button)          # PokerKit index -> seat
    small_bet = mine.bet_size()
    big_bet = sb * 0  # set below from the engine's own rule per street
    probe = HandState(seats, stacks, button, sb, bb, structure, rules)
    probe.street_index = 2
    big_bet = probe.bet_size()
    pk_rake = partial(floor_rake, percent=rake_percent, cap=5 * bb,
                      no_flop_no_drop=without_flop == "no_flop_no_drop")
    pk = pokerkit_state(structure, sb, bb, small_bet, big_bet, [stacks[s] for s in order],
                        pk_rake)
    deck = full_deck()
    rnd.shuffle(deck)
    holes = {s: [deck.pop(), deck.pop()] for s in seats}
    board = [deck.pop() for _ in range(5)]
    hole_round = {i: 0 for i in range(n_players)}
    dealt_board = 0
    steps = 0
    while pk.status:
        steps += 1
        assert steps < 500
        if pk.can_deal_hole():
            i = pk.hole_dealee_index
            pk.deal_hole(str(holes[order[i]][hole_round[i]]))
            hole_round[i] += 1
            continue
        if pk.can_burn_card():
            pk.burn_card("??")
            continue
        if pk.can_deal_board():
            count = pk.street.board_dealing_count
            pk.deal_board("".join(map(str, board[dealt_board:dealt_board + count])))
            dealt_board += count
            assert dealt_board <= mine.board_cards_due
            continue
        assert pk.actor_index is not None, "PokerKit waits for something unexpected"
        if mine.to_act is None and not pk.can_complete_bet_or_raise_to():
            # PokerKit still asks a lone player with chips to check although nobody is left
            # to bet against; tablectl ends the round (no chips move either way)
            assert pk.checking_or_calling_amount == 0
            pk.check_or_call()
            continue
        assert mine.to_act == order[pk.actor_index], "the engines disagree on whose turn it is"
        playable = []
        for my_kind, my_amount, pk_op, pk_amount in candidates(mine, rnd):
            my_ok = accepts(mine, mine.to_act, my_kind, my_amount)
            if pk_op == "fold":
                pk_ok = pk.can_fold()
            elif pk_op == "call":
                pk_ok = pk.can_check_or_call()
            else:
                pk_ok = pk.can_complete_bet_or_raise_to(pk_amount)
            if my_ok != pk_ok:
                assert known_difference(mine, structure, my_kind, my_amount, my_ok), \
                    (my_kind, my_amount, my_ok, pk_ok, [a.to_json() for a in mine.history])
            if my_ok and pk_ok:
                playable.append((my_kind, my_amount, pk_op, pk_amount))
        assert playable
        # lean towards calls so that hands reach the showdown often
        weights = [4 if k in ("call", "check") else 1 for k, *_ in playable]
        my_kind, my_amount, pk_op, pk_amount = rnd.choices(playable, weights)[0]
        mine.act(mine.to_act, my_kind, my_amount)
        if pk_op == "fold":
            pk.fold()
        elif pk_op == "call":
            pk.check_or_call()
        else:
            pk.complete_bet_or_raise_to(pk_amount)
    assert mine.is_over and mine.to_act is None
    assert dealt_board == mine.board_cards_due
    values = ({s: holdem_hand(holes[s], board, four_of_a_kind_kicker=True) for s in seats}
              if not mine.won_uncontested else None)
    result = settle_pots(mine.committed, mine.folded, values.get if values else None,
                         big_blind=bb, rake_percent=rake_percent, flop_seen=mine.street_index >= 1,
                         interpretations={"rake_without_flop": without_flop})
    final = {s: stacks[s] + result.nets[s] for s in seats}
    theirs = {order[i]: pk.stacks[i] for i in range(n_players)}
    assert sum(final.values()) + result.rake == sum(stacks.values())
    return final, theirs, result


def short_all_in_this_round(mine):
    """Whether an all-in raised the bet of this round by less than a full raise (12(1))."""
    street = mine.street
    level = max(a.to for a in mine.history[:2]) if street == "preflop" else 0
    full = mine.big_blind if mine.structure is Structure.NO_LIMIT else mine.bet_size()
    for a in mine.history[2:]:
        if a.street != street or a.to <= level:
            continue
        if a.to - level < full:
            if a.all_in:
                return True
        else:
            full = a.to - level
        level = a.to
    return False


def known_difference(mine, structure, kind, amount, my_ok):
    seat = mine.to_act
    if kind == "fold":
        return my_ok and mine.current_bet == mine.round_bets[seat]   # art. 13(1) fold
    if kind in ("bet", "raise"):
        if structure is Structure.LIMIT and mine.is_heads_up():
            return True                                              # art. 12(4)
        # PokerKit lets an all-in for less reopen the betting when it is the first raise of
        # a round, and counts it towards the limit cap; art. 12(1) makes it no raise at all
        return short_all_in_this_round(mine)
    return False


def run(seed, hands, structure, rules=BettingRules(), players=(2, 10),
        stack_range=(5, 400)):
    rnd = random.Random(seed)
    compared = odd = showdowns = 0
    for _ in range(hands):
        n = rnd.randint(*players)
        hu_rules = rules
        if n == 2:
            hu_rules = BettingRules(**{**{f: getattr(rules, f) for f in rules.__slots__},
                                       "heads_up_blinds": "button_small_blind"})
        final, theirs, result = play_both(rnd, structure, n, hu_rules, stack_range)
        if odd_chip(result):
            odd += 1
            continue
        assert final == theirs
        compared += 1
        showdowns += any(len(p.eligible) > 1 for p in result.pots)
    return compared, odd, showdowns


def test_no_limit_hands_agree_with_pokerkit():
    compared, odd, showdowns = run(1, 150, Structure.NO_LIMIT)
    assert compared >= 120 and showdowns >= 40


def test_no_limit_deep_and_short_stacks_with_many_all_ins_agree_with_pokerkit():
    compared, odd, showdowns = run(2, 100, Structure.NO_LIMIT, stack_range=(1, 60),
                                   players=(3, 10))
    assert compared >= 80 and showdowns >= 40


def test_limit_hands_agree_with_pokerkit_under_both_bet_size_readings():
    for seed, sizes in ((3, "literal"), (4, "big_blind_doubled")):
        compared, odd, showdowns = run(seed, 75, Structure.LIMIT,
                                       BettingRules(limit_bet_sizes=sizes))
        assert compared >= 60 and showdowns >= 20


def test_raked_hands_agree_with_pokerkit_where_the_rake_rules_coincide():
    rnd = random.Random(7)
    compared = raked = 0
    for i in range(150):
        without_flop = ("rake", "no_flop_no_drop")[i % 2]
        percent = rnd.choice([Fraction(3), Fraction(5), Fraction(9, 2)])
        bb = rnd.choice((10, 20))
        final, theirs, result = play_both(rnd, Structure.NO_LIMIT, rnd.randint(2, 8),
                                          BettingRules(heads_up_blinds="button_small_blind"),
                                          (20, 400), (bb,), percent, without_flop)
        # PokerKit rates each pot left once the losing hands are killed (so one pot when one
        # player wins them all) and caps each; tablectl rates the hand (H8 whole_hand) and caps
        # the hand: alike when one player takes every pot and the cap is not reached
        # (hands won by a fold are left out: PokerKit rates only the chips it has collected
        # when the last opponent folds)
        winners = {w for p in result.pots for w in p.winners}
        showdown = len(result.pots[0].eligible) > 1
        if odd_chip(result) or result.rake >= 5 * bb or len(winners) != 1 or not showdown:
            continue
        assert final == theirs
        compared += 1
        raked += result.rake > 0
    assert compared >= 40 and raked >= 30


@pytest.mark.long
@pytest.mark.parametrize("structure", [Structure.NO_LIMIT, Structure.LIMIT])
def test_many_hands_agree_with_pokerkit(structure):
    compared, odd, showdowns = run(10, 3000, structure)
    assert compared >= 2500
