"""The real controller killed while dealing, its table.toml edited before it comes back.

Q Poker on the simulated shoe: two bets, one above the limit the operator then writes into
table.toml, the first card drawn, SIGKILL. The restarted process rebuilds the round under the
configuration it was played under: the restart while dealing voids it (89/2004 art. 11(5))
and returns both bets; the lower limit holds from the next round.
"""
import signal

import pytest

from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil


def test_a_limit_lowered_while_the_controller_was_down_takes_no_bet_off_the_round(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe", seed=5)
    rig.start_devices()
    try:
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        rig.devices["shoe"].load_deck(fresh=True)
        rig.must("deck_ready")
        rig.must("place_bet", box=1, wager="versus_croupier", amount=50)
        rig.must("place_bet", box=3, wager="versus_croupier", amount=20)
        mark = rig.mark()
        rig.devices["shoe"].draw()
        rig.wait_event(lambda e: e["kind"] == "card", since=mark)
        rig.kill(signal.SIGKILL)

        rig.config_path.write_text(rig.config_path.read_text() + "\n[limits]\nmax = 20\n")
        rig.start_controller()
        rig.wait_links()
        assert rig.wait_state("malfunction") == "malfunction"
        with Journal.open(rig.journal_path, readonly=True) as j:
            void = j.last(kind="round_close").payload
            report = j.last(kind="recovery").payload["report"]
        assert void["outcome"] == "void" and void["article"] == "89/2004 art. 11(5)"
        assert sorted((b["box"], b["amount"]) for b in void["returned"]) == [(1, 50), (3, 20)]
        assert report["configuration"]["changed"] == ["limits"]

        rig.must("clear_malfunction", "supervisor")
        rig.devices["shoe"].load_deck(fresh=True)
        rig.must("deck_ready")
        refused = rig.command("place_bet", box=1, wager="versus_croupier", amount=50)
        assert not refused["ok"] and "above the table limit 20" in refused["error"]
        rig.must("place_bet", box=1, wager="versus_croupier", amount=20)
    finally:
        rig.stop()
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
