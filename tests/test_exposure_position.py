"""The croupier names which card was exposed (``exposed_card`` ``card``: its position among
the recipient's cards in the order they were dealt to it, 1 = its first).

Without ``card`` the last card dealt to the recipient is the exposed one, which is wrong as
soon as the recipient holds more than one card and an earlier one was shown. Each game's case,
driven through the table machine as the console and the shoe drive it: the named card is the
one ruled, set aside, replaced and published as the game's article says, and no other card of
the hand still face down leaves the controller (published events and the view) before its
reveal. A position the table cannot take is refused, naming the valid range, and nothing
changes."""
import json

import pytest

from controller.errors import TablectlError
from drivers import events as ev

from table_helpers import draw, hand, rulings, settlement, table


def published(t, since=0):
    """Everything the table published since ``since``, and its view now."""
    return json.dumps([e.to_json() for e in t.outbox[since:]]) + json.dumps(t.public_view())


def exposed(t, since=0):
    return [(e.to_json()["recipient"], e.to_json()["card"]) for e in t.outbox[since:]
            if e.kind == "card_exposed"]


def set_aside(t):
    return [e.to_json()["cards"] for e in t.outbox if e.kind == "card_set_aside"][-1]


def unchanged(t):
    """What a refusal must leave as it was."""
    return (t.state, t.public_view(), len(t.outbox), list(t.round.rulings),
            [str(s.deal.recipient) for s in t.tracker.plan] if t.tracker else None)


# --- Fortune 3 Card Poker, 78/2008 art. 11(2) ------------------------------------------------

def fortune(*cards):
    """Box 2 bets the Ante; the shoe deals box 2, the croupier, three times (art. 7(1))."""
    t = table("fortune-3-card-poker")
    t.command("place_bet", box=2, wager="ante", amount=10)
    draw(t, *cards)
    return t


def test_fortune_the_croupiers_first_card_exposed_after_the_deal_is_the_one_set_aside():
    # F6 `set_aside`: the exposed croupier card is set aside face up and he receives the next
    # card. Taking the last one set the Jc aside (shown, a card still face down) and kept the
    # exposed Ks in his hand for the settlement.
    t = fortune("2h", "Ks", "3h", "Qd", "4h", "Jc")
    assert t.state == "player_decisions"
    mark = len(t.outbox)
    t.command("exposed_card", recipient="croupier", card=1)
    r = rulings(t)[-1]
    assert (r["irregularity"], r["remedy"], r["position"]) == (
        "croupier_card_exposed", "set_aside", 1)
    assert set_aside(t) == ["Ks"]
    assert "Qd" not in published(t, mark) and "Jc" not in published(t, mark)
    assert t.state == "dealing"                     # the croupier is owed a card in its place
    draw(t, "5s")
    assert t.state == "player_decisions"
    assert "Qd" not in published(t, mark) and "Jc" not in published(t, mark)
    t.command("decide", box=2, decision="play")
    assert sorted(settlement(t)["hands"]["croupier"]["cards"]) == ["5s", "Jc", "Qd"]


def test_fortune_the_first_card_of_a_box_exposed_while_the_next_is_dealt_is_the_one_shown():
    # Art. 11(2): the round goes on and the exposed card is face up. Taking the last one
    # published the 3h, still face down, and left the 2h hidden.
    t = fortune("2h", "Ks", "3h")
    mark = len(t.outbox)
    t.command("exposed_card", recipient="box 2", card=1)
    assert rulings(t)[-1]["remedy"] == "continue" and rulings(t)[-1]["position"] == 1
    assert exposed(t, mark) == [("box 2", "2h")]
    assert t.public_view()["hands"]["box 2"] == ["2h", None]
    assert "3h" not in published(t, mark) and "Ks" not in published(t, mark)


def test_fortune_the_croupiers_card_exposed_while_dealing_is_the_one_set_aside():
    t = fortune("2h", "Ks", "3h", "Qd")
    mark = len(t.outbox)
    t.command("exposed_card", recipient="croupier", card=1)
    assert set_aside(t) == ["Ks"]
    assert "Qd" not in published(t, mark)
    draw(t, "5s", "4h", "Jc")                       # his card in place of the Ks first
    assert t.state == "player_decisions"
    t.command("decide", box=2, decision="play")
    assert sorted(settlement(t)["hands"]["croupier"]["cards"]) == ["5s", "Jc", "Qd"]
    assert sorted(settlement(t)["hands"]["box 2"]["cards"]) == ["2h", "3h", "4h"]


# --- Q Poker, 89/2004 art. 11(2) and 11(3) ---------------------------------------------------

def q_poker(*cards):
    """Box 1 bets versus the croupier; the shoe deals box 1, the croupier, three times."""
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, *cards)
    return t


def test_q_poker_a_players_first_card_exposed_is_the_one_shown():
    t = q_poker("As", "2c", "Kd", "3c")
    mark = len(t.outbox)
    t.command("exposed_card", recipient="box 1", card=1)
    assert rulings(t)[-1]["remedy"] == "continue"
    assert exposed(t, mark) == [("box 1", "As")]
    assert t.public_view()["hands"]["box 1"] == ["As", None]
    assert "Kd" not in published(t, mark)
    t.command("exposed_card", recipient="box 1", card=2)   # then his second one
    assert exposed(t, mark) == [("box 1", "As"), ("box 1", "Kd")]
    assert not any(c in published(t, mark) for c in ("2c", "3c"))


def test_q_poker_the_croupiers_card_named_voids_the_round_and_shows_nothing():
    # Art. 11(3): the round is void whichever of his cards it was; no card is shown.
    t = q_poker("As", "2c", "Kd", "3c")
    mark = len(t.outbox)
    t.command("exposed_card", recipient="croupier", card=1)
    r = rulings(t)[-1]
    assert (r["remedy"], r["position"]) == ("round_void", 1) and t.state == "round_void"
    assert exposed(t, mark) == []
    assert not any(c in published(t, mark) for c in ("2c", "3c", "Kd"))


# --- Super Pan 9, 261/96/M art. 4 -------------------------------------------------------------

def pan9(mode="shoe"):
    """Banker on seat 1; bets on seats 2 and 3; dice 1 1 1 2: seat 3 first, then 2, the
    banker last, two cards each in a row (art. 2(2)-(3))."""
    t = table("super-pan-9", mode)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100)
    t.command("place_bet", box=3, wager="seat", amount=50)
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 2)))
    return t


def test_pan9_a_seats_first_card_exposed_is_the_one_shown_the_second_stays_face_down():
    # Art. 4: the exposed card stays valid and the round goes on. Taking the last one
    # published the Kd, face down until the seat lays its cards down (art. 5(6)).
    t = pan9()
    draw(t, "9s", "Kd")                             # seat 3
    mark = len(t.outbox)
    t.command("exposed_card", recipient="box 3", card=1)
    r = rulings(t)[-1]
    assert (r["remedy"], r["article"], r["position"]) == ("continue", "261/96/M art. 4", 1)
    assert exposed(t, mark) == [("box 3", "9s")]
    assert t.public_view()["hands"]["box 3"] == ["9s", None]
    assert "Kd" not in published(t, mark)
    draw(t, "2c", "3c")                             # seat 2
    assert "Kd" not in published(t, mark)
    draw(t, "4h", "2h")                             # the banker
    assert t.state == "settlement"
    assert {w["box"]: w["outcome"] for w in settlement(t)["wagers"]} == {3: "win", 2: "lose"}


# --- Texas Hold'em, 11/2008 art. 9(1) ----------------------------------------------------------

def holdem():
    """Seats 1 and 2, button on 1: the hole cards go to seat 2, seat 1, seat 2, seat 1."""
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[1, 2], stacks=[100, 100], button=1)
    return t


def act(t, seat, action):
    t.command("holdem_action", seat=seat, action=action)


def test_holdem_a_hole_card_named_while_the_hole_cards_are_dealt_is_the_one_replaced():
    # Art. 9(1): rectified at once, the exposed hole card replaced by the next card. Taking the
    # last one set the Ah aside (shown, still face down) and left the exposed As in the hand.
    t = holdem()
    draw(t, "As", "Kd", "Ah")                       # seat 2: As Ah; seat 1: Kd
    mark = len(t.outbox)
    t.command("exposed_card", recipient="box 2", card=1)
    r = rulings(t)[-1]
    assert (r["remedy"], r["position"]) == ("rectify", 1)
    assert set_aside(t) == ["As"]
    assert "Ah" not in published(t, mark)
    draw(t, "Qh", "Kc")                             # seat 2's replacement first, then seat 1
    assert t.state == "player_decisions"
    assert t.public_view()["hands"]["box 2"] == [None, None]
    assert "Ah" not in published(t, mark) and "Qh" not in published(t, mark)
    act(t, 2, "call")
    act(t, 1, "check")
    for street in (("2c", "7s", "8d", "9h"), ("3c", "Js"), ("4d", "5s")):
        draw(t, *street)
        act(t, 2, "check")
        act(t, 1, "check")
    revealed = {e.to_json()["recipient"]: sorted(e.to_json()["hand"]) for e in t.outbox
                if e.kind == "hand_revealed"}
    assert revealed == {"box 2": ["Ah", "Qh"], "box 1": ["Kc", "Kd"]}


def test_holdem_a_hole_card_named_during_the_betting_is_shown_the_other_stays_face_down():
    # Art. 9(1), 10(3): once the hole cards are out an exposed one stays in the hand, face up.
    # Without a position which one was shown cannot be told and none is named; with one, that
    # card is face up at the table and shown, and only that one.
    t = holdem()
    draw(t, "As", "Kd", "Ah", "Kc")
    act(t, 2, "call")
    mark = len(t.outbox)
    t.command("exposed_card", recipient="box 1", card=2)
    r = rulings(t)[-1]
    assert (r["remedy"], r["position"]) == ("continue", 2) and t.state == "player_decisions"
    assert exposed(t, mark) == [("box 1", "Kc")]
    assert t.public_view()["hands"]["box 1"] == [None, "Kc"]
    assert not any(c in published(t, mark) for c in ("As", "Kd", "Ah"))
    act(t, 1, "fold")
    assert t.state == "settlement"
    assert not any(c in published(t) for c in ("As", "Kd", "Ah"))


# --- without a position: as before ------------------------------------------------------------

def test_without_a_position_the_last_card_dealt_is_the_exposed_one():
    t = q_poker("As", "2c", "Kd")
    mark = len(t.outbox)
    t.command("exposed_card", recipient="box 1")
    assert exposed(t, mark) == [("box 1", "Kd")]
    assert "position" not in rulings(t)[-1]


# --- refusals: nothing changes -----------------------------------------------------------------

@pytest.mark.parametrize("card, words", [
    (0, r"card 0 .*1 to 2"), (-1, r"1 to 2"), (4, r"card 4 .*1 to 2"),
    ("1", r"whole number from 1 to 2"), (1.0, r"whole number from 1 to 2"),
    (True, r"whole number from 1 to 2"), ([1], r"whole number from 1 to 2"),
    (3, r"card 3 of box 1 is not dealt yet.*1 to 2"),
    # too long to be spelled in a message (Python refuses to turn it into text)
    pytest.param(10 ** 5000, r"out of range.*1 to 2", id="huge"),
    pytest.param([10 ** 5000], r"whole number from 1 to 2", id="huge-in-a-list")])
def test_a_position_out_of_range_or_not_a_whole_number_is_refused_naming_the_range(card, words):
    t = q_poker("As", "2c", "Kd")                   # box 1 holds two cards of three
    before = unchanged(t)
    with pytest.raises(TablectlError, match=words):
        t.command("exposed_card", recipient="box 1", card=card)
    assert unchanged(t) == before


def test_a_card_already_face_up_is_refused():
    t = q_poker("As", "2c", "Kd")
    t.command("exposed_card", recipient="box 1", card=1)
    before = unchanged(t)
    with pytest.raises(TablectlError, match=r"card 1 of box 1 is already face up"):
        t.command("exposed_card", recipient="box 1", card=1)
    assert unchanged(t) == before


def test_a_card_dealt_face_up_by_the_shoe_is_refused_as_face_up():
    t = pan9()
    draw(t, "9s")
    draw(t, "Kd", face_up=True)                     # ruled as it came out (art. 4)
    before = unchanged(t)
    with pytest.raises(TablectlError, match=r"card 2 of box 3 is already face up"):
        t.command("exposed_card", recipient="box 3", card=2)
    assert unchanged(t) == before


def test_a_card_set_aside_already_is_refused():
    t = holdem()
    draw(t, "As", "Kd", "Ah")
    t.command("exposed_card", recipient="box 2", card=1)
    before = unchanged(t)
    with pytest.raises(TablectlError, match=r"card 1 of box 2 is set aside already"):
        t.command("exposed_card", recipient="box 2", card=1)
    assert unchanged(t) == before
    # the replacement is its third card, once dealt
    with pytest.raises(TablectlError, match=r"card 3 of box 2 is not dealt yet"):
        t.command("exposed_card", recipient="box 2", card=3)
    draw(t, "Qh")
    t.command("exposed_card", recipient="box 2", card=3)
    assert set_aside(t) == ["As", "Qh"]


def test_a_recipient_with_no_card_yet_is_refused():
    t = q_poker("As")
    before = unchanged(t)
    with pytest.raises(TablectlError, match=r"croupier has no card yet"):
        t.command("exposed_card", recipient="croupier", card=1)
    assert unchanged(t) == before


# --- hands the shuffler put out whole: no position can be told ----------------------------------

@pytest.mark.parametrize("game, recipient, bet, cards", [
    ("q-poker", "box 1", ("versus_croupier", 1), ("As", "Kd", "Qh")),
    ("fortune-3-card-poker", "croupier", ("ante", 1), None),
    ("super-pan-9", "box 3", None, ("9s", "Kd"))])
def test_a_position_in_a_hand_the_shuffler_put_out_whole_is_refused(game, recipient, bet, cards):
    # 89/2004 and 78/2008 art. 7(2): three cards at a time; 261/96/M: a seat's two in one hand.
    # Which of a hand's cards is its first the table cannot tell from the one the croupier saw:
    # the report is taken without a position, as before (no card shown).
    if game == "super-pan-9":
        t = pan9("shuffler")
        hand(t, *cards)
    else:
        t = table(game, "shuffler")
        t.command("place_bet", box=1, wager=bet[0], amount=10)
        t.command("close_bets")
        hand(t, "As", "Kd", "Qh")                   # box 1
        if game == "fortune-3-card-poker":
            hand(t, "2c", "3c", "5d")               # the croupier's
    before = unchanged(t)
    with pytest.raises(TablectlError, match=r"in one hand.*without card"):
        t.command("exposed_card", recipient=recipient, card=1)
    assert unchanged(t) == before
    t.command("exposed_card", recipient=recipient)     # as before
    assert exposed(t) == []


def test_a_card_set_aside_unseen_is_refused_without_calling_it_face_up():
    # 78/2008 art. 11(2), F4: the croupier's hand put out whole is set aside whole, none of it
    # shown. Naming one of those cards is refused, and the refusal says nothing of its face.
    t = table("fortune-3-card-poker", "shuffler")
    t.command("place_bet", box=1, wager="ante", amount=10)
    t.command("close_bets")
    hand(t, "As", "Kd", "Qh")
    hand(t, "2c", "3c", "5d")                       # the croupier's
    t.command("exposed_card", recipient="croupier")
    assert set_aside(t) == [None, None, None]
    before = unchanged(t)
    with pytest.raises(TablectlError, match=r"card 2 of croupier is set aside already") as err:
        t.command("exposed_card", recipient="croupier", card=2)
    assert "face up" not in str(err.value)
    assert unchanged(t) == before
