"""Texas Hold'em (11/2008) at the table: what an audit of the table's flow against the text
found, each case driven through the table machine as the console and the devices drive it."""
import json

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
