"""After a restart the integrity monitor knows the deck in play as the live monitor does, a
ShuffleDone no shuffle was owed for included.

The live monitor takes a ShuffleDone that ends no shuffle seen to start, with cards of the deck
in play out, as no new deck (tests/test_integrity_shuffle_unasked.py). The runner rebuilt the
deck in play at start from the journal's last ``shuffle_done`` whatever it ended: after a
restart the cards dealt before such a report were forgotten, and one dealt again was no
duplicate, when without the restart it was."""
import random

from controller.integrity.monitor import IntegrityMonitor
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import full_deck
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES

ORDER = random.Random(37).sample(full_deck(), 52)


def make(path):
    journal = Journal.open(path, "T1")
    table = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES,
                  integrity=IntegrityMonitor(), integrity_action="warn")
    return TableRunner(table, journal), journal


def drawn(runner, cards):
    for c in cards:
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=c))


def first_round(runner, between):
    """A round of six cards from the shoe, ``between`` (shuffler events) after its third."""
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    drawn(runner, ORDER[:3])
    for e in between:
        runner.device(e)
    drawn(runner, ORDER[3:6])
    runner.command("decide", box=1, decision="play")
    runner.command("confirm_result")
    runner.command("next_round")                  # the shoe goes on: same deck


def findings(path, between, restart):
    """The integrity alarms journaled once the next round's first card is the first round's
    first card again, with or without a restart before that round's bets."""
    runner, journal = make(path)
    first_round(runner, between)
    if restart:
        journal.close()
        runner, journal = make(path)
        runner.recover()
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    drawn(runner, ORDER[:1])
    return [(r.payload["kind"], r.payload.get("deck")) for r in journal.records(kinds=["integrity"])
            if r.payload.get("record") == "alarm"]


def test_a_card_dealt_again_after_an_unasked_shuffle_done_and_a_restart_is_a_duplicate(tmp_path):
    unasked = [ev.ShuffleDone(device="shuffler", ts=0.0, count=52)]
    live = findings(tmp_path / "live.db", unasked, restart=False)
    assert [k for k, _ in live] == ["duplicate_card"]
    assert findings(tmp_path / "restarted.db", unasked, restart=True) == live


def test_a_shuffle_seen_to_start_still_begins_the_next_deck_after_a_restart(tmp_path):
    """The other side of the rule: a shuffle that starts and ends between the cards ends the
    deck in play, with or without a restart, so the card is no duplicate."""
    shuffled = [ev.ShuffleStarted(device="shuffler", ts=0.0),
                ev.ShuffleDone(device="shuffler", ts=0.0, count=52)]
    live = findings(tmp_path / "live.db", shuffled, restart=False)
    assert "duplicate_card" not in [k for k, _ in live]
    assert findings(tmp_path / "restarted.db", shuffled, restart=True) == live
