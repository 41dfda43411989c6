"""Texas Hold'em in the table's public view: the seats, the button and the stacks are public
from the moment the players are seated; the hole cards are not, until they are shown."""
import json
import re

import pytest

from controller.errors import TablectlError

from table_helpers import draw, table

CARD = re.compile(r'"(10|[2-9TJQKA])[cdhs]"')
HOLE = ("Qd", "7h", "As", "Qc", "2c", "Ks")     # seats 3, 6, 1, 3, 6, 1 (art. 6(1))


def seated():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3, 6], stacks={"1": 1000, "3": 500, "6": 200},
              button=1)
    return t


def holdem(t):
    return t.public_view()["holdem"]


def test_nothing_before_the_players_are_seated():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    assert t.state == "bets_open"
    assert holdem(t) is None


def test_seats_button_and_stacks_show_as_soon_as_the_players_are_seated():
    t = seated()
    assert t.state == "bets_open"
    assert holdem(t) == {"seats": [1, 3, 6], "button": 1,
                         "stacks": {"1": 1000, "3": 500, "6": 200},
                         "street": None, "to_act": None, "pot": 0, "folded": [], "legal": []}


def test_stacks_given_as_a_list_follow_the_seat_order():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[7, 2], stacks=[300, 800], button=7)
    h = holdem(t)
    assert h["seats"] == [2, 7] and h["button"] == 7
    assert h["stacks"] == {"2": 300, "7": 800}


def test_seating_again_replaces_the_seats_in_the_view():
    t = seated()
    t.command("seat_players", seats=[2, 4], stacks=[250, 350], button=4)
    h = holdem(t)
    assert h["seats"] == [2, 4] and h["button"] == 4 and h["stacks"] == {"2": 250, "4": 350}


def test_a_refused_seating_leaves_the_view_as_it_was():
    t = seated()
    before = t.public_view()
    with pytest.raises(TablectlError):
        t.command("seat_players", seats=[2, 4], stacks=[250, 350], button=9)
    assert t.public_view() == before


def test_the_running_hand_keeps_seats_and_button_and_shows_the_blinds():
    t = seated()
    draw(t, *HOLE)
    assert t.state == "player_decisions"
    h = holdem(t)
    # art. 5: small blind left of the button (seat 3), big blind next (seat 6); with three
    # players the button speaks first pre-flop.
    assert h["seats"] == [1, 3, 6] and h["button"] == 1
    assert h["street"] == "preflop" and h["pot"] == 15 and h["to_act"] == 1
    assert h["stacks"] == {"1": 1000, "3": 495, "6": 190}
    assert h["folded"] == []
    assert {a["action"] for a in h["legal"]} >= {"fold", "call", "raise"}


def test_no_hole_card_in_the_view_while_they_are_face_down():
    t = seated()
    views = [t.public_view()]
    for card in HOLE:
        draw(t, card)
        views.append(t.public_view())
    t.command("holdem_action", seat=1, action="fold")
    t.command("holdem_action", seat=3, action="fold")   # seat 6 wins without a showdown
    assert t.state == "settlement"
    views.append(t.public_view())
    for v in views:
        text = json.dumps(v)
        for card in HOLE:
            assert f'"{card}"' not in text, (card, v["state"])
        assert not CARD.search(json.dumps(v["holdem"]))   # no card of any kind in it
    dealt = views[-2]["hands"]
    assert all(c is None for s in (1, 3, 6) for c in dealt[f"box {s}"])
    assert views[-1]["holdem"]["folded"] == [1, 3]


def test_the_next_round_starts_with_nobody_seated():
    t = seated()
    draw(t, *HOLE)
    t.command("holdem_action", seat=1, action="fold")
    t.command("holdem_action", seat=3, action="fold")
    t.command("confirm_result")
    t.command("next_round")
    assert holdem(t) is None


def test_games_without_a_button_have_no_holdem_key_filled():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    assert holdem(t) is None
