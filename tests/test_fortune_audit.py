"""Fortune 3 Card Poker (78/2008) at the table: what an audit of the table's flow against the
text found, each case driven through the table machine as the console and the devices drive
it."""
import pytest

from table_helpers import hand, rulings, settlement, table
from test_qpoker_audit import CROUPIER, _deal_a_card_twice, _published


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_player_card_read_as_another_players_is_ruled_before_anyone_decides_art_1_11_4(mode):
    # One 52-card deck (art. 1(1)): two open hands holding the As is a misreading every player
    # sees at the opening (art. 9(1)); it was found only at the settlement, after the players
    # had decided (folding loses the Ante, art. 9(3)) and the croupier's hand was shown. It is
    # the dealing device's failure while dealing (art. 11(4); F7 for the shoe): void at once.
    t = _deal_a_card_twice("fortune-3-card-poker", mode)
    assert t.round.void is not None and not t.round.decisions
    assert rulings(t)[-1]["remedy"] == "round_void"
    assert rulings(t)[-1]["article"].startswith("78/2008 art. 11")
    kinds = [e.kind for e in t.outbox]
    assert not {"decisions_open", "hand_revealed", "hand_opened"} & set(kinds)
    out = _published(t)
    assert not any(c in out for c in CROUPIER + ("As", "Kd", "2c", "5d", "7c"))



def test_the_croupiers_hand_put_out_whole_with_a_card_exposed_is_set_aside_unseen_art_11_2():
    # With the shuffler the croupier's three cards come out as one hand (art. 7(2)), the last
    # of the deal; which of them was exposed the report cannot say. Taking the last one (F4
    # `next_card`, F6 `set_aside`) published the Jc, still face down, as the card set aside,
    # and kept the exposed Ks in the croupier's hand for the settlement. None of the three can
    # be named: they are set aside, none shown, and the croupier receives the shuffler's next
    # three (the exposed card out of his hand, the rest dealt face down, art. 11(2)).
    t = table("fortune-3-card-poker", "shuffler")
    t.command("place_bet", box=2, wager="ante", amount=10)
    t.command("close_bets")
    hand(t, "2h", "3h", "4h")                       # box 2
    hand(t, "Ks", "Qd", "Jc")                       # the croupier's; the hands open
    assert t.state == "player_decisions"
    t.command("exposed_card", recipient="croupier")     # the dealer saw the K
    assert rulings(t)[-1]["remedy"] == "set_aside"
    aside = [e.to_json() for e in t.outbox if e.kind == "card_set_aside"][-1]
    assert aside["cards"] == [None, None, None]
    assert not any(c in _published(t) for c in ("Ks", "Qd", "Jc"))
    hand(t, "5s", "6s", "7s")                       # the croupier's next hand
    t.command("decide", box=2, decision="play")
    assert not any(c in _published(t) for c in ("Qd", "Jc"))
    assert sorted(settlement(t)["hands"]["croupier"]["cards"]) == ["5s", "6s", "7s"]


@pytest.mark.parametrize("game, cites", [
    ("q-poker", "(89/2004 art. 9(3))"),
    ("fortune-3-card-poker", "(78/2008 art. 9(3))")])
def test_a_decision_given_twice_is_refused_citing_the_games_own_article(game, cites):
    # The refusal cited a bare "art. 9(3)", Q Poker's words ("uma vez tomada a sua decisão,
    # esta não pode ser revogada"), at a Fortune 3 Card Poker table too, whose art. 9(3)
    # says instead that a box that does not play is lost, its cards and bets collected.
    from controller.errors import TablectlError
    from table_helpers import draw
    t = table(game)
    wager = "versus_croupier" if game == "q-poker" else "ante"
    t.command("place_bet", box=1, wager=wager, amount=10)
    t.command("place_bet", box=2, wager=wager, amount=10)
    draw(t, "As", "Kd", "Qh", "2c", "3h", "5d", "7c", "8c", "9d")
    t.command("decide", box=1, decision="fold")
    before = (t.state, t.public_view(), len(t.outbox))
    with pytest.raises(TablectlError) as err:
        t.command("decide", box=1, decision="play")
    assert "irrevocable" in str(err.value) and cites in str(err.value)
    assert (t.state, t.public_view(), len(t.outbox)) == before


@pytest.mark.parametrize("reading", ["next_card", "next_hand"])
def test_the_croupiers_exposure_reported_again_before_his_new_cards_changes_nothing(reading):
    # A second report (the button pressed twice) while the croupier waits for the cards that
    # replace a hand set aside unseen turned the last of them face up and published it (the
    # Jc), or ruled again for no card (F4 `next_hand`): it is refused, nothing changed.
    from controller.errors import TablectlError
    t = table("fortune-3-card-poker", "shuffler",
              interpretations={"croupier_card_exposed_shuffler": reading})
    t.command("place_bet", box=2, wager="ante", amount=10)
    t.command("close_bets")
    hand(t, "2h", "3h", "4h")
    hand(t, "Ks", "Qd", "Jc")
    t.command("exposed_card", recipient="croupier")
    before = (t.state, t.public_view(), len(t.outbox))
    with pytest.raises(TablectlError, match="set aside already"):
        t.command("exposed_card", recipient="croupier")
    assert (t.state, t.public_view(), len(t.outbox)) == before
    assert not any(c in _published(t) for c in ("Ks", "Qd", "Jc"))
