"""Three refusals that named what does not hold, or a way out that cannot work.

* ``switch_mode`` with a round held open before its shuffle spoke of "bets of an unfinished
  round on the layout", where no bet can be yet: it says what holds (the round is open, no bet
  on it yet) and the ways out the table takes (void it, or clear and finish it).
* the ``clear_malfunction`` of a table out of service, refused while a device connects, ended
  with "the round could not be dealt": there is no round; it says the table is out of service
  and that the supervisor opens it (open_table) once cleared.
* a device of the round in play whose id table.toml no longer names (``Kd``, an id of an
  earlier file) was told to be reconnected when its link was lost: nothing links under that
  id again. The way out is the round's end (void_round).
"""
from __future__ import annotations

import pytest

from controller.config import parse_text
from controller.errors import TablectlError
from controller.rules import get_game
from controller.table import Table
from drivers import events as ev

from table_helpers import DEVICES, LAYOUT, faulty, table  # noqa: F401 - faulty: a fixture
from test_config_card_names import (IDENTITY, bets_in_play_under_kd, runner as config_runner,
                                    taken_before, with_device)
from test_table_opening_waits_for_links import refused, restarted, runner, up


def test_switch_mode_with_a_round_held_before_betting_names_no_bet(tmp_path):
    """The shoe jams while the croupier shuffles: the round opened is held, and nothing is on
    the layout. Its way out works: void it, then switch."""
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=LAYOUT["q-poker"],
              devices=DEVICES)
    t.command("open_table", role="supervisor")
    t.handle_device(ev.Jam(device="shoe", ts=0.0, where="exit"))
    assert t.state == "malfunction" and t.round_held() and not t.round.bets
    with pytest.raises(TablectlError) as info:
        t.command("switch_mode", role="supervisor", mode="shuffler")
    why = str(info.value)
    assert "bets of an unfinished round" not in why and "bets are on" not in why, why
    assert "round 1 is held by the malfunction" in why, why
    assert "no bet is on the layout yet" in why, why
    assert "void_round" in why and "clear_malfunction" in why, why
    assert t.mode.value == "shoe"
    t.command("void_round", role="supervisor", reason="shoe jammed while shuffling")
    t.command("switch_mode", role="supervisor", mode="shuffler")
    assert t.mode.value == "shuffler"


@pytest.mark.parametrize("game, bet", [
    ("q-poker", ("place_bet", {"box": 1, "wager": "versus_croupier", "amount": 10})),
    # Hold'em's blinds are the betting engine's, posted as betting closes: no bet of the round
    ("texas-holdem", ("seat_players", {"seats": [1, 2, 3], "stacks": [500] * 3})),
])
def test_switch_mode_with_a_round_held_with_its_bets_names_them(game, bet):
    t = table(game)
    t.command(bet[0], **bet[1])
    t.command("close_bets")
    t.handle_device(ev.Jam(device="shoe", ts=0.0, where="exit"))
    assert t.state == "malfunction" and t.round_held()
    with pytest.raises(TablectlError, match="its bets are on the layout.*its bets returned"):
        t.command("switch_mode", role="supervisor", mode="shuffler")


def test_a_closed_tables_clear_refused_for_a_connecting_device_names_no_round(faulty,
                                                                              tmp_path):
    """The controller faulted while the table was out of service; after a restart the shoe
    has not linked yet. The clear is refused, saying the table is out of service and what the
    supervisor does once the shoe links: clear, then open_table."""
    run = runner(tmp_path)
    run.device(ev.Malfunction(device="shoe", ts=0.0, code=7, text="motor"))
    assert run.table.state == "malfunction"
    run.journal.close()

    again = restarted(tmp_path)
    why = refused(again, "clear_malfunction", role="supervisor")
    assert "round could not be dealt" not in why, why
    assert why.startswith("cannot clear the malfunction of the table out of service: shoe "
                          "has not linked"), why
    assert "no round is in play" in why and "open the table (open_table)" in why, why
    up(again)
    again.command("clear_malfunction", role="supervisor")
    assert again.table.state == "out_of_service"
    again.command("open_table", role="supervisor")
    assert again.table.state == "shuffling"
    again.journal.close()


def test_a_lost_link_of_a_device_no_longer_configured_names_the_void(tmp_path):
    """A journal written when table.toml named the shoe ``Kd``: its link is lost while a round
    holds bets. Restarted with the shoe renamed ``shoe-1``, the round in play keeps ``Kd``,
    whose link never comes back: the clear names it as the view does and says to void the
    round, not to reconnect it; the void and the next round go on with ``shoe-1``."""
    renamed = parse_text(with_device("shoe-1"))
    run = config_runner(tmp_path, taken_before(renamed))
    bets_in_play_under_kd(run)
    run.device(ev.LinkLost(device="Kd", ts=1.0, reason="unplugged"))
    assert "link_lost" in run.table.conditions["Kd"], run.table.conditions
    run.journal.close()

    again = config_runner(tmp_path, renamed)
    again.recover()
    again.device(ev.LinkUp(device="shoe-1", ts=2.0, identity=IDENTITY))
    t = again.table
    assert t.state == "malfunction", t.state
    with pytest.raises(TablectlError) as info:
        again.command("clear_malfunction", role="supervisor")
    why = str(info.value)
    assert "Kd (device id of an earlier table.toml)" in why, why
    assert "reconnect" not in why and "cable" not in why, why
    assert "no longer in table.toml" in why and "void_round" in why, why
    again.command("void_round", role="supervisor", reason="shoe renamed in table.toml")
    again.command("next_round")
    again.command("deck_ready")
    assert t.state == "bets_open"
    again.journal.close()
