"""Super Pan 9 at the table, audited against Portaria n.º 261/96/M article by article.

Each test drives the real table (``Table`` with its journal where a restart is concerned)
through a sequence the regulation decides, often a hostile one, and checks what it does and
what it publishes: no face-down card leaves the controller before its reveal (art. 5(6)).
Expected figures are worked out by hand from the articles.
"""
import json

import pytest

from controller.errors import TablectlError
from drivers import events as ev

from table_helpers import draw, hand, settlement, table


def pan9_round(mode="shoe", **kw):
    """Banker on seat 1 with 1000; Ana 100 on seat 2, Bo 50 on seat 3. Dice (1, 1, 1, 2):
    total 5 counted counter-clockwise from the banker (1, 3, 2, 1, 3) gives seat 3 the first
    cards; the order is 3, 2, 1 (art. 2(2)-(3))."""
    t = table("super-pan-9", mode, **kw)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="Ana")
    t.command("place_bet", box=3, wager="seat", amount=50, player="Bo")
    return t


def published(t, since=0):
    """Everything the table published since ``since``, as the stream carries it."""
    return json.dumps([e.to_json() for e in t.outbox[since:]])


# --- art. 4: a card exposed while dealing ----------------------------------------------------

def test_art_4_a_card_of_a_shuffler_hand_reported_exposed_shows_neither_card():
    """The shuffler puts a seat's two cards out as one hand (art. 2(3)); a report that a card
    of it was exposed cannot say which. The round goes on (art. 4) and no card is published:
    the one shown might be the one still face down until the seat lays it down (art. 5(6))."""
    t = pan9_round("shuffler")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    hand(t, "9s", "Kd")                                  # seat 3
    mark = len(t.outbox)
    t.command("exposed_card", recipient="box 3")
    ruling = [e.to_json() for e in t.outbox[mark:] if e.kind == "ruling"]
    assert [(r["remedy"], r["article"], r["recipient"]) for r in ruling] == [
        ("continue", "261/96/M art. 4", "box 3")]
    assert "card_exposed" not in [e.kind for e in t.outbox[mark:]]
    assert "9s" not in published(t, mark) and "Kd" not in published(t, mark)
    assert t.public_view()["hands"]["box 3"] == [None, None]
    # the other card may be reported too: nothing was turned over by the first report
    t.command("exposed_card", recipient="box 3")
    hand(t, "2c", "3c")                                  # seat 2
    assert "9s" not in published(t) and "Kd" not in published(t)
    hand(t, "4h", "2h")                                  # the banker
    assert t.state == "settlement"
    # art. 7(1): seat 3's 9 beats the banker's 6; seat 2's 5 loses
    assert {w["box"]: w["outcome"] for w in settlement(t)["wagers"]} == {3: "win", 2: "lose"}


# --- art. 5(3): the banker's capital is on the table before the shake -------------------------

def test_art_5_3_betting_is_not_closed_before_a_banker_is_named():
    """Only the banker shakes (art. 2(2)) and his capital is on the table before he does (art.
    5(3)). Betting closed with no banker named left a round nobody could go on with: the shake
    asked for set_banker, which closed betting refused. Closing is refused now, naming the
    way out, and changes nothing."""
    t = table("super-pan-9")
    t.command("place_bet", box=2, wager="seat", amount=100, player="Ana")
    mark = len(t.outbox)
    with pytest.raises(TablectlError, match=r"set_banker.*261/96/M art\. 5\(3\)"):
        t.command("close_bets")
    assert t.state == "bets_open" and t.outbox[mark:] == []
    t.command("set_banker", seat=1, capital=500)
    t.command("close_bets")
    t.command("shake")
    assert t.state == "dice_shaking"


# --- art. 2(4): a die out of the cup, and the reading of that throw --------------------------

@pytest.mark.parametrize("fault", ["out_of_cup", "shake_refused"])
def test_art_2_4_dice_read_before_the_banker_shakes_again_are_not_the_throw(fault):
    """A die out of the cup: the banker shakes again (art. 2(4)) once it is back. A reading
    that comes before he does (the agitator reporting the faulty throw's dice after all, or
    the dice of a shake it refused) is no throw of his: an irregular event that changes
    nothing; the dice he shakes next decide the first seat (art. 2(2))."""
    t = pan9_round()
    t.command("shake")
    if fault == "out_of_cup":
        t.handle_device(ev.DieOutOfCup(device="dice", ts=1.0, die=2))
    else:
        t.handle_device(ev.CommandRefused(device="dice", ts=1.0, action="shake",
                                          reason="not-ready"))
    mark = len(t.outbox)
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(6, 6, 6, 6)))
    assert t.state == "dice_shaking" and t.round.dice is None and t.tracker is None
    assert [e.kind for e in t.outbox[mark:]] == ["irregular_event"]
    assert "art. 2(4)" in t.outbox[mark].to_json()["reason"]
    t.command("shake")                       # the banker shakes again
    assert t.commands[-1].action == "shake"
    t.handle_device(ev.DiceResult(device="dice", ts=3.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing" and t.round.dice == (1, 1, 1, 2)
    # total 5 from the banker (1, 3, 2, 1, 3): seat 3 receives the first cards (art. 2(3))
    assert t.tracker.expected.deal.recipient.box == 3


# --- art. 5(1)-(2): the bank's turn when the layout changes ----------------------------------

def test_art_5_1_a_bank_turn_on_a_seat_the_new_layout_no_longer_has_ends():
    """Seat 7 banks a settled round (art. 5(1)); the table is then configured with 4 seats.
    The turn's seat is gone, so its turn ends: the view still answers, and another seat takes
    the bank. Before, the view raised an error and every set_banker was refused naming seat 7,
    a seat the table no longer has."""
    from controller.rules import get_game
    from controller.table import Table
    from table_helpers import DEVICES, ready

    t = table("super-pan-9")
    t.command("set_banker", seat=7, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="Ana")
    t.command("place_bet", box=6, wager="seat", amount=50, player="Bo")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    draw(t, "9s", "Kd", "2c", "3c", "4h", "2h")
    assert t.state == "settlement"
    t.command("confirm_result")
    assert t.public_view()["bank_turn"]["seat"] == 7
    t.configure_next_round(Table("T1", get_game("super-pan-9"), "shoe", layout_boxes=4,
                                 devices=DEVICES))
    t.command("next_round")
    ready(t)
    assert t.state == "bets_open" and t.layout_boxes == 4
    assert t.public_view()["bank_turn"] is None
    t.command("set_banker", seat=2, capital=100)
    assert t.round.banker == 2


def test_art_5_2_the_bettors_a_smaller_layout_still_has_may_take_the_bank():
    """Seat 1 banks; Ana bets on seat 2, Bo on seat 6. With 4 seats next round, seat 6 is
    gone: the bank given up may pass to seat 2, who bet in the previous round (art. 5(2)),
    and the view's takers name no seat the table does not have."""
    from controller.rules import get_game
    from controller.table import Table
    from table_helpers import DEVICES, ready

    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="Ana")
    t.command("place_bet", box=6, wager="seat", amount=50, player="Bo")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    draw(t, "9s", "Kd", "2c", "3c", "4h", "2h")
    t.command("confirm_result")
    t.configure_next_round(Table("T1", get_game("super-pan-9"), "shoe", layout_boxes=4,
                                 devices=DEVICES))
    t.command("next_round")
    ready(t)
    turn = t.public_view()["bank_turn"]
    assert turn["seat"] == 1 and turn["takers"] == [2]
    with pytest.raises(TablectlError, match="5\\(2\\)"):
        t.command("set_banker", seat=3, capital=100)     # did not bet in the last round
    t.command("set_banker", seat=2, capital=100)
    assert t.round.banker == 2


# --- art. 1(1) with art. 4: a card out face up read as one already face up -------------------

def test_art_1_1_a_card_out_face_up_read_as_one_already_face_up_is_ruled_at_once():
    """One 52-card deck holds each card once (art. 1(1)). Seat 3's first card comes out face
    up (art. 4: it stays valid) as 9s; seat 2's first card comes out face up read as 9s too:
    one of the two readings is wrong, in everyone's sight. It is the shoe's failure while
    dealing, ruled at once (P3: the round void, its face-down cards never shown). Before, the
    deal went on, every hand was opened and only the settlement refused the round."""
    t = pan9_round()
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    draw(t, "9s", face_up=True)
    draw(t, "Kd")
    mark = len(t.outbox)
    draw(t, "9s", face_up=True)                      # seat 2's first card
    rulings = [e.to_json() for e in t.outbox[mark:] if e.kind == "ruling"]
    assert rulings[-1]["irregularity"] == "shoe_malfunction"
    assert rulings[-1]["article"] == "261/96/M interpretation P3 (machine_failure)"
    assert "261/96/M art. 1(1)" in rulings[-1]["detail"]
    assert t.round.void is not None and t.state == "malfunction"
    assert "hand_revealed" not in [e.kind for e in t.outbox]
    assert "Kd" not in published(t)
    # the second reading names no card anywhere: which of the two is wrong is not known
    assert published(t, mark).count("9s") == 0


def test_art_1_1_under_p3_rectify_the_card_read_twice_is_entered_at_the_reveal():
    """P3 ``rectify``: the deal goes on once the supervisor clears; the card read as one
    already face up is a card without a face, entered at the reveal like one the shoe could
    not read, and the round is settled from the cards entered."""
    t = pan9_round(interpretations={"machine_failure": "rectify"})
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    draw(t, "9s", face_up=True)
    draw(t, "Kd")
    draw(t, "9s", face_up=True)                      # seat 2's first card: really the 9c
    assert t.round.void is None and t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    draw(t, "3c", "4h", "2h")
    assert t.state == "croupier_reveal"
    t.command("enter_cards", recipient="box 2", cards=["9c"])
    # art. 7: seat 3's 9 and seat 2's 2 (9c 3c) against the banker's 6
    assert {w["box"]: w["outcome"] for w in settlement(t)["wagers"]} == {3: "win", 2: "lose"}
