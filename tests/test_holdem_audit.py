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
    assert rulings(t)[-1]["remedy"] == "continue" and rulings(t)[-1]["recipient"] == "box 1"
    assert not [e for e in t.outbox if e.kind == "card_exposed"]
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


def _flop_read_twice(**kw):
    """Seats 1 and 3 (button 1) see the flop; the shoe reads its second card as the first."""
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10}, **kw)
    t.command("seat_players", seats=[1, 3], stacks=[100, 100], button=1)
    draw(t, "Qd", "7h", "As", "Qc")                 # 3: Qd As; 1: 7h Qc
    act(t, 3, "call")
    act(t, 1, "check")
    draw(t, "5h", "Ah", "Ah")                       # burn, then the Ah read twice, face up
    return t


def test_a_board_card_read_as_one_already_face_up_is_ruled_at_once_art_9():
    # One deck holds each card once (art. 1(1)(3)): a board of Ah Ah is a reading every player
    # sees is wrong. An error in the distribution is dealt with at once (art. 9(1)); the table
    # opened the flop's betting on it and refused to settle only at the showdown, with every
    # street bet on a board it knew was wrong. The reading is the device's failure while
    # dealing (H11, default void: art. 9(2), every chip back), as a card it could not read.
    t = _flop_read_twice()
    assert t.state != "player_decisions"
    r = rulings(t)[-1]
    assert r["irregularity"] == "shoe_malfunction" and r["article"].startswith("11/2008 art. 9")
    assert t.round.void is not None
    void = [e.to_json() for e in t.outbox if e.kind == "round_void"][-1]
    assert [(x["box"], x["amount"]) for x in void["returned"]] == [(1, 10), (3, 10)]
    # the second reading is not shown as a card: the board holds one Ah
    board = [e.to_json()["hand"] for e in t.outbox if e.kind == "card"
             and e.to_json()["recipient"] == "board"][-1]
    assert board == ["Ah", None]


def test_under_h11_rectify_the_card_read_twice_is_entered_at_the_showdown():
    t = _flop_read_twice(interpretations={"machine_failure": "rectify"})
    assert t.state == "malfunction" and t.round.void is None
    t.command("clear_malfunction", role="supervisor")
    draw(t, "3d")                                   # the flop's third card
    for street in ((), ("6h", "9c"), ("8h", "Jd")):
        draw(t, *street)
        act(t, 3, "check")
        act(t, 1, "check")
    assert t.state == "croupier_reveal"
    assert [e.to_json() for e in t.outbox if e.kind == "cards_needed"][-1]["recipients"] == \
        ["board"]
    t.command("enter_cards", recipient="board", cards="Kh")     # as the croupier reads it
    assert t.state == "settlement"
    assert settlement(t)["hands"]["board"]["cards"] == ["Ah", "Kh", "3d", "9c", "Jd"]


def test_a_big_blind_short_of_chips_posts_all_in_and_the_highest_blind_is_called_art_5_6_4():
    # Art. 5(2): the second player left of the button posts the big blind; with 4 chips he is
    # all in for less. The text does not say what the others then call: art. 6(4) names the
    # player "que colocou a aposta prévia mais elevada" as the last to decide, so the highest
    # blind in front, the small blind's 5, is the bet, and its player has the option
    # (docs/interpretations.md, "a big blind short of chips"). A raise is still at least the
    # big blind more (art. 11(3), 12(1)); the short blind wins only what it matched.
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3, 6], stacks={"1": 100, "3": 100, "6": 4}, button=1)
    draw(t, "Qd", "7h", "As", "Qc", "2c", "Ks")     # 3: Qd Qc; 6: 7h 2c; 1: As Ks
    blinds = [e.to_json() for e in t.outbox if e.kind == "blinds"][-1]
    assert [(p["box"], p["to"], p["all_in"]) for p in blinds["posted"]] == \
        [(3, 5, False), (6, 4, True)]
    legal = {a["action"]: a for a in t.public_view()["holdem"]["legal"]}
    assert t.public_view()["holdem"]["to_act"] == 1
    assert legal["call"]["min_to"] == 5 and legal["raise"]["min_to"] == 15
    with pytest.raises(TablectlError, match="below the minimum 15"):
        act(t, 1, "raise", 14)
    act(t, 1, "call")
    assert t.public_view()["holdem"]["to_act"] == 3     # the small blind decides last
    act(t, 3, "check")
    assert t.state == "dealing"
    draw(t, "5h", "Ah", "Qs", "3d")
    act(t, 3, "check")
    act(t, 1, "check")
    for street in (("6h", "9c"), ("8h", "Jd")):
        draw(t, *street)
        act(t, 3, "check")
        act(t, 1, "check")
    assert t.state == "settlement"
    # main pot 3 x 4 = 12 and a side pot of 2 x 1 = 2: seat 3's three queens take both
    assert {w["box"]: w["net"] for w in settlement(t)["wagers"]} == {1: -5, 3: 9, 6: -4}


@pytest.mark.parametrize("reading, commission", [("rake", 5), ("no_flop_no_drop", 0)])
def test_everyone_folds_to_the_big_blind_who_wins_without_showing_art_13_16(reading,
                                                                              commission):
    # Art. 13: the others fold and their chips stay in the pot; the big blind's uncalled 50 goes
    # back (H3). Art. 16: the commission on the pot of 100 is 5 % (H7: taken or not without a
    # flop). No hole card is shown (art. 6(2), 13(2)).
    t = table("texas-holdem", holdem={"small_blind": 50, "big_blind": 100, "rake": 5},
              interpretations={"rake_without_flop": reading})
    t.command("seat_players", seats=[1, 3, 6], stacks=[1000, 1000, 1000], button=1)
    cards = ("Qd", "7h", "As", "Qc", "2c", "Ks")
    draw(t, *cards)
    act(t, 1, "fold")
    act(t, 3, "fold")
    assert t.state == "settlement"
    s = settlement(t)
    assert s["commission"] == commission
    assert {w["box"]: w["net"] for w in s["wagers"]} == {1: 0, 3: -50, 6: 50 - commission}
    assert "hand_revealed" not in [e.kind for e in t.outbox]
    text = json.dumps([e.to_json() for e in t.outbox]) + json.dumps(t.public_view())
    assert not any(c in text for c in cards)


def test_a_misdeal_after_the_first_board_card_returns_every_chip_art_9_2():
    # Art. 9(2): "os valores das apostas são devolvidos aos jogadores", the folded player's
    # blind too; the board card out stays face up, the burn and the hole cards are never shown.
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3, 6], stacks={"1": 100, "3": 50, "6": 100}, button=1)
    draw(t, "Qd", "7h", "As", "Qc", "2c", "Ks")
    act(t, 1, "raise", 30)
    act(t, 3, "fold")
    act(t, 6, "call")
    draw(t, "5h", "Ah")                             # burn, the flop's first card
    t.command("misdeal")
    assert t.state == "round_void"
    assert rulings(t)[-1]["article"].startswith("11/2008 art. 9(2)")
    void = [e.to_json() for e in t.outbox if e.kind == "round_void"][-1]
    assert [(r["box"], r["amount"]) for r in void["returned"]] == [(1, 30), (3, 5), (6, 30)]
    h = t.public_view()["holdem"]
    assert h["stacks"] == {"1": 100, "3": 50, "6": 100} and h["pots"] == [] and h["pot"] == 0
    text = json.dumps([e.to_json() for e in t.outbox]) + json.dumps(t.public_view())
    assert not any(c in text for c in ("Qd", "7h", "As", "Qc", "2c", "Ks", "5h"))


def test_with_the_shoe_each_hand_is_dealt_from_a_deck_shuffled_and_cut_for_it_art_1_3():
    # Art. 1(1)(3)-(4): one deck of 52 cards and a shoe with a cut card; art. 3(1)(1): the
    # croupier shuffles it by hand, cuts it and puts it in the shoe with the cut card at the
    # end, before the hand's first card goes to the left of the button (3(2)). A hand of ten
    # players takes 28 cards: the next hand cannot come from what is left.
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 3], stacks=[100, 100], button=1)
    draw(t, "Qd", "7h", "As", "Qc")
    act(t, 3, "fold")                               # the first to act folds: the hand is over
    t.command("confirm_result")
    t.command("next_round")
    assert t.state == "shuffling"
    with pytest.raises(TablectlError):
        t.command("seat_players", seats=[1, 3], stacks=[100, 100])
    t.command("deck_ready")
    t.command("seat_players", seats=[1, 3], stacks=[100, 100])
    assert t.state == "bets_open" and t.round.button == 3


def test_the_dealer_cannot_place_the_button_off_its_seat_a_supervisor_can_art_1_2():
    # Art. 1(2): the button starts before the player left of the croupier and moves to the
    # next player clockwise after each hand. Where the blinds fall is the table's to say: a
    # dealer's other seat is refused with nothing changed, a supervisor's is taken (a table
    # whose button was elsewhere before the controller came, a dispute settled).
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    with pytest.raises(TablectlError, match=r"due at seat 1\b.*art\. 1\(2\).*supervisor"):
        t.command("seat_players", seats=[1, 3, 6], stacks=[100, 100, 100], button=3)
    assert t.round.seats == () or not t.round.seats
    t.command("seat_players", seats=[1, 3, 6], stacks=[100, 100, 100], button=1)  # its seat
    t.command("void_round", role="supervisor", reason="players left")
    t.command("next_round")
    t.command("deck_ready")
    t.command("seat_players", seats=[1, 3, 6], stacks=[100, 100, 100], button=6,
              role="supervisor")
    assert t.round.button == 6
