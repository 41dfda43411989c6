"""The table machine against the real regulation modules, in process.

Expected amounts are worked out by hand from the articles cited beside them, not copied from
the code's output.
"""
import json
import re

import pytest
from hypothesis import assume, given, settings, strategies as st

from controller.errors import TablectlError
from controller.rules.base import Mode, PlanRequest
from controller.rules.cards import Card, full_deck
from controller.table import STATES
from drivers import events as ev

from table_helpers import (deck_checked, draw, hand, kinds, nets, placed, ready, rulings,
                           settlement, table)


# --- Q Poker (89/2004) ----------------------------------------------------------------------

def q_round(mode="shoe", **kw):
    t = table("q-poker", mode, **kw)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("place_bet", box=3, wager="pair_bonus", amount=5)
    t.command("place_bet", box=3, wager="versus_croupier", amount=20)
    return t


def test_q_poker_shoe_round_settles_by_articles_9_and_10():
    t = q_round()
    # art. 7(1): one card at a time, box 1, box 3, croupier, three times.
    draw(t, "As", "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc", "4h")
    assert t.state == "player_decisions"
    opened = {e.data["recipient"]: e.data["hand"] for e in t.outbox if e.kind == "hand_opened"}
    assert opened == {"box 1": ["As", "Ah", "Ad"], "box 3": ["Kd", "Ks", "Kc"]}  # art. 9(1)
    t.command("decide", box=1, decision="play")
    t.command("decide", box=3, decision="fold")
    assert t.state == "settlement"
    n = nets(t)
    assert n[(1, "versus_croupier")] == 20     # art. 9(7)(2): three of a kind pays 2 to 1
    assert n[(3, "pair_bonus")] == 150         # art. 10(2): three of a kind 30 to 1
    assert n[(3, "versus_croupier")] == -10    # art. 9(3): not playing loses half
    t.command("confirm_result")
    assert t.state == "round_complete"
    t.command("next_round")
    assert t.state == "bets_open"              # the shoe goes on without a new shuffle
    assert t.round.round_id == 2 and not t.round.bets



@pytest.mark.parametrize("game,wager,article", [("q-poker", "pair_bonus", "89/2004 art. 6(2)"),
                                                ("fortune-3-card-poker", "pair_plus",
                                                 "78/2008 art. 6(3)")])
def test_no_bet_is_placed_or_taken_back_once_the_first_card_is_out(game, wager, article):
    # 89/2004 art. 6(2), 78/2008 art. 6(3): the first card closes betting; the table asks the
    # game, and the refusal names the article
    t = table(game)
    t.command("place_bet", box=1, wager=wager, amount=10)
    draw(t, "As")
    assert t.state == "dealing"
    with pytest.raises(TablectlError, match=r"cannot place a bet while the table is in "
                       r"dealing: no bet is accepted once the first card of the round is dealt "
                       rf"\({re.escape(article)}\)"):
        t.command("place_bet", box=2, wager=wager, amount=10)
    # the article speaks of new bets; the layout stays as dealt all the same
    with pytest.raises(TablectlError, match="cannot remove a bet while the table is in dealing; "
                                            "that is allowed in bets_open"):
        t.command("remove_bet", box=1, wager=wager)
    assert dict(t.round.bets) and sum(t.round.bets.values()) == 10

def test_q_poker_shuffler_deals_hand_by_hand():
    t = q_round("shuffler")
    hand(t, "As", "Ah", "Ad")   # art. 7(2): three cards at a time, box 1, box 3, croupier
    hand(t, "Kd", "Ks", "Kc")
    hand(t, "2c", "5d", "9h")   # croupier: nine high, below Q-high: does not qualify
    t.command("decide", box=1, decision="play")
    t.command("decide", box=3, decision="play")
    n = nets(t)
    assert n[(1, "versus_croupier")] == 5      # art. 9(5): half the bet
    assert n[(3, "versus_croupier")] == 10
    t.command("confirm_result")
    t.command("next_round")
    assert t.state == "shuffling"              # the shuffler shuffles for every round


def test_q_poker_wrong_hand_size_voids_round_art_11_1():
    t = q_round("shuffler")
    hand(t, "As", "Ah")
    assert t.state == "round_void"
    r = rulings(t)[-1]
    assert r["irregularity"] == "wrong_count" and r["article"] == "89/2004 art. 11(1)"
    void = [e.to_json() for e in t.outbox if e.kind == "round_void"][-1]
    assert {b["box"] for b in void["returned"]} == {1, 3}   # every bet returned


def test_q_poker_card_beyond_plan_after_deal_voids_round():
    t = q_round()
    draw(t, "As", "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc", "4h")
    draw(t, "5s")
    assert t.state == "round_void"
    assert rulings(t)[-1]["article"] == "89/2004 art. 11(1)"


def test_q_poker_player_card_face_up_goes_on_and_is_shown_art_11_2():
    t = q_round()
    draw(t, "As")
    draw(t, "Kd", face_up=True)
    assert t.state == "dealing"
    assert rulings(t)[-1]["article"] == "89/2004 art. 11(2)"
    exposed = [e.to_json() for e in t.outbox if e.kind == "card_exposed"]
    assert exposed == [{**exposed[0], "recipient": "box 3", "card": "Kd"}]


def test_q_poker_croupier_card_face_up_voids_round_art_11_3():
    t = q_round()
    draw(t, "As", "Kd")
    draw(t, "2c", face_up=True)
    assert t.state == "round_void"
    assert rulings(t)[-1]["irregularity"] == "croupier_card_exposed"
    assert rulings(t)[-1]["article"] == "89/2004 art. 11(3)"


def test_q_poker_card_on_box_without_bet_voids_that_box_art_11_4():
    t = q_round(box_sensors=True)
    draw(t, "As")
    placed(t, 2)                       # box 2 holds no bet
    assert t.state == "dealing"
    assert rulings(t)[-1]["article"] == "89/2004 art. 11(4)"
    assert 2 in t.round.void_boxes
    # box 1 is still owed its first card: the plan goes on from there.
    assert t.tracker.expected.deal.recipient.box == 1
    draw(t, "Ah")
    placed(t, 1)
    assert t.state == "dealing" and len(rulings(t)) == 1


def test_q_poker_card_on_wrong_bet_box_is_wrong_order_art_11_1():
    t = q_round(box_sensors=True)
    draw(t, "As")
    placed(t, 3)                       # the card for box 1 landed on box 3
    assert t.state == "round_void"
    assert rulings(t)[-1]["irregularity"] == "wrong_order"


def test_q_poker_shuffler_jam_while_dealing_voids_and_waits_for_supervisor_art_11_5():
    t = q_round("shuffler")
    hand(t, "As", "Ah", "Ad")
    t.handle_device(ev.Jam(device="shuffler", ts=1.0, where="exit"))
    assert t.state == "malfunction"
    assert t.round.void["article"] == "89/2004 art. 11(5)"
    with pytest.raises(TablectlError):
        t.command("next_round")
    with pytest.raises(TablectlError):
        t.command("clear_malfunction", role="dealer")      # supervisor only
    # art. 11(5): switch the table to the shoe.
    t.command("switch_mode", role="supervisor", mode="shoe")
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "shuffling" and t.mode.value == "shoe"
    ready(t)
    assert t.state == "bets_open" and t.round.round_id == 2


def test_link_lost_while_dealing_is_a_machine_failure():
    t = q_round("shuffler")
    t.handle_device(ev.LinkLost(device="shuffler", ts=1.0, reason="heartbeats stopped"))
    # before the first card: the round is held, nothing is void
    assert t.state == "malfunction" and t.round.void is None
    t.handle_device(ev.LinkRestored(device="shuffler", ts=2.0, identity=_identity()))
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open" and t.round.round_id == 1 and len(t.round.bets) == 3
    hand(t, "As", "Ah", "Ad")
    t.handle_device(ev.LinkLost(device="shuffler", ts=3.0, reason="port vanished"))
    assert t.state == "malfunction"
    assert t.round.void["cause"] == "shuffler_malfunction"


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_box_sensors_failing_while_dealing_are_no_dealing_machine_failure_art_11_5(mode):
    # 89/2004 art. 11(5) voids the round for the shuffler's failure while dealing (Q5: the
    # shoe's). The box sensors deal no card: the shoe or shuffler goes on in the plan's order,
    # the round stands, and only the next round waits for the sensors.
    t = q_round(mode, box_sensors=True)
    if mode == "shoe":
        draw(t, "As")
    else:
        hand(t, "As", "Ah", "Ad")
    t.handle_device(ev.Malfunction(device="sensors", ts=1.0, code=3, text="sensor fault"))
    assert t.state == "dealing" and not rulings(t) and t.round.void is None
    if mode == "shoe":
        draw(t, "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc", "4h")
    else:
        hand(t, "Kd", "Ks", "Kc")
        hand(t, "2c", "3c", "4h")
    t.command("decide", box=1, decision="play")
    t.command("decide", box=3, decision="play")
    assert nets(t)[(1, "versus_croupier")] == 20          # art. 9(7)(2): trips 2 to 1
    t.command("confirm_result")
    with pytest.raises(TablectlError, match="devices not ready"):
        t.command("next_round")
    t.command("clear_malfunction", role="supervisor")
    t.command("next_round")
    assert t.state in ("bets_open", "shuffling")

@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_pan9_box_sensors_failing_during_the_shake_hold_the_round_without_blaming_the_dealer(mode):
    # The sensors are neither the agitator nor the device that deals (261/96/M P3, P4): the
    # round is held before any card with the bets standing, and no shoe or shuffler failure
    # is ruled, whose remedy would send the supervisor to replace a device that works.
    t = table("super-pan-9", mode, box_sensors=True)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    t.handle_device(ev.Malfunction(device="sensors", ts=1.0, code=3, text="sensor fault"))
    assert t.state == "malfunction" and not rulings(t) and t.round.void is None
    # the throw that lands while the table is held is not dealt from
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    assert t.round.dice is None and kinds(t)[-1] == "irregular_event"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_closed" and t.round.bets_json() and not t.blocking_conditions()
    t.command("shake")                                  # the banker shakes again
    t.handle_device(ev.DiceResult(device="dice", ts=3.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing" and not rulings(t)


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_card_out_after_the_settlement_leaves_the_settled_round_standing_art_11_1(mode):
    # 89/2004 art. 11(1) voids a round whose cards were dealt out of order or in a wrong number
    # to a hand. Once every hand is open and settled, a card out of the device joins no hand
    # of the round: the result stands, and the card is journaled as an irregular event.
    t = q_round(mode)
    if mode == "shoe":
        draw(t, "As", "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc", "4h")
    else:
        hand(t, "As", "Ah", "Ad")
        hand(t, "Kd", "Ks", "Kc")
        hand(t, "2c", "3c", "4h")
    t.command("decide", box=1, decision="play")
    t.command("decide", box=3, decision="play")
    assert t.state == "settlement"
    before = nets(t)
    if mode == "shoe":
        draw(t, "5d")
    else:
        hand(t, "5d", "6d", "7d")
    assert t.state == "settlement" and t.round.void is None
    assert kinds(t)[-1] == "irregular_event" and "settled" in t.outbox[-1].data["reason"]
    t.command("confirm_result")
    assert t.state == "round_complete" and nets(t) == before


def test_misdeal_declared_by_croupier_voids_round():
    t = q_round()
    draw(t, "As", "Kd")
    t.command("misdeal")
    assert t.state == "round_void"
    assert rulings(t)[-1]["irregularity"] == "misdeal"


def test_door_left_open_blocks_next_round_until_closed():
    t = q_round("shuffler")
    hand(t, "As", "Ah", "Ad")
    hand(t, "Kd", "Ks", "Kc")
    hand(t, "Qc", "5d", "9h")
    t.command("decide", box=1, decision="fold")
    t.command("decide", box=3, decision="fold")
    t.command("confirm_result")
    t.handle_device(ev.DoorOpened(device="shuffler", ts=5.0))
    assert t.state == "round_complete"
    with pytest.raises(TablectlError, match="door_open"):
        t.command("next_round")
    t.handle_device(ev.DoorClosed(device="shuffler", ts=6.0))
    t.command("next_round")
    assert t.state == "shuffling"


# --- Fortune 3 Card Poker (78/2008) -----------------------------------------------------------

def fortune_round(mode="shoe"):
    t = table("fortune-3-card-poker", mode)
    t.command("place_bet", box=2, wager="ante", amount=10, player="ana")
    t.command("place_bet", box=2, wager="pair_plus", amount=5, player="ana")
    t.command("place_bet", box=4, wager="ante", amount=20, player="bo")
    return t


def test_fortune_play_equals_ante_and_settles_art_9():
    t = fortune_round()
    draw(t, "Ah", "2c", "Qs", "Kh", "7d", "Jd", "Qh", "4s", "3h")
    # box 2: A K Q of hearts (F1: straight flush by default or not, either wins); box 4: 2 7 4
    t.command("decide", box=2, decision="play", player="ana")
    assert t.round.bets[next(k for k in t.round.bets if k.wager == "play")] == 10  # art. 9(4)
    t.command("decide", box=4, decision="fold", player="bo")
    n = nets(t)
    assert n[(4, "ante")] == -20               # art. 9(3): folding loses the Ante
    assert n[(2, "pair_plus")] > 0             # art. 10: a flush at least
    assert n[(2, "ante")] > 0 and n[(2, "play")] > 0  # croupier Q J 3 qualifies and loses


def test_fortune_player_bets_only_on_own_box_art_6():
    t = fortune_round()
    with pytest.raises(TablectlError, match="own box"):
        t.command("place_bet", box=2, wager="ante", amount=10, player="cy")


def test_fortune_exposed_croupier_card_is_set_aside_and_replaced_art_11_2():
    t = fortune_round()
    draw(t, "2h", "3h")
    draw(t, "Ks", face_up=True)           # the croupier's first card, face up
    assert t.state == "dealing"
    r = rulings(t)[-1]
    assert r["remedy"] == "set_aside" and r["article"] == "78/2008 art. 11(2)"
    aside = [e.to_json() for e in t.outbox if e.kind == "card_set_aside"][-1]
    assert aside["cards"] == ["Ks"]
    draw(t, "Qd")                          # the croupier receives the next card instead
    draw(t, "4h", "5c", "9d", "6h", "7c", "Jc")
    assert t.state == "player_decisions"
    t.command("decide", box=2, decision="play", player="ana")
    t.command("decide", box=4, decision="play", player="bo")
    croupier = settlement(t)["hands"]["croupier"]["cards"]
    assert sorted(croupier) == sorted(["Qd", "9d", "Jc"])    # the set-aside K is not in it


def test_fortune_shuffler_malfunction_voids_round_art_11_4():
    t = fortune_round("shuffler")
    hand(t, "2h", "3h", "4h")
    t.handle_device(ev.Malfunction(device="shuffler", ts=1.0, code=7, text="motor"))
    assert t.state == "malfunction"
    assert t.round.void["article"] == "78/2008 art. 11(4)"



def test_q2_seated_player_decides_for_the_whole_box_at_the_table():
    t = table("q-poker", interpretations={"shared_box_decision": "seated_player"})
    t.command("place_bet", box=1, wager="versus_croupier", amount=10, player="ana")
    t.command("place_bet", box=1, wager="versus_croupier", amount=20, player="bo")
    t.command("place_bet", box=1, wager="pair_bonus", amount=5, player="cy")
    t.command("place_bet", box=3, wager="versus_croupier", amount=10)
    draw(t, "As", "2d", "Kd", "Ah", "3d", "Ks", "Ad", "7h", "Kc")
    assert t.state == "player_decisions"
    t.command("decide", box=1, decision="fold", player="ana")     # the seated player
    assert [d["box"] for d in t._pending_decisions()] == [3]
    with pytest.raises(TablectlError, match="binds the box"):
        t.command("decide", box=1, decision="play", player="bo")
    t.command("decide", box=3, decision="fold")
    assert t.state == "settlement"
    doc = settlement(t)
    versus = {w["player"]: w["net"] for w in doc["wagers"]
              if w["wager"] == "versus_croupier" and w["box"] == 1}
    assert versus == {"ana": -5, "bo": -10}                        # art. 9(3): both fold
    assert {w["player"]: w["net"] for w in doc["wagers"]
            if w["wager"] == "pair_bonus"} == {"cy": 150}          # art. 10: trips 30 to 1


# --- Super Pan 9 (261/96/M) -----------------------------------------------------------------

def pan9_round(mode="shoe"):
    t = table("super-pan-9", mode)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("place_bet", box=3, wager="seat", amount=50, player="bo")
    return t


def test_pan9_bets_close_at_the_shake_and_die_not_flat_reshakes_art_2():
    t = pan9_round()
    t.command("shake")
    assert t.state == "dice_shaking"
    assert t.commands[-1].action == "shake"
    for name, args in (("place_bet", {"box": 4, "wager": "seat", "amount": 10}),
                       ("remove_bet", {"box": 2, "wager": "seat"})):
        with pytest.raises(TablectlError, match=r"after the banker shakes the dice no bet may "
                           r"be placed, added to, removed or moved \(261/96/M art\. 2\(5\)\)"):
            t.command(name, **args)
    t.handle_device(ev.DieNotFlat(device="dice", ts=1.0, die=2))
    assert t.state == "dice_shaking"
    assert rulings(t)[-1]["remedy"] == "reshake"
    assert rulings(t)[-1]["article"] == "261/96/M art. 2(4)"
    assert [c.action for c in t.commands] == ["shake", "shake"]
    # Seats in play 1 (banker), 2, 3. Counter-clockwise from the banker: 1, 3, 2. Total 5, the
    # banker counted as one (P1 default): 1, 3, 2, 1, 3 -> seat 3 first; order 3, 2, 1.
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing"
    assert t.tracker.expected.deal.recipient.box == 3
    draw(t, "9s", "Kd", "2c", "3c", "4h", "2h")   # seat 3: 9; seat 2: 5; banker: 6
    assert t.state == "settlement"
    n = nets(t)
    assert n[(2, "seat")] == -100               # art. 7: 5 loses to 6
    assert 0 < n[(3, "seat")] <= 50              # art. 7 and 9: 9 wins, less commission


def test_pan9_shoe_failure_while_dealing_voids_round_p3():
    t = pan9_round()
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    draw(t, "9s")
    t.handle_device(ev.Jam(device="shoe", ts=3.0))
    assert t.state == "malfunction"
    assert "machine_failure" in t.round.void["article"]


def test_pan9_shuffler_two_card_hands():
    t = pan9_round("shuffler")
    t.handle_device(ev.ShakeStarted(device="dice", ts=0.5))    # the agitator's own button
    assert t.state == "dice_shaking"
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    hand(t, "9s", "Kd")
    hand(t, "2c", "3c")
    hand(t, "4h", "2h")
    assert t.state == "settlement"
    assert nets(t)[(2, "seat")] == -100



def test_pan9_the_agitator_shaking_before_a_banker_is_named_closes_nothing_art_2_2_5_3():
    # art. 5(3): the banker's capital is on the table before the dice are shaken; art. 2(2):
    # only the banker shakes. A shake from the agitator's own button with no banker named is
    # nobody's throw: betting stays open and the agitator is not blamed for its result.
    t = table("super-pan-9", "shuffler")
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.handle_device(ev.ShakeStarted(device="dice", ts=0.5))
    assert t.state == "bets_open"
    assert "bets_closed" not in kinds(t) and kinds(t)[-1] == "irregular_event"
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    assert t.state == "bets_open" and not t.conditions.get("dice")
    assert not rulings(t)
    t.command("place_bet", box=3, wager="seat", amount=50, player="bo")   # betting is open
    t.command("set_banker", seat=1, capital=1000)
    t.handle_device(ev.ShakeStarted(device="dice", ts=3.0))
    assert t.state == "dice_shaking"
    t.handle_device(ev.DiceResult(device="dice", ts=4.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing" and t.tracker.expected.deal.recipient.box == 3

def test_pan9_the_bankers_last_card_landing_on_his_seat_after_the_deal_is_no_irregularity():
    # Seats in play 1 (banker), 2, 3; total 5 from the banker (P1b): seat 3 first, then 2,
    # then the banker (art. 2(2)-(3)). The box sensor reports the banker's last card on his
    # own seat after the plan is complete: his seat is in play, and the round stands.
    t = table("super-pan-9", box_sensors=True)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("place_bet", box=3, wager="seat", amount=50, player="bo")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    for card, seat in (("9s", 3), ("Kd", 3), ("2c", 2), ("3c", 2), ("4h", 1), ("2h", 1)):
        draw(t, card)
        placed(t, seat)
    assert t.state == "settlement" and not rulings(t)
    assert kinds(t).count("card_placed") == 6
    assert nets(t)[(2, "seat")] == -100          # art. 7: 5 loses to the banker's 6
    t.command("confirm_result")
    assert t.state == "round_complete"


def test_a_card_on_a_seat_not_in_play_after_the_deal_is_still_ruled():
    t = table("super-pan-9", box_sensors=True)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    for card, seat in (("9s", 1), ("Kd", 1), ("2c", 2), ("3c", 2)):
        draw(t, card)
        placed(t, seat)
    assert t.state == "settlement" and not rulings(t)
    placed(t, 5)                                 # seat 5 is not in play
    assert rulings(t)[-1]["irregularity"] == "card_to_box_without_bet"

def test_pan9_p5_rectify_a_card_on_a_seat_not_in_play_is_put_on_its_seat():
    # P5 rectify: the croupier puts the card where the plan says (art. 2(3)): seat 3's first
    # card, fallen on seat 5, is seat 3's card; the deal goes on once the supervisor clears.
    t = table("super-pan-9", box_sensors=True, interpretations={"dealing_error": "rectify"})
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("place_bet", box=3, wager="seat", amount=50, player="bo")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    draw(t, "9s")
    placed(t, 5)
    assert rulings(t)[-1]["remedy"] == "rectify" and t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing"
    for card, seat in (("Kd", 3), ("2c", 2), ("3c", 2), ("4h", 1), ("2h", 1)):
        draw(t, card)
        placed(t, seat)
    assert t.state == "settlement" and len(rulings(t)) == 1
    hands = settlement(t)["hands"]
    assert hands["seat 3"]["cards"] == ["9s", "Kd"] and hands["seat 2"]["cards"] == ["2c", "3c"]
    assert nets(t)[(2, "seat")] == -100          # art. 7: 5 loses to the banker's 6

def test_pan9_the_banker_opens_his_hand_after_every_seat_art_5_6():
    t = table("super-pan-9")
    t.command("set_banker", seat=2, capital=1000)
    t.command("place_bet", box=1, wager="seat", amount=100, player="ana")
    t.command("place_bet", box=3, wager="seat", amount=50, player="bo")
    t.command("shake")
    # Seats in play 1, 2 (banker), 3; counter-clockwise from the banker 2, 1, 3. Total 4 with
    # the banker as one (P1b): 2, 1, 3, 2 -> the banker is dealt first; order 2, 1, 3.
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 1)))
    assert t.tracker.expected.deal.recipient.box == 2
    draw(t, "9s", "Kd", "2c", "3c", "4h", "2h")
    assert t.state == "settlement"
    opened = [e.to_json()["recipient"] for e in t.outbox if e.kind == "hand_revealed"]
    assert opened == ["box 1", "box 3", "box 2"]       # the players' hands, then the banker's


def shown(t):
    """The hands the table has shown, in the order it showed them."""
    return [e.data["recipient"] for e in t.outbox if e.kind in ("hand_opened", "hand_revealed")]


@settings(max_examples=40, deadline=None)
@given(banker=st.integers(1, 8), seats=st.sets(st.integers(1, 8), min_size=1, max_size=6),
       dice=st.tuples(*[st.integers(1, 6)] * 4), adjust=st.integers(-3, 5),
       mode=st.sampled_from(["shoe", "shuffler"]))
def test_pan9_the_table_shows_the_hands_in_the_order_the_game_gives_art_5_6(
        banker, seats, dice, adjust, mode):
    bettors = sorted(seats - {banker})
    assume(bettors)
    t = table("super-pan-9", mode)
    t.command("set_banker", seat=banker, capital=1000)
    if adjust:
        t.command("declare_adjust", points=adjust)
    for s in bettors:
        t.command("place_bet", box=s, wager="seat", amount=10)
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=1.0, dice=dice))
    deck = iter(full_deck())
    while t.state == "dealing":
        if mode == "shoe":
            draw(t, str(next(deck)))
        else:
            hand(t, str(next(deck)), str(next(deck)))
    assert t.state == "settlement"
    req = PlanRequest(boxes=tuple(bettors), mode=Mode(mode), layout_boxes=8, banker=banker,
                      dice=dice, adjust=adjust)
    assert shown(t) == [str(r) for r in t.game.reveal_order(req)]
    assert shown(t)[-1] == f"box {banker}"              # the banker opens last


@pytest.mark.parametrize("game,wager", [("q-poker", "versus_croupier"),
                                        ("fortune-3-card-poker", "ante")])
def test_three_card_hands_are_shown_in_the_order_the_game_gives_art_9(game, wager):
    t = table(game)
    for b in (6, 2, 4):
        t.command("place_bet", box=b, wager=wager, amount=10)
    draw(t, *(str(c) for c in full_deck()[:12]))
    for b in (2, 4, 6):
        t.command("decide", box=b, decision="play")
    assert t.state == "settlement"
    req = PlanRequest(boxes=(2, 4, 6), mode=Mode.SHOE, layout_boxes=7)
    assert shown(t) == [str(r) for r in t.game.reveal_order(req)]
    assert shown(t)[-1] == "croupier"                   # 89/2004, 78/2008 art. 9



def test_pan9_a_declaration_the_p12_refuse_reading_forbids_is_refused_when_declared():
    t = table("super-pan-9", interpretations={"adjusted_total": "refuse"})
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    with pytest.raises(TablectlError, match="subtract at most 3"):   # art. 2(3), P12
        t.command("declare_adjust", points=-5)
    assert t.round.adjust == 0
    t.command("declare_adjust", points=-3)
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(3, 4, 5, 6)))
    assert t.state == "dealing" and not rulings(t)        # a sound throw, nothing to rule
    assert t.conditions.get("dice", set()) == set()


# --- what is not legal never crashes ----------------------------------------------------------

def test_illegal_commands_change_nothing():
    t = q_round()
    before = (t.state, len(t.outbox), dict(t.round.bets))
    for name, role, args in [
        ("decide", "dealer", {"box": 1, "decision": "play"}),     # not in decisions yet
        ("place_bet", "dealer", {"box": 9, "wager": "pair_bonus", "amount": 5}),
        ("place_bet", "dealer", {"box": 1, "wager": "ante", "amount": 5}),
        ("place_bet", "dealer", {"box": 1, "wager": "pair_bonus", "amount": 2.5}),
        ("place_bet", "dealer", {"box": 1, "wager": "pair_bonus"}),
        ("void_round", "dealer", {"reason": "x"}),                # supervisor only
        ("shake", "dealer", {}),
        ("fly", "dealer", {}),
    ]:
        with pytest.raises(TablectlError):
            t.command(name, role=role, **args)
    assert (t.state, len(t.outbox), dict(t.round.bets)) == before


def test_device_events_out_of_place_are_irregular_events():
    t = q_round()
    t.handle_device(ev.DiceResult(device="dice", ts=0.0, dice=(1, 2, 3, 4)))
    t.handle_device(ev.HandDispensed(device="shuffler", ts=0.0, cards=()))
    t.handle_device(ev.CardPlaced(device="sensors", ts=0.0, box=2))
    assert t.state == "bets_open"
    assert kinds(t).count("irregular_event") == 3


def test_unexpected_error_lands_in_malfunction_with_round_void(monkeypatch):
    t = q_round()
    draw(t, "As", "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc", "4h")
    t.command("decide", box=1, decision="play")

    def broken(doc):
        raise RuntimeError("settlement bug")
    monkeypatch.setattr(t.game, "settle", broken)
    t.command("decide", box=3, decision="play")
    assert t.state == "malfunction"
    assert "controller_fault" in kinds(t) and t.round.void is not None
    # Every card was out: no dealing article applies, and none is cited.
    assert t.round.void["article"] == "controller"
    assert "after every card was out" in t.round.void["reason"]


def test_unexpected_error_while_dealing_is_the_games_machine_failure(monkeypatch):
    t = q_round()
    draw(t, "As", "Kd")
    assert t.state == "dealing"

    def broken(*args):
        raise RuntimeError("vault bug")
    monkeypatch.setattr(t.vault, "deal", broken)
    draw(t, "2c")
    assert t.state == "malfunction" and "controller_fault" in kinds(t)
    # Cards were still to come: 89/2004 art. 11(5), as for a machine failure while dealing.
    assert t.round.void["article"] == "89/2004 art. 11(5)"
    assert t.round.void["remedy"] == "round_void"


def test_no_automatic_shortcuts():
    t = q_round()
    assert not any(hasattr(t, f"to_{s}") for s in STATES)


def _identity():
    return ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)


def test_pan9_rectify_reading_keeps_the_deal_after_a_shoe_failure():
    t = table("super-pan-9", interpretations={"machine_failure": "rectify"})
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100)
    t.command("shake")
    # In play 1 (banker) and 2; counting 4 from the banker (one): 1, 2, 1, 2 -> seat 2 first.
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 1)))
    draw(t, "9s")
    t.handle_device(ev.Jam(device="shoe", ts=3.0))
    assert t.state == "malfunction" and t.round.void is None
    assert rulings(t)[-1]["remedy"] == "rectify"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing" and t.round.round_id == 1
    draw(t, "Kd", "2c", "3c")
    assert t.state == "settlement"
    assert nets(t)[(2, "seat")] == 95          # seat 2 has 9, the banker 5; art. 9: 5 %


def test_pan9_dice_agitator_failure_reshakes_after_repair_p4():
    t = pan9_round()
    t.command("shake")
    t.handle_device(ev.Malfunction(device="dice", ts=1.0, code=3, text="motor"))
    assert t.state == "malfunction" and t.round.void is None
    assert rulings(t)[-1]["remedy"] == "reshake"
    assert [c.action for c in t.commands] == ["shake"]          # no shake into a broken cup
    with pytest.raises(TablectlError):
        t.command("shake")                                        # not before the supervisor
    t.command("clear_malfunction", role="supervisor")             # repaired or replaced
    assert t.state == "bets_closed"
    with pytest.raises(TablectlError):                          # art. 2(5): bets stay closed
        t.command("place_bet", box=4, wager="seat", amount=10)
    t.command("shake")
    assert t.state == "dice_shaking"


def test_cards_the_device_could_not_read_are_entered_at_the_reveal():
    t = table("q-poker", "shuffler")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("close_bets")
    t.handle_device(ev.HandDispensed(device="shuffler", ts=0.0, cards=(None, None, None)))
    t.handle_device(ev.HandDispensed(device="shuffler", ts=0.0, cards=(None, None, None)))
    t.command("decide", box=1, decision="play")
    assert t.state == "croupier_reveal"
    needed = [e.to_json() for e in t.outbox if e.kind == "cards_needed"][-1]
    assert needed["recipients"] == ["box 1", "croupier"]
    with pytest.raises(TablectlError, match="exactly 3"):
        t.command("enter_cards", recipient="box 1", cards=["As", "Ah"])
    t.command("enter_cards", recipient="box 1", cards=["As", "Ah", "Ad"])
    with pytest.raises(TablectlError, match="already"):
        t.command("enter_cards", recipient="croupier", cards=["As", "2c", "3d"])
    t.command("enter_cards", recipient="croupier", cards="Kc Kd 2h")
    assert t.state == "settlement"
    assert nets(t)[(1, "versus_croupier")] == 20     # art. 9(7)(2): trips beat a pair, 2 to 1


def test_q_poker_players_sharing_a_box_decide_each_for_himself_q2():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10, player="ana")
    t.command("place_bet", box=1, wager="versus_croupier", amount=20, player="bo")
    draw(t, "As", "2c", "Ah", "3c", "Ad", "5d")          # box 1: three aces; croupier 5 high
    pending = [e.to_json() for e in t.outbox if e.kind == "decisions_open"][-1]["pending"]
    assert [p["player"] for p in pending] == ["ana", "bo"]
    t.command("decide", box=1, decision="play", player="ana")
    with pytest.raises(TablectlError, match="irrevocable"):
        t.command("decide", box=1, decision="fold", player="ana")      # art. 9(3)
    t.command("decide", box=1, decision="fold", player="bo")
    by_player = {w["player"]: w["net"] for w in settlement(t)["wagers"]}
    assert by_player == {"ana": 5, "bo": -10}   # art. 9(5): half paid; art. 9(3): half lost


def test_a_command_with_arguments_missing_or_unknown_is_refused_and_changes_nothing():
    t = table("q-poker")
    before = (t.state, t.public_view())
    with pytest.raises(TablectlError, match=r"place_bet needs wager, amount; it takes box, "
                       r"wager, amount and, if wanted, player, seated$"):
        t.command("place_bet", box=1)
    # A list or a number where the table takes a name (a wager, a player, a reason): before,
    # the handler failed on it, which is a controller fault and voids a round in play.
    for bad in ({"wager": ["versus_croupier"]}, {"wager": 7}, {"player": {"name": "A"}}):
        args = {"box": 1, "wager": "versus_croupier", "amount": 10, **bad}
        with pytest.raises(TablectlError, match=rf"place_bet: {next(iter(bad))} must be text"):
            t.command("place_bet", **args)
    with pytest.raises(TablectlError, match=r"unexpected colour"):
        t.command("place_bet", box=1, wager="versus_croupier", amount=10, colour="red")
    with pytest.raises(TablectlError, match=r"needs the supervisor role"):
        t.command("open_table", role="dealer")
    assert (t.state, t.public_view()) == before and not t.outbox[-1].kind == "malfunction"
    t.command("place_bet", box=1, wager="versus_croupier", amount=10, player=None)  # taken
    assert t.public_view() != before[1]


def test_clear_malfunction_refused_by_an_integrity_stop_changes_nothing():
    """A clear that would begin the next round while a deck alarm stops the table is refused;
    the jam stays and nothing is published as cleared."""
    from controller.integrity.alarms import Alarm, AlarmKind

    t = table("q-poker", integrity_action="stop")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As")
    t.handle_device(ev.Jam(device="shoe", ts=1.0, where="exit"))
    assert t.state == "malfunction" and t.round.void is not None
    t.gate.raise_alarms([Alarm(AlarmKind.MISSING_CARD, "deck 1: 7h missing")])
    t.outbox.clear()
    with pytest.raises(TablectlError, match="clear_integrity"):
        t.command("clear_malfunction", role="supervisor")
    assert t.state == "malfunction" and t.conditions["shoe"] == {"jam"}
    assert kinds(t) == []
    t.command("clear_integrity", role="supervisor", supervisor="S. Lam")
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "shuffling" and t.conditions["shoe"] == set()


def test_unexpected_error_while_betting_keeps_the_round_and_its_bets(monkeypatch):
    """No card is out: the round is not void, and once the supervisor clears the malfunction
    betting reopens on the same round with its bets, rather than a new round without them."""
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)

    def broken(*args):
        raise RuntimeError("tracker bug")
    monkeypatch.setattr(t, "_make_tracker", broken)
    draw(t, "As")
    assert t.state == "malfunction" and "controller_fault" in kinds(t)
    assert t.round.void is None
    monkeypatch.undo()
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open" and t.round.round_id == 1
    assert t.round.bets_json() == [{"box": 1, "wager": "versus_croupier", "player": None,
                                    "amount": 10}]


def test_exposed_card_button_before_the_rounds_first_card_says_none_is_dealt():
    """Super Pan 9 is dealing once the dice are read, before any card is out. The panel's
    exposed_card button then has no card to name, whatever the last round dealt."""
    from controller.inputs import ButtonPressed

    t = table("super-pan-9")

    def to_dealing():
        t.command("set_banker", seat=1, capital=1000)
        t.command("place_bet", box=2, wager="seat", amount=100)
        t.command("shake")
        t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 1)))

    to_dealing()
    draw(t, "9s", "Kd", "2c", "3c")
    t.command("confirm_result")
    t.command("next_round")
    ready(t)
    to_dealing()
    assert t.state == "dealing"
    t.outbox.clear()
    t.handle_device(ButtonPressed(device="panel", ts=3.0, button="exposed_card"))
    assert kinds(t) == ["irregular_event"]
    assert t.outbox[0].to_json()["reason"] == "no card dealt yet: nothing can be exposed"



def _holdem_showdown_with_an_unread_hole_card():
    """Hold'em from the shoe: seat 3 folds Kc Kd, seat 1's second hole card is unread, the
    burn cards 5h, 6h and 8h stay face down; the showdown waits for the unread card."""
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10, "rake": 0})
    t.command("seat_players", seats=[1, 3, 6], stacks={"1": 500, "3": 500, "6": 500},
              button=1)
    shoe = lambda c: t.handle_device(ev.CardDrawn(device="shoe", ts=0.0,
                                                  card=None if c is None else Card.parse(c)))
    for c in ("Kc", "Qd", "As", "Kd", "Qc", None):        # 3, 6, 1, 3, 6, 1
        shoe(c)
    t.command("holdem_action", seat=1, action="call")
    t.command("holdem_action", seat=3, action="fold")
    t.command("holdem_action", seat=6, action="check")
    for street in (("5h", "Ah", "Qs", "3d"), ("6h", "9c"), ("8h", "Jd")):
        draw(t, street[0])                                # the burn, face down
        draw(t, *street[1:], face_up=True)
        t.command("holdem_action", seat=6, action="check")
        t.command("holdem_action", seat=1, action="check")
    assert t.state == "croupier_reveal"
    return t


@pytest.mark.parametrize("hidden,where", [("Kd", "box 3"), ("6h", "burn")])
def test_a_card_entered_that_a_face_down_card_is_is_taken_and_journaled_only(hidden, where):
    # Refusing it would tell the console a card of a folded hand or a burn card, which are
    # never shown.
    t = _holdem_showdown_with_an_unread_hole_card()
    t.outbox.clear()
    t.command("enter_cards", recipient="box 1", cards=[hidden])
    assert t.state == "settlement"
    published = json.dumps([e.to_json() for e in t.outbox])
    assert not any(c in published for c in {"Kc", "Kd", "5h", "6h", "8h"} - {hidden})
    assert "integrity_alarm" not in kinds(t) and "duplicate" not in published
    # The journal alone holds the conflict, naming the card and where it was read; it is
    # journaled when the round ends (the journal is read out while the round is open).
    assert not t.private_records
    t.command("confirm_result")
    conflict = [r for r in t.private_records if r.get("kind") == "duplicate_card"]
    assert len(conflict) == 1 and conflict[0]["cards"] == [hidden]
    assert where in conflict[0]["message"] and "face down" in conflict[0]["message"]


def test_a_card_entered_that_is_already_face_up_is_refused():
    t = _holdem_showdown_with_an_unread_hole_card()
    with pytest.raises(TablectlError, match="already face up"):
        t.command("enter_cards", recipient="box 1", cards=["Ah"])      # on the board
    assert t.state == "croupier_reveal" and not t.private_records


def test_a_failure_while_the_croupier_shuffles_for_the_shoe_goes_back_to_shuffling():
    # The deck was never declared ready: after the clear the croupier still declares it, so
    # no bet is taken on a deck nobody said was ready, and the integrity monitor starts the
    # new deck then.
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As")
    t.handle_device(ev.Jam(device="shoe", ts=1.0, where="exit"))
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "shuffling" and t.round.round_id == 2
    t.handle_device(ev.DoorOpened(device="shoe", ts=2.0))
    assert t.state == "malfunction"
    t.handle_device(ev.DoorClosed(device="shoe", ts=3.0))
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "shuffling" and t.round.round_id == 2
    with pytest.raises(TablectlError):
        t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("deck_ready")
    assert t.state == "bets_open" and t.round.round_id == 2


def test_a_name_given_as_a_list_during_the_deal_does_not_void_the_round():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "2c", "Ah")
    with pytest.raises(TablectlError, match="recipient must be text"):
        t.command("exposed_card", recipient=["box", 1])
    assert t.state == "dealing" and t.round.void is None


@pytest.mark.parametrize("dice", [(), (0, 0, 0, 0), (1, 2, 3), (7, 1, 1, 1)])
def test_pan9_dice_no_throw_shows_are_the_agitators_failure_p4(dice):
    # 261/96/M art. 1(2): four dice of 1 to 6. Before, the reading was shown on the display
    # as the throw and kept as the round's dice, and the round waited for nothing.
    t = pan9_round()
    t.command("shake")
    t.outbox.clear()
    t.handle_device(ev.DiceResult(device="dice", ts=1.0, dice=dice))
    assert "dice" not in kinds(t) and t.round.dice is None
    assert t.state == "malfunction" and t.round.void is None
    assert rulings(t)[-1]["remedy"] == "reshake"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_closed"
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(3, 5, 1, 6)))
    assert t.state == "dealing" and t.round.dice == (3, 5, 1, 6)


def test_a_name_or_reason_that_spells_a_card_is_refused_and_voids_nothing():
    # A player known by his initials, "Jc", was published with his bet; a field spelling a
    # card is refused as a face-down card would be, so the table faulted (and during the
    # deal, voided the round). It is refused at the command now, with nothing changed.
    t = table("q-poker")
    before = t.public_view()
    with pytest.raises(TablectlError, match=r'player "Jc" reads as a card.*"J\.c\."'):
        t.command("place_bet", box=1, wager="versus_croupier", amount=10, player="Jc")
    assert t.state == "bets_open" and t.public_view() == before
    t.command("place_bet", box=1, wager="versus_croupier", amount=10, player="J.C.")
    draw(t, "As", "2c", "Ah", "3c", "Ad", "5d")
    with pytest.raises(TablectlError, match='reason "10h" reads as a card'):
        t.command("void_round", role="supervisor", reason="10h")
    assert t.state == "player_decisions" and t.round.void is None
    # a card inside it would be masked in every message quoting it (tests/test_table_card_words.py)
    with pytest.raises(TablectlError, match=r'reason "\[card\] exposed" holds a word'):
        t.command("void_round", role="supervisor", reason="10h exposed")
    t.command("void_round", role="supervisor", reason="10.h. exposed")
    assert t.round.void is not None



@pytest.mark.parametrize("text, code", [("\x00", "U+0000"), ("\u202e", "U+202E"),
                                        ("\u200b", "U+200B"), ("\x1b[2J", "U+001B")])
@pytest.mark.parametrize("command, param", [("void_round", "reason"),
                                            ("clear_integrity", "supervisor")])
def test_a_reason_or_a_name_with_a_control_character_is_refused_naming_it(command, param,
                                                                          text, code):
    """A void's reason and the supervisor who checked the deck are journaled and shown on the
    pit display. A NUL, an escape, a zero-width space or a right-to-left override (which makes
    the display show the text reversed) were taken as they were; a player's name already
    refused them. Refused now, naming the character, and nothing changes."""
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "2c")
    before = (t.state, t.public_view())
    t.outbox = []
    with pytest.raises(TablectlError) as refused:
        t.command(command, role="supervisor", **{param: f"checked{text}by Ana"})
    message = str(refused.value)
    assert param in message and code in message and "printable" in message
    assert (t.state, t.public_view()) == before and t.outbox == []
    t.command(command, role="supervisor", **{param: "checked by Ana"})



def test_removing_a_bet_that_is_not_there_names_the_bets_that_are():
    """"there is no pair_bonus bet on box 1" said what was wrong but not what to give: the bet
    may be a player's, or on another wager."""
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10, player="ana")
    t.command("place_bet", box=1, wager="pair_bonus", amount=5)
    before = t.public_view()
    with pytest.raises(TablectlError) as refused:
        t.command("remove_bet", box=1, wager="versus_croupier")
    assert str(refused.value) == ("there is no versus_croupier bet on box 1; box 1 holds "
                                  'versus_croupier of "ana", pair_bonus')
    with pytest.raises(TablectlError, match="box 2 holds no bet"):
        t.command("remove_bet", box=2, wager="pair_bonus")
    assert t.public_view() == before
    t.command("remove_bet", box=1, wager="versus_croupier", player="ana")


# --- Super Pan 9: the bank's turn (261/96/M art. 5(1), 5(4)) -------------------------------

def pan9_banked(t, seat=1, capital=1000, banker_wins=True, run=None, bettor=2, **banker_args):
    """One whole Super Pan 9 round banked by ``seat``; ``bettor`` bets 100. The banker holds
    4h 2h (6 points) against the bettor's 2c 3c (5: the bank wins 100, 95 after the 5 %
    commission of art. 9, P8 floor) or 9s Kd (9: the bank loses 100). ``run``: a TableRunner
    driving ``t``."""
    command = run.command if run is not None else t.command
    device = run.device if run is not None else t.handle_device
    command("set_banker", seat=seat, capital=capital, **banker_args)
    command("place_bet", box=bettor, wager="seat", amount=100, player="ana")
    command("shake")
    device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 2)))
    for _ in range(2):                  # two consecutive cards a seat (art. 2(3))
        who = t.tracker.expected.deal.recipient.box
        cards = ("4h", "2h") if who == seat else (("2c", "3c") if banker_wins else ("9s", "Kd"))
        for c in cards:
            device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c), face_up=False))
    assert t.state == "settlement"
    command("confirm_result")
    command("next_round")
    if t.state == "shuffling":
        command("deck_ready")
    assert t.state == "bets_open"


def test_pan9_a_seat_banks_two_rounds_in_a_row_unless_every_player_agrees_art_5_1():
    t = table("super-pan-9")
    pan9_banked(t, banker_wins=False)
    pan9_banked(t, banker_wins=False)
    events = len(t.outbox)
    with pytest.raises(TablectlError, match=r"seat 1 has banked two rounds in a row "
                       r"\(261/96/M art\. 5\(1\)\); pass the bank counter-clockwise, or give "
                       r"all_agree=true when every player agrees"):
        t.command("set_banker", seat=1, capital=1000)
    assert t.round.banker is None and t.round.capital is None and len(t.outbox) == events
    with pytest.raises(TablectlError, match="all_agree must be true or false"):
        t.command("set_banker", seat=1, capital=1000, all_agree="yes")
    # every player agrees: a third round, and each further one needs the agreement again
    pan9_banked(t, all_agree=True, banker_wins=False)
    assert t.public_view()["bank_turn"]["rounds"] == 3
    with pytest.raises(TablectlError, match=r"art\. 5\(1\)"):
        t.command("set_banker", seat=1, capital=1000)
    # the bank passed on: to a player who bet in the previous round (art. 5(2))
    t.command("set_banker", seat=2, capital=1000)
    assert t.round.banker == 2


def test_pan9_the_bank_passed_on_and_back_starts_a_new_turn_art_5_1():
    t = table("super-pan-9")
    pan9_banked(t)
    pan9_banked(t, capital=1095)
    pan9_banked(t, seat=2, bettor=1, banker_wins=False)   # seat 2 bet in the last round
    pan9_banked(t, seat=1, capital=200)                # a new turn: no floor from the old one
    assert t.public_view()["bank_turn"] == {"seat": 1, "rounds": 1, "first_capital": 200,
                                            "first_net": 95, "capital_floor": 295,
                                            "may_keep": True, "takers": [2]}


def test_pan9_the_bank_given_up_passes_to_a_player_who_bet_in_the_previous_round_art_5_2():
    t = table("super-pan-9")
    pan9_banked(t, seat=4, bettor=2)
    pan9_banked(t, seat=4, bettor=7, capital=1095)      # the previous round: seat 7 bet
    assert t.public_view()["bank_turn"]["takers"] == [7]
    events = len(t.outbox)
    for seat in (3, 2, 8):                              # no bet in the previous round
        with pytest.raises(TablectlError, match=rf"seat {seat} did not bet in the previous "
                           r"round: .*\(261/96/M art\. 5\(2\)\); seats that may take it, in "
                           r"turn: 7"):
            t.command("set_banker", seat=seat, capital=1000)
    assert t.round.banker is None and len(t.outbox) == events
    t.command("set_banker", seat=7, capital=1000)       # seats 3 to 8 before it declined
    assert t.round.banker == 7
    # every player declined and the table closes: when it opens again any seat may bank
    t.command("close_table", role="supervisor")
    t.command("open_table", role="supervisor")
    ready(t)
    assert t.public_view()["bank_turn"]["takers"] is None
    t.command("set_banker", seat=3, capital=1000)
    assert t.round.banker == 3


def test_pan9_p11_when_passed_the_first_occupied_seat_in_turn_needs_no_bet_art_5_2():
    t = table("super-pan-9", interpretations={"bank_requires_previous_bet": "when_passed"})
    pan9_banked(t, seat=4, bettor=1)
    # counter-clockwise from seat 4: 3, 2, 1. Seat 3 (or 2, seat 3 being empty) may take the
    # bank as the first occupied seat in turn; past seat 1, who bet, only a bettor may.
    t.command("set_banker", seat=3, capital=1000)
    t.command("set_banker", seat=2, capital=1000)
    with pytest.raises(TablectlError, match=r"art\. 5\(2\)"):
        t.command("set_banker", seat=8, capital=1000)
    t.command("set_banker", seat=1, capital=1000)
    assert t.round.banker == 1


def test_pan9_a_void_round_is_not_a_round_banked_art_5_1():
    t = table("super-pan-9")
    pan9_banked(t, banker_wins=False)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("void_round", role="supervisor", reason="a player disputes the shake")
    t.command("next_round")
    ready(t)
    assert t.public_view()["bank_turn"]["rounds"] == 1
    pan9_banked(t, banker_wins=False)                   # the turn's second round
    with pytest.raises(TablectlError, match=r"two rounds in a row"):
        t.command("set_banker", seat=1, capital=1000)


def test_pan9_a_banker_who_won_keeps_capital_and_winnings_on_the_table_art_5_4():
    t = table("super-pan-9")
    pan9_banked(t, capital=1000)                        # the bank wins 100, 95 after commission
    assert settlement_before_last(t)["bank"][0]["net"] == 95
    events = len(t.outbox)
    with pytest.raises(TablectlError, match=r"capital 500 is less than 1095 = 1000 \+ winnings "
                       r"95 \(261/96/M art\. 5\(4\)\); put at least 1095"):
        t.command("set_banker", seat=1, capital=500)
    for low in (1000, 1094):
        with pytest.raises(TablectlError, match="at least 1095"):
            t.command("set_banker", seat=1, capital=low)
    with pytest.raises(TablectlError, match="at least 1095"):      # agreement is on rounds only
        t.command("set_banker", seat=1, capital=1094, all_agree=True)
    assert t.round.banker is None and t.round.capital is None and len(t.outbox) == events
    t.command("set_banker", seat=1, capital=1095)
    t.command("set_banker", seat=1, capital=2000)       # he may add
    assert (t.round.banker, t.round.capital) == (1, 2000)
    t.command("set_banker", seat=2, capital=500)        # another seat: a turn of its own
    assert (t.round.banker, t.round.capital) == (2, 500)


def settlement_before_last(t):
    return [e.to_json() for e in t.outbox if e.kind == "settlement"][-1]


def test_pan9_after_a_first_round_lost_the_text_sets_no_floor_art_5_4():
    t = table("super-pan-9")
    pan9_banked(t, capital=1000, banker_wins=False)     # the bank loses 100
    assert t.public_view()["bank_turn"]["capital_floor"] is None
    pan9_banked(t, capital=300)
    # after the second round the turn is over: no floor is carried into a third
    assert t.public_view()["bank_turn"] == {"seat": 1, "rounds": 2, "first_capital": 1000,
                                            "first_net": -100, "capital_floor": None,
                                            "may_keep": False, "takers": [2]}


def test_pan9_the_bank_turn_is_in_the_snapshot_and_comes_back_with_it():
    from controller.rules import get_game
    from controller.table import Table
    from table_helpers import DEVICES
    t = table("super-pan-9")
    pan9_banked(t, capital=1000)
    snap = json.loads(json.dumps(t.snapshot()))
    t2 = Table("T1", get_game("super-pan-9"), "shoe", layout_boxes=8, devices=DEVICES)
    t2.restore(snap)
    with pytest.raises(TablectlError, match="at least 1095"):
        t2.command("set_banker", seat=1, capital=500)
    with pytest.raises(TablectlError, match=r"art\. 5\(2\)"):
        t2.command("set_banker", seat=3, capital=1000)
    pan9_banked(t2, capital=1095)
    with pytest.raises(TablectlError, match="two rounds in a row"):
        t2.command("set_banker", seat=1, capital=1000)


def test_pan9_the_bank_turn_is_rebuilt_from_the_journal_and_a_refusal_journaled(tmp_path):
    from controller.journal import Journal
    from controller.rules import get_game
    from controller.table import Table
    from controller.table.runner import TableRunner
    from table_helpers import DEVICES

    def runner():
        t = Table("T1", get_game("super-pan-9"), "shoe", layout_boxes=8, devices=DEVICES)
        return TableRunner(t, Journal.open(tmp_path / "j.db", "T1"))
    run = runner()
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    pan9_banked(run.table, capital=1000, run=run)       # won: 95 after commission
    pan9_banked(run.table, capital=1095, run=run)
    run.command("set_banker", seat=2, capital=1000)
    run.journal.close()                                 # the process dies here
    run = runner()
    run.recover()
    assert run.table.round.banker == 2
    assert run.table.public_view()["bank_turn"]["rounds"] == 2
    before = len(run.journal)
    with pytest.raises(TablectlError, match="two rounds in a row"):
        run.command("set_banker", seat=1, capital=1000)
    recs = list(run.journal.records(since=before))
    assert [r.kind for r in recs] == ["command", "refused"]
    assert "5(1)" in recs[-1].payload["error"]
    assert run.table.round.banker == 2

# --- a player's name on a shared box ----------------------------------------------------------

@pytest.mark.parametrize("name", ["", "   ", "box 1", "Box 1", "ana\x00", "ana\n"])
def test_a_player_name_the_settlement_could_not_tell_apart_is_refused(name):
    """The settlement names a box's unnamed bets "box N": a player named so, or with no name
    at all, would be paid under the same name as the box's own bets."""
    t = table("q-poker", "shoe")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    with pytest.raises(TablectlError, match="player") as info:
        t.command("place_bet", box=1, wager="versus_croupier", amount=20, player=name)
    assert "name" in str(info.value)
    assert [(k.box, k.player, v) for k, v in t.round.bets.items()] == [(1, None, 10)]
    t.command("place_bet", box=1, wager="versus_croupier", amount=20, player="ana")
    assert len(t.round.bets) == 2



def test_an_adjustment_the_count_refuses_is_refused_when_declared_not_blamed_on_the_dice():
    """With adjusted_total=refuse, -10 leaves every throw below 1: it used to be taken, and
    each throw then reported as a failure of the dice agitator, the table in malfunction."""
    t = table("super-pan-9", "shoe", interpretations={"adjusted_total": "refuse"})
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=10)
    with pytest.raises(TablectlError, match="adjusted_total=refuse"):
        t.command("declare_adjust", points=-10)
    assert t.round.adjust in (None, 0) and t.state == "bets_open"
    t.command("declare_adjust", points=-3)              # the lowest throw, 4, still counts 1
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing"


@pytest.mark.parametrize("cards", [None, 5, 1.5, True, {"As": 1}])
def test_cards_entered_as_anything_but_text_or_a_list_are_refused_not_a_fault(cards):
    """A number where the cards go failed inside the table: a controller fault, which voided
    the round after every card was out and returned the bets the players had won."""
    t = table("q-poker", "shuffler")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("close_bets")
    t.handle_device(ev.HandDispensed(device="shuffler", ts=0.0, cards=(None, None, None)))
    t.handle_device(ev.HandDispensed(device="shuffler", ts=0.0, cards=(None, None, None)))
    t.command("decide", box=1, decision="play")
    with pytest.raises(TablectlError, match="cards"):
        t.command("enter_cards", recipient="box 1", cards=cards)
    assert t.state == "croupier_reveal" and t.round.void is None
    assert "controller_fault" not in kinds(t)
    t.command("enter_cards", recipient="box 1", cards=["As", "Ah", "Ad"])
    t.command("enter_cards", recipient="croupier", cards="Kc Kd 2h")
    assert t.state == "settlement"


def test_switching_to_a_mode_whose_device_the_table_lacks_is_refused():
    """With no shuffler configured, a switch to it opened the table in shuffling, waiting for
    a shuffle nothing would ever report (the daemon logs "no device for command")."""
    from controller.rules import get_game
    from controller.table import Table
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices={"shoe": "shoe"})
    with pytest.raises(TablectlError, match="no shuffler") as info:
        t.command("switch_mode", role="supervisor", mode="shuffler")
    assert "[devices" in str(info.value)
    assert t.mode.value == "shoe"
    t.command("open_table", role="supervisor")
    assert t.state == "shuffling" and t.mode.value == "shoe"


@pytest.mark.parametrize("reason", ["", "   ", "\n\t"])
def test_a_void_needs_a_reason_with_words_in_it(reason):
    t = q_round()
    with pytest.raises(TablectlError, match="give the reason"):
        t.command("void_round", role="supervisor", reason=reason)
    assert t.state == "bets_open" and t.round.void is None


@pytest.mark.parametrize("first, second", [("ana", None), (None, "ana")])
def test_fortune_a_box_holds_one_player_named_or_not_art_6(first, second):
    """A named bet and an unnamed one on one box were both taken (the other order named the
    owner "None"): the box then needed two decisions and the round could not be settled,
    the table stopped in malfunction with only a void left."""
    t = table("fortune-3-card-poker", "shoe")
    t.command("place_bet", box=2, wager="ante", amount=10, player=first)
    with pytest.raises(TablectlError, match="78/2008 art. 6") as info:
        t.command("place_bet", box=2, wager="ante", amount=30, player=second)
    assert "None" not in str(info.value)
    assert [(k.player, v) for k, v in t.round.bets.items()] == [(first, 10)]
    t.command("place_bet", box=2, wager="pair_plus", amount=5, player=first)   # his own
    draw(t, "Ah", "Qs", "Kh", "Jd", "Qh", "4s")
    t.command("decide", box=2, decision="play", **({"player": first} if first else {}))
    assert t.state == "settlement"


# --- Q Poker and Super Pan 9 where features combine ---------------------------------------------

def _pan9_dice_read(mode="shoe", **kw):
    """Seats in play 1 (banker), 2 and 3; a total of 5 from the banker (P1b): seat 3 first,
    then 2, then the banker (art. 2(2)-(3))."""
    t = table("super-pan-9", mode, **kw)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("place_bet", box=3, wager="seat", amount=50, player="bo")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing" and t.vault.slots() == 0
    return t


def test_pan9_a_shoe_failure_after_the_dice_before_the_first_card_keeps_the_round_p3():
    # P3: "Before the first card or after the last, either way the round goes on and the
    # device is replaced." The dice are read, so the table is dealing, but no card is out:
    # the shoe sends its events in order, so every card drawn before the jam was reported.
    t = _pan9_dice_read()
    t.handle_device(ev.Jam(device="shoe", ts=3.0))
    assert t.state == "malfunction" and t.round.void is None
    assert rulings(t)[-1]["remedy"] == "continue"
    assert rulings(t)[-1]["article"] == "261/96/M interpretation P3 (machine_failure)"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing" and t.round.round_id == 1
    draw(t, "9s", "Kd", "2c", "3c", "4h", "2h")      # seat 3: 9; seat 2: 5; banker: 6
    assert nets(t)[(2, "seat")] == -100                 # art. 7: 5 loses to 6


def test_pan9_a_restart_after_the_dice_while_dealing_from_the_shoe_voids_the_round_p3():
    # A card the croupier drew while the controller was down is still on its way: the shoe
    # sends it again after the restart. The table cannot know that no card is out, so the
    # restart is a failure while dealing (P3 round_void), not one before the first card.
    t = _pan9_dice_read()
    t.apply({"source": "restart"})
    assert t.round.void is not None
    assert t.round.void["article"] == "261/96/M interpretation P3 (machine_failure)"


def test_pan9_a_shuffler_failure_after_the_dice_before_a_hand_is_out_keeps_the_round_p3():
    # The shuffler refused the first hand as busy: no hand is on its way, so no card can be
    # out when it then fails (P3: the round goes on; its deck is shuffled again once fixed).
    t = _pan9_dice_read("shuffler")
    assert t.commands[-1].action == "dispense_hand"
    t.handle_device(ev.CommandRefused(device="shuffler", ts=2.5, action="dispense_hand",
                                      reason="busy"))
    t.handle_device(ev.Malfunction(device="shuffler", ts=3.0, code=7, text="motor"))
    assert t.state == "malfunction" and t.round.void is None
    assert rulings(t)[-1]["remedy"] == "continue"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing" and t.commands[-1].action in ("deck_check", "shuffle")
    if t.commands[-1].action == "deck_check":
        t.handle_device(deck_checked(3.5))          # the check answers before the shuffle
    t.handle_device(ev.ShuffleDone(device="shuffler", ts=4.0, count=52))
    assert t.commands[-1].action == "dispense_hand"
    hand(t, "9s", "Kd")
    hand(t, "2c", "3c")
    hand(t, "4h", "2h")
    assert nets(t)[(2, "seat")] == -100                 # art. 7: 5 loses to the banker's 6


def test_pan9_a_shuffler_failure_once_a_hand_is_asked_voids_the_round_p3():
    # A hand asked of the shuffler may be out: that is dealing (P3 round_void).
    t = _pan9_dice_read("shuffler")
    assert t.commands[-1].action == "dispense_hand"
    t.handle_device(ev.Malfunction(device="shuffler", ts=3.0, code=7, text="motor"))
    assert t.state == "malfunction" and t.round.void is not None


def test_pan9_the_points_declared_before_the_first_shake_stand_for_the_reshake_art_2_3():
    # Art. 2(3): the points are declared before the dice are shaken; a reshake (art. 2(4),
    # P4) shakes the same throw again, so the declaration cannot change once shaken.
    t = pan9_round()
    t.command("declare_adjust", points=2)
    t.command("shake")
    t.handle_device(ev.Malfunction(device="dice", ts=1.0, code=3, text="motor"))
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_closed"
    events = len(t.outbox)
    with pytest.raises(TablectlError, match=r"declared before the dice are shaken "
                       r"\(261/96/M art\. 2\(3\)\).*\+2 stands"):
        t.command("declare_adjust", points=-1)
    assert t.round.adjust == 2 and len(t.outbox) == events
    t.command("shake")
    # 4 + 2 = 6 from the banker (one): 1, 3, 2, 1, 3, 2 -> seat 2 first
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 1)))
    assert t.tracker.expected.deal.recipient.box == 2


def test_pan9_points_may_be_declared_after_close_bets_before_the_shake_art_2_3():
    t = pan9_round()
    t.command("close_bets")
    t.command("declare_adjust", points=-1)
    assert t.round.adjust == -1


def test_q_poker_a_boxs_last_card_landing_on_a_box_without_a_bet_after_the_deal_art_11():
    # Box 3's third card is drawn before the croupier's, and the sensor sees it land on box 2
    # (no bet) only after the croupier's last card: box 2's hand is void (art. 11(4)) and box 3
    # holds two cards, too few, with nothing left to deal: art. 11(1), the round is void.
    t = q_round(box_sensors=True)
    for c, b in (("As", 1), ("Kd", 3), ("2c", None), ("Ah", 1), ("Ks", 3), ("3c", None),
                 ("Ad", 1)):
        draw(t, c)
        if b:
            placed(t, b)
    draw(t, "Kc", "4h")
    assert t.state == "player_decisions"
    placed(t, 2)
    assert [r["article"] for r in rulings(t)] == ["89/2004 art. 11(4)", "89/2004 art. 11(1)"]
    assert t.state == "round_void"
    void = [e.to_json() for e in t.outbox if e.kind == "round_void"][-1]
    assert {b["box"] for b in void["returned"]} == {1, 3}


def test_q_poker_a_card_on_a_box_without_a_bet_once_every_card_is_placed_voids_that_box_only():
    t = q_round(box_sensors=True)
    for c, b in (("As", 1), ("Kd", 3), ("2c", None), ("Ah", 1), ("Ks", 3), ("3c", None),
                 ("Ad", 1), ("Kc", 3), ("4h", None)):
        draw(t, c)
        if b:
            placed(t, b)
    assert t.state == "player_decisions"
    placed(t, 2)
    assert [r["article"] for r in rulings(t)] == ["89/2004 art. 11(4)"]
    assert t.state == "player_decisions" and t.round.void_boxes == {2}


def test_pan9_p5_rectify_after_the_deal_keeps_the_settled_round():
    # P5 rectify: the croupier puts the card where the plan says and the round goes on. Once
    # every card is out the settlement stands; the supervisor is told, and the round is
    # confirmed and counted in the bank's turn, not dropped.
    t = table("super-pan-9", box_sensors=True, interpretations={"dealing_error": "rectify"})
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    for card, seat in (("9s", 1), ("Kd", 1), ("2c", 2), ("3c", None)):
        draw(t, card)
        if seat:
            placed(t, seat)
    assert t.state == "settlement"
    placed(t, 5)                                 # seat 2's last card fell on seat 5
    assert rulings(t)[-1]["remedy"] == "rectify"
    assert t.state == "settlement" and t.round.void is None
    assert nets(t)[(2, "seat")] == -100          # art. 7: 5 loses to the banker's 9
    t.command("confirm_result")
    assert t.state == "round_complete"
    assert t.public_view()["bank_turn"]["rounds"] == 1      # art. 5(1): a round banked


def test_a_repeated_button_is_shown_as_a_repeat_and_changes_nothing():
    """The panel's repeat guard sends a press inside it as ``button_repeated``: the table says
    what it was and the way on, and takes no step (a double confirm after a void would
    otherwise open the next round and then declare a deck shuffled that was not)."""
    from controller.inputs import ButtonRepeated

    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("void_round", role="supervisor", reason="test")
    before, view = t.state, t.public_view()
    t.outbox.clear()
    t.handle_device(ButtonRepeated(device="panel", ts=3.0, button="confirm", after_ms=120))
    assert kinds(t) == ["irregular_event"]
    reason = t.outbox[0].to_json()["reason"]
    assert "pressed again 120 ms" in reason and "repeat_guard_ms" in reason
    assert t.state == before and t.public_view() == view


def test_a_journal_with_a_repeated_button_reads_back_without_the_panel_module():
    """Tools that read a journal (replay, `journal show`, the integrity report) import the
    table, not the GPIO panel: the repeat event must be known to them as the other panel
    inputs are."""
    import subprocess
    import sys

    code = ("import controller.table.machine, sys\n"
            "assert 'controller.panel' not in sys.modules\n"
            "from drivers.events import event_from_json\n"
            "e = event_from_json({'kind': 'button_repeated', 'device': 'panel', 'ts': 1.0,"
            " 'button': 'confirm', 'after_ms': 90})\n"
            "print(type(e).__name__, e.after_ms)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ButtonRepeated", "90"]
