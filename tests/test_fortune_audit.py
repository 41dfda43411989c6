"""Fortune 3 Card Poker (78/2008) at the table: what an audit of the table's flow against the
text found, each case driven through the table machine as the console and the devices drive
it."""
import pytest

from table_helpers import rulings
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
