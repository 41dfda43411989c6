"""Texas Hold'em (11/2008) on the table machine: streets, betting rounds, showdown, secrecy.

The hands are the worked examples of docs/settle.md, whose results are worked out by hand
from the articles there.
"""
import json

import pytest

from controller.errors import TablectlError
from controller.rules.base import Mode, PlanRequest
from drivers import events as ev

from table_helpers import draw, kinds, nets, ready, rulings, settlement, table


def act(t, seat, action, amount=None):
    t.command("holdem_action", seat=seat, action=action, amount=amount)


def test_example_1_side_pot_and_rake_through_the_machine():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10, "rake": 5})
    t.command("seat_players", seats=[1, 3, 6], stacks={"1": 1000, "3": 500, "6": 200},
              button=1)
    # art. 6(1): one card at a time from the left of the button: 3, 6, 1, 3, 6, 1.
    draw(t, "Qd", "7h", "As", "Qc", "2c", "Ks")
    assert t.state == "player_decisions"
    act(t, 1, "raise", 30)
    act(t, 3, "raise", 100)
    act(t, 6, "allin")
    act(t, 1, "call")
    act(t, 3, "call")
    assert t.state == "dealing"
    draw(t, "5h")                                   # art. 7(1): burn
    draw(t, "Ah", "Qs", "3d")                       # flop, face up
    assert t.state == "player_decisions"
    act(t, 3, "bet", 100)
    act(t, 1, "call")
    draw(t, "6h", "9c")                             # burn, turn
    act(t, 3, "check")
    act(t, 1, "check")
    draw(t, "8h", "Jd")                             # burn, river
    act(t, 3, "check")
    act(t, 1, "check")
    assert t.state == "settlement"
    n = nets(t)
    assert n[(3, "pot")] == 460 and n[(1, "pot")] == -300 and n[(6, "pot")] == -200
    assert settlement(t)["house_net"] == 40
    # art. 8(5): every player still in shows, in the order the game gives (as dealt: 3, 6, 1)
    shown = [e.data["recipient"] for e in t.outbox if e.kind == "hand_revealed"]
    order = t.game.reveal_order(PlanRequest(boxes=(1, 3, 6), mode=Mode.SHOE, layout_boxes=10,
                                            button=1))
    assert shown == [str(r) for r in order] == ["box 3", "box 6", "box 1"]
    # burn cards are never shown; the flop was public as it came.
    text = json.dumps([e.to_json() for e in t.outbox])
    for burn in ("5h", "6h", "8h"):
        assert burn not in text


def test_example_3_uncontested_hand_shows_no_hole_card():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10, "rake": 5},
              interpretations={"rake_without_flop": "no_flop_no_drop"})
    t.command("seat_players", seats=[4, 7], stacks=[300, 300], button=4)
    draw(t, "As", "Kd", "Ah", "Kc")                 # 7, 4, 7, 4
    act(t, 7, "raise", 30)
    act(t, 4, "fold")
    assert t.state == "settlement"
    n = nets(t)
    assert n[(7, "pot")] == 10 and n[(4, "pot")] == -10
    text = json.dumps([e.to_json() for e in t.outbox])
    assert not any(c in text for c in ("As", "Kd", "Ah", "Kc"))


def test_action_out_of_turn_is_refused_and_changes_nothing():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3, 6], stacks=[500, 500, 500], button=1)
    draw(t, "Qd", "7h", "As", "Qc", "2c", "Ks")
    before = len(t.outbox)
    with pytest.raises(TablectlError):
        act(t, 3, "call")                           # seat 1 is to act
    assert len(t.outbox) == before



@pytest.mark.parametrize("action, amount", [("fold", 50), ("FOLD", 0), ("check", 50)])
def test_a_fold_or_a_check_with_an_amount_is_refused_and_changes_nothing(action, amount):
    """A check given an amount (the croupier meant a bet of 50?) was taken as a check: the
    street closed and the next was dealt; a fold with one was taken too, and journaled with
    the amount. Either cannot be taken back, and what was meant cannot be told."""
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3, 6], stacks=[500, 500, 500], button=1)
    draw(t, "Qd", "7h", "As", "Qc", "2c", "Ks")
    act(t, 1, "call")
    act(t, 3, "call")                               # seat 6, the big blind, may check
    before = (t.state, t.public_view(), len(t.outbox))
    with pytest.raises(TablectlError) as refused:
        act(t, 6, action, amount)
    assert "amount" in str(refused.value) and "leave amount out" in str(refused.value)
    assert (t.state, t.public_view(), len(t.outbox)) == before
    act(t, 6, action.lower())
    assert t.round.actions[-1] == {"box": 6, "action": action.lower(), "amount": None}

def test_all_in_preflop_deals_the_board_without_betting_pauses():
    t = table("texas-holdem", "shuffler", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 5], stacks=[100, 100], button=2)
    t.command("close_bets")
    assert [c.action for c in t.commands][-1] == "dispense_card"
    for c in ("As", "Kd", "Ah", "Kc"):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=_c(c)))
    act(t, 5, "allin")      # heads-up (literal H4): seat 5 small blind acts first preflop
    act(t, 2, "call")
    assert t.state == "dealing"
    for c in ("2c", "7s", "8d", "9h", "3c", "Qs", "4d", "5s"):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=_c(c)))
    assert t.state == "settlement"
    assert "betting_round" not in kinds(t)[kinds(t).index("action"):]


def test_misdeal_voids_the_hand_art_9_2():
    t = table("texas-holdem")
    t.command("seat_players", seats=[1, 2], stacks=[100, 100])
    draw(t, "As")
    t.command("misdeal")
    assert t.state == "round_void"
    assert rulings(t)[-1]["article"].startswith("11/2008 art. 9")


def test_a_void_hand_returns_what_each_seat_put_in_the_pot_art_9_2():
    # Art. 9(2): the hand is void and "os valores das apostas são devolvidos aos jogadores".
    # The chips are in the pot, not on the layout: the void event says what goes back to whom.
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10, "rake": 5})
    t.command("seat_players", seats=[1, 3, 6], stacks={"1": 1000, "3": 500, "6": 200},
              button=1)
    draw(t, "Qd", "7h", "As", "Qc", "2c", "Ks")
    act(t, 1, "raise", 30)                          # seat 3 posted 5, seat 6 posted 10
    act(t, 3, "call")
    t.command("misdeal")
    void = [e.to_json() for e in t.outbox if e.kind == "round_void"][-1]
    assert void["returned"] == [
        {"box": 1, "wager": "pot", "player": None, "amount": 30},
        {"box": 3, "wager": "pot", "player": None, "amount": 30},
        {"box": 6, "wager": "pot", "player": None, "amount": 10}]
    assert sum(r["amount"] for r in void["returned"]) == 70


def _c(text):
    from controller.rules.cards import Card
    return Card.parse(text)


def test_exposed_hole_card_is_replaced_by_the_next_card_art_9_1():
    t = table("texas-holdem")
    t.command("seat_players", seats=[1, 2], stacks=[100, 100], button=1)
    draw(t, "As")                                   # seat 2's first card
    draw(t, "Kd", face_up=True)                     # seat 1's first card, face up
    r = rulings(t)[-1]
    assert r["remedy"] == "rectify" and r["article"] == "11/2008 art. 9(1)"
    aside = [e.to_json() for e in t.outbox if e.kind == "card_set_aside"][-1]
    assert aside["cards"] == ["Kd"]
    draw(t, "Qh")                                   # seat 1 receives the next card instead
    draw(t, "2c", "3c")                             # second cards: seat 2, seat 1
    assert t.state == "player_decisions"
    assert t.vault.count(t.tracker.plan[0].deal.recipient) == 2


def test_the_last_hole_card_placed_after_the_deal_is_no_irregularity():
    # Art. 6(1): two hole cards each; the box sensor sees the last one land on its seat after
    # the deal is complete and the betting has begun. The seat has a player.
    t = table("texas-holdem", box_sensors=True)
    t.command("seat_players", seats=[1, 3], stacks=[100, 100], button=1)
    for card, seat in (("As", 3), ("Kd", 1), ("Ah", 3), ("Kc", 1)):
        draw(t, card)
        t.handle_device(ev.CardPlaced(device="sensors", ts=0.0, box=seat))
    assert t.state == "player_decisions"
    assert not rulings(t) and kinds(t).count("card_placed") == 4
def test_a_card_to_an_empty_seat_is_put_right_and_stays_its_seats_card_art_9_1():
    # Art. 9(1): the error is rectified at once: the croupier moves the card to the seat it was
    # dealt for, and the deal goes on from there. Seat 5 has no player.
    t = table("texas-holdem", box_sensors=True)
    t.command("seat_players", seats=[1, 3], stacks=[100, 100], button=1)
    draw(t, "As")                                   # seat 3's first card
    t.handle_device(ev.CardPlaced(device="sensors", ts=0.0, box=5))
    r = rulings(t)[-1]
    assert r["irregularity"] == "card_to_box_without_bet" and r["remedy"] == "rectify"
    assert t.state == "dealing"
    for card, seat in (("Kd", 1), ("Ah", 3), ("Kc", 1)):
        draw(t, card)
        t.handle_device(ev.CardPlaced(device="sensors", ts=0.0, box=seat))
    assert t.state == "player_decisions" and len(rulings(t)) == 1
    from controller.rules.base import box
    assert t.vault.count(box(3)) == 2 and t.vault.count(box(1)) == 2
    assert box(5) not in t.vault.recipients()
    act(t, 3, "call")
    act(t, 1, "check")
    for street in (("2c", "7h", "8d", "9s"), ("3c", "Js"), ("4d", "5h")):   # burn first
        draw(t, *street)
        act(t, 3, "check")
        act(t, 1, "check")
    assert t.state == "settlement" and len(rulings(t)) == 1
    hands = {e.to_json()["recipient"]: e.to_json()["hand"] for e in t.outbox
             if e.kind == "hand_revealed"}
    assert sorted(hands["box 3"]) == ["Ah", "As"] and sorted(hands["box 1"]) == ["Kc", "Kd"]


def _revealed(t):
    return {e.to_json()["recipient"]: sorted(e.to_json()["hand"]) for e in t.outbox
            if e.kind == "hand_revealed"}


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_hole_card_exposed_while_the_board_is_dealt_stays_in_the_hand_art_9_1(mode):
    # Both players all in before the flop; while the flop is dealt a hole card is turned up.
    # Art. 9(1) rectifies errors in the distribution; the hole cards were dealt and played on,
    # so the card stays in the hand (art. 10(3)) and the board goes on from the next card.
    t = table("texas-holdem", mode, holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 2], stacks=[100, 100], button=1)
    if mode == "shuffler":
        t.command("close_bets")

    def out(*cards):
        for c in cards:
            if mode == "shoe":
                draw(t, c)
            else:
                t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=_c(c)))

    out("As", "Kd", "Ah", "Kc")                     # seats 2, 1, 2, 1
    act(t, 2, "allin")
    act(t, 1, "call")
    out("2c", "7s")                                 # burn, first flop card
    t.command("exposed_card", recipient="box 2")
    r = rulings(t)[-1]
    assert r["irregularity"] == "player_card_exposed" and r["remedy"] == "continue"
    # which of its two cards was shown cannot be told: none is named (art. 6(2))
    assert not [e for e in t.outbox if e.kind == "card_exposed"]
    out("8d", "9h", "3c", "Qs", "4d", "5s")         # flop, burn, turn, burn, river
    assert t.state == "settlement"
    assert _revealed(t) == {"box 2": ["Ah", "As"], "box 1": ["Kc", "Kd"]}
    assert settlement(t)["hands"]["board"]["cards"] == ["7s", "8d", "9h", "Qs", "5s"]
    assert nets(t) == {(1, "pot"): -100, (2, "pot"): 100}


def test_the_last_hole_card_exposed_is_replaced_before_the_betting_opens_art_9_1():
    # Art. 9(1): rectified at once; art. 6(3): the players decide after reading two cards.
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 2], stacks=[100, 100], button=1)
    draw(t, "As", "Kd", "Ah")
    draw(t, "Kc", face_up=True)                     # seat 1's second card, face up
    assert rulings(t)[-1]["remedy"] == "rectify"
    assert t.state == "dealing"                     # its replacement is owed first
    draw(t, "Qh")
    assert t.state == "player_decisions"
    act(t, 2, "call")
    act(t, 1, "check")
    for street in (("2c", "7s", "8d", "9h"), ("3c", "Js"), ("4d", "5s")):   # burn first
        draw(t, *street)
        act(t, 2, "check")                          # left of the button first (art. 7(2))
        act(t, 1, "check")
    assert t.state == "settlement"
    assert _revealed(t) == {"box 2": ["Ah", "As"], "box 1": ["Kd", "Qh"]}
    assert settlement(t)["hands"]["board"]["cards"] == ["7s", "8d", "9h", "Js", "5s"]


def test_a_hole_card_exposed_during_the_betting_stays_in_the_hand():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 2], stacks=[100, 100], button=1)
    draw(t, "As", "Kd", "Ah", "Kc")
    act(t, 2, "call")
    t.command("exposed_card", recipient="box 1")
    r = rulings(t)[-1]
    assert r["remedy"] == "continue" and t.state == "player_decisions"
    assert "replaced" not in r["reason"]
    act(t, 1, "check")
    assert t.state == "dealing" and t.tracker.expected.deal.recipient.kind == "burn"


def test_a_board_the_shuffler_could_not_read_is_entered_at_the_showdown_art_10():
    # A count-only shuffler reads no card: every hand, the board too, is entered as the
    # croupier reads it out at the showdown, and the best hand takes the pot (art. 10(1)-(2)).
    t = table("texas-holdem", "shuffler", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    t.command("close_bets")
    for _ in range(4):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=None))
    act(t, 5, "allin")
    act(t, 2, "call")
    for _ in range(8):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=None))
    assert t.state == "croupier_reveal"
    needed = [e.to_json() for e in t.outbox if e.kind == "cards_needed"][-1]
    assert sorted(needed["recipients"]) == ["board", "box 2", "box 5"]
    t.command("enter_cards", recipient="box 5", cards="As Ah")
    t.command("enter_cards", recipient="box 2", cards="Kd Kc")
    assert t.state == "croupier_reveal"
    t.command("enter_cards", recipient="board", cards="2c 7s 8d Qs 5s")
    assert t.state == "settlement"
    assert nets(t) == {(2, "pot"): -500, (5, "pot"): 500}


def test_a_hand_won_after_the_flop_from_a_count_only_shuffler_waits_for_the_board():
    # Won without a showdown: no hole card is shown, but the board, face up, is entered so the
    # hand can be settled; the table waits at the reveal, where cards are entered.
    t = table("texas-holdem", "shuffler", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    t.command("close_bets")
    for _ in range(4):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=None))
    act(t, 5, "call")
    act(t, 2, "check")
    for _ in range(4):
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=None))
    act(t, 5, "bet", 20)
    act(t, 2, "fold")
    assert t.state == "croupier_reveal"
    assert [e.to_json() for e in t.outbox if e.kind == "cards_needed"][-1]["recipients"] == \
        ["board"]
    with pytest.raises(TablectlError, match="not revealed"):
        t.command("enter_cards", recipient="box 2", cards="As Ah")
    t.command("enter_cards", recipient="board", cards="2c 7s 8d")
    assert t.state == "settlement"
    assert nets(t) == {(2, "pot"): -10, (5, "pot"): 10}
    assert "hand_revealed" not in kinds(t)


def test_the_button_moves_after_a_settled_or_void_hand_not_after_a_round_without_blinds():
    # Art. 1(2): after each hand the button moves to the next player clockwise; a hand voided
    # under art. 9(2) once the blinds were posted is a hand over (docs/interpretations.md).
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3, 6], stacks=[100, 100, 100])
    assert t.round.button == 1                      # left of the croupier first
    draw(t, "Qd", "7h", "As", "Qc", "2c", "Ks")     # seats 3, 6, 1, 3, 6, 1
    act(t, 1, "fold")
    act(t, 3, "fold")
    assert t.state == "settlement"
    t.command("confirm_result")
    t.command("next_round")
    ready(t)
    t.command("seat_players", seats=[1, 3, 6], stacks=[100, 100, 100])
    assert t.round.button == 3
    draw(t, "As")
    t.command("misdeal")
    t.command("next_round")
    ready(t)
    t.command("seat_players", seats=[1, 3, 6], stacks=[100, 100, 100])
    assert t.round.button == 6
    t.command("void_round", role="supervisor", reason="players left")
    t.command("next_round")
    ready(t)
    t.command("seat_players", seats=[1, 3, 6], stacks=[100, 100, 100])
    assert t.round.button == 6                      # no blinds were posted: it stays
