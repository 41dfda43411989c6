"""End to end: the real controller process with simulated devices over pseudo-terminals. A
shoe loaded with a sorted deck is caught while the round is dealt, the alarm is published
without naming a card, journaled, and (with ``[integrity] alarm = "stop"``) the table does not
open the next round until a supervisor clears it; ``tablectl integrity report`` shows it."""
import io
import random
import re

import pytest

from controller.cli import main
from controller.demo import Croupier
from controller.errors import TablectlError
from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil

CARD_TEXT = re.compile(r"\b(10|[2-9TJQKA])[shcd]\b")


def test_sorted_shoe_stops_the_table_before_the_next_round(tmp_path, capsys):
    rig = Rig(tmp_path, "q-poker", "shoe", seed=31)
    try:
        rig.start_devices()
        with open(rig.config_path, "a") as f:
            f.write('\n[integrity]\nalarm = "stop"\n')
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        croupier = Croupier(rig, random.Random(5), io.StringIO())
        # The croupier's next deck comes into the shoe unshuffled (the shoe keeps one deck
        # over several rounds, so the fault is armed before the first round's deck).
        rig.devices["shoe"].inject("deck_sorted")
        mark = rig.mark()
        with pytest.raises(TablectlError, match="integrity"):
            croupier.play_round(1, None)                  # the round ends; next_round refused
        alarm = rig.wait_event(lambda e: e["kind"] == "integrity_alarm", since=mark)
        assert alarm["alarm"] == "sorted_deck" and alarm["tower_light"] == "red"
        assert alarm["stop_before_next_round"] is True
        assert not CARD_TEXT.search(alarm["display"])    # cards may still be face down
        with Journal.open(rig.journal_path, readonly=True) as j:
            closes = [r for r in j.records(since=0) if r.kind == "round_close"]
            assert len(closes) == 1                       # the round itself was finished
            records = [r for r in j.records() if r.kind == "integrity"
                       and r.payload.get("record") == "alarm"]
        assert records and records[0].payload["kind"] == "sorted_deck"
        assert records[0].payload["cards"]                # the journal names the cards
        assert rig.view()["integrity_stop"] is True
        assert not rig.command("next_round").get("ok")
        rig.must("clear_integrity", "supervisor", supervisor="sup-7")
        assert rig.view()["integrity_stop"] is False
        rig.must("next_round")
    finally:
        rig.stop()
    assert main(["integrity", "report", "--journal", str(rig.journal_path)]) == 0
    out = capsys.readouterr().out
    assert "sorted_deck" in out


def test_super_pan_9_shuffler_names_a_missing_card_every_round(tmp_path):
    """261/96/M art. 2(1): a full deck every round. The controller has the shuffler check the
    deck each time it is gathered, before it is shuffled, so a card lost for good is named in
    every round's deck, not only counted."""
    rig = Rig(tmp_path, "super-pan-9", "shuffler", seed=41)
    try:
        rig.start_devices()
        # The 9 of diamonds falls on the floor the next time the deck is gathered, for good.
        rig.devices["shuffler"].inject("deck_missing", card="9d")
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        croupier = Croupier(rig, random.Random(7), io.StringIO())
        for n in range(1, 4):
            croupier.play_round(n, None)
        rig.wait_state("bets_open", timeout=20)       # the fourth deck: checked, shuffled
        shown = [e for e in rig.events if e["kind"] == "integrity_alarm"]
    finally:
        rig.stop()
    assert shown and not any(CARD_TEXT.search(e["display"]) for e in shown)
    with Journal.open(rig.journal_path, readonly=True) as j:
        records = [r.payload for r in j.records() if r.kind == "integrity"]
        commands = [r.payload["action"] for r in j.records() if r.kind == "device_command"]
        rounds = [r for r in j.records() if r.kind == "round_close"]
    assert len(rounds) == 3 and commands.count("deck_check") >= 4
    named = {a["deck"] for a in records if a["record"] == "alarm"
             and a["kind"] == "missing_card" and a["cards"] == ["9d"]}
    dealt = [d for d in records if d["record"] == "deck" and d["cards_out"]]
    assert len(dealt) == 3                            # one deck per round
    for deck in dealt:
        assert deck["identity_checked"] and deck["checked_count"] == 51
        assert deck["deck"] in named                  # the card is named in every round's deck
    # and in the deck checked for the fourth round
    assert max(named) > max(d["deck"] for d in dealt)
