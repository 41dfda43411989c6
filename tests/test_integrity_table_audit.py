"""The integrity monitor as the table uses it: legitimate play raises nothing, a fault is
named, a restart keeps what the monitor knew, and the report agrees with what happened."""
import random

from controller.integrity import IntegrityMonitor
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card, full_deck
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, LAYOUT

C = Card.parse
DECK = full_deck()


def make(path, game="q-poker", mode="shoe", action="warn", **mon):
    table = Table("T1", get_game(game), mode, layout_boxes=LAYOUT[game], devices=DEVICES,
                  integrity=IntegrityMonitor(**mon), integrity_action=action)
    seen = []
    return TableRunner(table, Journal.open(path, "T1"), publish=seen.append), seen


def alarms(run):
    return [r.payload for r in run.journal.records(kinds=["integrity"])
            if r.payload.get("record") == "alarm"]


def decks(run):
    return [r.payload for r in run.journal.records(kinds=["integrity"])
            if r.payload.get("record") == "deck"]


def shoe_round(run, cards, cut=False):
    """One Q Poker shoe round, box 1 against the croupier, with these six cards."""
    if run.table.state == "shuffling":
        run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    for i, c in enumerate(cards):
        run.device(ev.CardDrawn(device="shoe", ts=0.0, card=c))
        if cut and i == 0:
            run.device(ev.CutCardReached(device="shoe", ts=0.0))
    run.command("decide", box=1, decision="play")
    run.command("confirm_result")


def test_a_deck_dealt_before_a_restart_is_remembered_after_it(tmp_path):
    """A shoe refilled after a restart in the order of a deck dealt before it is a repeated
    deck, and the decks are numbered on from those before the restart."""
    path = tmp_path / "j.db"
    order = random.Random(3).sample(DECK, 52)
    other = random.Random(4).sample(DECK, 52)
    run, _ = make(path)
    run.command("open_table", role="supervisor")
    shoe_round(run, order[:6], cut=True)           # deck 1 ends at the cut card
    run.command("next_round")
    shoe_round(run, other[:6])                      # deck 2, still in the shoe
    run.command("next_round")                       # the snapshot: deck 1 lies before deck 2
    run.journal.close()
    run, _ = make(path)
    run.recover()
    shoe_round(run, other[6:12], cut=True)
    # the next round waits for the shoe to link to the restarted controller
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=ev.DeviceIdentity(
        "shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)))
    run.command("next_round")
    shoe_round(run, order[:6])                      # deck 3: deck 1 again
    got = alarms(run)
    assert any(a["kind"] == "repeated_deck" and a["related_deck"] == 1 for a in got), got
    numbers = [d["deck"] for d in decks(run)]
    assert numbers == sorted(set(numbers)), numbers


def test_a_two_deck_tables_report_counts_no_shuffle_or_check_wrong(tmp_path, capsys):
    """Q Poker with two decks (article 1(1) read as "several"): the shuffler counts 104, which
    is the right count for the table's configuration, and one card short is still wrong."""
    import json

    from controller.cli import main

    path = tmp_path / "j.db"
    with Journal.open(path, "T1") as j:
        j.append("config", {"integrity": {"alarm": "warn", "decks": 2, "deck_ids": None,
                                          "alpha": 1e-5}}, source="service")
        for count in (104, 104, 103):
            for e in (ev.DeckCheckResult(device="shuffler", ts=0.0, count=count),
                      ev.ShuffleStarted(device="shuffler", ts=0.0),
                      ev.ShuffleDone(device="shuffler", ts=0.0, count=count)):
                j.append("device", {"source": "device", "event": e.to_json()}, None, e.device)
    assert main(["integrity", "report", "--journal", str(path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["shuffles"]["wrong_count"] == 1
    assert rep["deck_checks"]["short_or_long"] == 1
    # from a point after the configuration's record: the configuration still in force
    assert main(["integrity", "report", "--journal", str(path), "--json", "--since", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["shuffles"]["wrong_count"] == 1


def test_a_card_the_deck_check_could_not_read_is_no_extra_card_when_it_comes_out():
    """A dirty card the shuffler's check counted but could not read is in the deck: read as
    it comes out, it did not enter after the check, and the deck holds 52 cards, not 51."""
    t = Table("T1", get_game("q-poker"), "shuffler", layout_boxes=7, devices=DEVICES,
              integrity=IntegrityMonitor(deck_ids={1}))
    t.command("open_table", role="supervisor")
    read = tuple(c for c in DECK if c != C("7h"))   # the driver leaves the unread card out
    t.handle_device(ev.DeckCheckResult(device="shuffler", ts=0.0, count=52, cards=read,
                                       missing=(C("7h"),), deck_ids=(1,),
                                       card_deck_ids=(1,) * 51))
    t.handle_device(ev.ShuffleStarted(device="shuffler", ts=0.0))
    t.handle_device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("close_bets")
    order = [C("7h")] + random.Random(5).sample(read, 51)
    for part in (order[:3], order[3:6]):
        t.handle_device(ev.HandDispensed(device="shuffler", ts=0.0, cards=tuple(part),
                                         deck_ids=(1,) * 3))
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    assert [r for r in t.private_records if r["record"] == "alarm"] == []
    assert "integrity_alarm" not in [e.kind for e in t.outbox]
    # the rest of the deck: 52 cards out of a deck of 52
    ledger = t.integrity.ledger
    assert [a for c in order[6:] for a in ledger.card_out(c, 1)] == []
    assert ledger.card_out(C("7h"), 1)[0].kind == "duplicate_card"   # a 53rd card is caught


def test_a_refused_deck_ready_is_no_new_deck_after_a_restart(tmp_path):
    """deck_ready refused (the shoe still in play, bets open) began no deck; rebuilt from the
    journal after a restart it begins none either, and a card of the deck dealt again is
    still a duplicate."""
    import pytest

    from controller.errors import TablectlError

    path = tmp_path / "j.db"
    order = random.Random(6).sample(DECK, 52)
    run, _ = make(path)
    run.command("open_table", role="supervisor")
    shoe_round(run, order[:6])
    run.command("next_round")
    with pytest.raises(TablectlError):
        run.command("deck_ready")                   # not shuffling: refused
    shoe_round(run, order[6:12])
    run.command("next_round")
    run.journal.close()
    run, _ = make(path)
    run.recover()
    assert run.table.integrity.ledger.current().cards_out == 12
    shoe_round(run, [order[0]] + order[12:17])      # the first card of the deck again
    assert [(a["kind"], a["cards"]) for a in alarms(run)] == [("duplicate_card", [str(order[0])])]
