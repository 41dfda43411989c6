"""An integrity alarm raised by a card coming out is held from the display until the round
ends: shown at once, it would say something of a card still face down (a duplicate raised as
the croupier's card comes out says that card is one already seen, and in Q Poker the players'
hands are open by then). What is read out of the journal while the round is open (`journal
show` and `export`, `integrity report`, as the pit may) must not say it either: not the
alarm's cards, not its kind, not that there is one. Once the round ends the alarm is there
in full. Q Poker with the shoe through the table's runner and journal; then the real daemon.
"""
import contextlib
import io
import json

import pytest

from controller.cli import main
from controller.integrity import IntegrityMonitor
from controller.journal import Journal
from controller.rig import Rig
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev
from rig_helpers import open_for_bets
from table_helpers import DEVICES, LAYOUT

WHILE_OPEN = [("journal", "show", "last"), ("journal", "show", "last", "--json"),
              ("journal", "export"), ("integrity", "report"), ("integrity", "report", "--json")]


def read(path, *argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--journal", str(path)]) == 0
    return out.getvalue()


def says_nothing_of_the_alarm(path):
    for argv in WHILE_OPEN:
        out = read(path, *argv)
        assert "duplicate" not in out, (argv, out)
        assert '"record": "alarm"' not in out and "record=alarm" not in out, (argv, out)
    report = json.loads(read(path, "integrity", "report", "--json"))
    assert report["alarms"]["total"] == 0


def test_an_alarm_a_face_down_card_raised_is_not_read_out_of_the_open_rounds_journal(tmp_path):
    path = tmp_path / "journal.db"
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=LAYOUT["q-poker"],
              devices=DEVICES, integrity=IntegrityMonitor())
    runner = TableRunner(t, Journal.open(path, "T1"))
    runner.command("open_table", "supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", "dealer", box=1, wager="versus_croupier", amount=10)
    # Box 1 gets As Th 3c (open at decisions, art. 9(1)); the croupier Kd 2c and, last, a
    # second As: the alarm says the croupier's face-down card is a card already out.
    for c in ("As", "Kd", "Th", "2c", "3c", "As"):
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c)))
    assert t.state == "player_decisions"
    says_nothing_of_the_alarm(path)
    runner.command("decide", "dealer", box=1, decision="play")     # the croupier reveals
    # Two aces of spades cannot be settled: the table stops for the supervisor, who voids it.
    assert t.state == "malfunction"
    runner.command("void_round", "supervisor", reason="the deck held a card twice")
    closed = json.loads(read(path, "integrity", "report", "--json"))
    assert [a["kind"] for a in closed["alarms"]["list"]] == ["duplicate_card"]
    assert closed["alarms"]["list"][0]["cards"] == ["As"]
    runner.journal.close()


@pytest.mark.hil
def test_the_daemons_journal_does_not_tell_the_alarm_while_the_round_is_open(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe")
    try:
        open_for_bets(rig)
        rig.must("place_bet", box=1, wager="versus_croupier", amount=10)
        # The deck in the shoe holds the ace of spades twice: box 1's first card and the
        # croupier's third, face down.
        shoe = rig.devices["shoe"]
        shoe.load_deck(["As", "Kd", "Th", "2c", "3c", "As", "9h", "8d"])
        for _ in range(6):
            shoe.draw()
        rig.wait_state("player_decisions")
        says_nothing_of_the_alarm(rig.journal_path)
        rig.must("decide", box=1, decision="play")
        rig.wait_state("malfunction")
        rig.must("void_round", "supervisor", reason="the deck held a card twice")
        closed = json.loads(read(rig.journal_path, "integrity", "report", "--json"))
        assert "duplicate_card" in [a["kind"] for a in closed["alarms"]["list"]]
    finally:
        rig.stop()
