"""The integrity monitor is given back the decks dealt before a restart from the journal's
``integrity`` records (IntegrityMonitor.restore). A record edited into another shape (a deck
number that is a list, statistics that are a number) is no record the monitor wrote: it must
say so, naming the way out, and never stop the daemon's start with a traceback."""
import io
import random
import sqlite3

import pytest

from controller.demo import Croupier
from controller.errors import TablectlError
from controller.integrity import IntegrityMonitor
from controller.journal import Journal
from controller.rig import Rig
from controller.rules.cards import full_deck
from drivers import events as ev

def good_records():
    mon = IntegrityMonitor(deck_per_round=True)
    records = []
    deck = full_deck()
    random.Random(3).shuffle(deck)
    for card in deck[:12]:
        records += mon.observe(ev.CardDispensed(device="shuffler", ts=0.0, card=card)).records
    records += mon.round_ended().records
    assert [r["record"] for r in records] == ["deck"]
    return records


# A record of an earlier version has no trend_state: its statistics are read instead.
@pytest.mark.parametrize("edit", [
    {"deck": [1]}, {"deck": "x"}, {"order": 7}, {"sentinel": 3, "trend_state": None},
    {"sentinel": {"trend": [1]}, "trend_state": None},
    {"sentinel": {"cards_seen": [1]}, "trend_state": None}])
def test_a_deck_record_of_another_shape_is_named_not_a_traceback(edit):
    record = {k: v for k, v in {**good_records()[0], **edit}.items() if v is not None}
    with pytest.raises(TablectlError, match=r"integrity record .*tablectl journal verify"):
        IntegrityMonitor(deck_per_round=True).restore([record])


def test_records_the_monitor_wrote_restore_as_before():
    mon = IntegrityMonitor(deck_per_round=True)
    assert mon.restore(good_records()) == 1


@pytest.mark.hil
def test_the_daemon_started_on_an_edited_deck_record_says_so_in_one_line(tmp_path):
    rig = Rig(tmp_path, "super-pan-9", "shuffler", seed=41)
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        croupier = Croupier(rig, random.Random(7), io.StringIO())
        for n in (1, 2):        # the first round's deck lies before the deck in play
            croupier.play_round(n, None)
        rig.wait_state("bets_open", timeout=20)
        rig.kill()
        with Journal.open(rig.journal_path, readonly=True) as j:
            deck = next(r for r in j.records(kinds=["integrity"])
                        if r.payload.get("record") == "deck")
        con = sqlite3.connect(rig.journal_path)
        con.execute("UPDATE records SET payload = replace(payload, ?, ?) WHERE seq = ?",
                    (f'"deck":{deck.payload["deck"]},', f'"deck":[{deck.payload["deck"]}],',
                     deck.seq))
        assert con.total_changes == 1
        con.commit()
        con.close()
        before = rig.log_path.read_text()
        with pytest.raises(TablectlError, match="exited"):
            rig.start_controller(timeout=30)
        log = rig.log_path.read_text()[len(before):]
        assert "Traceback" not in log, log[-3000:]
        error = [line for line in log.splitlines() if line.startswith("tablectl: error:")]
        assert len(error) == 1 and "tablectl journal verify" in error[0], log[-2000:]
    finally:
        rig.stop()
