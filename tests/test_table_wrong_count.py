"""A device that puts out the wrong number of cards, where the game's ruling is "rectify".

Texas Hold'em (11/2008 art. 9(1)) and Super Pan 9 under P5 ``dealing_error=rectify``: the
cards the device reports go, in the order they left it, to the recipients the dealing plan owes
them to next; a recipient short of cards is owed the rest. No hand of the wrong size is kept (a
settlement would refuse it). In Hold'em the extra cards stay within the street being dealt: a
card out beyond it is taken out of play face down, the burn and board of the next street being
dealt after the betting as art. 7(1), 8(1) and 8(3) say; beyond the plan likewise. Face-down
cards are never shown, and replaying the journal rebuilds the same table.
"""
import json

import pytest

from controller.rules.base import BOARD, BURN, box
from controller.rules.cards import Card
from drivers import events as ev

from table_helpers import DEVICES, draw, hand, kinds, nets, placed, rulings, settlement, table


def dispensed(t, *cards):
    for c in cards:
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=Card.parse(c)))


def act(t, seat, action, amount=None):
    t.command("holdem_action", seat=seat, action=action, amount=amount)


def asked(t, since=0):
    return [(c.action, c.args.get("n")) for c in t.commands[since:]
            if c.action in ("dispense_card", "dispense_hand")]


def published(t) -> str:
    return json.dumps([e.to_json() for e in t.outbox])


def holdem(mode="shuffler", **kw):
    """Seats 2 and 5, button 2: the hole cards go 5, 2, 5, 2 (art. 3(2), 6(1)); seat 5 posts
    the small blind and acts first before the flop (H4 literal)."""
    t = table("texas-holdem", mode, holdem={"small_blind": 5, "big_blind": 10}, **kw)
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    if mode == "shuffler":
        t.command("close_bets")
    return t


def checked_through(t):
    act(t, 5, "call")
    act(t, 2, "check")


def check_round(t):
    act(t, 5, "check")
    act(t, 2, "check")


# --- Texas Hold'em from the shuffler ------------------------------------------------------------

def test_two_cards_for_one_hole_card_go_to_the_next_seat_in_the_plans_order_art_9_1():
    t = holdem()
    dispensed(t, "As")                           # seat 5's first card
    since = len(t.commands)
    hand(t, "Kd", "Ah")                          # asked one for seat 2: two came
    r = rulings(t)[-1]
    assert r["irregularity"] == "wrong_count" and r["remedy"] == "rectify"
    assert r["article"] == "11/2008 art. 9(1)"
    assert t.state == "dealing"
    # Kd is seat 2's first card, Ah seat 5's second: seat 2's second card is asked next.
    assert t.vault.count(box(2)) == 1 and t.vault.count(box(5)) == 2
    assert asked(t, since) == [("dispense_card", None)]
    assert t.tracker.expected.deal.recipient == box(2)
    moved = [e.to_json() for e in t.outbox if e.kind == "cards_rectified"][-1]
    assert moved["given"] == [{"recipient": "box 2", "count": 1},
                              {"recipient": "box 5", "count": 1}]
    assert moved["out_of_play"] == 0
    dispensed(t, "Kc")
    assert t.state == "player_decisions"
    assert "Kd" not in published(t) and "Ah" not in published(t)    # face down
    checked_through(t)
    dispensed(t, "2c", "7s", "8d", "9h")         # burn, flop
    check_round(t)
    dispensed(t, "3c", "Js")
    check_round(t)
    dispensed(t, "4d", "5h")
    check_round(t)
    assert t.state == "settlement", kinds(t)
    hands = settlement(t)["hands"]
    assert sorted(hands["box 5"]["cards"]) == ["Ah", "As"]
    assert sorted(hands["box 2"]["cards"]) == ["Kc", "Kd"]
    assert "settlement_refused" not in kinds(t)


def test_an_extra_card_at_the_end_of_the_hole_deal_is_out_of_play_not_a_hole_card():
    # The last hole card (seat 2's second) comes with another: that card is beyond the street
    # being dealt. The burn is taken after the betting (art. 7(1) "depois de inutilizar uma
    # carta"): the extra card is no card of the flop; it is taken out of play, face down.
    t = holdem()
    dispensed(t, "As", "Kd", "Ah")
    hand(t, "Kc", "Qs")
    assert rulings(t)[-1]["remedy"] == "rectify"
    assert t.state == "player_decisions"
    assert t.vault.count(box(2)) == 2 and t.vault.count(box(5)) == 2
    moved = [e.to_json() for e in t.outbox if e.kind == "cards_rectified"][-1]
    assert moved["given"] == [{"recipient": "box 2", "count": 1}] and moved["out_of_play"] == 1
    assert t.tracker.expected.deal.recipient == BURN            # the flop as planned
    since = len(t.commands)
    checked_through(t)
    assert asked(t, since) == [("dispense_card", None)]
    dispensed(t, "2c", "7s", "8d", "9h")
    check_round(t)
    dispensed(t, "3c", "Js")
    check_round(t)
    dispensed(t, "4d", "5h")
    check_round(t)
    assert t.state == "settlement"
    assert "Qs" not in published(t)             # out of play: never shown
    assert sorted(settlement(t)["hands"]["box 2"]["cards"]) == ["Kc", "Kd"]


def test_two_cards_for_one_board_card_fill_the_flop_in_order():
    t = holdem()
    dispensed(t, "As", "Kd", "Ah", "Kc")
    checked_through(t)
    dispensed(t, "2c")                           # the burn
    hand(t, "7s", "8d")                          # two flop cards for one
    assert rulings(t)[-1]["remedy"] == "rectify" and t.state == "dealing"
    assert t.vault.count(BOARD) == 2
    dispensed(t, "9h")
    assert t.state == "player_decisions" and t.vault.count(BOARD) == 3


def test_an_extra_card_with_the_river_is_out_of_play():
    t = holdem()
    dispensed(t, "As", "Kd", "Ah", "Kc")
    checked_through(t)
    dispensed(t, "2c", "7s", "8d", "9h")
    check_round(t)
    dispensed(t, "3c", "Js")
    check_round(t)
    dispensed(t, "4d")
    hand(t, "5h", "Qs")                          # the river and one more
    assert rulings(t)[-1]["remedy"] == "rectify"
    assert t.vault.count(BOARD) == 5
    check_round(t)
    assert t.state == "settlement" and "Qs" not in published(t)
    assert settlement(t)["hands"]["board"]["cards"][-1] == "5h"


def test_an_empty_hand_leaves_the_card_owed_and_asked_again():
    t = holdem()
    dispensed(t, "As")
    since = len(t.commands)
    hand(t)
    assert rulings(t)[-1]["remedy"] == "rectify" and t.state == "dealing"
    assert t.vault.count(box(2)) == 0
    assert asked(t, since) == [("dispense_card", None)]
    dispensed(t, "Kd", "Ah", "Kc")
    assert t.state == "player_decisions"
    assert t.vault.count(box(2)) == 2 and t.vault.count(box(5)) == 2


def test_a_count_only_shuffler_putting_out_two_cards_for_one_settles_from_the_entered_cards():
    t = holdem()
    for _ in range(3):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=None))
    t.handle_device(ev.HandDispensed(device="shuffler", ts=0.0, cards=(None, None)))
    assert t.state == "player_decisions"
    assert t.vault.count(box(2)) == 2 and t.vault.count(box(5)) == 2
    act(t, 5, "allin")
    act(t, 2, "call")
    for _ in range(8):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=None))
    assert t.state == "croupier_reveal"
    t.command("enter_cards", recipient="box 5", cards="As Ah")
    t.command("enter_cards", recipient="box 2", cards="Kd Kc")
    t.command("enter_cards", recipient="board", cards="2c 7s 8d Qs 5s")
    assert t.state == "settlement"
    assert nets(t) == {(2, "pot"): -500, (5, "pot"): 500}


def test_a_rectified_hand_replays_to_the_same_table(tmp_path):
    from controller.journal import Journal
    from controller.rules import get_game
    from controller.table import Table
    from controller.table.runner import TableRunner

    def runner():
        journal = Journal.open(tmp_path / "j.db", "T1")
        return TableRunner(Table("T1", get_game("texas-holdem"), "shuffler", layout_boxes=10,
                                 devices=DEVICES,
                                 holdem={"small_blind": 5, "big_blind": 10}), journal), journal

    run, journal = runner()
    run.command("open_table", role="supervisor")
    run.device(ev.DeckCheckResult(device="shuffler", ts=0.0, count=52))
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    run.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    run.command("close_bets")
    run.device(ev.CardDispensed(device="shuffler", ts=0.0, card=Card.parse("As")))
    run.device(ev.HandDispensed(device="shuffler", ts=0.0,
                                cards=(Card.parse("Kd"), Card.parse("Ah"))))
    run.device(ev.HandDispensed(device="shuffler", ts=0.0,
                                cards=(Card.parse("Kc"), Card.parse("Qs"))))
    before = run.table
    assert before.state == "player_decisions"
    view = before.public_view()
    journal.close()

    run, journal = runner()                       # the controller restarts
    run.recover()
    after = run.table
    assert after.state == "player_decisions"
    assert after.vault.all_cards_unpublishable() == before.vault.all_cards_unpublishable()
    assert [after.vault.slot_recipient(i) for i in range(after.vault.slots())] == \
        [before.vault.slot_recipient(i) for i in range(before.vault.slots())]
    assert after.tracker.expected.deal == before.tracker.expected.deal
    assert after.public_view()["hands"] == view["hands"]
    journal.close()


# --- Super Pan 9 under P5 dealing_error=rectify ----------------------------------------------

def pan9(rectify=True, **kw):
    """Banker seat 1, bets on seats 2 and 3; dice 1,1,1,2 (total 5): seat 3 is dealt first,
    then 2, then the banker (test_pan9_p5_rectify_a_card_on_a_seat_not_in_play_is_put_on_its_seat)."""
    t = table("super-pan-9", "shuffler",
              interpretations={"dealing_error": "rectify"} if rectify else None, **kw)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("place_bet", box=3, wager="seat", amount=50, player="bo")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    assert t.tracker.expected.deal.recipient == box(3)
    return t


def test_pan9_p5_rectify_a_hand_of_three_gives_the_third_card_to_the_next_seat():
    t = pan9()
    hand(t, "9s", "Kd", "2c")                    # seat 3's hand and one more
    r = rulings(t)[-1]
    assert r["irregularity"] == "wrong_count" and r["remedy"] == "rectify"
    assert t.state == "malfunction"              # the ruling waits for the supervisor
    assert t.vault.count(box(3)) == 2 and t.vault.count(box(2)) == 1
    since = len(t.commands)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing"
    assert asked(t, since) == [("dispense_card", None)]     # seat 2's second card
    dispensed(t, "3c")
    hand(t, "4h", "2h")                          # the banker's
    assert t.state == "settlement", kinds(t)
    hands = settlement(t)["hands"]
    assert hands["seat 3"]["cards"] == ["9s", "Kd"] and hands["seat 2"]["cards"] == ["2c", "3c"]
    assert nets(t)[(2, "seat")] == -100          # art. 7: 5 loses to the banker's 6


def test_pan9_p5_rectify_a_short_hand_is_completed_by_the_next_card():
    t = pan9()
    hand(t, "9s")
    assert rulings(t)[-1]["remedy"] == "rectify"
    since = len(t.commands)
    t.command("clear_malfunction", role="supervisor")
    assert asked(t, since) == [("dispense_card", None)]
    dispensed(t, "Kd")
    assert t.vault.count(box(3)) == 2
    hand(t, "2c", "3c")
    hand(t, "4h", "2h")
    assert t.state == "settlement"
    assert settlement(t)["hands"]["seat 3"]["cards"] == ["9s", "Kd"]


def test_pan9_p5_rectify_a_card_beyond_the_plan_is_out_of_play():
    t = pan9()
    hand(t, "9s", "Kd")
    hand(t, "2c", "3c")
    hand(t, "4h", "2h", "Qs")
    assert rulings(t)[-1]["remedy"] == "rectify" and t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "settlement"
    assert "Qs" not in published(t)
    assert settlement(t)["hands"]["banker"]["cards"] == ["4h", "2h"]


def test_pan9_p5_default_a_wrong_size_hand_voids_the_round():
    t = pan9(rectify=False)
    hand(t, "9s", "Kd", "2c")
    assert t.state == "round_void"
    assert rulings(t)[-1]["remedy"] == "round_void"


def test_pan9_p5_rectify_with_box_sensors_expects_each_part_on_its_seat():
    t = pan9(box_sensors=True)
    hand(t, "9s", "Kd", "2c")
    t.command("clear_malfunction", role="supervisor")
    placed(t, 3)
    placed(t, 2)                                 # the third card, on seat 2
    dispensed(t, "3c")
    placed(t, 2)
    hand(t, "4h", "2h")
    placed(t, 1)
    assert t.state == "settlement" and len(rulings(t)) == 1


# --- the shoe: every card drawn is the next step's ---------------------------------------------

def test_holdem_shoe_a_card_drawn_during_the_betting_is_out_of_play_and_the_flop_goes_on():
    t = holdem("shoe")
    draw(t, "As", "Kd", "Ah", "Kc")
    assert t.state == "player_decisions"
    draw(t, "Qs")                                # drawn before the betting is over
    r = rulings(t)[-1]
    assert r["irregularity"] == "wrong_count" and r["remedy"] == "rectify"
    assert t.state == "player_decisions" and "Qs" not in published(t)
    checked_through(t)
    assert t.tracker.expected.deal.recipient == BURN
    draw(t, "2c", "7s", "8d", "9h")
    check_round(t)
    draw(t, "3c", "Js")
    check_round(t)
    draw(t, "4d", "5h")
    check_round(t)
    assert t.state == "settlement" and "Qs" not in published(t)


def test_holdem_shoe_a_card_for_the_next_seat_on_the_wrong_seat_stays_the_next_seats():
    # With box sensors: seat 2's card lands on seat 5 (which already has its card): wrong
    # order, rectified: it is seat 2's card, and no seat holds a wrong number of cards.
    t = holdem("shoe", box_sensors=True)
    draw(t, "As")
    placed(t, 5)
    draw(t, "Kd")
    placed(t, 5)
    r = rulings(t)[-1]
    assert r["irregularity"] == "wrong_order" and r["remedy"] == "rectify"
    draw(t, "Ah")
    placed(t, 5)
    draw(t, "Kc")
    placed(t, 2)
    assert t.state == "player_decisions"
    assert t.vault.count(box(2)) == 2 and t.vault.count(box(5)) == 2
