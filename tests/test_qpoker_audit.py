"""Q Poker (89/2004) at the table: what an audit of the table's flow against the text found,
each case driven through the table machine as the console and the devices drive it."""
import json

import pytest

from table_helpers import draw, hand, rulings, table

CROUPIER = ("Qh", "3h", "9h")


def _published(t):
    return json.dumps([e.to_json() for e in t.outbox]) + json.dumps(t.public_view())


def _deal_a_card_twice(game, mode, **kw):
    """Boxes 1 and 2 bet; the device reads box 2's second card as box 1's first (As)."""
    t = table(game, mode, **kw)
    wager = "versus_croupier" if game == "q-poker" else "ante"
    t.command("place_bet", box=1, wager=wager, amount=10)
    t.command("place_bet", box=2, wager=wager, amount=10)
    if mode == "shuffler":
        t.command("close_bets")
        hand(t, "As", "2c", "5d")
        hand(t, "Kd", "As", "7c")
        hand(t, *CROUPIER)
    else:
        draw(t, "As", "Kd", CROUPIER[0], "2c", "As", CROUPIER[1], "5d", "7c", CROUPIER[2])
    return t


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_player_card_read_as_another_players_is_ruled_before_anyone_decides_art_1_1_11_5(mode):
    # One deck holds each card once (art. 1(1), Q3 `one`): two open hands holding the As is a
    # reading every player sees at the opening (art. 9(1)). It was left to the settlement,
    # after every player had decided (a fold losing half the bet, art. 9(3)) and the
    # croupier's hand had been turned over. It is the dealing device's failure while dealing
    # (art. 11(5); Q5 for the shoe): the round is void at once, before any decision, and
    # neither the players' hands nor the croupier's are shown.
    t = _deal_a_card_twice("q-poker", mode)
    assert t.state in ("malfunction", "round_void")
    assert t.round.void is not None and not t.round.decisions
    assert rulings(t)[-1]["remedy"] == "round_void"
    assert rulings(t)[-1]["article"].startswith("89/2004 art. 11")
    kinds = [e.kind for e in t.outbox]
    assert "decisions_open" not in kinds and "hand_revealed" not in kinds
    assert "hand_opened" not in kinds
    out = _published(t)
    assert not any(c in out for c in CROUPIER + ("As", "Kd", "2c", "5d", "7c"))
    returned = [e.to_json() for e in t.outbox if e.kind == "round_void"][-1]["returned"]
    assert sorted(b["box"] for b in returned) == [1, 2]


def test_under_several_decks_the_same_card_twice_is_no_misread_q3():
    # Q3 `several`: more than one deck may be in the shoe; the hands open and play goes on.
    t = _deal_a_card_twice("q-poker", "shoe", interpretations={"decks": "several"})
    assert t.state == "player_decisions"
    assert not rulings(t)


def test_under_q5_continue_the_card_read_twice_holds_the_round_before_the_opening():
    # Q5 `continue` lets the round stand after a shoe failure: the round is held for the
    # supervisor before any hand is opened or any decision taken, and ruled only once.
    t = _deal_a_card_twice("q-poker", "shoe", interpretations={"shoe_malfunction": "continue"})
    assert t.state == "malfunction" and t.round.void is None
    assert "hand_opened" not in [e.kind for e in t.outbox]
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "player_decisions" and len(rulings(t)) == 1


@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker"])
def test_a_card_of_a_hand_the_shuffler_put_out_whole_reported_exposed_names_no_card(game):
    # The shuffler deals three cards at a time (89/2004 art. 7(2), 78/2008 art. 7(2)): which
    # of the three was exposed the report cannot say. Taking the hand's last card published a
    # card still face down (the As was shown, the Qh published); the round goes on (89/2004
    # art. 11(2), 78/2008 art. 11(2)) and the hand is shown at its opening (art. 9(1)).
    t = table(game, "shuffler")
    wager = "versus_croupier" if game == "q-poker" else "ante"
    t.command("place_bet", box=1, wager=wager, amount=10)
    t.command("close_bets")
    hand(t, "As", "Kd", "Qh")                       # the croupier saw the As
    t.command("exposed_card", recipient="box 1")
    r = rulings(t)[-1]
    assert (r["remedy"], r["recipient"]) == ("continue", "box 1")
    assert "card_exposed" not in [e.kind for e in t.outbox]
    assert not any(c in _published(t) for c in ("As", "Kd", "Qh"))
    hand(t, "2c", "7d", "9s")                       # the croupier's
    assert t.state == "player_decisions"
    opened = [e.to_json() for e in t.outbox if e.kind == "hand_opened"]
    assert opened[-1]["hand"] == ["As", "Kd", "Qh"]
    assert not any(c in _published(t) for c in ("2c", "7d", "9s"))
