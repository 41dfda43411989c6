"""The table with its journal: written before acted on, and recovered after a crash."""
import pytest

from controller.errors import TablectlError
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, deck_checked


def new_runner(path, game="q-poker", mode="shoe", seen=None):
    journal = Journal.open(path, "T1")
    table = Table("T1", get_game(game), mode, layout_boxes=7, devices=DEVICES)

    def publish(e):
        # Written before acted on: the journal already holds this very event.
        docs = [r.payload for r in journal.records(since=journal.head()[0] - 50)]
        assert any(d == e.to_json() or (isinstance(d, dict) and
                                         {k: v for k, v in d.items() if k not in
                                          ("snapshot", "outcome")} == e.to_json())
                   for d in docs), e.kind
        if seen is not None:
            seen.append(e)
    return TableRunner(table, journal, publish=publish), journal


def drawn(runner, *cards, face_up=False):
    for c in cards:
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c), face_up=face_up))


def start_round(runner):
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.command("place_bet", box=3, wager="pair_bonus", amount=5)
    runner.command("place_bet", box=3, wager="versus_croupier", amount=20)


def kinds_of(journal, round_id=None):
    return [r.kind for r in journal.records(round_id=round_id)]


def test_round_is_journaled_before_it_is_published(tmp_path):
    seen = []
    runner, journal = new_runner(tmp_path / "j.db", seen=seen)
    start_round(runner)
    drawn(runner, "As", "Kd")
    drawn(runner, "2c", face_up=True)          # 89/2004 art. 11(3): round void
    assert runner.table.state == "round_void"
    decisions = [r for r in journal.records(kinds=["decision"])]
    assert decisions and decisions[-1].article == "89/2004 art. 11(3)"
    close = journal.last(kind="round_close")
    assert close.payload["outcome"] == "void" and close.article == "89/2004 art. 11(3)"
    # the device event that caused it is journaled before the decision
    dev = [r for r in journal.records(kinds=["device"])][-1]
    assert dev.payload["event"]["face_up"] is True and dev.seq < decisions[-1].seq
    assert journal.verify().ok
    assert any(e.kind == "round_void" for e in seen)


def test_refused_command_is_journaled_and_changes_nothing(tmp_path):
    runner, journal = new_runner(tmp_path / "j.db")
    start_round(runner)
    before = len(journal)
    with pytest.raises(TablectlError):
        runner.command("decide", box=1, decision="play")
    recs = list(journal.records(since=before))
    assert [r.kind for r in recs] == ["command", "refused"]
    assert runner.table.state == "bets_open"


def recovered(path, game="q-poker", mode="shoe"):
    runner, journal = new_runner(path, game, mode)
    report = runner.recover()
    return runner, journal, report


def test_crash_while_dealing_voids_the_round_on_restart(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = new_runner(path)
    start_round(runner)
    drawn(runner, "As", "Kd", "2c", "Ah")
    journal.close()                             # the process dies here
    runner2, journal2, report = recovered(path)
    t = runner2.table
    assert report["state_at_crash"] == "dealing"
    assert t.round.void is not None and t.round.void["article"] == "89/2004 art. 11(5)"
    assert t.state == "malfunction"             # a supervisor looks before the next round
    assert journal2.last(kind="round_close").payload["outcome"] == "void"
    # the clear begins the next round, which waits for the shoe to link to this process
    with pytest.raises(TablectlError, match="shoe has not linked since the controller"):
        runner2.command("clear_malfunction", role="supervisor")
    runner2.device(ev.LinkUp(device="shoe", ts=0.0, identity=ev.DeviceIdentity(
        "shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)))
    runner2.command("clear_malfunction", role="supervisor")
    assert t.state == "shuffling" and t.round.round_id == 2
    assert journal2.verify().ok


def test_crash_after_the_deal_goes_on_with_the_journaled_cards(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = new_runner(path)
    start_round(runner)
    drawn(runner, "As", "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc", "4h")
    runner.command("decide", box=1, decision="play")
    journal.close()
    runner2, journal2, report = recovered(path)
    t = runner2.table
    assert t.state == "player_decisions" and t.round.void is None
    runner2.command("decide", box=3, decision="fold")
    nets = {(w["box"], w["wager"]): w["net"] for w in t.round.settlement["wagers"]}
    assert nets[(1, "versus_croupier")] == 20     # 89/2004 art. 9(7): trips pay 2 to 1
    assert nets[(3, "versus_croupier")] == -10    # art. 9(3)


def test_crash_during_betting_keeps_the_bets(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = new_runner(path)
    start_round(runner)
    journal.close()
    runner2, _, _ = recovered(path)
    assert runner2.table.state == "bets_open"
    assert sum(runner2.table.round.bets.values()) == 35


def test_error_condition_persists_across_restart_until_cleared(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = new_runner(path)
    start_round(runner)
    runner.device(ev.DoorOpened(device="shoe", ts=1.0))
    assert runner.table.state == "malfunction"
    journal.close()
    runner2, journal2, _ = recovered(path)
    assert runner2.table.state == "malfunction"
    with pytest.raises(TablectlError, match="door_open"):
        runner2.command("clear_malfunction", role="supervisor")
    runner2.device(ev.DoorClosed(device="shoe", ts=2.0))
    runner2.command("clear_malfunction", role="supervisor")
    assert runner2.table.state == "bets_open"     # the held round's bets still stand
    assert sum(runner2.table.round.bets.values()) == 35


def test_crash_between_input_and_decisions_writes_them_once(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = new_runner(path)
    start_round(runner)
    drawn(runner, "As", "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc")
    # The last card is journaled, then the process dies before the decisions are written.
    journal.append("device", {"source": "device", "event": ev.CardDrawn(
        device="shoe", ts=0.0, card=Card.parse("4h")).to_json()}, "1", "shoe")
    journal.close()
    runner2, journal2, _ = recovered(path)
    assert runner2.table.state == "player_decisions"
    opened = [r for r in journal2.records(kinds=["table"]) if r.payload["kind"] == "hand_opened"]
    assert len(opened) == 2                       # box 1 and box 3, once each
    assert journal2.verify().ok


def test_many_rounds_recover_from_the_last_snapshot(tmp_path):
    path = tmp_path / "j.db"
    runner, journal = new_runner(path)
    start_round(runner)
    for i in range(3):
        drawn(runner, "As", "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc", "4h")
        runner.command("decide", box=1, decision="play")
        runner.command("decide", box=3, decision="play")
        runner.command("confirm_result")
        runner.command("next_round")
        if runner.table.state == "shuffling":
            runner.command("deck_ready")
        runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
        runner.command("place_bet", box=3, wager="pair_bonus", amount=5)
        runner.command("place_bet", box=3, wager="versus_croupier", amount=20)
    journal.close()
    runner2, journal2, report = recovered(path)
    assert report["from_seq"] > 0 and runner2.table.round.round_id == 4
    assert runner2.table.state == "bets_open" and sum(runner2.table.round.bets.values()) == 35
    opens = [r.round_id for r in journal2.records(kinds=["round_open"])]
    assert opens == ["1", "2", "3", "4"]          # nothing duplicated
    closes = [r.round_id for r in journal2.records(kinds=["round_close"])]
    assert closes == ["1", "2", "3"]



def dealt_and_confirmed(runner, ts: float = 0.0) -> None:
    """Close the bets of a Q Poker round dealt by the shuffler, deal box 1 and the croupier,
    play box 1 and confirm the result."""
    runner.command("close_bets")
    for hand_ in (("2h", "3h", "4h"), ("5c", "9d", "Kd")):
        runner.device(ev.HandDispensed(device="shuffler", ts=ts,
                                       cards=tuple(Card.parse(c) for c in hand_)))
    runner.command("decide", box=1, decision="play")
    runner.command("confirm_result")

def test_deck_alarm_is_journaled_shown_without_the_card_and_stops_the_next_round(tmp_path):
    from controller.integrity.monitor import IntegrityMonitor

    journal = Journal.open(tmp_path / "j.db", "T1")
    table = Table("T1", get_game("q-poker"), "shuffler", layout_boxes=7, devices=DEVICES,
                  integrity=IntegrityMonitor(), integrity_action="stop")
    seen = []
    runner = TableRunner(table, journal, publish=seen.append)
    runner.command("open_table", role="supervisor")
    runner.device(ev.DeckCheckResult(device="shuffler", ts=0.0, count=51,
                                     missing=(Card.parse("As"),)))
    runner.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=51))
    alarms = [e.to_json() for e in seen if e.kind == "integrity_alarm"]
    assert alarms and alarms[0]["stop_before_next_round"]
    assert "As" not in str(alarms)                       # the display names no card
    recorded = [r.payload for r in journal.records(kinds=["integrity"])]
    assert any("As" in r.get("cards", []) for r in recorded)   # the journal does
    # The check answered after the round opened, before its bets: the stop holds betting
    # back at this round's boundary (docs/integrity.md), not after a round dealt from a
    # deck known short.
    assert table.state == "shuffling" and "integrity_stop" in [e.kind for e in seen]
    with pytest.raises(TablectlError, match="cannot place a bet while the table is in "
                                            "shuffling"):
        runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.command("clear_integrity", role="supervisor", supervisor="S. Lam")
    assert table.state == "bets_open" and table.round.round_id == 1
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    dealt_and_confirmed(runner)
    runner.command("next_round")
    assert table.state == "shuffling"


def test_a_deck_alarm_of_a_round_with_bets_stops_the_next_round_not_this_one(tmp_path):
    """Under ``stop`` an alarm never interrupts a round in play: raised once bets are on the
    layout (the shuffle asked again after a shuffler failure, and checked first), the round
    is dealt and settled, and the next round is refused until ``clear_integrity``."""
    from controller.integrity.monitor import IntegrityMonitor

    journal = Journal.open(tmp_path / "j.db", "T1")
    table = Table("T1", get_game("q-poker"), "shuffler", layout_boxes=7, devices=DEVICES,
                  integrity=IntegrityMonitor(), integrity_action="stop")
    runner = TableRunner(table, journal)
    runner.command("open_table", role="supervisor")
    runner.device(ev.DeckCheckResult(device="shuffler", ts=0.0, count=52))
    runner.device(ev.ShuffleDone(device="shuffler", ts=0.1, count=52))
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.device(ev.Jam(device="shuffler", ts=0.2, where="elevator"))  # the deck is lost
    runner.command("clear_malfunction", role="supervisor")
    assert table.state == "bets_open" and table._deck_check == "asked"
    runner.device(ev.DeckCheckResult(device="shuffler", ts=0.3, count=51,
                                     missing=(Card.parse("As"),)))
    assert not table.gate.may_open_round() and table.state == "bets_open"
    runner.device(ev.ShuffleDone(device="shuffler", ts=0.4, count=51))
    dealt_and_confirmed(runner, ts=0.5)
    assert table.state == "round_complete"
    with pytest.raises(TablectlError, match="integrity"):
        runner.command("next_round")


def test_after_a_restart_the_deck_in_play_is_still_known(tmp_path):
    """A card drawn before the restart and drawn again after it is a duplicate."""
    from controller.integrity.monitor import IntegrityMonitor
    from controller.rules.cards import full_deck

    path = tmp_path / "j.db"

    def make():
        journal = Journal.open(path, "T1")
        table = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES,
                      integrity=IntegrityMonitor(), integrity_action="warn")
        seen = []
        return TableRunner(table, journal, publish=seen.append), journal, seen

    deck = full_deck()
    runner, journal, _ = make()
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    for c in deck[:6]:
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=c))
    runner.command("decide", box=1, decision="play")
    runner.command("confirm_result")
    runner.command("next_round")                  # the shoe goes on: same deck
    journal.close()
    runner, journal, seen = make()
    runner.recover()
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=deck[0]))   # As again
    recorded = [r.payload for r in journal.records(kinds=["integrity"])
                if r.payload.get("record") == "alarm"]
    assert "duplicate_card" in [a["kind"] for a in recorded]
    # Shown when the round ends: the card that raised it is face down until then.
    assert not [e for e in seen if e.kind == "integrity_alarm"]
    for c in deck[6:11]:
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=c))
    runner.command("decide", box=1, decision="play")
    runner.command("confirm_result")
    alarms = [e.to_json() for e in seen if e.kind == "integrity_alarm"]
    assert any("twice" in a["display"] for a in alarms)


def test_restart_after_a_hand_was_asked_of_the_shuffler_voids_the_round(tmp_path):
    path = tmp_path / "j.db"
    journal = Journal.open(path, "T1")
    table = Table("T1", get_game("q-poker"), "shuffler", layout_boxes=7, devices=DEVICES)
    runner = TableRunner(table, journal)
    runner.command("open_table", role="supervisor")
    runner.device(deck_checked())
    runner.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.command("close_bets")              # the first hand is asked for
    journal.close()
    runner2, journal2, report = recovered(path, mode="shuffler")
    assert report["state_at_crash"] == "bets_closed"
    assert runner2.table.round.void["article"] == "89/2004 art. 11(5)"
    assert runner2.table.state == "malfunction"


def _stop_runner(path):
    from controller.integrity.monitor import IntegrityMonitor

    journal = Journal.open(path, "T1")
    table = Table("T1", get_game("q-poker"), "shuffler", layout_boxes=7, devices=DEVICES,
                  integrity=IntegrityMonitor(), integrity_action="stop")
    return TableRunner(table, journal), journal


def test_a_journal_whose_shuffle_opened_betting_over_a_deck_alarm_replays_as_played(
        tmp_path, monkeypatch):
    """Written by a version that opened betting at the shuffle done though the deck check of
    that deck had raised a stop alarm: the round's bets were taken, and the upgraded daemon
    replays them as played (betting opened where the journal says it did), not as a
    divergence that keeps the table from starting."""
    from controller.table.machine import Table as Machine

    path = tmp_path / "j.db"
    run, journal = _stop_runner(path)
    run.command("open_table", role="supervisor")
    run.device(ev.DeckCheckResult(device="shuffler", ts=0.0, count=51,
                                  missing=(Card.parse("As"),)))
    with monkeypatch.context() as old:
        old.setattr(Machine, "_bets_open_on_ready_deck", lambda self: self.deck_ready())
        run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=51))
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    journal.close()
    run, journal = _stop_runner(path)                 # the upgraded controller starts
    run.recover()
    assert run.broken is None
    assert run.table.state == "bets_open" and sum(run.table.round.bets.values()) == 10
    assert not run.table.gate.may_open_round()         # the alarm still stops the next one
    journal.close()
