"""Texas Hold'em (11/2008) at the table: what an audit of the table's flow against the text
found, each case driven through the table machine as the console and the devices drive it."""
import json

import pytest

from controller.errors import TablectlError

from table_helpers import draw, rulings, settlement, table


def act(t, seat, action, amount=None):
    t.command("holdem_action", seat=seat, action=action, amount=amount)


def test_a_hole_card_shown_during_the_betting_names_no_card_it_cannot_tell_art_9_1_6_2():
    # Once the hole cards are out the player holds both, mixed in his hand: a report that one
    # of them was shown cannot say which. Taking the last one dealt published a card still face
    # down (art. 6(2)) when the player had shown the other, and kept it public after his fold.
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 2], stacks=[100, 100], button=1)
    draw(t, "As", "Kd", "Ah", "Kc")                 # seat 2: As Ah; seat 1: Kd Kc
    act(t, 2, "call")
    t.command("exposed_card", recipient="box 1")    # the player shows one card, Kd or Kc
    assert rulings(t)[-1]["remedy"] == "continue"
    assert [e.to_json()["card"] for e in t.outbox if e.kind == "card_exposed"] == [None]
    t.command("exposed_card", recipient="box 1")    # and then the other: reported too
    assert len(rulings(t)) == 2
    act(t, 1, "fold")
    assert t.state == "settlement"
    text = json.dumps([e.to_json() for e in t.outbox]) + json.dumps(t.public_view())
    assert not any(c in text for c in ("As", "Kd", "Ah", "Kc"))
    assert settlement(t)["hands"]["box 1"] == {"cards": [], "category": "folded"}


def _shown(t):
    return [e.to_json()["recipient"] for e in t.outbox if e.kind == "hand_revealed"]


def test_a_player_who_leaves_mid_hand_is_folded_in_turn_and_one_all_in_stays_in():
    # The text has no rule for a player who leaves: his hand is folded in his turn like any
    # fold (art. 6(3)-(5), 13(1)); one all in has nothing left to decide, and his hand stays in
    # play to the showdown (art. 10(3)), where it is shown (art. 8(5)).
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3, 6], stacks={"1": 300, "3": 300, "6": 40}, button=1)
    draw(t, "Qd", "7h", "As", "Qc", "2c", "Ks")     # 3: Qd Qc; 6: 7h 2c; 1: As Ks
    act(t, 1, "call")
    act(t, 3, "call")
    act(t, 6, "allin")                              # seat 6 is all in, then leaves
    act(t, 1, "call")
    act(t, 3, "call")
    draw(t, "5h", "Ah", "Qs", "3d")
    before = (t.state, t.public_view(), len(t.outbox))
    with pytest.raises(TablectlError, match="out of turn: it is seat 3's turn"):
        act(t, 1, "fold")                           # seat 1 leaves while seat 3 is to act
    assert (t.state, t.public_view(), len(t.outbox)) == before
    act(t, 3, "check")
    act(t, 1, "fold")                               # in his turn
    assert t.state == "dealing"                     # seat 3 and the all-in seat 6 play on
    draw(t, "6h", "9c", "8h", "Jd")                 # no betting: only seat 3 has chips
    assert t.state == "settlement"
    assert _shown(t) == ["box 3", "box 6"]          # as dealt from the left of the button
    s = settlement(t)
    assert s["hands"]["box 1"] == {"cards": [], "category": "folded"}
    assert {w["box"]: w["net"] for w in s["wagers"]} == {1: -40, 3: 80, 6: -40}
