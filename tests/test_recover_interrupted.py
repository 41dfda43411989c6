"""Recovery writes the decisions of the input a kill interrupted, even when the daemon has
journaled records of its own (service start, configuration) after that input."""
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES


def runner_on(path):
    journal = Journal.open(path, "T1")
    table = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES)
    return TableRunner(table, journal), journal


def dealing_round(runner):
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.command("close_bets")
    for c in ("As", "Kd"):
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c)))
    assert runner.table.state == "dealing"


def test_round_ended_by_the_interrupted_input_is_closed_after_service_records(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = runner_on(path)
    dealing_round(runner)
    rid = runner.table.round.round_id
    # The shoe's "empty" voids the round; it is journaled, then the kill lands before its
    # decisions are. The restarted daemon writes its own records before it recovers.
    journal.append("device", {"source": "device",
                              "event": ev.Empty(device="shoe", ts=0.0).to_json()},
                   str(rid), "shoe")
    journal.append("service", {"event": "start", "pid": 1}, source="service")
    journal.append("config", {"game": "q-poker"}, source="service")
    journal.close()

    runner2, journal2 = runner_on(path)
    runner2.recover()
    closes = list(journal2.records(kinds=["round_close"], round_id=str(rid)))
    assert len(closes) == 1 and closes[0].payload["outcome"] == "void"
    # Written once: a second restart does not write them again.
    journal2.close()
    runner3, journal3 = runner_on(path)
    runner3.recover()
    assert len(list(journal3.records(kinds=["round_close"], round_id=str(rid)))) == 1
    assert journal3.verify().ok
