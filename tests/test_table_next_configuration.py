"""A table takes a new configuration when its next round opens, never during one.

``Table.configure_next_round`` hands the table another table built with the new settings: the
round in play keeps the limits, interpretations, layout, game and dealing mode it opened with
to its end, and the next round opens with the new ones (recovery uses it when table.toml
changed while the controller was down: docs/controller.md).
"""
import pytest

from controller.errors import TablectlError
from controller.rules import get_game
from controller.table import Table

from table_helpers import DEVICES, draw


def q_poker(mode="shoe", **kw):
    return Table("T1", get_game("q-poker"), mode, layout_boxes=kw.pop("layout", 7),
                 devices=DEVICES, **kw)


def opened(t):
    t.command("open_table", role="supervisor")
    t.command("deck_ready")
    return t


def void_and_next(t):
    t.command("void_round", role="supervisor", reason="test")
    t.command("next_round")


def test_a_lower_limit_waits_for_the_next_round():
    t = opened(q_poker())
    t.configure_next_round(q_poker(limits={"versus_croupier": (1, 20)}))
    t.command("place_bet", box=1, wager="versus_croupier", amount=50)   # the round's limits
    void_and_next(t)
    t.command("deck_ready")
    with pytest.raises(TablectlError, match="above the table limit 20"):
        t.command("place_bet", box=1, wager="versus_croupier", amount=50)
    assert t.round.bets == {}


def test_fewer_boxes_wait_for_the_next_round():
    t = opened(q_poker(layout=9))
    t.configure_next_round(q_poker(layout=7))
    t.command("place_bet", box=9, wager="versus_croupier", amount=10)
    void_and_next(t)
    t.command("deck_ready")
    with pytest.raises(TablectlError):
        t.command("place_bet", box=9, wager="versus_croupier", amount=10)
    assert t.layout_boxes == 7


def test_another_game_opens_the_next_round_with_its_deck_to_shuffle():
    t = opened(q_poker())
    fortune = Table("T1", get_game("fortune-3-card-poker"), "shoe", layout_boxes=7,
                    devices=DEVICES)
    t.configure_next_round(fortune)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As")
    assert t.round.game == "q-poker" and t.state == "dealing"
    void_and_next(t)
    started = [e.to_json() for e in t.outbox if e.kind == "round_started"][-1]
    assert started["game"] == "fortune-3-card-poker" and t.state == "shuffling"
    t.command("deck_ready")
    t.command("place_bet", box=1, wager="ante", amount=10)
    assert t.public_view()["game"] == "fortune-3-card-poker"


def test_another_mode_is_switched_to_as_the_next_round_opens():
    t = opened(q_poker())
    t.configure_next_round(q_poker(mode="shuffler"), switch_mode=True)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.outbox, t.commands = [], []
    void_and_next(t)
    kinds = [e.kind for e in t.outbox]
    assert kinds.index("mode") < kinds.index("round_started")
    assert t.mode.value == "shuffler" and t.round.mode == "shuffler"
    assert t.state == "shuffling" and any(c.device_class == "shuffler" for c in t.commands)


def test_the_mode_the_supervisor_chose_stays_unless_the_configuration_switches_it():
    t = opened(q_poker())
    t.configure_next_round(q_poker(mode="shuffler"))       # switch_mode not asked
    void_and_next(t)
    assert t.mode.value == "shoe"
