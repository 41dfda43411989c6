"""Texas Hold'em in the table's public view: the seats, the button and the stacks are public
from the moment the players are seated; the hole cards are not, until they are shown."""
import json
import re

import pytest
from hypothesis import given, settings, strategies as st

from controller.errors import TablectlError
from controller.rules.cards import Card
from controller.rules.holdem_pots import build_pots
from controller.rules.texas_holdem import start_hand
from controller.table.holdem_pots_view import view_pots

from drivers import events as ev

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
                         "street": None, "to_act": None, "pot": 0, "folded": [], "legal": [],
                         "pots": []}


def test_stacks_given_as_a_list_follow_the_seat_order():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 7], stacks=[300, 800], button=7, role="supervisor")
    h = holdem(t)
    assert h["seats"] == [2, 7] and h["button"] == 7
    assert h["stacks"] == {"2": 300, "7": 800}


def test_a_list_of_stacks_for_seats_out_of_order_is_refused_when_it_could_be_read_two_ways():
    """seats [7, 2] with stacks [300, 800] gave seat 2 the 300 and seat 7 the 800 (the list
    follows the seats in ascending order), where the croupier may have meant seat 7's 300:
    chips on the wrong seat. Refused now, naming both readings; the same stack for every seat
    reads one way only and is taken."""
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    before = t.public_view()
    with pytest.raises(TablectlError) as refused:
        t.command("seat_players", seats=[7, 2], stacks=[300, 800], button=7, role="supervisor")
    message = str(refused.value)
    assert "[7, 2]" in message and '{"7": 300, "2": 800}' in message
    assert "ascending" in message
    assert t.public_view() == before
    t.command("seat_players", seats=[7, 2], stacks=[500, 500], button=7, role="supervisor")
    assert holdem(t)["stacks"] == {"2": 500, "7": 500}
    t.command("seat_players", seats=[7, 2], stacks={"7": 300, "2": 800}, button=7,
              role="supervisor")
    assert holdem(t)["stacks"] == {"2": 800, "7": 300}


@pytest.mark.parametrize("seats, stacks, words", [
    ([1, 1, 3], [500, 500], "seat 1 twice"),
    ([1, 3], {"1": 500, "01": 5000, "3": 500}, "seat 1 twice")])
def test_a_seat_given_twice_is_refused(seats, stacks, words):
    """[1, 1, 3] was taken as seats 1 and 3, and stacks {"1": 500, "01": 5000} as seat 1
    with 5000: a seat named twice is a slip, and which stack was meant cannot be told."""
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    before = t.public_view()
    with pytest.raises(TablectlError, match=words):
        t.command("seat_players", seats=seats, stacks=stacks, button=1)
    assert t.public_view() == before


def test_seating_again_replaces_the_seats_in_the_view():
    t = seated()
    t.command("seat_players", seats=[2, 4], stacks=[250, 350], button=4, role="supervisor")
    h = holdem(t)
    assert h["seats"] == [2, 4] and h["button"] == 4 and h["stacks"] == {"2": 250, "4": 350}


def test_a_refused_seating_leaves_the_view_as_it_was():
    t = seated()
    before = t.public_view()
    with pytest.raises(TablectlError):
        t.command("seat_players", seats=[2, 4], stacks=[250, 350], button=9)
    assert t.public_view() == before



@pytest.mark.parametrize("button", [True, 1.0, "1", [1]])
def test_a_button_that_is_not_a_seat_number_is_refused_naming_it(button):
    """true and 1.0 were taken as seat 1 (the view then showed "button": true, which the page
    could put on no seat); "1" was refused as if seat 1 were not occupied."""
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    before = t.public_view()
    with pytest.raises(TablectlError, match="button") as refused:
        t.command("seat_players", seats=[1, 3], stacks=[100, 100], button=button)
    assert "seat number" in str(refused.value) and json.dumps(button) in str(refused.value)
    assert t.public_view() == before
    t.command("seat_players", seats=[1, 3], stacks=[100, 100], button=1)
    assert holdem(t)["button"] == 1

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



# --- a void hand (11/2008 art. 9(2)): the stakes go back, no pot is left ---------------------

def test_a_void_hand_shows_no_pot_and_each_seats_chips_back_in_its_stack():
    """Art. 9(2): a void hand's stakes "são devolvidos aos jogadores". The view kept showing
    the pot of 70 and the stacks without the chips, with seat 6 still to act: the pit display
    showed a pot that no longer existed."""
    t = seated()
    draw(t, *HOLE)
    t.command("holdem_action", seat=1, action="raise", amount=30)
    t.command("holdem_action", seat=3, action="call")
    assert holdem(t)["pot"] == 70 and holdem(t)["to_act"] == 6
    t.command("misdeal")
    assert t.state == "round_void"
    h = holdem(t)
    assert h["pot"] == 0 and h["pots"] == []
    assert h["returned"] == {"1": 30, "3": 30, "6": 10}      # the round_void event's rows
    returned = [e.to_json() for e in t.outbox if e.kind == "round_void"][-1]["returned"]
    assert h["returned"] == {str(r["box"]): r["amount"] for r in returned}
    assert h["stacks"] == {"1": 1000, "3": 500, "6": 200}   # as seated: nothing was lost
    assert h["to_act"] is None and h["legal"] == []
    assert h["seats"] == [1, 3, 6] and h["button"] == 1


def test_a_hand_voided_with_a_side_pot_shows_neither_pot():
    t = all_in_on_the_flop()
    t.command("void_round", role="supervisor", reason="a player disputes the deal")
    h = holdem(t)
    assert h["pot"] == 0 and h["pots"] == []
    assert h["returned"] == {"1": 300, "3": 300, "6": 200}
    assert h["stacks"] == {"1": 1000, "3": 500, "6": 200}


def test_a_hand_the_ruling_voids_in_malfunction_shows_no_pot_either():
    """A shuffler jam between streets voids the hand (art. 9(2), H11) and stops the table in
    malfunction for the supervisor: the void is the same for the display."""
    t = table("texas-holdem", "shuffler", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    t.command("close_bets")
    for c in ("As", "Kd", "Ah", "Kc"):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=Card.parse(c)))
    t.command("holdem_action", seat=5, action="call")
    t.command("holdem_action", seat=2, action="check")
    assert holdem(t)["pot"] == 20
    t.handle_device(ev.Jam(device="shuffler", ts=0.0, where="output"))
    assert t.state == "malfunction" and t.round.void is not None
    h = holdem(t)
    assert h["pot"] == 0 and h["pots"] == [] and h["returned"] == {"2": 10, "5": 10}
    assert h["stacks"] == {"2": 500, "5": 500}


def test_a_hand_in_play_has_nothing_returned():
    t = seated()
    draw(t, *HOLE)
    assert "returned" not in holdem(t)


# --- the pots: main pot and side pots (11/2008 art. 10, 11(3); interpretation H3) -------------

def pots(t):
    return holdem(t)["pots"]


def test_the_blinds_make_one_pot_every_seat_in_the_hand_may_win():
    t = seated()
    draw(t, *HOLE)
    # seat 1 (the button) has put nothing in yet, but it may still call: it is in the pot
    assert pots(t) == [{"amount": 15, "eligible": [1, 3, 6]}]


def test_a_fold_leaves_the_pot_to_the_others():
    t = seated()
    draw(t, *HOLE)
    t.command("holdem_action", seat=1, action="call")
    t.command("holdem_action", seat=3, action="fold")
    assert pots(t) == [{"amount": 25, "eligible": [1, 6]}]


def all_in_on_the_flop():
    """Seat 6 goes all-in for its 200 pre-flop behind a raise and a call; seats 1 and 3 play
    on for the chips above it."""
    t = seated()
    draw(t, *HOLE)
    t.command("holdem_action", seat=1, action="raise", amount=300)
    t.command("holdem_action", seat=3, action="call")
    t.command("holdem_action", seat=6, action="allin")
    draw(t, "2d", "3d", "4d", "5h")         # burn, flop
    assert t.state == "player_decisions" and holdem(t)["street"] == "flop"
    return t


def test_an_all_in_for_less_makes_a_side_pot_the_all_in_seat_cannot_win():
    t = all_in_on_the_flop()
    assert pots(t) == [{"amount": 600, "eligible": [1, 3, 6]},
                       {"amount": 200, "eligible": [1, 3]}]
    t.command("holdem_action", seat=3, action="bet", amount=100)
    # seat 1 has not answered the bet yet: it may still call, so the side pot is its too
    assert pots(t) == [{"amount": 600, "eligible": [1, 3, 6]},
                       {"amount": 300, "eligible": [1, 3]}]
    assert sum(p["amount"] for p in pots(t)) == holdem(t)["pot"]


def test_at_settlement_the_view_has_the_pots_the_settlement_awards():
    t = all_in_on_the_flop()
    t.command("holdem_action", seat=3, action="bet", amount=100)
    t.command("holdem_action", seat=1, action="fold")
    draw(t, "6c", "8s", "9c", "Jh")          # burn, turn, burn, river: nobody left to bet
    assert t.state == "settlement"
    awarded = t.public_view()["round"]["settlement"]["pots"]
    # seat 3's last 100 was never called: it goes back to it and is in no pot
    assert pots(t) == [{"amount": 600, "eligible": [3, 6]}, {"amount": 200, "eligible": [3]}]
    assert pots(t) == [{"amount": p["amount"], "eligible": p["eligible"]} for p in awarded]


def test_two_all_ins_of_different_sizes_make_two_side_pots():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3, 6, 8], stacks={"1": 100, "3": 1000, "6": 250,
                                                          "8": 1000}, button=8, role="supervisor")
    draw(t, *("2c", "3c", "4c", "5c", "6c", "7c", "8c", "9c"))
    assert holdem(t)["to_act"] == 6      # blinds on seats 1 and 3; seat 6 speaks first
    t.command("holdem_action", seat=6, action="allin")           # 250
    t.command("holdem_action", seat=8, action="raise", amount=600)
    t.command("holdem_action", seat=1, action="allin")           # 100, the small blind in it
    assert holdem(t)["to_act"] == 3
    assert pots(t) == [{"amount": 100 + 100 + 100 + 10, "eligible": [1, 3, 6, 8]},
                       {"amount": 150 + 150, "eligible": [3, 6, 8]},
                       {"amount": 350, "eligible": [3, 8]}]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_pots_shown_while_betting_are_what_each_seat_can_still_win(data):
    """Any hand, any legal actions: an all-in seat may win from each pot it is eligible for
    exactly what it matched; a seat that may still bet is eligible for every pot; no pot
    holds chips nobody else may contest; and once the betting is over the pots are the
    settlement's own (build_pots)."""
    n = data.draw(st.integers(2, 6), label="players")
    seats = sorted(data.draw(st.lists(st.integers(1, 10), min_size=n, max_size=n, unique=True)))
    stacks = {s: data.draw(st.integers(1, 400), label=f"stack {s}") for s in seats}
    h = start_hand(seats, stacks, data.draw(st.sampled_from(seats)), 5, 10)
    while True:
        all_in = {s for s in h.contenders if h.stacks[s] == 0}
        shown = view_pots(h.committed, h.folded, all_in, h.is_over)
        if h.is_over:
            assert shown == [{"amount": p.amount, "eligible": list(p.eligible)}
                             for p in build_pots(h.committed, h.folded)[0]]
            break
        assert shown and all(p["amount"] > 0 and p["eligible"] for p in shown)
        assert sum(p["amount"] for p in shown) <= h.pot
        for s in h.contenders:
            mine = [p for p in shown if s in p["eligible"]]
            if s in all_in:
                assert mine == shown[:len(mine)]
                assert sum(p["amount"] for p in mine) == sum(
                    min(c, h.committed[s]) for c in h.committed.values())
            else:
                assert mine == shown
        assert all(set(p["eligible"]) <= set(h.contenders) for p in shown)
        if h.to_act is None:
            break
        legal = h.legal_actions()
        a = data.draw(st.sampled_from(legal), label="action")
        amount = None if a.min_to is None else data.draw(st.integers(a.min_to, a.max_to))
        h.act(h.to_act, a.kind, amount if a.kind in ("bet", "raise") else None)
